// The simulator's statement nodes (see SimStmtCode.h) and the factories that make them.

#include "backends/sim/SimStmtCode.h"

#include "backends/runtime/Runtime.h"

#include "dsl/base/Error.h"
#include "dsl/ir/IRPrinter.h"

#include <algorithm>
#include <array>
#include <sstream>
#include <unordered_map>
#include <utility>
#include <vector>

namespace aicf {
namespace backends {
namespace sim {

namespace {

class BlockCode : public StmtCode {
public:
    explicit BlockCode(std::vector<StmtPtr> stmts) : stmts(std::move(stmts)) {}
    void exec(Machine &m) override {
        for (const StmtPtr &s : stmts)
            s->exec(m);
    }

private:
    std::vector<StmtPtr> stmts;
};

class LetStmtCode : public StmtCode {
public:
    LetStmtCode(int slot, ExprPtr value, StmtPtr body)
        : slot(slot), value(std::move(value)), body(std::move(body)) {}
    void exec(Machine &m) override {
        m.slots[slot] = value->eval(m);
        body->exec(m);
    }

private:
    int slot;
    ExprPtr value;
    StmtPtr body;
};

// Each branch runs under the threads that take it; a branch no active thread takes is skipped.
class IfCode : public StmtCode {
public:
    IfCode(int threads, ExprPtr cond, StmtPtr then_case, StmtPtr else_case)
        : cond(std::move(cond)), then_case(std::move(then_case)), else_case(std::move(else_case)) {
        then_mask.resize(threads);
        else_mask.resize(threads);
    }
    void exec(Machine &m) override {
        Col c = cond->eval(m);
        if (c.uniform) {
            run(m, c.p[0].u ? then_case.get() : else_case.get(), m.mask);
            return;
        }
        const Mask *outer = m.mask;
        int taken_count = 0;
        for (int t = 0; t < m.n; t++) {
            const uint8_t on = outer->on[t], taken = uint8_t(c.p[t].u);
            then_mask.on[t] = on & taken;
            taken_count += on & taken;
        }
        if (taken_count == outer->count) {
            run(m, then_case.get(), outer);
            return;
        }
        if (taken_count == 0) {
            run(m, else_case.get(), outer);
            return;
        }
        then_mask.recount();
        if (else_case) {
            for (int t = 0; t < m.n; t++)
                else_mask.on[t] = outer->on[t] & uint8_t(then_mask.on[t] ^ 1);
            else_mask.recount();
        }
        run(m, then_case.get(), &then_mask);
        run(m, else_case.get(), &else_mask);
        m.mask = outer;
    }

private:
    static void run(Machine &m, StmtCode *s, const Mask *mask) {
        if (!s) return;
        const Mask *outer = m.mask;
        m.mask = mask;
        s->exec(m);
        m.mask = outer;
    }

