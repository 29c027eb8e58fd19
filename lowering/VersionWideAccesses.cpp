#include "lowering/VersionWideAccesses.h"

#include "dsl/ir/IREquality.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"
#include "lowering/KernelAnalysis.h"

#include <map>
#include <set>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// The widest power-of-two access (up to 16 bytes) a dense vector of type t makes, in elements;
// 0 when it is no wider than one element.
int wide_elements(Type t) {
    int64_t bytes = int64_t(t.bytes()) * t.lanes, align = 1;
    while (align < 16 && bytes % (align * 2) == 0)
        align *= 2;
    return align > t.bytes() ? int(align / t.bytes()) : 0;
}

std::string index_symbol(const Call *c) {
    return std::string(c->is_intrinsic(Intrinsic::gpu_thread_index) ? "__thread." : "__block.") +
           std::to_string(*as_const_int(c->args[0]));
}

// The thread and block indices as variables, for reasoning about an index.
class IndexSymbols : public IRMutator {
public:
    std::set<std::string> names;

private:
    using IRMutator::visit;
    Expr visit(const Call *op) override {
        if (!op->is_intrinsic(Intrinsic::gpu_thread_index) &&
            !op->is_intrinsic(Intrinsic::gpu_block_index))
            return IRMutator::visit(op);
        names.insert(index_symbol(op));
        return Variable::make(op->type, index_symbol(op));
    }
};

// Finds the dense vector accesses to device or shared memory whose alignment depends only on
// the launch, and the condition for it.
class FindWideAccesses : public LetTracker {
public:
    explicit FindWideAccesses(std::set<std::string> local) : local(std::move(local)) {}
    std::set<const IRNode *> provable;
    std::set<const IRNode *> conditional; // those aligned only under the launch condition
    // Of those, the ones whose condition comes from one side of a min or max (a tile shifted
    // inwards at the end: min(bx * 256, n - 256) with n not a multiple): in the fallback, only
    // some blocks are unaligned, so each access checks its own alignment where it runs.
    std::set<const IRNode *> checked;
    std::vector<Expr> conditions;

private:
    std::set<std::string> local; // the kernel's own arrays (registers)
    std::set<std::string> loops;

    using LetTracker::visit;

    void visit(const Let *op) override {
        op->value.accept(this);
        lets.emplace_back(op->name, op->value);
        op->body.accept(this);
        lets.pop_back();
    }
    void visit(const For *op) override {
        op->min.accept(this);
        op->extent.accept(this);
        loops.insert(op->name);
        op->body.accept(this);
        loops.erase(op->name);
    }
    void visit(const Load *op) override {
        IRVisitor::visit(op);
        consider(op, op->name, op->index, op->type);
    }
    void visit(const Store *op) override {
        IRVisitor::visit(op);
        consider(op, op->name, op->index, op->value.type());
    }

    void consider(const IRNode *node, const std::string &name, const Expr &index, Type t) {
        const Ramp *ramp = index.as<Ramp>();
        const int n = wide_elements(t);
        // (A predicated access counts too: where all its lanes are on, it is made whole.)
        if (local.count(name) || !ramp || !is_const_one(ramp->stride) || n == 0) return;
        IndexSymbols symbols;
        Expr base = simplify(symbols.mutate(expand(ramp->base)));
        std::set<std::string> vars = symbols.names;
        vars.insert(loops.begin(), loops.end());
        std::vector<LaunchValue> launch_values; // must be multiples of n
        if (!multiple_of(base, n, vars, launch_values, false)) return;
        provable.insert(node);
        for (const LaunchValue &m : launch_values) {
            Expr c = simplify(
                EQ::make(Mod::make(m.value, make_const(Int(32), int64_t(n))), make_zero(Int(32))));
            if (is_const(c, 1)) continue;
            conditional.insert(node);
            if (m.in_min_or_max) checked.insert(node);
            bool known = false;
            for (const Expr &k : conditions)
                known = known || equal(k, c);
            if (!known) conditions.push_back(c);
        }
    }

