// The transformer MLP block, y = x + W2 GELU(W1 LayerNorm(x) + b1) + b2 (apps/common/
// MlpBlock.h), in bfloat16 with float32 sums, under each of its schedules: one kernel per
// operator, the element-wise operators fused into the products' epilogues, and LayerNorm in
// the first product's prologue as well (its tiles staged a step at a time, pipelined through
// registers, or in a ring of shared buffers beside W1's cp.async copies); and the products in
// large tiles where the sizes take them. Each runs on the device AICF_DEVICE names, is checked
// against a double-precision evaluation on sampled rows (rounding where the pipeline stores
// bfloat16), and is timed against the dataflow report's roofline bound. Prints a table;
// `mlp_block --small` runs a small size (for the simulator), `mlp_block T D H` one size, and
// `mlp_block --report` prints the schedules' dataflow reports at (2048 and 8192) x 4096 x 16384
// without running them, and writes the dataflow schedule's picture (mlp_block.dot, .svg).

#include "GPUDevice.h"
#include "MlpBlock.h"
#include "MlpReport.h"
#include "Timing.h"
#include "dsl/aicf.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace aicf;

namespace {

int failures = 0;

// The GPU of report_gpus() this device is (by name), or -1.
int device_gpu() {
    const std::string device = aicf_apps::device_description();
    for (size_t i = 0; i < report_gpus().size(); i++)
        if (device.find(report_gpus()[i].name) != std::string::npos) return int(i);
    return -1;
}

// The report's time bound of a schedule on this device's GPU, against the time measured.
std::string roofline_share(const DataflowReport &r, double ms) {
    const int gpu = device_gpu();
    if (gpu < 0) return "-";
    char text[64];
    const double bound_ms = r.roofline[size_t(gpu)].seconds * 1e3;
    std::snprintf(text, sizeof(text), "%.0f%% (%.3f ms)", 100 * bound_ms / ms, bound_ms);
    return text;
}

// The least time any schedule of the block can take on a GPU: its compulsory bytes at the
// memory bandwidth, or its products' flops at the bf16 tensor-core rate.
double ideal_ms(const DataflowReport &r, const GPUPeaks &g) {
    return 1e3 * std::max(double(r.compulsory_bytes) / g.memory_bytes_per_s,
                          double(r.tensor_flops()) / g.tensor_flops_per_s);
}

double f(bfloat16_t v) {
    return double(float(v));
}

void run(const char *name, int kernels,
         const std::function<Func(const Buffer<bfloat16_t> &, const aicf_apps::MlpWeights &, int,
                                  int)> &schedule,
         const Buffer<bfloat16_t> &x, const aicf_apps::MlpWeights &w, int tokens, int d, int hidden,
         int runs, const Target &target = aicf_apps::device_target()) {
    const auto started = std::chrono::steady_clock::now();
    Func mlp = schedule(x, w, d, hidden);
    Buffer<bfloat16_t> y({d, tokens}, "y");
    const double ms = aicf_apps::median_ms([&] { mlp.realize(y, target); }, runs);
    y.copy_to_host();
    bool ok = true;
    // Every schedule is checked on the same rows of the same block: each computed once.
    static std::map<int, std::vector<double>> references;
    for (int t = 0; t<tokens; t += tokens> 64 ? tokens / 3 : 1) {
        if (!references.count(t)) references[t] = aicf_apps::mlp_reference_row(x, w, t, d, hidden);
        const std::vector<double> &want = references[t];
        for (int c = 0; c < d; c++)
            ok = ok && std::fabs(f(y(c, t)) - want[size_t(c)]) <=
                           std::ldexp(std::fabs(want[size_t(c)]), -7) + 0.02;
    }
    const double flops = 4.0 * tokens * double(d) * hidden;
    const DataflowReport report = mlp.report({d, tokens}, target, {}, false);
    std::printf("| %-44s | %7d | %5d x %5d x %5d | %9.3f | %8.1f | %s | %s |\n", name, kernels,
                tokens, d, hidden, ms, flops / (ms * 1e9), roofline_share(report, ms).c_str(),
                ok ? "ok" : "WRONG");
    failures += !ok;
    // What the row took in all (compiling, the runs, the check, the report), on stderr.
    std::fprintf(stderr, "(%s: %.1f s)\n", name,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
}

} // namespace

int main(int argc, char **argv) {
    // Each row as it is measured, also when the output is a file.
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    try {
        if (argc > 1 && std::strcmp(argv[1], "--report") == 0) {
            // Counted from the kernels, no GPU and no allocation needed.
            const Target target("host-cuda-sm_90");
            std::vector<aicf_apps::MlpReports> sizes;
            for (int tokens : {2048, 8192})
                sizes.push_back(
                    aicf_apps::mlp_reports(tokens, 4096, 16384, target, tokens == 2048));
            std::printf("The transformer MLP block's dataflow reports, %s\n\n%s\n%s",
                        target.to_string().c_str(), aicf_apps::mlp_report_table(sizes).c_str(),
                        sizes[0].dataflow.to_text().c_str());
            const bool svg =
                write_report_picture(sizes[0].dataflow, "mlp_block.dot", "mlp_block.svg");
            std::printf("\nThe dataflow regions' picture: mlp_block.dot%s\n",
                        svg ? ", mlp_block.svg" : " (install Graphviz for the SVG)");
            return 0;
        }
        const bool small = argc > 1 && std::strcmp(argv[1], "--small") == 0;
        int tokens = 2048, d = 4096, hidden = 16384;
        if (argc == 4) {
            tokens = std::atoi(argv[1]);
            d = std::atoi(argv[2]);
            hidden = std::atoi(argv[3]);
        } else if (small) {
            tokens = 80, d = 136, hidden = 264;
        }
        const int runs = small ? 1 : 10;
        const char *device = std::getenv("AICF_DEVICE");
        std::printf("Transformer MLP block on %s%s, target %s\n\n",
                    device && *device ? device : "the default device",
                    aicf_apps::device_description().c_str(),
                    aicf_apps::device_target().to_string().c_str());
        Buffer<bfloat16_t> x({d, tokens}, "x");
        std::mt19937 rng(1);
        std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
        for (int64_t i = 0; i < x.number_of_elements(); i++)
            x.data()[i] = bfloat16_t(dist(rng));
        const aicf_apps::MlpWeights w = aicf_apps::random_mlp_weights(d, hidden, 2);
        std::printf(
            "| schedule                                     | kernels | tokens x     d x hidden | "
            "median ms | "
            "TFLOP/s  | roofline bound / time | check |\n|---|---|---|---|---|---|---|\n");
        run(
            "one kernel per operator", 7,
            [](const Buffer<bfloat16_t> &x, const aicf_apps::MlpWeights &w, int d, int hidden) {
                return aicf_apps::mlp_block_by_operator(x, w, d, hidden, "mlp");
            },
            x, w, tokens, d, hidden, runs);
        run(
            "fused epilogues", 3,
            [](const Buffer<bfloat16_t> &x, const aicf_apps::MlpWeights &w, int d, int hidden) {
                return aicf_apps::mlp_block_fused_epilogues(x, w, d, hidden, "mlp");
            },
            x, w, tokens, d, hidden, runs);
        run(
            "dataflow (LN in prologue)", 2,
            [](const Buffer<bfloat16_t> &x, const aicf_apps::MlpWeights &w, int d, int hidden) {
                return aicf_apps::mlp_block_dataflow(x, w, d, hidden, "mlp");
            },
            x, w, tokens, d, hidden, runs);
        run(
            "dataflow, LN pipelined", 2,
            [](const Buffer<bfloat16_t> &x, const aicf_apps::MlpWeights &w, int d, int hidden) {
                return aicf_apps::mlp_block_dataflow(x, w, d, hidden, "mlp",
                                                     aicf_apps::MlpStaging::Registers);
            },
            x, w, tokens, d, hidden, runs);
        run(
            "dataflow, LN and W1 async", 2,
            [](const Buffer<bfloat16_t> &x, const aicf_apps::MlpWeights &w, int d, int hidden) {
                return aicf_apps::mlp_block_dataflow(x, w, d, hidden, "mlp",
                                                     aicf_apps::MlpStaging::Async);
            },
            x, w, tokens, d, hidden, runs);
        // The products in large tiles (GemmSchedule::large_tiles()), where the block is at
        // least one tile in each direction. (The dataflow schedule's operands pipelined
        // through registers would spill there, with the product's 128 accumulators per lane.)
        const aicf_apps::GemmSchedule large = aicf_apps::GemmSchedule::large_tiles();
        if (tokens >= large.block_y() && std::min(d, hidden) >= large.block_x()) {
            const std::string shape = ", " + large.to_string();
            run(("fused epilogues" + shape).c_str(), 3,
                [&](const Buffer<bfloat16_t> &x, const aicf_apps::MlpWeights &w, int d,
                    int hidden) {
                    return aicf_apps::mlp_block_fused_epilogues(x, w, d, hidden, "mlp", large);
                },
                x, w, tokens, d, hidden, runs);
            run(("dataflow, LN and W1 async" + shape).c_str(), 2,
                [&](const Buffer<bfloat16_t> &x, const aicf_apps::MlpWeights &w, int d,
                    int hidden) {
                    return aicf_apps::mlp_block_dataflow(x, w, d, hidden, "mlp",
                                                         aicf_apps::MlpStaging::Async, large);
                },
                x, w, tokens, d, hidden, runs);
        }
        // The products on Hopper's warpgroup tensor cores (GemmSchedule::hopper()), where the
        // device runs them (an sm_90 GPU, or the simulator).
        const aicf_apps::GemmSchedule wg = aicf_apps::GemmSchedule::hopper();
        const std::optional<Target> hopper = aicf_apps::hopper_target();
        if (hopper && tokens >= wg.block_y() && std::min(d, hidden) >= wg.block_x()) {
            const std::string shape = ", " + wg.to_string();
            run(("fused epilogues" + shape).c_str(), 3,
                [&](const Buffer<bfloat16_t> &x, const aicf_apps::MlpWeights &w, int d,
                    int hidden) {
                    return aicf_apps::mlp_block_fused_epilogues(x, w, d, hidden, "mlp", wg);
                },
                x, w, tokens, d, hidden, runs, *hopper);
            run(("dataflow, LN and W1 async" + shape).c_str(), 2,
                [&](const Buffer<bfloat16_t> &x, const aicf_apps::MlpWeights &w, int d,
                    int hidden) {
                    return aicf_apps::mlp_block_dataflow(x, w, d, hidden, "mlp",
                                                         aicf_apps::MlpStaging::Async, wg);
                },
                x, w, tokens, d, hidden, runs, *hopper);
        }
        {
            // Any schedule's: the same algorithm, so the same compulsory bytes and products.
            const DataflowReport r =
                aicf_apps::mlp_block_dataflow(x, w, d, hidden, "mlp")
                    .report({d, tokens}, aicf_apps::device_target(), {}, false);
            const GPUPeaks &g = report_gpus()[size_t(device_gpu() < 0 ? 2 : device_gpu())];
            std::printf("\nideal bound on %s: %.3f ms (the compulsory %.1f MB at its bandwidth, or "
                        "the products' flops at its bf16 tensor-core rate)\n",
                        g.name.c_str(), ideal_ms(r, g), r.compulsory_bytes / 1e6);
        }
        std::printf("\nTFLOP/s counts the two products (4 tokens d hidden flops). Roofline bound: "
                    "the dataflow report's time bound on this GPU (its datasheet peaks) over the "
                    "time measured. check: sampled rows against double precision.\n");
        return failures == 0 ? 0 : 1;
    } catch (const Error &e) {
        std::printf("%s\n", e.what());
        return 1;
    }
}
