#ifndef AICF_OPERATORS_H
#define AICF_OPERATORS_H

// The arithmetic of the algorithm language: C++ operators on Expr, casts, select, and math
// functions, with Halide's type rules:
//  - int op float -> float; narrower op wider -> wider; signed op unsigned -> signed of the
//    wider width; a scalar op a vector broadcasts the scalar.
//  - A C++ integer literal (of any integer type: 3, 3u, int64_t(3), size_t(3), or a bool)
//    takes the other operand's type and must fit in it (a CompileError otherwise), for the
//    arithmetic, comparison and bitwise operators, min, max and select; a C++ float or
//    double literal makes an integer operand float32.

#include "dsl/ir/IR.h"
#include "dsl/ir/Type.h"

#include <type_traits>
#include <vector>

namespace aicf {

using ir::BFloat;
using ir::Bool;
using ir::Expr;
using ir::Float;
using ir::Int;
using ir::Type;
using ir::UInt;

// What a comparison or a logical operator gives: a bool Expr, evaluated at every point of the
// Func. It does not convert to a C++ bool: `if (x < 3)` or `x < 3 ? a : b` would test, once
// while the algorithm is written, whether the Expr exists (always), not the condition. Write
// select(x < 3, a, b) to choose per point.
struct Condition : Expr {
    Condition() = default;
    Condition(Expr e) : Expr(std::move(e)) {}
    explicit operator bool() const = delete; // per point: use select(condition, a, b)
};

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);
Expr operator%(Expr a, Expr b);
Expr operator-(Expr a);
Condition operator<(Expr a, Expr b);
Condition operator<=(Expr a, Expr b);
Condition operator>(Expr a, Expr b);
Condition operator>=(Expr a, Expr b);
Condition operator==(Expr a, Expr b);
Condition operator!=(Expr a, Expr b);
Condition operator&&(Expr a, Expr b);
Condition operator||(Expr a, Expr b);
Condition operator!(Expr a);
// A condition with a C++ bool: (x < 3) && flag.
Condition operator&&(Expr a, bool b);
Condition operator&&(bool a, Expr b);
Condition operator||(Expr a, bool b);
Condition operator||(bool a, Expr b);
Expr operator&(Expr a, Expr b);
Expr operator|(Expr a, Expr b);
Expr operator^(Expr a, Expr b);
Expr operator~(Expr a);
Expr operator<<(Expr a, Expr b);
Expr operator>>(Expr a, Expr b);

namespace detail {
// A C++ integer (or bool) used as a literal operand.
template <typename T> using IntegerLiteral = std::enable_if_t<std::is_integral<T>::value, int>;
template <typename T> using ExactlyInt = std::enable_if_t<std::is_same<T, int>::value, int>;
// The integer literal v as an Expr of other's type (a CompileError naming `op` if it does not
// fit). The bits are v's, read as a signed or an unsigned 64-bit integer.
Expr int_literal_like(const Expr &other, uint64_t bits, bool is_signed, const char *op);
template <typename T> Expr literal_like(const Expr &other, T v, const char *op) {
    return int_literal_like(other, static_cast<uint64_t>(v), std::is_signed<T>::value, op);
}
// A C++ float or double used as a literal operand.
template <typename T> using FloatLiteral = std::enable_if_t<std::is_floating_point<T>::value, int>;
// The float literal v as a constant of other's type where that is a float; otherwise other
// becomes a float32, and so does the literal (as with the arithmetic operators).
Expr float_literal_like(Expr &other, double v, const char *op);
} // namespace detail

