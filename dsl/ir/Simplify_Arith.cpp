// Arithmetic rules of the simplifier: constant folding, canonical sums, division and
// remainder by constants (min and max: Simplify_MinMax.cpp; casts, accesses and calls:
// Simplify_Calls.cpp).

#include "dsl/ir/IREquality.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/SimplifyInternal.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

namespace aicf {
namespace ir {
namespace simplify_detail {

namespace {

// Folds an arithmetic operation on two integer constants of type t. Values are the constants'
// bits: sign-extended for signed types, raw for unsigned ones.
Expr fold_int(IRNodeType op, Type t, int64_t a, int64_t b) {
    uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    bool u = t.is_uint();
    switch (op) {
    case IRNodeType::Add:
        return make_const(t, wrapping(ua + ub));
    case IRNodeType::Sub:
        return make_const(t, wrapping(ua - ub));
    case IRNodeType::Mul:
        return make_const(t, wrapping(ua * ub));
    case IRNodeType::Div:
        if (u) return make_const(t, wrapping(ub == 0 ? 0 : ua / ub));
        return make_const(t, div_euclid(a, b));
    case IRNodeType::Mod:
        if (u) return make_const(t, wrapping(ub == 0 ? 0 : ua % ub));
        return make_const(t, mod_euclid(a, b));
    case IRNodeType::Min:
        return make_const(t, u ? wrapping(std::min(ua, ub)) : std::min(a, b));
    case IRNodeType::Max:
        return make_const(t, u ? wrapping(std::max(ua, ub)) : std::max(a, b));
    default:
        return Expr();
    }
}

// Rounds v to the precision of a float type.
double round_to(Type t, double v) {
    return *as_const_float(make_const(t.element_of(), v));
}

Expr fold_float(IRNodeType op, Type t, double a, double b) {
    switch (op) {
    case IRNodeType::Add:
        return make_const(t, a + b);
    case IRNodeType::Sub:
        return make_const(t, a - b);
    case IRNodeType::Mul:
        return make_const(t, a * b);
    case IRNodeType::Div:
        return make_const(t, a / b);
    case IRNodeType::Mod: {
        // x - y * floor(x / y), each step rounded as generated code rounds it: to the type,
        // or for 16-bit floats to float32, the result alone rounded to 16 bits.
        const Type step = t.bits == 16 ? Float(32) : t;
        double q = std::floor(round_to(step, a / b));
        return make_const(t, round_to(step, a - round_to(step, b * q)));
    }
    case IRNodeType::Min:
    case IRNodeType::Max:
        // Which operand wins against a NaN is up to the target; leave those alone.
        if (std::isnan(a) || std::isnan(b)) return Expr();
        // a < b ? a : b, as generated code computes it: b when they compare equal, which
        // tells -0.0 from +0.0 (std::min would give a).
        if (op == IRNodeType::Min) return make_const(t, a < b ? a : b);
        return make_const(t, a > b ? a : b);
    default:
        return Expr();
    }
}

} // namespace

Expr fold_binary(IRNodeType op, const Expr &a, const Expr &b) {
    Type t = a.type();
    if (t.is_int_or_uint()) {
        auto x = const_bits(a), y = const_bits(b);
        if (x && y) return fold_int(op, t, *x, *y);
    } else if (t.is_float()) {
        auto x = as_const_float(a), y = as_const_float(b);
        if (x && y) return fold_float(op, t, *x, *y);
    }
    return Expr();
}

std::optional<int64_t> positive_const(const Expr &e) {
    auto c = const_bits(e);
    if (!c || *c <= 0) return std::nullopt;
    return c;
}

namespace {

// The quotient when every value in b lies in one interval [k*c, k*c + c - 1].
std::optional<int64_t> common_quotient(const ConstBounds &b, int64_t c) {
    if (!b.bounded()) return std::nullopt;
    int64_t k = div_euclid(b.min, c);
    if (k != div_euclid(b.max, c)) return std::nullopt;
    return k;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// Add, Sub, Mul

namespace {

// For each term i of `l` that is +min(p0, p1) and term j that is -min(n0, n1) (or both max):
// `f(i, j, p, n, is_min)`, until it gives a result, which is returned.
template <typename F> std::optional<Expr> differences_of_min_max(const LinearForm &l, F f) {
    for (size_t i = 0; i < l.terms.size(); i++) {
        if (l.terms[i].coeff != 1 || !l.terms[i].e.type().is_scalar()) continue;
        const Min *pmin = l.terms[i].e.as<Min>();
        const Max *pmax = l.terms[i].e.as<Max>();
        if (!pmin && !pmax) continue;
        for (size_t j = 0; j < l.terms.size(); j++) {
            if (l.terms[j].coeff != -1) continue;
            const Min *nmin = l.terms[j].e.as<Min>();
            const Max *nmax = l.terms[j].e.as<Max>();
            if (!(pmin && nmin) && !(pmax && nmax)) continue;
            const Expr p[2] = {pmin ? pmin->a : pmax->a, pmin ? pmin->b : pmax->b};
            const Expr n[2] = {nmin ? nmin->a : nmax->a, nmin ? nmin->b : nmax->b};
            if (std::optional<Expr> r = f(i, j, p, n, pmin != nullptr)) return r;
        }
    }
    return std::nullopt;
}

// `l` without its terms i and j.
LinearForm without_terms(const LinearForm &l, size_t i, size_t j) {
    LinearForm rest{l.type, {}, l.constant};
    for (size_t t = 0; t < l.terms.size(); t++)
        if (t != i && t != j) rest.terms.push_back(l.terms[t]);
    return rest;
}

} // namespace

// Whether adding coeff * e to the sum `side` cancels it: against a term of the sum, or inside a
// min or max term of it (up to `depth` levels down), into which rebuild_sum moves it.
bool Simplify::cancels(const LinearForm &side, const Expr &e, int64_t coeff, int depth) {
    for (const Term &s : side.terms) {
        if (s.coeff == -coeff && equal(s.e, e)) return true;
        if (depth == 0 || (s.coeff != 1 && s.coeff != -1)) continue;
        const Min *mn = s.e.as<Min>();
        const Max *mx = s.e.as<Max>();
        if (!mn && !mx) continue;
        if (cancels(linear_form(mn ? mn->a : mx->a), e, coeff * s.coeff, depth - 1) ||
            cancels(linear_form(mn ? mn->b : mx->b), e, coeff * s.coeff, depth - 1)) {
            return true;
        }
    }
    return false;
}

Expr Simplify::rebuild_sum(const LinearForm &l) {
    if (!no_overflow(l.type)) return linear_rebuild(l);
    // k*c*(x / c) + k*(x % c) == k*x for a constant c > 0: a point split into its tile and
    // its place in the tile, put back together (a thread index fused from two loops).
    for (size_t i = 0; i < l.terms.size(); i++) {
        const Div *d = l.terms[i].e.as<Div>();
        if (!d || !d->type.is_scalar()) continue;
        auto c = positive_const(d->b);
        if (!c || l.terms[i].coeff % *c != 0) continue;
        const int64_t k = l.terms[i].coeff / *c;
        for (size_t j = 0; j < l.terms.size(); j++) {
            const Mod *m = l.terms[j].e.as<Mod>();
            if (!m || l.terms[j].coeff != k || !equal(m->a, d->a) || !equal(m->b, d->b)) continue;
            LinearForm rest = l;
            rest.terms.erase(rest.terms.begin() + std::max(i, j));
            rest.terms.erase(rest.terms.begin() + std::min(i, j));
            return rebuild_sum(linear_combine(rest, linear_form(d->a), k));
        }
    }
    // k*x - k*c*(x / c) == k*(x % c) for a constant c > 0 (division rounds down): the sum
    // loses the quotient, and interval analysis then knows the remainder lies in [0, c - 1].
    // Only when every term of x cancels, so the sum gets simpler.
    for (size_t i = 0; i < l.terms.size(); i++) {
        const Div *d = l.terms[i].e.as<Div>();
        if (!d || !d->type.is_scalar()) continue;
        auto c = positive_const(d->b);
        if (!c || l.terms[i].coeff % *c != 0) continue;
        int64_t k = -(l.terms[i].coeff / *c);
        LinearForm x = linear_form(d->a), rest = l;
        if (x.terms.empty()) continue;
        rest.terms.erase(rest.terms.begin() + i);
        LinearForm without = linear_combine(rest, x, -k);
        if (k > 0 && without.terms.size() + x.terms.size() != rest.terms.size()) continue;
        // And k*c*(x / c) == k*x - k*(x % c), when some term of x cancels: the start of a
        // region plus its extent rounded down to a multiple of c, a + ((b - a) / c) * c, is
        // b - (b - a) % c, which interval analysis bounds by b rather than by a's and b's
        // ranges apart.
        if (k < 0 && without.terms.size() >= rest.terms.size() + x.terms.size()) continue;
        without.terms.push_back({Mod::make(d->a, d->b), k});
        return rebuild_sum(linear_combine(without, LinearForm{l.type, {}, 0}, 1));
    }
    // min(a + d, b + d) - min(a, b) == d, and the same for max: a region's min taken at two
    // places that differ by d everywhere (a tile's start, and that start less the output's
    // min) cancels to d, where interval analysis would bound the two mins apart.
    if (std::optional<Expr> r = differences_of_min_max(
            l, [&](size_t i, size_t j, const Expr *p, const Expr *n, bool) -> std::optional<Expr> {
                for (int crossed = 0; crossed < 2; crossed++) {
                    LinearForm d0 = linear_combine(linear_form(p[0]), linear_form(n[crossed]), -1);
                    LinearForm d1 =
                        linear_combine(linear_form(p[1]), linear_form(n[1 - crossed]), -1);
                    if (d0.wrapped || d1.wrapped || !equal(linear_rebuild(d0), linear_rebuild(d1)))
                        continue;
                    return rebuild_sum(linear_combine(without_terms(l, i, j), d0, 1));
                }
                return std::nullopt;
            })) {
        return *r;
    }
    // min(p, q) + max(p - q, 0) == p, and max(p, q) + min(p - q, 0) == p (a term -min(d, 0)
    // counts as max(-d, 0)): the last point of a region whose min is kept at most its max,
    // min(mx, lo) + extent - 1 with the extent max(mx - lo, 0) + 1, is its max, with p and q
    // no longer bounded twice.
    for (size_t i = 0; i < l.terms.size(); i++) {
        if (l.terms[i].coeff != 1 || !l.terms[i].e.type().is_scalar()) continue;
        const Min *imin = l.terms[i].e.as<Min>();
        const Max *imax = l.terms[i].e.as<Max>();
        if (!imin && !imax) continue;
        Expr p = imin ? imin->a : imax->a, q = imin ? imin->b : imax->b;
        for (size_t j = 0; j < l.terms.size(); j++) {
            const Term &other = l.terms[j];
            if (j == i || (other.coeff != 1 && other.coeff != -1)) continue;
            const Min *jmin = other.e.as<Min>();
            const Max *jmax = other.e.as<Max>();
            if (!jmin && !jmax) continue;
            // As +op(d, 0), where op is the other of min and max than term i's.
            bool j_is_min = (jmin != nullptr) == (other.coeff == 1);
            if (j_is_min == (imin != nullptr)) continue;
            Expr a = jmin ? jmin->a : jmax->a, b = jmin ? jmin->b : jmax->b;
            if (!is_const_zero(b)) std::swap(a, b);
            if (!is_const_zero(b)) continue;
            // d == p - q (or q - p), up to simplification: d's min or max may have had
            // terms moved into it.
            Expr pq = build_sub(p, q);
            auto is_d = [&](const Expr &x) {
                return is_const_zero(other.coeff == 1 ? build_sub(a, x) : build_add(a, x));
            };
            Expr kept;
            if (is_d(pq))
                kept = p;
            else if (is_d(build_sub(make_zero(l.type), pq)))
                kept = q;
            if (!kept.defined()) continue;
            LinearForm rest{l.type, {}, l.constant};
            for (size_t t = 0; t < l.terms.size(); t++)
                if (t != i && t != j) rest.terms.push_back(l.terms[t]);
            return rebuild_sum(linear_combine(rest, linear_form(kept), 1));
        }
    }
    // min(A, B) + t == min(A + t, B + t) (and -min(A, B) + t == max(t - A, t - B)): a term
    // t of the sum that cancels inside A or B moves in, so that `min(y*6 + m + 5, e + m) - m
    // - y*6` becomes `min(5, e - y*6)` and interval analysis no longer sees y twice. Only
    // terms that cancel move (never constants), which makes the result independent of how the
    // sum was grouped.
    for (size_t i = 0; i < l.terms.size(); i++) {
        const Term &term = l.terms[i];
        if (term.coeff != 1 && term.coeff != -1) continue;
        const Min *mn = term.e.as<Min>();
        const Max *mx = term.e.as<Max>();
        if (!mn && !mx) continue;
        LinearForm la = linear_form(mn ? mn->a : mx->a), lb = linear_form(mn ? mn->b : mx->b);
        // Inside, the operands are scaled by term.coeff: t moves in as t * term.coeff.
        auto cancels_in = [&](const LinearForm &side, const Term &t) {
            return cancels(side, t.e, t.coeff * term.coeff, 4);
        };
        LinearForm moved, kept;
        moved.type = kept.type = l.type;
        kept.constant = l.constant;
        for (size_t j = 0; j < l.terms.size(); j++) {
            if (j == i) continue;
            const Term &t = l.terms[j];
            (cancels_in(la, t) || cancels_in(lb, t) ? moved : kept).terms.push_back(t);
        }
        if (moved.terms.empty()) continue;
        // rest * coeff + A, so that coeff * (A') == coeff * A + moved.
        LinearForm na = linear_combine(la, moved, term.coeff),
                   nb = linear_combine(lb, moved, term.coeff);
        // Each side is a sum again, so a term that cancels inside a min or max there moves on
        // into it: `x + min(min(e - x, 31) - 7, y)` becomes `min(min(e, x + 31) - 7, x + y)`.
        Expr inner = min_or_max(rebuild_sum(na), rebuild_sum(nb), mn != nullptr);
        LinearForm result = kept;
        result.terms.push_back({inner, term.coeff});
        return rebuild_sum(linear_combine(result, LinearForm{l.type, {}, 0}, 1));
    }
    // min(x + k, y) - min(x, y) == min(max(y - x, 0), k), and max(x + k, y) - max(x, y) ==
    // min(max(x + k - y, 0), k), for a constant k >= 0 (negated when k < 0): x and y then
    // appear once, and interval analysis bounds the difference by [0, k] rather than by their
    // ranges twice. (The extent of a region clamped at both ends has this form.)
    if (std::optional<Expr> r = differences_of_min_max(
            l,
            [&](size_t i, size_t j, const Expr *p, const Expr *n,
                bool is_min) -> std::optional<Expr> {
                for (int a = 0; a < 4; a++) {
                    const Expr &y = p[a & 1], &px = p[1 - (a & 1)];
                    const Expr &ny = n[a >> 1], &nx = n[1 - (a >> 1)];
                    if (!equal(y, ny)) continue;
                    LinearForm diff = linear_combine(linear_form(px), linear_form(nx), -1);
                    if (!diff.terms.empty() || diff.wrapped) continue;
                    int64_t k = diff.constant;
                    if (k == INT64_MIN) continue;
                    // The smaller of the two free operands, and how far the other is above it.
                    const Expr &low = k >= 0 ? nx : px, &high = k >= 0 ? px : nx;
                    int64_t gap = k >= 0 ? k : -k;
                    Expr inside = is_min ? build_sub(y, low) : build_sub(high, y);
                    Expr clamped = min_or_max(min_or_max(inside, make_zero(l.type), false),
                                              make_const(l.type, gap), true);
                    LinearForm rest = without_terms(l, i, j);
                    rest.terms.push_back({clamped, k >= 0 ? 1 : -1});
                    return rebuild_sum(linear_combine(rest, LinearForm{l.type, {}, 0}, 1));
                }
                return std::nullopt;
            })) {
        return *r;
    }
    return linear_rebuild(l);
}

namespace {

// z is 0 for integers; for floats the zero that leaves every x as it is: x + (-0.0) and
// x - (+0.0) (x + 0.0 is +0.0 at x = -0.0).
bool leaves_unchanged(const Expr &z, bool negative_zero) {
    if (auto f = as_const_float(z)) return *f == 0 && std::signbit(*f) == negative_zero;
    return is_const_zero(z);
}

} // namespace

Expr Simplify::build_add(const Expr &a, const Expr &b) {
    if (Expr f = fold_binary(IRNodeType::Add, a, b); f.defined()) return f;
    if (is_const(a) && !is_const(b)) return build_add(b, a);
    if (leaves_unchanged(b, true)) return a;
    Type t = a.type();
    const Broadcast *ba = a.as<Broadcast>(), *bb = b.as<Broadcast>();
    if (ba && bb) return Broadcast::make(build_add(ba->value, bb->value), t.lanes);
    if (t.is_int_or_uint() && t.is_vector()) {
        const Ramp *ra = a.as<Ramp>(), *rb = b.as<Ramp>();
        if (ra && bb) return make_ramp(build_add(ra->base, bb->value), ra->stride, t.lanes);
        if (ba && rb) return make_ramp(build_add(ba->value, rb->base), rb->stride, t.lanes);
        if (ra && rb) {
            return make_ramp(build_add(ra->base, rb->base), build_add(ra->stride, rb->stride),
                             t.lanes);
        }
    }
    if (is_linear_type(t)) {
        LinearForm l = linear_combine(linear_form(a), linear_form(b), 1);
        if (l.wrapped && no_overflow(t)) return Add::make(a, b);
        return rebuild_sum(l);
    }
    return Add::make(a, b);
}

Expr Simplify::build_sub(const Expr &a, const Expr &b) {
    if (Expr f = fold_binary(IRNodeType::Sub, a, b); f.defined()) return f;
    if (leaves_unchanged(b, false)) return a;
    Type t = a.type();
    if (t.is_int_or_uint() && equal(a, b)) return make_zero(t);
    const Broadcast *ba = a.as<Broadcast>(), *bb = b.as<Broadcast>();
    if (ba && bb) return Broadcast::make(build_sub(ba->value, bb->value), t.lanes);
    if (t.is_int_or_uint() && t.is_vector()) {
        const Ramp *ra = a.as<Ramp>(), *rb = b.as<Ramp>();
        if (ra && bb) return make_ramp(build_sub(ra->base, bb->value), ra->stride, t.lanes);
        if (ba && rb) {
            Expr stride = build_sub(make_zero(rb->stride.type()), rb->stride);
            return make_ramp(build_sub(ba->value, rb->base), stride, t.lanes);
        }
        if (ra && rb) {
            return make_ramp(build_sub(ra->base, rb->base), build_sub(ra->stride, rb->stride),
                             t.lanes);
        }
    }
    if (is_linear_type(t)) {
        LinearForm l = linear_combine(linear_form(a), linear_form(b), -1);
        if (l.wrapped && no_overflow(t)) return Sub::make(a, b);
        return rebuild_sum(l);
    }
    return Sub::make(a, b);
}

Expr Simplify::build_mul(const Expr &a, const Expr &b) {
    if (Expr f = fold_binary(IRNodeType::Mul, a, b); f.defined()) return f;
    if (is_const(a) && !is_const(b)) return build_mul(b, a);
    if (is_const_one(b)) return a;
    Type t = a.type();
    // x * 0 is not 0 for floats (NaN, infinities, signed zero).
    if (t.is_int_or_uint() && is_const_zero(b)) return b;
    const Broadcast *ba = a.as<Broadcast>(), *bb = b.as<Broadcast>();
    if (ba && bb) return Broadcast::make(build_mul(ba->value, bb->value), t.lanes);
    if (t.is_int_or_uint() && t.is_vector()) {
        const Ramp *ra = a.as<Ramp>(), *rb = b.as<Ramp>();
        if (ra && bb) {
            return make_ramp(build_mul(ra->base, bb->value), build_mul(ra->stride, bb->value),
                             t.lanes);
        }
        if (ba && rb) return build_mul(b, a);
    }
    if (!is_linear_type(t)) return Mul::make(a, b);
    if (auto c = const_bits(b)) {
        LinearForm l = linear_scale(linear_form(a), *c);
        if (l.wrapped && no_overflow(t)) return Mul::make(a, b);
        return linear_rebuild(l);
    }
    // A product of two non-constants: order the operands so x*y and y*x compare equal.
    if (compare_exprs(a, b) > 0) return Mul::make(b, a);
    return Mul::make(a, b);
}

// ---------------------------------------------------------------------------------------------
// Div, Mod

// For a ramp whose base is a known multiple of c plus r, with every lane r + i*stride inside
// [0, c): r. Its lanes then share one quotient by c, and their remainders are a ramp from r.
// This is how a packed layout's (x / c, x % c) of a vectorized x stays a dense access. The
// base's let variables count by their values: a tile's start, `let x.min = xo * 64 + ...`, is
// a multiple of 32 though the variable alone is not.
std::optional<int64_t> Simplify::ramp_residue_within(const Ramp *ra, int64_t c) const {
    auto stride = const_bits(ra->stride);
    if (!stride) return std::nullopt;
    LinearForm l = expand_let_terms(linear_form(ra->base));
    for (const Term &term : l.terms) {
        if (term.coeff % c != 0) return std::nullopt;
    }
    int64_t r = mod_euclid(l.constant, c);
    // |stride| * lanes is small: lanes are at most a few hundred, and a stride past c fails below.
    if (*stride <= -c || *stride >= c) return std::nullopt;
    int64_t last = r + *stride * (ra->type.lanes - 1);
    if (last < 0 || last >= c) return std::nullopt;
    return r;
}

Expr Simplify::build_div(const Expr &a, const Expr &b) {
    if (Expr f = fold_binary(IRNodeType::Div, a, b); f.defined()) return f;
    Type t = a.type();
    if (t.is_int_or_uint() && is_const_zero(b)) return make_zero(t);
    if (is_const_one(b)) return a;
    const Broadcast *ba = a.as<Broadcast>(), *bb = b.as<Broadcast>();
    if (ba && bb) return Broadcast::make(build_div(ba->value, bb->value), t.lanes);
    if (!t.is_int_or_uint()) return Div::make(a, b);
    if (t.is_int() && is_const(b, -1)) return build_sub(make_zero(t), a);
    auto c = positive_const(b);
    if (!c) return Div::make(a, b);
    if (t.is_scalar()) return div_by_const(a, *c);
    if (auto k = common_quotient(bounds_of(a), *c)) return make_const(t, *k);
    const Ramp *ra = a.as<Ramp>();
    auto stride = ra ? const_bits(ra->stride) : std::nullopt;
    if (ra && stride && no_overflow(t) && *stride % *c == 0) {
        // (base + i*s) / c == base / c + i * (s / c) when c divides s.
        Type et = t.element_of();
        return make_ramp(div_by_const(ra->base, *c), make_const(et, *stride / *c), t.lanes);
    }
    if (ra && no_overflow(t) && ramp_residue_within(ra, *c)) {
        return Broadcast::make(div_by_const(ra->base, *c), t.lanes);
    }
    return Div::make(a, b);
}

Expr Simplify::div_by_const(const Expr &a, int64_t c) {
    Type t = a.type();
    if (c == 1) return a;
    if (auto k = common_quotient(bounds_of(a), c)) return make_const(t, *k);
    if (!no_overflow(t)) {
        // Only division itself may be rearranged here: sums may have wrapped.
        const Div *inner = a.as<Div>();
        auto c1 = inner ? positive_const(inner->b) : std::nullopt;
        ConstBounds range = type_bounds(t);
        if (c1 && range.has_max && *c1 <= range.max / c) {
            return build_div(inner->a, make_const(t, *c1 * c));
        }
        return Div::make(a, make_const(t, c));
    }
    // (x*c + y) / c == x + y / c: pull out the terms that are multiples of c.
    LinearForm l = linear_form(a);
    LinearForm whole, rest;
    whole.type = rest.type = t;
    for (const Term &term : l.terms) {
        if (term.coeff % c == 0) {
            whole.terms.push_back({term.e, term.coeff / c});
        } else {
            rest.terms.push_back(term);
        }
    }
    // A constant moves out whole multiples of c toward zero, never past it: (x - 1) / 8 stays
    // as it is, since (x + 7) / 8 - 1 would overflow where x is near the type's limit (a
    // loop count of a split over an extent of 2^31 - 1).
    rest.constant = l.constant % c; // C++ rounds toward zero
    whole.constant = l.constant / c;
    Expr quotient = div_rest(rest, c);
    if (whole.terms.empty() && whole.constant == 0) return quotient;
    return build_add(linear_rebuild(whole), quotient);
}

Expr Simplify::div_rest(const LinearForm &rest, int64_t c) {
    Type t = rest.type;
    if (rest.terms.empty()) return make_const(t, div_euclid(rest.constant, c));
    if (c == 1) return linear_rebuild(rest);
    if (auto k = common_quotient(bounds_of_linear(rest), c)) return make_const(t, *k);
    // (g*x + r) / (g*d) == (x + floor(r/g)) / d for -g*d < r < g*d, where g divides every
    // coefficient.
    int64_t g = c;
    for (const Term &term : rest.terms)
        g = gcd64(g, term.coeff);
    if (g > 1) {
        LinearForm reduced = rest;
        for (Term &term : reduced.terms)
            term.coeff /= g;
        reduced.constant = div_euclid(rest.constant, g);
        return div_rest(reduced, c / g);
    }
    // (x / c1 + r) / c == (x + r*c1) / (c1*c) for positive c1.
    if (rest.terms.size() == 1 && rest.terms[0].coeff == 1) {
        const Div *inner = rest.terms[0].e.as<Div>();
        auto c1 = inner ? positive_const(inner->b) : std::nullopt;
        if (c1 && *c1 <= t.max_int() / c) {
            Expr numerator = build_add(inner->a, make_const(t, rest.constant * *c1));
            return build_div(numerator, make_const(t, *c1 * c));
        }
    }
    return Div::make(linear_rebuild(rest), make_const(t, c));
}

Expr Simplify::build_mod(const Expr &a, const Expr &b) {
    if (Expr f = fold_binary(IRNodeType::Mod, a, b); f.defined()) return f;
    Type t = a.type();
    if (t.is_int_or_uint() && (is_const_zero(b) || is_const_one(b))) return make_zero(t);
    const Broadcast *ba = a.as<Broadcast>(), *bb = b.as<Broadcast>();
    if (ba && bb) return Broadcast::make(build_mod(ba->value, bb->value), t.lanes);
    if (!t.is_int_or_uint()) return Mod::make(a, b);
    auto bits = const_bits(b);
    // The remainder takes the divisor's magnitude only: x % -c == x % c.
    if (t.is_int() && bits && *bits < 0 && *bits != INT64_MIN && t.can_represent(-*bits)) {
        return build_mod(a, make_const(t, -*bits));
    }
    auto c = positive_const(b);
    if (!c) return Mod::make(a, b);
    if (t.is_scalar()) return mod_by_const(a, *c);
    if (auto k = common_quotient(bounds_of(a), *c)) return build_sub(a, make_const(t, *k * *c));
    const Ramp *ra = a.as<Ramp>();
    auto stride = ra ? const_bits(ra->stride) : std::nullopt;
    if (ra && stride && no_overflow(t) && *stride % *c == 0) {
        return Broadcast::make(mod_by_const(ra->base, *c), t.lanes);
    }
    if (auto r = ra && no_overflow(t) ? ramp_residue_within(ra, *c) : std::nullopt) {
        return make_ramp(make_const(t.element_of(), *r), ra->stride, t.lanes);
    }
    return Mod::make(a, b);
}

Expr Simplify::mod_by_const(const Expr &a, int64_t c) {
    Type t = a.type();
    if (c == 1) return make_zero(t);
    if (!no_overflow(t)) return mod_rest(a, c);
    // (x*c + y) % c == y % c.
    LinearForm l = linear_form(a);
    LinearForm rest;
    rest.type = t;
    for (const Term &term : l.terms) {
        if (term.coeff % c != 0) rest.terms.push_back(term);
    }
    // Toward zero, as in div_by_const: (x - 1) % 3 stays, (x + 2) % 3 would overflow.
    rest.constant = l.constant % c;
    if (rest.terms.size() == l.terms.size() && rest.constant == l.constant) return mod_rest(a, c);
    return mod_rest(linear_rebuild(rest), c);
}

Expr Simplify::mod_rest(const Expr &rest, int64_t c) {
    Type t = rest.type();
    if (auto k = common_quotient(bounds_of(rest), c)) {
        return build_sub(rest, make_const(t, *k * c));
    }
    // (x % (k*c)) % c == x % c.
    if (const Mod *inner = rest.as<Mod>()) {
        auto c1 = positive_const(inner->b);
        if (c1 && *c1 % c == 0) return build_mod(inner->a, make_const(t, c));
    }
    return Mod::make(rest, make_const(t, c));
}

// ---------------------------------------------------------------------------------------------
// Visits

Expr Simplify::visit(const Add *op) {
    return build_add(mutate(op->a), mutate(op->b));
}
Expr Simplify::visit(const Sub *op) {
    return build_sub(mutate(op->a), mutate(op->b));
}
Expr Simplify::visit(const Mul *op) {
    return build_mul(mutate(op->a), mutate(op->b));
}
Expr Simplify::visit(const Div *op) {
    return build_div(mutate(op->a), mutate(op->b));
}
Expr Simplify::visit(const Mod *op) {
    return build_mod(mutate(op->a), mutate(op->b));
}

} // namespace simplify_detail
} // namespace ir
} // namespace aicf
