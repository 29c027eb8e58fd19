// The PTX AICF emits says what the schedule implies: shared memory and barriers for a
// staged stage, wide non-coherent loads for vectorized read-only inputs, libdevice math.

#include "ErrorMessage.h"
#include "FloatToInt.h"
#include "GPUTarget.h"
#include "MatmulGPU.h"
#include "Reference.h"
#include "backends/llvm/CodeGen_PTX.h"
#include "dsl/aicf.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

using namespace aicf;
using aicf_test::message_of;

namespace {

const Target sm80("host-cuda-sm_80");

bool contains(const std::string &text, const std::string &what) {
    return text.find(what) != std::string::npos;
}

Func staged_stencil(const Buffer<float> &in) {
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    Func f("f"), g("g");
    f(x, y) = in(x, y) * 2.0f;
    g(x, y) = f(x, y) + f(x + 1, y);
    g.gpu_tile(x, y, bx, by, tx, ty, 32, 8);
    f.compute_at(g, bx).gpu_threads(x, y);
    return g;
}

TEST(PTX, SharedStageUsesSharedMemoryAndABarrier) {
    Buffer<float> in({100, 40}, "in");
    std::string ptx = staged_stencil(in).ptx(sm80);
    EXPECT_TRUE(contains(ptx, ".target sm_80")) << ptx;
    EXPECT_TRUE(contains(ptx, ".visible .entry g_k0_g(")) << ptx;
    EXPECT_TRUE(contains(ptx, ".extern .shared .align 16 .b8 __shared[]")) << ptx;
    EXPECT_TRUE(contains(ptx, "st.shared.f32")) << ptx;
    EXPECT_TRUE(contains(ptx, "ld.shared.f32")) << ptx;
    EXPECT_TRUE(contains(ptx, "bar.sync")) << ptx;
    EXPECT_TRUE(contains(ptx, ".maxntid 33, 8, 1")) << ptx;
    EXPECT_TRUE(contains(ptx, "ld.global.nc.f32")) << ptx; // the input is read-only
}

// Launch bounds from the schedule become the kernel's PTX directives, and ptxas keeps to the
// register limit; the block shape stays its .maxntid.
TEST(PTX, LaunchBoundsFromTheSchedule) {
    Buffer<float> in({100, 40}, "in");
    Func g = staged_stencil(in);
    g.gpu_launch_bounds(4).gpu_max_registers(32);
    std::string ptx = g.ptx(sm80);
    EXPECT_TRUE(contains(ptx, ".maxntid 33, 8, 1")) << ptx;
    EXPECT_TRUE(contains(ptx, ".minnctapersm 4")) << ptx;
    EXPECT_TRUE(contains(ptx, ".maxnreg 32")) << ptx;
    EXPECT_TRUE(contains(g.lowered_stmt(sm80), "at least 4 blocks per multiprocessor, at most 32 "
                                               "registers per thread"));
    if (backends::ptxas_available()) {
        for (const backends::KernelResources &r : backends::assemble_ptx(ptx, "sm_90"))
            EXPECT_LE(r.registers, 32) << r.to_string();
    }
    // Without them, neither directive.
    std::string plain = staged_stencil(in).ptx(sm80);
    EXPECT_FALSE(contains(plain, ".minnctapersm")) << plain;
    EXPECT_FALSE(contains(plain, ".maxnreg")) << plain;
}

TEST(PTX, VectorizedReadOnlyLoadIsOneWideLoad) {
    Buffer<float> in({1000}, "in");
    Var x("x"), xo("xo"), xv("xv"), bx("bx"), tx("tx");
    Func f("f");
    f(x) = in(x)*3.0f;
    f.split(x, xo, xv, 4).vectorize(xv).gpu_tile(xo, bx, tx, 64);
    std::string ptx = f.ptx(sm80);
    EXPECT_TRUE(contains(ptx, "ld.global.nc.v4.f32")) << ptx;
    EXPECT_TRUE(contains(ptx, "st.global.v4.f32")) << ptx;
    EXPECT_FALSE(contains(ptx, "bar.sync")) << ptx;
}

TEST(PTX, BufferTheKernelWritesIsNotReadThroughTheReadOnlyCache) {
    Buffer<float> in({256}, "in");
    Var x("x"), bx("bx"), tx("tx");
    Func f("f");
    f(x) = in(x);
    f(x) = f(x) * f(x) + 1.0f;
    f.gpu_tile(x, bx, tx, 64);
    f.update().gpu_tile(x, bx, tx, 64);
    std::string ptx = f.ptx(sm80);
    EXPECT_TRUE(contains(ptx, "ld.global.nc.f32")) << ptx; // in, in the first kernel
    EXPECT_TRUE(contains(ptx, "ld.global.f32")) << ptx;    // f, in the second
}

TEST(PTX, MathComesFromLibdeviceAndIsInlined) {
    if (!backends::libdevice_available())
        GTEST_SKIP() << "no libdevice (the CUDA toolkit is not installed)";
    Buffer<float> in({256}, "in");
    Var x("x"), bx("bx"), tx("tx");
    Func f("f");
    f(x) = exp(in(x)) + tanh(in(x)) + sqrt(in(x)) + sin(in(x)) * cos(in(x));
    f.gpu_tile(x, bx, tx, 128);
    std::string ptx = f.ptx(sm80);
    EXPECT_FALSE(contains(ptx, "__nv_")) << ptx;
    EXPECT_FALSE(contains(ptx, "call")) << ptx;
    EXPECT_TRUE(contains(ptx, "sqrt.rn.f32")) << ptx;
}

TEST(PTX, ArchitectureAndFileOutput) {
    Buffer<float> in({100, 40}, "in");
    Func g = staged_stencil(in);
    EXPECT_TRUE(contains(g.ptx(Target("host-cuda-sm_90")), ".target sm_90"));
    EXPECT_TRUE(contains(g.ptx(Target("host-cuda-sm_90a")), ".target sm_90a"));
    std::string path = testing::TempDir() + "aicf_stencil.ptx";
    g.compile_to_ptx(path, sm80);
    std::ifstream file(path);
    std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    EXPECT_TRUE(contains(text, ".visible .entry g_k0_g("));
    std::remove(path.c_str());
}

TEST(PTX, NeedsAGPUTarget) {
    Buffer<float> in({100, 40}, "in");
    Func g = staged_stencil(in);
    std::string msg = message_of<CompileError>([&] { g.ptx(Target("host")); });
    EXPECT_CONTAINS(msg, "has no GPU");
}

TEST(PTX, ResourceReportFromPtxas) {
    if (!backends::ptxas_available())
        GTEST_SKIP() << "no ptxas (the CUDA toolkit is not installed)";
    Buffer<float> in({100, 40}, "in");
    std::string report = staged_stencil(in).kernel_resources(sm80);
    EXPECT_TRUE(contains(report, "g_k0_g (sm_80): ")) << report;
    EXPECT_TRUE(contains(report, " 0 bytes spill stores, 0 bytes spill loads")) << report;
    EXPECT_FALSE(contains(report, ": 0 registers")) << report;
}

// The GPU benchmark's matmul keeps its 8 x 8 tile per thread in registers, though its stages
// are vectorized (float4 accesses to a register array once put it in local memory), and reads
// shared memory as float4: 16 fused multiply-adds per shared load.
TEST(PTX, RegisterTiledMatmulReadsFloat4AndDoesNotSpill) {
    const int n = 256;
    Buffer<float> A({n, n}, "A"), B({n, n}, "B");
    Func out = aicf_apps::matmul_register_tiled(A, B, n, "matmul");
    Target fma("host-cuda-sm_80-fma");
    std::string ptx = out.ptx(fma);
    auto count = [&](const std::string &what) { return aicf_test::occurrences(ptx, what); };
    EXPECT_EQ(count("ld.local"), 0) << ptx;
    EXPECT_EQ(count("ld.shared.f32"), 0) << ptx;
    EXPECT_GE(count("fma.rn.f32"), 16 * count("ld.shared.v4.f32")) << ptx;
    if (backends::ptxas_available()) {
        std::string report = out.kernel_resources(fma);
        EXPECT_TRUE(contains(report, " 0 bytes stack frame")) << report;
        EXPECT_TRUE(contains(report, " 0 bytes spill stores, 0 bytes spill loads")) << report;
    }
}

// At a K that 8 does not divide, the last step of the matmul stages fewer rows of A: the
// staging loop, its rows fused with the block's columns, still divides its index by the
// step's 8 rows (a shift), not by the step's run-time extent.
TEST(PTX, MatmulWithAShortLastStepDividesNothing) {
    const int n = 256, K = 77;
    Buffer<float> A({K, n}, "A"), B({n, K}, "B");
    std::string ptx =
        aicf_apps::matmul_register_tiled(A, B, K, "matmul").ptx(Target("host-cuda-sm_80-fma"));
    for (const char *division : {"div.s32", "rem.s32", "div.u32", "rem.u32"})
        EXPECT_EQ(aicf_test::occurrences(ptx, division), 0) << division << "\n" << ptx;
}

// A thread's 4 x 4 tile of a product in registers, with guarded tails on every loop: the
// tail computes a smaller part of the tile, which keeps the tile's strides (a stride of the
// region's run-time extent put the tile in local memory). Checked at sizes no tile divides.
TEST(PTX, RegisterTileUnderGuardedTailsStaysInRegisters) {
    const int M = 70, N = 37, K = 19;
    Buffer<float> A({K, M}, "A"), B({N, K}, "B");
    aicf_test::fill_random(A, -1.0, 1.0, 5);
    aicf_test::fill_random(B, -1.0, 1.0, 6);
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty"), xi("xi"), yi("yi");
    RDom k(0, K, "k");
    Func c("c"), out("out");
    c(x, y) = 0.0f;
    c(x, y) += A(k, y) * B(x, k);
    out(x, y) = c(x, y) * 2.0f;
    const TailStrategy guard = TailStrategy::GuardWithIf;
    out.tile(x, y, bx, by, x, y, 32, 32, guard)
        .tile(x, y, tx, ty, xi, yi, 4, 4, guard)
        .gpu_blocks(bx, by)
        .gpu_threads(tx, ty)
        .unroll(xi)
        .unroll(yi);
    c.compute_at(out, tx).unroll(x).unroll(y);
    c.update().reorder(x, y, k).unroll(x).unroll(y);
    const std::string ptx = out.ptx(sm80);
    EXPECT_EQ(aicf_test::occurrences(ptx, "ld.local"), 0) << ptx;
    EXPECT_EQ(aicf_test::occurrences(ptx, "st.local"), 0) << ptx;
    if (backends::ptxas_available()) {
        std::string report = out.kernel_resources(sm80);
        EXPECT_TRUE(contains(report, " 0 bytes stack frame")) << report;
    }
    Buffer<float> got = out.realize({N, M}, aicf_test::gpu_test_target());
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            double want = 0;
            for (int r = 0; r < K; r++)
                want += double(A(r, i)) * B(j, r);
            EXPECT_TRUE(aicf_test::close(got(j, i), 2 * want, 1e-5, 1e-5)) << j << " " << i;
        }
    }
}

} // namespace

