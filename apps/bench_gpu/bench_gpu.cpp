// GPU benchmarks: median times of GPU schedules on the device AICF_DEVICE names, against
// the device's own copy bandwidth (cuMemcpyDtoD) measured in the same run. Not a test: it
// prints a table, one row per workload.
//
//   copy         out(x) = in(x), vectorized by 4: what a kernel gets of the copy bandwidth
//   layernorm    rows x 4096 float32, one block per row: bytes moved at least 2 x the input
//   matmul       n^3 float32: 128 x 128 tiles per block, 8 x 8 per thread in registers, tiles
//                of A and B staged in shared memory for each step of the reduction
//                (apps/common/MatmulGPU.h)
//   gemm         bfloat16 inputs, float32 accumulation and result, on tensor cores (mma.sync
//                fed by ldmatrix from padded shared tiles that cp.async fills in 3 stages;
//                apps/common/GemmGPU.h), at the sizes the GPU check script also times
//                torch.matmul on, and with other tiles and stages at 4096^3; on an sm_90 GPU
//                (and the simulator) also on Hopper's warpgroup tensor cores (wgmma.mma_async
//                reading core-matrix tiles that cp.async fills; the rows marked "wg")
//
// Kernels are compiled for the GPU's own architecture (sm_80 on the simulator) with fused
// multiply-adds, as CUDA compilers compile by default and as the cuBLAS peer computes. The
// layernorm and matmul kernels also run as compiled ahead of time (gpu_generators.cpp, for
// sm_80 with fused multiply-adds, with cubins for sm_80 and sm_90) through their C functions:
// the "AOT" rows, whose results must equal bit for bit the JIT's under the same target.
// `bench_gpu --small` runs small sizes (for the simulator); results are checked against
// double-precision loops on a sample of points either way.

#include "AotCall.h"
#include "GPUDevice.h"
#include "GemmGPU.h"
#include "LayerNormGPU.h"
#include "MatmulGPU.h"
#include "Timing.h"
#include "dsl/aicf.h"

#include "layernorm_block_aot.h"
#include "matmul_simt_aot.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <vector>

using namespace aicf;
using aicf_apps::copy_peer_ms;
using aicf_apps::median_ms;

