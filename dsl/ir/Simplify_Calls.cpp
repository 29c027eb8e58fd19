// The simplifier's rules for casts, vector constructors, loads and calls: casts that change
// nothing go, element-wise intrinsics of broadcasts become broadcasts, and pure intrinsics of
// constants fold.

#include "dsl/ir/IREquality.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/SimplifyInternal.h"

#include <cmath>

namespace aicf {
namespace ir {
namespace simplify_detail {

Expr Simplify::build_cast(Type t, const Expr &v) {
    if (v.type() == t) return v;
    if (is_const(v)) {
        Expr folded = cast(t, v);
        if (is_const(folded)) return folded;
    }
    if (const Broadcast *b = v.as<Broadcast>()) {
        return Broadcast::make(build_cast(t.element_of(), b->value), t.lanes);
    }
    // A cast through a type that holds every value of the source loses nothing, unless it turns
    // an integer into a float that the outer cast then saturates where the integer would wrap
    // (uint16(float64(x)) is 0 for a negative int x, uint16(x) is not).
    if (const Cast *inner = v.as<Cast>()) {
        Type source = inner->value.type();
        bool saturates_instead = inner->type.is_float() && !source.is_float() &&
                                 t.is_int_or_uint() && !t.is_bool() && !t.can_represent(source);
        if (inner->type.can_represent(source) && !saturates_instead)
            return build_cast(t, inner->value);
    }
    return Cast::make(t, v);
}

Expr Simplify::visit(const Cast *op) {
    Expr v = mutate(op->value);
    Expr r = build_cast(op->type, v);
    if (v.same_as(op->value) && r.as<Cast>() && r.as<Cast>()->value.same_as(v)) return op;
    return r;
}

Expr Simplify::visit(const Reinterpret *op) {
    Expr v = mutate(op->value);
    if (v.type() == op->type) return v;
    if (v.same_as(op->value)) return op;
    return Reinterpret::make(op->type, v);
}

Expr Simplify::visit(const Ramp *op) {
    Expr base = mutate(op->base), stride = mutate(op->stride);
    if (base.same_as(op->base) && stride.same_as(op->stride) && !is_const_zero(stride)) return op;
    return make_ramp(base, stride, op->lanes);
}

Expr Simplify::visit(const Broadcast *op) {
    Expr v = mutate(op->value);
    if (v.same_as(op->value)) return op;
    return Broadcast::make(v, op->lanes);
}

Expr Simplify::visit(const Load *op) {
    use_count[op->name]++; // the Load uses the pointer variable it names
    Expr index = mutate(op->index), predicate = mutate(op->predicate);
    if (substitute_linear_lets && allocations.count(op->name)) index = index_through_lets(index);
    if (index.same_as(op->index) && predicate.same_as(op->predicate)) return op;
    return Load::make(op->type, op->name, index, predicate, op->param);
}

// The pure intrinsics computed lane by lane.
static bool elementwise(Intrinsic i) {
    switch (i) {
    case Intrinsic::abs:
    case Intrinsic::bitwise_and:
    case Intrinsic::bitwise_or:
    case Intrinsic::bitwise_xor:
    case Intrinsic::bitwise_not:
    case Intrinsic::shift_left:
    case Intrinsic::shift_right:
    case Intrinsic::sqrt:
    case Intrinsic::rsqrt:
    case Intrinsic::exp:
    case Intrinsic::log:
    case Intrinsic::tanh:
    case Intrinsic::erf:
    case Intrinsic::sin:
    case Intrinsic::cos:
    case Intrinsic::pow:
    case Intrinsic::fma:
    case Intrinsic::floor:
    case Intrinsic::ceil:
    case Intrinsic::round:
    case Intrinsic::trunc:
    case Intrinsic::is_nan:
    case Intrinsic::is_inf:
        return true;
    default:
        return false;
    }
}

Expr Simplify::fold_call(const Call *op, const std::vector<Expr> &args) {
    Type t = op->type;
    if (op->call_type != Call::PureIntrinsic || args.empty()) return Expr();
    Type at = args[0].type();
    if (at.is_int_or_uint() && t.is_int_or_uint()) {
        auto x = const_bits(args[0]);
        auto y = args.size() > 1 ? const_bits(args[1]) : std::nullopt;
        uint64_t ux = static_cast<uint64_t>(x.value_or(0));
        uint64_t uy = static_cast<uint64_t>(y.value_or(0));
        switch (op->intrinsic) {
        case Intrinsic::abs:
            if (x) return make_const(t, at.is_int() && *x < 0 ? wrapping(0 - ux) : *x);
            if (t == at && bounds_of(args[0]).has_min && bounds_of(args[0]).min >= 0)
                return args[0];
            return Expr();
        case Intrinsic::bitwise_not:
            if (x) return make_const(t, wrapping(~ux));
            return Expr();
        case Intrinsic::bitwise_and:
            if (x && y) return make_const(t, wrapping(ux & uy));
            return Expr();
        case Intrinsic::bitwise_or:
            if (x && y) return make_const(t, wrapping(ux | uy));
            return Expr();
        case Intrinsic::bitwise_xor:
            if (x && y) return make_const(t, wrapping(ux ^ uy));
            return Expr();
        case Intrinsic::shift_left:
            if (x && y && *y >= 0 && *y < at.bits) return make_const(t, wrapping(ux << *y));
            return Expr();
        case Intrinsic::shift_right:
            if (x && y && *y >= 0 && *y < at.bits) {
                return make_const(t, at.is_int() ? (*x >> *y) : wrapping(ux >> *y));
            }
            return Expr();
        default:
            return Expr();
        }
    }
    auto f = as_const_float(args[0]);
    if (!at.is_float() || !f) return Expr();
    switch (op->intrinsic) {
    case Intrinsic::abs:
        return t.is_float() ? make_const(t, std::fabs(*f)) : Expr();
    case Intrinsic::floor:
        return make_const(t, std::floor(*f));
    case Intrinsic::ceil:
        return make_const(t, std::ceil(*f));
    case Intrinsic::trunc:
        return make_const(t, std::trunc(*f));
    case Intrinsic::sqrt:
        return make_const(t, std::sqrt(*f));
    case Intrinsic::is_nan:
        return make_const(t, int64_t(std::isnan(*f)));
    case Intrinsic::is_inf:
        return make_const(t, int64_t(std::isinf(*f)));
    default:
        return Expr();
    }
}

Expr Simplify::visit(const Call *op) {
    // The thread or block index where a let names it (a thread loop's variable): that
    // variable, so that `tx * 8 - thread_index(0) * 8` cancels and the let, which names the
    // loop in the simulator's messages, stays.
    if (op->is_intrinsic(Intrinsic::gpu_thread_index) ||
        op->is_intrinsic(Intrinsic::gpu_block_index)) {
        if (Expr same = enclosing_let_with_value(op); same.defined())
            return mutate(same); // counts the use
    }
    std::vector<Expr> args;
    bool changed = mutate_exprs(op->args, args);
    if (Expr folded = fold_call(op, args); folded.defined()) return folded;
    // The constant bound of a fused loop's extent that is a constant (see build_stage).
    if (op->is_intrinsic(Intrinsic::fused_extent_bound) && args.size() == 1 && is_const(args[0]))
        return args[0];
    // An element-wise operation of broadcasts is the broadcast of the scalar operation, so
    // that an index built of them (a swizzled layout's) stays a dense ramp.
    if (op->call_type == Call::PureIntrinsic && op->type.lanes > 1 && elementwise(op->intrinsic)) {
        std::vector<Expr> scalars;
        for (const Expr &a : args) {
            const Broadcast *b = a.as<Broadcast>();
            if (!b || b->lanes != op->type.lanes) break;
            scalars.push_back(b->value);
        }
        if (scalars.size() == args.size()) {
            auto *n = new Call(*op);
            n->type = op->type.element_of();
            n->args = std::move(scalars);
            return Broadcast::make(mutate(Expr(n)), op->type.lanes);
        }
    }
    if (!changed) return op;
    auto *n = new Call(*op);
    n->args = std::move(args);
    return n;
}

} // namespace simplify_detail
} // namespace ir
} // namespace aicf
