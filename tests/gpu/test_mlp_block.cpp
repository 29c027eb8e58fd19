// The transformer MLP block (apps/common/MlpBlock.h), one kernel per operator, run on the
// device AICF_DEVICE names (the simulator by default) at sizes no tile divides, against a
// double-precision evaluation of the same block that rounds where the pipeline stores
// bfloat16 (LayerNorm's output, GELU's output, the result).

#include "GPUTarget.h"
#include "KernelRunner.h"
#include "MlpBlock.h"
#include "Reference.h"
#include "backends/llvm/CodeGen_PTX.h"
#include "dsl/aicf.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

using namespace aicf;
using aicf_test::fill_random;

namespace {

const Target gpu_target = aicf_test::gpu_test_target();

// Runs the block as `schedule` builds it, checks it, and counts its kernels.
template <typename Schedule>
std::string check_mlp(Schedule schedule, int expected_kernels, int d = 136, int hidden = 264,
                      const Target &target = gpu_target, int tokens = 80) {
    Buffer<bfloat16_t> x({d, tokens}, "x");
    fill_random(x, -2, 2, 1);
    const aicf_apps::MlpWeights w = aicf_apps::random_mlp_weights(d, hidden, 2);
    Func mlp = schedule(x, w, d, hidden);
    Buffer<bfloat16_t> y({d, tokens}, "y");
    mlp.realize(y, target);
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
    const std::string ptx = mlp.ptx(target);
    int kernels = 0;
    for (size_t at = ptx.find(".entry "); at != std::string::npos; at = ptx.find(".entry ", at + 1))
        kernels += ptx.compare(ptx.find('(', at) - 10, 10, "_unaligned") != 0;
    EXPECT_EQ(kernels, expected_kernels) << ptx.substr(0, 4000);
    return ptx;
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
// bias and the residual in the second product's. The prologue's tiles staged in one step,
// pipelined through registers (the next step's normalized from the statistics in shared
// memory during this step's products), and in a ring of three buffers that W1's cp.async
// copies share.
TEST(MlpBlock, DataflowMatchesDoublePrecision) {
    using aicf_apps::MlpStaging;
    for (MlpStaging staging : {MlpStaging::OneStep, MlpStaging::Registers, MlpStaging::Async}) {
        SCOPED_TRACE("staging " + std::to_string(int(staging)));
        check_mlp(
            [&](const Buffer<bfloat16_t> &x, const aicf_apps::MlpWeights &w, int d, int hidden) {
                return aicf_apps::mlp_block_dataflow(x, w, d, hidden, "mlp", staging);
            },
            2);
    }
}

// A decoding step's few tokens, fewer than a tile's rows: with guarded rows, the products'
// last row tile reads its rows past the tokens through a clamp to the last (A is LayerNorm's
// or GELU's Func, so the tokens come from x) and stores only the tokens' rows.
TEST(MlpBlock, FewTokensWithGuardedRows) {
    aicf_apps::GemmSchedule tiles;
    tiles.guard_rows = true;
    for (const int tokens : {1, 5, 70}) {
        SCOPED_TRACE("tokens " + std::to_string(tokens));
        check_mlp(
            [&](const Buffer<bfloat16_t> &x, const aicf_apps::MlpWeights &w, int d, int hidden) {
                return aicf_apps::mlp_block_fused_epilogues(x, w, d, hidden, "mlp", tiles);
            },
            3, 136, 264, gpu_target, tokens);
        check_mlp(
            [&](const Buffer<bfloat16_t> &x, const aicf_apps::MlpWeights &w, int d, int hidden) {
                return aicf_apps::mlp_block_dataflow(x, w, d, hidden, "mlp",
                                                     aicf_apps::MlpStaging::Async, tiles);
            },
            2, 136, 264, gpu_target, tokens);
    }
}

// Smaller tiles (one and two warps): the dataflow schedule takes the tiles' warps for its
// first product too, and splits the statistics over them (it kept 4 warps, 32 columns wide,
// and at hidden = 16 was refused, naming b1's columns from -16).
TEST(MlpBlock, DataflowOnTilesOfFewerWarps) {
    for (int warps : {1, 2}) {
        SCOPED_TRACE(std::to_string(warps) + " warps");
        aicf_apps::GemmSchedule tiles;
        tiles.warps = warps;
        tiles.n_tiles = 1;
        tiles.m_tiles = 1;
        tiles.guard_rows = true;
        check_mlp(
            [&](const Buffer<bfloat16_t> &x, const aicf_apps::MlpWeights &w, int d, int hidden) {
                return aicf_apps::mlp_block_dataflow(x, w, d, hidden, "mlp",
                                                     aicf_apps::MlpStaging::Registers, tiles);
            },
            2, 24, 16 * warps, gpu_target, 17);
    }
}

// The ring of three buffers: W1 copied by cp.async two steps ahead (d a multiple of the step
// along k, so W1's pieces need no test), the normalized operand stored into the same ring by
// the threads that compute it, at a hidden size of 9 column tiles: the second block computes
// one (the 7 past the end skipped by the guard), whose columns shift inwards over its
// neighbour's by a multiple of 8 (so that its rows of W1 still start on 16 bytes: cp.async
// copies whole aligned pieces); in registers on sm_80 and sm_90.
TEST(MlpBlock, DataflowCopiesW1Asynchronously) {
    const std::string ptx = check_mlp(
        [&](const Buffer<bfloat16_t> &x, const aicf_apps::MlpWeights &w, int d, int hidden) {
            return aicf_apps::mlp_block_dataflow(x, w, d, hidden, "mlp",
                                                 aicf_apps::MlpStaging::Async);
        },
        2, 160, 1096);
    const size_t mm1 = ptx.find(".entry mlp_k0_mlp_mm1(");
    ASSERT_NE(mm1, std::string::npos) << ptx.substr(0, 4000);
    const std::string kernel = ptx.substr(mm1, ptx.find(".entry ", mm1 + 1) - mm1);
    EXPECT_NE(kernel.find("cp.async.cg.shared.global"), std::string::npos);
    EXPECT_NE(kernel.find("cp.async.wait_group 1"), std::string::npos);
    if (!backends::ptxas_available()) return;
    // The block's real sizes (the weights unfilled: the kernels are only compiled).
    const int d = 4096, hidden = 16384;
    Buffer<bfloat16_t> x({d, 2048}, "x");
    const aicf_apps::MlpWeights w{
        Buffer<bfloat16_t>({d}, "ln_weight"),  Buffer<bfloat16_t>({d}, "ln_bias"),
        Buffer<bfloat16_t>({hidden, d}, "w1"), Buffer<bfloat16_t>({hidden}, "b1"),
        Buffer<bfloat16_t>({d, hidden}, "w2"), Buffer<bfloat16_t>({d}, "b2")};
    const Func f =
        aicf_apps::mlp_block_dataflow(x, w, d, hidden, "mlp", aicf_apps::MlpStaging::Async);
    for (const char *arch : {"sm_80", "sm_90"}) {
        const std::string report = f.kernel_resources(Target(std::string("host-cuda-") + arch));
        auto count = [&](const std::string &what) {
            int n = 0;
            for (size_t at = report.find(what); at != std::string::npos;
                 at = report.find(what, at + 1))
                n++;
            return n;
        };
        EXPECT_GT(count(" registers,"), 0) << report;
        EXPECT_EQ(count(" 0 bytes spill stores, 0 bytes spill loads"), count(" registers,"))
            << arch << ": " << report;
    }
}

// Both products on Hopper's warpgroup tensor cores (one warpgroup, 64 x 128 tiles, A and B in
// core matrices), with their epilogues; and the dataflow schedule, whose normalized operand the
// threads that compute it store into core matrices.
TEST(MlpBlock, OnWarpgroupTensorCores) {
    const Target hopper("host-cuda-sm_90a");
    if (!aicf_test::device_runs(hopper)) GTEST_SKIP() << "wgmma runs on sm_90 GPUs only";
    const aicf_apps::GemmSchedule tiles = aicf_apps::GemmSchedule::hopper(1);
    std::string ptx = check_mlp(
        [&](const Buffer<bfloat16_t> &x, const aicf_apps::MlpWeights &w, int d, int hidden) {
            return aicf_apps::mlp_block_fused_epilogues(x, w, d, hidden, "mlp", tiles);
        },
        3, 136, 264, hopper);
    EXPECT_NE(ptx.find("wgmma.mma_async.sync.aligned.m64n128k16"), std::string::npos);
    ptx = check_mlp(
        [&](const Buffer<bfloat16_t> &x, const aicf_apps::MlpWeights &w, int d, int hidden) {
            return aicf_apps::mlp_block_dataflow(x, w, d, hidden, "mlp",
                                                 aicf_apps::MlpStaging::Async, tiles);
        },
        2, 136, 264, hopper);
    EXPECT_NE(ptx.find("wgmma.mma_async.sync.aligned.m64n128k16"), std::string::npos);
}

} // namespace
