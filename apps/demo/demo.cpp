// The AICF demo: a transformer block's normalization and attention-score stages, written
// once as an algorithm, compiled by LLVM for this CPU and checked against a double-precision
// reference.
//
//   normalized = layernorm(x) * gamma + beta     (per row of a [rows][dim] activation)
//   scores     = softmax(normalized / sqrt(dim)) (per row)
//
// The same algorithm runs with two schedules that give every stage the same loops (rows in
// parallel, vectorized along the row, reductions kept in vector lanes): operator by operator
// (every intermediate a whole tensor in memory) and as one dataflow region (each row's
// stages computed together). It prints the fused loop nest, the time of the first realize
// (which compiles) and of later ones, both schedules' times, and the largest error.
//
// Then the same two schedules for a GPU: one kernel per operator, against one kernel with a
// block per row whose intermediates stay in shared memory. They run on the GPU device
// AICF_DEVICE names (the simulator without a GPU) and are checked against the CPU's result;
// the dataflow report (dsl/Report.h) counts, from their kernels, the bytes each moves through
// device memory against the compulsory bytes.
//
// Last, the workload AICF is for: the MLP block of a transformer layer at the size of a real
// model (2048 tokens, 4096 -> 16384 -> 4096, bfloat16), as one kernel per operator and as two
// dataflow regions. Nothing of that size runs here: the report counts it from the kernels,
// compares it with the same algorithm run one operator per kernel, and draws the dataflow
// regions (mlp_block.dot, and mlp_block.svg where Graphviz is installed).

#include "DemoBlock.h"
#include "MlpReport.h"
#include "Timing.h"
#include "dsl/aicf.h"
#include "layernorm_softmax_aot.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace aicf;

