#include "dsl/base/Float16.h"

#include <cmath>

namespace aicf {
namespace detail {

uint16_t round_to_small_float(double v, int exponent_bits, int mantissa_bits) {
    const int bias = (1 << (exponent_bits - 1)) - 1;
    const uint16_t sign = std::signbit(v) ? uint16_t(1u << (exponent_bits + mantissa_bits)) : 0;
    const uint16_t exp_mask = uint16_t(((1u << exponent_bits) - 1) << mantissa_bits);
    if (std::isnan(v)) return sign | exp_mask | uint16_t(1u << (mantissa_bits - 1));
    double a = std::fabs(v);
    if (std::isinf(a)) return sign | exp_mask;
    if (a == 0) return sign;

    int e2 = 0;
    std::frexp(a, &e2);
    int exponent = e2 - 1; // a = 1.f * 2^exponent
    const int min_normal_exponent = 1 - bias;
    // The spacing of representable values near `a`: fixed below the normal range.
    int quantum_exponent = std::max(exponent, min_normal_exponent) - mantissa_bits;
    double rounded = std::rint(std::ldexp(a, -quantum_exponent)); // ties to even
    double value = std::ldexp(rounded, quantum_exponent);
    if (value >= std::ldexp(1.0, bias + 1)) return sign | exp_mask; // overflow to infinity
    if (value == 0) return sign;

    std::frexp(value, &e2);
    exponent = e2 - 1;
    if (exponent < min_normal_exponent) {
        uint16_t mantissa = uint16_t(std::ldexp(value, bias - 1 + mantissa_bits));
        return sign | mantissa;
    }
    uint16_t biased = uint16_t(exponent + bias);
    uint16_t mantissa = uint16_t(std::ldexp(std::ldexp(value, -exponent) - 1.0, mantissa_bits));
    return sign | uint16_t(biased << mantissa_bits) | mantissa;
}

double small_float_to_double(uint16_t bits, int exponent_bits, int mantissa_bits) {
    const int bias = (1 << (exponent_bits - 1)) - 1;
    const bool negative = (bits >> (exponent_bits + mantissa_bits)) & 1;
    const int biased = (bits >> mantissa_bits) & ((1 << exponent_bits) - 1);
    const int mantissa = bits & ((1 << mantissa_bits) - 1);
    double value;
    if (biased == (1 << exponent_bits) - 1) {
        value = mantissa ? NAN : INFINITY;
    } else if (biased == 0) {
        value = std::ldexp(double(mantissa), 1 - bias - mantissa_bits);
    } else {
        value = std::ldexp(1.0 + std::ldexp(double(mantissa), -mantissa_bits), biased - bias);
    }
    return negative ? -value : value;
}

} // namespace detail
} // namespace aicf