namespace {

int failures = 0;

const Target &target() {
    return aicf_apps::device_target();
}

void fill(const Buffer<float> &b, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    float *p = b.data();
    for (int64_t i = 0; i < b.number_of_elements(); i++)
        p[i] = d(rng);
}

void row(const char *name, const std::string &size, double ms, double gbs, double peer_gbs,
         const std::string &extra, bool ok) {
    std::printf("| %-10s | %-14s | %9.3f | %8.1f | %8s | %6s | %-22s | %s |\n", name, size.c_str(),
                ms, gbs, peer_gbs > 0 ? std::to_string(int(peer_gbs)).c_str() : "n/a",
                peer_gbs > 0 ? (std::to_string(int(100 * gbs / peer_gbs)) + "%").c_str() : "n/a",
                extra.c_str(), ok ? "ok" : "WRONG");
    failures += !ok;
}

// A kernel compiled ahead of time, called as call(tensors) on `inputs` and an output: first on
// host tensors (copied to the device and back), to compare bit for bit with what the JIT
// computes of `f` under the library's target; then timed where the JIT left its buffers (on
// a GPU, kDLCUDA tensors used in place, the output the JIT's `jit`, written again with the
// same values). Returns the median time and whether the bits agreed.
template <typename F>
std::pair<double, bool> run_aot(Func f, const std::vector<const Buffer<float> *> &inputs,
                                const Buffer<float> &jit, F &&call, int runs) {
    using aicf_apps::DLView;
    const Buffer<> want = aicf_apps::jit_under_aot_target(f, jit, target());
    Buffer<float> out({jit.extent(0), jit.extent(1)}, "aot");
    auto tensors = [&](const Buffer<float> &result, bool in_place) {
        std::deque<DLView> t;
        for (const Buffer<float> *b : inputs)
            t.emplace_back(*b, in_place && aicf_apps::has_device_copy(*b));
        t.emplace_back(result, in_place);
        return t;
    };
    std::deque<DLView> host = tensors(out, false);
    if (call(host) != 0) {
        std::printf("AOT call failed: %s\n", aicf_last_error());
        return {0, false};
    }
    const bool same = std::memcmp(out.data(), want.raw_buffer()->host,
                                  sizeof(float) * size_t(jit.number_of_elements())) == 0;
    const bool in_place = aicf_apps::has_device_copy(jit);
    std::deque<DLView> timed = tensors(in_place ? jit : out, in_place);
    if (call(timed) != 0) {
        std::printf("AOT call on the timed tensors failed: %s\n", aicf_last_error());
        return {0, false};
    }
    const double ms = median_ms([&] { call(timed); }, runs);
    return {ms, same};
}

void copy(int64_t n, int runs, double peer_gbs) {
    Buffer<float> in({int(n)}, "in");
    fill(in, 1);
    Var x("x"), xo("xo"), xv("xv"), bx("bx"), tx("tx");
    Func f("copy");
    f(x) = in(x);
    f.split(x, xo, xv, 4).vectorize(xv).gpu_tile(xo, bx, tx, 256);
    Buffer<float> out({int(n)}, "out");
    double ms = median_ms([&] { f.realize(out, target()); }, runs);
    bool ok = true;
    for (int64_t i = 0; i < n; i += n / 97 + 1)
        ok = ok && out(int(i)) == in(int(i));
    double gbs = 2.0 * n * 4 / (ms * 1e6);
    row("copy", std::to_string(n) + " f32", ms, gbs, peer_gbs, "", ok);
}

void layernorm(int rows, int runs, double peer_gbs) {
    const int N = 4096, T = 256;
    Buffer<float> in({N, rows}, "in");
    fill(in, 2);
    Func out = aicf_apps::layernorm_one_block_per_row(in, N, T, "layernorm");
    Buffer<float> result({N, rows}, "result");
    double ms = median_ms([&] { out.realize(result, target()); }, runs);
    bool ok = true;
    for (int j = 0; j < rows; j += rows / 7 + 1) {
        double m = 0, v = 0;
        for (int i = 0; i < N; i++)
            m += in(i, j);
        m /= N;
        for (int i = 0; i < N; i++)
            v += (in(i, j) - m) * (in(i, j) - m);
        v /= N;
        for (int i = 0; i < N; i += 61) {
            double want = (in(i, j) - m) / std::sqrt(v + 1e-5);
            ok = ok && std::fabs(result(i, j) - want) <= 1e-3 + 1e-3 * std::fabs(want);
        }
    }
    double gbs = 2.0 * N * rows * 4 / (ms * 1e6);
    row("layernorm", std::to_string(rows) + " x 4096", ms, gbs, peer_gbs, "one block per row", ok);

    auto [aot_ms, same] = run_aot(
        out, {&in}, result,
        [](std::deque<aicf_apps::DLView> &t) { return layernorm_block_aot(&t[0].t, &t[1].t); },
        runs);
    row("layernorm", std::to_string(rows) + " x 4096", aot_ms, 2.0 * N * rows * 4 / (aot_ms * 1e6),
        peer_gbs, same ? "AOT, same bits as JIT" : "AOT, NOT the JIT's bits", ok && same);
}

// C (w x h) = A (K x h) * B (w x K); every point checked against a double-precision loop where
// the product is small, a sample of them otherwise.
void matmul(int w, int h, int K, int runs) {
    Buffer<float> A({K, h}, "A"), B({w, K}, "B");
    fill(A, 3);
    fill(B, 4);
    Func out = aicf_apps::matmul_register_tiled(A, B, K, "matmul");
    Buffer<float> C({w, h}, "C");
    double ms = median_ms([&] { out.realize(C, target()); }, runs);
    bool ok = true;
    const int sy = h > 256 ? h / 5 + 1 : 1, sx = w > 256 ? w / 7 + 1 : 1;
    for (int j = 0; j < h; j += sy) {
        for (int i = 0; i < w; i += sx) {
            double want = 0;
            for (int kk = 0; kk < K; kk++)
                want += double(A(kk, j)) * B(i, kk);
            ok = ok && std::fabs(C(i, j) - want) <= 1e-3 * (1 + std::fabs(want));
        }
    }
    const double flops = 2.0 * w * h * double(K);
    const std::string size = w == h && h == K ? std::to_string(w) + "^3 f32"
                                              : std::to_string(w) + "x" + std::to_string(h) + "x" +
                                                    std::to_string(K) + " f32";
    char rate[64];
    std::snprintf(rate, sizeof rate, "%.1f GFLOP/s", flops / (ms * 1e6));
    row("matmul", size, ms, 0, -1, rate, ok);

    auto [aot_ms, same] = run_aot(
        out, {&A, &B}, C,
        [](std::deque<aicf_apps::DLView> &t) { return matmul_simt_aot(&t[0].t, &t[1].t, &t[2].t); },
        runs);
    std::snprintf(rate, sizeof rate, same ? "AOT %.1f GFLOP/s, same" : "AOT %.1f GFLOP/s, DIFFERS",
                  flops / (aot_ms * 1e6));
    row("matmul", size, aot_ms, 0, -1, rate, ok && same);

    // The same schedule with two blocks per multiprocessor (registers capped at 128).
    Func bounded = aicf_apps::matmul_register_tiled(A, B, K, "matmul_2bpsm", {}, 2);
    Buffer<float> C2({w, h}, "C2");
    const double bounded_ms = median_ms([&] { bounded.realize(C2, target()); }, runs);
    C2.copy_to_host();
    const bool same_bounded =
        std::memcmp(C2.data(), C.data(), sizeof(float) * size_t(w) * size_t(h)) == 0;
    std::snprintf(rate, sizeof rate, "2 blocks/SM %.1f GFLOP/s", flops / (bounded_ms * 1e6));
    row("matmul", size, bounded_ms, 0, -1, rate, ok && same_bounded);
}

// C (N x M) = A (K x M) * B (N x K) in bfloat16 on tensor cores, float32 result; a sample of
// points checked against a double-precision product of the same bfloat16 values.
// GB/s counts A, B and C once each; of copy, against `peer_gbs` where given (a product of few
// rows, a decoding step, reads little more than B: its time is B's bytes at the bandwidth).
void gemm(int M, int N, int K, int runs, const aicf_apps::GemmSchedule &schedule = {},
          double peer_gbs = -1) {
    Buffer<bfloat16_t> A({K, M}, "A"), B({N, K}, "B");
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (const Buffer<bfloat16_t> *b : {&A, &B}) {
        bfloat16_t *p = b->data();
        for (int64_t i = 0; i < b->number_of_elements(); i++)
            p[i] = bfloat16_t(d(rng));
    }
    Func out = aicf_apps::gemm_tensor_cores(A, B, K, "gemm", {}, {}, schedule);
    Buffer<float> C({N, M}, "C");
    // wgmma (warpgroups) needs sm_90a; the caller checks that the device runs it.
    const Target t = schedule.warpgroups ? *aicf_apps::hopper_target() : target();
    const double ms = median_ms([&] { out.realize(C, t); }, runs);
    C.copy_to_host();
    bool ok = true;
    const int sy = M > 256 ? M / 5 + 1 : 1, sx = N > 256 ? N / 7 + 1 : 1;
    for (int j = 0; j < M; j += sy) {
        for (int i = 0; i < N; i += sx) {
            double magnitude = 0;
            const double want = aicf_apps::gemm_reference_point(A, B, i, j, &magnitude);
            ok = ok && std::fabs(C(i, j) - want) <= 1e-5 * (1 + magnitude);
        }
    }
    char size[48], rate[64];
    std::snprintf(size, sizeof size, "%dx%dx%d", M, N, K);
    std::snprintf(rate, sizeof rate, "%.1f TFLOP/s, %s", 2.0 * M * N * double(K) / (ms * 1e9),
                  schedule.to_string().c_str());
    const double bytes = 2.0 * (double(M) * K + double(K) * N) + 4.0 * double(M) * N;
    row("gemm", size, ms, bytes / (ms * 1e6), peer_gbs, rate, ok);
}

} // namespace

