// Matrix products on tensor cores through the schedule (gpu_mma, apps/common/GemmGPU.h), run
// on the device AICF_DEVICE names (the simulator by default), checked against a
// double-precision product of the same inputs (rounded to TF32 for float inputs, within the
// rounding's bound), at sizes no tile divides and at aligned ones; and the PTX they become.

#include "ErrorMessage.h"
#include "GPUTarget.h"
#include "GemmGPU.h"
#include "KernelRunner.h"
#include "Reference.h"
#include "ScopedEnv.h"
#include "backends/llvm/CodeGen_PTX.h"
#include "backends/sim/Profile.h"
#include "dsl/aicf.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>

using namespace aicf;
using aicf_test::fill_random;

namespace {

const Target gpu_target = aicf_test::gpu_test_target();
// wgmma needs Hopper's architecture-specific target.
const Target hopper_target("host-cuda-sm_90a");

struct Problem {
    int M, N, K;
    int row_min = 0; // where A's and the result's rows start
};

// The points of a tile of 16 x 16 as gpu_mma's accumulator holds them in its warps' lanes:
// x as (warp, thread.x of 4, 2), y as (2, thread.y of 8).
void mma_fragments(Stage s, const Var &x, const Var &y) {
    Var wz("wz"), tx("tx"), xl("xl"), yh("yh"), ty("ty");
    s.split(x, wz, x, 8).split(x, tx, xl, 2).split(y, yh, ty, 8);
    s.reorder(xl, yh, tx, ty, wz).gpu_threads(tx, ty, wz).unroll(yh);
}

// f applied after the product's accumulation in double: the epilogue's reference.
template <typename T, typename Epilogue>
void check_gemm(Problem p, const aicf_apps::GemmEpilogue &epilogue, Epilogue reference,
                unsigned seed, const aicf_apps::GemmSchedule &schedule = {}) {
    Buffer<T> A({p.K, p.M}, "A"), B({p.N, p.K}, "B");
    fill_random(A, -1, 1, seed);
    fill_random(B, -1, 1, seed + 1);
    A.set_min({0, p.row_min});
    Func out = aicf_apps::gemm_tensor_cores(A, B, p.K, "gemm", epilogue, {}, schedule);
    if (schedule.warpgroups && !aicf_test::device_runs(hopper_target))
        GTEST_SKIP() << "wgmma runs on sm_90 GPUs (and the simulator) only";
    Buffer<> C(epilogue.out_type, {p.N, p.M}, "C");
    C.set_min({0, p.row_min});
    out.realize(C, schedule.warpgroups ? hopper_target : gpu_target);
    C.copy_to_host();
    const bool tf32 = std::is_same_v<T, float>;
    const bool bf16_out = epilogue.out_type == BFloat(16);
    for (int j = p.row_min; j < p.row_min + p.M; j++) {
        for (int i = 0; i < p.N; i++) {
            double magnitude = 0;
            const double want =
                reference(aicf_apps::gemm_reference_point(A, B, i, j, &magnitude), i, j);
            const double got = bf16_out ? double(float(Buffer<bfloat16_t>(C)(i, j)))
                                        : double(Buffer<float>(C)(i, j));
            // float32 accumulation; TF32 keeps 10 bits of each input; a bf16 result 8 bits.
            double tolerance = 1e-5 * (1 + magnitude);
            if (tf32) tolerance += 2 * std::ldexp(magnitude, -11);
            if (bf16_out) tolerance += std::ldexp(std::abs(want), -8);
            ASSERT_NEAR(got, want, tolerance)
                << "at x = " << i << ", y = " << j << " of " << p.M << " x " << p.N << " x " << p.K;
        }
    }
}

template <typename T>
void check_plain(Problem p, unsigned seed, const aicf_apps::GemmSchedule &schedule = {}) {
    check_gemm<T>(
        p, {}, [](double v, int, int) { return v; }, seed, schedule);
}

TEST(GemmTensorCores, Bfloat16AtSizesNoTileDivides) {
    check_plain<bfloat16_t>({200, 136, 72}, 1);
}

TEST(GemmTensorCores, Float16) {
    check_plain<float16_t>({72, 130, 40}, 3);
}

TEST(GemmTensorCores, Float32ThroughTF32) {
    check_plain<float>({136, 200, 72}, 5);
}

TEST(GemmTensorCores, AlignedSizes) {
    check_plain<bfloat16_t>({128, 256, 96}, 7);
}

// The product with bias, GELU and a residual (bf16 inputs and result), against the same
// epilogue applied to the double-precision product.
void check_fused_epilogue(Problem p, unsigned seed, const aicf_apps::GemmSchedule &schedule = {}) {
    Buffer<float> bias({p.N}, "bias");
    Buffer<bfloat16_t> residual({p.N, p.M}, "residual");
    fill_random(bias, -1, 1, seed);
    fill_random(residual, -1, 1, seed + 1);
    check_gemm<bfloat16_t>(
        p, aicf_apps::bias_gelu_residual_epilogue(bias, residual),
        [&](double v, int i, int j) {
            v += bias(i);
            v = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
            return v + double(float(residual(i, j)));
        },
        seed + 2, schedule);
}

// The large tiles (128 x 128 of 4 warps, 256 x 128 of 8; each warp 32 columns by 128 rows),
// at sizes they do not divide, and a reduction that a step does not divide.
TEST(GemmTensorCores, LargeTiles) {
    check_plain<bfloat16_t>({150, 140, 72}, 13, aicf_apps::GemmSchedule::large_tiles());
    check_plain<bfloat16_t>({131, 270, 40}, 15, aicf_apps::GemmSchedule::large_tiles(8));
}

// Fewer rows than a tile (a decoding step's tokens) and rows no tile divides, the last row
// tile guarded: the accumulator over whole tiles (bound_extent), A's rows past its last read
// through a clamp; bf16 and TF32, the default and the large tiles, and the fused epilogue
// (its residual read only where a row is stored).
TEST(GemmTensorCores, FewerRowsThanATile) {
    aicf_apps::GemmSchedule s;
    s.guard_rows = true;
    check_plain<bfloat16_t>({5, 150, 72}, 21, s);
    check_plain<bfloat16_t>({70, 136, 40}, 23, s);
    check_plain<float>({3, 130, 24}, 25, s);
    aicf_apps::GemmSchedule large = aicf_apps::GemmSchedule::large_tiles();
    large.guard_rows = true;
    check_plain<bfloat16_t>({1, 128, 64}, 27, large);
    check_fused_epilogue({9, 140, 48}, 29, s);
    // Rows that start elsewhere than 0: the clamp is to A's last row, not its count.
    check_plain<bfloat16_t>({70, 128, 32, 1}, 31, s);
    check_plain<bfloat16_t>({70, 128, 32, -13}, 33, s);
    aicf_apps::GemmSchedule hopper = aicf_apps::GemmSchedule::hopper(1);
    hopper.guard_rows = true;
    check_plain<bfloat16_t>({70, 128, 32, 5}, 35, hopper);
}

// Blocks launched in groups of rows of tiles: 5 rows of tiles in groups of 2 (the last group's
// second row skipped), with one and two column tiles per block.
TEST(GemmTensorCores, RowGroups) {
    aicf_apps::GemmSchedule s;
    s.row_group = 2;
    check_plain<bfloat16_t>({300, 150, 40}, 17, s);
    s.column_tiles = 2;
    check_plain<bfloat16_t>({300, 150, 40}, 19, s);
    // With guarded rows too: 70 rows are two row tiles, the second guarded, in one group
    // (the accumulators' rows start where each thread's rows do, proven through the group's
    // guard); 200 rows are four tiles in groups of 3.
    s.guard_rows = true;
    check_plain<bfloat16_t>({70, 150, 40}, 20, s);
    s.row_group = 3;
    check_plain<bfloat16_t>({200, 136, 40}, 21, s);
    // A Func's rows are not known: guarded rows need them given.
    Buffer<bfloat16_t> A({32, 70}, "A"), B({64, 32}, "B");
    Func a("a_func"), b("b_func");
    Var x("x"), y("y");
    a(x, y) = A(x, y);
    b(x, y) = B(x, y);
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>(
                        [&] { aicf_apps::gemm_tensor_cores(a, b, 32, "g", {}, {}, s); }),
                    "gemm_tensor_cores g with guard_rows: A is a Func, whose rows the product "
                    "cannot know; give where they end in GemmSchedule::a_row_end");
    // Counts of zero are refused by name, not divided by.
    aicf_apps::GemmSchedule none;
    none.k_tiles = 0;
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>(
                        [&] { aicf_apps::gemm_tensor_cores(A, B, 32, "g", {}, {}, none); }),
                    "gemm_tensor_cores g: GemmSchedule::k_tiles is 0; it must be at least 1.");
}

