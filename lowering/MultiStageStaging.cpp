#include "lowering/MultiStageStaging.h"

#include "dsl/Names.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IREquality.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"
#include "lowering/AsyncCopy.h"
#include "lowering/KernelAnalysis.h"
#include "lowering/WarpgroupMMA.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

std::map<std::string, int> async_funcs(const std::map<std::string, Function> &env) {
    std::map<std::string, int> stages;
    for (const auto &[name, f] : env)
        if (f.schedule().gpu_pipeline.stages >= 2 &&
            f.schedule().gpu_pipeline.copy == PipelineCopy::Async)
            stages[name] = f.schedule().gpu_pipeline.stages;
    return stages;
}

Stmt no_op() {
    return Evaluate::make(make_zero(Int(32)));
}

// Accesses to `func` moved to buffer `stage` of its `size` elements.
class SelectBuffer : public IRMutator {
public:
    SelectBuffer(const std::string &func, const Expr &offset) : func(func), offset(offset) {}

private:
    const std::string &func;
    const Expr &offset; // stage * size
    using IRMutator::visit;
    Expr shifted(const Expr &index) const {
        return Add::make(index, broadcast(offset, index.type().lanes));
    }
    Expr visit(const Load *op) override {
        Expr e = IRMutator::visit(op);
        if (op->name != func) return e;
        const Load *l = e.as<Load>();
        return Load::make(l->type, l->name, shifted(l->index), l->predicate, l->param);
    }
    Stmt visit(const Store *op) override {
        Stmt s = IRMutator::visit(op);
        if (op->name != func) return s;
        const Store *st = s.as<Store>();
        return Store::make(st->name, st->value, shifted(st->index), st->predicate);
    }
};

struct Staging {
    std::string func;
    Type type;
    std::vector<Expr> extents;
    int64_t size = 0;
    Stmt produce; // `produce func {...}`, its barriers gone, under the lets around it
};

// Takes the pipelined stagings (and their allocations and the barriers) out of the top of a
// loop's body.
class TakeStagings : public IRMutator {
public:
    // `done`: Funcs already laid out in stages at a loop inside this one; `outer`: the lets
    // around the loop, outermost first (a tile's extents are bounded through them).
    TakeStagings(const std::map<std::string, int> &async, const std::string &loop,
                 const std::set<std::string> &done,
                 const std::vector<std::pair<std::string, Expr>> &outer)
        : async(async), loop(loop), done(done), outer(outer) {}
    std::vector<Staging> stagings;
    std::vector<std::string> other_shared; // shared Funcs allocated here, not pipelined

private:
    const std::map<std::string, int> &async;
    const std::string &loop;
    const std::set<std::string> &done;
    const std::vector<std::pair<std::string, Expr>> &outer;
    std::vector<std::pair<std::string, Expr>> lets;
    using IRMutator::visit;

