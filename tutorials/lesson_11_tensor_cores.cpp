// Lesson 11: from the SIMT matrix product to tensor cores, step by step.
//
// A SIMT matrix product (apps/common/MatmulGPU.h) keeps an 8 x 8 tile of C in each thread's
// registers and does one fused multiply-add per element per step of k: the CUDA cores' way.
// Since sm_80 a GPU's tensor cores do a whole 16 x 8 x 16 product per warp in one
// instruction (mma.sync.aligned.m16n8k16), on bfloat16 or float16 inputs with float32 sums,
// about 16 times the float32 rate. The algorithm stays the same; the schedule changes in
// four steps (apps/common/GemmGPU.h is the result, with its choices as options):
//
//   1. Warp tiles: the block's threads are 4 x 8 x warps; each warp owns a 32 x 64 part of
//      the block's 128 x 64 tile, as 4 x 4 tiles of the instruction. gpu_mma(n, m, k) on the
//      update turns its innermost 8 x 16 x 16 loops into one mma.sync, and the accumulator
//      lives in the lanes' registers in the instruction's fragment layout: the pure
//      definition and the consumer split x and y the same way (column 2 * thread.x + {0, 1},
//      row thread.y + {0, 8} of each 16 x 8 tile). The operands come from the tiles staged
//      in shared memory; lowering proves they lie as ldmatrix reads them (rows of 8
//      elements, 16-byte aligned) and loads each fragment with one ldmatrix.
//   2. Bank conflicts: the staged rows of B are 128 elements (256 bytes) long, so the 8 rows
//      an ldmatrix reads all start in the same banks: 8 wavefronts where 1 would do.
//      Padding the rows (align_storage) by 16 bytes shifts each row by 4 banks; swizzling
//      their 16-byte pieces (swizzle_storage) does the same without the padding.
//   3. Stages: each step of k waits twice (the tiles are written, then read) and the loads
//      from device memory are exposed. gpu_pipeline(3, PipelineCopy::Async) gives each tile
//      3 buffers filled by cp.async 2 steps ahead; each step waits for its own copies and
//      meets one barrier.
//   4. Hopper (sm_90a): a warpgroup of 4 warps runs wgmma.mma_async, a 64 x N x 16 product
//      (N up to 256) reading A and B from shared memory itself: no ldmatrix, no fragments of
//      the operands in registers. gpu_wgmma(n, m, k) maps the update onto it; the staged
//      tiles are stored in core matrices (core_matrix_storage: 8 rows of 16 bytes each, 128
//      contiguous bytes), the layout the instruction's descriptors describe, and the copies
//      write whole 16-byte rows of them. Each step's group of wgmma runs while the next step
//      begins. GemmSchedule::hopper() is this schedule: two warpgroups, 128 x 128 tiles. The
//      simulator's profile lists the instruction's reads ("wgmma reads hopper_a[...]").
//
// Each step prints the PTX's instruction mix and the simulator's counters for one launch,
// and checks the product against a double-precision loop over the same bfloat16 values.
//
// Build and run: scripts/build.sh lesson_11_tensor_cores && build/tutorials/lesson_11_tensor_cores
// (in the source tree: it uses the apps' GEMM in apps/common, which is not installed).

#include "GemmGPU.h"
#include "MatmulGPU.h"
#include "backends/sim/Profile.h"
#include "dsl/aicf.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <string>

using namespace aicf;
using backends::sim::KernelProfile;
using backends::sim::MemoryInstructionProfile;
using backends::sim::ProfileRecorder;

namespace {

int errors = 0;

void expect(bool ok, const std::string &what) {
    std::printf("  %s: %s\n", ok ? "ok" : "WRONG", what.c_str());
    errors += !ok;
}

int count(const std::string &text, const std::string &what) {
    int c = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        c++;
    return c;
}

const int M = 128, N = 256, K = 128; // C is M x N (rows y, columns x); one k step is 32

template <typename T> Buffer<T> random_matrix(int w, int h, unsigned seed, const char *name) {
    Buffer<T> b({w, h}, name);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++)
            b(i, j) = T(d(rng));
    return b;
}

struct Step {
    KernelProfile profile;
    std::string ptx;
};