// Column tiles pipelined in registers over a reduction of one step, with row groups and
// guarded rows: the loads of the next tile are made ahead of the lets of the tile loop's body
// they use (where its rows start), with those lets' values.
TEST(GemmTensorCores, RegisterPipelineOfColumnTilesInRowGroups) {
    aicf_apps::GemmSchedule s;
    s.k_tiles = 1;
    s.guard_rows = true;
    s.column_tiles = 2;
    s.row_group = 2;
    s.stages = 2;
    s.copy = PipelineCopy::Registers;
    check_plain<bfloat16_t>({64, 256, 16}, 45, s);
    check_plain<bfloat16_t>({150, 300, 16, 3}, 46, s);
}

// Bias, GELU and a residual applied to the accumulators, then one bf16 store per point.
TEST(GemmTensorCores, FusedEpilogue) {
    check_fused_epilogue({136, 200, 72}, 9);
}

// On the simulator's counters: the tiles are stored in 16-byte pieces and read by ldmatrix
// (16-bit inputs) or by the fragments' own loads (float), every request at the fewest
// wavefronts its bytes need, the padded rows putting the eight rows a request touches in
// different banks; and the tensor cores do the product's flops exactly once.
template <typename T>
void check_shared_accesses(
    int minimum_a_read, int minimum_b_read,
    aicf_apps::GemmSchedule::Rows rows = aicf_apps::GemmSchedule::Rows::Padded) {
    const int M = 64, N = 128, K = 64;
    Buffer<T> A({K, M}, "A"), B({N, K}, "B");
    fill_random(A, -1, 1, 13);
    fill_random(B, -1, 1, 14);
    aicf_test::ScopedEnv sim("AICF_DEVICE", "sim");
    backends::sim::ProfileRecorder recorder;
    aicf_apps::GemmSchedule schedule;
    schedule.rows = rows;
    aicf_apps::gemm_tensor_cores(A, B, K, "gemm", {}, {}, schedule).realize({N, M}, gpu_target);
    ASSERT_EQ(recorder.launches().size(), 1u);
    const backends::sim::KernelProfile &k = recorder.launches().back();
    EXPECT_EQ(k.tensor_flops, int64_t(2) * M * N * K);
    // One barrier per step of k: each step waits for its own copies, then one barrier.
    EXPECT_EQ(k.barriers, K / aicf_apps::GemmSchedule{}.k_step(type_of<T>())) << k.to_string();
    int reads = 0;
    for (const backends::sim::MemoryInstructionProfile &i : k.memory_instructions) {
        if (!i.shared) continue;
        const double minimum = i.store ? 4 : i.memory == "gemm_a" ? minimum_a_read : minimum_b_read;
        EXPECT_EQ(i.wavefronts_per_request(), minimum) << i.label << "\n" << k.to_string();
        reads += !i.store;
    }
    EXPECT_GT(reads, 0) << k.to_string();
}