    Stmt visit(const For *op) override { return op; }
    Stmt visit(const IfThenElse *op) override { return op; }
    Stmt visit(const LetStmt *op) override {
        lets.emplace_back(op->name, op->value);
        Stmt body = mutate(op->body);
        lets.pop_back();
        return LetStmt::make(op->name, op->value, body);
    }
    Stmt visit(const Evaluate *op) override {
        if (is_gpu_barrier(Stmt(op))) return no_op();
        return op;
    }
    Stmt visit(const Allocate *op) override {
        if (op->memory_type != MemoryType::GPUShared || done.count(op->name))
            return IRMutator::visit(op);
        if (!async.count(op->name)) {
            other_shared.push_back(op->name);
            return IRMutator::visit(op);
        }
        Staging s;
        s.func = op->name;
        s.type = op->type;
        s.extents = op->extents;
        std::vector<std::pair<std::string, Expr>> around = outer;
        around.insert(around.end(), lets.begin(), lets.end());
        // Each extent bounded apart (an extent below zero holds nothing).
        std::optional<int64_t> size = 1;
        for (const Expr &e : op->extents) {
            auto bound = constant_upper_bound(substitute_lets(around, e));
            size = bound && size ? std::optional<int64_t>(*size * std::max<int64_t>(*bound, 0))
                                 : std::nullopt;
            if (size && *size > (int64_t(1) << 40)) break;
        }
        user_assert(size && *size > 0)
            << "gpu_pipeline on Func " << op->name << ": its tile at " << loop_for_users(loop)
            << " has no constant size, but each of its buffers is "
            << "allocated once. Compute it over a region of constant size.";
        s.size = *size;
        stagings.push_back(s);
        return mutate(op->body);
    }
    Stmt visit(const ProducerConsumer *op) override {
        if (!op->is_producer || !async.count(op->name) || done.count(op->name))
            return IRMutator::visit(op);
        for (Staging &s : stagings) {
            if (s.func != op->name) continue;
            Stmt produce = ProducerConsumer::make(op->name, true, drop_barriers(op->body));
            for (size_t i = lets.size(); i-- > 0;)
                if (uses_var(produce, lets[i].first))
                    produce = LetStmt::make(lets[i].first, lets[i].second, produce);
            s.produce = produce;
        }
        return no_op();
    }

    // The barriers at the top of a staging (its loops keep theirs).
    static Stmt drop_barriers(const Stmt &s) {
        if (is_gpu_barrier(s)) return no_op();
        if (const Block *b = s.as<Block>())
            return Block::make(drop_barriers(b->first), drop_barriers(b->rest));
        return s;
    }
};

// The warpgroup products (gpu_wgmma) of a pipelined loop's body, each step's left running
// while the next step begins (its wait lets one group stay pending), and what they
// accumulate: for each accumulator, the stores that write a wait's result back to its
// registers, to be waited for after the loop.
class KeepOneWgmmaGroupInFlight : public IRMutator {
public:
    std::vector<std::vector<Stmt>> accumulators; // the write-backs, one list per accumulator
    // For each accumulator, the loops (the warpgroup's threads) and lets of the body around
    // its write-backs, outermost first: their indices use them.
    std::vector<std::vector<Stmt>> around;

private:
    std::vector<Stmt> enclosing;
    using IRMutator::visit;
    Stmt visit(const For *op) override {
        enclosing.push_back(op);
        Stmt s = IRMutator::visit(op);
        enclosing.pop_back();
        return s;
    }
    Stmt visit(const LetStmt *op) override {
        const Call *wait = op->value.as<Call>();
        if (!wait || !wait->is_intrinsic(Intrinsic::gpu_wgmma_wait)) {
            enclosing.push_back(op);
            Stmt s = IRMutator::visit(op);
            enclosing.pop_back();
            return s;
        }
        const std::vector<Stmt> writes = Block::parts(op->body);
        for (const Stmt &w : writes)
            internal_assert(w.as<Store>()) << "wgmma's result written back other than by stores";
        bool seen = false;
        for (const std::vector<Stmt> &a : accumulators)
            seen = seen || (a.size() == writes.size() && equal(Block::make(a), op->body));
        if (!seen) {
            accumulators.push_back(writes);
            around.push_back(enclosing);
        }
        return LetStmt::make(op->name, gpu_wgmma_wait(1, wait->args[1]), op->body);
    }
};