// Runs `f` once on the simulator, checks it, and prints what the step is made of.
template <typename T>
Step run(const char *title, Func f, const Buffer<T> &A, const Buffer<T> &B, const Target &t) {
    std::printf("\n== %s\n", title);
    Step s;
    s.ptx = f.ptx(t);
    ProfileRecorder recorder;
    Buffer<float> C = f.realize({N, M}, t)[0];
    C.copy_to_host();
    s.profile = recorder.launches().back();
    double worst = 0;
    for (int j = 0; j < M; j++) {
        for (int i = 0; i < N; i++) {
            double want = 0;
            for (int k = 0; k < K; k++)
                want += double(float(A(k, j))) * double(float(B(i, k)));
            worst = std::max(worst, std::fabs(C(i, j) - want));
        }
    }
    // The PTX holds every version of the kernel (aligned buffers or not): per version.
    const int versions = count(s.ptx, ".entry");
    std::printf("  PTX per kernel: %d fma.rn.f32, %d mma.sync, %d wgmma, %d ldmatrix, "
                "%d ld.shared, %d cp.async, %d bar.sync\n",
                count(s.ptx, "fma.rn.f32") / versions,
                count(s.ptx, "mma.sync.aligned.m") / versions,
                count(s.ptx, "wgmma.mma_async") / versions, count(s.ptx, "ldmatrix") / versions,
                count(s.ptx, "ld.shared") / versions, count(s.ptx, "cp.async.cg") / versions,
                count(s.ptx, "bar.sync") / versions);
    const KernelProfile &p = s.profile;
    const MemoryInstructionProfile *w = p.worst_shared_instruction();
    std::printf("  simulator: %lld flops on CUDA cores, %lld on tensor cores; %lld barriers "
                "per block; shared memory %.1f wavefronts per request (worst conflicts: %s, "
                "%.1f-way)\n",
                (long long)p.flops, (long long)p.tensor_flops, (long long)(p.barriers / p.blocks()),
                double(p.shared_wavefronts()) / double(std::max<int64_t>(p.shared_requests(), 1)),
                w ? w->label.c_str() : "none", w ? w->conflict_ways() : 0.0);
    expect(worst < 1e-3,
           "C matches a double-precision product (largest error " + std::to_string(worst) + ")");
    return s;
}

} // namespace

