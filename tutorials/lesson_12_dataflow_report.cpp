// Lesson 12: reading the dataflow report, and how one schedule change moves the bytes.
//
// A GPU kernel that does little arithmetic per byte runs as fast as device memory feeds it,
// so the first question about a schedule is how many bytes its kernels move. Func::report
// (and Pipeline::report) answers it for a GPU target at concrete sizes, from the kernels'
// IR, without running anything:
//   - per kernel: its grid and block, shared memory, registers (from ptxas, when the CUDA
//     toolkit is installed), the bytes it requests from and writes to each buffer, the span
//     of each buffer it reaches (what it moves through device memory when the caches keep
//     its reuse), flops, and a roofline time bound on A100, H100 and H200;
//   - for the pipeline: the compulsory bytes (every input read once, every output written
//     once), the totals, and the same algorithm lowered one operator per kernel (every Func
//     its own kernel with a plain GPU schedule) as a baseline, ending in one line:
//     "N kernels moving X MB -> M kernels moving Y MB (Zx less)".
//
// The counts follow the simulator's definitions, and the test suite checks them against its
// counters on every family of kernels and on random schedules; this lesson checks one too.
//
// The pipeline is a 3x3 box blur in two stages. With blur_x computed at the root it is two
// kernels, and the intermediate goes through device memory; computing blur_x per block of
// blur_y, in shared memory, makes it one kernel and the intermediate's bytes disappear.
//
// Build and run: scripts/build.sh lesson_12_dataflow_report &&
// build/tutorials/lesson_12_dataflow_report

#include "backends/sim/Profile.h"
#include "dsl/aicf.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

using namespace aicf;

namespace {

int errors = 0;

void expect(bool ok, const char *what) {
    std::printf("  %s: %s\n", ok ? "ok" : "WRONG", what);
    errors += !ok;
}

// The blur over an input `in` of (W + 2) x (H + 2); blur_x in its own kernel, or in shared
// memory per 32 x 8 block of blur_y.
Func blur(const ImageParam &in, bool fused) {
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    Func blur_x("blur_x"), blur_y("blur_y");
    blur_x(x, y) = (in(x, y) + in(x + 1, y) + in(x + 2, y)) / 3.0f;
    blur_y(x, y) = (blur_x(x, y) + blur_x(x, y + 1) + blur_x(x, y + 2)) / 3.0f;
    blur_y.gpu_tile(x, y, bx, by, tx, ty, 32, 8);
    if (fused) {
        // The one change: blur_x per block, its 32 x 10 tile in shared memory.
        blur_x.compute_at(blur_y, bx).gpu_threads(x, y);
    } else {
        blur_x.compute_root().gpu_tile(x, y, bx, by, tx, ty, 32, 8);
    }
    return blur_y;
}

} // namespace