TEST(GemmTensorCores, SharedAccessesWithoutBankConflicts) {
    // ldmatrix .x4 of A moves 512 bytes (4 wavefronts), .x2.trans of B 256 (2).
    check_shared_accesses<bfloat16_t>(4, 2);
    // A float fragment element is one 4-byte load per lane: one wavefront.
    check_shared_accesses<float>(1, 1);
    // The same with the rows' 16-byte pieces swizzled instead of padded.
    check_shared_accesses<bfloat16_t>(4, 2, aicf_apps::GemmSchedule::Rows::Swizzled);
}

// C(i, j, q) against scale * the sum over k of a(k, j, q) * b(i, k, q), in double.
template <typename A, typename B>
void expect_batched_products(const Buffer<float> &C, int N, int M, int Z, int K, double scale, A a,
                             B b, const std::string &what = "") {
    for (int q = 0; q < Z; q++)
        for (int j = 0; j < M; j++)
            for (int i = 0; i < N; i++) {
                double want = 0;
                for (int k = 0; k < K; k++)
                    want += double(a(k, j, q)) * double(b(i, k, q));
                ASSERT_NEAR(C(i, j, q), scale * want, 1e-4) << i << ", " << j << ", " << q << what;
            }
}

// Operands staged the other way round, batched: A's tile stored with m innermost (read by
// ldmatrix .x4.trans) and B's with k innermost (.x2 as stored), 2 warps, tiles that do not
// divide the sizes.
TEST(GemmTensorCores, TransposedOperandsAndBatches) {
    const int M = 48, N = 40, K = 32, Z = 3;
    Buffer<bfloat16_t> At({M, K, Z}, "At"), Bt({K, N, Z}, "Bt");
    fill_random(At, -1, 1, 15);
    fill_random(Bt, -1, 1, 16);
    Var x("x"), y("y"), z("z"), bx("bx"), by("by"), tx("tx"), ty("ty"), yt("yt"), wz("wz"),
        xm("xm"), ym("ym"), t("t"), tz("tz");
    RVar ko("ko"), ki("ki");
    RDom k(0, K, "k");
    Func a("a"), b("b"), prod("prod"), out("out");
    a(x, y, z) = At(y, x, z); // a(k, m)
    b(x, y, z) = Bt(y, x, z); // b(n, k)
    prod(x, y, z) = 0.0f;
    prod(x, y, z) += cast<float>(a(k, y, z)) * cast<float>(b(x, k, z));
    out(x, y, z) = prod(x, y, z) * 2.0f;
    out.tile(x, y, bx, by, x, y, 16, 16).gpu_blocks(bx, by, z);
    mma_fragments(Stage(out.function(), 0), x, y);
    prod.compute_at(out, bx).store_in(MemoryType::Register);
    mma_fragments(Stage(prod.function(), 0), x, y);
    prod.update()
        .split(x, wz, xm, 8)
        .split(y, yt, ym, 16)
        .split(k, ko, ki, 16)
        .reorder(xm, ym, ki, yt, wz, ko)
        .gpu_threads(wz)
        .gpu_mma(xm, ym, ki);
    for (Func f : {a, b}) {
        f.compute_at(prod, ko).reorder_storage(y, x, z).fuse(x, y, t);
        f.split(t, tz, t, 32).split(t, ty, tx, 4).gpu_threads(tx, ty, tz);
    }
    Buffer<float> C = out.realize({N, M, Z}, gpu_target)[0];
    C.copy_to_host();
    expect_batched_products(
        C, N, M, Z, K, 2, [&](int k, int j, int q) { return float(At(j, k, q)); },
        [&](int i, int k, int q) { return float(Bt(k, i, q)); });
    const std::string ptx = out.ptx(gpu_target);
    EXPECT_NE(ptx.find("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"), std::string::npos) << ptx;
    EXPECT_NE(ptx.find("ldmatrix.sync.aligned.m8n8.x2.shared.b16"), std::string::npos) << ptx;
}

