#ifndef AICF_BASE_FLOAT16_H
#define AICF_BASE_FLOAT16_H

// Host-side 16-bit float types: IEEE binary16 (float16_t) and bfloat16 (bfloat16_t).
// Conversions from float and double round to nearest, ties to even, in one step (no double
// rounding through float); overflow gives infinity, NaN stays NaN.

#include <cstdint>

namespace aicf {

namespace detail {
uint16_t round_to_small_float(double v, int exponent_bits, int mantissa_bits);
double small_float_to_double(uint16_t bits, int exponent_bits, int mantissa_bits);
} // namespace detail

struct float16_t {
    uint16_t bits = 0;

    float16_t() = default;
    explicit float16_t(double v) : bits(detail::round_to_small_float(v, 5, 10)) {}
    explicit float16_t(float v) : float16_t(static_cast<double>(v)) {}
    explicit float16_t(int v) : float16_t(static_cast<double>(v)) {}
    static float16_t from_bits(uint16_t b) {
        float16_t r;
        r.bits = b;
        return r;
    }
    explicit operator double() const { return detail::small_float_to_double(bits, 5, 10); }
    explicit operator float() const { return static_cast<float>(static_cast<double>(*this)); }
    bool operator==(const float16_t &o) const { return static_cast<double>(*this) == double(o); }
    bool operator!=(const float16_t &o) const { return !(*this == o); }
};

struct bfloat16_t {
    uint16_t bits = 0;

    bfloat16_t() = default;
    explicit bfloat16_t(double v) : bits(detail::round_to_small_float(v, 8, 7)) {}
    explicit bfloat16_t(float v) : bfloat16_t(static_cast<double>(v)) {}
    explicit bfloat16_t(int v) : bfloat16_t(static_cast<double>(v)) {}
    static bfloat16_t from_bits(uint16_t b) {
        bfloat16_t r;
        r.bits = b;
        return r;
    }
    explicit operator double() const { return detail::small_float_to_double(bits, 8, 7); }
    explicit operator float() const { return static_cast<float>(static_cast<double>(*this)); }
    bool operator==(const bfloat16_t &o) const { return double(*this) == double(o); }
    bool operator!=(const bfloat16_t &o) const { return !(*this == o); }
};

} // namespace aicf

#endif
