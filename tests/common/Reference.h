#ifndef AICF_TESTS_REFERENCE_H
#define AICF_TESTS_REFERENCE_H

// Helpers for correctness tests: random inputs (never zeros) and comparisons.

#include "dsl/aicf.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>

namespace aicf_test {

// Fills a buffer with uniform values in [lo, hi], skipping exact zeros.
template <typename T>
void fill_random(const aicf::Buffer<T> &b, double lo, double hi, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> dist(lo, hi);
    b.for_each_element([&](const std::vector<int> &c) {
        double v = 0;
        while (v == 0)
            v = dist(rng);
        int64_t off = 0;
        for (size_t d = 0; d < c.size(); d++)
            off += int64_t(c[d] - b.min(int(d))) * b.stride(int(d));
        T *p = b.data() + off;
        if constexpr (std::is_integral<T>::value) {
            *p = static_cast<T>(std::llround(v));
            if (*p == 0) *p = 1;
        } else {
            *p = static_cast<T>(v);
        }
    });
}

// Built with AddressSanitizer or ThreadSanitizer (whose allocators and address-space use
// differ from the system's).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

// An integer from the environment (a seed or a count for a property test), or the fallback.
inline int env_int(const char *name, int fallback) {
    const char *v = std::getenv(name);
    return v && *v ? std::atoi(v) : fallback;
}

// Relative-and-absolute closeness: |a - b| <= atol + rtol * |b|.
inline bool close(double a, double b, double rtol, double atol) {
    return std::fabs(a - b) <= atol + rtol * std::fabs(b);
}

// The mean of row j of a 2-D buffer over its first `width` points, and the sum of the squared
// deviations from it (the variance times width), in double precision: the reference of the
// norms' tests.
struct RowMoments {
    double mean = 0, squares = 0;
};
template <typename T> RowMoments row_moments(const aicf::Buffer<T> &b, int j, int width) {
    RowMoments r;
    for (int i = 0; i < width; i++)
        r.mean += double(float(b(i, j)));
    r.mean /= width;
    for (int i = 0; i < width; i++) {
        const double d = double(float(b(i, j))) - r.mean;
        r.squares += d * d;
    }
    return r;
}

// The bitwise and logical reductions of row j of a buffer of words over its first `width`
// points: the xor of the words, the or of each word & seen_mask, the and of each word |
// kept_mask, whether any word is below `below`, and whether all are above `above`.
struct BitwiseRow {
    uint32_t xor_all = 0, seen = 0, kept = ~0u;
    bool any_below = false, all_above = true;
};
inline BitwiseRow bitwise_row(const aicf::Buffer<uint32_t> &w, int j, int width, uint32_t seen_mask,
                              uint32_t kept_mask, uint32_t below, uint32_t above) {
    BitwiseRow r;
    for (int i = 0; i < width; i++) {
        r.xor_all ^= w(i, j);
        r.seen |= w(i, j) & seen_mask;
        r.kept &= w(i, j) | kept_mask;
        r.any_below = r.any_below || w(i, j) < below;
        r.all_above = r.all_above && w(i, j) > above;
    }
    return r;
}

} // namespace aicf_test

#endif