// Whether the accumulators of a pipelined loop's body (`writes`: their write-backs) may stay
// pending past its steps: each is allocated around the loop, and the body reads it only as
// the products' own operand (in a gpu_wgmma_fence). An accumulator allocated in the body is
// read there (a tile's epilogue, where a loop of column tiles is the one pipelined).
bool accumulators_outlive_the_step(const Stmt &body, const std::vector<std::vector<Stmt>> &writes) {
    std::set<std::string> names;
    for (const std::vector<Stmt> &a : writes)
        for (const Stmt &w : a)
            names.insert(w.as<Store>()->name);
    class Reads : public IRVisitor {
    public:
        explicit Reads(const std::set<std::string> &names) : names(names) {}
        bool outside_products = false;

    private:
        const std::set<std::string> &names;
        using IRVisitor::visit;
        void visit(const Call *op) override {
            if (!op->is_intrinsic(Intrinsic::gpu_wgmma_fence)) IRVisitor::visit(op);
        }
        void visit(const Load *op) override {
            outside_products = outside_products || names.count(op->name);
            IRVisitor::visit(op);
        }
        void visit(const Allocate *op) override {
            outside_products = outside_products || names.count(op->name);
            IRVisitor::visit(op);
        }
    } reads(names);
    body.accept(&reads);
    return !reads.outside_products;
}

// After the loop: each accumulator's last group waited for, its registers then final, inside
// the loops its write-backs were in (and the lets their indices use).
Stmt wait_for_wgmma_groups(const std::vector<std::vector<Stmt>> &accumulators,
                           const std::vector<std::vector<Stmt>> &around) {
    std::vector<Stmt> waits;
    for (size_t a = 0; a < accumulators.size(); a++) {
        const std::vector<Stmt> &writes = accumulators[a];
        std::vector<Expr> loads;
        for (const Stmt &w : writes) {
            const Store *st = w.as<Store>();
            loads.push_back(Load::make(st->value.type(), st->name, st->index, Expr()));
        }
        const Expr v = make_vector(loads);
        const std::string name = "wgmma_last_group." + std::to_string(a);
        std::vector<Stmt> stores;
        for (size_t i = 0; i < writes.size(); i++) {
            const Store *st = writes[i].as<Store>();
            stores.push_back(Store::make(st->name,
                                         extract_element(Variable::make(v.type(), name), int(i)),
                                         st->index, st->predicate, st->param));
        }
        Stmt wait = LetStmt::make(name, gpu_wgmma_wait(0, v), Block::make(stores));
        for (auto node = around[a].rbegin(); node != around[a].rend(); ++node) {
            if (const For *loop = node->as<For>()) {
                // (The threads' loops, and any other whose variable an index uses.)
                if (loop->for_type == ForType::GPUThread || uses_var(wait, loop->name))
                    wait = For::make(loop->name, loop->min, loop->extent, loop->for_type,
                                     loop->gpu_dim, wait);
            } else if (const LetStmt *let = node->as<LetStmt>()) {
                if (uses_var(wait, let->name)) wait = LetStmt::make(let->name, let->value, wait);
            }
        }
        waits.push_back(wait);
    }
    return Block::make(waits);
}

class MultiBuffer : public IRMutator {
public:
    // `shared`: the Funcs the kernel keeps in shared memory.
    // `shared`: the Funcs the kernel keeps in shared memory; `threads`: the block's.
    MultiBuffer(const std::map<std::string, int> &async, const std::set<std::string> &shared,
                int threads)
        : async(async), shared(shared), threads(threads) {}
    std::set<std::string> done;

private:
    const std::map<std::string, int> &async;
    const std::set<std::string> &shared;
    const int threads;
    int loops_around = 0; // loops of the kernel around the one being visited
    std::vector<std::pair<std::string, Expr>> lets; // around the node, outermost first
    using IRMutator::visit;

    Stmt visit(const LetStmt *op) override {
        lets.emplace_back(op->name, op->value);
        Stmt body = mutate(op->body);
        lets.pop_back();
        if (body.same_as(op->body)) return op;
        return LetStmt::make(op->name, op->value, body);
    }