// A product out(x, y) = prod(x, y), prod += a(r, y) * b(x, r), in blocks of 8 x 32 points,
// one warp per 16 rows on tensor cores, steps of 16 along r, a and b staged in shared memory
// at each step and pipelined (`stages`, `copy`). `batch`: a dimension of out looped over
// inside each block, around the product (none where null).
void schedule_pipelined_mma(Func out, Func prod, Func a, Func b, const RDom &r, int stages,
                            PipelineCopy copy, const Var *batch = nullptr) {
    Var x("x"), y("y"), kk("kk"), bx("bx"), by("by"), xi("xi"), yi("yi"), tx("tx"), ty("ty"),
        xv("xv"), yv("yv"), w("w"), yw("yw"), t("t"), kv("kv"), yo("yo"), yt("yt");
    RVar ko("ko"), ki("ki");
    out.tile(x, y, bx, by, xi, yi, 8, 32).split(xi, tx, xv, 2).split(yi, w, yw, 16);
    out.split(yw, yv, ty, 8).gpu_blocks(bx, by).gpu_threads(tx, ty, w);
    if (batch) {
        out.reorder(xv, yv, tx, ty, w, *batch, bx, by);
        prod.compute_at(out, *batch);
    } else {
        out.reorder(xv, yv, tx, ty, w, bx, by);
        prod.compute_at(out, bx);
    }
    prod.store_in(MemoryType::Register).split(x, tx, xv, 2).split(y, w, yw, 16);
    prod.split(yw, yv, ty, 8).reorder(xv, yv, tx, ty, w).gpu_threads(tx, ty, w);
    prod.update()
        .split(r.x, ko, ki, 16)
        .split(y, w, yw, 16)
        .reorder(x, yw, ki, w, ko)
        .gpu_threads(w)
        .gpu_mma(x, yw, ki);
    a.compute_at(prod.update(), ko).store_in(MemoryType::GPUShared).split(kk, t, kv, 4);
    a.split(y, yo, yt, 8).reorder(kv, t, yt, yo).gpu_threads(t, yt, yo);
    b.compute_at(prod.update(), ko).store_in(MemoryType::GPUShared).split(x, t, kv, 2);
    b.split(kk, yo, yt, 8).reorder(kv, t, yt, yo).gpu_threads(t, yt, yo);
    // Asynchronous copies of 4 and 8 bytes (cp.async copies no single bfloat16).
    for (Func f : {a, b}) {
        f.gpu_pipeline(stages, copy);
        if (copy == PipelineCopy::Async) f.vectorize(kv);
    }
}