    ExprPtr cond;
    StmtPtr then_case, else_case;
    Mask then_mask, else_mask;
};

// A serial loop. With uniform bounds every active thread runs every iteration; otherwise each
// thread runs its own trip count and the loop continues while any active thread still
// iterates, with the finished threads masked off.
class ForCode : public StmtCode {
public:
    ForCode(int threads, int slot, ir::Type t, ExprPtr min, ExprPtr extent, StmtPtr body)
        : slot(slot), shift(wrap_shift(t.bits)), min(std::move(min)), extent(std::move(extent)),
          body(std::move(body)), var(threads), trips(threads) {
        iteration_mask.resize(threads);
    }
    void exec(Machine &m) override {
        Col lo = min->eval(m);
        Col ex = extent->eval(m);
        if (lo.uniform && ex.uniform) {
            const int64_t first = lo.p[0].i, end = wrap<true>(lo.p[0].u + ex.p[0].u, shift).i;
            m.slots[slot] = {var.data(), true};
            for (int64_t i = first; i < end; i++) {
                var[0] = word_u(uint64_t(i));
                body->exec(m);
            }
            return;
        }
        const Mask *outer = m.mask;
        int64_t most = 0;
        for (int t = 0; t < m.n; t++) {
            trips[t] = 0;
            if (!outer->on[t]) continue;
            const Word b = *lane_ptr(lo, t, 1), e = *lane_ptr(ex, t, 1);
            const int64_t end = wrap<true>(b.u + e.u, shift).i;
            trips[t] = b.i < end ? end - b.i : 0;
            most = std::max(most, trips[t]);
        }
        // The per-thread loop minimums, copied: `lo` may point into storage the body rebinds.
        std::vector<Word> mins;
        if (!lo.uniform) mins.assign(lo.p, lo.p + m.n);
        const Word uniform_min = lo.p[0];
        m.slots[slot] = {var.data(), lo.uniform};
        m.mask = &iteration_mask;
        for (int64_t k = 0; k < most; k++) {
            for (int t = 0; t < m.n; t++)
                iteration_mask.on[t] = outer->on[t] && k < trips[t];
            iteration_mask.recount();
            if (lo.uniform) {
                var[0] = word_u(uniform_min.u + uint64_t(k));
            } else {
                for (int t = 0; t < m.n; t++)
                    var[t] = word_u(mins[t].u + uint64_t(k));
            }
            body->exec(m);
        }
        m.mask = outer;
    }

private:
    int slot, shift;
    ExprPtr min, extent;
    StmtPtr body;
    std::vector<Word> var;
    std::vector<int64_t> trips;
    Mask iteration_mask;
};

class StoreCode : public StmtCode {
public:
    StoreCode(AccessShape shape, ExprPtr value, ExprPtr index, ExprPtr predicate)
        : shape(shape), value(std::move(value)), index(std::move(index)),
          predicate(std::move(predicate)) {}
    void exec(Machine &m) override {
        Access a = shape.make(true);
        a.value = value->eval(m);
        a.index = index->eval(m);
        if (predicate) {
            a.predicate = predicate->eval(m);
            a.has_predicate = true;
        }
        if (m.checks) check(m, a);
        m.access(a);
    }

protected:
    // A check of the store before it runs (with the expensive checks on).
    virtual void check(Machine &, const Access &) {}

    AccessShape shape;
    ExprPtr value, index, predicate;
};

class ReadModifyWriteCode : public StoreCode {
public:
    using StoreCode::StoreCode;

private:
    struct Owner {
        std::array<int, 3> block;
        int thread;
        int64_t epoch; // barriers the block had passed
    };

    void check(Machine &m, const Access &a) override {
        const int64_t epoch = m.counters.barriers;
        for (int t = 0; t < m.n; t++) {
            if (!m.mask->on[size_t(t)]) continue;
            if (a.has_predicate && !lane_ptr(a.predicate, t, 1)->u) continue;
            const int64_t i = lane_ptr(a.index, t, 1)->i;
            auto [it, fresh] = owners.try_emplace(i, Owner{m.block, t, epoch});
            if (fresh) continue;
            const Owner &o = it->second;
            const bool same_block = o.block == m.block;
            if (same_block && (o.thread == t || o.epoch != epoch)) {
                it->second = Owner{m.block, t, epoch};
                continue;
            }
            std::ostringstream os;
            os << "kernel " << m.kernel.name << ": thread " << m.describe_thread(t) << " of block "
               << m.describe_block() << " reads, modifies and writes " << shape.storage->name << "["
               << i << "], which thread " << m.describe_thread(o.thread) << " of "
               << (same_block
                       ? "the same block"
                       : "block (" + std::to_string(o.block[0]) + ", " +
                             std::to_string(o.block[1]) + ", " + std::to_string(o.block[2]) + ")")
               << " also updates, with no ordering between them: one of the updates is lost. "
               << "Make the update atomic(), or give each element to one thread"
               << m.context(*shape.site, t);
            throw KernelFault(os.str());
        }
    }

