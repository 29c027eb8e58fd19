#include "lowering/LinearTests.h"

#include "dsl/ir/IROperator.h"
#include "dsl/ir/Substitute.h"

namespace aicf {
namespace lowering {

using namespace ir;

std::optional<Linear> linear_in(const Expr &e, const std::string &v,
                                std::vector<Linear> &partials) {
    const Type i64 = Int(64);
    if (e.type() != Int(32)) return std::nullopt;
    if (!uses_var(e, v)) return Linear{0, cast(i64, e)};
    if (const Variable *var = e.as<Variable>()) {
        if (var->name == v) return Linear{1, make_zero(i64)};
        return std::nullopt;
    }
    std::optional<Linear> result;
    if (const Add *op = e.as<Add>()) {
        auto a = linear_in(op->a, v, partials), b = linear_in(op->b, v, partials);
        int64_t coef = 0;
        if (a && b && !__builtin_add_overflow(a->coef, b->coef, &coef))
            result = Linear{coef, Add::make(a->rest, b->rest)};
    } else if (const Sub *op = e.as<Sub>()) {
        auto a = linear_in(op->a, v, partials), b = linear_in(op->b, v, partials);
        int64_t coef = 0;
        if (a && b && !__builtin_sub_overflow(a->coef, b->coef, &coef))
            result = Linear{coef, Sub::make(a->rest, b->rest)};
    } else if (const Mul *op = e.as<Mul>()) {
        std::optional<int64_t> k = as_const_int(op->b);
        Expr other = op->a;
        if (!k) {
            k = as_const_int(op->a);
            other = op->b;
        }
        std::optional<Linear> l;
        if (k) l = linear_in(other, v, partials);
        int64_t coef = 0;
        if (l && !__builtin_mul_overflow(l->coef, *k, &coef))
            result = Linear{coef, Mul::make(l->rest, make_const(i64, *k))};
    }
    if (result) partials.push_back(*result);
    return result;
}

namespace {

// e as x / c + k: x linear in v, c a positive constant, k free of v.
struct Quotient {
    Expr x;
    int64_t c = 1;
    Expr k;
};
std::optional<Quotient> quotient_in(const Expr &e, const std::string &v) {
    if (const Div *d = e.as<Div>()) {
        auto c = as_const_int(d->b);
        if (!c || *c <= 0 || e.type() != Int(32)) return std::nullopt;
        return Quotient{d->a, *c, make_zero(Int(32))};
    }
    if (const Add *op = e.as<Add>()) {
        for (const auto &[with, without] : {std::pair(op->a, op->b), std::pair(op->b, op->a)}) {
            if (uses_var(without, v)) continue;
            if (auto q = quotient_in(with, v)) {
                q->k = Add::make(q->k, without);
                return q;
            }
        }
    }
    if (const Sub *op = e.as<Sub>()) {
        if (uses_var(op->b, v)) return std::nullopt;
        if (auto q = quotient_in(op->a, v)) {
            q->k = Sub::make(q->k, op->b);
            return q;
        }
    }
    return std::nullopt;
}
} // namespace

std::optional<Linear> quotient_test(const Expr &a, const Expr &b, const std::string &v,
                                    int64_t adjust, std::vector<Linear> &partials,
                                    std::vector<Expr> &values) {
    const bool in_a = uses_var(a, v), in_b = uses_var(b, v);
    if (in_a == in_b) return std::nullopt;
    std::optional<Quotient> q = quotient_in(in_a ? a : b, v);
    if (!q) return std::nullopt;
    std::vector<Linear> unused;
    std::optional<Linear> x = linear_in(q->x, v, partials),
                          other = linear_in(in_a ? b : a, v, unused),
                          k = linear_in(q->k, v, unused);
    if (!x || !other || !k || other->coef != 0 || k->coef != 0) return std::nullopt;
    const Type i64 = Int(64);
    Expr c = make_const(i64, q->c), adj = make_const(i64, adjust), one = make_one(i64);
    Expr x_value = Add::make(
        Mul::make(cast(i64, Variable::make(Int(32), v)), make_const(i64, x->coef)), x->rest);
    values.push_back(Add::make(Div::make(x_value, c), k->rest));
    if (in_a) {
        // x / c < t with t = b - k - adjust: x - t * c < 0.
        Expr t = Sub::make(Sub::make(other->rest, k->rest), adj);
        return Linear{x->coef, Sub::make(x->rest, Mul::make(t, c))};
    }
    // x / c > t with t = a - k + adjust: x >= (t + 1) * c, so (t + 1) * c - x - 1 < 0.
    if (x->coef == INT64_MIN) return std::nullopt;
    Expr t = Add::make(Sub::make(other->rest, k->rest), adj);
    return Linear{-x->coef, Sub::make(Sub::make(Mul::make(Add::make(t, one), c), x->rest), one)};
}

} // namespace lowering
} // namespace aicf
