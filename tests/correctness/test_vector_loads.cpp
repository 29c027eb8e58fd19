// Vector loads whose lanes are not one dense ramp: strided (a downsample), halved (an
// upsample), reversed, divided by 3. On the host, lanes at constant distances from the first
// lane of their class are read with dense loads of the span they cover and a shuffle; the
// rest are gathered. Either way the values are those of a plain loop.

#include "Reference.h"
#include "ScopedEnv.h"

#include <cstdint>
#include <functional>
#include <string>

using namespace aicf;
using aicf_test::fill_random;

namespace {

int floor_div(int a, int b) {
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// The optimized LLVM module of f realized over `width` points (AICF_DEBUG=3 prints it).
template <typename T> std::string optimized_module(Func f, int width, Buffer<T> &out) {
    aicf_test::ScopedEnv debug("AICF_DEBUG", "3");
    ::testing::internal::CaptureStderr();
    out = Buffer<T>(width);
    f.realize(out);
    return ::testing::internal::GetCapturedStderr();
}

// Each pattern of index, for one element type and vector width, over outputs of several
// widths and positions (vectors split with a guarded tail, so the steady state reads whole
// vectors and the tail masked ones), against a loop over the same input.
template <typename T> void check_patterns(int lanes, unsigned seed) {
    const int N = 700;
    Buffer<T> in(N);
    fill_random(in, T(0), T(100), seed);
    in.set_min({-100});
    auto at = [&](int i) { return in(i); };
    struct Pattern {
        std::string name;
        std::function<Expr(Var)> value;
        std::function<T(int)> want;
    };
    const std::vector<Pattern> patterns = {
        {"stride 2", [&](Var x) { return in(2 * x) + in(2 * x + 1); },
         [&](int i) { return T(at(2 * i) + at(2 * i + 1)); }},
        {"stride 3", [&](Var x) { return in(3 * x + 2) - in(3 * x); },
         [&](int i) { return T(at(3 * i + 2) - at(3 * i)); }},
        {"stride 4", [&](Var x) { return in(4 * x - 1) * T(3); },
         [&](int i) { return T(at(4 * i - 1) * T(3)); }},
        {"halved", [&](Var x) { return in(x / 2) + in((x + 1) / 2) * T(2); },
         [&](int i) { return T(at(floor_div(i, 2)) + at(floor_div(i + 1, 2)) * T(2)); }},
        {"quartered", [&](Var x) { return in(x / 4 + 3); },
         [&](int i) { return at(floor_div(i, 4) + 3); }},
        {"divided by 3", [&](Var x) { return in(x / 3); },
         [&](int i) { return at(floor_div(i, 3)); }},
        {"reversed", [&](Var x) { return in(100 - x); }, [&](int i) { return at(100 - i); }},
        {"stride -2", [&](Var x) { return in(300 - 2 * x); },
         [&](int i) { return at(300 - 2 * i); }},
    };
    for (const Pattern &p : patterns) {
        Var x("x"), xo("xo"), xi("xi");
        Func f("f");
        f(x) = p.value(x);
        f.split(x, xo, xi, lanes, TailStrategy::GuardWithIf).vectorize(xi);
        for (auto [x0, W] : {std::pair{0, 3 * lanes}, {-17, 61}, {5, lanes + 3}, {-10, 1}}) {
            Buffer<T> out(W);
            out.set_min({x0});
            f.realize(out);
            for (int i = x0; i < x0 + W; i++)
                ASSERT_EQ(out(i), p.want(i)) << p.name << ", " << lanes << " lanes, at " << i;
        }
    }
}

} // namespace

TEST(VectorLoads, StridedHalvedAndReversedIndicesAgreeWithAPlainLoop) {
    check_patterns<float>(8, 1);
    check_patterns<float>(16, 2);
    check_patterns<int16_t>(16, 3);
    check_patterns<uint8_t>(32, 4);
    check_patterns<int32_t>(4, 5);
}

// The loads of a downsample by 2 and of an upsample by 2 (whose even and odd lanes are two
// dense ramps, from either parity of the output's start) are dense loads and shuffles: the
// optimized module gathers nothing.
TEST(VectorLoads, ADownsampleAndAnUpsampleGatherNothing) {
    Buffer<float> in(300);
    fill_random(in, -1.0f, 1.0f, 7);
    Var x("x");
    Func down("down"), up("up");
    down(x) = (in(2 * x) + in(2 * x + 1)) * 0.5f;
    down.vectorize(x, 16);
    up(x) = in(x / 2) * 0.75f + in((x + 1) / 2) * 0.25f;
    up.vectorize(x, 16);
    Buffer<float> out;
    std::string module = optimized_module(down, 100, out);
    EXPECT_EQ(module.find("gather"), std::string::npos) << module;
    EXPECT_NE(module.find("shufflevector <16 x float>"), std::string::npos) << module;
    for (int i = 0; i < 100; i++)
        ASSERT_EQ(out(i), (in(2 * i) + in(2 * i + 1)) * 0.5f) << i;
    module = optimized_module(up, 100, out);
    EXPECT_EQ(module.find("gather"), std::string::npos) << module;
    for (int i = 0; i < 100; i++)
        ASSERT_EQ(out(i), in(i / 2) * 0.75f + in((i + 1) / 2) * 0.25f) << i;
    // From an odd start the classes swap: the lanes at even positions read (x0 + 1) / 2 on.
    Buffer<float> odd(97);
    odd.set_min({3});
    up.realize(odd);
    for (int i = 3; i < 100; i++)
        ASSERT_EQ(odd(i), in(i / 2) * 0.75f + in((i + 1) / 2) * 0.25f) << i;
}