// A layernorm in the prologue of the product: each block's row statistics in shared memory,
// the normalized operand staged per step of k with asynchronous copies (2 and 3 stages) or
// through registers (the statistics, written before the loop and not in it, read by each
// step's loads ahead of its product). The first stagings move ahead of the loop, so they must
// still see the statistics written (the simulator's checker found a race on them).
TEST(GemmTensorCores, PipelinedOperandReadsTheBlocksStatistics) {
    const int M = 64, N = 16, K = 48;
    Buffer<float> X({K, M}, "X");
    Buffer<bfloat16_t> W({N, K}, "W");
    fill_random(X, -3, 3, 31);
    fill_random(W, -1, 1, 32);
    for (auto [stages, copy] : {std::pair{2, PipelineCopy::Async},
                                {3, PipelineCopy::Async},
                                {2, PipelineCopy::Registers}}) {
        SCOPED_TRACE(std::to_string(stages) +
                     (copy == PipelineCopy::Async ? " stages, Async" : " stages, Registers"));
        Var x("x"), y("y"), kk("kk"), bx("bx"), t0("t0"), t1("t1");
        RDom rk(0, K, "rk"), r(0, K, "r");
        Func msum("msum"), vsum("vsum"), a("a"), b("b"), prod("prod"), out("out");
        msum(y) = 0.0f;
        msum(y) += X(rk, y);
        Expr mean = msum(y) / float(K);
        vsum(y) = 0.0f;
        vsum(y) += (X(rk, y) - mean) * (X(rk, y) - mean);
        a(kk, y) = cast<bfloat16_t>((X(kk, y) - mean) * rsqrt(vsum(y) / float(K) + 1e-5f));
        b(x, kk) = W(x, kk);
        prod(x, y) = 0.0f;
        prod(x, y) += cast<float>(a(r, y)) * cast<float>(b(x, r));
        out(x, y) = prod(x, y);
        schedule_pipelined_mma(out, prod, a, b, r, stages, copy);
        for (Func f : {msum, vsum}) {
            f.compute_at(out, bx).store_in(MemoryType::GPUShared);
            f.split(y, t1, t0, 4).gpu_threads(t0, t1);
            f.update().split(y, t1, t0, 4).gpu_threads(t0, t1);
        }
        Buffer<float> C = out.realize({N, M}, gpu_target)[0];
        C.copy_to_host();
        for (int j = 0; j < M; j++) {
            const aicf_test::RowMoments r = aicf_test::row_moments(X, j, K);
            const double m = r.mean, rstd = 1 / std::sqrt(r.squares / K + 1e-5);
            for (int i = 0; i < N; i++) {
                double want = 0, magnitude = 0;
                for (int k = 0; k < K; k++) {
                    const double term = (X(k, j) - m) * rstd * double(float(W(i, k)));
                    want += term;
                    magnitude += std::abs(term);
                }
                // The normalized operand is rounded to bfloat16 (8 bits).
                ASSERT_NEAR(C(i, j), want, std::ldexp(magnitude, -8) + 1e-5)
                    << "at x = " << i << ", y = " << j << ", " << stages << " stages";
            }
        }
    }
}

// Pipelined operands in two placements that were refused: a batch loop inside the kernel
// around the product (each block loops over the batch; asynchronous copies), and loaders
// pipelined through registers whose definition pads the reduction with zeros (K = 40 read as
// 48: the padding's test no longer partitions the loops the pipeline unrolls).
TEST(GemmTensorCores, PipelinesInABatchLoopAndOverAPaddedReduction) {
    const int M = 40, N = 24, K = 40, Z = 3;
    Buffer<bfloat16_t> A({K, M, Z}, "A"), B({N, K, Z}, "B");
    fill_random(A, -1, 1, 41);
    fill_random(B, -1, 1, 42);
    for (PipelineCopy copy : {PipelineCopy::Async, PipelineCopy::Registers}) {
        Var x("x"), y("y"), z("z"), kk("kk");
        RDom r(0, (K + 15) / 16 * 16, "r");
        Func a("a"), b("b"), prod("prod"), out("out");
        a(kk, y, z) = select(kk < K, A(clamp(kk, 0, K - 1), y, z), bfloat16_t(0.0f));
        b(x, kk, z) = select(kk < K, B(x, clamp(kk, 0, K - 1), z), bfloat16_t(0.0f));
        prod(x, y, z) = 0.0f;
        prod(x, y, z) += cast<float>(a(r, y, z)) * cast<float>(b(x, r, z));
        out(x, y, z) = prod(x, y, z);
        schedule_pipelined_mma(out, prod, a, b, r, 2, copy, &z);
        Buffer<float> C = out.realize({N, M, Z}, gpu_target)[0];
        C.copy_to_host();
        expect_batched_products(
            C, N, M, Z, K, 1, [&](int k, int j, int q) { return float(A(k, j, q)); },
            [&](int i, int k, int q) { return float(B(i, k, q)); },
            copy == PipelineCopy::Async ? " (Async)" : " (Registers)");
    }
}

