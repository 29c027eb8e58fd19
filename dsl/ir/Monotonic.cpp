#include "dsl/ir/Monotonic.h"

#include "dsl/ir/IROperator.h"
#include "dsl/ir/Substitute.h"

namespace aicf {
namespace ir {

namespace {

Monotonic flip(Monotonic m) {
    if (m == Monotonic::Increasing) return Monotonic::Decreasing;
    if (m == Monotonic::Decreasing) return Monotonic::Increasing;
    return m;
}

Monotonic combine(Monotonic a, Monotonic b) {
    if (a == Monotonic::Constant) return b;
    if (b == Monotonic::Constant || a == b) return a;
    return Monotonic::Unknown;
}

Monotonic scaled(Monotonic m, const Expr &factor) {
    auto c = as_const_int(factor);
    if (!c) return Monotonic::Unknown;
    if (*c == 0) return Monotonic::Constant;
    return *c > 0 ? m : flip(m);
}

} // namespace

Monotonic is_monotonic(const Expr &e, const std::string &var) {
    if (!e.defined() || !uses_var(e, var)) return Monotonic::Constant;
    if (!e.type().is_int() || !e.type().is_scalar()) return Monotonic::Unknown;
    if (const Variable *v = e.as<Variable>())
        return v->name == var ? Monotonic::Increasing : Monotonic::Constant;
    if (const Add *op = e.as<Add>())
        return combine(is_monotonic(op->a, var), is_monotonic(op->b, var));
    if (const Sub *op = e.as<Sub>())
        return combine(is_monotonic(op->a, var), flip(is_monotonic(op->b, var)));
    if (const Mul *op = e.as<Mul>()) {
        if (!uses_var(op->b, var)) return scaled(is_monotonic(op->a, var), op->b);
        if (!uses_var(op->a, var)) return scaled(is_monotonic(op->b, var), op->a);
        return Monotonic::Unknown;
    }
    if (const Div *op = e.as<Div>()) {
        if (uses_var(op->b, var)) return Monotonic::Unknown;
        // A floor quotient by a positive constant keeps the order; by a negative one it turns
        // it round.
        return scaled(is_monotonic(op->a, var), op->b);
    }
    if (const Min *op = e.as<Min>())
        return combine(is_monotonic(op->a, var), is_monotonic(op->b, var));
    if (const Max *op = e.as<Max>())
        return combine(is_monotonic(op->a, var), is_monotonic(op->b, var));
    if (const Cast *op = e.as<Cast>()) {
        if (op->value.type().is_int() && op->type.bits >= op->value.type().bits)
            return is_monotonic(op->value, var);
        return Monotonic::Unknown;
    }
    return Monotonic::Unknown;
}

} // namespace ir
} // namespace aicf