    // Whether e is a multiple of n wherever the loops and threads are, given that the values
    // of the launch in `launch_values` are (a sum of terms, each a multiple: a constant
    // multiple of n, a value of the launch, or a product with one; or the min or max of two
    // multiples).
    struct LaunchValue {
        Expr value;
        bool in_min_or_max; // one side of a min or max
    };
    static bool multiple_of(const Expr &e, int64_t n, const std::set<std::string> &vars,
                            std::vector<LaunchValue> &launch_values, bool in_min_or_max) {
        auto both = [&](const Expr &a, const Expr &b, bool side) {
            return multiple_of(a, n, vars, launch_values, side) &&
                   multiple_of(b, n, vars, launch_values, side);
        };
        if (auto c = as_const_int(e)) return *c % n == 0;
        if (const Add *a = e.as<Add>()) return both(a->a, a->b, in_min_or_max);
        if (const Sub *d = e.as<Sub>()) return both(d->a, d->b, in_min_or_max);
        // The lesser or greater of two multiples (a tile shifted inwards at the end).
        if (const Min *m = e.as<Min>()) return both(m->a, m->b, true);
        if (const Max *m = e.as<Max>()) return both(m->a, m->b, true);
        if (const Mul *m = e.as<Mul>()) {
            std::vector<LaunchValue> saved = launch_values;
            if (multiple_of(m->a, n, vars, launch_values, in_min_or_max)) return true;
            launch_values = saved;
            return multiple_of(m->b, n, vars, launch_values, in_min_or_max);
        }
        for (const std::string &v : vars)
            if (uses_var(e, v)) return false; // varies within the launch
        launch_values.push_back({e, in_min_or_max});
        return true;
    }
};

// The body with the provable accesses marked aligned (or lane by lane, or left to check their
// alignment where they run).
class Mark : public IRMutator {
public:
    // `lane_by_lane`: the accesses made element by element instead, and `unmarked` those left
    // to check (none, or those aligned only under the launch condition, in its fallback).
    Mark(const std::set<const IRNode *> &provable, const std::set<const IRNode *> &lane_by_lane,
         const std::set<const IRNode *> &unmarked)
        : provable(provable), lane_by_lane(lane_by_lane), unmarked(unmarked) {}

private:
    const std::set<const IRNode *> &provable, &lane_by_lane, &unmarked;

    using IRMutator::visit;

    Expr hinted(const IRNode *access, const Expr &index, Type t) {
        const Ramp *r = index.as<Ramp>();
        const bool aligned = !lane_by_lane.count(access);
        Expr base =
            Call::make(r->base.type(), Intrinsic::alignment_hint,
                       {r->base, make_const(Int(32), int64_t(aligned ? wide_elements(t) : 0))},
                       Call::Intrinsic);
        return Ramp::make(base, r->stride, r->lanes);
    }

    Expr visit(const Load *op) override {
        Expr e = IRMutator::visit(op);
        if (!provable.count(op) || unmarked.count(op)) return e;
        const Load *l = e.as<Load>();
        return Load::make(l->type, l->name, hinted(op, l->index, l->type), l->predicate, l->param);
    }
    Stmt visit(const Store *op) override {
        Stmt s = IRMutator::visit(op);
        if (!provable.count(op) || unmarked.count(op)) return s;
        const Store *st = s.as<Store>();
        return Store::make(st->name, st->value, hinted(op, st->index, st->value.type()),
                           st->predicate, st->param);
    }
};

} // namespace

void version_wide_accesses(std::vector<LoweredKernel> &kernels) {
    const size_t count = kernels.size();
    for (size_t i = 0; i < count; i++) {
        std::set<std::string> local;
        visit_each<Allocate>(kernels[i].body, [&](const Allocate *op) { local.insert(op->name); });
        FindWideAccesses find(local);
        kernels[i].body.accept(&find);
        if (find.provable.empty()) continue;
        Stmt wide = Mark(find.provable, {}, {}).mutate(kernels[i].body);
        if (!find.conditions.empty()) {
            LoweredKernel narrow = kernels[i];
            narrow.id = new_kernel_id();
            narrow.name += "_unaligned";
            narrow.body =
                Mark(find.provable, find.conditional, find.checked).mutate(kernels[i].body);
            Expr all = find.conditions[0];
            for (size_t k = 1; k < find.conditions.size(); k++)
                all = And::make(all, find.conditions[k]);
            kernels[i].launch_condition = all;
            kernels[i].fallback = int(kernels.size());
            kernels.push_back(std::move(narrow));
        }
        kernels[i].body = wide;
    }
}

} // namespace lowering
} // namespace aicf
