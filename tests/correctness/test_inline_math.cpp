// float32 exp, log, tanh and erf, which host code computes inline (backends/llvm/InlineMath.h), and
// sigmoid built on exp, against the C library's double-precision functions rounded to float:
// the error in ulps of the correctly rounded result, over float32 inputs spread across the
// whole range (every stride-th bit pattern of both signs: subnormals, normals, the overflow
// and underflow edges) and the special values (zeros, infinities, NaN). Vector code must give
// scalar code's bits. The target -libm keeps the library calls instead.
//
// AICF_MATH_STRIDE sets the stride (default 4099; 1 runs all 2^32 inputs, about a minute
// per function on two cores).

#include "Reference.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using namespace aicf;
using aicf_test::env_int;

namespace {

float from_bits(uint32_t b) {
    float f;
    std::memcpy(&f, &b, 4);
    return f;
}

// The spacing of float32 values at the float nearest v (the least subnormal below 2^-126).
double ulp_at(double v) {
    const double a = std::fabs(v);
    if (a < 0x1p-126) return 0x1p-149;
    return std::ldexp(1.0, std::ilogb(a) - 23);
}

struct MathFunction {
    const char *name;
    std::function<Expr(Expr)> aicf;
    double (*reference)(double);
    double bound_ulps; // what the README and InlineMath.h promise
};

double sigmoid_reference(double x) {
    return 1.0 / (1.0 + std::exp(-x));
}

const MathFunction functions[] = {
    {"exp", [](Expr e) { return exp(e); }, [](double x) { return std::exp(x); }, 1.0},
    {"log", [](Expr e) { return log(e); }, [](double x) { return std::log(x); }, 1.0},
    {"tanh", [](Expr e) { return tanh(e); }, [](double x) { return std::tanh(x); }, 2.0},
    {"erf", [](Expr e) { return erf(e); }, [](double x) { return std::erf(x); }, 2.0},
    {"sigmoid", [](Expr e) { return sigmoid(e); }, sigmoid_reference, 3.0},
};

struct Worst {
    double ulps = 0;
    float input = 0;
    float got = 0;
    std::string problem; // a special value handled wrongly
};

// Checks `got` against the reference at x; records the largest error.
void check(const MathFunction &f, float x, float got, Worst &worst) {
    const double want = f.reference(double(x));
    if (std::isnan(want)) {
        if (!std::isnan(got) && worst.problem.empty())
            worst.problem = std::string(f.name) + "(" + std::to_string(x) + ") gave " +
                            std::to_string(got) + ", not NaN";
        return;
    }
    const float rounded = float(want);
    if (std::isinf(rounded) || std::isinf(got)) {
        // Overflow: infinity, or the largest float where the exact value is within an ulp.
        const bool fine = got == rounded || (std::isinf(rounded) && std::fabs(got) == FLT_MAX &&
                                             std::signbit(got) == std::signbit(rounded));
        if (!fine && worst.problem.empty())
            worst.problem = std::string(f.name) + "(" + std::to_string(x) + ") gave " +
                            std::to_string(got) + ", want " + std::to_string(rounded);
        return;
    }
    // A zero keeps the reference's sign (tanh(-0) = -0, as libm and the GPU give).
    if (got == 0 && rounded == 0 && std::signbit(got) != std::signbit(rounded) &&
        worst.problem.empty())
        worst.problem = std::string(f.name) + "(" + std::to_string(x) +
                        ") gave a zero of the "
                        "wrong sign";
    const double ulps = std::fabs(double(got) - want) / ulp_at(rounded);
    if (ulps > worst.ulps) {
        worst.ulps = ulps;
        worst.input = x;
        worst.got = got;
    }
}

std::vector<float> special_values() {
    return {0.0f,     -0.0f,      INFINITY,   -INFINITY,  NAN,     FLT_MIN,  -FLT_MIN, FLT_MAX,
            -FLT_MAX, 0x1p-149f,  -0x1p-149f, 0x1p-140f,  88.72f,  88.7228f, 88.73f,   89.0f,
            -87.33f,  -103.9f,    -103.97f,   -104.0f,    -150.0f, 1.0f,     -1.0f,    0.625f,
            -0.625f,  0.62499f,   9.0f,       -9.0f,      44.0f,   1e-30f,   -1e-30f,  0.5f,
            2.0f,     0.6931472f, 1.0000001f, 0.99999994f};
}

// The largest error of f's inline code over the inputs and the special values, and whether
// vector and scalar code gave the same bits.
Worst measure(const MathFunction &f, uint32_t stride, const Target &target) {
    ImageParam in(Float(32), 1, "math_in");
    Var x("x");
    Func scalar("math_scalar"), vector("math_vector");
    scalar(x) = f.aicf(in(x));
    vector(x) = f.aicf(in(x));
    vector.vectorize(x, 16, TailStrategy::GuardWithIf);
    Callable run_scalar = Pipeline(scalar).compile_to_callable(target);
    Callable run_vector = Pipeline(vector).compile_to_callable(target);
    Worst worst;
    const int chunk = 1 << 20;
    Buffer<float> input({chunk}), got({chunk}), got_scalar({chunk});
    int n = 0;
    auto flush = [&] {
        if (n == 0) return;
        Buffer<float> part_in(input.data(), std::vector<int>{n}),
            part_out(got.data(), std::vector<int>{n}),
            part_scalar(got_scalar.data(), std::vector<int>{n});
        run_vector(part_in, part_out);
        run_scalar(part_in, part_scalar);
        for (int i = 0; i < n; i++) {
            if (std::memcmp(&got(i), &got_scalar(i), 4) != 0 && worst.problem.empty())
                worst.problem = std::string(f.name) + "(" + std::to_string(input(i)) +
                                "): vector code gave other bits than scalar code";
            check(f, input(i), got(i), worst);
        }
        n = 0;
    };
    auto add = [&](float v) {
        input(n++) = v;
        if (n == chunk) flush();
    };
    for (float v : special_values())
        add(v);
    for (uint64_t b = 0; b <= 0xffffffffull; b += stride)
        add(from_bits(uint32_t(b)));
    flush();
    return worst;
}

} // namespace

