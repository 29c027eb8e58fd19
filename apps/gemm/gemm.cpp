// The tensor-core matrix product (apps/common/GemmGPU.h) in each of its variants, on the device
// AICF_DEVICE names: bfloat16, float16 and float32 (through TF32) inputs with float32 results,
// and the fused epilogues (bias and GELU; bias, GELU and a residual, stored as bfloat16). Each
// runs compiled by the JIT and through the C function of its library compiled ahead of time
// (gemm_generators.cpp), which must agree bit for bit, and a sample of points is checked
// against a double-precision product of the same inputs. Prints a table with the JIT's median
// time; `gemm --small` runs small sizes (for the simulator), `gemm M N K` one size.

#include "AotCall.h"
#include "GPUDevice.h"
#include "GemmGPU.h"
#include "Timing.h"
#include "dsl/aicf.h"

#include "gemm_bfloat16.h"
#include "gemm_bfloat16_hopper.h"
#include "gemm_bfloat16_k8.h"
#include "gemm_bias_gelu_bfloat16.h"
#include "gemm_bias_gelu_residual_bfloat16.h"
#include "gemm_float16.h"
#include "gemm_float32.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace aicf;

namespace {

int failures = 0;

double value(const Buffer<> &b, int x, int y) {
    const Type t = b.type();
    if (t == Float(32)) return Buffer<float>(b)(x, y);
    if (t == Float(16)) return float(Buffer<float16_t>(b)(x, y));
    return float(Buffer<bfloat16_t>(b)(x, y));
}

Buffer<> random_matrix(Type t, int w, int h, unsigned seed, const char *name) {
    Buffer<> b(t, {w, h}, name);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (int j = 0; j < h; j++) {
        for (int i = 0; i < w; i++) {
            const float v = d(rng);
            if (t == Float(32)) {
                Buffer<float> f(b);
                f(i, j) = v;
            } else if (t == Float(16)) {
                Buffer<float16_t> f(b);
                f(i, j) = float16_t(v);
            } else {
                Buffer<bfloat16_t> f(b);
                f(i, j) = bfloat16_t(v);
            }
        }
    }
    return b;
}

// NoneKInPieces: the plain product through the library built for a K in 16-byte pieces;
// NoneHopper: on Hopper's wgmma (GemmSchedule::hopper(), sm_90a).
enum class Epilogue { None, BiasGelu, BiasGeluResidual, NoneKInPieces, NoneHopper };

void run(Type in, Epilogue epilogue, int M, int N, int K, int runs) {
    Buffer<> A = random_matrix(in, K, M, 1, "A"), B = random_matrix(in, N, K, 2, "B");
    Buffer<> bias = random_matrix(Float(32), N, 1, 3, "bias");
    Buffer<> residual = random_matrix(BFloat(16), N, M, 4, "residual");
    Buffer<float> bias1({N}, "bias1");
    for (int i = 0; i < N; i++)
        bias1(i) = float(value(bias, i, 0));
    const Buffer<bfloat16_t> residual_bf16(residual);
    const bool plain = epilogue == Epilogue::None || epilogue == Epilogue::NoneKInPieces ||
                       epilogue == Epilogue::NoneHopper;
    const bool hopper = epilogue == Epilogue::NoneHopper;
    const aicf_apps::GemmEpilogue e =
        plain ? aicf_apps::GemmEpilogue{}
        : epilogue == Epilogue::BiasGelu
            ? aicf_apps::bias_gelu_epilogue(bias1)
            : aicf_apps::bias_gelu_residual_epilogue(bias1, residual_bf16);
    Func out = aicf_apps::gemm_tensor_cores(A, B, K, "gemm", e, {},
                                            hopper ? aicf_apps::GemmSchedule::hopper()
                                                   : aicf_apps::GemmSchedule());
    Buffer<> C(e.out_type, {N, M}, "C");
    // The Hopper library's target: sm_90a, with the others' features.
    const Target hopper_library("host-cuda-sm_90a-fma");
    const Target target = hopper ? hopper_library : aicf_apps::device_target();
    const double ms = aicf_apps::median_ms([&] { out.realize(C, target); }, runs);
    C.copy_to_host();

    // The same through the library compiled ahead of time, on host tensors, against the JIT
    // under the library's own target (on a GPU the JIT's target is the device's).
    Buffer<> C_aot(e.out_type, {N, M}, "C_aot");
    const Buffer<> C_same = hopper ? aicf_apps::jit_under_aot_target(out, C, target, hopper_library)
                                   : aicf_apps::jit_under_aot_target(out, C, target);
    const Buffer<> bias_1d(bias1);
    aicf_apps::DLView a(A, false), b(B, false), c(C_aot, false), bt(bias_1d, false),
        rt(residual, false);
    int rc = -1;
    if (epilogue == Epilogue::BiasGeluResidual) {
        rc = gemm_bias_gelu_residual_bfloat16(&a.t, &b.t, &bt.t, &rt.t, &c.t);
    } else if (epilogue == Epilogue::BiasGelu) {
        rc = gemm_bias_gelu_bfloat16(&a.t, &b.t, &bt.t, &c.t);
    } else if (epilogue == Epilogue::NoneKInPieces) {
        rc = gemm_bfloat16_k8(&a.t, &b.t, &c.t);
    } else if (hopper) {
        rc = gemm_bfloat16_hopper(&a.t, &b.t, &c.t);
    } else if (in == BFloat(16)) {
        rc = gemm_bfloat16(&a.t, &b.t, &c.t);
    } else if (in == Float(16)) {
        rc = gemm_float16(&a.t, &b.t, &c.t);
    } else {
        rc = gemm_float32(&a.t, &b.t, &c.t);
    }
    if (rc != 0) std::printf("AOT call failed: %s\n", aicf_last_error());
    const bool same = rc == 0 && std::memcmp(C_same.raw_buffer()->host, C_aot.raw_buffer()->host,
                                             size_t(M) * N * e.out_type.bytes()) == 0;

    // A sample of points against double precision (TF32 keeps 10 bits of each input; a
    // bfloat16 result 8 bits of the value).
    bool ok = true;
    const int sy = M > 256 ? M / 5 + 1 : 1, sx = N > 256 ? N / 7 + 1 : 1;
    for (int j = 0; j < M; j += sy) {
        for (int i = 0; i < N; i += sx) {
            double magnitude = 0;
            double want =
                in == Float(32) ? aicf_apps::gemm_reference_point(
                                      Buffer<float>(A), Buffer<float>(B), i, j, &magnitude)
                : in == Float(16)
                    ? aicf_apps::gemm_reference_point(Buffer<float16_t>(A), Buffer<float16_t>(B), i,
                                                      j, &magnitude)
                    : aicf_apps::gemm_reference_point(Buffer<bfloat16_t>(A), Buffer<bfloat16_t>(B),
                                                      i, j, &magnitude);
            if (!plain) {
                want += value(bias, i, 0);
                want = 0.5 * want * (1 + std::erf(want / std::sqrt(2.0)));
            }
            if (epilogue == Epilogue::BiasGeluResidual) want += value(residual, i, j);
            double tolerance = 1e-5 * (1 + magnitude);
            if (in == Float(32)) tolerance += std::ldexp(magnitude, -10);
            if (e.out_type == BFloat(16)) tolerance += std::ldexp(std::fabs(want), -8);
            ok = ok && std::fabs(value(C, i, j) - want) <= tolerance;
        }
    }
    static const char *const names[] = {"C = A B", "GELU(A B + bias)", "GELU(A B + bias) + R",
                                        "C = A B, K%8 = 0", "C = A B, wgmma"};
    const std::string type = in == Float(32) ? "tf32" : in == Float(16) ? "f16" : "bf16";
    char size[40];
    std::snprintf(size, sizeof size, "%dx%dx%d", M, N, K);
    std::printf("| %-4s | %-20s | %-16s | %9.3f | %8.1f | %-4s | %s |\n", type.c_str(),
                names[int(epilogue)], size, ms, 2.0 * M * N * double(K) / (ms * 1e9),
                same ? "same" : "DIFF", ok ? "ok" : "WRONG");
    failures += !ok || !same;
}

} // namespace