int main() {
    const Target gpu("host-cuda-sm_90");
    const int W = 1024, H = 512;
    ImageParam in(Float(32), 2, "in");
    // The report needs the extents of every ImageParam (a Buffer the algorithm holds gives
    // its own), and the outputs' sizes.
    ReportArguments sizes;
    sizes.buffers["in"] = {W + 2, H + 2};

    std::printf("== blur_x at the root: two kernels ==\n\n");
    const DataflowReport split = blur(in, false).report({W, H}, gpu, sizes);
    std::printf("%s\n", split.to_text().c_str());
    // How to read it: the first table has one row per launch. `requested` counts what the
    // loads and stores ask for (blur_y asks for each point of blur_x three times); `moved`
    // counts each buffer once per kernel; `compuls.` is the part of `moved` that reads inputs
    // and writes outputs. The second table splits each kernel's bytes by buffer, with its
    // role: blur_x is an intermediate, written by the first kernel and read by the second.
    const int64_t plane = int64_t(W) * H * 4, input_bytes = int64_t(W + 2) * (H + 2) * 4;
    expect(split.kernels.size() == 2, "two kernels");
    expect(split.compulsory_bytes == input_bytes + plane,
           "compulsory: the input once, the output once");
    expect(split.moved_bytes() == split.compulsory_bytes + 2 * int64_t(W) * (H + 2) * 4,
           "moved: the compulsory bytes and blur_x written and read once");

    std::printf("\n== blur_x per block, in shared memory: one kernel ==\n\n");
    const DataflowReport fused = blur(in, true).report({W, H}, gpu, sizes);
    std::printf("%s\n", fused.to_text().c_str());
    expect(fused.kernels.size() == 1, "one kernel");
    expect(fused.moved_bytes() == fused.compulsory_bytes, "it moves only the compulsory bytes");
    // Its price is in `requested`: each point of blur_x reads three of the input, and each
    // block computes 10 rows of blur_x for its 8 rows of output, so the kernel requests the
    // input 3 x 10 / 8 times over (the L1 and L2 caches serve the repeats).
    std::printf("  split moves %.2f MB, fused %.2f MB (%.2fx less); fused requests %.2f MB\n",
                split.moved_bytes() / 1e6, fused.moved_bytes() / 1e6,
                double(split.moved_bytes()) / double(fused.moved_bytes()),
                fused.requested_bytes() / 1e6);
    expect(fused.moved_bytes() < split.moved_bytes(),
           "the change removes the intermediate's bytes");
    // Both kernels and the fused one are memory-bound: the roofline bounds are bytes over the
    // bandwidth, so the bound falls with the bytes.
    expect(fused.roofline.back().memory_bound() &&
               fused.roofline.back().seconds < split.roofline.back().seconds,
           "memory-bound, with a lower time bound on an H200");

    // The counts are static, and the simulator measures the same: run the fused blur on it
    // at a small size and compare its counters with the report at that size.
    std::printf("\n== the report against the simulator ==\n");
    const int w = 96, h = 40;
    Buffer<float> input({w + 2, h + 2}, "in");
    std::mt19937 rng(12);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (int j = 0; j < h + 2; j++)
        for (int i = 0; i < w + 2; i++)
            input(i, j) = dist(rng);
    in.set(input);
    Func small = blur(in, true);
    backends::sim::ProfileRecorder recorder;
    Buffer<float> out = small.realize({w, h}, gpu)[0];
    out.copy_to_host();
    double worst = 0;
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            double rows[3];
            for (int d = 0; d < 3; d++)
                rows[d] =
                    (double(input(i, j + d)) + input(i + 1, j + d) + input(i + 2, j + d)) / 3.0;
            worst = std::max(worst, std::abs(out(i, j) - (rows[0] + rows[1] + rows[2]) / 3.0));
        }
    expect(worst < 1e-5, "the blur is right (against a double-precision loop)");
    if (recorder.launches().empty()) {
        std::printf("  (it ran on a GPU: the simulator measured nothing to compare)\n");
        return errors == 0 ? 0 : 1;
    }
    const DataflowReport at_small = small.report({w, h}, gpu, {}, false);
    const backends::sim::KernelProfile &measured = recorder.launches().at(0);
    std::printf("  report: %lld bytes requested, %lld flops; simulator: %lld bytes, %lld flops\n",
                (long long)at_small.requested_bytes(), (long long)at_small.flops(),
                (long long)(measured.global_bytes_loaded() + measured.global_bytes_stored()),
                (long long)measured.flops);
    expect(at_small.requested_bytes() ==
                   measured.global_bytes_loaded() + measured.global_bytes_stored() &&
               at_small.flops() == measured.flops,
           "the static counts are the simulator's");

    // For tools: JSON (its fields are in the README), and a picture of the dataflow regions,
    // each kernel a box, each edge labelled with the bytes it moves or "on chip".
    FILE *json = std::fopen("lesson_12_blur.json", "w");
    if (json) {
        std::fputs(fused.to_json().c_str(), json);
        std::fclose(json);
    }
    const bool svg = write_report_picture(split, "lesson_12_blur.dot", "lesson_12_blur.svg");
    std::printf("\nwrote lesson_12_blur.json and lesson_12_blur.dot%s\n",
                svg ? " and lesson_12_blur.svg" : "");
    return errors == 0 ? 0 : 1;
}
