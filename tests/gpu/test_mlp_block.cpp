// The transformer MLP block (apps/common/MlpBlock.h), one kernel per operator, run on the
// device AICF_DEVICE names (the simulator by default) at sizes no tile divides, against a
// double-precision evaluation of the same block that rounds where the pipeline stores
// bfloat16 (LayerNorm's output, GELU's output, the result).

#include "GPUTarget.h"
#include "MlpBlock.h"
#include "Reference.h"
#include "dsl/aicf.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace aicf;
using aicf_test::fill_random;

namespace {

const Target gpu_target = aicf_test::gpu_test_target();

double bf16(double v) {
    return double(float(bfloat16_t(float(v))));
}

// Runs the block as `schedule` builds it, checks it, and counts its kernels.
template <typename Schedule> void check_mlp(Schedule schedule, int expected_kernels) {
    const int tokens = 80, d = 136, hidden = 264;
    Buffer<bfloat16_t> x({d, tokens}, "x");
    aicf_apps::MlpWeights w{
        Buffer<bfloat16_t>({d}, "ln_weight"),  Buffer<bfloat16_t>({d}, "ln_bias"),
        Buffer<bfloat16_t>({hidden, d}, "w1"), Buffer<bfloat16_t>({hidden}, "b1"),
        Buffer<bfloat16_t>({d, hidden}, "w2"), Buffer<bfloat16_t>({d}, "b2")};
    fill_random(x, -2, 2, 1);
    fill_random(w.ln_weight, 0.5, 1.5, 2);
    fill_random(w.ln_bias, -0.5, 0.5, 3);
    fill_random(w.w1, -0.15, 0.15, 4);
    fill_random(w.b1, -0.5, 0.5, 5);
    fill_random(w.w2, -0.1, 0.1, 6);
    fill_random(w.b2, -0.5, 0.5, 7);
    Func mlp = schedule(x, w, d, hidden);
    Buffer<bfloat16_t> y({d, tokens}, "y");
    mlp.realize(y, gpu_target);
    y.copy_to_host();

    auto f = [](bfloat16_t v) { return double(float(v)); };
    std::vector<double> ln(static_cast<size_t>(d)), h(static_cast<size_t>(hidden));
    int bad = 0;
    for (int t = 0; t < tokens; t++) {
        double mean = 0, var = 0;
        for (int c = 0; c < d; c++)
            mean += f(x(c, t));
        mean /= d;
        for (int c = 0; c < d; c++)
            var += (f(x(c, t)) - mean) * (f(x(c, t)) - mean);
        var /= d;
        for (int c = 0; c < d; c++)
            ln[size_t(c)] = bf16((f(x(c, t)) - mean) / std::sqrt(var + 1e-5) * f(w.ln_weight(c)) +
                                 f(w.ln_bias(c)));
        for (int j = 0; j < hidden; j++) {
            double v = f(w.b1(j));
            for (int c = 0; c < d; c++)
                v += ln[size_t(c)] * f(w.w1(j, c));
            h[size_t(j)] = bf16(0.5 * v * (1 + std::erf(v / std::sqrt(2.0))));
        }
        for (int c = 0; c < d; c++) {
            double v = f(w.b2(c)) + f(x(c, t)), magnitude = std::abs(v);
            for (int j = 0; j < hidden; j++) {
                v += h[size_t(j)] * f(w.w2(c, j));
                magnitude += std::abs(h[size_t(j)] * f(w.w2(c, j)));
            }
            // The result's own rounding, and the intermediates' roundings where float and
            // double land on different sides of a bfloat16 step.
            const double tolerance = std::ldexp(std::abs(v), -8) + std::ldexp(magnitude, -9);
            if (std::abs(f(y(c, t)) - v) > tolerance && bad++ < 5)
                ADD_FAILURE() << "y(" << c << ", " << t << ") = " << f(y(c, t)) << ", want " << v;
        }
    }
    EXPECT_EQ(bad, 0);
    // The PTX also holds fallback versions of some kernels, for unaligned buffers.
    const std::string ptx = mlp.ptx(gpu_target);
    int kernels = 0;
    for (size_t at = ptx.find(".entry "); at != std::string::npos; at = ptx.find(".entry ", at + 1))
        kernels += ptx.compare(ptx.find('(', at) - 10, 10, "_unaligned") != 0;
    EXPECT_EQ(kernels, expected_kernels) << ptx.substr(0, 4000);
}

// One kernel per operator: LayerNorm, the two products, the two biases, GELU and the residual.
TEST(MlpBlock, OperatorByOperatorMatchesDoublePrecision) {
    check_mlp([](const Buffer<bfloat16_t> &x, const aicf_apps::MlpWeights &w, int d,
                 int hidden) { return aicf_apps::mlp_block_by_operator(x, w, d, hidden, "mlp"); },
              7);
}

// Three kernels: LayerNorm, and each product with its element-wise operators in its epilogue.
TEST(MlpBlock, FusedEpiloguesMatchDoublePrecision) {
    check_mlp(
        [](const Buffer<bfloat16_t> &x, const aicf_apps::MlpWeights &w, int d, int hidden) {
            return aicf_apps::mlp_block_fused_epilogues(x, w, d, hidden, "mlp");
        },
        3);
}

} // namespace