    std::unordered_map<int64_t, Owner> owners; // over the launch
};

class AtomicStoreCode : public StmtCode {
public:
    AtomicStoreCode(AccessShape load, AccessShape store, ir::AtomicOp op, ExprPtr x, ExprPtr index)
        : load(load), store(store), op(op), x(std::move(x)), index(std::move(index)) {}
    void exec(Machine &m) override {
        Col xs = this->x->eval(m);
        Col at = index->eval(m);
        const Mask *all = m.mask;
        one.resize(m.n);
        // One thread at a time: a load and a store of its own, which the race checks of
        // shared memory leave alone (atomics do not race with each other).
        for (int t = 0; t < m.n; t++) {
            if (!all->on[size_t(t)]) continue;
            one.on[size_t(t)] = 1;
            one.recount();
            m.mask = &one;
            Word current, updated;
            Access a = load.make(false);
            a.index = at;
            a.atomic = true;
            a.out = &current;
            m.access(a);
            updated = combine(current, *lane_ptr(xs, t, 1));
            Access b = store.make(true);
            b.index = at;
            b.atomic = true;
            b.value = {&updated, true};
            m.access(b);
            one.on[size_t(t)] = 0;
        }
        m.mask = all;
        // The operation of a float atomic (add, multiply, min or max) is a flop per thread.
        if (is_float_kind(load.kind)) m.counters.flops += int64_t(all->count);
    }

private:
    Word combine(Word a, Word b) const {
        const Kind k = load.kind;
        const int shift = wrap_shift(load.bits);
        auto pick = [&](bool b_wins) { return b_wins ? b : a; };
        if (is_float_kind(k)) {
            // 16-bit floats are held as floats: float arithmetic, rounded to their format.
            const bool wide = k == Kind::F64;
            const double da = wide ? a.d : double(a.f);
            const double db = wide ? b.d : double(b.f);
            switch (op) {
            case ir::AtomicOp::Add:
                return wide ? word_d(a.d + b.d) : word_f(narrow(a.f + b.f, k));
            case ir::AtomicOp::Mul:
                return wide ? word_d(a.d * b.d) : word_f(narrow(a.f * b.f, k));
            case ir::AtomicOp::Min:
                return pick(db < da);
            default:
                return pick(db > da);
            }
        }
        const bool s = k == Kind::Int;
        switch (op) {
        case ir::AtomicOp::Add:
            return s ? wrap<true>(a.u + b.u, shift) : wrap<false>(a.u + b.u, shift);
        case ir::AtomicOp::Mul:
            return s ? wrap<true>(a.u * b.u, shift) : wrap<false>(a.u * b.u, shift);
        case ir::AtomicOp::Min:
            return pick(s ? b.i < a.i : b.u < a.u);
        case ir::AtomicOp::Max:
            return pick(s ? b.i > a.i : b.u > a.u);
        case ir::AtomicOp::And:
            return s ? wrap<true>(a.u & b.u, shift) : wrap<false>(a.u & b.u, shift);
        case ir::AtomicOp::Or:
            return s ? wrap<true>(a.u | b.u, shift) : wrap<false>(a.u | b.u, shift);
        case ir::AtomicOp::Xor:
            return s ? wrap<true>(a.u ^ b.u, shift) : wrap<false>(a.u ^ b.u, shift);
        }
        return a;
    }

    AccessShape load, store;
    ir::AtomicOp op;
    ExprPtr x, index;
    Mask one;
};

// Private storage: every thread's copy starts as garbage, so that reading an element before
// writing it does not silently give 0.
class AllocateCode : public StmtCode {
public:
    AllocateCode(Storage *storage, StmtPtr body) : storage(storage), body(std::move(body)) {}
    void exec(Machine &m) override {
        std::fill(storage->owned.begin(), storage->owned.end(), kGarbageByte);
        body->exec(m);
    }

private:
    Storage *storage;
    StmtPtr body;
};

class AssertCode : public StmtCode {
public:
    AssertCode(ExprPtr cond, ir::Expr condition, AssertMessage message)
        : cond(std::move(cond)), condition(std::move(condition)), message(std::move(message)) {}
    void exec(Machine &m) override {
        Col c = cond->eval(m);
        const Mask &mask = *m.mask;
        if (c.uniform) {
            if (!c.p[0].u) fail(m, mask.first);
            return;
        }
        for (int t = 0; t < m.n; t++) {
            if (mask.on[t] && !c.p[t].u) fail(m, t);
        }
    }

private:
    [[noreturn]] void fail(Machine &m, int thread) const {
        std::ostringstream os;
        os << "kernel " << m.kernel.name << ": an assertion failed in thread "
           << m.describe_thread(thread) << " of block " << m.describe_block() << ": ";
        if (message.kind < 0) {
            os << condition;
        } else {
            // The check's own message, with the values this thread saw.
            std::array<int64_t, 6> details{};
            for (size_t i = 0; i < message.details.size() && i < details.size(); i++)
                details[i] = lane_ptr(message.details[i]->eval(m), thread, 1)->i;
            os << runtime::describe_runtime_error(message.kind, message.name.c_str(),
                                                  details.data());
        }
        throw KernelFault(os.str());
    }