// Literal operands: the literal adopts the Expr's type where it can.
#define AICF_LITERAL_OPS(OP, RESULT)                                                               \
    template <typename T, detail::IntegerLiteral<T> = 0> RESULT operator OP(Expr a, T b) {         \
        Expr lit = detail::literal_like(a, b, #OP);                                                \
        return std::move(a) OP std::move(lit);                                                     \
    }                                                                                              \
    template <typename T, detail::IntegerLiteral<T> = 0> RESULT operator OP(T a, Expr b) {         \
        Expr lit = detail::literal_like(b, a, #OP);                                                \
        return std::move(lit) OP std::move(b);                                                     \
    }                                                                                              \
    RESULT operator OP(Expr a, float b);                                                           \
    RESULT operator OP(float a, Expr b);                                                           \
    RESULT operator OP(Expr a, double b);                                                          \
    RESULT operator OP(double a, Expr b);
AICF_LITERAL_OPS(+, Expr)
AICF_LITERAL_OPS(-, Expr)
AICF_LITERAL_OPS(*, Expr)
AICF_LITERAL_OPS(/, Expr)
AICF_LITERAL_OPS(%, Expr)
AICF_LITERAL_OPS(<, Condition)
AICF_LITERAL_OPS(<=, Condition)
AICF_LITERAL_OPS(>, Condition)
AICF_LITERAL_OPS(>=, Condition)
AICF_LITERAL_OPS(==, Condition)
AICF_LITERAL_OPS(!=, Condition)
#undef AICF_LITERAL_OPS

Expr &operator+=(Expr &a, Expr b);
Expr &operator-=(Expr &a, Expr b);
Expr &operator*=(Expr &a, Expr b);
Expr &operator/=(Expr &a, Expr b);

Expr cast(Type t, Expr e);
template <typename T> Expr cast(Expr e) {
    return aicf::cast(ir::type_of<T>(), std::move(e));
}

// `condition ? a : b`, elementwise; `a` and `b` are brought to a common type (an int literal
// takes the other's, as with the operators).
Expr select(Expr condition, Expr a, Expr b);
Expr select(Expr c1, Expr a, Expr c2, Expr b, Expr otherwise);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);

#define AICF_INT_LITERAL_OVERLOADS(NAME, CALL, TEXT)                                               \
    template <typename T, detail::IntegerLiteral<T> = 0> Expr NAME(Expr a, T b) {                  \
        Expr lit = detail::literal_like(a, b, TEXT);                                               \
        return CALL(std::move(a), std::move(lit));                                                 \
    }                                                                                              \
    template <typename T, detail::IntegerLiteral<T> = 0> Expr NAME(T a, Expr b) {                  \
        Expr lit = detail::literal_like(b, a, TEXT);                                               \
        return CALL(std::move(lit), std::move(b));                                                 \
    }
AICF_INT_LITERAL_OVERLOADS(operator&, operator&, "&")
AICF_INT_LITERAL_OVERLOADS(operator|, operator|, "|")
AICF_INT_LITERAL_OVERLOADS(operator^, operator^, "^")
AICF_INT_LITERAL_OVERLOADS(min, min, "min")
AICF_INT_LITERAL_OVERLOADS(max, max, "max")
#undef AICF_INT_LITERAL_OVERLOADS
// A float literal takes the other operand's float type: max(x, 0.0) on a float32 x is float32.
#define AICF_FLOAT_LITERAL_OVERLOADS(NAME, TEXT)                                                   \
    template <typename T, detail::FloatLiteral<T> = 0> Expr NAME(Expr a, T b) {                    \
        Expr lit = detail::float_literal_like(a, static_cast<double>(b), TEXT);                    \
        return NAME(std::move(a), std::move(lit));                                                 \
    }                                                                                              \
    template <typename T, detail::FloatLiteral<T> = 0> Expr NAME(T a, Expr b) {                    \
        Expr lit = detail::float_literal_like(b, static_cast<double>(a), TEXT);                    \
        return NAME(std::move(lit), std::move(b));                                                 \
    }
AICF_FLOAT_LITERAL_OVERLOADS(min, "min")
AICF_FLOAT_LITERAL_OVERLOADS(max, "max")
#undef AICF_FLOAT_LITERAL_OVERLOADS
template <typename T, detail::FloatLiteral<T> = 0> Expr select(Expr c, Expr a, T b) {
    Expr lit = detail::float_literal_like(a, static_cast<double>(b), "select");
    return select(std::move(c), std::move(a), std::move(lit));
}
template <typename T, detail::FloatLiteral<T> = 0> Expr select(Expr c, T a, Expr b) {
    Expr lit = detail::float_literal_like(b, static_cast<double>(a), "select");
    return select(std::move(c), std::move(lit), std::move(b));
}
// Two literals, one of them a float: each an Expr of its own C++ type.
template <
    typename T, typename U,
    std::enable_if_t<std::is_arithmetic<T>::value && std::is_arithmetic<U>::value &&
                         (std::is_floating_point<T>::value || std::is_floating_point<U>::value),
                     int> = 0>
Expr select(Expr c, T a, U b) {
    return select(std::move(c), Expr(a), Expr(b));
}
template <typename T, detail::IntegerLiteral<T> = 0> Expr select(Expr c, Expr a, T b) {
    Expr lit = detail::literal_like(a, b, "select");
    return select(std::move(c), std::move(a), std::move(lit));
}
template <typename T, detail::IntegerLiteral<T> = 0> Expr select(Expr c, T a, Expr b) {
    Expr lit = detail::literal_like(b, a, "select");
    return select(std::move(c), std::move(lit), std::move(b));
}
// Two int literals are two int32 Exprs.
template <typename T, typename U, detail::ExactlyInt<T> = 0, detail::ExactlyInt<U> = 0>
Expr select(Expr c, T a, U b) {
    return select(std::move(c), Expr(a), Expr(b));
}
// select(c1, a, c2, b, c3, c, ..., otherwise): the value of the first condition that holds, or
// `otherwise` where none does (as in Halide).
template <typename... Rest>
Expr select(Expr c1, Expr a, Expr c2, Expr b, Expr c3, Expr c, Rest &&...rest) {
    static_assert(sizeof...(Rest) % 2 == 1,
                  "select takes pairs of a condition and its value, then the value where no "
                  "condition holds: an odd number of arguments");
    return select(std::move(c1), std::move(a),
                  select(std::move(c2), std::move(b), std::move(c3), std::move(c),
                         std::forward<Rest>(rest)...));
}
// lo and hi are converted to e's type (a constant that does not fit is a CompileError),
// except that a non-constant integer bound of a type e's cannot hold first widens e to the
// narrowest integer type that holds both (clamp(u8_id, 0, rows - 1) is int32;
// clamp(u32_hash, 0, n - 1) is int64; a uint64 bound of a signed value, which none holds,
// is saturated into the value's type). A float bound of an integer e is converted to e's
// type, as in Halide (min and max would give a float).
Expr clamp(Expr e, Expr lo, Expr hi);
// `zero` where weight is 0, `one` where it is 1, and in between zero * (1 - weight) + one *
// weight. The weight is a float; zero and one are brought to a common type. Of floats,
// computed in their type (exact at both ends for finite values; an infinite one gives NaN,
// as the formula does); of integers, in float64 (float32 for 8- and 16-bit ones), rounded to
// nearest and saturated into the integers' type, exact at both ends (a NaN weight gives 0).
Expr lerp(Expr zero, Expr one, Expr weight);
// a + b and a - b of integers, clamped to the type's range instead of wrapping (or, for
// int32 and int64, overflowing, which the simplifier assumes never happens, so that a guard
// written around a + b may be folded away); of floats, a + b and a - b.
Expr saturating_add(Expr a, Expr b);
Expr saturating_sub(Expr a, Expr b);
// e converted to t, clamped to t's range first where an integer may lie outside it (a float
// converts saturating already, NaN giving 0).
Expr saturating_cast(Type t, Expr e);
template <typename T> Expr saturating_cast(Expr e) {
    return saturating_cast(ir::type_of<T>(), std::move(e));
}
// values[index]: the first value where index <= 0, the last where index >= values.size() - 1.
// The values are brought to a common type, as by select.
Expr mux(Expr index, const std::vector<Expr> &values);
// Absolute value, of the same type as e.
Expr abs(Expr e);

// Math on floats. Integer arguments are converted to float32 first.
Expr sqrt(Expr e);
Expr rsqrt(Expr e);
Expr exp(Expr e);
Expr log(Expr e);
Expr tanh(Expr e);
Expr erf(Expr e);
// Of an angle in radians.
Expr sin(Expr e);
Expr cos(Expr e);
// The logistic function 1 / (1 + exp(-e)), accurate over the whole range (subnormal results
// included): 0 at -inf, 1 at inf.
Expr sigmoid(Expr e);
Expr pow(Expr base, Expr exponent);
// A float literal exponent or base takes the other's float type: pow(h, 2.0) on a float16 h
// is float16.
template <typename T, detail::FloatLiteral<T> = 0> Expr pow(Expr base, T exponent) {
    Expr lit = detail::float_literal_like(base, static_cast<double>(exponent), "pow");
    return pow(std::move(base), std::move(lit));
}
// An integer literal exponent as a float one: pow(h, 3) on a float16 h is float16.
template <typename T, detail::IntegerLiteral<T> = 0> Expr pow(Expr base, T exponent) {
    return pow(std::move(base), static_cast<double>(exponent));
}
template <typename T, detail::FloatLiteral<T> = 0> Expr pow(T base, Expr exponent) {
    Expr lit = detail::float_literal_like(exponent, static_cast<double>(base), "pow");
    return pow(std::move(lit), std::move(exponent));
}
Expr fma(Expr a, Expr b, Expr c);
// Rounding to an integral value; of an integer, the integer itself (of its own type, so
// floor(i) / 2 divides integers).
Expr floor(Expr e);
Expr ceil(Expr e);
Expr round(Expr e); // to nearest, ties to even
Expr trunc(Expr e);
Condition is_nan(Expr e);
Condition is_inf(Expr e);

// Reinterprets the bits of e as type t (same total width).
Expr reinterpret(Type t, Expr e);
// A hint that `e` is usually true (for loop partitioning and branch layout).
Expr likely(Expr e);

namespace detail {
// Brings a and b to a common type by the rules above. `op` names the operator in errors.
void match_types(Expr &a, Expr &b, const char *op);
} // namespace detail

} // namespace aicf

#endif