int run() {
    const Target sm80("host-cuda-sm_80");
    const Target fma = sm80.with_feature(Target::FMA);

    // 0. The SIMT kernel of apps/common/MatmulGPU.h, in float32.
    Buffer<float> Af = random_matrix<float>(K, M, 1, "A"), Bf = random_matrix<float>(N, K, 2, "B");
    Step simt = run("SIMT: float32 on CUDA cores, 8 x 8 points per thread",
                    aicf_apps::matmul_register_tiled(Af, Bf, K, "simt"), Af, Bf, fma);
    expect(simt.profile.tensor_flops == 0 && simt.profile.flops >= int64_t(2) * M * N * K,
           "every multiply-add on the CUDA cores");

    // 1. Warp tiles on tensor cores, operands by ldmatrix, rows as they come.
    Buffer<bfloat16_t> A = random_matrix<bfloat16_t>(K, M, 1, "A");
    Buffer<bfloat16_t> B = random_matrix<bfloat16_t>(N, K, 2, "B");
    aicf_apps::GemmSchedule plain;
    plain.rows = aicf_apps::GemmSchedule::Rows::Plain;
    plain.stages = 1;
    Step warps = run("tensor cores: mma.sync on warp tiles, fragments by ldmatrix",
                     aicf_apps::gemm_tensor_cores(A, B, K, "warps", {}, {}, plain), A, B, sm80);
    expect(warps.profile.tensor_flops == int64_t(2) * M * N * K,
           "every multiply-add on the tensor cores");
    const MemoryInstructionProfile *b_read = warps.profile.find_instruction("load warps_b[...]");
    expect(b_read && b_read->wavefronts_per_request() == 16.0,
           "ldmatrix of B's 256-byte rows: 16 wavefronts where 2 would do (8-way conflict)");

    // 2. Rows padded by 16 bytes: each ldmatrix at its fewest wavefronts.
    aicf_apps::GemmSchedule padded = plain;
    padded.rows = aicf_apps::GemmSchedule::Rows::Padded;
    Step pad = run("padded rows: no bank conflicts",
                   aicf_apps::gemm_tensor_cores(A, B, K, "padded", {}, {}, padded), A, B, sm80);
    b_read = pad.profile.find_instruction("load padded_b[...]");
    expect(b_read && b_read->wavefronts_per_request() == 2.0,
           "ldmatrix of B: 2 wavefronts (256 bytes)");
    expect(pad.profile.shared_wavefronts() * 2 < warps.profile.shared_wavefronts(),
           "less than half the shared-memory wavefronts in all");

    // 2b. Or the rows' 16-byte pieces swizzled (swizzle_storage): piece p of row r is stored
    //     at p ^ (r % 8), so the 8 rows an ldmatrix reads start in 8 different groups of
    //     banks, with no padding. Lowering still proves each row of 8 elements one aligned
    //     piece, and each lane gives ldmatrix its row's start.
    aicf_apps::GemmSchedule swizzled = plain;
    swizzled.rows = aicf_apps::GemmSchedule::Rows::Swizzled;
    Step swz = run("swizzled rows: no bank conflicts, no padding",
                   aicf_apps::gemm_tensor_cores(A, B, K, "swizzled", {}, {}, swizzled), A, B, sm80);
    b_read = swz.profile.find_instruction("load swizzled_b[...]");
    expect(b_read && b_read->wavefronts_per_request() == 2.0,
           "ldmatrix of B: 2 wavefronts, as with padding");
    expect(count(swz.ptx, "ldmatrix") == count(pad.ptx, "ldmatrix"),
           "every fragment still one ldmatrix");

    // 3. Three stages of cp.async: one barrier per step of k instead of two.
    Step staged =
        run("3 stages of cp.async", aicf_apps::gemm_tensor_cores(A, B, K, "staged"), A, B, sm80);
    expect(count(staged.ptx, "cp.async.cg.shared.global") > 0, "the tiles are copied by cp.async");
    expect(staged.profile.barriers * 2 == pad.profile.barriers, "half the barriers");

    // 4. Hopper: wgmma on two warpgroups, 128 x 128 tiles, steps of 64 in 3 stages.
    const Target sm90a("host-cuda-sm_90a");
    Step hopper = run(
        "Hopper: wgmma.mma_async of warpgroups, operands in core matrices",
        aicf_apps::gemm_tensor_cores(A, B, K, "hopper", {}, {}, aicf_apps::GemmSchedule::hopper()),
        A, B, sm90a);
    expect(hopper.profile.tensor_flops == int64_t(2) * M * N * K,
           "every multiply-add on the tensor cores");
    expect(count(hopper.ptx, "wgmma.mma_async") > 0 && count(hopper.ptx, "ldmatrix") == 0,
           "wgmma reads its operands from shared memory itself: no ldmatrix");
    expect(count(hopper.ptx, "wgmma.wait_group.sync.aligned 1;") > 0,
           "each step's group left running while the next step begins");
    // The simulator counts each wgmma's reads of A (64 x 16) and B (128 x 16) as one request
    // of its warpgroup, a wavefront per 128-byte core matrix: no bank conflicts. (One line
    // per wgmma of the unrolled step, for A and for B.)
    int64_t reads[2] = {0, 0}, read_bytes[2] = {0, 0};
    bool conflicts = false;
    for (const MemoryInstructionProfile &i : hopper.profile.memory_instructions) {
        for (int b = 0; b < 2; b++) {
            if (i.label.rfind(b ? "wgmma reads hopper_b" : "wgmma reads hopper_a", 0) != 0)
                continue;
            reads[b] += i.requests;
            read_bytes[b] += i.bytes;
            conflicts |= i.conflict_ways() != 1.0;
        }
    }
    const int64_t wgmmas = hopper.profile.instructions.tensor_core;
    expect(wgmmas > 0 && reads[0] == wgmmas && reads[1] == wgmmas &&
               read_bytes[0] == wgmmas * 64 * 16 * 2 && read_bytes[1] == wgmmas * 128 * 16 * 2 &&
               !conflicts,
           "each wgmma reads 2 KiB of A and 4 KiB of B from shared memory, without conflicts");
    return errors == 0 ? 0 : 1;
}

int main() {
    try {
        return run();
    } catch (const Error &e) {
        std::printf("%s\n", e.what());
        return 1;
    }
}