    Stmt visit(const For *op) override {
        loops_around++;
        Stmt body = mutate(op->body);
        loops_around--;
        if (op->for_type != ForType::Serial)
            return For::make(op->name, op->min, op->extent, op->for_type, op->gpu_dim, body);
        TakeStagings take(async, op->name, done, lets);
        Stmt rest = take.mutate(body);
        if (take.stagings.empty())
            return For::make(op->name, op->min, op->extent, op->for_type, op->gpu_dim, body);
        const int stages = async.at(take.stagings[0].func);
        for (const Staging &s : take.stagings) {
            user_assert(s.produce.defined())
                << "gpu_pipeline on Func " << s.func << ": " << s.func << " is allocated at "
                << loop_for_users(op->name) << " but computed inside a loop or branch within "
                << "it; a pipelined tile is computed directly at the loop it is staged at.";
            user_assert(async.at(s.func) == stages)
                << "gpu_pipeline on Funcs " << take.stagings[0].func << " and " << s.func
                << ": both are staged at " << loop_for_users(op->name) << " with "
                << "asynchronous copies, in " << stages << " and " << async.at(s.func)
                << " stages; the loop has one barrier per iteration for all of them, so give "
                << "them the same number of stages.";
        }
        // A tile copied `stages - 1` iterations ahead reads only what the loop does not
        // change: device buffers, and values computed before the loop.
        std::set<std::string> written_in_loop;
        visit_each<Store>(body, [&](const Store *st) { written_in_loop.insert(st->name); });
        for (const Staging &st : take.stagings) {
            std::set<std::string> own;
            visit_each<Store>(st.produce, [&](const Store *w) { own.insert(w->name); });
            visit_each<Load>(st.produce, [&](const Load *l) {
                // (Only an update stage reads the tile: its pure definition cannot.)
                user_assert(l->name != st.func && l->name.rfind(st.func + ".", 0) != 0)
                    << "gpu_pipeline on Func " << st.func << ": " << st.func << " has an update "
                    << "definition, which reads the tile " << st.func << " is copying; its "
                    << "copies are made " << stages - 1 << " iteration" << (stages == 2 ? "" : "s")
                    << " of the loop " << loop_for_users(op->name)
                    << " ahead and waited for only where the tile is read. Pipeline a tile that "
                    << "only copies (move the update into a Func of its own that reads " << st.func
                    << "), or do not pipeline " << st.func << ".";
                user_assert(!written_in_loop.count(l->name) || own.count(l->name))
                    << "gpu_pipeline on Func " << st.func << ": its definition reads " << l->name
                    << ", which the kernel writes inside the loop " << loop_for_users(op->name)
                    << " that " << st.func
                    << " is staged at, so its next values cannot be copied ahead. Compute "
                    << l->name << " outside that loop (at a loop around it), or do not "
                    << "pipeline " << st.func << ".";
            });
        }
        if (!take.other_shared.empty()) {
            const std::string &other = take.other_shared[0];
            // What that Func's definition reads of the pipelined tiles: then it cannot be
            // copied ahead with them.
            std::string reads_staged;
            visit_each<ProducerConsumer>(body, [&](const ProducerConsumer *pc) {
                if (!pc->is_producer || pc->name != other) return;
                visit_each<Load>(pc->body, [&](const Load *l) {
                    for (const Staging &st : take.stagings)
                        if (reads_staged.empty() && l->name == st.func) reads_staged = st.func;
                });
            });
            user_assert(reads_staged.empty())
                << "gpu_pipeline on Func " << reads_staged << ": " << other
                << " is also staged in shared memory at " << loop_for_users(op->name)
                << " and computed from " << reads_staged << " in each iteration; the "
                << "pipelined loop has one barrier per iteration, placed for the tiles it "
                << "copies ahead, and " << other << " cannot be copied ahead of the tile it "
                << "reads. Keep " << other << " out of shared memory at this loop (" << other
                << ".store_in(MemoryType::Register), or compute it at a loop "
                << "inside), or do not pipeline " << reads_staged << ".";
            user_error << "gpu_pipeline on Func " << take.stagings[0].func << ": " << other
                       << " is also staged in shared memory at " << loop_for_users(op->name)
                       << ", without asynchronous copies; the pipelined loop has one barrier per "
                       << "iteration, placed for the pipelined tiles. Pipeline " << other
                       << " the same way (gpu_pipeline(" << stages << ", PipelineCopy::Async)).";
        }

        const Expr var = Variable::make(Int(32), op->name);
        const Expr n = Expr(stages);
        // The staging of iteration `at` (an expression of the loop variable), into its buffer.
        auto stagings_of = [&](const Expr &at) {
            std::vector<Stmt> copies;
            const Expr stage = simplify(Mod::make(Sub::make(at, op->min), n));
            for (const Staging &s : take.stagings) {
                Expr offset = simplify(Mul::make(stage, make_const(Int(32), s.size)));
                copies.push_back(
                    SelectBuffer(s.func, offset).mutate(substitute(op->name, at, s.produce)));
            }
            return Block::make(copies);
        };
        // This iteration reads its own buffer.
        const Expr stage = simplify(Mod::make(Sub::make(var, op->min), n));
        for (const Staging &s : take.stagings)
            rest = SelectBuffer(s.func, simplify(Mul::make(stage, make_const(Int(32), s.size))))
                       .mutate(rest);
        // Warpgroup products (wgmma) over 3 or more stages leave each step's group running
        // while the next step begins. The buffer a copy refills is then the one the previous
        // step's group read, free once this step's wait retired that group: the copies come
        // after the rest of the body (and, where several warpgroups wait apart, after a
        // barrier that follows all their waits), still `stages - 1` steps ahead, and they are
        // issued while this step's group runs.
        const int distance = stages - 1;
        const Expr ahead = Add::make(var, Expr(distance));
        Stmt copies_ahead =
            Block::make(IfThenElse::make(LT::make(ahead, Add::make(op->min, op->extent)),
                                         stagings_of(ahead), Stmt()),
                        gpu_cp_async_commit());
        std::vector<std::vector<Stmt>> accumulators;
        Stmt loop_body;
        KeepOneWgmmaGroupInFlight in_flight;
        Stmt with_groups_in_flight;
        if (stages >= 3 && contains_intrinsic(rest, Intrinsic::gpu_wgmma)) {
            with_groups_in_flight = in_flight.mutate(rest);
            if (!accumulators_outlive_the_step(rest, in_flight.accumulators))
                with_groups_in_flight = Stmt();
        }
        if (with_groups_in_flight.defined()) {
            rest = with_groups_in_flight;
            accumulators = in_flight.accumulators;
            std::vector<Stmt> parts = {gpu_cp_async_wait(distance - 1), gpu_barrier(), rest};
            if (threads > kWarpgroupThreads) parts.push_back(gpu_barrier());
            parts.push_back(copies_ahead);
            loop_body = Block::make(parts);
        } else {
            loop_body =
                Block::make({gpu_cp_async_wait(distance - 1), gpu_barrier(), copies_ahead, rest});
        }
        // The first stagings move ahead of the loop, past the barrier its body began with.
        // One barrier before them keeps first what they read of shared memory the block
        // wrote before the loop (a row's statistics), and, where a loop around runs this one
        // again (a batch), the reads of the buffers they refill.
        bool reads_shared = loops_around > 0;
        for (const Staging &st : take.stagings) {
            visit_each<Load>(st.produce, [&](const Load *l) {
                reads_shared = reads_shared || (shared.count(l->name) && !async.count(l->name));
            });
        }
        std::vector<Stmt> whole;
        if (reads_shared) whole.push_back(gpu_barrier());
        for (int i = 0; i < distance; i++) {
            whole.push_back(IfThenElse::make(LT::make(Expr(i), op->extent),
                                             stagings_of(simplify(Add::make(op->min, Expr(i)))),
                                             Stmt()));
            whole.push_back(gpu_cp_async_commit());
        }
        whole.push_back(
            For::make(op->name, op->min, op->extent, op->for_type, op->gpu_dim, loop_body));
        whole.push_back(gpu_cp_async_wait(0));
        if (!accumulators.empty())
            whole.push_back(wait_for_wgmma_groups(accumulators, in_flight.around));
        Stmt result = Block::make(whole);
        for (const Staging &s : take.stagings) {
            // A tile smaller at the edges (its extents lets of the loop's body) takes its
            // largest size in every buffer.
            bool constant = true;
            for (const Expr &e : s.extents)
                constant = constant && is_const(e);
            std::vector<Expr> extents =
                constant ? s.extents : std::vector<Expr>{make_const(Int(32), s.size)};
            extents.push_back(n);
            result = Allocate::make(s.func, s.type, MemoryType::GPUShared, extents, result);
            done.insert(s.func);
        }
        return result;
    }
};

