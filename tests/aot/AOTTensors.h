#ifndef AICF_TESTS_AOT_AOT_TENSORS_H
#define AICF_TESTS_AOT_AOT_TENSORS_H

// What the ahead-of-time tests share: DLTensors over AICF buffers, random inputs, and the
// bit-for-bit comparison of two results.

#include "Reference.h"
#include "dsl/aicf.h"

#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace aicf_test {

using aicf::Buffer;

template <typename T> DLDataType dl_type() {
    if constexpr (std::is_same_v<T, float>) return {kDLFloat, 32, 1};
    if constexpr (std::is_same_v<T, uint16_t>) return {kDLUInt, 16, 1};
    if constexpr (std::is_same_v<T, uint8_t>) return {kDLUInt, 8, 1};
    if constexpr (std::is_same_v<T, uint32_t>) return {kDLUInt, 32, 1};
    return {kDLInt, 32, 1};
}

// A DLTensor over an AICF buffer (which counts dimensions from the innermost).
struct Tensor {
    std::vector<int64_t> shape, strides;
    DLTensor t{};
    template <typename T> explicit Tensor(const Buffer<T> &b) {
        const int n = b.dimensions();
        for (int axis = 0; axis < n; axis++) {
            shape.push_back(b.extent(n - 1 - axis));
            strides.push_back(b.stride(n - 1 - axis));
        }
        t.data = b.data();
        t.device = {kDLCPU, 0};
        t.ndim = n;
        t.dtype = dl_type<T>();
        t.shape = shape.data();
        t.strides = strides.data();
    }
    DLTensor *operator&() { return &t; }
};

template <typename T>
Buffer<T> random_buffer(const std::vector<int> &extents, unsigned seed, double lo, double hi) {
    Buffer<T> b(extents);
    aicf_test::fill_random(b, lo, hi, seed);
    return b;
}

template <typename T> void expect_same_bits(const Buffer<T> &a, const Buffer<T> &b) {
    ASSERT_EQ(a.dimensions(), b.dimensions());
    bool same = true;
    a.for_each_element([&](const std::vector<int> &c) {
        int64_t oa = 0, ob = 0;
        for (size_t i = 0; i < c.size(); i++) {
            oa += int64_t(c[i] - a.min(int(i))) * a.stride(int(i));
            ob += int64_t(c[i] - b.min(int(i))) * b.stride(int(i));
        }
        if (std::memcmp(a.data() + oa, b.data() + ob, sizeof(T)) != 0) same = false;
    });
    EXPECT_TRUE(same) << "the ahead-of-time and JIT results differ";
}

// The RMS norm of each row of `in` scaled by `weight` (epsilon 1e-5), against a loop in
// double precision.
inline void expect_rms_norm(const Buffer<float> &out, const Buffer<float> &in,
                            const Buffer<float> &weight) {
    const int W = in.width(), H = in.height();
    for (int y = 0; y < H; y++) {
        double ss = 0;
        for (int x = 0; x < W; x++)
            ss += double(in(x, y)) * in(x, y);
        const double scale = 1.0 / std::sqrt(ss / W + 1e-5);
        for (int x = 0; x < W; x++)
            ASSERT_NEAR(out(x, y), in(x, y) * scale * weight(x), 1e-4) << x << ", " << y;
    }
}

} // namespace aicf_test

#endif
