#include "dsl/ir/Bounds.h"

#include "dsl/ir/DifferenceOfChains.h"
#include "dsl/ir/FloatValues.h"
#include "dsl/ir/IREquality.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/SimplifyInternal.h"
#include "dsl/ir/Substitute.h"

#include <cmath>
#include <initializer_list>
#include <optional>
#include <set>
#include <type_traits>
#include <unordered_map>

namespace aicf {
namespace ir {

namespace {

using simplify_detail::ConstBounds;

// Integer types whose arithmetic wraps: their symbolic bounds cannot be added or multiplied,
// only constant bounds that provably stay in range.
bool wraps(Type t) {
    return t.is_int_or_uint() && !simplify_detail::no_overflow(t);
}

bool is_point_const(const Interval &i) {
    return i.min.defined() && i.max.defined() && is_const(i.min) && equal(i.min, i.max);
}

bool is_nonnegative_const(const Expr &e) {
    return e.defined() && is_const(e) && !is_negative_const(e);
}

// The interval's ends as constants, when every defined end is one.
std::optional<ConstBounds> as_const_bounds(const Interval &i) {
    ConstBounds b;
    if (i.min.defined()) {
        auto v = as_const_int(i.min);
        if (!v) return std::nullopt;
        b.has_min = true;
        b.min = *v;
    }
    if (i.max.defined()) {
        auto v = as_const_int(i.max);
        if (!v) return std::nullopt;
        b.has_max = true;
        b.max = *v;
    }
    return b;
}

Interval from_const(const ConstBounds &b, Type t) {
    return Interval(b.has_min ? make_const(t, b.min) : Expr(),
                    b.has_max ? make_const(t, b.max) : Expr());
}

// The largest magnitude of an integer constant in e (coefficients included).
__int128 max_abs_const(const Expr &e) {
    __int128 m = 0;
    visit_each<IntImm>(e, [&](const IntImm *i) {
        __int128 v = i->value;
        m = std::max(m, v < 0 ? -v : v);
    });
    visit_each<UIntImm>(e, [&](const UIntImm *u) { m = std::max<__int128>(m, u->value); });
    return m;
}

// Whether the constants of symbolic ends a and b can be added (or multiplied) and folded in
// type t without wrapping. Ends far from zero come from type limits, not from the program, and
// are better dropped than wrapped.
bool can_fold(const Expr &a, const Expr &b, Type t, bool product, bool subtract) {
    if (!t.is_int_or_uint()) return true;
    // A product of a signed end with a constant scales only the constant and coefficients of
    // the end's sum of terms, which is what the simplifier folds; constants inside its terms
    // (the divisor and offset of a rounded-up extent, ((e + 46340) / 46341 - 1) * 46341) stay
    // as they are.
    if (product && t.is_int() && t.is_scalar() && (is_const(a) || is_const(b))) {
        const Expr &c = is_const(b) ? b : a;
        if (auto v = as_const_int(c)) {
            simplify_detail::LinearForm l = simplify_detail::linear_scale(
                simplify_detail::linear_form(is_const(b) ? a : b), *v);
            return !l.wrapped;
        }
    }
    __int128 limit = __int128(1) << (t.bits - 1);
    __int128 x = max_abs_const(a), y = max_abs_const(b);
    if (product) return x * y < limit;
    if (x + y < limit) return true;
    // A sum folds the constants of the two sums of terms, and leaves those inside their terms
    // (a min's bound) where they are: min(i, 2^30) + min(max(2^30 - i, 0), 7), the last point
    // of a tile that a clamp to a large constant reads, folds no constant at all.
    if (!t.is_int() || !t.is_scalar()) return false;
    using namespace simplify_detail;
    const LinearForm la = linear_form(a), lb = linear_form(b);
    if (la.wrapped || lb.wrapped || linear_combine(la, lb, subtract ? -1 : 1).wrapped) return false;
    auto magnitude = [](int64_t c) { return c < 0 ? -__int128(c) : __int128(c); };
    return x + magnitude(lb.constant) < limit && y + magnitude(la.constant) < limit;
}

// A bound larger than this (as a tree) is dropped: that side of the range is then unknown.
// Without the cap, a chain of values that each use the one before twice (t = max(t * 3, t + 1),
// let-bound step by step) doubles its bound at every step. Regions of real schedules have
// needed bounds of a few thousand nodes (a softmax with fused, split and unrolled stages), so
// the cap is ten times that.
const int64_t max_bound_nodes = 20000;

Interval bool_interval(std::optional<bool> known) {
    if (!known) return Interval(const_false(), const_true());
    return Interval::single_point(*known ? const_true() : const_false());
}

class Bounds : public IRVisitor {
public:
    explicit Bounds(const Scope<Interval> &scope) : scope(scope) {}

    // Every visit sets `result` after computing its children's bounds (which overwrite it).
    Interval get(const Expr &e) {
        // An expression whose lets were substituted shares its subexpressions: a region's end
        // used by each of its consumer's tiles appears many times over, and was bounded (and
        // its bounds simplified) as many times. Outside any Let, the bounds of a node depend
        // on the node alone, so each is computed once. The memo holds the node, so its
        // address is not reused while the memo lives.
        if (let_depth == 0) {
            auto it = memo.find(e.get());
            if (it != memo.end()) return it->second.second;
        }
        result = Interval();
        e.accept(this);
        Interval r = result;
        if (r.min.defined() && tree_larger_than(r.min, max_bound_nodes)) r.min = Expr();
        if (r.max.defined() && tree_larger_than(r.max, max_bound_nodes)) r.max = Expr();
        // Every value of a narrow type lies in the type's range.
        Type t = e.type().element_of();
        if (t.is_int_or_uint() && t.bits <= 16) {
            if (!r.min.defined()) r.min = make_const(t, t.min_int());
            if (!r.max.defined()) r.max = make_const(t, t.max_int());
        }
        if (t.is_uint() && !r.min.defined()) r.min = make_zero(t);
        if (let_depth == 0) memo.emplace(e.get(), std::make_pair(e, r));
        return r;
    }

private:
    const Scope<Interval> &scope;
    Scope<Interval> lets;
    Interval result;
    int let_depth = 0;
    std::unordered_map<const IRNode *, std::pair<Expr, Interval>> memo;
    FloatFacts float_facts;