int main(int argc, char **argv) {
    try {
        const bool small = argc > 1 && std::strcmp(argv[1], "--small") == 0;
        std::vector<std::array<int, 3>> sizes;
        if (argc == 4) {
            sizes.push_back({std::atoi(argv[1]), std::atoi(argv[2]), std::atoi(argv[3])});
        } else if (small) {
            sizes = {{200, 136, 72}, {128, 256, 128}};
        } else {
            sizes = {{4096, 4096, 4096}};
        }
        const int runs = small ? 1 : 10;
        const char *device = std::getenv("AICF_DEVICE");
        std::printf("Tensor-core GEMM on %s%s, target %s\n\n",
                    device && *device ? device : "the default device",
                    aicf_apps::device_description().c_str(),
                    aicf_apps::device_target().to_string().c_str());
        std::printf("| type | epilogue             | M x N x K        | median ms | TFLOP/s  | AOT "
                    " | check |\n");
        std::printf("|---|---|---|---|---|---|---|\n");
        for (const auto &[M, N, K] : sizes) {
            for (Type t : {BFloat(16), Float(16), Float(32)})
                run(t, Epilogue::None, M, N, K, runs);
            run(BFloat(16), Epilogue::BiasGelu, M, N, K, runs);
            run(BFloat(16), Epilogue::BiasGeluResidual, M, N, K, runs);
            if (K % 8 == 0) run(BFloat(16), Epilogue::NoneKInPieces, M, N, K, runs);
            // On Hopper's wgmma where the device runs it (an sm_90 GPU, or the simulator).
            const aicf_apps::GemmSchedule wg = aicf_apps::GemmSchedule::hopper();
            if (aicf_apps::hopper_target() && M >= wg.block_y() && N >= wg.block_x())
                run(BFloat(16), Epilogue::NoneHopper, M, N, K, runs);
        }
        // The library for a K in 16-byte pieces refuses another K, naming A.
        {
            Buffer<> A = random_matrix(BFloat(16), 70, 64, 5, "A");
            Buffer<> B = random_matrix(BFloat(16), 128, 70, 6, "B");
            Buffer<> C(Float(32), {128, 64}, "C");
            aicf_apps::DLView a(A, false), b(B, false), c(C, false);
            const int rc = gemm_bfloat16_k8(&a.t, &b.t, &c.t);
            const std::string error = rc != 0 ? aicf_last_error() : "";
            const bool refused = rc != 0 && error.find("A") != std::string::npos;
            std::printf("\nK = 70 through the K%%8 = 0 library: %s (%s)\n",
                        refused ? "refused" : "NOT refused", error.c_str());
            failures += !refused;
        }
        std::printf("\nAOT: the library compiled ahead of time (for %s; the wgmma one for "
                    "host-cuda-sm_90a-fma) gives the bits of the JIT under the same target (same) "
                    "or not.\n"
                    "check: a sample of points against a double-precision product.\n",
                    aicf_apps::aot_target().to_string().c_str());
        return failures == 0 ? 0 : 1;
    } catch (const Error &e) {
        std::printf("%s\n", e.what());
        return 1;
    }
}