TEST(InlineMath, WithinTheirBoundsOverTheWholeRange) {
    const uint32_t stride = uint32_t(std::max(1, env_int("AICF_MATH_STRIDE", 4099)));
    for (const MathFunction &f : functions) {
        Worst worst = measure(f, stride, Target("host"));
        EXPECT_EQ(worst.problem, "") << f.name;
        EXPECT_LE(worst.ulps, f.bound_ulps) << f.name << "(" << worst.input << ") = " << worst.got
                                            << " is " << worst.ulps << " ulp off";
        std::printf("[ math ] %-8s max error %.3f ulp (at %.9g), inputs every %u-th float\n",
                    f.name, worst.ulps, double(worst.input), stride);
    }
}

TEST(InlineMath, FusedMultiplyAddsKeepTheBounds) {
    for (const MathFunction &f : functions) {
        Worst worst = measure(f, 65537, Target("host-fma"));
        EXPECT_EQ(worst.problem, "") << f.name;
        EXPECT_LE(worst.ulps, f.bound_ulps) << f.name << "(" << worst.input << ") with -fma";
    }
}

// pow(x, y), computed in float64 and rounded once: within 1 ulp (0.5 measured) over x spread
// across the whole float32 range, both signs, against y of every kind (integers odd and even,
// fractions, large and tiny, negative); the special cases exactly as C's powf, zeros' signs
// included; vector code gives scalar code's bits.
TEST(InlineMath, PowWithinAnUlpAndCsSpecialCases) {
    const uint32_t stride = uint32_t(std::max(1, env_int("AICF_MATH_STRIDE", 4099))) * 16;
    ImageParam xs(Float(32), 1, "pow_x"), ys(Float(32), 1, "pow_y");
    Var i("i");
    Func scalar("pow_scalar"), vector("pow_vector");
    scalar(i) = pow(xs(i), ys(i));
    vector(i) = pow(xs(i), ys(i));
    vector.vectorize(i, 16, TailStrategy::GuardWithIf);
    std::vector<float> x_values,
        y_values = {0.5f,   2.2f,   -1.7f,   3.0f, -3.0f,  2.0f,        -2.0f,       15.5f, 1e-3f,
                    -1e-7f, 100.0f, -100.0f, 0.1f, 77.25f, 16777216.0f, 16777215.0f, 1.0f,  -1.0f};
    for (uint64_t b = 0; b <= 0xffffffffull; b += stride)
        x_values.push_back(from_bits(uint32_t(b)));
    const std::vector<float> specials = {
        0.0f,  -0.0f, INFINITY, -INFINITY, NAN,   1.0f,    -1.0f,   2.0f,      -2.0f,      0.5f,
        -0.5f, 3.0f,  -3.0f,    1.5f,      -1.5f, FLT_MAX, FLT_MIN, 0x1p-149f, -0x1p-149f, 1e10f};
    std::vector<float> px, py;
    for (float x : x_values)
        for (float y : y_values)
            px.push_back(x), py.push_back(y);
    for (float x : specials)
        for (float y : specials)
            px.push_back(x), py.push_back(y);
    const int n = int(px.size());
    Buffer<float> bx(px.data(), std::vector<int>{n}), by(py.data(), std::vector<int>{n});
    xs.set(bx);
    ys.set(by);
    for (const char *target : {"host", "host-fma"}) {
        Buffer<float> got = vector.realize({n}, Target(target));
        Buffer<float> got_scalar = scalar.realize({n}, Target(target));
        double worst = 0;
        std::string problem;
        for (int k = 0; k < n && problem.empty(); k++) {
            const float x = px[k], y = py[k], v = got(k);
            const std::string at = "pow(" + std::to_string(x) + ", " + std::to_string(y) + ")";
            if (std::memcmp(&v, &got_scalar(k), 4) != 0)
                problem = at + ": vector and scalar differ";
            const float c = std::pow(x, y); // C's powf
            if (std::isnan(c) || std::isinf(c) || c == 0.0f) {
                const bool same = std::isnan(c) ? std::isnan(v) : std::memcmp(&v, &c, 4) == 0;
                // Within an ulp of overflow or underflow either side may be right.
                const double want = std::pow(double(x), double(y));
                const bool edge = !std::isnan(c) && std::isfinite(want) &&
                                  std::fabs(double(v) - want) <= ulp_at(want);
                if (!same && !edge)
                    problem = at + " gave " + std::to_string(v) + ", C gives " + std::to_string(c);
                continue;
            }
            const double want = std::pow(double(x), double(y));
            const double ulps = std::fabs(double(v) - want) / ulp_at(float(want));
            worst = std::max(worst, ulps);
            if (ulps > 1.0)
                problem =
                    at + " = " + std::to_string(v) + " is " + std::to_string(ulps) + " ulp off";
        }
        EXPECT_EQ(problem, "") << target;
        std::printf("[ math ] pow      max error %.3f ulp over %d pairs (%s)\n", worst, n, target);
    }
}

