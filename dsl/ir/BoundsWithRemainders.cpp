// Bounds through a second form of an expression, its rounded-down quotients written with
// remainders (Bounds.h: quotients_as_remainders, bounds_of_expr_in_scope_with_remainders).

#include "dsl/ir/Bounds.h"

#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"

namespace aicf {
namespace ir {

namespace {

class QuotientsAsRemainders : public IRMutator {
public:
    bool changed = false;

private:
    using IRMutator::visit;
    Expr visit(const Mul *op) override {
        Expr a = mutate(op->a), b = mutate(op->b);
        if (!op->type.is_int() || !op->type.is_scalar()) return Mul::make(a, b);
        const Div *d = a.as<Div>();
        Expr k = b;
        if (!d) {
            d = b.as<Div>();
            k = a;
        }
        if (!d) return Mul::make(a, b);
        const int64_t c = as_const_int(d->b).value_or(0), kc = as_const_int(k).value_or(0);
        if (c <= 0 || kc == 0 || kc % c != 0) return Mul::make(a, b);
        changed = true;
        Expr rounded = Sub::make(d->a, Mod::make(d->a, d->b));
        return kc == c ? rounded : Mul::make(rounded, make_const(op->type, kc / c));
    }
};

// The tighter of two bounds on the same end: `upper` picks the smaller. Only a bounded first
// end is tightened (an unbounded one may stand for arithmetic that wraps, which the second
// form can hide), and a bound too large to write as a min or max of both stays the first.
Expr tighter_end(const Expr &a, const Expr &b, bool upper) {
    if (!a.defined() || !b.defined()) return a;
    // A constant end stays constant (a region's constant extent keeps its loops unrollable
    // and its storage on the stack), unless the other is a tighter constant.
    if (is_const(a)) {
        if (!is_const(b)) return a;
        return can_prove(upper ? LE::make(b, a) : GE::make(b, a)) ? b : a;
    }
    if (can_prove(upper ? LE::make(a, b) : GE::make(a, b))) return a;
    if (can_prove(upper ? LE::make(b, a) : GE::make(b, a))) return b;
    int nodes = 0;
    visit_each<Variable>(a, [&](const Variable *) { nodes++; });
    visit_each<Variable>(b, [&](const Variable *) { nodes++; });
    if (nodes > 64) return a;
    return simplify(upper ? Expr(Min::make(a, b)) : Expr(Max::make(a, b)));
}

} // namespace

Expr quotients_as_remainders(const Expr &e) {
    if (!e.defined() || !e.type().is_int()) return Expr();
    QuotientsAsRemainders q;
    Expr r = q.mutate(e);
    return q.changed ? r : Expr();
}

Interval bounds_of_expr_in_scope_with_remainders(const Expr &e, const Scope<Interval> &scope) {
    Interval plain = bounds_of_expr_in_scope(e, scope);
    Expr alt = quotients_as_remainders(e);
    if (!alt.defined()) return plain;
    Interval other = bounds_of_expr_in_scope(simplify(alt), scope);
    return Interval(tighter_end(plain.min, other.min, false),
                    tighter_end(plain.max, other.max, true));
}

} // namespace ir
} // namespace aicf
