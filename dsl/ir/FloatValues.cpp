#include "dsl/ir/FloatValues.h"

#include "dsl/ir/IROperator.h"

#include <algorithm>
#include <cmath>

namespace aicf {
namespace ir {

namespace {

double largest(Type t) {
    if (t.code == TypeCode::BFloat) return 3.38e38;
    return t.bits == 16 ? 65504.0 : t.bits == 32 ? 3.40e38 : 1.79e308;
}
FloatValues sized(double m) {
    FloatValues r;
    r.magnitude = m;
    return r;
}

} // namespace

FloatValues FloatFacts::get(const Expr &e) {
    // Nodes are shared (a chain of steps that each use the one before twice), so each is
    // looked at once while the float lets around it stay the same.
    auto it = memo.find(e.get());
    if (it != memo.end()) return it->second.second;
    FloatValues r = compute(e);
    Type t = e.type().element_of();
    if (t.is_float() && !(r.magnitude <= largest(t) / 4)) r.magnitude = INFINITY;
    memo.emplace(e.get(), std::make_pair(e, r));
    return r;
}

void FloatFacts::push_let(const std::string &name, const Expr &value) {
    if (!value.type().is_float()) return;
    FloatValues v = get(value);
    lets.emplace_back(name, v);
    memo.clear();
}

void FloatFacts::pop_let(const Expr &value) {
    if (!value.type().is_float()) return;
    lets.pop_back();
    memo.clear();
}

FloatValues FloatFacts::compute(const Expr &e) {
    Type t = e.type().element_of();
    if (!t.is_float()) {
        // Integers are finite: their type's range bounds them.
        if (!t.is_int_or_uint()) return FloatValues();
        return sized(std::max(std::fabs(double(t.min_int())), double(t.max_int())));
    }
    if (const FloatImm *f = e.as<FloatImm>()) {
        return std::isfinite(f->value) ? sized(std::fabs(f->value)) : FloatValues();
    }
    if (const Variable *v = e.as<Variable>()) {
        for (size_t i = lets.size(); i-- > 0;)
            if (lets[i].first == v->name) return lets[i].second;
        return FloatValues();
    }
    if (const Cast *c = e.as<Cast>()) return get(c->value);
    if (const Broadcast *b = e.as<Broadcast>()) return get(b->value);
    if (const Let *l = e.as<Let>()) {
        push_let(l->name, l->value);
        FloatValues r = get(l->body);
        pop_let(l->value);
        return r;
    }
    if (const Add *op = e.as<Add>()) return sum(op->a, op->b);
    if (const Sub *op = e.as<Sub>()) return sum(op->a, op->b);
    if (const Mul *op = e.as<Mul>()) {
        return sized(get(op->a).magnitude * get(op->b).magnitude);
    }
    if (const Div *op = e.as<Div>()) {
        const FloatImm *c = op->b.as<FloatImm>();
        if (const Broadcast *b = op->b.as<Broadcast>()) c = b->value.as<FloatImm>();
        if (!c || !std::isfinite(c->value) || c->value == 0) return FloatValues();
        return sized(get(op->a).magnitude / std::fabs(c->value));
    }
    if (const Min *op = e.as<Min>()) return either(op->a, op->b);
    if (const Max *op = e.as<Max>()) return either(op->a, op->b);
    if (const Select *op = e.as<Select>()) return either(op->true_value, op->false_value);
    if (const Call *op = e.as<Call>()) {
        if (op->call_type != Call::PureIntrinsic || op->args.size() != 1) return FloatValues();
        FloatValues a = get(op->args[0]);
        switch (op->intrinsic) {
        case Intrinsic::floor:
        case Intrinsic::ceil:
        case Intrinsic::round:
        case Intrinsic::trunc:
            return sized(a.magnitude + 1);
        case Intrinsic::abs:
            return sized(a.magnitude);
        case Intrinsic::tanh:
        case Intrinsic::erf:
        case Intrinsic::sin: // (NaN of an infinite angle)
        case Intrinsic::cos:
            return sized(std::isfinite(a.magnitude) ? 1.0 : INFINITY);
        default:
            return FloatValues();
        }
    }
    return FloatValues();
}

FloatValues FloatFacts::sum(const Expr &x, const Expr &y) {
    return sized(get(x).magnitude + get(y).magnitude);
}

FloatValues FloatFacts::either(const Expr &x, const Expr &y) {
    return sized(std::max(get(x).magnitude, get(y).magnitude));
}

} // namespace ir
} // namespace aicf