    using IRVisitor::visit;

    // The constant ends of the scope's ranges of the variables of `es`: simplifying with
    // only those never comes back here. Gathered for each expression simplified, from its
    // own variables: a region inside a chain of stages computed at one another's loops has
    // hundreds of loops and lets in scope, and copying all their constant ends for every
    // bound taken cost more than the bounds themselves.
    Scope<Interval> constant_ranges(std::initializer_list<Expr> es) const {
        Scope<Interval> constants;
        std::set<std::string> names;
        for (const Expr &e : es)
            for (const std::string &n : free_vars(e))
                names.insert(n);
        for (const std::string &n : names) {
            const Interval *i = scope.find(n);
            if (!i) continue;
            Expr lo = i->min.defined() && is_const(i->min) ? i->min : Expr();
            Expr hi = i->max.defined() && is_const(i->max) ? i->max : Expr();
            if (lo.defined() || hi.defined()) constants.push(n, Interval(lo, hi));
        }
        return constants;
    }
    Expr simp(const Expr &e) { return simplify(e, constant_ranges({e})); }

    // One end of a sum, difference or product of symbolic ends; undefined (unbounded) when an
    // operand is, or when folding could wrap.
    template <typename Node> Expr combine(const Expr &a, const Expr &b) {
        if (!a.defined() || !b.defined()) return Expr();
        if (!can_fold(a, b, a.type(), std::is_same_v<Node, Mul>, std::is_same_v<Node, Sub>))
            return Expr();
        return simp(Node::make(a, b));
    }

    Expr end_of_scope(const Expr &e, Type t) {
        if (!e.defined()) return e;
        Expr r = e.type() == t ? e : Cast::make(t, e);
        if (is_const(r) || r.as<Variable>()) return r;
        return simp(r);
    }

    // Intervals with constant (or missing) ends are combined exactly, in 128 bits, and the
    // result limited to the type: folding the ends in the type itself could wrap around.
    template <typename F>
    std::optional<Interval> constant_op(F f, const Interval &a, const Interval &b, Type t) {
        if (!t.is_int_or_uint()) return std::nullopt;
        auto ca = as_const_bounds(a), cb = as_const_bounds(b);
        if (!ca || !cb) return std::nullopt;
        ConstBounds r = f(*ca, *cb);
        ConstBounds fitted = simplify_detail::fit_to_type(r, t);
        if (!wraps(t)) {
            // Values cannot leave the type, but a missing end stays missing.
            fitted.has_min = fitted.has_min && r.has_min;
            fitted.has_max = fitted.has_max && r.has_max;
        }
        return from_const(fitted, t);
    }

    Interval type_range(Type t) { return from_const(simplify_detail::type_bounds(t), t); }

    Interval add(const Interval &a, const Interval &b, Type t) {
        if (auto r = constant_op(simplify_detail::bounds_add, a, b, t)) return *r;
        if (wraps(t)) return type_range(t);
        return Interval(combine<Add>(a.min, b.min), combine<Add>(a.max, b.max));
    }

    Interval sub(const Interval &a, const Interval &b, Type t) {
        auto f = [](const ConstBounds &x, const ConstBounds &y) {
            return simplify_detail::bounds_add(x, simplify_detail::bounds_negate(y));
        };
        if (auto r = constant_op(f, a, b, t)) return *r;
        if (wraps(t)) return type_range(t);
        return Interval(combine<Sub>(a.min, b.max), combine<Sub>(a.max, b.min));
    }

    // a * c for a constant c, with a symbolic (and not wrapping).
    Interval scale(const Interval &a, const Expr &c) {
        if (is_const_zero(c)) {
            // A float times zero is zero only where it is finite: inf * 0 is NaN.
            auto finite = [](const Expr &e) {
                const std::optional<double> v = e.defined() ? as_const_float(e) : std::nullopt;
                return v && std::isfinite(*v);
            };
            if (c.type().is_float() && !(finite(a.min) && finite(a.max))) return Interval();
            return Interval::single_point(c);
        }
        auto times = [&](const Expr &e) { return combine<Mul>(e, c); };
        if (is_negative_const(c)) return Interval(times(a.max), times(a.min));
        return Interval(times(a.min), times(a.max));
    }

    void visit(const IntImm *op) override { result = Interval::single_point(op); }
    void visit(const UIntImm *op) override { result = Interval::single_point(op); }
    void visit(const FloatImm *op) override { result = Interval::single_point(op); }

    void visit(const Variable *op) override {
        if (const Interval *i = lets.find(op->name)) {
            result = *i;
        } else if (const Interval *i = scope.find(op->name)) {
            Type t = op->type.element_of();
            result = Interval(end_of_scope(i->min, t), end_of_scope(i->max, t));
        } else if (op->type.is_scalar()) {
            result = Interval::single_point(op);
        }
    }

