#ifndef AICF_BACKENDS_SIM_SIMOPS_H
#define AICF_BACKENDS_SIM_SIMOPS_H

// The element operations of the simulator's interpreter, one functor each, with the semantics
// of AICF's CPU code generator (backends/llvm/CodeGen_LLVM.cpp). Integer functors take the
// signedness as a template argument and wrap their result to the type's width (`shift`, see
// wrap()); float functors take a precision policy that says how to read a Word, in which C++
// type to compute, and how to round the result back.

#include "backends/sim/SimValue.h"

#include <cmath>

namespace aicf {
namespace backends {
namespace sim {

// Float precision policies. 16-bit floats compute in float32 and round after every operation.
struct F32 {
    using T = float;
    static T get(Word w) { return w.f; }
    static Word put(T x) { return word_f(x); }
};
struct F16 {
    using T = float;
    static T get(Word w) { return w.f; }
    static Word put(T x) { return word_f(round_to_half(x)); }
};
struct BF16 {
    using T = float;
    static T get(Word w) { return w.f; }
    static Word put(T x) { return word_f(round_to_bfloat(x)); }
};
struct F64 {
    using T = double;
    static T get(Word w) { return w.d; }
    static Word put(T x) { return word_d(x); }
};

inline Word word_bool(bool b) {
    return word_u(b ? 1 : 0);
}

// Arithmetic.
template <bool S> struct IAdd {
    int shift;
    Word operator()(Word a, Word b) const { return wrap<S>(a.u + b.u, shift); }
};
template <bool S> struct ISub {
    int shift;
    Word operator()(Word a, Word b) const { return wrap<S>(a.u - b.u, shift); }
};
template <bool S> struct IMul {
    int shift;
    Word operator()(Word a, Word b) const { return wrap<S>(a.u * b.u, shift); }
};
// Euclidean, as codegen_int_div_mod: x / 0 == 0, MIN / -1 wraps to MIN.
template <bool S> struct IDiv {
    int shift;
    Word operator()(Word a, Word b) const {
        if (b.u == 0) return word_u(0);
        if (!S) return word_u(a.u / b.u);
        if (b.i == -1) return wrap<S>(uint64_t(0) - a.u, shift);
        int64_t q = a.i / b.i, r = a.i % b.i;
        if (r < 0) q = b.i > 0 ? q - 1 : q + 1;
        return wrap<S>(uint64_t(q), shift);
    }
};
// Euclidean: 0 <= a % b < |b|, and x % 0 == 0.
template <bool S> struct IMod {
    int shift;
    Word operator()(Word a, Word b) const {
        if (b.u == 0) return word_u(0);
        if (!S) return word_u(a.u % b.u);
        if (b.i == -1) return word_u(0);
        int64_t r = a.i % b.i;
        if (r < 0) r = b.i > 0 ? r + b.i : r - b.i;
        return word_u(uint64_t(r));
    }
};
template <bool S> struct IMin {
    int shift;
    Word operator()(Word a, Word b) const { return (S ? a.i < b.i : a.u < b.u) ? a : b; }
};
template <bool S> struct IMax {
    int shift;
    Word operator()(Word a, Word b) const { return (S ? a.i > b.i : a.u > b.u) ? a : b; }
};

template <class P> struct FAdd {
    Word operator()(Word a, Word b) const { return P::put(P::get(a) + P::get(b)); }
};
template <class P> struct FSub {
    Word operator()(Word a, Word b) const { return P::put(P::get(a) - P::get(b)); }
};
template <class P> struct FMul {
    Word operator()(Word a, Word b) const { return P::put(P::get(a) * P::get(b)); }
};
template <class P> struct FDiv {
    Word operator()(Word a, Word b) const { return P::put(P::get(a) / P::get(b)); }
};
// x - y * floor(x / y), without contraction into an fma.
template <class P> struct FMod {
    Word operator()(Word a, Word b) const {
        typename P::T x = P::get(a), y = P::get(b);
        typename P::T q = std::floor(x / y);
        typename P::T p = y * q;
        return P::put(x - p);
    }
};
// Ordered comparisons select the second operand when either is NaN.
template <class P> struct FMin {
    Word operator()(Word a, Word b) const { return P::get(a) < P::get(b) ? a : b; }
};
template <class P> struct FMax {
    Word operator()(Word a, Word b) const { return P::get(a) > P::get(b) ? a : b; }
};

// Comparisons give bools. Float EQ and the orderings are ordered (false on NaN), NE is
// unordered (true on NaN), as C++'s operators.
#define AICF_SIM_COMPARE(N, OP)                                                                    \
    template <bool S> struct I##N {                                                                \
        int shift;                                                                                 \
        Word operator()(Word a, Word b) const { return word_bool(S ? a.i OP b.i : a.u OP b.u); }   \
    };                                                                                             \
    template <class P> struct F##N {                                                               \
        Word operator()(Word a, Word b) const { return word_bool(P::get(a) OP P::get(b)); }        \
    };
AICF_SIM_COMPARE(EQ, ==)
AICF_SIM_COMPARE(NE, !=)
AICF_SIM_COMPARE(LT, <)
AICF_SIM_COMPARE(LE, <=)
AICF_SIM_COMPARE(GT, >)
AICF_SIM_COMPARE(GE, >=)
#undef AICF_SIM_COMPARE

// Bitwise operations (And, Or on bools are the same operations).
template <bool S> struct IAnd {
    int shift;
    Word operator()(Word a, Word b) const { return word_u(a.u & b.u); }
};
template <bool S> struct IOr {
    int shift;
    Word operator()(Word a, Word b) const { return word_u(a.u | b.u); }
};
template <bool S> struct IXor {
    int shift;
    Word operator()(Word a, Word b) const { return word_u(a.u ^ b.u); }
};
template <bool S> struct INot {
    int shift;
    Word operator()(Word a) const { return wrap<S>(~a.u, shift); }
};

// Shifts by the width or more (the amount read as unsigned) give 0, or the sign for signed
// right shifts.
template <bool S> struct IShl {
    int shift;
    Word operator()(Word a, Word b) const {
        uint64_t amount = (b.u << shift) >> shift, bits = uint64_t(64 - shift);
        if (amount >= bits) return word_u(0);
        return wrap<S>(a.u << amount, shift);
    }
};
template <bool S> struct IShr {
    int shift;
    Word operator()(Word a, Word b) const {
        uint64_t amount = (b.u << shift) >> shift, bits = uint64_t(64 - shift);
        if (S) return word_u(uint64_t(a.i >> (amount >= bits ? bits - 1 : amount)));
        if (amount >= bits) return word_u(0);
        return word_u(a.u >> amount);
    }
};
// Negates negative signed values; unsigned values are their own absolute value.
template <bool S> struct IAbs {
    int shift;
    Word operator()(Word a) const {
        if (!S) return a;
        int64_t v = int64_t(a.u << shift) >> shift;
        return v < 0 ? wrap<S>(uint64_t(0) - a.u, shift) : a;
    }
};

// Float math, lane by lane. The library functions are the float32 ones for float32 and the
// 16-bit formats (computed in float32), as CodeGen_Host::emit_math_call calls them.
#define AICF_SIM_FLOAT_UNARY(N, EXPR)                                                              \
    template <class P> struct N {                                                                  \
        Word operator()(Word a) const {                                                            \
            using T = typename P::T;                                                               \
            T x = P::get(a);                                                                       \
            return P::put(EXPR);                                                                   \
        }                                                                                          \
    };
AICF_SIM_FLOAT_UNARY(FAbs, std::fabs(x))
AICF_SIM_FLOAT_UNARY(FSqrt, std::sqrt(x))
AICF_SIM_FLOAT_UNARY(FRsqrt, T(1) / std::sqrt(x))
AICF_SIM_FLOAT_UNARY(FExp, std::exp(x))
AICF_SIM_FLOAT_UNARY(FLog, std::log(x))
AICF_SIM_FLOAT_UNARY(FTanh, std::tanh(x))
AICF_SIM_FLOAT_UNARY(FErf, std::erf(x))
AICF_SIM_FLOAT_UNARY(FSin, std::sin(x))
AICF_SIM_FLOAT_UNARY(FCos, std::cos(x))
AICF_SIM_FLOAT_UNARY(FFloor, std::floor(x))
AICF_SIM_FLOAT_UNARY(FCeil, std::ceil(x))
AICF_SIM_FLOAT_UNARY(FRound, std::nearbyint(x)) // ties to even in the default rounding mode
AICF_SIM_FLOAT_UNARY(FTrunc, std::trunc(x))
#undef AICF_SIM_FLOAT_UNARY

template <class P> struct FPow {
    Word operator()(Word a, Word b) const { return P::put(std::pow(P::get(a), P::get(b))); }
};
template <class P> struct FFma {
    Word operator()(Word a, Word b, Word c) const {
        return P::put(std::fma(P::get(a), P::get(b), P::get(c)));
    }
};
template <class P> struct FIsNan {
    Word operator()(Word a) const { return word_bool(std::isnan(P::get(a))); }
};
template <class P> struct FIsInf {
    Word operator()(Word a) const { return word_bool(std::isinf(P::get(a))); }
};

} // namespace sim
} // namespace backends
} // namespace aicf

#endif
