// GPU benchmarks: median times of GPU schedules on the device AICF_DEVICE names, against
// the device's own copy bandwidth (cuMemcpyDtoD) measured in the same run. Not a test: it
// prints a table, one row per workload.
//
//   copy         out(x) = in(x), vectorized by 4: what a kernel gets of the copy bandwidth
//   layernorm    rows x 4096 float32, one block per row: bytes moved at least 2 x the input
//   matmul       n^3 float32: 128 x 128 tiles per block, 8 x 8 per thread in registers, tiles
//                of A and B staged in shared memory for each step of the reduction
//                (apps/common/MatmulGPU.h)
//
// Kernels are compiled for the GPU's own architecture (sm_80 on the simulator) with fused
// multiply-adds, as CUDA compilers compile by default and as the cuBLAS peer computes.
// `bench_gpu --small` runs small sizes (for the simulator); results are checked against
// double-precision loops on a sample of points either way.

#include "GPUDevice.h"
#include "LayerNormGPU.h"
#include "MatmulGPU.h"
#include "Timing.h"
#include "dsl/aicf.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

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
}

void matmul(int n, int runs) {
    Buffer<float> A({n, n}, "A"), B({n, n}, "B");
    fill(A, 3);
    fill(B, 4);
    Func out = aicf_apps::matmul_register_tiled(A, B, n, "matmul");
    Buffer<float> C({n, n}, "C");
    double ms = median_ms([&] { out.realize(C, target()); }, runs);
    bool ok = true;
    for (int j = 0; j < n; j += n / 5 + 1) {
        for (int i = 0; i < n; i += n / 7 + 1) {
            double want = 0;
            for (int kk = 0; kk < n; kk++)
                want += double(A(kk, j)) * B(i, kk);
            ok = ok && std::fabs(C(i, j) - want) <= 1e-3 * (1 + std::fabs(want));
        }
    }
    double tflops = 2.0 * n * n * double(n) / (ms * 1e9);
    char rate[64];
    std::snprintf(rate, sizeof rate, "%.1f GFLOP/s", tflops * 1000);
    row("matmul", std::to_string(n) + "^3 f32", ms, 0, -1, rate, ok);
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
    matmul(small ? 256 : 2048, small ? 1 : 10);
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
