// Conversions of floats into integers, the values that test them, and what each must give:
// towards zero, saturated at the type's ends, NaN to zero. Shared by the host and GPU tests.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace aicf_test {

// The ends of every integer type and the floats on either side of them, halves and values
// just inside and outside (0, 1), infinities, NaN, subnormals, and a spread of magnitudes,
// each of both signs. All are exact in double; as floats they round to nearby floats.
inline std::vector<double> hard_float_to_int_inputs() {
    std::vector<double> v = {0.0,      0.5,       0.99999994, 1.0,   1.5,      2.5,
                             0x1p-149, 0x1p-1074, 1e30,       1e300, INFINITY, NAN};
    for (int k : {7, 8, 15, 16, 23, 24, 25, 31, 32, 52, 53, 54, 63, 64}) {
        const double p = std::ldexp(1.0, k);
        for (double d : {-1.0, -0.5, 0.0, 0.5, 1.0})
            v.push_back(p + d);
        // The floats and doubles just below and above 2^k.
        v.push_back(double(std::nextafter(float(p), 0.0f)));
        v.push_back(double(std::nextafter(float(p), INFINITY)));
        v.push_back(std::nextafter(p, 0.0));
        v.push_back(std::nextafter(p, INFINITY));
    }
    for (int e = -3; e <= 70; e += 3)
        v.push_back(std::ldexp(1.37, e));
    const size_t n = v.size();
    for (size_t i = 0; i < n; i++)
        v.push_back(-v[i]);
    return v;
}

// The value f (already in its float type, held in a double) converted to T.
template <typename T> T converted_float(double f) {
    if (std::isnan(f)) return T(0);
    const long double t = std::trunc((long double)f); // exact: long double holds any double
    if (t <= (long double)std::numeric_limits<T>::lowest()) return std::numeric_limits<T>::lowest();
    if (t >= (long double)std::numeric_limits<T>::max()) return std::numeric_limits<T>::max();
    return T(t);
}

} // namespace aicf_test