// Stores of device-buffer elements into shared memory, in pipelined stagings, as cp.async.
class AsyncCopies : public IRMutator {
public:
    explicit AsyncCopies(const std::map<std::string, int> &async) : async(async) {}

    // Per Func: its stores that became cp.async, and the first copy of an input element too
    // narrow for one (its type).
    std::map<std::string, int> copies;
    std::map<std::string, Type> narrow;

private:
    const std::map<std::string, int> &async;
    std::vector<std::string> inside;
    using IRMutator::visit;

    Stmt visit(const ProducerConsumer *op) override {
        const bool ours = op->is_producer && async.count(op->name);
        if (ours) inside.push_back(op->name);
        Stmt s = IRMutator::visit(op);
        if (ours) inside.pop_back();
        return s;
    }

    // The Ramp base of a dense access aligned to its copies of `piece` elements
    // (alignment_hint(base, piece): the whole vector, or 16 bytes of a wider one), or the index
    // of a scalar one.
    static Expr aligned_base(const Expr &index, int lanes, int piece) {
        if (lanes == 1) return index;
        const Ramp *r = index.as<Ramp>();
        if (!r || !is_const_one(r->stride)) return Expr();
        const Call *hint = r->base.as<Call>();
        if (!hint || !hint->is_intrinsic(Intrinsic::alignment_hint)) return Expr();
        auto elements = as_const_int(hint->args[1]);
        if (!elements || *elements != piece) return Expr();
        return r->base;
    }