namespace {

// A row sum on the lanes of a warp (4 rows to a block) or on 256 threads (one row a block).
Func row_sum(const Buffer<float> &in, int width, bool block_per_row) {
    Var y("y"), yo("yo"), yi("yi");
    RDom r(0, width, "r");
    RVar ro("ro"), lane("lane");
    Func sum("sum"), out("out");
    sum(y) = 0.0f;
    sum(y) += in(r, y);
    out(y) = sum(y) * 2.0f;
    if (block_per_row) {
        out.gpu_blocks(y);
        // Every thread holds the sum in a register: no shared copy, no second barrier.
        sum.compute_at(out, y).store_in(MemoryType::Register);
        sum.update().split(r.x, ro, lane, 256).reorder(ro, lane).gpu_threads(lane);
    } else {
        out.split(y, yo, yi, 4).gpu_blocks(yo).gpu_threads(yi);
        sum.compute_at(out, yi);
        sum.update().split(r.x, ro, lane, 32).reorder(ro, lane).gpu_lanes(lane);
    }
    return out;
}

int occurrences(const std::string &text, const std::string &what) {
    int c = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        c++;
    return c;
}

} // namespace

// A warp's reduction is five butterfly shuffles over the full warp, in registers: no shared
// memory, no barrier, no local memory.
TEST(PTX, WarpReductionIsFiveButterflyShuffles) {
    Buffer<float> in({1000, 64}, "in");
    std::string ptx = row_sum(in, 1000, false).ptx(sm80);
    EXPECT_EQ(occurrences(ptx, "shfl.sync.bfly.b32"), 5) << ptx;
    EXPECT_TRUE(contains(ptx, ", 16, 31, -1;")) << ptx; // lane xor 16, over the whole warp
    EXPECT_FALSE(contains(ptx, "bar.sync")) << ptx;
    EXPECT_FALSE(contains(ptx, ".shared")) << ptx;
    EXPECT_EQ(occurrences(ptx, "ld.local") + occurrences(ptx, "st.local"), 0) << ptx;
}

