// float16 and bfloat16: host conversions and storage in pipelines.

#include "Reference.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>

using namespace aicf;

namespace {

// Round to nearest even by exhaustive search over the representable neighbours.
template <typename T> uint16_t reference_round(double v) {
    uint16_t best = 0;
    double best_err = INFINITY;
    for (uint32_t bits = 0; bits < 65536; bits++) {
        double c = double(T::from_bits(uint16_t(bits)));
        if (std::isnan(c) || std::signbit(c) != std::signbit(v)) continue;
        double err = std::fabs(c - v);
        if (err < best_err || (err == best_err && (bits & 1) == 0)) {
            best_err = err;
            best = uint16_t(bits);
        }
    }
    return best;
}

} // namespace

TEST(Float16, HostConversionRoundsToNearestEven) {
    std::mt19937 rng(21);
    std::uniform_real_distribution<double> mantissa(1.0, 2.0);
    std::uniform_int_distribution<int> exponent(-26, 15);
    for (int i = 0; i < 300; i++) {
        double v = std::ldexp(mantissa(rng), exponent(rng)) * (i % 2 ? -1 : 1);
        EXPECT_EQ(float16_t(v).bits, reference_round<float16_t>(v)) << v;
    }
    // Ties: 1 + 2^-11 lies halfway between 1 and 1 + 2^-10 and rounds to the even 1.
    EXPECT_EQ(float16_t(1.0 + std::ldexp(1.0, -11)).bits, float16_t(1.0).bits);
    EXPECT_EQ(float(float16_t(65504.0)), 65504.0f);
    EXPECT_TRUE(std::isinf(float(float16_t(65520.0))));
    EXPECT_TRUE(std::isnan(float(float16_t(NAN))));
    EXPECT_EQ(float(float16_t(std::ldexp(1.0, -24))), std::ldexp(1.0f, -24)); // smallest subnormal
}

TEST(BFloat16, HostConversionRoundsToNearestEven) {
    std::mt19937 rng(22);
    std::uniform_real_distribution<double> mantissa(1.0, 2.0);
    std::uniform_int_distribution<int> exponent(-130, 120);
    for (int i = 0; i < 300; i++) {
        double v = std::ldexp(mantissa(rng), exponent(rng)) * (i % 2 ? -1 : 1);
        EXPECT_EQ(bfloat16_t(v).bits, reference_round<bfloat16_t>(v)) << v;
    }
    EXPECT_EQ(bfloat16_t(1.0 + std::ldexp(1.0, -8)).bits, bfloat16_t(1.0).bits);
    EXPECT_EQ(float(bfloat16_t(3.0)), 3.0f);
}

TEST(Float16, PipelineRoundTripMatchesHost) {
    const int N = 4096;
    Buffer<float> in(N);
    std::mt19937 rng(23);
    std::uniform_real_distribution<double> mantissa(1.0, 2.0);
    std::uniform_int_distribution<int> exponent(-28, 17);
    for (int i = 0; i < N; i++)
        in(i) = float(std::ldexp(mantissa(rng), exponent(rng)) * (i % 3 ? 1 : -1));
    Var x("x");
    Func to_half("to_half"), to_bf("to_bf"), back("back");
    to_half(x) = cast<float16_t>(in(x));
    to_bf(x) = cast<bfloat16_t>(in(x));
    Buffer<float16_t> h = to_half.realize({N});
    Buffer<bfloat16_t> bf = to_bf.realize({N});
    for (int i = 0; i < N; i++) {
        ASSERT_EQ(h(i).bits, float16_t(in(i)).bits) << in(i);
        ASSERT_EQ(bf(i).bits, bfloat16_t(in(i)).bits) << in(i);
    }
    back(x) = cast<float>(to_half(x)) + cast<float>(to_bf(x));
    Buffer<float> sum = back.realize({N});
    for (int i = 0; i < N; i++)
        ASSERT_EQ(sum(i), float(h(i)) + float(bf(i)));
}

TEST(Float16, ArithmeticRoundsEachOperation) {
    const int N = 257;
    Buffer<float16_t> a(N), b(N);
    std::mt19937 rng(24);
    std::uniform_real_distribution<double> dist(-4.0, 4.0);
    for (int i = 0; i < N; i++) {
        a(i) = float16_t(dist(rng));
        b(i) = float16_t(dist(rng));
    }
    Var x("x");
    Func f("f");
    f(x) = a(x) * b(x) + a(x);
    Buffer<float16_t> out = f.realize({N});
    for (int i = 0; i < N; i++) {
        float16_t prod(float(a(i)) * float(b(i)));
        float16_t ref(float(prod) + float(a(i)));
        ASSERT_EQ(out(i).bits, ref.bits) << i;
    }
}

// sigmoid of a 16-bit float is computed in float32 and rounded once, as exp and the other
// math functions are: over every float16 and every bfloat16, the result is the double-precision
// value rounded to the type, or its neighbour where float32's error straddles a halfway point.
TEST(Float16, SigmoidRoundsOnce) {
    const int N = 1 << 16;
    Buffer<float16_t> h(N);
    Buffer<bfloat16_t> bf(N);
    for (int i = 0; i < N; i++) {
        h(i).bits = uint16_t(i);
        bf(i).bits = uint16_t(i);
    }
    Var x("x");
    Func sh("sh"), sb("sb");
    sh(x) = sigmoid(h(x));
    sb(x) = sigmoid(bf(x));
    sh.vectorize(x, 8);
    Buffer<float16_t> got_h = sh.realize({N});
    Buffer<bfloat16_t> got_b = sb.realize({N});
    // The results that are neither the correctly rounded value nor as close as it.
    auto not_rounded_once = [](const auto &input, const auto &got) {
        using T = std::decay_t<decltype(got(0))>;
        int off = 0;
        for (int i = 0; i < got.extent(0); i++) {
            const double v = float(input(i));
            if (std::isnan(v)) continue;
            const double exact = 1.0 / (1.0 + std::exp(-v));
            const T want(exact);
            off += std::abs(int(got(i).bits) - int(want.bits)) > 1;
            off += got(i).bits != want.bits && std::fabs(float(got(i)) - exact) >
                                                   std::fabs(float(want) - exact) * 1.001 + 1e-12;
        }
        return off;
    };
    EXPECT_EQ(not_rounded_once(h, got_h), 0) << "float16 results not rounded once";
    EXPECT_EQ(not_rounded_once(bf, got_b), 0) << "bfloat16 results not rounded once";
}