// Every version of the kernel (aligned buffers or not) without spills or a stack frame.
void expect_no_spills(const Func &f, const Target &t) {
    if (!backends::ptxas_available()) return;
    const std::string report = f.kernel_resources(t);
    auto count = [&](const std::string &what) { return aicf_test::occurrences(report, what); };
    EXPECT_GT(count(" registers,"), 0) << report;
    EXPECT_EQ(count(" 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack frame"),
              count(" registers,"))
        << t.to_string() << ": " << report;
}

// The kernel is mma.sync fed by ldmatrix from shared memory that cp.async fills, with one
// barrier per step, without local memory, and ptxas keeps it in registers on sm_80 and sm_90.
// The schedule written directly, its reduction over a run-time K padded to a multiple of 16
// (a Param; the operands read past K as zeros): the split by 16 provably divides the
// reduction, so it has no tail to guard and the update maps onto the instruction.
TEST(GemmTensorCores, ARunTimeReductionThatSixteenDivides) {
    const int M = 32, N = 16;
    for (int K : {40, 16, 1}) {
        SCOPED_TRACE("K = " + std::to_string(K));
        Buffer<bfloat16_t> A({K, M}, "A"), B({N, K}, "B");
        fill_random(A, -1, 1, unsigned(K));
        fill_random(B, -1, 1, unsigned(K) + 1);
        Param<int> kp("kp");
        kp.set(K);
        Var x("x"), y("y"), bx("bx"), by("by"), wz("wz"), xm("xm");
        RVar ko("ko"), ki("ki");
        RDom k(0, ((Expr(kp) + 15) / 16) * 16, "k");
        Func a("a"), b("b"), prod("prod"), out("out");
        const Expr zero = cast(BFloat(16), 0.0f);
        a(x, y) = select(x < kp, A(clamp(x, 0, kp - 1), y), zero);
        b(x, y) = select(y < kp, B(x, clamp(y, 0, kp - 1)), zero);
        prod(x, y) = 0.0f;
        prod(x, y) += cast<float>(a(k, y)) * cast<float>(b(x, k));
        out(x, y) = prod(x, y);
        out.tile(x, y, bx, by, x, y, 16, 16).gpu_blocks(bx, by);
        mma_fragments(Stage(out.function(), 0), x, y);
        prod.compute_at(out, bx).store_in(MemoryType::Register);
        mma_fragments(Stage(prod.function(), 0), x, y);
        prod.update()
            .split(x, wz, xm, 8)
            .split(k, ko, ki, 16)
            .reorder(xm, y, ki, wz, ko)
            .gpu_threads(wz)
            .gpu_mma(xm, y, ki);
        Buffer<float> C = out.realize({N, M}, gpu_target)[0];
        C.copy_to_host();
        for (int j = 0; j < M; j++) {
            for (int i = 0; i < N; i++) {
                double want = 0;
                for (int q = 0; q < K; q++)
                    want += double(float(A(q, j))) * double(float(B(i, q)));
                ASSERT_NEAR(C(i, j), want, 1e-4 * (1 + std::fabs(want))) << i << ", " << j;
            }
        }
    }
}

