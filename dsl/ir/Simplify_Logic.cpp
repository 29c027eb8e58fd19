// Comparison, boolean and select rules of the simplifier.

#include "dsl/ir/IREquality.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/SimplifyInternal.h"

namespace aicf {
namespace ir {
namespace simplify_detail {

namespace {

// Folds a comparison of two constants, or returns undefined.
Expr fold_compare(IRNodeType op, const Expr &a, const Expr &b) {
    Type t = a.type();
    int lanes = t.lanes;
    auto result = [&](auto x, auto y) {
        bool r = false;
        switch (op) {
        case IRNodeType::LT:
            r = x < y;
            break;
        case IRNodeType::LE:
            r = x <= y;
            break;
        case IRNodeType::EQ:
            r = x == y;
            break;
        default:
            break;
        }
        return make_const(Bool(lanes), int64_t(r));
    };
    if (t.is_int_or_uint()) {
        auto x = const_bits(a), y = const_bits(b);
        if (!x || !y) return Expr();
        if (t.is_uint()) return result(static_cast<uint64_t>(*x), static_cast<uint64_t>(*y));
        return result(*x, *y);
    }
    if (t.is_float()) {
        auto x = as_const_float(a), y = as_const_float(b);
        if (x && y) return result(*x, *y);
    }
    return Expr();
}

// Answers `d op 0` from the bounds of d, if they decide it.
std::optional<bool> decide(IRNodeType op, const ConstBounds &d) {
    switch (op) {
    case IRNodeType::LT:
        if (d.has_max && d.max < 0) return true;
        if (d.has_min && d.min >= 0) return false;
        break;
    case IRNodeType::LE:
        if (d.has_max && d.max <= 0) return true;
        if (d.has_min && d.min > 0) return false;
        break;
    case IRNodeType::EQ:
        if (d.is_point() && d.min == 0) return true;
        if ((d.has_min && d.min > 0) || (d.has_max && d.max < 0)) return false;
        break;
    default:
        break;
    }
    return std::nullopt;
}

Expr make_compare(IRNodeType op, const Expr &a, const Expr &b) {
    switch (op) {
    case IRNodeType::LT:
        return LT::make(a, b);
    case IRNodeType::LE:
        return LE::make(a, b);
    default:
        return EQ::make(a, b);
    }
}

} // namespace

Expr Simplify::compare_linear(IRNodeType op, const Expr &a, const Expr &b) {
    Type t = a.type();
    // The form reduces constants modulo 2^bits; a difference the type does not hold (x against
    // INT_MIN) would wrap into a value of the wrong sign, so such comparisons stay as written.
    LinearForm d = linear_combine(linear_form(a), linear_form(b), -1);
    if (d.wrapped) return make_compare(op, a, b);
    auto known = [](bool r) { return make_const(Bool(), int64_t(r)); };
    if (d.terms.empty()) return known(*decide(op, ConstBounds::point(d.constant)));
    if (auto r = decide(op, bounds_of_linear(d))) return known(*r);
    if (auto r = decide(op, symbolic_bounds(linear_rebuild(d)))) return known(*r);
    if (auto r = decide(op, relaxed_bounds(d))) return known(*r);
    // Through the values of enclosing lets: a guard written in a split's original variable
    // is decided by the ranges of the loops that now define it.
    LinearForm expanded = expand_let_terms(d);
    if (expanded.wrapped) return make_compare(op, a, b);
    if (expanded.terms.empty()) return known(*decide(op, ConstBounds::point(expanded.constant)));
    if (auto r = decide(op, bounds_of_linear(expanded))) return known(*r);

    // Canonical form: sum(coeff * term) op k, divided by the coefficients' common factor, with
    // the positively scaled terms on the left and the constant on the right.
    if (d.constant == INT64_MIN) return make_compare(op, a, b);
    int64_t k = -d.constant;
    int64_t g = 0;
    for (const Term &term : d.terms) {
        if (term.coeff == INT64_MIN) return make_compare(op, a, b);
        g = gcd64(g, term.coeff);
    }
    int64_t bound;
    if (op == IRNodeType::LT) {
        bound = div_euclid(k - 1, g) + 1; // s*g < k  <=>  s <= floor((k-1)/g)
    } else if (op == IRNodeType::LE) {
        bound = div_euclid(k, g);
    } else {
        if (mod_euclid(k, g) != 0) return const_false();
        bound = k / g;
    }
    LinearForm pos, neg;
    pos.type = neg.type = t;
    for (const Term &term : d.terms) {
        if (term.coeff > 0) {
            pos.terms.push_back({term.e, term.coeff / g});
        } else {
            neg.terms.push_back({term.e, -(term.coeff / g)});
        }
    }
    if (bound == INT64_MIN || !t.can_represent(bound) || !t.can_represent(-bound)) {
        return make_compare(op, a, b);
    }
    if (pos.terms.empty()) {
        // -n op bound  <=>  -bound op n (for EQ: n == -bound).
        if (op == IRNodeType::EQ) return EQ::make(linear_rebuild(neg), make_const(t, -bound));
        return make_compare(op, make_const(t, -bound), linear_rebuild(neg));
    }
    neg.constant = bound;
    return make_compare(op, linear_rebuild(pos), linear_rebuild(neg));
}

namespace {

// The smallest and largest lane of a ramp with a constant stride, or of a broadcast.
bool lane_extremes(const Expr &e, Expr &lo, Expr &hi) {
    if (const Broadcast *b = e.as<Broadcast>()) {
        lo = hi = b->value;
        return true;
    }
    const Ramp *r = e.as<Ramp>();
    if (!r) return false;
    auto stride = as_const_int(r->stride);
    if (!stride) return false;
    Expr span = make_const(r->base.type(), *stride * (r->lanes - 1));
    lo = *stride >= 0 ? r->base : Add::make(r->base, span);
    hi = *stride >= 0 ? Add::make(r->base, span) : r->base;
    return true;
}

} // namespace

Expr Simplify::build_lt(const Expr &a, const Expr &b) {
    if (Expr f = fold_compare(IRNodeType::LT, a, b); f.defined()) return f;
    Type t = a.type();
    const Broadcast *ba = a.as<Broadcast>(), *bb = b.as<Broadcast>();
    if (ba && bb) return Broadcast::make(build_lt(ba->value, bb->value), t.lanes);
    if (equal(a, b)) return const_false(t.lanes);
    // Ramps against broadcasts: decided when every lane agrees.
    Expr alo, ahi, blo, bhi;
    if (t.is_vector() && t.is_int() && lane_extremes(a, alo, ahi) && lane_extremes(b, blo, bhi)) {
        if (is_true(build_lt(mutate(ahi), mutate(blo)))) return const_true(t.lanes);
        if (is_false(build_lt(mutate(alo), mutate(bhi)))) return const_false(t.lanes);
    }
    if (!t.is_int_or_uint()) return LT::make(a, b);
    ConstBounds ia = bounds_of(a), ib = bounds_of(b);
    if (ia.has_max && ib.has_min && ia.max < ib.min) return const_true(t.lanes);
    if (ia.has_min && ib.has_max && ia.min >= ib.max) return const_false(t.lanes);
    if (no_overflow(t) && t.is_scalar()) return compare_linear(IRNodeType::LT, a, b);
    return LT::make(a, b);
}

Expr Simplify::build_le(const Expr &a, const Expr &b) {
    if (Expr f = fold_compare(IRNodeType::LE, a, b); f.defined()) return f;
    Type t = a.type();
    const Broadcast *ba = a.as<Broadcast>(), *bb = b.as<Broadcast>();
    if (ba && bb) return Broadcast::make(build_le(ba->value, bb->value), t.lanes);
    // x <= x is false for a float NaN.
    if (!t.is_int_or_uint()) return LE::make(a, b);
    Expr alo, ahi, blo, bhi;
    if (t.is_vector() && t.is_int() && lane_extremes(a, alo, ahi) && lane_extremes(b, blo, bhi)) {
        if (is_true(build_le(mutate(ahi), mutate(blo)))) return const_true(t.lanes);
        if (is_false(build_le(mutate(alo), mutate(bhi)))) return const_false(t.lanes);
    }
    if (equal(a, b)) return const_true(t.lanes);
    ConstBounds ia = bounds_of(a), ib = bounds_of(b);
    if (ia.has_max && ib.has_min && ia.max <= ib.min) return const_true(t.lanes);
    if (ia.has_min && ib.has_max && ia.min > ib.max) return const_false(t.lanes);
    if (no_overflow(t) && t.is_scalar()) return compare_linear(IRNodeType::LE, a, b);
    return LE::make(a, b);
}

Expr Simplify::build_eq(const Expr &a, const Expr &b) {
    if (Expr f = fold_compare(IRNodeType::EQ, a, b); f.defined()) return f;
    if (is_const(a) && !is_const(b)) return build_eq(b, a);
    Type t = a.type();
    const Broadcast *ba = a.as<Broadcast>(), *bb = b.as<Broadcast>();
    if (ba && bb) return Broadcast::make(build_eq(ba->value, bb->value), t.lanes);
    if (t.is_bool()) {
        if (is_true(b)) return a;
        if (is_false(b)) return build_not(a);
    }
    // x == x is false for a float NaN.
    if (!t.is_int_or_uint()) return EQ::make(a, b);
    if (equal(a, b)) return const_true(t.lanes);
    ConstBounds ia = bounds_of(a), ib = bounds_of(b);
    if ((ia.has_max && ib.has_min && ia.max < ib.min) ||
        (ib.has_max && ia.has_min && ib.max < ia.min)) {
        return const_false(t.lanes);
    }
    if (no_overflow(t) && t.is_scalar()) return compare_linear(IRNodeType::EQ, a, b);
    if (is_linear_type(t)) {
        // a == b exactly when a - b == 0, even where arithmetic wraps.
        LinearForm d = linear_combine(linear_form(a), linear_form(b), -1);
        if (d.terms.empty()) return d.constant == 0 ? const_true() : const_false();
    }
    if (!is_const(b) && compare_exprs(a, b) > 0) return EQ::make(b, a);
    return EQ::make(a, b);
}

Expr Simplify::build_not(const Expr &a) {
    if (auto c = const_bits(a)) return make_const(a.type(), int64_t(*c == 0));
    if (const Broadcast *b = a.as<Broadcast>()) {
        return Broadcast::make(build_not(b->value), b->lanes);
    }
    if (const Not *n = a.as<Not>()) return n->a;
    // !(a < b) is b <= a only without NaNs, so float comparisons keep their Not.
    if (const LT *lt = a.as<LT>()) {
        if (lt->a.type().is_int_or_uint()) return build_le(lt->b, lt->a);
    }
    if (const LE *le = a.as<LE>()) {
        if (le->a.type().is_int_or_uint()) return build_lt(le->b, le->a);
    }
    if (const EQ *eq = a.as<EQ>()) return NE::make(eq->a, eq->b);
    if (const NE *ne = a.as<NE>()) return EQ::make(ne->a, ne->b);
    return Not::make(a);
}

Expr Simplify::build_and(const Expr &a, const Expr &b) {
    if (is_false(a) || is_true(b)) return a;
    if (is_false(b) || is_true(a)) return b;
    if (equal(a, b)) return a;
    const Not *na = a.as<Not>(), *nb = b.as<Not>();
    if ((na && equal(na->a, b)) || (nb && equal(nb->a, a))) return const_false(a.type().lanes);
    const Broadcast *ba = a.as<Broadcast>(), *bb = b.as<Broadcast>();
    if (ba && bb) return Broadcast::make(build_and(ba->value, bb->value), ba->lanes);
    return And::make(a, b);
}

Expr Simplify::build_or(const Expr &a, const Expr &b) {
    if (is_true(a) || is_false(b)) return a;
    if (is_true(b) || is_false(a)) return b;
    if (equal(a, b)) return a;
    const Not *na = a.as<Not>(), *nb = b.as<Not>();
    if ((na && equal(na->a, b)) || (nb && equal(nb->a, a))) return const_true(a.type().lanes);
    const Broadcast *ba = a.as<Broadcast>(), *bb = b.as<Broadcast>();
    if (ba && bb) return Broadcast::make(build_or(ba->value, bb->value), ba->lanes);
    return Or::make(a, b);
}

Expr Simplify::build_select(const Expr &c, const Expr &t, const Expr &f) {
    if (is_true(c)) return t;
    if (is_false(c)) return f;
    if (equal(t, f)) return t;
    Expr cond = c;
    // A condition that is the same in every lane can be scalar.
    if (const Broadcast *b = cond.as<Broadcast>()) cond = b->value;
    if (const Not *n = cond.as<Not>()) return build_select(n->a, f, t);
    Type type = t.type();
    auto as_lanes = [&](const Expr &e) {
        return e.type().lanes == type.lanes ? e : Broadcast::make(e, type.lanes);
    };
    if (type.is_bool()) {
        if (is_true(t) && is_false(f)) return as_lanes(cond);
        if (is_false(t) && is_true(f)) return as_lanes(build_not(cond));
    }
    const Broadcast *bt = t.as<Broadcast>(), *bf = f.as<Broadcast>();
    if (bt && bf && cond.type().is_scalar()) {
        return Broadcast::make(build_select(cond, bt->value, bf->value), type.lanes);
    }
    return Select::make(cond, t, f);
}

Expr Simplify::visit(const EQ *op) {
    return build_eq(mutate(op->a), mutate(op->b));
}
Expr Simplify::visit(const NE *op) {
    return build_not(build_eq(mutate(op->a), mutate(op->b)));
}
Expr Simplify::visit(const LT *op) {
    return build_lt(mutate(op->a), mutate(op->b));
}
Expr Simplify::visit(const LE *op) {
    return build_le(mutate(op->a), mutate(op->b));
}
Expr Simplify::visit(const GT *op) {
    return build_lt(mutate(op->b), mutate(op->a));
}
Expr Simplify::visit(const GE *op) {
    return build_le(mutate(op->b), mutate(op->a));
}
Expr Simplify::visit(const And *op) {
    return build_and(mutate(op->a), mutate(op->b));
}
Expr Simplify::visit(const Or *op) {
    return build_or(mutate(op->a), mutate(op->b));
}
Expr Simplify::visit(const Not *op) {
    return build_not(mutate(op->a));
}

Expr Simplify::visit(const Select *op) {
    return build_select(mutate(op->condition), mutate(op->true_value), mutate(op->false_value));
}

} // namespace simplify_detail
} // namespace ir
} // namespace aicf
