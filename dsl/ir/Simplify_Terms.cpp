// The simplifier's arithmetic on terms: constant bounds of expressions (ends combined in 128
// bits), constants and the canonical order of terms, and linear forms (sums of terms with
// integer coefficients) that the rewrite rules normalize through.

#include "dsl/ir/IREquality.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/SimplifyInternal.h"

#include <algorithm>
#include <cstring>

namespace aicf {
namespace ir {
namespace simplify_detail {

// ---------------------------------------------------------------------------------------------
// Constant bounds. Ends are combined in 128 bits; an end that leaves int64 becomes unbounded.

namespace {

bool fits(i128 v) {
    return v >= INT64_MIN && v <= INT64_MAX;
}

} // namespace

ConstBounds make_bounds(bool has_lo, i128 lo, bool has_hi, i128 hi) {
    ConstBounds r;
    r.has_min = has_lo && fits(lo);
    r.has_max = has_hi && fits(hi);
    r.min = r.has_min ? static_cast<int64_t>(lo) : 0;
    r.max = r.has_max ? static_cast<int64_t>(hi) : 0;
    return r;
}

ConstBounds bounds_add(const ConstBounds &a, const ConstBounds &b) {
    return make_bounds(a.has_min && b.has_min, i128(a.min) + b.min, a.has_max && b.has_max,
                       i128(a.max) + b.max);
}

ConstBounds bounds_negate(const ConstBounds &a) {
    return make_bounds(a.has_max, -i128(a.max), a.has_min, -i128(a.min));
}

ConstBounds bounds_mul(const ConstBounds &a, const ConstBounds &b) {
    if (a.is_point() && a.min == 0) return a;
    if (b.is_point() && b.min == 0) return b;
    if (b.is_point()) {
        i128 c = b.min;
        if (c > 0) return make_bounds(a.has_min, a.min * c, a.has_max, a.max * c);
        return make_bounds(a.has_max, a.max * c, a.has_min, a.min * c);
    }
    if (a.is_point()) return bounds_mul(b, a);
    if (a.bounded() && b.bounded()) {
        i128 p[4] = {i128(a.min) * b.min, i128(a.min) * b.max, i128(a.max) * b.min,
                     i128(a.max) * b.max};
        return make_bounds(true, *std::min_element(p, p + 4), true, *std::max_element(p, p + 4));
    }
    if (a.has_min && a.min >= 0 && b.has_min && b.min >= 0) {
        return make_bounds(true, i128(a.min) * b.min, a.has_max && b.has_max, i128(a.max) * b.max);
    }
    return ConstBounds();
}

ConstBounds bounds_div(const ConstBounds &a, const ConstBounds &b) {
    if (b.is_point()) {
        int64_t c = b.min;
        if (c == 0) return ConstBounds::point(0);
        // Euclidean division by a constant is monotonic: increasing for c > 0.
        if (c > 0) {
            return make_bounds(a.has_min, div_euclid(a.min, c), a.has_max, div_euclid(a.max, c));
        }
        return make_bounds(a.has_max, div_euclid(a.max, c), a.has_min, div_euclid(a.min, c));
    }
    if (!a.bounded()) return ConstBounds();
    if (b.bounded() && (b.min > 0 || b.max < 0)) {
        int64_t p[4] = {div_euclid(a.min, b.min), div_euclid(a.min, b.max),
                        div_euclid(a.max, b.min), div_euclid(a.max, b.max)};
        return ConstBounds::range(*std::min_element(p, p + 4), *std::max_element(p, p + 4));
    }
    // |a / b| <= |a| for every b (x / 0 is 0).
    i128 m = std::max(-i128(a.min), i128(a.max));
    m = std::max<i128>(m, 0);
    if (a.min >= 0 && b.has_min && b.min >= 0) return make_bounds(true, 0, true, a.max);
    return make_bounds(true, -m, true, m);
}

ConstBounds bounds_mod(const ConstBounds &a, const ConstBounds &b) {
    // Euclidean: 0 <= a % b < |b|, and a % 0 == 0.
    ConstBounds r;
    r.has_min = true;
    r.min = 0;
    if (b.bounded()) {
        i128 m = std::max(-i128(b.min), i128(b.max));
        r = make_bounds(true, 0, true, std::max<i128>(m - 1, 0));
    }
    if (b.is_point() && b.min != 0 && a.bounded()) {
        int64_t c = b.min < 0 ? -b.min : b.min;
        int64_t k = div_euclid(a.min, c);
        if (k == div_euclid(a.max, c)) {
            return ConstBounds::range(a.min - k * c, a.max - k * c);
        }
    }
    if (a.has_min && a.min >= 0 && a.has_max && (!r.has_max || a.max < r.max)) {
        r.has_max = true;
        r.max = a.max;
    }
    return r;
}

ConstBounds bounds_min(const ConstBounds &a, const ConstBounds &b) {
    ConstBounds r;
    r.has_min = a.has_min && b.has_min;
    r.min = r.has_min ? std::min(a.min, b.min) : 0;
    r.has_max = a.has_max || b.has_max;
    if (a.has_max && b.has_max) {
        r.max = std::min(a.max, b.max);
    } else {
        r.max = a.has_max ? a.max : b.max;
    }
    return r;
}

ConstBounds bounds_max(const ConstBounds &a, const ConstBounds &b) {
    return bounds_negate(bounds_min(bounds_negate(a), bounds_negate(b)));
}

ConstBounds bounds_union(const ConstBounds &a, const ConstBounds &b) {
    ConstBounds r;
    r.has_min = a.has_min && b.has_min;
    r.min = r.has_min ? std::min(a.min, b.min) : 0;
    r.has_max = a.has_max && b.has_max;
    r.max = r.has_max ? std::max(a.max, b.max) : 0;
    return r;
}

ConstBounds type_bounds(Type t) {
    if (t.is_bool()) return ConstBounds::range(0, 1);
    if (t.is_int()) {
        if (t.bits >= 64) return ConstBounds();
        return ConstBounds::range(t.min_int(), t.max_int());
    }
    if (t.is_uint()) {
        ConstBounds b;
        b.has_min = true;
        b.min = 0;
        if (t.bits < 64) {
            b.has_max = true;
            b.max = t.max_int();
        }
        return b;
    }
    return ConstBounds();
}

ConstBounds fit_to_type(const ConstBounds &b, Type t) {
    ConstBounds range = type_bounds(t);
    if (no_overflow(t)) {
        ConstBounds r = b;
        if (range.has_min && (!r.has_min || r.min < range.min)) {
            r.has_min = true;
            r.min = range.min;
        }
        if (range.has_max && (!r.has_max || r.max > range.max)) {
            r.has_max = true;
            r.max = range.max;
        }
        return r;
    }
    // uint64's range has no upper end here, but its values still wrap past 2^64 - 1: an
    // unbounded maximum (x + 1 with x anything) may have wrapped to 0.
    bool inside = (!range.has_min || (b.has_min && b.min >= range.min)) &&
                  (!range.has_max || (b.has_max && b.max <= range.max)) &&
                  (range.has_max || b.has_max);
    return inside ? b : range;
}

// ---------------------------------------------------------------------------------------------
// Constants, coefficients and the order of terms.

std::optional<int64_t> const_bits(const Expr &e) {
    if (!e.defined()) return std::nullopt;
    if (const Broadcast *b = e.as<Broadcast>()) return const_bits(b->value);
    if (const IntImm *i = e.as<IntImm>()) return i->value;
    if (const UIntImm *u = e.as<UIntImm>()) return static_cast<int64_t>(u->value);
    return std::nullopt;
}

int64_t wrap_to_type(Type t, int64_t v) {
    if (t.bits >= 64) return v;
    uint64_t mask = (uint64_t(1) << t.bits) - 1;
    uint64_t u = static_cast<uint64_t>(v) & mask;
    if (u >> (t.bits - 1)) u |= ~mask;
    return static_cast<int64_t>(u);
}

int64_t gcd64(int64_t a, int64_t b) {
    uint64_t x = a < 0 ? 0 - uint64_t(a) : uint64_t(a);
    uint64_t y = b < 0 ? 0 - uint64_t(b) : uint64_t(b);
    while (y) {
        uint64_t r = x % y;
        x = y;
        y = r;
    }
    return static_cast<int64_t>(x);
}

namespace {

template <typename T> int three_way(const T &a, const T &b) {
    return a < b ? -1 : (b < a ? 1 : 0);
}

int compare_types(Type a, Type b) {
    if (int c = three_way(int(a.code), int(b.code))) return c;
    if (int c = three_way(int(a.bits), int(b.bits))) return c;
    return three_way(int(a.lanes), int(b.lanes));
}

int compare_ptrs(const void *a, const void *b) {
    std::less<const void *> lt;
    return lt(a, b) ? -1 : (lt(b, a) ? 1 : 0);
}

int compare_lists(const std::vector<Expr> &a, const std::vector<Expr> &b) {
    if (int c = three_way(a.size(), b.size())) return c;
    for (size_t i = 0; i < a.size(); i++)
        if (int c = compare_exprs(a[i], b[i])) return c;
    return 0;
}

template <typename N> int compare_binary(const Expr &a, const Expr &b) {
    const N *x = a.as<N>(), *y = b.as<N>();
    if (int c = compare_exprs(x->a, y->a)) return c;
    return compare_exprs(x->b, y->b);
}

} // namespace

int compare_exprs(const Expr &a, const Expr &b) {
    if (a.same_as(b)) return 0;
    if (!a.defined() || !b.defined()) return a.defined() ? 1 : -1;
    if (int c = three_way(int(a.node_type()), int(b.node_type()))) return c;
    if (int c = compare_types(a.type(), b.type())) return c;
    switch (a.node_type()) {
    case IRNodeType::IntImm:
        return three_way(a.as<IntImm>()->value, b.as<IntImm>()->value);
    case IRNodeType::UIntImm:
        return three_way(a.as<UIntImm>()->value, b.as<UIntImm>()->value);
    case IRNodeType::FloatImm: {
        double x = a.as<FloatImm>()->value, y = b.as<FloatImm>()->value;
        uint64_t bx, by;
        std::memcpy(&bx, &x, sizeof(x));
        std::memcpy(&by, &y, sizeof(y));
        return three_way(bx, by);
    }
    case IRNodeType::StringImm:
        return three_way(a.as<StringImm>()->value, b.as<StringImm>()->value);
    case IRNodeType::Cast:
        return compare_exprs(a.as<Cast>()->value, b.as<Cast>()->value);
    case IRNodeType::Reinterpret:
        return compare_exprs(a.as<Reinterpret>()->value, b.as<Reinterpret>()->value);
    case IRNodeType::Variable: {
        const Variable *x = a.as<Variable>(), *y = b.as<Variable>();
        if (int c = three_way(x->name, y->name)) return c;
        if (int c = compare_ptrs(x->param.get(), y->param.get())) return c;
        return compare_ptrs(x->rdom.get(), y->rdom.get());
    }
#define AICF_COMPARE_BINARY(N)                                                                     \
    case IRNodeType::N:                                                                            \
        return compare_binary<N>(a, b);
        AICF_COMPARE_BINARY(Add)
        AICF_COMPARE_BINARY(Sub)
        AICF_COMPARE_BINARY(Mul)
        AICF_COMPARE_BINARY(Div)
        AICF_COMPARE_BINARY(Mod)
        AICF_COMPARE_BINARY(Min)
        AICF_COMPARE_BINARY(Max)
        AICF_COMPARE_BINARY(EQ)
        AICF_COMPARE_BINARY(NE)
        AICF_COMPARE_BINARY(LT)
        AICF_COMPARE_BINARY(LE)
        AICF_COMPARE_BINARY(GT)
        AICF_COMPARE_BINARY(GE)
        AICF_COMPARE_BINARY(And)
        AICF_COMPARE_BINARY(Or)
#undef AICF_COMPARE_BINARY
    case IRNodeType::Not:
        return compare_exprs(a.as<Not>()->a, b.as<Not>()->a);
    case IRNodeType::Select: {
        const Select *x = a.as<Select>(), *y = b.as<Select>();
        if (int c = compare_exprs(x->condition, y->condition)) return c;
        if (int c = compare_exprs(x->true_value, y->true_value)) return c;
        return compare_exprs(x->false_value, y->false_value);
    }
    case IRNodeType::Load: {
        const Load *x = a.as<Load>(), *y = b.as<Load>();
        if (int c = three_way(x->name, y->name)) return c;
        if (int c = compare_exprs(x->index, y->index)) return c;
        return compare_exprs(x->predicate, y->predicate);
    }
    case IRNodeType::Ramp: {
        const Ramp *x = a.as<Ramp>(), *y = b.as<Ramp>();
        if (int c = compare_exprs(x->base, y->base)) return c;
        return compare_exprs(x->stride, y->stride);
    }
    case IRNodeType::Broadcast:
        return compare_exprs(a.as<Broadcast>()->value, b.as<Broadcast>()->value);
    case IRNodeType::Call: {
        const Call *x = a.as<Call>(), *y = b.as<Call>();
        if (int c = three_way(x->name, y->name)) return c;
        if (int c = three_way(int(x->call_type), int(y->call_type))) return c;
        if (int c = three_way(int(x->intrinsic), int(y->intrinsic))) return c;
        if (int c = compare_ptrs(x->func.get(), y->func.get())) return c;
        if (int c = three_way(x->value_index, y->value_index)) return c;
        if (int c = compare_ptrs(x->param.get(), y->param.get())) return c;
        return compare_lists(x->args, y->args);
    }
    case IRNodeType::Let: {
        const Let *x = a.as<Let>(), *y = b.as<Let>();
        if (int c = three_way(x->name, y->name)) return c;
        if (int c = compare_exprs(x->value, y->value)) return c;
        return compare_exprs(x->body, y->body);
    }
    default:
        return 0;
    }
}

// ---------------------------------------------------------------------------------------------
// Linear forms. Coefficients live in the ring of the type (mod 2^bits), so the canonical form
// is exact for wrapping types too.

namespace {

// Products and sums modulo 2^64; `wrapped` is set when the int64 result is not the exact one.
int64_t wrapping_mul(int64_t a, int64_t b, bool &wrapped) {
    int64_t r;
    wrapped |= __builtin_mul_overflow(a, b, &r);
    return r;
}

int64_t wrapping_add(int64_t a, int64_t b, bool &wrapped) {
    int64_t r;
    wrapped |= __builtin_add_overflow(a, b, &r);
    return r;
}

// The sums, differences and products by constants that linear_form looks through, at most:
// deeper than that, what is left is one term. The simplifier takes the linear form of each sum
// it builds, so a chain of n sums that never folds (e = e * 3 + i, whose coefficients leave
// the type's range) would otherwise cost n^2.
constexpr int kDecomposeNodes = 256;

void decompose(const Expr &e, int64_t scale, LinearForm &out, int &budget) {
    if (auto c = const_bits(e)) {
        out.constant =
            wrapping_add(out.constant, wrapping_mul(*c, scale, out.wrapped), out.wrapped);
        return;
    }
    if (budget-- > 0) {
        if (const Add *add = e.as<Add>()) {
            decompose(add->a, scale, out, budget);
            decompose(add->b, scale, out, budget);
            return;
        }
        if (const Sub *sub = e.as<Sub>()) {
            decompose(sub->a, scale, out, budget);
            decompose(sub->b, wrapping_mul(scale, -1, out.wrapped), out, budget);
            return;
        }
        if (const Mul *mul = e.as<Mul>()) {
            if (auto c = const_bits(mul->b)) {
                decompose(mul->a, wrapping_mul(scale, *c, out.wrapped), out, budget);
                return;
            }
            if (auto c = const_bits(mul->a)) {
                decompose(mul->b, wrapping_mul(scale, *c, out.wrapped), out, budget);
                return;
            }
        }
    }
    out.terms.push_back({e, scale});
}

// Sorts the terms, merges equal ones and drops zero coefficients.
void normalize(LinearForm &l) {
    auto reduce = [&](int64_t v) {
        int64_t r = wrap_to_type(l.type, v);
        l.wrapped |= r != v;
        return r;
    };
    l.constant = reduce(l.constant);
    std::stable_sort(l.terms.begin(), l.terms.end(),
                     [](const Term &x, const Term &y) { return compare_exprs(x.e, y.e) < 0; });
    std::vector<Term> merged;
    merged.reserve(l.terms.size());
    for (Term &t : l.terms) {
        if (!merged.empty() && compare_exprs(merged.back().e, t.e) == 0) {
            merged.back().coeff = wrapping_add(merged.back().coeff, t.coeff, l.wrapped);
        } else {
            merged.push_back(std::move(t));
        }
    }
    l.terms.clear();
    for (Term &t : merged) {
        t.coeff = reduce(t.coeff);
        if (t.coeff != 0) l.terms.push_back(std::move(t));
    }
}

Expr scaled_term(const Term &t, int64_t coeff, Type type) {
    if (coeff == 1) return t.e;
    return Mul::make(t.e, make_const(type, coeff));
}

} // namespace

LinearForm linear_form(const Expr &e) {
    LinearForm l;
    l.type = e.type();
    int budget = kDecomposeNodes;
    decompose(e, 1, l, budget);
    normalize(l);
    return l;
}

LinearForm linear_combine(const LinearForm &a, const LinearForm &b, int64_t scale) {
    LinearForm l = a;
    l.wrapped |= b.wrapped;
    for (const Term &t : b.terms)
        l.terms.push_back({t.e, wrapping_mul(t.coeff, scale, l.wrapped)});
    l.constant = wrapping_add(l.constant, wrapping_mul(b.constant, scale, l.wrapped), l.wrapped);
    normalize(l);
    return l;
}

LinearForm linear_scale(const LinearForm &a, int64_t scale) {
    LinearForm zero;
    zero.type = a.type;
    return linear_combine(zero, a, scale);
}

Expr linear_rebuild(const LinearForm &l) {
    Type t = l.type;
    Expr result;
    for (const Term &term : l.terms) {
        if (term.coeff <= 0) continue;
        Expr e = scaled_term(term, term.coeff, t);
        result = result.defined() ? Add::make(result, e) : e;
    }
    int64_t constant = l.constant;
    bool has_negative = false;
    for (const Term &term : l.terms)
        has_negative = has_negative || term.coeff < 0;
    if (!result.defined() && has_negative) {
        // Only subtracted terms: start from the constant (`3 - x`), or from zero.
        result = make_const(t, constant);
        constant = 0;
    }
    // A negative value is subtracted as its magnitude, where the type holds that: the
    // magnitude of a signed type's smallest value (x * INT_MIN, x + INT_MIN) does not fit,
    // and subtracting it would overflow where the sum does not.
    auto negatable = [&](int64_t v) {
        return v != INT64_MIN && (!t.is_int() || t.can_represent(-v));
    };
    for (const Term &term : l.terms) {
        if (term.coeff >= 0) continue;
        if (!negatable(term.coeff)) {
            result = Add::make(result, scaled_term(term, term.coeff, t));
            continue;
        }
        int64_t magnitude = static_cast<int64_t>(0 - static_cast<uint64_t>(term.coeff));
        result = Sub::make(result, scaled_term(term, magnitude, t));
    }
    if (!result.defined()) return make_const(t, constant);
    if (constant > 0 || (constant < 0 && !negatable(constant)))
        return Add::make(result, make_const(t, constant));
    if (constant < 0) {
        return Sub::make(result,
                         make_const(t, static_cast<int64_t>(0 - static_cast<uint64_t>(constant))));
    }
    return result;
}

bool has_side_effects(const Expr &e) {
    bool found = false;
    visit_each_distinct<Call>(e, [&](const Call *c) { found = found || !c->is_pure(); });
    return found;
}

} // namespace simplify_detail
} // namespace ir
} // namespace aicf