int main(int argc, char **argv) {
    const int rows = 256, dim = 1024;
    Buffer<float> x({dim, rows}, "x"), gamma({dim}, "gamma"), beta({dim}, "beta");
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < dim; c++)
            x(c, r) = dist(rng);
    for (int c = 0; c < dim; c++) {
        gamma(c) = 1.0f + 0.1f * dist(rng);
        beta(c) = 0.1f * dist(rng);
    }

    using Block = aicf_apps::DemoBlock;
    // Operator by operator: each stage computed over the whole tensor and stored, as a
    // framework running one kernel per operator does.
    Block staged(x, gamma, beta, dim);
    staged.schedule_cpu(false);
    // One dataflow region: every stage of a row computed inside the loop over rows, so
    // intermediates never leave the cache.
    Block fused(x, gamma, beta, dim);
    fused.schedule_cpu(true);
    Func &scores = fused.scores;

    std::printf("AICF demo: layernorm + softmax over a %d x %d float32 activation\n\n", rows, dim);
    std::printf("The fused schedule's loop nest (AICF_DEBUG=2 prints every lowering pass):\n%s\n",
                scores.loop_nest().c_str());

    auto now = [] { return std::chrono::steady_clock::now(); };
    auto ms = [](auto a, auto b) {
        return std::chrono::duration<double, std::milli>(b - a).count();
    };
    auto t0 = now();
    Buffer<float> out = scores.realize({dim, rows});
    auto t1 = now();
    Buffer<float> staged_out = staged.scores.realize({dim, rows});
    // Timed alternately, so that a change in the machine's speed affects both alike.
    auto [fused_ms, staged_ms] = aicf_apps::median_ms_alternating(
        [&] { scores.realize(out); }, [&] { staged.scores.realize(staged_out); }, 21);

    // The reference, in double precision.
    double max_err = 0;
    for (int row = 0; row < rows; row++) {
        double m = 0, v = 0;
        for (int i = 0; i < dim; i++)
            m += x(i, row);
        m /= dim;
        for (int i = 0; i < dim; i++)
            v += (x(i, row) - m) * (x(i, row) - m);
        v /= dim;
        std::vector<double> l(dim);
        double mx = -1e300, s = 0;
        for (int i = 0; i < dim; i++) {
            l[i] = ((x(i, row) - m) / std::sqrt(v + 1e-5) * gamma(i) + beta(i)) /
                   std::sqrt(double(dim));
            mx = std::max(mx, l[i]);
        }
        for (int i = 0; i < dim; i++)
            s += std::exp(l[i] - mx);
        for (int i = 0; i < dim; i++) {
            double ref = std::exp(l[i] - mx) / s;
            max_err = std::max(max_err, std::fabs(out(i, row) - ref) / ref);
        }
    }

    double diff = 0;
    for (int row = 0; row < rows; row++)
        for (int i = 0; i < dim; i++)
            diff = std::max(diff, double(std::fabs(out(i, row) - staged_out(i, row))));
    std::printf("first realize (compile + run):        %8.2f ms\n", ms(t0, t1));
    std::printf("fused by rows (median of 21):         %8.3f ms\n", fused_ms);
    std::printf("operator by operator (median of 21):  %8.3f ms  (%.2fx the fused time)\n",
                staged_ms, staged_ms / fused_ms);
    std::printf("largest difference between the two schedules: %g\n", diff);
    std::printf("largest relative error against float64: %.2e\n", max_err);
    bool ok = max_err < 1e-4;

    // The same fused pipeline compiled ahead of time (apps/demo/demo_generators.cpp, built
    // into a library by CMake), called through its C function with DLPack tensors.
    {
        Buffer<float> aot({dim, rows});
        int64_t shape2[2] = {rows, dim}, shape1[1] = {dim};
        auto tensor = [](const Buffer<float> &b, int64_t *shape, int ndim) {
            DLTensor t{};
            t.data = b.data();
            t.device = {kDLCPU, 0};
            t.ndim = ndim;
            t.dtype = {kDLFloat, 32, 1};
            t.shape = shape;
            return t;
        };
        DLTensor tx = tensor(x, shape2, 2), tg = tensor(gamma, shape1, 1),
                 tb = tensor(beta, shape1, 1), ts = tensor(aot, shape2, 2);
        int code = layernorm_softmax_aot(&tx, &tg, &tb, &ts);
        auto [aot_ms, jit_ms] = aicf_apps::median_ms_alternating(
            [&] { layernorm_softmax_aot(&tx, &tg, &tb, &ts); }, [&] { scores.realize(out); }, 11);
        bool same =
            code == 0 && std::memcmp(aot.data(), out.data(), sizeof(float) * dim * rows) == 0;
        std::printf("ahead of time (layernorm_softmax_aot.a, %s): %.3f ms against the JIT's %.3f "
                    "ms; %s\n",
                    layernorm_softmax_aot_metadata()->target, aot_ms, jit_ms,
                    code != 0 ? aicf_last_error()
                    : same    ? "the same bits as the JIT"
                              : "DIFFERENT FROM THE JIT");
        ok = ok && same;
    }

    // ---- The same algorithm on a GPU ----
    const Target gpu("host-cuda-sm_80");
    // One kernel per operator: each stage over the whole tensor, in device memory.
    Block ops(x, gamma, beta, dim);
    {
        Var bx("bx"), tx("tx"), by("by"), ty("ty");
        for (Func *f : {&ops.mean, &ops.variance, &ops.row_max, &ops.denom}) {
            f->compute_root().gpu_tile(ops.r, bx, tx, 64);
            f->update().gpu_tile(ops.r, bx, tx, 64);
        }
        for (Func *f : {&ops.normalized, &ops.e, &ops.scores}) {
            if (f != &ops.scores) f->compute_root();
            f->gpu_tile(ops.c, ops.r, bx, by, tx, ty, 64, 4);
        }
    }
    // One kernel, a block per row: the row is loaded into shared memory once; the
    // reductions run at the block level and normalized and e stay in shared memory.
    Block region(x, gamma, beta, dim);
    {
        Var co("co"), ci("ci");
        region.scores.split(region.c, co, ci, 256)
            .reorder(co, ci, region.r)
            .gpu_blocks(region.r)
            .gpu_threads(ci);
        for (Func *f : {&region.input, &region.normalized, &region.e}) {
            // A whole row: the reductions need it all (bound makes the size a constant).
            f->compute_at(region.scores, region.r)
                .bound(region.c, 0, dim)
                .split(region.c, co, ci, 256)
                .gpu_threads(ci);
        }
        for (Func *f : {&region.mean, &region.variance, &region.row_max, &region.denom})
            f->compute_at(region.scores, region.r);
    }
    std::printf(
        "\nOn a GPU (%s), one block per row; its kernels:\n%s", gpu.to_string().c_str(),
        region.scores.loop_nest(gpu).substr(region.scores.loop_nest(gpu).find("kernel ")).c_str());
    std::printf("\n| schedule             | kernels | requested (MB) | moved (MB) | x compulsory | "
                "max diff vs CPU |\n"
                "|---|---|---|---|---|---|\n");
    int64_t compulsory = 0;
    for (auto [name, block] : {std::pair<const char *, Block *>{"operator by operator", &ops},
                               {"one dataflow region", &region}}) {
        Buffer<float> result = block->scores.realize({dim, rows}, gpu)[0];
        result.copy_to_host();
        double worst = 0;
        for (int row = 0; row < rows; row++)
            for (int i = 0; i < dim; i++)
                worst = std::max(worst, double(std::fabs(result(i, row) - out(i, row))));
        ok = ok && worst < 1e-6;
        const DataflowReport report = block->scores.report({dim, rows}, gpu, {}, false);
        compulsory = report.compulsory_bytes;
        std::printf("| %-20s | %7zu | %14.2f | %10.2f | %12.2f | %15.1e |\n", name,
                    report.kernels.size(), report.requested_bytes() / 1e6,
                    report.moved_bytes() / 1e6,
                    double(report.moved_bytes()) / double(report.compulsory_bytes), worst);
    }
    std::printf(
        "\nCompulsory: x, gamma and beta read once, scores written once (%.2f MB). Requested\n"
        "counts what the kernels' threads ask of device memory (gamma and beta are read once per\n"
        "row, which a GPU's L2 cache serves); moved, the span of each buffer each kernel "
        "reaches.\n",
        compulsory / 1e6);

    // ---- The transformer MLP block, counted from its kernels ----
    const Target hopper("host-cuda-sm_90");
    const aicf_apps::MlpReports mlp = aicf_apps::mlp_reports(2048, 4096, 16384, hopper, true);
    std::printf("\nThe transformer MLP block y = x + W2 GELU(W1 LayerNorm(x) + b1) + b2 at 2048 "
                "tokens, 4096 -> 16384 -> 4096 (bfloat16), for %s, counted from its kernels:\n\n"
                "%s\n%s",
                hopper.to_string().c_str(), aicf_apps::mlp_report_table({mlp}).c_str(),
                mlp.dataflow.to_text().c_str());
    const bool svg = write_report_picture(mlp.dataflow, "mlp_block.dot", "mlp_block.svg");
    std::printf("The dataflow regions' picture: mlp_block.dot%s\n\n",
                svg ? " and mlp_block.svg" : " (install Graphviz to render mlp_block.svg)");
    std::printf("%s\n", ok ? "demo: result correct" : "demo: RESULT WRONG");
    return ok ? 0 : 1;
}
