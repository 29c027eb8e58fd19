// Benchmarks of the row-wise operators of apps/common/ModelOps.h under the schedules of
// apps/common/NormSchedules.h: layernorm, RMSNorm and softmax at (rows, cols) = (16384, 1024),
// (4096, 8192) and (1024, 65536), float and bfloat16 storage, on the device AICF_DEVICE names.
// Not a test: it prints a table, one row per operator, shape, type and schedule, with the
// median time, GB/s of compulsory bytes (input read once, output written once, parameters
// read once per row) and that rate against the device's own copy bandwidth (cuMemcpyDtoD)
// measured in the same run. PyTorch's kernels are timed by scripts/gpu_check.sh in the same
// call. Each result is checked against double precision on a sample of rows.
//
// `bench_norms --small` runs small shapes (for the simulator).

#include "AotCall.h"
#include "GPUDevice.h"
#include "NormSchedules.h"
#include "Timing.h"
#include "dsl/aicf.h"
#include "layernorm_f32_warp_aot.h"
#include "rmsnorm_bf16_block_aot.h"
#include "softmax_f32_block_aot.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

using namespace aicf;
using aicf_apps::NormSchedule;
using aicf_apps::RowwiseOp;

namespace {

int failures = 0;

const Target &target() {
    return aicf_apps::device_target();
}

template <typename T> void fill(const Buffer<T> &b, unsigned seed, float lo, float hi) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(lo, hi);
    T *p = b.data();
    for (int64_t i = 0; i < b.number_of_elements(); i++)
        p[i] = T(d(rng));
}

enum class Op { LayerNorm, RMSNorm, Softmax };
const char *to_string(Op op) {
    return op == Op::LayerNorm ? "layernorm" : op == Op::RMSNorm ? "rmsnorm" : "softmax";
}

template <typename T>
void bench(Op op, int rows, int cols, NormSchedule schedule, int runs, double peer_gbs) {
    Buffer<T> in({cols, rows}, "in"), weight({cols}, "weight"), bias({cols}, "bias");
    fill(in, 1, -3, 3);
    fill(weight, 2, 0.5f, 1.5f);
    fill(bias, 3, -1, 1);
    RowwiseOp a = op == Op::LayerNorm
                      ? aicf_apps::layer_norm<T>(in, weight, bias, cols, 1e-5f, "op")
                  : op == Op::RMSNorm ? aicf_apps::rms_norm<T>(in, weight, cols, 1e-5f, "op")
                                      : aicf_apps::softmax<T>(in, cols, "op");
    aicf_apps::schedule<T>(a, schedule);
    Buffer<T> out({cols, rows}, "out");
    double ms = aicf_apps::median_ms([&] { a.out.realize(Realization(out), target()); }, runs);
    // A sample of rows against double precision.
    bool ok = true;
    for (int j = 0; j < rows; j += rows / 5 + 1) {
        double m = 0, sq = 0, hi = -1e300, total = 0;
        for (int i = 0; i < cols; i++) {
            double v = float(in(i, j));
            m += v;
            hi = std::max(hi, v);
        }
        m /= cols;
        for (int i = 0; i < cols; i++) {
            double v = float(in(i, j));
            sq += op == Op::LayerNorm ? (v - m) * (v - m) : v * v;
            total += std::exp(v - hi);
        }
        for (int i = 0; i < cols; i += cols / 61 + 1) {
            double v = float(in(i, j)), w = float(weight(i)), want;
            if (op == Op::LayerNorm)
                want = (v - m) / std::sqrt(sq / cols + 1e-5) * w + float(bias(i));
            else if (op == Op::RMSNorm)
                want = v / std::sqrt(sq / cols + 1e-5) * w;
            else
                want = std::exp(v - hi) / total;
            const double tol = sizeof(T) == 4 ? 1e-4 : 1.0 / 64;
            ok = ok && std::fabs(float(out(i, j)) - want) <= tol * (1 + std::fabs(want));
        }
    }
    const int params = op == Op::LayerNorm ? 2 : op == Op::RMSNorm ? 1 : 0;
    double bytes = double(sizeof(T)) * cols * (2.0 * rows + params);
    double gbs = bytes / (ms * 1e6);
    std::printf("| %-9s | %5d x %-5d | %-4s | %-13s | %9.3f | %8.1f | %6s | %s |\n", to_string(op),
                rows, cols, sizeof(T) == 4 ? "f32" : "bf16", aicf_apps::to_string(schedule), ms,
                gbs,
                peer_gbs > 0 ? (std::to_string(int(100 * gbs / peer_gbs)) + "%").c_str() : "n/a",
                ok ? "ok" : "WRONG");
    failures += !ok;
}

