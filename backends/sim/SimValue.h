#ifndef AICF_BACKENDS_SIM_SIMVALUE_H
#define AICF_BACKENDS_SIM_SIMVALUE_H

// The values of the simulator's interpreter: one 64-bit Word per element, and the conversions
// between them, to and from memory, bit for bit as AICF's CPU code generator does them
// (backends/llvm/CodeGen_LLVM.cpp).
//
// An element of type t lives in a Word as:
//   signed integers            sign-extended to 64 bits (field i)
//   unsigned integers, bool    zero-extended to 64 bits (field u)
//   float32, float16, bfloat16 a float (field f); 16-bit floats hold values their format
//                              represents exactly, and arithmetic on them is float32
//                              arithmetic rounded back after every operation
//   float64                    a double (field d)

#include "dsl/ir/Type.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace aicf {
namespace backends {
namespace sim {

union Word {
    int64_t i;
    uint64_t u;
    float f;
    double d;
};

inline Word word_u(uint64_t v) {
    Word w;
    w.u = v;
    return w;
}

inline Word word_f(float v) {
    Word w;
    w.u = 0;
    w.f = v;
    return w;
}

inline Word word_d(double v) {
    Word w;
    w.d = v;
    return w;
}

// How elements of a type are computed on.
enum class Kind : uint8_t { Int, UInt, F16, BF16, F32, F64 };

// The kind of a type's elements; an internal error for types a kernel has no values of.
Kind kind_of(ir::Type t);

inline bool is_float_kind(Kind k) {
    return k >= Kind::F16;
}

// The shift that wraps a 64-bit word to `bits` bits: (x << s) >> s.
inline int wrap_shift(int bits) {
    return 64 - bits;
}

template <bool Signed> inline Word wrap(uint64_t x, int shift) {
    if (Signed) return word_u(uint64_t(int64_t(x << shift) >> shift));
    return word_u((x << shift) >> shift);
}

inline Word wrap_to(uint64_t x, Kind k, int bits) {
    return k == Kind::Int ? wrap<true>(x, wrap_shift(bits)) : wrap<false>(x, wrap_shift(bits));
}

inline uint32_t float_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

inline float bits_float(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

// The code generator's float16 widening: place exponent and mantissa, rescale by 2^112
// (which also handles subnormals), restore infinity/NaN exponents and the sign.
inline float half_to_float(uint16_t h) {
    uint32_t w = h;
    float scaled = bits_float((w & 0x7fffu) << 13) * 0x1p112f;
    uint32_t s = float_bits(scaled);
    if (scaled >= 65536.0f) s |= 0x7f800000u;
    return bits_float(s | ((w & 0x8000u) << 16));
}

// The code generator's float16 narrowing: round to nearest even, overflow to infinity, NaN to
// a quiet NaN.
inline uint16_t float_to_half(float f) {
    uint32_t u = float_bits(f);
    uint32_t sign = u & 0x80000000u;
    uint32_t a = u ^ sign;
    uint32_t r;
    if (a >= uint32_t(127 + 16) << 23) {
        r = a > uint32_t(255) << 23 ? 0x7e00u : 0x7c00u;
    } else if (a < uint32_t(113) << 23) {
        // Subnormal results: the float adder rounds, against a magic constant.
        const uint32_t magic = uint32_t((127 - 15) + (23 - 10) + 1) << 23;
        r = float_bits(bits_float(a) + bits_float(magic)) - magic;
    } else {
        uint32_t odd = (a >> 13) & 1u;
        r = (a + (uint32_t(uint32_t(15 - 127) << 23) + 0xfffu) + odd) >> 13;
    }
    return uint16_t(r | (sign >> 16));
}

inline float bfloat_to_float(uint16_t h) {
    return bits_float(uint32_t(h) << 16);
}

inline uint16_t float_to_bfloat(float f) {
    uint32_t u = float_bits(f);
    if (std::isnan(f)) return uint16_t((u | 0x00400000u) >> 16);
    uint32_t lsb = (u >> 16) & 1u;
    return uint16_t((u + lsb + 0x7fffu) >> 16);
}

inline float round_to_half(float f) {
    return half_to_float(float_to_half(f));
}
inline float round_to_bfloat(float f) {
    return bfloat_to_float(float_to_bfloat(f));
}

// A float64 as the float32 rounded to odd (truncated, the last bit set when anything was lost),
// as CodeGen_LLVM::to_float_round_to_odd: narrowing that to 16 bits rounds the value once.
inline float to_float_round_to_odd(double v) {
    float r = float(v);
    double back = double(r);
    if (std::isnan(v) || back == v) return r;
    uint32_t bits = float_bits(r);
    if (std::fabs(back) > std::fabs(v)) bits -= 1;
    return bits_float(bits | 1u);
}

// An integer (its magnitude and sign) as the float32 rounded to odd.
inline float to_float_round_to_odd(uint64_t magnitude, bool negative) {
    int length = 0;
    while (length < 64 && (magnitude >> length) != 0)
        length++;
    int shift = length > 24 ? length - 24 : 0;
    uint64_t kept = magnitude >> shift;
    if (shift && (magnitude & ((uint64_t(1) << shift) - 1))) kept |= 1;
    float r = std::ldexp(float(kept), shift);
    return negative ? -r : r;
}

// A float32 result narrowed to the 16-bit format of `k` (identity for float32).
inline float narrow(float f, Kind k) {
    if (k == Kind::F16) return round_to_half(f);
    if (k == Kind::BF16) return round_to_bfloat(f);
    return f;
}

// A 16-bit float as memory holds it. A NaN that a load widened keeps its payload in the
// float's top mantissa bits and is written back as it was: a copy or a reinterpret changes
// no bit, as ld.b16 / st.b16 on a GPU. Results of arithmetic were narrowed already.
inline uint16_t stored_half(float f) {
    const uint32_t u = float_bits(f);
    if (!std::isnan(f) || (u & 0x1fffu) != 0) return float_to_half(f);
    return uint16_t(((u >> 16) & 0x8000u) | 0x7c00u | ((u >> 13) & 0x3ffu));
}
inline uint16_t stored_bfloat(float f) {
    const uint32_t u = float_bits(f);
    if (!std::isnan(f) || (u & 0xffffu) != 0) return float_to_bfloat(f);
    return uint16_t(u >> 16);
}

// Memory holds elements in their storage encoding (bool as one byte, 16-bit floats as their
// 16-bit patterns), little-endian as the host.
inline Word read_element(const uint8_t *p, Kind k, int bits) {
    switch (k) {
    case Kind::Int:
        switch (bits) {
        case 8:
            return word_u(uint64_t(int64_t(int8_t(p[0]))));
        case 16: {
            int16_t v;
            std::memcpy(&v, p, 2);
            return word_u(uint64_t(int64_t(v)));
        }
        case 32: {
            int32_t v;
            std::memcpy(&v, p, 4);
            return word_u(uint64_t(int64_t(v)));
        }
        default: {
            int64_t v;
            std::memcpy(&v, p, 8);
            return word_u(uint64_t(v));
        }
        }
    case Kind::UInt:
        switch (bits) {
        case 1:
            return word_u(p[0] & 1u);
        case 8:
            return word_u(p[0]);
        case 16: {
            uint16_t v;
            std::memcpy(&v, p, 2);
            return word_u(v);
        }
        case 32: {
            uint32_t v;
            std::memcpy(&v, p, 4);
            return word_u(v);
        }
        default: {
            uint64_t v;
            std::memcpy(&v, p, 8);
            return word_u(v);
        }
        }
    case Kind::F16:
    case Kind::BF16: {
        uint16_t v;
        std::memcpy(&v, p, 2);
        return word_f(k == Kind::F16 ? half_to_float(v) : bfloat_to_float(v));
    }
    case Kind::F32: {
        float v;
        std::memcpy(&v, p, 4);
        return word_f(v);
    }
    case Kind::F64: {
        double v;
        std::memcpy(&v, p, 8);
        return word_d(v);
    }
    }
    return word_u(0);
}

inline void write_element(uint8_t *p, Kind k, int bits, Word w) {
    switch (k) {
    case Kind::Int:
    case Kind::UInt: {
        uint64_t v = w.u;
        std::memcpy(p, &v, bits == 1 ? 1 : bits / 8); // little-endian: the low bytes
        return;
    }
    case Kind::F16:
    case Kind::BF16: {
        uint16_t v = k == Kind::F16 ? stored_half(w.f) : stored_bfloat(w.f);
        std::memcpy(p, &v, 2);
        return;
    }
    case Kind::F32:
        std::memcpy(p, &w.f, 4);
        return;
    case Kind::F64:
        std::memcpy(p, &w.d, 8);
        return;
    }
}

// A numeric conversion, as CodeGen_LLVM::codegen_cast: 16-bit floats go through float32;
// float to integer truncates and saturates, with NaN to 0; integer narrowing wraps.
struct Conversion {
    Kind from, to;
    int from_bits, to_bits;

    Word operator()(Word w) const {
        bool from_float = is_float_kind(from), to_float = is_float_kind(to);
        if (to == Kind::UInt && to_bits == 1) {
            if (!from_float) return word_u(w.u != 0);
            return word_u(from == Kind::F64 ? w.d != 0.0 : w.f != 0.0f); // une: NaN is true
        }
        if (!from_float && !to_float) return wrap_to(w.u, to, to_bits);
        if (!from_float) {
            bool s = from == Kind::Int;
            if (to == Kind::F64) return word_d(s ? double(w.i) : double(w.u));
            if (to == Kind::F32) return word_f(s ? float(w.i) : float(w.u));
            // Into 16 bits: rounded once (see to_float_round_to_odd).
            bool negative = s && w.i < 0;
            uint64_t magnitude = negative ? uint64_t(0) - w.u : w.u;
            return word_f(narrow(to_float_round_to_odd(magnitude, negative), to));
        }
        if (to_float) {
            if (to == Kind::F64) return word_d(from == Kind::F64 ? w.d : double(w.f));
            if (from == Kind::F64)
                return word_f(
                    narrow(to == Kind::F32 ? float(w.d) : to_float_round_to_odd(w.d), to));
            return word_f(narrow(w.f, to));
        }
        double v = from == Kind::F64 ? w.d : double(w.f);
        if (std::isnan(v)) return word_u(0);
        if (to == Kind::Int) {
            double limit = std::ldexp(1.0, to_bits - 1);
            uint64_t top = uint64_t(1) << (to_bits - 1);
            if (v >= limit) return word_u(top - 1);
            if (v <= -limit) return word_u(uint64_t(0) - top);
            return word_u(uint64_t(int64_t(v)));
        }
        if (!(v > 0.0)) return word_u(0);
        if (v >= std::ldexp(1.0, to_bits)) {
            return word_u(to_bits == 64 ? ~uint64_t(0) : (uint64_t(1) << to_bits) - 1);
        }
        return word_u(uint64_t(v));
    }
};

} // namespace sim
} // namespace backends
} // namespace aicf

#endif