    void visit(const Add *op) override {
        Interval a = get(op->a), b = get(op->b);
        const Type t = op->type.element_of();
        result = add(a, b, t);
        if (t.is_int() && !wraps(t) && (!result.is_bounded() || has_quotient(op)))
            bound_quotient_difference(Expr(op), t);
    }

    void visit(const Sub *op) override {
        Interval a = get(op->a), b = get(op->b);
        const Type t = op->type.element_of();
        result = sub(a, b, t);
        // Only ends left unbounded: a symbolic end may be exact (a single point), and the
        // search is not free.
        if (t.is_int() && !wraps(t) &&
            (op->a.as<Min>() || op->a.as<Max>() || (op->a.as<Div>() && op->b.as<Div>())) &&
            (!result.min.defined() || !result.max.defined())) {
            int budget = 64;
            const DifferenceRange d = difference_of_chains(op->a, op->b, budget);
            if (d.lo && !result.min.defined()) result.min = make_const(t, *d.lo);
            if (d.hi && !result.max.defined()) result.max = make_const(t, *d.hi);
        }
        if (t.is_int() && !wraps(t) && (!result.is_bounded() || has_quotient(op)))
            bound_quotient_difference(Expr(op), t);
    }

    // Whether a sum has a quotient among its operands or theirs (where interval arithmetic
    // may leave the difference of two quotients loose: each bounded alone).
    template <typename Op> static bool has_quotient(const Op *op) {
        auto quotient_in = [](const Expr &e) {
            if (e.as<Div>()) return true;
            const Add *a = e.as<Add>();
            const Sub *s = e.as<Sub>();
            return (a && (a->a.as<Div>() || a->b.as<Div>())) ||
                   (s && (s->a.as<Div>() || s->b.as<Div>()));
        };
        return quotient_in(op->a) && quotient_in(op->b);
    }

    // e = x / d - y / d + r, for d a positive constant (a quotient by -d counts as its
    // negation) and r an integer sum without other quotients by d, is (x + r * d) / d - y / d,
    // which lies in [floor(n / d), ceil(n / d)] for n = x + r * d - y; with one quotient, x / d + r
    // is floor(n / d) and r - y / d is ceil(n / d) exactly. Fills the ends of `result` left
    // unbounded (or tightens constant ones) from the bounds of n: the size of a region read through
    // x / 2, whose start the simplifier wrote as bx * 8 + m / 2 rather than (bx * 16 + m) / 2.
    void bound_quotient_difference(const Expr &e, Type t) {
        using namespace simplify_detail;
        const LinearForm l = linear_form(e);
        if (l.wrapped) return;
        const Div *plus = nullptr, *minus = nullptr;
        int64_t d = 0;
        for (const Term &term : l.terms) {
            const Div *q = term.e.as<Div>();
            const auto divisor = q ? as_const_int(q->b) : std::nullopt;
            if (!divisor || *divisor == 0 || *divisor == INT64_MIN) continue;
            // x / -d is -(x / d) (Euclidean division).
            const int64_t by = *divisor < 0 ? -*divisor : *divisor;
            const int64_t coeff = *divisor < 0 ? -term.coeff : term.coeff;
            if ((coeff != 1 && coeff != -1) || (d != 0 && by != d)) continue;
            const Div *&slot = coeff == 1 ? plus : minus;
            if (slot) return; // two quotients by d on one side: their sum is no quotient
            slot = q;
            d = by;
        }
        if (!plus && !minus) return;
        LinearForm rest = l;
        rest.terms.clear();
        for (const Term &term : l.terms)
            if (!(plus && term.e.same_as(Expr(plus))) && !(minus && term.e.same_as(Expr(minus))))
                rest.terms.push_back(term);
        // n, with e in [floor(n / d), ceil(n / d)] (exact where one quotient is left).
        LinearForm n = linear_scale(rest, d);
        if (plus) n = linear_combine(n, linear_form(plus->a), 1);
        if (minus) n = linear_combine(n, linear_form(minus->a), -1);
        if (n.wrapped) return;
        const Interval own = result; // get() overwrites it
        const Interval i = get(simplify(linear_rebuild(n)));
        result = own;
        const auto n_lo = as_const_int(i.min), n_hi = as_const_int(i.max);
        auto floor_div = [&](int64_t v) -> std::optional<int64_t> { return div_euclid(v, d); };
        auto ceil_div = [&](int64_t v) -> std::optional<int64_t> {
            if (v == INT64_MIN) return std::nullopt;
            return -div_euclid(-v, d);
        };
        // e is floor(n / d) with x / d alone, ceil(n / d) with y / d alone, between the two
        // with both.
        std::optional<int64_t> lo, hi;
        if (n_lo) lo = plus ? floor_div(*n_lo) : ceil_div(*n_lo);
        if (n_hi) hi = minus ? ceil_div(*n_hi) : floor_div(*n_hi);
        // Each end where it is new, or tighter than a constant one.
        const auto old_lo = as_const_int(result.min), old_hi = as_const_int(result.max);
        if (lo && (!result.min.defined() || (old_lo && *lo > *old_lo)))
            result.min = make_const(t, *lo);
        if (hi && (!result.max.defined() || (old_hi && *hi < *old_hi)))
            result.max = make_const(t, *hi);
    }