TEST(GemmTensorCores, PTXIsMmaSyncWithoutSpills) {
    Buffer<bfloat16_t> A({256, 256}, "A"), B({256, 256}, "B");
    Func out = aicf_apps::gemm_tensor_cores(A, B, 256, "gemm");
    for (const char *arch : {"sm_80", "sm_90"}) {
        const Target t(std::string("host-cuda-") + arch);
        const std::string ptx = out.ptx(t);
        EXPECT_NE(ptx.find("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"),
                  std::string::npos)
            << ptx;
        EXPECT_EQ(ptx.find("ld.local"), std::string::npos) << ptx;
        EXPECT_NE(ptx.find("ldmatrix.sync.aligned.m8n8.x4.shared.b16"), std::string::npos) << ptx;
        EXPECT_NE(ptx.find("cp.async.cg.shared.global"), std::string::npos) << ptx;
        EXPECT_NE(ptx.find("cp.async.wait_group 1"), std::string::npos) << ptx;
        // One barrier in the loop over k of each version of the kernel (aligned or not).
        size_t barriers = 0;
        for (size_t at = ptx.find("bar.sync"); at != std::string::npos;
             at = ptx.find("bar.sync", at + 1))
            barriers++;
        EXPECT_EQ(barriers, 2u) << ptx;
        EXPECT_NE(ptx.find("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16"), std::string::npos)
            << ptx;
        expect_no_spills(out, t);
    }
}

// The float (TF32) and fused-epilogue variants also fit in registers.
TEST(GemmTensorCores, VariantsWithoutSpills) {
    Buffer<float> A({256, 256}, "A"), B({256, 256}, "B");
    Buffer<bfloat16_t> Ab({256, 256}, "Ab"), Bb({256, 256}, "Bb");
    Var x("x"), y("y");
    Func bias("bias"), residual("residual");
    bias(x) = A(x, 0);
    residual(x, y) = Ab(x, y);
    aicf_apps::GemmEpilogue e;
    e.bias = bias;
    e.gelu = true;
    e.residual = residual;
    e.out_type = BFloat(16);
    const Func tf32 = aicf_apps::gemm_tensor_cores(A, B, 256, "tf32");
    const Func fused = aicf_apps::gemm_tensor_cores(Ab, Bb, 256, "fused", e);
    for (const char *arch : {"sm_80", "sm_90"}) {
        const Target t(std::string("host-cuda-") + arch);
        EXPECT_NE(tf32.ptx(t).find("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"),
                  std::string::npos);
        expect_no_spills(tf32, t);
        expect_no_spills(fused, t);
        // The large tiles' 128 accumulators per lane, with the fused epilogue.
        for (int warps : {4, 8}) {
            const aicf_apps::GemmSchedule large = aicf_apps::GemmSchedule::large_tiles(warps);
            expect_no_spills(aicf_apps::gemm_tensor_cores(Ab, Bb, 256, "large", e, {}, large), t);
        }
    }
}

} // namespace

// Hopper's warpgroup tensor cores (gpu_wgmma, GemmSchedule::hopper()): two warpgroups, each a
// 64 x 128 band of a 128 x 128 tile, A and B staged in core matrices, at sizes no tile divides
// (the last tiles shift inwards; K padded with zeros to whole steps of 64), bf16 and f16.
TEST(GemmWarpgroups, AtSizesNoTileDivides) {
    check_plain<bfloat16_t>({200, 150, 100}, 31, aicf_apps::GemmSchedule::hopper());
    check_plain<bfloat16_t>({129, 133, 17}, 33, aicf_apps::GemmSchedule::hopper());
    check_plain<float16_t>({140, 130, 72}, 35, aicf_apps::GemmSchedule::hopper());
    // Five steps of 64 over three stages: in the steady state each step's copies refill the
    // buffers of the group two steps back, which the wait of the step before retired (the
    // simulator reports a copy into a buffer a wgmma may still read).
    check_plain<bfloat16_t>({130, 140, 300}, 36, aicf_apps::GemmSchedule::hopper());
}

// The other shapes: one warpgroup (64 x 64 tiles, and 64 x 256: 128 accumulators a thread),
// steps of 32, two stages and one (plain loads and stores, no cp.async), and an aligned size
// whose K the steps divide (A and B copied whole by cp.async, no zero padding).
TEST(GemmWarpgroups, TileShapesAndStages) {
    aicf_apps::GemmSchedule s = aicf_apps::GemmSchedule::hopper(1, 64);
    s.k_tiles = 2;
    check_plain<bfloat16_t>({70, 90, 50}, 37, s);
    s.stages = 1;
    check_plain<bfloat16_t>({64, 64, 40}, 39, s);
    aicf_apps::GemmSchedule wide = aicf_apps::GemmSchedule::hopper(1, 256);
    wide.stages = 2;
    check_plain<bfloat16_t>({100, 260, 130}, 41, wide);
    check_plain<bfloat16_t>({256, 256, 320}, 43, aicf_apps::GemmSchedule::hopper());
    // The narrowest tile (8 columns: each thread's accumulators in no loop of their own), 3 and
    // 4 stages deep: the last group, left running by the loop, is waited for in the threads'
    // loops its write-backs were in.
    aicf_apps::GemmSchedule narrow = aicf_apps::GemmSchedule::hopper(1, 8);
    narrow.k_tiles = 1;
    for (int stages : {3, 4}) {
        narrow.stages = stages;
        check_plain<bfloat16_t>({64, 8, 40}, 44, narrow);
    }
}

