#include "dsl/OperatorChains.h"

#include "dsl/base/Error.h"
#include "dsl/ir/IR.h"
#include "dsl/ir/IROperator.h"

namespace aicf {

using namespace ir;

std::optional<Combiner> binary_operation(const Expr &e, Expr &a, Expr &b) {
    if (const Add *n = e.as<Add>()) return a = n->a, b = n->b, Combiner::Add;
    if (const Mul *n = e.as<Mul>()) return a = n->a, b = n->b, Combiner::Mul;
    if (const Min *n = e.as<Min>()) return a = n->a, b = n->b, Combiner::Min;
    if (const Max *n = e.as<Max>()) return a = n->a, b = n->b, Combiner::Max;
    if (const And *n = e.as<And>()) return a = n->a, b = n->b, Combiner::And;
    if (const Or *n = e.as<Or>()) return a = n->a, b = n->b, Combiner::Or;
    const Call *c = e.as<Call>();
    if (!c || c->args.size() != 2) return std::nullopt;
    a = c->args[0], b = c->args[1];
    if (c->is_intrinsic(Intrinsic::bitwise_and)) return Combiner::BitAnd;
    if (c->is_intrinsic(Intrinsic::bitwise_or)) return Combiner::BitOr;
    if (c->is_intrinsic(Intrinsic::bitwise_xor)) return Combiner::BitXor;
    return std::nullopt;
}

namespace {

// The two operands of e where it is the operation `op` (a Sub too for Add), with whether the
// second is subtracted.
bool operands_of(const Expr &e, Combiner op, Expr &a, Expr &b, bool &negate_b) {
    negate_b = false;
    if (const Sub *n = e.as<Sub>(); n && op == Combiner::Add) {
        a = n->a, b = n->b, negate_b = true;
        return true;
    }
    Expr x, y;
    const std::optional<Combiner> found = binary_operation(e, x, y);
    if (found != op) return false;
    a = x, b = y;
    return true;
}

// The operands of e as a chain of op in values of type t, appended to `operands`.
void flatten(const Expr &e, Combiner op, Type t, bool negated,
             std::vector<std::pair<Expr, bool>> &operands) {
    Expr a, b;
    bool negate_b;
    if (e.type() == t && operands_of(e, op, a, b, negate_b)) {
        flatten(a, op, t, negated, operands);
        flatten(b, op, t, negated != negate_b, operands);
    } else {
        operands.emplace_back(e, negated);
    }
}

} // namespace

std::optional<OperatorChain> operator_chain(const Expr &v) {
    if (!v.defined() || !(v.type().is_int_or_uint() || v.type().is_bool())) return std::nullopt;
    Expr a, b;
    bool negate_b = v.as<Sub>() != nullptr;
    std::optional<Combiner> op = negate_b ? Combiner::Add : binary_operation(v, a, b);
    if (!op || !operands_of(v, *op, a, b, negate_b)) return std::nullopt;
    OperatorChain chain{*op, {}};
    flatten(a, *op, v.type(), false, chain.operands);
    flatten(b, *op, v.type(), negate_b, chain.operands);
    return chain;
}

Expr combine(Combiner op, const Expr &a, const Expr &b) {
    auto bitwise = [&](Intrinsic i) {
        return Call::make(a.type(), i, {a, b}, Call::PureIntrinsic);
    };
    switch (op) {
    case Combiner::Add:
        return Add::make(a, b);
    case Combiner::Mul:
        return Mul::make(a, b);
    case Combiner::Min:
        return Min::make(a, b);
    case Combiner::Max:
        return Max::make(a, b);
    case Combiner::And:
        return And::make(a, b);
    case Combiner::Or:
        return Or::make(a, b);
    case Combiner::BitAnd:
        return bitwise(Intrinsic::bitwise_and);
    case Combiner::BitOr:
        return bitwise(Intrinsic::bitwise_or);
    case Combiner::BitXor:
        return bitwise(Intrinsic::bitwise_xor);
    }
    internal_error << "combine of an unknown Combiner";
    return Expr();
}

Expr combine_chain(Combiner op, const std::vector<std::pair<Expr, bool>> &operands) {
    internal_assert(!operands.empty()) << "an empty chain of operands";
    Expr r;
    for (const auto &[e, negated] : operands) {
        if (!r.defined())
            r = negated ? Sub::make(make_zero(e.type()), e) : e;
        else if (negated)
            r = Sub::make(r, e);
        else
            r = combine(op, r, e);
    }
    return r;
}

} // namespace aicf
