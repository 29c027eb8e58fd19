#include "lowering/PackSharedMemory.h"

#include "dsl/Names.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRVisitor.h"
#include "lowering/KernelAnalysis.h"

#include <algorithm>
#include <map>
#include <sstream>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

struct SharedFunc {
    std::string name;
    Type type;
    int64_t bytes = 0;
    int first = 0, last = 0; // the parts it is live in
};

// Numbers the parts of the body in program order (thread loop nests, and block-level stores
// and expressions that read memory), and records which parts touch each shared Func, where
// the barriers are, and the block-level loops and conditions around each part and barrier.
class Lifetimes : public LetTracker {
public:
    explicit Lifetimes(const LoweredKernel &k) : kernel(k) { part_constructs.emplace_back(); }

    std::vector<SharedFunc> funcs;

    // Extends each Func's lifetime over the loops that touch it.
    void finish() {
        for (SharedFunc &f : funcs) {
            const std::vector<int> &t = touches[f.name];
            if (!t.empty()) {
                f.first = *std::min_element(t.begin(), t.end());
                f.last = *std::max_element(t.begin(), t.end());
            }
            for (const Loop &l : loops) {
                bool touched = std::any_of(t.begin(), t.end(),
                                           [&](int p) { return p >= l.first && p <= l.last; });
                if (!touched) continue;
                f.first = std::min(f.first, l.first);
                f.last = std::max(f.last, l.last);
            }
        }
    }

    // Whether a and b may share bytes: one lives entirely before the other, with a barrier
    // between them that runs whenever both do.
    bool may_share(const SharedFunc &a, const SharedFunc &b) const {
        if (a.last < b.first) return barrier_between(a.last, b.first);
        if (b.last < a.first) return barrier_between(b.last, a.first);
        return false;
    }

private:
    const LoweredKernel &kernel;
    struct Loop {
        int first, last;
    };
    struct Barrier {
        int after_part;
        std::vector<int> constructs;
    };
    int part = 0;
    int next_construct = 0;
    std::vector<int> constructs;                   // the block-level loops and branches around
    std::vector<std::vector<int>> part_constructs; // per part
    std::vector<Barrier> barriers;
    std::vector<Loop> loops;
    std::map<std::string, std::vector<int>> touches;

    bool barrier_between(int p, int q) const {
        auto encloses = [](const std::vector<int> &outer, const std::vector<int> &inner) {
            return outer.size() <= inner.size() &&
                   std::equal(outer.begin(), outer.end(), inner.begin());
        };
        for (const Barrier &b : barriers) {
            if (b.after_part < p || b.after_part >= q) continue;
            if (encloses(b.constructs, part_constructs[size_t(p)]) &&
                encloses(b.constructs, part_constructs[size_t(q)]))
                return true;
        }
        return false;
    }

    int new_part() {
        part++;
        part_constructs.push_back(constructs);
        return part;
    }

    template <typename IRHandle> void enter_part(const IRHandle &ir) {
        int p = new_part();
        visit_each<Load>(ir, [&](const Load *l) { touches[l->name].push_back(p); });
        visit_each<Store>(ir, [&](const Store *st) { touches[st->name].push_back(p); });
    }

    template <typename F> void inside_construct(F &&f) {
        constructs.push_back(next_construct++);
        f();
        constructs.pop_back();
    }

    using LetTracker::visit;

    void visit(const For *op) override {
        if (op->for_type == ForType::GPUThread) {
            enter_part(Stmt(op));
            return;
        }
        op->min.accept(this);
        op->extent.accept(this);
        inside_construct([&] {
            loops.push_back({part + 1, 0});
            size_t me = loops.size() - 1;
            op->body.accept(this);
            loops[me].last = part;
        });
    }

    void visit(const IfThenElse *op) override {
        op->condition.accept(this);
        inside_construct([&] { op->then_case.accept(this); });
        if (op->else_case.defined()) inside_construct([&] { op->else_case.accept(this); });
    }

    void visit(const Evaluate *op) override {
        if (is_gpu_barrier(Stmt(op))) {
            barriers.push_back({part, constructs});
            return;
        }
        IRVisitor::visit(op);
    }

    void visit(const Store *op) override { enter_part(Stmt(op)); }
    void visit(const Load *op) override { enter_part(Expr(op)); }

