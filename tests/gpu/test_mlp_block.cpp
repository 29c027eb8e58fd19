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

// Runs the block as `schedule` builds it, checks it, and counts its kernels.
template <typename Schedule> void check_mlp(Schedule schedule, int expected_kernels) {
    const int tokens = 80, d = 136, hidden = 264;
    Buffer<bfloat16_t> x({d, tokens}, "x");
    fill_random(x, -2, 2, 1);
    const aicf_apps::MlpWeights w = aicf_apps::random_mlp_weights(d, hidden, 2);
    Func mlp = schedule(x, w, d, hidden);
    Buffer<bfloat16_t> y({d, tokens}, "y");
    mlp.realize(y, gpu_target);
    y.copy_to_host();
    int bad = 0;
    std::vector<double> magnitude;
    for (int t = 0; t < tokens; t++) {
        const std::vector<double> want =
            aicf_apps::mlp_reference_row(x, w, t, d, hidden, &magnitude);
        for (int c = 0; c < d; c++) {
            // The result's own rounding, and the intermediates' roundings where float and
            // double land on different sides of a bfloat16 step.
            const double v = want[size_t(c)], got = double(float(y(c, t)));
            const double tolerance =
                std::ldexp(std::abs(v), -8) + std::ldexp(magnitude[size_t(c)], -9);
            if (std::abs(got - v) > tolerance && bad++ < 5)
                ADD_FAILURE() << "y(" << c << ", " << t << ") = " << got << ", want " << v;
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

// Two kernels: LayerNorm in the first product's prologue (its statistics per block of rows,
// the normalized tiles made on their way into shared memory), bias and GELU in its epilogue;
// bias and the residual in the second product's. The prologue's tiles staged in one step, and
// pipelined through registers (the next step's normalized from the statistics in shared
// memory during this step's products).
TEST(MlpBlock, DataflowMatchesDoublePrecision) {
    for (bool pipelined : {false, true}) {
        SCOPED_TRACE(pipelined ? "pipelined prologue" : "prologue in one stage");
        check_mlp(
            [&](const Buffer<bfloat16_t> &x, const aicf_apps::MlpWeights &w, int d, int hidden) {
                return aicf_apps::mlp_block_dataflow(x, w, d, hidden, "mlp", pipelined);
            },
            2);
    }
}

} // namespace