TEST(InlineMath, TheLibraryStaysAnOption) {
    ImageParam in(Float(32), 1, "libm_in");
    Var x("x");
    Func f("libm_exp");
    f(x) = exp(in(x)) + tanh(in(x));
    f.vectorize(x, 8);
    const std::string inline_code = f.assembly(Target("host"));
    const std::string library_code = f.assembly(Target("host-libm"));
    EXPECT_EQ(inline_code.find("expf"), std::string::npos);
    EXPECT_NE(library_code.find("expf"), std::string::npos) << "no call to the library";
    EXPECT_EQ(Target("host-fma-libm").to_string(), "host-fma-libm");
    // The library's exp, within its own 4 ulp of the reference.
    Worst library_worst = measure(functions[0], 1 << 16, Target("host-libm"));
    EXPECT_EQ(library_worst.problem, "");
    EXPECT_LE(library_worst.ulps, 4.0);
}

// With AVX-512, exp's scaling by 2^n is one vscalefps per 16 lanes (rounded once, as the two
// multiplies it replaces; the tests above compare its vectors with scalar code bit for bit).
TEST(InlineMath, Avx512ScalesByOneInstruction) {
    ImageParam in(Float(32), 1, "scalef_in");
    Var x("x");
    Func f("scalef_exp");
    f(x) = exp(in(x));
    f.vectorize(x, 32);
    const std::string v4 = f.assembly(Target("x86-64-v4")), v3 = f.assembly(Target("x86-64-v3"));
    EXPECT_NE(v4.find("vscalefps"), std::string::npos) << v4;
    EXPECT_EQ(v3.find("vscalefps"), std::string::npos) << v3;
}