    void visit(const Mul *op) override {
        Interval a = get(op->a), b = get(op->b);
        Type t = op->type.element_of();
        result = Interval();
        if (auto r = constant_op(simplify_detail::bounds_mul, a, b, t)) {
            result = *r;
        } else if (wraps(t)) {
            result = type_range(t);
        } else if (is_point_const(b)) {
            result = scale(a, b.min);
        } else if (is_point_const(a)) {
            result = scale(b, a.min);
        } else if (t.is_float()) {
            result = Interval();
        } else if (a.is_bounded() && b.is_bounded()) {
            Expr p0 = combine<Mul>(a.min, b.min), p1 = combine<Mul>(a.min, b.max);
            Expr p2 = combine<Mul>(a.max, b.min), p3 = combine<Mul>(a.max, b.max);
            if (p0.defined() && p1.defined() && p2.defined() && p3.defined()) {
                result = Interval(simp(Min::make(Min::make(p0, p1), Min::make(p2, p3))),
                                  simp(Max::make(Max::make(p0, p1), Max::make(p2, p3))));
            }
        } else if (is_nonnegative_const(a.min) && is_nonnegative_const(b.min)) {
            result = Interval(combine<Mul>(a.min, b.min), combine<Mul>(a.max, b.max));
        }
    }

    void visit(const Div *op) override {
        Interval a = get(op->a), b = get(op->b);
        Type t = op->type.element_of();
        result = Interval();
        // An integer of unknown range is still one of its type's, so over a positive constant
        // its quotient is bounded (a key's top byte as key / 2^24, a uint32 hash / 2^22).
        if (t.is_int_or_uint() && !t.is_bool() && !(t.is_uint() && t.bits == 64) &&
            !a.is_bounded() && is_point_const(b) && is_positive_const(b.min)) {
            const Interval whole = type_range(t);
            a = Interval(a.has_lower_bound() ? a.min : whole.min,
                         a.has_upper_bound() ? a.max : whole.max);
        }
        // Both sides single values (symbols, e.g. an enclosing loop's variable) and a divisor
        // of unknown sign: the quotient is a single value too.
        if (a.is_single_point() && b.is_single_point() && !is_const(b.min)) {
            result = Interval::single_point(simp(Div::make(a.min, b.min)));
            return;
        }
        if (auto r = constant_op(simplify_detail::bounds_div, a, b, t)) {
            result = *r;
            return;
        }
        if (wraps(t)) {
            result = type_range(t);
            return;
        }
        auto divide = [&](const Expr &x, const Expr &y) {
            return x.defined() ? simp(Div::make(x, y)) : Expr();
        };
        if (is_point_const(b)) {
            // Division by a constant is monotonic; x / 0 is 0 for integers.
            Expr c = b.min;
            if (t.is_int_or_uint() && is_const_zero(c)) {
                result = Interval::single_point(c);
            } else if (is_positive_const(c)) {
                result = Interval(divide(a.min, c), divide(a.max, c));
            } else if (is_negative_const(c)) {
                result = Interval(divide(a.max, c), divide(a.min, c));
            }
            return;
        }
        if (t.is_float()) return;
        auto cb = as_const_bounds(b);
        if (cb && cb->bounded() && (cb->min > 0 || cb->max < 0) && a.is_bounded()) {
            // A divisor of one sign: the extremes are at the corners.
            Expr p0 = Div::make(a.min, b.min), p1 = Div::make(a.min, b.max);
            Expr p2 = Div::make(a.max, b.min), p3 = Div::make(a.max, b.max);
            result = Interval(simp(Min::make(Min::make(p0, p1), Min::make(p2, p3))),
                              simp(Max::make(Max::make(p0, p1), Max::make(p2, p3))));
            return;
        }
        // A non-negative x over a divisor known to be at least 1: 0 <= x / d <= x.
        if (t.is_int() && a.has_lower_bound() && b.is_single_point() &&
            can_prove(GE::make(a.min, make_zero(t))) && can_prove(GE::make(b.min, make_one(t)))) {
            result = Interval(make_zero(t), a.max);
            return;
        }
        // A divisor of at least some d0 >= 1 (max(k, 1), clamp(k, 1, 100)): x / d lies between
        // x.min / d0 and x.max / d0, or 0 (x / d moves toward 0 as d grows, and rounds down).
        if (t.is_int_or_uint() && a.is_bounded() && b.has_lower_bound() &&
            can_prove(GE::make(b.min, make_one(t)))) {
            Expr zero = make_zero(t);
            result = Interval(simp(Min::make(Div::make(a.min, b.min), zero)),
                              simp(Max::make(Div::make(a.max, b.min), zero)));
            return;
        }
        // |x / d| <= |x| for any divisor, so constant bounds of x survive a symbolic d.
        auto ca = as_const_bounds(a);
        if (ca && ca->bounded()) {
            result = from_const(simplify_detail::bounds_div(*ca, ConstBounds()), t);
            return;
        }
        // So do symbolic ones: a non-negative x gives a quotient in [-x.max, x.max] (in
        // [0, x.max] when d is not negative either, x / 0 being 0), any x one in [-m, m] with
        // m = max(-x.min, x.max).
        if (t.is_int() && a.is_bounded()) {
            Expr zero = make_zero(t);
            if (can_prove(GE::make(a.min, zero))) {
                bool d_not_negative = b.has_lower_bound() && can_prove(GE::make(b.min, zero));
                result = Interval(d_not_negative ? zero : simp(Sub::make(zero, a.max)), a.max);
            } else {
                Expr m = simp(Max::make(Sub::make(zero, a.min), a.max));
                result = Interval(simp(Sub::make(zero, m)), m);
            }
        }
    }