    Stmt visit(const Store *op) override {
        if (inside.empty() || op->name != kSharedMemoryName || !is_const_one(op->predicate))
            return op;
        const Type t = op->value.type();
        // A piece past the end of the input (a condition on the whole piece) is zero-filled:
        // select(c, load, 0) copies select(c, all, none) of its elements.
        Expr value = op->value, condition;
        if (const Select *sel = value.as<Select>()) {
            if (!sel->condition.type().is_scalar() || !is_const_zero(sel->false_value)) return op;
            condition = sel->condition;
            value = sel->true_value;
        }
        const Load *l = value.as<Load>();
        const int bytes = t.bytes() * t.lanes;
        if (!l || l->name == kSharedMemoryName || !is_const_one(l->predicate)) return op;
        // Wider vectors (a row of 8 floats) as 16-byte copies, one after another.
        const bool whole = bytes == 4 || bytes == 8 || bytes == 16;
        if (!whole && bytes % 16 != 0) {
            narrow.emplace(inside.back(), t);
            return op;
        }
        const int lanes = whole ? t.lanes : 16 / t.bytes();
        Expr dst = aligned_base(op->index, t.lanes, lanes),
             src = aligned_base(l->index, t.lanes, lanes);
        if (!dst.defined() || !src.defined()) return op;
        copies[inside.back()]++;
        const Expr valid =
            condition.defined() ? Select::make(condition, Expr(lanes), Expr(0)) : Expr(lanes);
        std::vector<Stmt> pieces;
        for (int at = 0; at < t.lanes; at += lanes) {
            pieces.push_back(gpu_cp_async(t.element_of(), lanes, kSharedMemoryName,
                                          simplify(Add::make(dst, Expr(at))), l->name,
                                          simplify(Add::make(src, Expr(at))), valid));
        }
        return Block::make(pieces);
    }
};

} // namespace