// Across the 8 warps of a block: five shuffles in each warp, one shared slot per warp, one
// barrier, then three shuffles over the warps' partials; every thread then holds the sum.
TEST(PTX, BlockReductionHasOneBarrierAndEightShuffles) {
    Buffer<float> in({5000, 16}, "in");
    std::string ptx = row_sum(in, 5000, true).ptx(sm80);
    EXPECT_EQ(occurrences(ptx, "shfl.sync.bfly.b32"), 8) << ptx;
    EXPECT_EQ(occurrences(ptx, "bar.sync"), 1) << ptx;
    EXPECT_EQ(occurrences(ptx, "ld.local") + occurrences(ptx, "st.local"), 0) << ptx;
    if (backends::ptxas_available()) {
        std::string report = row_sum(in, 5000, true).kernel_resources(sm80);
        EXPECT_TRUE(contains(report, " 0 bytes stack frame")) << report;
        EXPECT_TRUE(contains(report, " 0 bytes spill stores, 0 bytes spill loads")) << report;
    }
}

// A transpose through a 32 x 33 tile of shared memory, staged in four rounds of 8 rows by
// 32 x 8 threads, with guarded tails (edge tiles stage fewer rows and columns): the tile is
// laid out over its constant bound, so each round's index is a known function of the thread
// and the round, and the rounds need one barrier before them and none between them.
TEST(PTX, TileStagedInRoundsHasOneBarrier) {
    const int W = 1001, H = 517;
    Buffer<float> in({W, H}, "in");
    aicf_test::fill_random(in, -1.0, 1.0, 71);
    Var x("x"), y("y"), bx("bx"), by("by"), xi("xi"), yi("yi"), ty("ty"), yr("yr");
    Func tile("tile"), out("out");
    tile(x, y) = in(x, y);
    out(x, y) = tile(y, x);
    const TailStrategy guard = TailStrategy::GuardWithIf;
    out.tile(x, y, bx, by, xi, yi, 32, 32, guard)
        .split(yi, yr, ty, 8, guard)
        .reorder(xi, ty, yr, bx, by)
        .gpu_blocks(bx, by)
        .gpu_threads(xi, ty);
    Var ty2("ty2"), yr2("yr2");
    tile.compute_at(out, bx)
        .store_in(MemoryType::GPUShared)
        .align_storage(x, 33)
        .split(y, yr2, ty2, 8, guard)
        .reorder(x, ty2, yr2)
        .gpu_threads(x, ty2);
    const std::string ptx = out.ptx(sm80);
    EXPECT_EQ(occurrences(ptx, "bar.sync"), 1) << ptx;
    Buffer<float> got = out.realize({H, W}, aicf_test::gpu_test_target());
    for (int j = 0; j < W; j++)
        for (int i = 0; i < H; i++)
            ASSERT_EQ(got(i, j), in(j, i)) << i << ", " << j;
}