    void visit(const Mod *op) override {
        Interval a = get(op->a), b = get(op->b);
        Type t = op->type.element_of();
        result = Interval();
        // Single values (symbols) and a divisor that is not a constant: the remainder is a
        // single value too (x % x is left to the rules below).
        if (a.is_single_point() && b.is_single_point() && !is_const(b.min) &&
            !equal(a.min, b.min)) {
            result = Interval::single_point(simp(Mod::make(a.min, b.min)));
            return;
        }
        if (t.is_float()) {
            // x - y * floor(x / y), each step rounded: in [0, y) only approximately, and far
            // from it where x is large (2.4e8 % 3 is 16). Near [0, y] where |x| <= 2^20 * y
            // (the quotient is then off by at most one, the product by y / 8).
            const std::optional<double> y =
                is_point_const(b) ? as_const_float(b.min) : std::nullopt;
            const std::optional<double> lo = a.min.defined() ? as_const_float(a.min) : std::nullopt;
            const std::optional<double> hi = a.max.defined() ? as_const_float(a.max) : std::nullopt;
            if (y && *y > 0 && lo && hi &&
                std::max(std::abs(*lo), std::abs(*hi)) <= std::ldexp(*y, 20))
                result = Interval(make_const(t, -2 * *y), make_const(t, 3 * *y));
            return;
        }
        auto ca = as_const_bounds(a), cb = as_const_bounds(b);
        ConstBounds r =
            simplify_detail::bounds_mod(ca.value_or(ConstBounds()), cb.value_or(ConstBounds()));
        result = from_const(r, t);
        auto most_negative = [&](const Expr &e) {
            std::optional<int64_t> c = as_const_int(e);
            return c && t.is_int() && *c <= t.min_int();
        };
        if (!r.has_max && ((t.is_int() && !wraps(t)) || t.is_uint()) && b.is_bounded() &&
            !most_negative(b.min) && !most_negative(b.max)) {
            // A divisor known only at run time (an image's width): the Euclidean remainder
            // lies in [0, |y| - 1], and x % 0 is 0. (Where abs wraps, only the type's range.)
            // |y| - 1 as max(max(y_max, 1) - 1, -1 - y_min), which no divisor overflows
            // (|-2^31| - 1 is 2^31 - 1; abs(-2^31) would wrap).
            Expr one = make_one(t), zero = make_zero(t);
            // A divisor from a scalar Param may be the type's most negative value, whose abs
            // wraps: |y| - 1 is then written max(y_max, 1) - 1 or -1 - y_min, whichever is
            // larger (2^31 - 1 for -2^31). Sizes and loop extents keep the form the
            // simplifier knows best.
            bool scalar_param = false;
            for (const Expr &end : {b.min, b.max}) {
                visit_each<Variable>(end, [&](const Variable *v) {
                    scalar_param = scalar_param || (v->param.defined() && !v->param.is_buffer());
                });
            }
            Expr size =
                t.is_int()
                    ? simp(Max::make(Call::make(t, Intrinsic::abs, {b.min}, Call::PureIntrinsic),
                                     Call::make(t, Intrinsic::abs, {b.max}, Call::PureIntrinsic)))
                    : b.max;
            Expr last = Sub::make(Max::make(size, one), one);
            if (t.is_int() && scalar_param) {
                last = Max::make(Sub::make(Max::make(b.max, one), one),
                                 Sub::make(make_const(t, int64_t(-1)), b.min));
            }
            result = Interval(zero, simp(last));
            if (is_nonnegative_const(a.min) && a.max.defined())
                result.max = simp(Min::make(result.max, a.max));
            return;
        }
        // x % y <= x when x >= 0.
        if (!r.has_max && is_nonnegative_const(a.min) && a.max.defined()) result.max = a.max;
    }

    void visit(const Min *op) override {
        Interval a = get(op->a), b = get(op->b);
        Expr lo = a.min.defined() && b.min.defined() ? simp(Min::make(a.min, b.min)) : Expr();
        Expr hi;
        if (a.max.defined() && b.max.defined()) {
            hi = simp(Min::make(a.max, b.max));
        } else {
            hi = a.max.defined() ? a.max : b.max;
        }
        result = Interval(lo, hi);
    }

    void visit(const Max *op) override {
        Interval a = get(op->a), b = get(op->b);
        Expr hi = a.max.defined() && b.max.defined() ? simp(Max::make(a.max, b.max)) : Expr();
        Expr lo;
        if (a.min.defined() && b.min.defined()) {
            lo = simp(Max::make(a.min, b.min));
        } else {
            lo = a.min.defined() ? a.min : b.min;
        }
        result = Interval(lo, hi);
    }

    // The branch `value` of a select tightened by what its condition says of an expression
    // e in it (select(t < 16, t + 16, t - 16): t + 16 where t <= 15): where value is e plus
    // an offset free of e's variables, and the condition bounds e above (`upper`) or below
    // by `bound`, value is bounded by bound plus the offset's range too. Signed integers of
    // 32 bits or more only (the offset arithmetic must not wrap).
    Interval tightened(const Expr &value, Interval i, const Expr &e, const Expr &bound,
                       bool upper) {
        const Type t = value.type();
        if (!t.is_scalar() || !t.is_int_or_uint() || e.type() != t || is_const(e)) return i;
        // (A value offset from e only where the offset cannot wrap; e itself in any type.)
        if (!equal(value, e) && (!t.is_int() || t.bits < 32 || wraps(t))) return i;
        const Expr offset = simp(Sub::make(value, e));
        for (const std::string &v : free_vars(e))
            if (uses_var(offset, v)) return i;
        const Interval off = get(offset), b = get(bound);
        if (upper) {
            const Expr hi = combine<Add>(b.max, off.max);
            if (hi.defined()) i.max = i.max.defined() ? simp(Min::make(i.max, hi)) : hi;
        } else {
            const Expr lo = combine<Add>(b.min, off.min);
            if (lo.defined()) i.min = i.min.defined() ? simp(Max::make(i.min, lo)) : lo;
        }
        return i;
    }