    ExprPtr cond;
    ir::Expr condition;
    AssertMessage message;
};

// A block-wide barrier: every thread of the block must reach it.
// cp.async: the source read now (a predicated vector load: lanes past `valid` read nothing
// and are zeros), the write into shared memory left pending in the machine until a wait.
class AsyncCopyCode : public StmtCode {
public:
    AsyncCopyCode(int threads, AccessShape src, AccessShape dst, ExprPtr dst_index,
                  ExprPtr src_index, ExprPtr valid)
        : src(src), dst(dst), dst_index(std::move(dst_index)), src_index(std::move(src_index)),
          valid(std::move(valid)), index(size_t(threads) * src.lanes),
          predicate(size_t(threads) * src.lanes), values(size_t(threads) * src.lanes) {}
    void exec(Machine &m) override {
        Col d = dst_index->eval(m), s = src_index->eval(m), v = valid->eval(m);
        const int L = src.lanes;
        const int64_t bytes = int64_t(L) * src.elem_bytes;
        for (int t = 0; t < m.n; t++) {
            const int64_t at = lane_ptr(s, t, 1)->i, count = lane_ptr(v, t, 1)->i;
            if (m.mask->on[size_t(t)]) {
                const uintptr_t address =
                    reinterpret_cast<uintptr_t>(src.storage->base) + uintptr_t(at * src.elem_bytes);
                auto fail = [&](const std::string &what) {
                    throw KernelFault("kernel " + m.kernel.name + ": thread " +
                                      m.describe_thread(t) + " of block " + m.describe_block() +
                                      " starts a cp.async of " + std::to_string(bytes) +
                                      " bytes from " + src.storage->name + " at index " +
                                      std::to_string(at) + what + m.context(*src.site, t));
                };
                if (count < 0 || count > L) {
                    fail(" with " + std::to_string(count) + " elements to copy, outside 0 to " +
                         std::to_string(L));
                }
                if (address % uintptr_t(bytes) != 0) {
                    fail(", an address that is not a multiple of the copy's size");
                }
            }
            for (int l = 0; l < L; l++) {
                index[size_t(t * L + l)].i = at + l;
                predicate[size_t(t * L + l)].u = l < count;
            }
        }
        Access load = src.make(false);
        load.index = {index.data(), false};
        load.predicate = {predicate.data(), false};
        load.has_predicate = true;
        load.out = values.data();
        const bool uniform = m.access(load);
        Access shape = dst.make(true);
        m.async_copy(shape, d, {values.data(), uniform});
    }

private:
    AccessShape src, dst;
    ExprPtr dst_index, src_index, valid;
    std::vector<Word> index, predicate, values;
};

class AsyncCommitCode : public StmtCode {
public:
    void exec(Machine &m) override { m.async_commit(); }
};

class WgmmaCommitCode : public StmtCode {
public:
    void exec(Machine &m) override { m.wgmma_commit(); }
};

class AsyncWaitCode : public StmtCode {
public:
    AsyncWaitCode(int groups, const Site *site) : groups(groups), site(site) {}
    void exec(Machine &m) override { m.async_wait(groups, *site); }

private:
    int groups;
    const Site *site;
};

class BarrierCode : public StmtCode {
public:
    explicit BarrierCode(const Site *site) : site(site) {}
    void exec(Machine &m) override {
        const Mask &mask = *m.mask;
        if (mask.count == m.n) {
            m.barrier();
            return;
        }
        int missing = 0;
        while (missing < m.n && mask.on[missing])
            missing++;
        std::ostringstream os;
        os << "barrier in kernel " << m.kernel.name << " reached by " << mask.count << " of " << m.n
           << " threads of block " << m.describe_block()
           << ": a barrier under divergent control flow (thread " << m.describe_thread(mask.first)
           << " reaches it" << m.context(*site, mask.first) << ", thread "
           << m.describe_thread(missing)
           << " does not). Every thread of a block must reach each barrier, so a barrier "
           << "cannot depend on the thread index.";
        throw KernelFault(os.str());
    }

private:
    const Site *site;
};

class EvaluateCode : public StmtCode {
public:
    explicit EvaluateCode(ExprPtr value) : value(std::move(value)) {}
    void exec(Machine &m) override { value->eval(m); }

private:
    ExprPtr value;
};

class NopCode : public StmtCode {
public:
    void exec(Machine &) override {}
};

} // namespace

StmtPtr make_block_code(std::vector<StmtPtr> stmts) {
    return std::make_unique<BlockCode>(std::move(stmts));
}

StmtPtr make_let_stmt_code(int slot, ExprPtr value, StmtPtr body) {
    return std::make_unique<LetStmtCode>(slot, std::move(value), std::move(body));
}

StmtPtr make_if_code(int threads, ExprPtr cond, StmtPtr then_case, StmtPtr else_case) {
    return std::make_unique<IfCode>(threads, std::move(cond), std::move(then_case),
                                    std::move(else_case));
}

StmtPtr make_for_code(int threads, int slot, ir::Type t, ExprPtr min, ExprPtr extent,
                      StmtPtr body) {
    return std::make_unique<ForCode>(threads, slot, t, std::move(min), std::move(extent),
                                     std::move(body));
}

StmtPtr make_read_modify_write_code(AccessShape shape, ExprPtr value, ExprPtr index,
                                    ExprPtr predicate) {
    return std::make_unique<ReadModifyWriteCode>(shape, std::move(value), std::move(index),
                                                 std::move(predicate));
}

StmtPtr make_atomic_store_code(AccessShape load, AccessShape store, ir::AtomicOp op, ExprPtr x,
                               ExprPtr index) {
    return std::make_unique<AtomicStoreCode>(load, store, op, std::move(x), std::move(index));
}

StmtPtr make_store_code(AccessShape shape, ExprPtr value, ExprPtr index, ExprPtr predicate) {
    return std::make_unique<StoreCode>(shape, std::move(value), std::move(index),
                                       std::move(predicate));
}

StmtPtr make_allocate_code(Storage *storage, StmtPtr body) {
    return std::make_unique<AllocateCode>(storage, std::move(body));
}

StmtPtr make_assert_code(ExprPtr cond, ir::Expr condition, AssertMessage message) {
    return std::make_unique<AssertCode>(std::move(cond), std::move(condition), std::move(message));
}

StmtPtr make_async_copy_code(int threads, AccessShape src, AccessShape dst, ExprPtr dst_index,
                             ExprPtr src_index, ExprPtr valid) {
    return std::make_unique<AsyncCopyCode>(threads, src, dst, std::move(dst_index),
                                           std::move(src_index), std::move(valid));
}

StmtPtr make_async_commit_code() {
    return std::make_unique<AsyncCommitCode>();
}

StmtPtr make_wgmma_commit_code() {
    return std::make_unique<WgmmaCommitCode>();
}

StmtPtr make_async_wait_code(int groups, const Site *site) {
    return std::make_unique<AsyncWaitCode>(groups, site);
}

StmtPtr make_barrier_code(const Site *site) {
    return std::make_unique<BarrierCode>(site);
}

StmtPtr make_evaluate_code(ExprPtr value) {
    return std::make_unique<EvaluateCode>(std::move(value));
}

StmtPtr make_nop_code() {
    return std::make_unique<NopCode>();
}

} // namespace sim
} // namespace backends
} // namespace aicf