namespace {

// Every hard input converted to T in a kernel, against the definition.
template <typename F, typename T> void expect_kernel_float_to_int() {
    const std::vector<double> values = aicf_test::hard_float_to_int_inputs();
    const int n = int(values.size());
    Buffer<F> in({n}, "in");
    for (int i = 0; i < n; i++)
        in(i) = F(values[size_t(i)]);
    Var x("x"), bx("bx"), tx("tx");
    Func f("f");
    f(x) = cast<T>(in(x));
    f.gpu_tile(x, bx, tx, 64, TailStrategy::GuardWithIf);
    Buffer<T> got = f.realize({n}, aicf_test::gpu_test_target());
    for (int i = 0; i < n; i++)
        ASSERT_EQ(got(i), aicf_test::converted_float<T>(double(in(i))))
            << double(in(i)) << " into " << sizeof(T) << " bytes";
}

} // namespace

// A float converted to an integer in a kernel is one cvt.rzi (which saturates) and a select
// for NaN; narrower types are clamped from 32 bits. Values against the definition (towards
// zero, saturated, NaN to 0) from float and double into every width.
TEST(PTX, FloatToIntegerIsOneConversion) {
    Buffer<float> in({100}, "in");
    Var x("x"), bx("bx"), tx("tx");
    Func f("f");
    f(x) = cast<int>(in(x)*100.0f);
    f.gpu_tile(x, bx, tx, 64, TailStrategy::GuardWithIf);
    const std::string ptx = f.ptx(sm80);
    EXPECT_EQ(occurrences(ptx, "cvt.rzi.s32.f32"), 1) << ptx;
    EXPECT_EQ(occurrences(ptx, "setp.nan.f32"), 1) << ptx;
    expect_kernel_float_to_int<float, int8_t>();
    expect_kernel_float_to_int<float, uint16_t>();
    expect_kernel_float_to_int<float, int32_t>();
    expect_kernel_float_to_int<float, uint32_t>();
    expect_kernel_float_to_int<double, int64_t>();
    expect_kernel_float_to_int<double, uint64_t>();
    expect_kernel_float_to_int<float, int64_t>();
    expect_kernel_float_to_int<double, uint8_t>();
}