    void visit(const Allocate *op) override {
        if (op->memory_type != MemoryType::GPUShared) {
            IRVisitor::visit(op);
            return;
        }
        auto n = element_count_bound(op->extents);
        const std::string size = product_text(op->extents);
        user_assert(n.has_value())
            << "Func " << op->name << " is stored in GPU shared memory in kernel " << kernel.name
            << ", but its size (" << size << " elements)" << symbols_clause(size)
            << " is not bounded by a constant. Compute it over a region of constant size: split "
               "the consumer's loops by "
            << "constants, or bound() " << op->name << ". Where the region grows with the "
            << "output's size (a read clamped to a constant edge, such as min(x + 1, 39), reaches "
            << "that edge from any block), bound() the output instead if its size is fixed.";
        IRVisitor::visit(op);
        funcs.push_back(
            {op->name, op->type, std::max<int64_t>(*n, 0) * op->type.bytes(), part, part});
    }
};

// Shared allocations become ranges of the one shared array.
class UseSharedArray : public IRMutator {
public:
    explicit UseSharedArray(const std::map<std::string, int64_t> &offsets) : offsets(offsets) {}

private:
    const std::map<std::string, int64_t> &offsets; // bytes
    using IRMutator::visit;

    Expr offset_index(const std::string &name, Type t, const Expr &index) const {
        Expr off = make_const(Int(32), offsets.at(name) / t.bytes());
        if (index.type().lanes > 1) off = Broadcast::make(off, index.type().lanes);
        return Add::make(index, off);
    }
    Stmt visit(const Allocate *op) override {
        if (!offsets.count(op->name)) return IRMutator::visit(op);
        return mutate(op->body);
    }
    Expr visit(const Load *op) override {
        if (!offsets.count(op->name)) return IRMutator::visit(op);
        Expr index = mutate(op->index);
        Expr pred = op->predicate.defined() ? mutate(op->predicate) : Expr();
        return Load::make(op->type, kSharedMemoryName,
                          offset_index(op->name, op->type.element_of(), index), pred);
    }
    Stmt visit(const Store *op) override {
        if (!offsets.count(op->name)) return IRMutator::visit(op);
        Expr value = mutate(op->value);
        Expr index = mutate(op->index);
        Expr pred = op->predicate.defined() ? mutate(op->predicate) : Expr();
        return Store::make(kSharedMemoryName, value,
                           offset_index(op->name, op->value.type().element_of(), index), pred);
    }
};

} // namespace

void pack_shared_memory(LoweredKernel &kernel) {
    Lifetimes lifetimes(kernel);
    kernel.body.accept(&lifetimes);
    lifetimes.finish();
    std::vector<SharedFunc> funcs = lifetimes.funcs;
    std::stable_sort(funcs.begin(), funcs.end(),
                     [](const SharedFunc &a, const SharedFunc &b) { return a.bytes > b.bytes; });

    std::vector<std::pair<const SharedFunc *, int64_t>> placed; // with offsets
    std::map<std::string, int64_t> offsets;
    int64_t total = 0;
    for (const SharedFunc &f : funcs) {
        int64_t offset = 0;
        for (bool moved = true; moved;) {
            moved = false;
            for (const auto &[p, p_offset] : placed) {
                bool overlap = offset < p_offset + p->bytes && p_offset < offset + f.bytes;
                if (overlap && !lifetimes.may_share(f, *p)) {
                    offset = (p_offset + p->bytes + 15) / 16 * 16;
                    moved = true;
                }
            }
        }
        placed.emplace_back(&f, offset);
        offsets[f.name] = offset;
        kernel.shared.push_back({f.name, offset, f.bytes});
        total = std::max(total, offset + f.bytes);
    }
    kernel.shared_bytes = total;
    const Target &target = kernel.target;
    if (total > target.max_shared_memory_per_block()) {
        std::ostringstream list;
        bool funcs = false;
        for (const SharedAllocation &a : kernel.shared) {
            list << "\n  " << a.func << ": " << a.bytes << " bytes at offset " << a.offset;
            std::string loop;
            if (is_warp_partials(a.func, &loop)) {
                list << " (the partial results of the cross-thread reduction over "
                     << loop_for_users(loop) << ": fewer threads in that loop, or fewer points "
                     << "reduced at once, make it smaller)";
            } else {
                funcs = true;
                if (kernel.async_staged.count(a.func))
                    list << " (one buffer per stage of its gpu_pipeline: fewer stages make it "
                         << "smaller)";
            }
        }
        user_error << "The kernel " << kernel.name << " needs " << total
                   << " bytes of shared memory per block, more than the "
                   << target.max_shared_memory_per_block() << " that " << target.to_string()
                   << " allows. Its shared allocations:" << list.str() << "\nUse smaller tiles"
                   << (funcs ? ", or store some of these Funcs in registers or device memory."
                             : ".");
    }
    if (!offsets.empty()) kernel.body = UseSharedArray(offsets).mutate(kernel.body);
}

} // namespace lowering
} // namespace aicf
