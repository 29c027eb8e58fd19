#include "lowering/FusedThreadLoops.h"

#include "dsl/ir/Bounds.h"
#include "dsl/ir/IREquality.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/Scope.h"
#include "dsl/ir/Simplify.h"
#include "lowering/KernelAnalysis.h"

#include <algorithm>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// Past this, idle threads would outnumber the points a short step saves dividing.
constexpr int64_t largest_bound = 65536;

class BoundFusedExtents : public LetTrackingMutator {
    using LetTrackingMutator::visit;

    static bool is_bound_call(const Expr &e) {
        const Call *c = e.as<Call>();
        return c && c->is_intrinsic(Intrinsic::fused_extent_bound);
    }

    // The loops around, each over its range: a reduction of one short step (K = 3 in steps
    // of 8) stages a region of at most 3 rows, though its extent, min(2 - ko * 8, 7) + 1, is
    // bounded by 8 for other values of ko.
    Scope<Interval> loops;
    Stmt visit(const For *op) override {
        Expr min = mutate(op->min), extent = mutate(op->extent);
        Expr first = simplify(expand(min));
        loops.push(op->name, Interval(first, simplify(Sub::make(Add::make(first, expand(extent)),
                                                                make_one(extent.type())))));
        Stmt body = mutate(op->body);
        loops.pop(op->name);
        return For::make(op->name, min, extent, op->for_type, op->gpu_dim, body);
    }

    // The constant bound of the extent n (already mutated), or undefined.
    Expr bound_of(const Expr &n) const {
        if (is_const(n)) return n;
        const Expr e = simplify(expand(n));
        auto b = constant_upper_bound(e);
        const Interval over_loops = bounds_of_expr_in_scope(e, loops);
        if (over_loops.has_upper_bound()) {
            auto c = as_const_int(simplify(over_loops.max));
            if (!c) c = constant_upper_bound(simplify(over_loops.max));
            if (c && (!b || *c < *b)) b = c;
        }
        if (!b || *b > largest_bound) return Expr();
        return make_const(Int(32), std::max<int64_t>(*b, 1));
    }

    Expr visit(const Call *op) override {
        if (!op->is_intrinsic(Intrinsic::fused_extent_bound)) return LetTrackingMutator::visit(op);
        Expr n = mutate(op->args[0]);
        Expr b = bound_of(n);
        return b.defined() ? b : n;
    }

    // The guard t % fused_extent_bound(n) < n, where n has no bound: t % n < n.
    Expr visit(const LT *op) override {
        const Mod *m = op->a.as<Mod>();
        if (m && is_bound_call(m->b) && equal(m->b.as<Call>()->args[0], op->b)) {
            Expr n = mutate(op->b);
            Expr b = bound_of(n);
            if (!b.defined() || equal(b, n)) return const_true();
            return LT::make(Mod::make(mutate(m->a), b), n);
        }
        return LetTrackingMutator::visit(op);
    }
};

} // namespace

Stmt bound_fused_thread_loops(const Stmt &s) {
    return BoundFusedExtents().mutate(s);
}

} // namespace lowering
} // namespace aicf
