#include "dsl/Operators.h"

#include "dsl/base/Error.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

namespace aicf {

using namespace ir;

namespace detail {

void match_types(Expr &a, Expr &b, const char *op) {
    user_assert(a.defined() && b.defined())
        << "Operator " << op << " applied to an undefined Expr.";
    Type ta = a.type(), tb = b.type();
    user_assert(!ta.is_handle() && !tb.is_handle())
        << "Operator " << op << " cannot apply to a handle or string.";
    if (ta.lanes != tb.lanes) {
        user_assert(ta.lanes == 1 || tb.lanes == 1)
            << "Operator " << op << " applied to vectors of " << ta.lanes << " and " << tb.lanes
            << " lanes.";
        if (ta.lanes == 1) a = broadcast(a, tb.lanes);
        if (tb.lanes == 1) b = broadcast(b, ta.lanes);
        ta = a.type();
        tb = b.type();
    }
    if (ta == tb) return;
    Type t;
    if (ta.is_float() && !tb.is_float()) {
        t = ta;
    } else if (tb.is_float() && !ta.is_float()) {
        t = tb;
    } else if (ta.is_float() && tb.is_float()) {
        if (ta.bits != tb.bits) {
            t = ta.bits > tb.bits ? ta : tb;
        } else {
            t = Float(32, ta.lanes); // float16 with bfloat16 meet in float32
        }
    } else if (ta.is_bool() || tb.is_bool()) {
        t = ta.is_bool() ? tb : ta;
    } else if (ta.code == tb.code) {
        t = ta.bits > tb.bits ? ta : tb;
    } else {
        t = Int(std::max(ta.bits, tb.bits), ta.lanes);
    }
    a = ir::cast(t, a);
    b = ir::cast(t, b);
}

} // namespace detail

namespace {

// The integer literal `bits` (read as signed or unsigned) as a constant of type t.
Expr int_literal(Type t, uint64_t bits, bool is_signed, const char *op) {
    bool above_int64 = !is_signed && bits > uint64_t(std::numeric_limits<int64_t>::max());
    int64_t v = static_cast<int64_t>(bits);
    std::string text = is_signed ? std::to_string(v) : std::to_string(bits);
    if (t.is_float()) {
        // float16 ends at 65504: a larger constant would become infinity.
        Expr c = make_const(t, is_signed ? static_cast<double>(v) : static_cast<double>(bits));
        auto f = as_const_float(c);
        user_assert(!f || std::isfinite(*f))
            << "The integer constant " << text << " does not fit in " << to_string(t.element_of())
            << " (it would be infinity), the type of the other operand of " << op
            << ". Cast one side explicitly.";
        return c;
    }
    // Against a bool, 0 and 1 are false and true (arithmetic on bools is refused by the
    // operator itself); another integer fits in no bool (C++ would compare flag == 2 as an
    // int, never true).
    bool fits = above_int64 ? t.element_of() == UInt(64) : t.element_of().can_represent(v);
    user_assert(fits) << "The integer constant " << text << " does not fit in "
                      << to_string(t.element_of()) << ", the type of the other operand of " << op
                      << ". Cast one side explicitly.";
    if (above_int64) return broadcast(UIntImm::make(UInt(64), bits), t.lanes);
    return make_const(t, v);
}

void float_literal(Expr &a, double v, Expr &lit) {
    Type t = a.type();
    if (t.is_float()) {
        lit = make_const(t, v);
        return;
    }
    a = ir::cast(Float(32, t.lanes), a);
    lit = make_const(Float(32, t.lanes), v);
}

void check_numeric(const Expr &e, const char *op) {
    user_assert(e.defined()) << "Operator " << op << " applied to an undefined Expr.";
    user_assert(!e.type().is_handle()) << "Operator " << op << " cannot apply to a handle.";
}

void check_bool(const Expr &e, const char *op) {
    user_assert(e.defined()) << "Operator " << op << " applied to an undefined Expr.";
    user_assert(e.type().is_bool())
        << "Operator " << op << " needs bool operands, but got " << to_string(e.type()) << " (" << e
        << "). Compare it first, e.g. (" << e << ") != 0.";
}

void check_int(const Expr &e, const char *op) {
    user_assert(e.defined()) << "Operator " << op << " applied to an undefined Expr.";
    user_assert(e.type().is_int_or_uint())
        << "Operator " << op << " needs integer operands, but got " << to_string(e.type()) << " ("
        << e << ").";
}

Expr to_float(Expr e, const char *fn) {
    user_assert(e.defined()) << fn << " applied to an undefined Expr.";
    user_assert(!e.type().is_handle()) << fn << " cannot apply to a handle.";
    if (!e.type().is_float()) e = ir::cast(Float(32, e.type().lanes), e);
    return e;
}

Expr float_call(Intrinsic op, std::vector<Expr> args) {
    return Call::make(args[0].type(), op, args, Call::PureIntrinsic);
}

} // namespace

// The overloads with a C++ literal on one side: the literal takes the Expr's type.
#define AICF_DEFINE_LITERAL_OPS(OP, NAME, RESULT)                                                  \
    RESULT operator OP(Expr a, double b) {                                                         \
        check_numeric(a, NAME);                                                                    \
        Expr lit;                                                                                  \
        float_literal(a, b, lit);                                                                  \
        return a OP lit;                                                                           \
    }                                                                                              \
    RESULT operator OP(double a, Expr b) {                                                         \
        check_numeric(b, NAME);                                                                    \
        Expr lit;                                                                                  \
        float_literal(b, a, lit);                                                                  \
        return lit OP b;                                                                           \
    }                                                                                              \
    RESULT operator OP(Expr a, float b) {                                                          \
        return std::move(a) OP static_cast<double>(b);                                             \
    }                                                                                              \
    RESULT operator OP(float a, Expr b) {                                                          \
        return static_cast<double>(a) OP std::move(b);                                             \
    }

#define AICF_DEFINE_ARITH(OP, NODE, NAME)                                                          \
    Expr operator OP(Expr a, Expr b) {                                                             \
        check_numeric(a, NAME);                                                                    \
        check_numeric(b, NAME);                                                                    \
        detail::match_types(a, b, NAME);                                                           \
        user_assert(!a.type().is_bool())                                                           \
            << "Operator " NAME " cannot apply to bool values (" << a << " " NAME " " << b         \
            << "). Cast a condition to a number to count it (cast<int>(c)), or combine "           \
               "conditions with && and ||.";                                                       \
        return NODE::make(a, b);                                                                   \
    }                                                                                              \
    AICF_DEFINE_LITERAL_OPS(OP, NAME, Expr)

AICF_DEFINE_ARITH(+, Add, "+")
AICF_DEFINE_ARITH(-, Sub, "-")
AICF_DEFINE_ARITH(*, Mul, "*")
AICF_DEFINE_ARITH(/, Div, "/")
AICF_DEFINE_ARITH(%, Mod, "%")
#undef AICF_DEFINE_ARITH

#define AICF_DEFINE_CMP(OP, NODE, NAME)                                                            \
    Condition operator OP(Expr a, Expr b) {                                                        \
        check_numeric(a, NAME);                                                                    \
        check_numeric(b, NAME);                                                                    \
        detail::match_types(a, b, NAME);                                                           \
        return NODE::make(a, b);                                                                   \
    }                                                                                              \
    AICF_DEFINE_LITERAL_OPS(OP, NAME, Condition)

AICF_DEFINE_CMP(<, LT, "<")
AICF_DEFINE_CMP(<=, LE, "<=")
AICF_DEFINE_CMP(>, GT, ">")
AICF_DEFINE_CMP(>=, GE, ">=")
AICF_DEFINE_CMP(==, EQ, "==")
AICF_DEFINE_CMP(!=, NE, "!=")
#undef AICF_DEFINE_CMP
#undef AICF_DEFINE_LITERAL_OPS

Expr operator-(Expr a) {
    check_numeric(a, "unary -");
    user_assert(!a.type().is_bool()) << "Unary - cannot apply to a bool value.";
    // -0.0 - a flips the sign of a float zero too (0.0 - a would give +0.0 for a = +0.0).
    if (a.type().is_float()) return Sub::make(make_const(a.type(), -0.0), a);
    return Sub::make(make_zero(a.type()), a);
}

Condition operator&&(Expr a, Expr b) {
    check_bool(a, "&&");
    check_bool(b, "&&");
    detail::match_types(a, b, "&&");
    return And::make(a, b);
}

Condition operator||(Expr a, Expr b) {
    check_bool(a, "||");
    check_bool(b, "||");
    detail::match_types(a, b, "||");
    return Or::make(a, b);
}

Condition operator&&(Expr a, bool b) {
    return std::move(a) && Expr(b);
}
Condition operator&&(bool a, Expr b) {
    return Expr(a) && std::move(b);
}
Condition operator||(Expr a, bool b) {
    return std::move(a) || Expr(b);
}
Condition operator||(bool a, Expr b) {
    return Expr(a) || std::move(b);
}

Condition operator!(Expr a) {
    check_bool(a, "!");
    return Not::make(a);
}

#define AICF_DEFINE_BITWISE(OP, INTRINSIC, NAME)                                                   \
    Expr operator OP(Expr a, Expr b) {                                                             \
        user_assert(a.defined() && b.defined()) << "Operator " NAME " on an undefined Expr.";      \
        if (!(a.type().is_bool() && b.type().is_bool())) {                                         \
            check_int(a, NAME);                                                                    \
            check_int(b, NAME);                                                                    \
        }                                                                                          \
        detail::match_types(a, b, NAME);                                                           \
        return Call::make(a.type(), Intrinsic::INTRINSIC, {a, b});                                 \
    }
AICF_DEFINE_BITWISE(&, bitwise_and, "&")
AICF_DEFINE_BITWISE(|, bitwise_or, "|")
AICF_DEFINE_BITWISE(^, bitwise_xor, "^")
#undef AICF_DEFINE_BITWISE

Expr detail::float_literal_like(Expr &other, double v, const char *op) {
    check_numeric(other, op);
    Expr lit;
    float_literal(other, v, lit);
    return lit;
}

Expr detail::int_literal_like(const Expr &other, uint64_t bits, bool is_signed, const char *op) {
    check_numeric(other, op);
    return int_literal(other.type(), bits, is_signed, op);
}

Expr operator~(Expr a) {
    check_int(a, "~");
    return Call::make(a.type(), Intrinsic::bitwise_not, {a});
}

namespace {

// The shift amount in the shifted value's type. An amount of a wider type that lies outside
// [0, bits - 1] becomes `bits` first, so that it stays out of range there (the cast alone
// would wrap 256 to 0 for an 8-bit value).
Expr shift_amount(const Expr &a, Expr b) {
    const Type at = a.type(), bt = b.type();
    if (bt.bits > at.bits) {
        Expr bits = make_const(bt, int64_t(at.bits));
        Expr outside = GE::make(b, bits);
        if (bt.is_int()) outside = Or::make(outside, LT::make(b, make_zero(bt)));
        b = Select::make(outside, bits, b);
    }
    return ir::cast(at.with_code(bt.code), b);
}

} // namespace

Expr operator<<(Expr a, Expr b) {
    check_int(a, "<<");
    check_int(b, "<<");
    b = shift_amount(a, b);
    return Call::make(a.type(), Intrinsic::shift_left, {a, ir::cast(a.type(), b)});
}

Expr operator>>(Expr a, Expr b) {
    check_int(a, ">>");
    check_int(b, ">>");
    b = shift_amount(a, b);
    return Call::make(a.type(), Intrinsic::shift_right, {a, ir::cast(a.type(), b)});
}

Expr &operator+=(Expr &a, Expr b) {
    return a = a + std::move(b);
}
Expr &operator-=(Expr &a, Expr b) {
    return a = a - std::move(b);
}
Expr &operator*=(Expr &a, Expr b) {
    return a = a * std::move(b);
}
Expr &operator/=(Expr &a, Expr b) {
    return a = a / std::move(b);
}

namespace {

// The types values may have: what `what` (cast, reinterpret) is given must be one of them.
void check_value_type(Type t, const char *what, const Expr &e) {
    user_assert(t.lanes >= 1 && is_valid_value_type(t.element_of()))
        << what << " of " << e << " to "
        << (t.lanes >= 1 ? to_string(t) : to_string(t.element_of()) + " with 0 lanes")
        << ", which is no type of AICF. Values are bool, int8 to int64, uint8 to uint64, "
        << "float16, bfloat16, float32 and float64 (Int(n) and UInt(n) with n of 8, 16, 32 or "
        << "64, Float(16, 32 or 64), BFloat(16), Bool()).";
}

} // namespace

Expr cast(Type t, Expr e) {
    user_assert(e.defined()) << "cast to " << to_string(t) << " of an undefined Expr.";
    user_assert(!t.is_handle() && !e.type().is_handle())
        << "cast between " << to_string(e.type()) << " and " << to_string(t) << " is not allowed.";
    check_value_type(t, "cast", e);
    if (t.lanes == 1 && e.type().lanes > 1) t = t.with_lanes(e.type().lanes);
    return ir::cast(t, e);
}

Expr select(Expr c, Expr a, Expr b) {
    user_assert(c.defined() && a.defined() && b.defined()) << "select of an undefined Expr.";
    user_assert(c.type().is_bool())
        << "The condition of select must be bool, but " << c << " has type " << to_string(c.type())
        << ". Compare it first, e.g. select(" << c << " != 0, ...).";
    detail::match_types(a, b, "select");
    if (c.type().lanes != a.type().lanes) {
        if (c.type().lanes == 1) {
            c = broadcast(c, a.type().lanes);
        } else {
            Expr c2 = c;
            detail::match_types(c2, a, "select");
            detail::match_types(c2, b, "select");
        }
    }
    return Select::make(c, a, b);
}

Expr select(Expr c1, Expr a, Expr c2, Expr b, Expr otherwise) {
    return select(std::move(c1), std::move(a),
                  select(std::move(c2), std::move(b), std::move(otherwise)));
}

Expr min(Expr a, Expr b) {
    check_numeric(a, "min");
    check_numeric(b, "min");
    detail::match_types(a, b, "min");
    return Min::make(a, b);
}

Expr max(Expr a, Expr b) {
    check_numeric(a, "max");
    check_numeric(b, "max");
    detail::match_types(a, b, "max");
    return Max::make(a, b);
}

Expr clamp(Expr e, Expr lo, Expr hi) {
    check_numeric(e, "clamp");
    user_assert(lo.defined() && hi.defined()) << "clamp with an undefined bound.";
    // A bound of an integer type that e's type cannot hold (a row count for a uint8 id, an
    // int32 bound of a uint32 hash, an int64 bound of an int32 value) widens e to the
    // narrowest type that holds both, rather than being narrowed to e's type: at 300 rows,
    // clamp(id, 0, rows - 1) would clamp to 43, and in int32 a hash of 2^31 or more would
    // clamp to 0. (None holds a uint64 and a signed type: there the bound is saturated into
    // e's type.)
    // A constant takes e's type, as a literal does.
    for (Expr *bound : {&lo, &hi}) {
        const Type t = e.type().element_of(), b = bound->type().element_of();
        if (!t.is_int_or_uint() || t.is_bool() || !b.is_int_or_uint() || b.is_bool() ||
            is_const(*bound) || t.can_represent(b))
            continue;
        const int signed_bits = t.is_int() ? t.bits : b.bits,
                  unsigned_bits = t.is_uint() ? t.bits : b.bits;
        const int bits = t.is_int() == b.is_int() ? std::max<int>(t.bits, b.bits)
                                                  : std::max(signed_bits, 2 * unsigned_bits);
        if (bits > 64) {
            // Then the value's type holds every value of it between the bound and the type's
            // other end: the bound saturated into it clamps the same.
            *bound = saturating_cast(e.type(), *bound);
            continue;
        }
        const Type both = t.is_int() || b.is_int() ? Int(bits) : UInt(bits);
        e = aicf::cast(both.with_lanes(e.type().lanes), e);
    }
    // A constant bound must fit in e's type (clamp(u8, 0, 300) would clamp to 44).
    for (const Expr &bound : {lo, hi}) {
        std::optional<int64_t> c = as_const_int(bound);
        if (!c || e.type().is_float() || e.type().is_bool()) continue;
        user_assert(e.type().element_of().can_represent(*c))
            << "The bound " << *c << " of clamp does not fit in "
            << to_string(e.type().element_of())
            << ", the type of the value clamped. Cast the value to a wider type first.";
    }
    lo = aicf::cast(e.type(), lo);
    hi = aicf::cast(e.type(), hi);
    return Max::make(Min::make(e, hi), lo);
}

Expr lerp(Expr zero, Expr one, Expr weight) {
    check_numeric(zero, "lerp");
    check_numeric(one, "lerp");
    check_numeric(weight, "lerp");
    user_assert(weight.type().is_float())
        << "The weight of lerp is " << weight << ", of type " << to_string(weight.type())
        << ", but it is a fraction from 0 to 1: give a float (cast<float>(w) / 255.0f for an "
        << "8-bit weight).";
    detail::match_types(zero, one, "lerp");
    user_assert(!zero.type().is_bool()) << "lerp cannot blend bool values (" << zero << ", " << one
                                        << "). Use select(condition, a, b).";
    const Type t = zero.type();
    const Type f = t.is_float() ? t : (t.bits <= 16 ? Float(32) : Float(64)).with_lanes(t.lanes);
    Expr w = aicf::cast(f, weight);
    Expr blended = aicf::cast(f, zero) * (make_const(f, 1.0) - w) + aicf::cast(f, one) * w;
    if (t.is_float()) return blended;
    blended = aicf::cast(t, round(blended));
    // 64-bit integers past 2^53 do not survive float64: the ends are taken as they are.
    if (t.bits == 64) blended = select(w == 0, zero, select(w == 1, one, blended));
    return blended;
}

namespace {

// a + b or a - b of integers of at most 32 bits, or of 64-bit ones, clamped to their range.
Expr saturating(Expr a, Expr b, bool add) {
    const char *name = add ? "saturating_add" : "saturating_sub";
    check_numeric(a, name);
    check_numeric(b, name);
    detail::match_types(a, b, name);
    const Type t = a.type();
    user_assert(!t.is_bool()) << name << " cannot apply to bool values.";
    if (t.is_float()) return add ? a + b : a - b;
    if (t.bits < 64) {
        // Exact in int64, then clamped.
        const Type wide = Int(64, t.lanes);
        Expr sum = add ? aicf::cast(wide, a) + aicf::cast(wide, b)
                       : aicf::cast(wide, a) - aicf::cast(wide, b);
        return aicf::cast(t, clamp(sum, aicf::cast(wide, type_min(t.element_of())),
                                   aicf::cast(wide, type_max(t.element_of()))));
    }
    if (t.is_uint()) {
        // Unsigned arithmetic wraps as written: a wrapped sum is below a.
        if (!add) return select(a < b, make_zero(t), a - b);
        Expr sum = a + b;
        return select(sum < a, type_max(t), sum);
    }
    // int64: the sum wraps in uint64, and overflowed where its sign differs from both
    // operands' (a sum) or from a's while a and b differ in sign (a difference).
    const Type u = UInt(64, t.lanes);
    Expr ua = reinterpret(u, a), ub = reinterpret(u, b);
    Expr r = reinterpret(t, add ? ua + ub : ua - ub);
    Expr overflow = add ? ((a ^ r) & (b ^ r)) < 0 : ((a ^ b) & (a ^ r)) < 0;
    return select(overflow, select(a < 0, type_min(t), type_max(t)), r);
}

} // namespace

Expr saturating_add(Expr a, Expr b) {
    return saturating(std::move(a), std::move(b), true);
}
Expr saturating_sub(Expr a, Expr b) {
    return saturating(std::move(a), std::move(b), false);
}

Expr saturating_cast(Type t, Expr e) {
    check_numeric(e, "saturating_cast");
    const Type from = e.type();
    t = t.with_lanes(from.lanes);
    if (from.is_float() || t.is_float() || t.is_bool() || t.can_represent(from))
        return aicf::cast(t, e);
    // Clamped in e's type, at the ends of t's range that lie inside e's (each fits there).
    const Type e1 = from.element_of(), t1 = t.element_of();
    const bool below = e1.is_int() && (t1.is_uint() || t1.bits < e1.bits);
    const bool above = e1.is_uint() && t1.is_int() ? t1.bits <= e1.bits : t1.bits < e1.bits;
    Expr lo = below ? aicf::cast(from, t1.is_uint() ? make_zero(t1) : type_min(t1)) : Expr();
    Expr hi = above ? aicf::cast(from, type_max(t1)) : Expr();
    if (lo.defined()) e = max(e, lo);
    if (hi.defined()) e = min(e, hi);
    return aicf::cast(t, e);
}

Expr mux(Expr index, const std::vector<Expr> &values) {
    user_assert(!values.empty()) << "mux(" << index << ", {}) has no value to choose.";
    check_numeric(index, "mux");
    user_assert(index.type().is_int() || index.type().is_uint())
        << "The index of mux is " << index << ", of type " << to_string(index.type())
        << ", but it picks a value by its position: give an integer.";
    user_assert(index.type().element_of().can_represent(int64_t(values.size() - 1)))
        << "mux chooses among " << values.size() << " values by an index of type "
        << to_string(index.type()) << ", which cannot reach the last of them. Cast the index "
        << "to int first.";
    Expr result = values.back();
    for (size_t i = values.size() - 1; i-- > 0;) {
        Expr here = i == 0 ? Expr(index <= 0) : Expr(index == int(i));
        result = select(here, values[i], result);
    }
    return result;
}

Expr abs(Expr e) {
    check_numeric(e, "abs");
    if (e.type().is_uint()) return e;
    return Call::make(e.type(), Intrinsic::abs, {e});
}

Expr sqrt(Expr e) {
    return float_call(Intrinsic::sqrt, {to_float(e, "sqrt")});
}
Expr rsqrt(Expr e) {
    return float_call(Intrinsic::rsqrt, {to_float(e, "rsqrt")});
}
Expr exp(Expr e) {
    return float_call(Intrinsic::exp, {to_float(e, "exp")});
}
Expr log(Expr e) {
    return float_call(Intrinsic::log, {to_float(e, "log")});
}
Expr tanh(Expr e) {
    return float_call(Intrinsic::tanh, {to_float(e, "tanh")});
}
Expr erf(Expr e) {
    return float_call(Intrinsic::erf, {to_float(e, "erf")});
}
Expr sin(Expr e) {
    return float_call(Intrinsic::sin, {to_float(e, "sin")});
}
Expr cos(Expr e) {
    return float_call(Intrinsic::cos, {to_float(e, "cos")});
}
Expr sigmoid(Expr e) {
    // With t = exp(-|x|), which never overflows: 1 / (1 + t) for x >= 0, t / (1 + t) below
    // (where exp(-x) would overflow while the result is still a subnormal).
    Expr x = to_float(e, "sigmoid");
    // 16-bit floats in float32, rounded once at the end, as exp and the others are.
    if (x.type().bits == 16)
        return aicf::cast(x.type(), sigmoid(aicf::cast(Float(32, x.type().lanes), x)));
    Expr one = make_one(x.type());
    Expr t = exp(-abs(x));
    return select(x >= make_zero(x.type()), one, t) / (one + t);
}
Expr floor(Expr e) {
    if (e.defined() && e.type().is_int_or_uint()) return e;
    return float_call(Intrinsic::floor, {to_float(e, "floor")});
}
Expr ceil(Expr e) {
    if (e.defined() && e.type().is_int_or_uint()) return e;
    return float_call(Intrinsic::ceil, {to_float(e, "ceil")});
}
Expr round(Expr e) {
    if (e.defined() && e.type().is_int_or_uint()) return e;
    return float_call(Intrinsic::round, {to_float(e, "round")});
}
Expr trunc(Expr e) {
    if (e.defined() && e.type().is_int_or_uint()) return e;
    return float_call(Intrinsic::trunc, {to_float(e, "trunc")});
}

Expr pow(Expr base, Expr exponent) {
    base = to_float(base, "pow");
    exponent = to_float(exponent, "pow");
    detail::match_types(base, exponent, "pow");
    return float_call(Intrinsic::pow, {base, exponent});
}

Expr fma(Expr a, Expr b, Expr c) {
    a = to_float(a, "fma");
    b = to_float(b, "fma");
    c = to_float(c, "fma");
    detail::match_types(a, b, "fma");
    detail::match_types(a, c, "fma");
    detail::match_types(b, c, "fma");
    return float_call(Intrinsic::fma, {a, b, c});
}

Condition is_nan(Expr e) {
    e = to_float(e, "is_nan");
    return Call::make(Bool(e.type().lanes), Intrinsic::is_nan, {e});
}

Condition is_inf(Expr e) {
    e = to_float(e, "is_inf");
    return Call::make(Bool(e.type().lanes), Intrinsic::is_inf, {e});
}

Expr reinterpret(Type t, Expr e) {
    user_assert(e.defined()) << "reinterpret of an undefined Expr.";
    check_value_type(t, "reinterpret", e);
    user_assert(t.bits * t.lanes == e.type().bits * e.type().lanes)
        << "reinterpret from " << to_string(e.type()) << " to " << to_string(t)
        << " changes the number of bits.";
    return Reinterpret::make(t, e);
}

Expr likely(Expr e) {
    user_assert(e.defined()) << "likely of an undefined Expr.";
    return Call::make(e.type(), Intrinsic::likely, {e});
}

} // namespace aicf