    void visit(const Select *op) override {
        Interval a = get(op->true_value), b = get(op->false_value);
        // `x < y` holds in the true branch (x <= y - 1, y >= x + 1), `x >= y` in the false one.
        const Expr &c = op->condition;
        Expr x, y; // c is x < y (strict) or x <= y
        bool strict = true;
        if (const LT *lt = c.as<LT>()) x = lt->a, y = lt->b;
        if (const LE *le = c.as<LE>()) x = le->a, y = le->b, strict = false;
        if (const GT *gt = c.as<GT>()) x = gt->b, y = gt->a;
        if (const GE *ge = c.as<GE>()) x = ge->b, y = ge->a, strict = false;
        // (In a type that wraps too: x < y leaves y - 1 and x + 1 in range, x >= y leaves
        // x - 1 and y + 1, wherever the condition holds.)
        if (x.defined() && x.type().is_scalar() && x.type().is_int_or_uint()) {
            const Expr one = make_one(x.type());
            // True: x <= y - strict and y >= x + strict; false: x >= y + !strict, y <= x - !strict.
            const Expr t_x = strict ? Sub::make(y, one) : y, t_y = strict ? Add::make(x, one) : x;
            const Expr f_x = strict ? y : Add::make(y, one), f_y = strict ? x : Sub::make(x, one);
            a = tightened(op->true_value, a, x, t_x, true);
            a = tightened(op->true_value, a, y, t_y, false);
            b = tightened(op->false_value, b, x, f_x, false);
            b = tightened(op->false_value, b, y, f_y, true);
        }
        Expr lo = a.min.defined() && b.min.defined() ? simp(Min::make(a.min, b.min)) : Expr();
        Expr hi = a.max.defined() && b.max.defined() ? simp(Max::make(a.max, b.max)) : Expr();
        result = Interval(lo, hi);
    }

    bool provable(const Expr &cond) { return is_true(simp(cond)); }

    // Whether every value of a is below (or, with strict == false, at most) every value of b.
    bool all_below(const Interval &a, const Interval &b, bool strict) {
        if (!a.max.defined() || !b.min.defined()) return false;
        return provable(strict ? LT::make(a.max, b.min) : LE::make(a.max, b.min));
    }

    std::optional<bool> less_than(const Expr &x, const Expr &y, bool strict) {
        Interval a = get(x), b = get(y);
        if (all_below(a, b, strict)) return true;
        if (all_below(b, a, !strict)) return false;
        return std::nullopt;
    }

    std::optional<bool> equal_to(const Expr &x, const Expr &y) {
        Interval a = get(x), b = get(y);
        if (all_below(a, b, true) || all_below(b, a, true)) return false;
        bool points =
            a.min.defined() && b.min.defined() && equal(a.min, a.max) && equal(b.min, b.max);
        if (points && provable(EQ::make(a.min, b.min))) return true;
        return std::nullopt;
    }

    void visit(const LT *op) override { result = bool_interval(less_than(op->a, op->b, true)); }
    void visit(const LE *op) override { result = bool_interval(less_than(op->a, op->b, false)); }
    void visit(const GT *op) override { result = bool_interval(less_than(op->b, op->a, true)); }
    void visit(const GE *op) override { result = bool_interval(less_than(op->b, op->a, false)); }
    void visit(const EQ *op) override { result = bool_interval(equal_to(op->a, op->b)); }
    void visit(const NE *op) override {
        auto r = equal_to(op->a, op->b);
        result = bool_interval(r ? std::optional<bool>(!*r) : std::nullopt);
    }

    static bool surely_true(const Interval &i) { return i.min.defined() && is_true(i.min); }
    static bool surely_false(const Interval &i) { return i.max.defined() && is_false(i.max); }

    void visit(const And *op) override {
        Interval a = get(op->a), b = get(op->b);
        if (surely_true(a) && surely_true(b)) {
            result = bool_interval(true);
        } else if (surely_false(a) || surely_false(b)) {
            result = bool_interval(false);
        } else {
            result = bool_interval(std::nullopt);
        }
    }

    void visit(const Or *op) override {
        Interval a = get(op->a), b = get(op->b);
        if (surely_true(a) || surely_true(b)) {
            result = bool_interval(true);
        } else if (surely_false(a) && surely_false(b)) {
            result = bool_interval(false);
        } else {
            result = bool_interval(std::nullopt);
        }
    }

    void visit(const Not *op) override {
        Interval a = get(op->a);
        if (surely_true(a)) {
            result = bool_interval(false);
        } else if (surely_false(a)) {
            result = bool_interval(true);
        } else {
            result = bool_interval(std::nullopt);
        }
    }