void multi_buffer_async_stages(std::vector<LoweredKernel> &kernels,
                               const std::map<std::string, Function> &env) {
    const std::map<std::string, int> async = async_funcs(env);
    if (async.empty()) return;
    std::set<std::string> done;
    for (LoweredKernel &k : kernels) {
        std::set<std::string> shared;
        visit_each<Allocate>(k.body, [&](const Allocate *a) {
            if (a->memory_type == MemoryType::GPUShared) shared.insert(a->name);
        });
        MultiBuffer m(async, shared, k.thread_count());
        k.body = m.mutate(k.body);
        k.async_staged = m.done;
        done.insert(m.done.begin(), m.done.end());
        for (const std::string &f : k.funcs) {
            if (!async.count(f) || m.done.count(f)) continue;
            // Computed at a serial loop that runs once (and is gone): nothing to copy ahead.
            const LoopLevel &at = env.at(f).schedule().compute_level;
            bool at_gpu_loop = at.is_root() || at.is_inlined();
            for (const std::string &v : k.loop_vars) {
                const LoopNameParts parts = parse_loop_name(v);
                at_gpu_loop = at_gpu_loop || (parts.func == at.func() && parts.var == at.var());
            }
            // Still there: the Func is not a tile in shared memory.
            bool loop_remains = false;
            visit_each<For>(k.body, [&](const For *l) {
                const LoopNameParts parts = parse_loop_name(l->name);
                loop_remains = loop_remains || (parts.func == at.func() && parts.var == at.var());
            });
            user_assert(at_gpu_loop || !loop_remains)
                << "gpu_pipeline(" << async.at(f) << ", PipelineCopy::Async) on Func " << f << ": "
                << f << " is computed at " << at.func() << "'s loop " << at.var()
                << " but not stored in GPU shared memory, where its copies would go. "
                << "store_in(MemoryType::GPUShared).";
            if (!at_gpu_loop) done.insert(f);
        }
    }
    for (const auto &[f, stages] : async) {
        user_assert(done.count(f))
            << "gpu_pipeline(" << stages << ", PipelineCopy::Async) on Func " << f << ": " << f
            << " is not a tile staged in shared memory at a serial loop of a GPU kernel. "
            << "compute_at it at a serial loop inside the block's loops (the reduction loop of a "
            << "matrix product), in shared memory.";
    }
}

void copy_stages_asynchronously(std::vector<LoweredKernel> &kernels,
                                const std::map<std::string, Function> &env) {
    const std::map<std::string, int> async = async_funcs(env);
    if (async.empty()) return;
    for (LoweredKernel &k : kernels) {
        // Only where the stagings wait for their copies (a loop of one iteration is gone,
        // and its staging with it: plain stores there).
        std::map<std::string, int> here;
        for (const std::string &f : k.async_staged)
            here[f] = async.at(f);
        if (here.empty()) continue;
        AsyncCopies copies(here);
        k.body = copies.mutate(k.body);
        // Copies of the input, none of which a cp.async can make: the pipeline would wait
        // on nothing, its loads exposed as without it.
        for (const auto &[f, t] : copies.narrow) {
            if (copies.copies.count(f)) continue;
            const int bytes = t.bytes() * t.lanes;
            user_error << "gpu_pipeline(" << here.at(f) << ", PipelineCopy::Async) on Func " << f
                       << ": " << f << "'s tile is copied from the input " << bytes << " byte"
                       << (bytes == 1 ? "" : "s") << " ("
                       << (t.lanes == 1 ? with_article(t) : to_string(t))
                       << ") at a time, but cp.async copies 4, 8 or 16 bytes (a wider vector "
                       << "in 16-byte pieces). Vectorize the innermost loop of " << f << " by "
                       << 16 / t.bytes() << " (16 bytes) or a multiple of it, or use "
                       << "PipelineCopy::Registers.";
        }
    }
}

} // namespace lowering
} // namespace aicf