// The kernels compiled ahead of time (norm_generators.cpp): each run through its C function
// on DLPack tensors and by the JIT with the same algorithm and schedule under the libraries'
// target; the results must agree bit for bit. Timed on the JIT's device copies where a GPU
// left them (on the simulator, on host tensors copied to the device and back).
template <typename T, typename F>
void check_aot(const char *name, F &&aot, Op op, NormSchedule schedule, int rows, int cols,
               int runs) {
    Buffer<T> in({cols, rows}, "in"), weight({cols}, "weight"), bias({cols}, "bias");
    fill(in, 4, -3, 3);
    fill(weight, 5, 0.5f, 1.5f);
    fill(bias, 6, -1, 1);
    Buffer<T> out({cols, rows}, "out"), jit({cols, rows}, "jit");
    RowwiseOp a = op == Op::LayerNorm
                      ? aicf_apps::layer_norm<T>(in, weight, bias, cols, 1e-5f, "norm")
                  : op == Op::RMSNorm ? aicf_apps::rms_norm<T>(in, weight, cols, 1e-5f, "norm")
                                      : aicf_apps::softmax<T>(in, cols, "norm");
    aicf_apps::schedule<T>(a, schedule);
    a.out.realize(Realization(jit), aicf_apps::aot_target());
    jit.copy_to_host();
    using aicf_apps::DLView;
    int code;
    {
        DLView ti(in, false), tw(weight, false), tb(bias, false), to(out, false);
        code = aot(&ti.t, &tw.t, &tb.t, &to.t);
    }
    // Each buffer in place where the JIT left a device copy of it (the output: the JIT's).
    const bool in_place = aicf_apps::has_device_copy(jit);
    DLView ti(in, aicf_apps::has_device_copy(in)), tw(weight, aicf_apps::has_device_copy(weight)),
        tb(bias, aicf_apps::has_device_copy(bias)), to(in_place ? jit : out, in_place);
    if (code == 0) code = aot(&ti.t, &tw.t, &tb.t, &to.t);
    const double ms = aicf_apps::median_ms([&] { aot(&ti.t, &tw.t, &tb.t, &to.t); }, runs);
    const bool same = code == 0 && std::memcmp(out.data(), jit.data(),
                                               sizeof(T) * size_t(rows) * size_t(cols)) == 0;
    std::printf("| %-22s | %5d x %-5d | %-21s | %9.3f | %s |\n", name, rows, cols,
                in_place ? "device, used in place" : "host, copied", ms,
                code != 0 ? aicf_last_error()
                : same    ? "same bits as the JIT"
                          : "DIFFERENT");
    failures += !same;
}

int run(int argc, char **argv) {
    const bool small = argc > 1 && std::strcmp(argv[1], "--small") == 0;
    const char *device = std::getenv("AICF_DEVICE");
    std::printf("AICF norm benchmarks on %s", device && *device ? device : "the default device");
    std::printf("%s", aicf_apps::device_description().c_str());
    std::printf(", target %s\n\n", target().to_string().c_str());
    const int runs = small ? 2 : 20;
    const int64_t copy_bytes = int64_t(1) << 28;
    const double peer_ms = aicf_apps::copy_peer_ms(copy_bytes, runs);
    double peer_gbs = peer_ms > 0 ? 2.0 * copy_bytes / (peer_ms * 1e6) : -1;
    if (peer_gbs > 0) std::printf("copy peer (cuMemcpyDtoD, 256 MiB): %.1f GB/s\n\n", peer_gbs);
    std::printf("| op        | rows x cols   | type | schedule      | median ms | GB/s     | of "
                "copy | check |\n|---|---|---|---|---|---|---|---|\n");
    const int shapes[3][2] = {{16384, 1024}, {4096, 8192}, {1024, 65536}};
    for (Op op : {Op::LayerNorm, Op::RMSNorm, Op::Softmax}) {
        for (const auto &shape : shapes) {
            const int rows = small ? 3 : shape[0], cols = small ? shape[1] / 8 : shape[1];
            for (NormSchedule s :
                 {NormSchedule::WarpPerRow, NormSchedule::BlockPerRow, NormSchedule::SharedTree}) {
                if (s == NormSchedule::WarpPerRow && cols > 4096) continue;
                bench<float>(op, rows, cols, s, runs, peer_gbs);
                bench<bfloat16_t>(op, rows, cols, s, runs, peer_gbs);
            }
        }
    }
    std::printf("\nGB/s counts compulsory bytes: the input read once, the output written once and "
                "the parameters read once.\n");
    std::printf(
        "\nCompiled ahead of time (norm_generators.cpp, for %s; C functions on DLPack "
        "tensors), against the JIT under the same target:\n\n"
        "| library                | rows x cols   | tensors               | median ms | check |\n"
        "|---|---|---|---|---|\n",
        aicf_apps::aot_target().to_string().c_str());
    const int aot_rows = small ? 3 : 4096;
    check_aot<float>("layernorm_f32_warp_aot", layernorm_f32_warp_aot, Op::LayerNorm,
                     NormSchedule::WarpPerRow, aot_rows, 1024, runs);
    check_aot<bfloat16_t>("rmsnorm_bf16_block_aot", rmsnorm_bf16_block_aot, Op::RMSNorm,
                          NormSchedule::BlockPerRow, aot_rows, 8192, runs);
    check_aot<float>("softmax_f32_block_aot", softmax_f32_block_aot, Op::Softmax,
                     NormSchedule::BlockPerRow, aot_rows, 1024, runs);
    return failures == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
    try {
        return run(argc, argv);
    } catch (const aicf::Error &e) {
        std::fprintf(stderr, "bench_norms: %s\n", e.what());
        return 1;
    }
}