    void visit(const Cast *op) override {
        Interval a = get(op->value);
        Type to = op->type.element_of(), from = op->value.type().element_of();
        result = Interval();
        auto convert = [&](const Expr &e) { return e.defined() ? simp(Cast::make(to, e)) : e; };
        // Conversions that keep order: widening, and anything into a float.
        bool monotonic =
            to.can_represent(from) || (to.is_float() && (from.is_float() || from.is_int_or_uint()));
        if (monotonic && (!to.is_bool() || from.is_bool())) {
            result = Interval(convert(a.min), convert(a.max));
            return;
        }
        // One value, wherever the expression is evaluated (a Param's, cast<int>(scale)):
        // converted, it is still one value, whatever the conversion does to NaN or to values
        // out of range.
        if (a.is_single_point()) {
            result = Interval::single_point(convert(a.min));
            return;
        }
        // Float to integer: symbolic ends carry over where no value is NaN (see FloatFacts).
        // The code generators round the arithmetic feeding such a conversion as written, as
        // the ends are rounded (backends/llvm/CodeGen_LLVM.h).
        const bool float_to_integer = from.is_float() && to.is_int_or_uint() && !to.is_bool();
        FloatValues values;
        if (float_to_integer) {
            values = float_facts.get(op->value);
            if (std::isfinite(values.magnitude) && a.is_bounded()) {
                result = Interval(convert(a.min), convert(a.max));
                return;
            }
        }
        // An integer narrowed where every value of the interval provably fits (an int64 index
        // clamped into a buffer's range) keeps its ends.
        if (from.is_int_or_uint() && !(from.is_uint() && from.bits == 64) && to.is_int_or_uint() &&
            !to.is_bool() && a.is_bounded()) {
            simplify_detail::Simplify constant_ends(constant_ranges({a.min, a.max}));
            const ConstBounds lo = constant_ends.bounds_of(a.min),
                              hi = constant_ends.bounds_of(a.max);
            if (lo.has_min && to.can_represent(lo.min) && hi.has_max && to.can_represent(hi.max)) {
                result = Interval(convert(a.min), convert(a.max));
                return;
            }
        }
        // Otherwise constant ends that the target holds pass through (integer conversion
        // keeps them, float truncation is monotonic); anything else gets the target's range.
        auto fits = [&](const Expr &e) {
            if (auto i = as_const_int(e)) return to.can_represent(*i);
            if (auto f = as_const_float(e)) {
                return !to.is_bool() && std::isfinite(*f) && std::fabs(*f) < 9e18 &&
                       to.can_represent(static_cast<int64_t>(std::trunc(*f)));
            }
            return false;
        };
        if (a.is_bounded() && fits(a.min) && fits(a.max)) {
            result = Interval(convert(a.min), convert(a.max));
            if (!float_to_integer) return;
            // A float that may be NaN converts to 0 too.
            std::optional<int64_t> first = as_const_int(result.min),
                                   last = as_const_int(result.max);
            if (!first || !last) return;
            result = Interval(make_const(to, std::min<int64_t>(*first, 0)),
                              make_const(to, std::max<int64_t>(*last, 0)));
        }
    }

    void visit(const Call *op) override {
        Type t = op->type.element_of();
        if (op->call_type == Call::Func) {
            if (const FuncValueRanges::Ranges *ranges = FuncValueRanges::current()) {
                auto it = ranges->find({op->name, op->value_index});
                if (it != ranges->end()) result = it->second;
            }
            return;
        }
        if (op->call_type != Call::PureIntrinsic || op->args.empty()) return;
        const Expr &arg = op->args[0];
        switch (op->intrinsic) {
        case Intrinsic::abs:
            result = abs_bounds(get(arg), arg.type().element_of(), t);
            return;
        case Intrinsic::likely:
            result = get(arg);
            return;
        case Intrinsic::fused_extent_bound:
            // As the extent it stands for until it is known (bound_fused_thread_loops): the
            // clamps of the fused loop's parts keep them in the extent either way.
            result = get(arg);
            return;
        case Intrinsic::floor:
        case Intrinsic::ceil:
        case Intrinsic::round:
        case Intrinsic::trunc: {
            // Monotonic roundings: round each end.
            Interval a = get(arg);
            auto apply = [&](const Expr &e) {
                return e.defined() ? simp(Call::make(t, op->intrinsic, {e})) : e;
            };
            result = Interval(apply(a.min), apply(a.max));
            return;
        }
        case Intrinsic::tanh:
        case Intrinsic::erf:
        case Intrinsic::sin:
        case Intrinsic::cos:
            result = Interval(make_const(t, -1.0), make_const(t, 1.0));
            return;
        case Intrinsic::shift_right:
        case Intrinsic::shift_left: {
            if (op->args.size() != 2 || !t.is_int_or_uint()) return;
            Expr amount = op->args[1];
            if (const Broadcast *b = amount.as<Broadcast>()) amount = b->value;
            std::optional<int64_t> c = as_const_int(amount);
            if (!c) {
                if (auto u = as_const_uint(amount); u && *u < 64) c = int64_t(*u);
            }
            // By a constant less than the bits that hold the value: a division (rounding
            // down, as an arithmetic shift does) or a multiplication by a power of two.
            const bool divides = c && *c >= 0 && *c < int(t.bits) - (t.is_int() ? 1 : 0);
            if (divides) {
                Expr p = make_const(arg.type(), int64_t(1) << *c);
                result = get(op->intrinsic == Intrinsic::shift_right ? Div::make(arg, p)
                                                                     : Mul::make(arg, p));
                if (op->intrinsic == Intrinsic::shift_left) return;
            }
            if (c && op->intrinsic == Intrinsic::shift_right && t.bits <= 64) {
                // Right, whatever the value: the type's range shifted (int32 >> 24 lies in
                // [-128, 127], int32 >> 31 in [-1, 0]), though int32 arithmetic is otherwise
                // taken as unbounded. An amount outside [0, bits - 1] leaves the sign: -1 or
                // 0, and 0 of an unsigned value.
                const bool in_range = *c >= 0 && *c < int(t.bits);
                const int64_t lo = t.is_int() ? (in_range ? t.min_int() >> *c : -1) : 0;
                const int64_t hi = t.is_int() ? (in_range ? t.max_int() >> *c : 0)
                                   : in_range ? int64_t(t.max_uint() >> *c)
                                              : 0;
                auto tighter = [&](const Expr &e, int64_t end, bool upper) {
                    if (!e.defined()) return make_const(t, end);
                    if (t.is_uint()) {
                        std::optional<uint64_t> k = as_const_uint(e);
                        if (!k) return e;
                        const uint64_t u = uint64_t(end);
                        return make_const(t, int64_t(upper ? std::min(*k, u) : std::max(*k, u)));
                    }
                    std::optional<int64_t> k = as_const_int(e);
                    if (!k) return e;
                    return make_const(t, upper ? std::min(*k, end) : std::max(*k, end));
                };
                if (!divides) result = Interval();
                result = Interval(tighter(result.min, lo, false), tighter(result.max, hi, true));
                return;
            }
            // Right by any amount of at least 0: toward 0 from a non-negative value, toward
            // -1 from a negative one.
            Interval by = get(op->args[1]);
            if (op->intrinsic == Intrinsic::shift_left || !is_nonnegative_const(by.min)) {
                result = Interval(); // only the type's range (get() applies it)
                return;
            }
            Interval a = get(arg);
            Expr zero = make_zero(t), minus_one = t.is_int() ? make_const(t, int64_t(-1)) : zero;
            result = Interval(a.min.defined() ? simp(Min::make(a.min, zero)) : Expr(),
                              a.max.defined() ? simp(Max::make(a.max, minus_one)) : Expr());
            return;
        }
        case Intrinsic::bitwise_and:
            // x & m lies in [0, m] for a mask m >= 0.
            for (const Expr &e : op->args) {
                if (t.is_int_or_uint() && is_nonnegative_const(e)) {
                    result = Interval(make_zero(t), e);
                    return;
                }
            }
            return;
        default:
            return;
        }
    }