// Several column tiles a block, in a loop the copies are pipelined over where a step of k
// covers all of K (the accumulators are then allocated and read in each of its iterations,
// so each tile's products are waited for in it); and row groups with guarded rows.
TEST(GemmWarpgroups, ColumnTilesAndRowGroups) {
    aicf_apps::GemmSchedule s = aicf_apps::GemmSchedule::hopper(1, 128);
    s.column_tiles = 2;
    check_plain<bfloat16_t>({128, 256, 32}, 53, s);
    check_plain<bfloat16_t>({70, 300, 64}, 54, s);
    check_plain<bfloat16_t>({64, 260, 136}, 55, s);
    aicf_apps::GemmSchedule g = aicf_apps::GemmSchedule::hopper();
    g.row_group = 2;
    g.guard_rows = true;
    check_plain<bfloat16_t>({200, 130, 72}, 56, g);
}

// Bias, GELU and a residual applied to the accumulators in wgmma's layout; and fewer rows
// than a tile, the last row tile guarded.
TEST(GemmWarpgroups, FusedEpilogueAndGuardedRows) {
    check_fused_epilogue({136, 140, 80}, 45, aicf_apps::GemmSchedule::hopper());
    aicf_apps::GemmSchedule s = aicf_apps::GemmSchedule::hopper();
    s.guard_rows = true;
    check_plain<bfloat16_t>({5, 130, 70}, 47, s);
    check_fused_epilogue({150, 128, 64}, 49, s);
}

// The kernel: cp.async into core matrices, the proxy fence before each barrier, and each step
// of 64 along k issued as one group of 4 wgmma (one fence, one commit), left running while the
// next step begins (a wait for all but one group), the last waited for after the loop. The
// copies of a step run 2 steps ahead (3 stages; each step waits for all but one copy group),
// issued after the wgmma of the step, its wait and a second barrier (two warpgroups);
// assembled by ptxas for sm_90a without spills.
TEST(GemmWarpgroups, PTX) {
    Buffer<bfloat16_t> A({256, 256}, "A"), B({256, 256}, "B");
    fill_random(A, -1, 1, 51);
    fill_random(B, -1, 1, 52);
    Func out =
        aicf_apps::gemm_tensor_cores(A, B, 256, "gemm", {}, {}, aicf_apps::GemmSchedule::hopper());
    const std::string ptx = out.ptx(hopper_target);
    auto count = [&](const std::string &what) { return aicf_test::occurrences(ptx, what); };
    EXPECT_GT(count("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"), 0) << ptx;
    const int kernels = count(".entry ");
    EXPECT_EQ(count("wgmma.mma_async.sync.aligned"), 4 * count("wgmma.wait_group.sync.aligned 1;"))
        << ptx;
    EXPECT_EQ(count("wgmma.wait_group.sync.aligned 1;"), kernels) << ptx;
    EXPECT_EQ(count("wgmma.wait_group.sync.aligned 0;"), kernels) << ptx;
    EXPECT_EQ(count("wgmma.fence.sync.aligned"), count("wgmma.commit_group.sync.aligned"));
    EXPECT_GT(count("cp.async.cg.shared.global"), 0);
    EXPECT_EQ(count("fence.proxy.async.shared::cta"), count("bar.sync"));
    EXPECT_EQ(count("cp.async.wait_group 1;"), kernels) << ptx;
    // In the loop: the wait for a step's copies, a barrier, its wgmma and their wait, the
    // second barrier, then the next copies.
    const size_t copies_waited = ptx.find("cp.async.wait_group 1;");
    const size_t group_waited = ptx.find("wgmma.wait_group.sync.aligned 1;", copies_waited);
    const size_t second_barrier = ptx.find("bar.sync", group_waited);
    ASSERT_NE(second_barrier, std::string::npos) << ptx;
    EXPECT_LT(ptx.find("bar.sync", copies_waited), ptx.find("wgmma.mma_async", copies_waited));
    EXPECT_NE(ptx.find("cp.async.cg.shared.global", second_barrier), std::string::npos) << ptx;
    expect_no_spills(out, hopper_target);
}