int run(int argc, char **argv) {
    bool small = argc > 1 && std::strcmp(argv[1], "--small") == 0;
    const char *device = std::getenv("AICF_DEVICE");
    std::printf("AICF GPU benchmarks on %s", device && *device ? device : "the default device");
    std::printf("%s", aicf_apps::device_description().c_str());
    std::printf(", target %s\n\n", target().to_string().c_str());

    int64_t copy_n = small ? 1 << 16 : int64_t(1) << 26;
    int runs = small ? 3 : 20;
    double peer_ms = copy_peer_ms(copy_n * 4, runs);
    double peer_gbs = peer_ms > 0 ? 2.0 * copy_n * 4 / (peer_ms * 1e6) : -1;
    std::printf("| workload   | size           | median ms | GB/s     | copy GB/s | of copy | note "
                "                  | check |\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
    copy(copy_n, runs, peer_gbs);
    layernorm(small ? 16 : 8192, runs, peer_gbs);
    if (small) {
        matmul(256, 256, 256, 1);
        // Tiles that do not divide C, and a reduction that 8 does not divide.
        matmul(157, 131, 21, 1);
        gemm(256, 256, 256, 1);
        gemm(200, 136, 72, 1);
        aicf_apps::GemmSchedule decode;
        decode.guard_rows = true;
        gemm(3, 136, 72, 1, decode, peer_gbs);
        if (aicf_apps::hopper_target()) gemm(200, 136, 72, 1, aicf_apps::GemmSchedule::hopper());
    } else {
        matmul(2048, 2048, 2048, 10);
        // The default schedule (128 x 64 tiles of 4 warps, 3 stages, steps of 32 along k),
        // then larger tiles, longer steps, more stages and blocks launched in groups of rows at
        // 4096^3, for choosing among them on the GPU at hand.
        using aicf_apps::GemmSchedule;
        std::vector<GemmSchedule> schedules;
        auto add = [&](GemmSchedule s, int n_tiles, int k_tiles, int stages) {
            s.n_tiles = n_tiles;
            s.k_tiles = k_tiles;
            s.stages = stages;
            schedules.push_back(s);
        };
        add(GemmSchedule{}, 4, 2, 3);
        add(GemmSchedule{}, 8, 2, 3); // 256 x 64, warps of 64 x 64
        add(GemmSchedule{}, 4, 4, 3); // 128 x 64, steps of 64
        add(GemmSchedule{}, 8, 4, 3);
        add(GemmSchedule{}, 8, 4, 4);
        add(GemmSchedule::large_tiles(), 4, 2, 3); // 128 x 128, steps of 32
        add(GemmSchedule::large_tiles(), 4, 4, 3); // large_tiles()
        add(GemmSchedule::large_tiles(), 4, 4, 4);
        add(GemmSchedule::large_tiles(), 4, 8, 3);
        add(GemmSchedule::large_tiles(8), 4, 4, 3); // 256 x 128
        for (int group : {8, 16}) {
            add(GemmSchedule::large_tiles(), 4, 4, 3); // blocks in groups of rows of tiles
            schedules.back().row_group = group;
        }
        // wgmma on Hopper: 128 x 128 and 128 x 256 tiles of two warpgroups, steps of 64 and
        // 32, 3 and 4 stages.
        if (aicf_apps::hopper_target()) {
            schedules.push_back(GemmSchedule::hopper());
            schedules.push_back(GemmSchedule::hopper());
            schedules.back().stages = 4;
            schedules.push_back(GemmSchedule::hopper(2, 256));
            schedules.push_back(GemmSchedule::hopper(2, 256));
            schedules.back().k_tiles = 2;
            schedules.back().stages = 4;
            schedules.push_back(GemmSchedule::hopper(1, 256));
        }
        for (const GemmSchedule &s : schedules)
            gemm(4096, 4096, 4096, 10, s);
        gemm(8192, 8192, 8192, 5);
        gemm(8192, 4096, 16384, 5);
        gemm(8192, 8192, 8192, 5, GemmSchedule::large_tiles());
        gemm(8192, 4096, 16384, 5, GemmSchedule::large_tiles());
        if (aicf_apps::hopper_target()) {
            // Also with the blocks launched 8 rows of tiles at a time: at these sizes B does
            // not fit in L2, and a wave of blocks along whole rows of tiles reads all of it.
            GemmSchedule grouped = GemmSchedule::hopper(2, 256);
            grouped.row_group = 8;
            for (const GemmSchedule &s : {GemmSchedule::hopper(2, 256), grouped}) {
                gemm(8192, 8192, 8192, 5, s);
                gemm(8192, 4096, 16384, 5, s);
            }
        }
        // Decoding steps: 1 and 16 tokens through a 4096 x 16384 weight, the rows guarded.
        GemmSchedule decode;
        decode.guard_rows = true;
        for (int tokens : {1, 16})
            gemm(tokens, 16384, 4096, 20, decode, peer_gbs);
    }
    std::printf(
        "\nGB/s counts the compulsory bytes (each input read once, each output written once).\n"
        "The copy peer is the driver's device-to-device copy of the copy workload's bytes.\n");
    return failures == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
    try {
        return run(argc, argv);
    } catch (const aicf::Error &e) {
        std::fprintf(stderr, "bench_gpu: %s\n", e.what());
        return 1;
    }
}