    Interval abs_bounds(const Interval &a, Type from, Type to) {
        auto convert = [&](const Expr &e) {
            return !e.defined() || from == to ? e : simp(Cast::make(to, e));
        };
        auto negate = [&](const Expr &e) { return combine<Sub>(make_zero(from), e); };
        if (is_nonnegative_const(a.min)) return Interval(convert(a.min), convert(a.max));
        if (from.is_int()) {
            // abs of the most negative value of a signed type is that value (int8 -128, int32
            // -2^31): unless the operand stays above it, only the type's range holds, so that
            // clamp(abs(v), 0, n) of data keeps its lower end. (A symbolic end of a type taken
            // not to overflow, a loop's or a size's, stays above it.)
            std::optional<int64_t> lo = a.min.defined() ? as_const_int(a.min) : std::nullopt;
            if (lo ? *lo <= from.min_int() : (wraps(from) || !a.min.defined())) return Interval();
        }
        if (a.max.defined() && is_const(a.max) && !is_positive_const(a.max)) {
            return Interval(convert(negate(a.max)), convert(negate(a.min)));
        }
        Expr neg_min = negate(a.min);
        if (neg_min.defined() && a.max.defined()) {
            return Interval(make_zero(to), convert(simp(Max::make(neg_min, a.max))));
        }
        return Interval(make_zero(to), Expr());
    }

    void visit(const Ramp *op) override {
        Interval base = get(op->base), stride = get(op->stride);
        Type t = op->base.type();
        Expr lanes = make_const(t, int64_t(op->lanes - 1));
        Interval last;
        if (auto r = constant_op(simplify_detail::bounds_mul, stride, Interval::single_point(lanes),
                                 t)) {
            last = *r;
        } else if (wraps(t)) {
            last = type_range(t);
        } else {
            last = scale(stride, lanes);
        }
        // The lane offsets i * stride for i in [0, lanes - 1] lie between 0 and the last one.
        Expr zero = make_zero(t);
        Interval offsets(last.min.defined() ? simp(Min::make(zero, last.min)) : Expr(),
                         last.max.defined() ? simp(Max::make(zero, last.max)) : Expr());
        result = add(base, offsets, t);
    }

    void visit(const Broadcast *op) override { result = get(op->value); }

    void visit(const Let *op) override {
        Interval value = get(op->value);
        lets.push(op->name, value);
        float_facts.push_let(op->name, op->value);
        let_depth++;
        result = get(op->body);
        let_depth--;
        float_facts.pop_let(op->value);
        lets.pop(op->name);
    }

    // Nothing is known about these beyond their type (applied in get()).
    void visit(const StringImm *) override { result = Interval(); }
    void visit(const Reinterpret *) override { result = Interval(); }
    void visit(const Load *) override { result = Interval(); }
};

thread_local const FuncValueRanges *innermost_ranges = nullptr;

} // namespace

FuncValueRanges::FuncValueRanges(Ranges ranges)
    : ranges(std::move(ranges)), outer(innermost_ranges) {
    innermost_ranges = this;
}

FuncValueRanges::~FuncValueRanges() {
    innermost_ranges = outer;
}

const FuncValueRanges::Ranges *FuncValueRanges::current() {
    return innermost_ranges ? &innermost_ranges->ranges : nullptr;
}

Interval bounds_of_expr_in_scope(const Expr &e, const Scope<Interval> &scope) {
    if (!e.defined()) return Interval();
    return Bounds(scope).get(e);
}

} // namespace ir
} // namespace aicf