// Into bfloat16 on sm_80 and float16 anywhere: one cvt.rn per value, no rounding written out
// in integer arithmetic (GPUSchedule.HalfAndBFloatStorageMatchesTheHost checks the values
// against the host's, bit for bit).
TEST(PTX, SixteenBitFloatsRoundInOneInstruction) {
    Buffer<float> in({100}, "in");
    Var x("x"), bx("bx"), tx("tx");
    Func b("b"), h("h");
    b(x) = cast<bfloat16_t>(in(x)*3.0f);
    h(x) = cast<float16_t>(in(x)*3.0f);
    b.gpu_tile(x, bx, tx, 64, TailStrategy::GuardWithIf);
    h.gpu_tile(x, bx, tx, 64, TailStrategy::GuardWithIf);
    const std::string bptx = b.ptx(sm80), hptx = h.ptx(sm80);
    EXPECT_EQ(occurrences(bptx, "cvt.rn.bf16.f32"), 1) << bptx;
    EXPECT_EQ(occurrences(hptx, "cvt.rn.f16.f32"), 1) << hptx;
    EXPECT_FALSE(contains(bptx, "setp.nan")) << bptx;
    EXPECT_FALSE(contains(hptx, "setp.nan")) << hptx;
}

// f(x) = 2 in(x) + 1 in blocks of 256 points, each thread's 4 points a vector, both splits'
// tails as given; and its values, checked on the GPU test target.
Func doubled_in_vectors(const Buffer<float> &in, TailStrategy tail) {
    Var x("x"), bx("bx"), tx("tx"), xv("xv");
    Func f("f");
    f(x) = in(x)*2.0f + 1.0f;
    f.split(x, bx, x, 256, tail)
        .split(x, tx, xv, 4, tail)
        .vectorize(xv)
        .gpu_blocks(bx)
        .gpu_threads(tx);
    return f;
}
void expect_doubled(Func f, const Buffer<float> &in) {
    const int n = in.dim(0).extent();
    Buffer<float> got = f.realize({n}, aicf_test::gpu_test_target());
    for (int i = 0; i < n; i++)
        ASSERT_EQ(got(i), in(i)*2.0f + 1.0f) << i;
}

// Tiles shifted inwards at the end of a size no vector divides (1001): the last block's
// vectors are unaligned, so the host launches the fallback kernel; there each vector access
// checks its own alignment, and is one 16-byte access in every other block (made lane by lane
// in every block, the fallback was four times the accesses). Values checked.
TEST(PTX, ShiftedTailFallbackIsWideWhereAligned) {
    Buffer<float> in({1001}, "in");
    aicf_test::fill_random(in, -1.0, 1.0, 73);
    Func f = doubled_in_vectors(in, TailStrategy::ShiftInwards);
    const std::string ptx = f.ptx(sm80);
    const size_t fallback = ptx.find(".entry f_k0_f_unaligned(");
    ASSERT_NE(fallback, std::string::npos) << ptx;
    const std::string body = ptx.substr(fallback, ptx.find(".entry", fallback + 1) - fallback);
    EXPECT_TRUE(contains(body, "ld.global.nc.v4.f32")) << body;
    EXPECT_TRUE(contains(body, "st.global.v4.f32")) << body;
    EXPECT_TRUE(contains(body, "ld.global.nc.f32")) << body; // the unaligned block's lanes
    expect_doubled(f, in);
}

// Vectors of 4 under a guarded tail in each thread: every vector but the last has all its
// lanes on and is one 16-byte load and store (in the kernel for aligned buffers, as an
// unpredicated vector is); the last keeps its lanes' predicates. Values at a size no vector
// divides.
TEST(PTX, GuardedVectorsWithEveryLaneOnAreWide) {
    Buffer<float> in({1003}, "in");
    aicf_test::fill_random(in, -1.0, 1.0, 72);
    Func f = doubled_in_vectors(in, TailStrategy::GuardWithIf);
    const std::string ptx = f.ptx(sm80);
    EXPECT_TRUE(contains(ptx, "ld.global.nc.v4.f32")) << ptx;
    EXPECT_TRUE(contains(ptx, "st.global.v4.f32")) << ptx;
    expect_doubled(f, in);
}
