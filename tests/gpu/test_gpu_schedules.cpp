// GPU schedules run on the device AICF_DEVICE names (the simulator by default), checked
// against plain loops in double precision.

#include "ErrorMessage.h"
#include "GPUTarget.h"
#include "LayerNormGPU.h"
#include "MatmulGPU.h"
#include "Reference.h"
#include "ScopedEnv.h"
#include "StagedProduct.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

using namespace aicf;
using aicf_test::close;
using aicf_test::fill_random;
using aicf_test::message_of;

namespace {

const Target gpu_target = aicf_test::gpu_test_target();

// out(x, y) is the mean of in's 3 x 3 points from (x, y), against a double-precision loop.
void expect_box_blur(const Buffer<float> &out, const Buffer<float> &in) {
    for (int j = 0; j < out.height(); j++) {
        for (int i = 0; i < out.width(); i++) {
            double want = 0;
            for (int dy = 0; dy < 3; dy++)
                for (int dx = 0; dx < 3; dx++)
                    want += in(i + dx, j + dy);
            ASSERT_TRUE(close(out(i, j), want / 9, 1e-5, 1e-6)) << i << "," << j;
        }
    }
}

// C = A * B (C(x, y) = sum over k of A(k, y) * B(x, k)) against a double-precision loop.
void expect_product(const Buffer<float> &C, const Buffer<float> &A, const Buffer<float> &B) {
    for (int j = 0; j < C.height(); j++) {
        for (int i = 0; i < C.width(); i++) {
            double want = 0;
            for (int kk = 0; kk < A.width(); kk++)
                want += double(A(kk, j)) * B(i, kk);
            ASSERT_TRUE(close(C(i, j), want, 1e-4, 1e-4)) << i << "," << j;
        }
    }
}

TEST(GPUSchedule, PointwiseTiledWithTails) {
    const int W = 37, H = 21;
    Buffer<float> a({W, H}, "a"), b({W, H}, "b");
    fill_random(a, -2, 2, 1);
    fill_random(b, -2, 2, 2);
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    Func f("f");
    f(x, y) = a(x, y) * 2.0f + b(x, y) - a(x, y) * b(x, y);
    f.gpu_tile(x, y, bx, by, tx, ty, 8, 4);
    Buffer<float> out = f.realize({W, H}, gpu_target);
    for (int j = 0; j < H; j++) {
        for (int i = 0; i < W; i++) {
            double av = a(i, j), bv = b(i, j);
            ASSERT_TRUE(close(out(i, j), av * 2 + bv - av * bv, 1e-6, 1e-6)) << i << "," << j;
        }
    }
}

// The first stage of a stencil is computed per block into shared memory (with its halo),
// then read by the second stage's threads.
// Inline reductions inside a GPU Func reduce in each thread (the innermost loop around their
// use), as Halide places them: a column maximum, a column mean and an argmin per column.
// Rotary position embeddings, the angles computed in the kernel: pairs (2i, 2i + 1) of each
// head's dimensions rotated by position * base^(-2i / D), against a double-precision loop.
TEST(GPUSchedule, RotaryEmbeddingWithSinAndCosInTheKernel) {
    const int D = 20, T = 37, H = 3;
    Buffer<float> q({D, T, H}, "q");
    fill_random(q, -2, 2, 51);
    Var d("d"), t("t"), h("h"), bx("bx"), tx("tx");
    Func angle("angle"), rope("rope");
    Expr pair = d / 2;
    angle(d, t) = cast<float>(t) * exp(cast<float>(pair * 2) * (-std::log(10000.0f) / D));
    Expr partner = select(d % 2 == 0, -q(min(d + 1, D - 1), t, h), q(max(d - 1, 0), t, h));
    rope(d, t, h) = q(d, t, h) * cos(angle(d, t)) + partner * sin(angle(d, t));
    rope.bound(d, 0, D).split(t, bx, tx, 8).gpu_blocks(bx, h).gpu_threads(d, tx);
    Buffer<float> out = rope.realize({D, T, H}, gpu_target);
    for (int k = 0; k < H; k++)
        for (int j = 0; j < T; j++)
            for (int i = 0; i < D; i++) {
                double a = j * std::exp((i / 2 * 2) * (-std::log(10000.0) / D));
                double p = i % 2 == 0 ? -q(i + 1, j, k) : q(i - 1, j, k);
                double want = q(i, j, k) * std::cos(a) + p * std::sin(a);
                ASSERT_TRUE(close(out(i, j, k), want, 1e-5, 2e-5))
                    << i << " " << j << " " << k << ": " << out(i, j, k) << " vs " << want;
            }
}

TEST(GPUSchedule, InlineReductionsReduceInEachThread) {
    const int W = 77, H = 20;
    Buffer<float> in({W, H}, "in");
    fill_random(in, -1.0, 1.0, 44);
    Var x("x"), bx("bx"), tx("tx");
    RDom r(0, H, "r");
    Func out("out");
    out(x) = Tuple(maximum(in(x, r)), sum(in(x, r)) / float(H), argmin(in(x, r))[0]);
    out.gpu_tile(x, bx, tx, 32, TailStrategy::GuardWithIf);
    EXPECT_NE(Pipeline(out).loop_nest(gpu_target).find("gpu_thread.x for out.s0.tx"),
              std::string::npos);
    Realization res = out.realize({W}, gpu_target);
    Buffer<float> mx(res[0]), mean(res[1]);
    Buffer<int32_t> at(res[2]);
    for (int i = 0; i < W; i++) {
        double m = -1e30, s = 0;
        int lo = 0;
        for (int j = 0; j < H; j++) {
            m = std::max(m, double(in(i, j)));
            s += in(i, j);
            if (in(i, j) < in(i, lo)) lo = j;
        }
        EXPECT_EQ(mx(i), float(m)) << i;
        EXPECT_TRUE(close(mean(i), s / H, 1e-5, 1e-6)) << i;
        EXPECT_EQ(at(i), lo) << i;
    }
}

TEST(GPUSchedule, StencilFirstStageInSharedMemory) {
    const int W = 45, H = 30;
    Buffer<float> in({W + 2, H + 2}, "in");
    fill_random(in, -1, 1, 3);
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    Func f("f"), g("g");
    f(x, y) = in(x, y) * in(x, y) + 0.5f;
    g(x, y) = f(x, y + 1) + f(x + 2, y + 1) + f(x + 1, y) + f(x + 1, y + 2) - f(x + 1, y + 1);
    g.gpu_tile(x, y, bx, by, tx, ty, 16, 8);
    f.compute_at(g, bx).gpu_threads(x, y);
    Buffer<float> out = g.realize({W, H}, gpu_target);
    auto fr = [&](int i, int j) { return double(in(i, j)) * in(i, j) + 0.5; };
    for (int j = 0; j < H; j++) {
        for (int i = 0; i < W; i++) {
            double want = fr(i, j + 1) + fr(i + 2, j + 1) + fr(i + 1, j) + fr(i + 1, j + 2) -
                          fr(i + 1, j + 1);
            ASSERT_TRUE(close(out(i, j), want, 1e-5, 1e-5)) << i << "," << j;
        }
    }
}

// A stage in shared memory whose split has its inner loop on threads and its outer loop
// serial: by default its tail is guarded. Shifted inwards, the last tile made other threads
// store points already stored, with no barrier between (a race the simulator reported for an
// accepted schedule); asked for explicitly, that is refused.
TEST(GPUSchedule, SerialTilesOfThreadsGuardTheirTail) {
    const int W = 32, H = 32;
    Buffer<float> in({W, H}, "in");
    fill_random(in, -1, 1, 15);
    for (int variant = 0; variant < 3; variant++) {
        SCOPED_TRACE(variant);
        Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty"), t("t"), hi("hi"), lo("lo");
        Func src("src"), out("out");
        src(x, y) = in(x, y) * 3.0f;
        out(x, y) = src(x, y) + 1.0f;
        out.gpu_tile(x, y, bx, by, tx, ty, 8, 16);
        src.compute_at(out, bx).store_in(MemoryType::GPUShared);
        if (variant == 0) src.split(x, hi, lo, 6).gpu_threads(lo, y);
        if (variant == 1) src.fuse(x, y, t).split(t, hi, lo, 200).split(lo, ty, tx, 16);
        if (variant == 2) src.split(x, hi, lo, 64).gpu_threads(lo, y);
        if (variant == 1) src.gpu_threads(tx, ty);
        Buffer<float> result = out.realize({W, H}, gpu_target)[0];
        result.copy_to_host();
        for (int j = 0; j < H; j++)
            for (int i = 0; i < W; i++)
                ASSERT_EQ(result(i, j), in(i, j) * 3.0f + 1.0f) << i << "," << j;
    }
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty"), hi("hi"), lo("lo");
    Func src("src"), out("out");
    src(x, y) = in(x, y) * 3.0f;
    out(x, y) = src(x, y) + 1.0f;
    out.gpu_tile(x, y, bx, by, tx, ty, 8, 16);
    src.compute_at(out, bx).store_in(MemoryType::GPUShared);
    src.split(x, hi, lo, 6, TailStrategy::ShiftInwards).gpu_threads(lo, y);
    EXPECT_CONTAINS(message_of<CompileError>([&] {
                        out.realize({W, H}, gpu_target);
                    }),
                    "the split of x shifts its tail inwards (ShiftInwards), its inner loop lo "
                    "runs on GPU threads and its outer loop hi runs serially");
}

// Clamp-to-edge written where the consumer reads the staged intermediate: each block's rows
// of f are a clamped window, at most the tile's height plus two whatever the block, so the
// shared stage has a constant size (it was refused as unbounded).
TEST(GPUSchedule, ClampedReadsOfASharedStage) {
    const int W = 40, H = 30;
    Buffer<float> in({W, H}, "in");
    fill_random(in, -1, 1, 4);
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    Func f("f"), g("g");
    f(x, y) = in(x, y) * 2.0f + 1.0f;
    g(x, y) = f(x, clamp(y - 1, 0, H - 1)) + f(x, clamp(y + 1, 0, H - 1)) * 0.5f;
    g.gpu_tile(x, y, bx, by, tx, ty, 16, 8, TailStrategy::GuardWithIf);
    f.compute_at(g, bx).store_in(MemoryType::GPUShared).gpu_threads(x, y);
    Buffer<float> out = g.realize({W, H}, gpu_target);
    out.copy_to_host();
    auto fr = [&](int i, int j) { return double(in(i, std::clamp(j, 0, H - 1))) * 2 + 1; };
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++)
            ASSERT_TRUE(close(out(i, j), fr(i, j - 1) + fr(i, j + 1) * 0.5, 1e-5, 1e-5))
                << i << "," << j;
}

// A shared stage per block, a stage per thread in registers, and guarded tails: the input
// holds exactly what the pipeline reads. Interval arithmetic over all blocks bounds the last
// block's start and length apart and overshoots, so each block's region is checked instead,
// before the kernel; one point fewer is refused, naming the block's region.
TEST(GPUSchedule, InputOfExactSizeUnderGuardedTails) {
    const int W = 97, H = 33;
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    auto pipeline = [&](const Buffer<float> &in) {
        Func B("B"), C("C"), out("out");
        B(x, y) = in(x, y) * 2.0f;
        C(x, y) = B(x, y) + B(x + 1, y + 2);
        out(x, y) = C(x, y) * 0.5f;
        out.gpu_tile(x, y, bx, by, tx, ty, 32, 8, TailStrategy::GuardWithIf);
        B.compute_at(out, bx).store_in(MemoryType::GPUShared).gpu_threads(x, y);
        C.compute_at(out, tx).store_in(MemoryType::Register);
        return out;
    };
    Buffer<float> in({W + 1, H + 2}, "in");
    fill_random(in, -1, 1, 29);
    Buffer<float> o = pipeline(in).realize({W, H}, gpu_target);
    o.copy_to_host();
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++)
            ASSERT_TRUE(close(o(i, j), double(in(i, j)) + in(i + 1, j + 2), 1e-6, 1e-6))
                << i << ", " << j;
    Buffer<float> short_in({W + 1, H + 1}, "in");
    fill_random(short_in, -1, 1, 30);
    Func out2 = pipeline(short_in);
    std::string msg = message_of<RuntimeError>([&] { out2.realize({W, H}, gpu_target); });
    EXPECT_CONTAINS(msg, "Buffer in is too small: dimension 1 must cover [32, 34] (what one block "
                         "of the kernel over loop by of out reads), but it covers [0, 33]");
}

// Matmul with tiles of A and B staged through shared memory for each step of the
// reduction, and the accumulator in shared memory; no size is a multiple of a tile.
TEST(GPUSchedule, MatmulWithSharedTiles) {
    const int M = 37, N = 45, K = 50, T = 16;
    Buffer<float> A({K, M}, "A"), B({N, K}, "B");
    fill_random(A, -1, 1, 4);
    fill_random(B, -1, 1, 5);
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    VarOrRVar ko("ko", true), ki("ki", true);
    Func a("a"), b("b"), prod("prod"), out("out");
    a(x, y) = A(x, y);
    b(x, y) = B(x, y);
    RDom k(0, K, "k");
    prod(x, y) = 0.0f;
    prod(x, y) += a(k, y) * b(x, k);
    out(x, y) = prod(x, y);

    out.gpu_tile(x, y, bx, by, tx, ty, T, T);
    prod.compute_at(out, bx).gpu_threads(x, y);
    prod.update().split(k, ko, ki, T).reorder(ki, x, y, ko).gpu_threads(x, y);
    a.compute_at(prod, ko).gpu_threads(x, y);
    b.compute_at(prod, ko).gpu_threads(x, y);
    Buffer<float> C = out.realize({N, M}, gpu_target);
    expect_product(C, A, B);
}

// The product's update tiled on the GPU with guarded tails (its default for an update), its
// operands staged per step of k and pipelined: plain, through registers, and in 2 and 3
// stages of cp.async, whose buffers take the tile's largest size (the tiles at the edges are
// smaller). Sizes that the tiles do not divide.
TEST(GPUSchedule, PipelinedTilesUnderGuardedTails) {
    const int M = 37, N = 45, K = 50;
    Buffer<float> A({K, M}, "A"), B({N, K}, "B");
    fill_random(A, -1, 1, 14);
    fill_random(B, -1, 1, 15);
    for (int mode = 0; mode < 4; mode++) {
        SCOPED_TRACE("mode " + std::to_string(mode));
        Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
        RVar ko("ko"), ki("ki");
        Func a("a"), b("b"), prod("prod");
        RDom k(0, K, "k");
        a(x, y) = A(x, y);
        b(x, y) = B(x, y);
        prod(x, y) = 0.0f;
        prod(x, y) += a(k, y) * b(x, k);
        prod.gpu_tile(x, y, bx, by, tx, ty, 8, 8);
        prod.update()
            .gpu_tile(x, y, bx, by, tx, ty, 8, 8)
            .split(k, ko, ki, 8)
            .reorder(ki, tx, ty, ko, bx, by);
        for (Func f : {a, b}) {
            f.compute_at(prod.update(), ko).store_in(MemoryType::GPUShared).gpu_threads(x, y);
            if (mode == 1) f.gpu_pipeline(2);
            if (mode >= 2) f.gpu_pipeline(mode, PipelineCopy::Async);
        }
        Buffer<float> C = prod.realize({N, M}, gpu_target);
        C.copy_to_host();
        expect_product(C, A, B);
    }
}

// A wrapper stages the input tile (with its halo) into shared memory with its own thread
// mapping: the threads of the block load it cooperatively, then each computes its point.
TEST(GPUSchedule, WrapperStagesInputTileInSharedMemory) {
    const int W = 70, H = 41;
    Buffer<float> in({W + 2, H + 2}, "in");
    fill_random(in, -1, 1, 10);
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty"), xo("xo"), xi("xi");
    Func src("src"), blur("blur");
    src(x, y) = in(x, y);
    blur(x, y) = (src(x, y) + src(x + 1, y) + src(x + 2, y) + src(x, y + 1) + src(x + 1, y + 1) +
                  src(x + 2, y + 1) + src(x, y + 2) + src(x + 1, y + 2) + src(x + 2, y + 2)) /
                 9.0f;
    blur.gpu_tile(x, y, bx, by, tx, ty, 32, 8);
    // The 34 x 10 tile is loaded by 17 x 10 threads, two elements each.
    src.in()
        .compute_at(blur, bx)
        .store_in(MemoryType::GPUShared)
        .split(x, xo, xi, 2)
        .gpu_threads(xo, y);
    expect_box_blur(blur.realize({W, H}, gpu_target), in);
}

// The same staging where the split does not divide the tile (35 columns by pairs, 3 of a
// by fours): each thread loads a run, the last one shorter, so no two threads store one
// element (the simulator's race check would fault it), in shared and device memory.
TEST(GPUSchedule, ThreadRunsThatDoNotDivideTheTileDoNotOverlap) {
    const int W = 70, H = 13;
    Buffer<float> in({W + 3, H}, "in");
    fill_random(in, -1, 1, 11);
    for (int factor : {2, 4}) {
        Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty"), xo("xo"), xi("xi");
        Func src("src"), blur("blur"), twice("twice");
        src(x, y) = in(x, y);
        blur(x, y) = src(x, y) + src(x + 1, y) + src(x + 2, y) + src(x + 3, y);
        blur.gpu_tile(x, y, bx, by, tx, ty, 32, 4);
        src.in().compute_at(blur, bx).split(x, xo, xi, factor).gpu_threads(xo, y);
        // An output whose threads each compute a run of 3 (70 = 23 runs and 1 point).
        twice(x, y) = in(x, y) * 2.0f;
        twice.bound(x, 0, W).split(x, xo, xi, 3).gpu_threads(xo).gpu_blocks(y);
        Realization r = Pipeline({blur, twice}).realize({W, H}, gpu_target);
        Buffer<float> got = r[0], got_twice = r[1];
        got.copy_to_host();
        got_twice.copy_to_host();
        for (int j = 0; j < H; j++) {
            for (int i = 0; i < W; i++) {
                const double want = double(in(i, j)) + in(i + 1, j) + in(i + 2, j) + in(i + 3, j);
                ASSERT_TRUE(close(got(i, j), want, 1e-5, 1e-6)) << factor << ": " << i << "," << j;
                ASSERT_EQ(got_twice(i, j), in(i, j) * 2.0f) << i << "," << j;
            }
        }
    }
}

// The same runs where the outer loop reaches the threads only through a further split or a
// rename: Auto still guards the last run (34 points in runs of 4; shifted inwards it would
// overlap its neighbour's, two threads storing the same points), and ShiftInwards is refused.
TEST(GPUSchedule, ThreadRunsReachedThroughLaterSplitsDoNotOverlap) {
    const int W = 64;
    Buffer<float> in({W + 2}, "in");
    fill_random(in, -1, 1, 12);
    for (int mode : {0, 1, 2}) {
        Var x("x"), bx("bx"), tx("tx"), xo("xo"), xi("xi"), xoo("xoo"), xoi("xoi"), t("t");
        Func f("f"), out("out");
        f(x) = in(x)*2.0f;
        out(x) = f(x) + f(x + 1) + f(x + 2);
        out.split(x, bx, tx, 32).gpu_blocks(bx).gpu_threads(tx);
        f.compute_at(out, bx).store_in(MemoryType::GPUShared);
        if (mode == 0) f.split(x, xo, xi, 4).split(xo, xoo, xoi, 16).gpu_threads(xoi);
        if (mode == 1) f.split(x, xo, xi, 4).rename(xo, xoo).gpu_threads(xoo);
        if (mode == 2)
            f.split(x, xo, xi, 4).split(xo, xoo, xoi, 2).fuse(xoi, xoo, t).gpu_threads(t);
        Buffer<float> got = out.realize({W}, gpu_target);
        got.copy_to_host();
        for (int i = 0; i < W; i++)
            ASSERT_TRUE(close(got(i), 2.0 * (double(in(i)) + in(i + 1) + in(i + 2)), 1e-5, 1e-6))
                << "mode " << mode << ", " << i;
    }
    Var x("x"), bx("bx"), tx("tx"), xo("xo"), xi("xi"), xoo("xoo"), xoi("xoi");
    Func f("f"), out("out");
    f(x) = in(x)*2.0f;
    out(x) = f(x) + f(x + 1) + f(x + 2);
    out.split(x, bx, tx, 32).gpu_blocks(bx).gpu_threads(tx);
    f.compute_at(out, bx).store_in(MemoryType::GPUShared);
    f.split(x, xo, xi, 4, TailStrategy::ShiftInwards).split(xo, xoo, xoi, 16).gpu_threads(xoi);
    EXPECT_CONTAINS(message_of<CompileError>([&] { out.realize({W}, gpu_target); }),
                    "shifts its tail inwards (ShiftInwards), and its outer loop xo runs on GPU "
                    "threads (or loops split, fused or renamed from it do)");
}

// A wrapper staged into each thread's registers: every thread loads the 4 inputs it
// needs once, then uses them twice.
TEST(GPUSchedule, WrapperStagesIntoRegisters) {
    const int W = 101;
    Buffer<float> in({W + 3}, "in");
    fill_random(in, -1, 1, 11);
    Var x("x"), bx("bx"), tx("tx");
    Func src("src"), f("f");
    src(x) = in(x);
    f(x) = src(x) * src(x + 3) + src(x + 1) * src(x + 2) - src(x) * src(x + 1);
    f.gpu_tile(x, bx, tx, 64);
    src.in().compute_at(f, tx).store_in(MemoryType::Register).unroll(x);
    Buffer<float> out = f.realize({W}, gpu_target);
    for (int i = 0; i < W; i++) {
        double want =
            double(in(i)) * in(i + 3) + double(in(i + 1)) * in(i + 2) - double(in(i)) * in(i + 1);
        ASSERT_TRUE(close(out(i), want, 1e-5, 1e-6)) << i;
    }
}

// A 3x3 blur whose threads each compute 4 rows, with a tile of the input's 6 rows per thread
// unrolled in both dimensions, under guarded tails: at the image's last rows a thread needs
// fewer rows, so the tile's extent varies, at most 6; it is unrolled into 6 guarded copies,
// at sizes the tiles do not divide. (The guarded tails clamp the tile's start to the image,
// so its elements are read at offsets from a start that is not a constant: ptxas keeps it in
// local memory, which the ptxas check of the `ptx` label refuses; it is off here.)
TEST(GPUSchedule, RegisterTileUnrolledUnderGuardedTails) {
    aicf_test::ScopedEnv no_ptxas_check("AICF_PTXAS_CHECK", "");
    for (std::vector<int> size : {std::vector<int>{37, 23}, {5, 2}, {64, 33}}) {
        const int W = size[0], H = size[1];
        SCOPED_TRACE(std::to_string(W) + "x" + std::to_string(H));
        Buffer<float> in({W + 2, H + 2}, "in");
        fill_random(in, -1, 1, unsigned(W * 31 + H));
        Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty"), yi("yi");
        Func src("src"), blur("blur");
        src(x, y) = in(x, y);
        Expr total = 0.0f;
        for (int dy = 0; dy < 3; dy++)
            for (int dx = 0; dx < 3; dx++)
                total = total + src(x + dx, y + dy);
        blur(x, y) = total / 9.0f;
        blur.tile(x, y, bx, by, tx, ty, 32, 32, TailStrategy::GuardWithIf)
            .split(ty, ty, yi, 4, TailStrategy::GuardWithIf)
            .reorder(yi, tx, ty, bx, by)
            .gpu_blocks(bx, by)
            .gpu_threads(tx, ty);
        Func tile = src.in();
        tile.compute_at(blur, tx).store_in(MemoryType::Register).unroll(x).unroll(y);
        expect_box_blur(blur.realize({W, H}, gpu_target), in);
    }
}

// A small reduction computed by one GPU thread, so its result stays on the device for the
// kernel that uses it.
TEST(GPUSchedule, SingleThreadStage) {
    const int N = 200;
    Buffer<int> in({N}, "in");
    fill_random(in, -100, 100, 12);
    Var x("x"), bx("bx"), tx("tx");
    RDom r(0, N, "r");
    Func total("total"), out("out");
    total() = 0;
    total() += in(r);
    out(x) = in(x)-total();
    total.compute_root().gpu_single_thread();
    total.update().gpu_single_thread();
    out.gpu_tile(x, bx, tx, 64);
    Buffer<int> result = out.realize({N}, gpu_target);
    int64_t sum = 0;
    for (int i = 0; i < N; i++)
        sum += in(i);
    for (int i = 0; i < N; i++)
        ASSERT_EQ(result(i), in(i)-sum) << i;
}

// 16-bit floats are stored as such and computed in float32 on the device, bit for bit as
// on the host; the vectorized loads and stores are 8 bytes wide.
TEST(GPUSchedule, HalfAndBFloatStorageMatchesTheHost) {
    const int W = 203;
    Buffer<float16_t> a({W}, "a");
    Buffer<bfloat16_t> b({W}, "b");
    for (int i = 0; i < W; i++) {
        a(i) = float16_t(std::sin(i * 0.37) * 8.0);
        b(i) = bfloat16_t(std::cos(i * 0.11) * 100.0 + 0.5);
    }
    auto build = [&](bool gpu) {
        Var x("x"), xo("xo"), xv("xv"), bx("bx"), tx("tx");
        Func f("f");
        f(x) = cast<float16_t>(cast<float>(a(x)) * cast<float>(b(x)) + cast<float>(a(x)) / 3.0f);
        if (gpu) f.split(x, xo, xv, 4).vectorize(xv).gpu_tile(xo, bx, tx, 32);
        return f;
    };
    Buffer<float16_t> host = build(false).realize({W})[0];
    Buffer<float16_t> gpu = build(true).realize({W}, gpu_target)[0];
    for (int i = 0; i < W; i++)
        ASSERT_EQ(gpu(i).bits, host(i).bits) << i;
}

// The pure stage of an output runs on the GPU, its update on the host: the host code gets
// the device's data first.
TEST(GPUSchedule, OutputUpdatedOnTheHostAfterTheGPU) {
    Var x("x"), bx("bx"), tx("tx");
    Func f("f");
    f(x) = x * 2;
    f(x) += 1;
    f.gpu_tile(x, bx, tx, 32);
    Buffer<int> out = f.realize({100}, gpu_target)[0];
    for (int i = 0; i < 100; i++)
        ASSERT_EQ(out(i), 2 * i + 1) << i;
}

// Scalars of every width reach the kernel: bool, int8, int64, double.
TEST(GPUSchedule, ScalarParametersOfEveryWidth) {
    Param<bool> flip("flip");
    Param<int8_t> small("small");
    Param<int64_t> big("big");
    Param<double> scale("scale");
    Var x("x"), bx("bx"), tx("tx");
    Func f("f");
    f(x) = select(flip, -1, 1) * (cast<int>(small) + cast<int>(big % 1000) + cast<int>(scale * x));
    f.gpu_tile(x, bx, tx, 32);
    flip.set(true);
    small.set(-7);
    big.set(int64_t(1) << 40); // 2^40 % 1000 = 776
    scale.set(2.5);
    Buffer<int> out = f.realize({50}, gpu_target)[0];
    for (int i = 0; i < 50; i++)
        ASSERT_EQ(out(i), -(-7 + 776 + int(2.5 * i))) << i;
}

// An empty output launches nothing and fails nothing.
TEST(GPUSchedule, EmptyOutput) {
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    Func f("f");
    f(x, y) = x + y;
    f.gpu_tile(x, y, bx, by, tx, ty, 8, 8);
    Buffer<int> out = f.realize({0, 5}, gpu_target)[0];
    EXPECT_EQ(out.width(), 0);
}

// Three-dimensional blocks and grids.
TEST(GPUSchedule, ThreeDimensionalTiles) {
    const int X = 19, Y = 13, Z = 7;
    Var x("x"), y("y"), z("z"), bx("bx"), by("by"), bz("bz"), tx("tx"), ty("ty"), tz("tz");
    Func f("f");
    f(x, y, z) = x * 10000 + y * 100 + z;
    f.gpu_tile(x, y, z, bx, by, bz, tx, ty, tz, 8, 4, 2);
    Buffer<int> out = f.realize({X, Y, Z}, gpu_target);
    for (int k = 0; k < Z; k++)
        for (int j = 0; j < Y; j++)
            for (int i = 0; i < X; i++)
                ASSERT_EQ(out(i, j, k), i * 10000 + j * 100 + k);
}

// Register tiling: each thread accumulates a 4 x 4 tile of the product in its registers
// (prod is stored in registers at the block loop, in per-thread parts), while the block
// stages tiles of A and B in shared memory for each step of the reduction.
TEST(GPUSchedule, MatmulWithRegisterTiles) {
    const int M = 70, N = 45, K = 50;
    Buffer<float> A({K, M}, "A"), B({N, K}, "B");
    fill_random(A, -1, 1, 13);
    fill_random(B, -1, 1, 14);
    auto build = [&](bool gpu) {
        Var x("x"), y("y"), bx("bx"), by("by"), xi("xi"), yi("yi"), tx("tx"), ty("ty"), xr("xr"),
            yr("yr");
        VarOrRVar ko("ko", true), ki("ki", true);
        Func a("a"), b("b"), prod("prod"), out("out");
        RDom k(0, K, "k");
        a(x, y) = A(x, y);
        b(x, y) = B(x, y);
        prod(x, y) = 0.0f;
        prod(x, y) += a(k, y) * b(x, k);
        out(x, y) = prod(x, y);
        if (!gpu) return out;
        out.tile(x, y, bx, by, xi, yi, 32, 32).gpu_blocks(bx, by);
        out.tile(xi, yi, tx, ty, xr, yr, 4, 4).gpu_threads(tx, ty).unroll(xr).unroll(yr);
        prod.compute_at(out, bx).store_in(MemoryType::Register);
        prod.tile(x, y, tx, ty, xr, yr, 4, 4).gpu_threads(tx, ty).unroll(xr).unroll(yr);
        prod.update()
            .split(k, ko, ki, 8)
            .tile(x, y, tx, ty, xr, yr, 4, 4)
            .reorder(xr, yr, ki, tx, ty, ko)
            .gpu_threads(tx, ty)
            .unroll(xr)
            .unroll(yr);
        a.compute_at(prod, ko).gpu_threads(x, y);
        b.compute_at(prod, ko).gpu_threads(x, y);
        return out;
    };
    Buffer<float> host = build(false).realize({N, M})[0];
    Func gpu_out = build(true);
    Buffer<float> C = gpu_out.realize({N, M}, gpu_target)[0];
    for (int j = 0; j < M; j++) {
        for (int i = 0; i < N; i++) {
            ASSERT_EQ(C(i, j), host(i, j)) << i << "," << j;
            double want = 0;
            for (int kk = 0; kk < K; kk++)
                want += double(A(kk, j)) * B(i, kk);
            ASSERT_TRUE(close(C(i, j), want, 1e-4, 1e-4)) << i << "," << j;
        }
    }
    // prod lives in registers: the kernel's shared memory holds only the tiles of A and B.
    std::string loops = gpu_out.loop_nest(gpu_target);
    EXPECT_NE(loops.find("; 2048 bytes of shared memory (b 1024, a 1024)"), std::string::npos)
        << loops;
}

// Three kernels: the intermediates between them live in device memory.
TEST(GPUSchedule, MultiKernelPipeline) {
    const int W = 300;
    Buffer<float> in({W}, "in");
    fill_random(in, -3, 3, 6);
    Var x("x"), bx("bx"), tx("tx");
    Func f("f"), g("g"), h("h");
    f(x) = in(x)*3.0f;
    g(x) = f(x) + f(x + 1);
    h(x) = g(x) * g(x + 2);
    f.compute_root().gpu_tile(x, bx, tx, 64);
    g.compute_root().gpu_tile(x, bx, tx, 32);
    h.gpu_tile(x, bx, tx, 128);
    Buffer<float> out = h.realize({W - 3}, gpu_target);
    for (int i = 0; i < W - 3; i++) {
        double g0 = 3.0 * in(i) + 3.0 * in(i + 1), g2 = 3.0 * in(i + 2) + 3.0 * in(i + 3);
        ASSERT_TRUE(close(out(i), g0 * g2, 1e-5, 1e-5)) << i;
    }
}

// A stage computed inside the thread loops lives in each thread's registers.
TEST(GPUSchedule, StageInRegisters) {
    const int W = 77;
    Buffer<float> in({W + 4}, "in");
    fill_random(in, -1, 1, 7);
    Var x("x"), bx("bx"), tx("tx"), xi("xi");
    Func f("f"), g("g");
    f(x) = in(x)*2.0f;
    g(x) = f(x) + f(x + 1) + f(x + 2) + f(x + 3);
    g.split(x, bx, x, 32).split(x, tx, xi, 4).reorder(xi, tx, bx).gpu_blocks(bx).gpu_threads(tx);
    f.compute_at(g, tx).unroll(x);
    Buffer<float> out = g.realize({W}, gpu_target);
    for (int i = 0; i < W; i++) {
        double want = 2.0 * (double(in(i)) + in(i + 1) + in(i + 2) + in(i + 3));
        ASSERT_TRUE(close(out(i), want, 1e-5, 1e-5)) << i;
    }
}

// A device result read on the host, changed there, and used again by the next GPU run.
TEST(GPUSchedule, BuffersMoveBetweenHostAndDevice) {
    const int W = 50;
    Buffer<float> in({W}, "in");
    fill_random(in, 1, 2, 8);
    Var x("x"), bx("bx"), tx("tx");
    Func f("f");
    f(x) = in(x) + 1.0f;
    f.gpu_tile(x, bx, tx, 16);
    Buffer<float> out({W}, "out");
    f.realize(out, gpu_target);
    EXPECT_TRUE(out.device_dirty());
    EXPECT_FLOAT_EQ(out(3), in(3) + 1.0f); // copies back
    EXPECT_FALSE(out.device_dirty());
    in(3) = 100.0f; // the input changes on the host: the next run must see it
    f.realize(out, gpu_target);
    EXPECT_FLOAT_EQ(out(3), 101.0f);
}

// A Buffer that borrows the caller's memory: the caller writes it directly between GPU runs,
// and each run reads what is there (the device copy of borrowed memory is refreshed).
TEST(GPUSchedule, BorrowedMemoryIsReadAgainByEachGPURun) {
    const int W = 50;
    std::vector<float> data(W);
    Buffer<float> in(data.data(), {W}, "in");
    Var x("x"), bx("bx"), tx("tx");
    Func f("f");
    f(x) = in(x)*2.0f;
    f.gpu_tile(x, bx, tx, 16);
    for (int run = 0; run < 3; run++) {
        for (int i = 0; i < W; i++)
            data[size_t(i)] = float(100 * run + i); // through the caller's own pointer
        Buffer<float> out = f.realize({W}, gpu_target)[0];
        for (int i = 0; i < W; i++)
            ASSERT_EQ(out(i), 2.0f * float(100 * run + i)) << "run " << run << ", x = " << i;
    }
}

// Borrowed memory that a GPU pipeline writes holds the results when the run ends, so the
// caller may read and then write it directly: the next GPU run and the next host run both read
// what the caller wrote. An owning Buffer written on the GPU refuses set_host_dirty() until
// its data is back on the host, instead of letting a write through a kept pointer drop it.
TEST(GPUSchedule, BorrowedMemoryWrittenOnTheGPUIsTheCallersWhenTheRunEnds) {
    const int W = 70;
    Var x("x"), bx("bx"), tx("tx");
    Func h("h");
    h(x) = cast<float>(x) * 2.0f + 1.0f;
    h.gpu_tile(x, bx, tx, 32, TailStrategy::GuardWithIf);
    ImageParam in(Float(32), 1, "in");
    Func on_gpu("on_gpu"), on_host("on_host");
    on_gpu(x) = in(x) + 10.0f;
    on_gpu.gpu_tile(x, bx, tx, 32, TailStrategy::GuardWithIf);
    on_host(x) = in(x) + 100.0f;
    std::vector<float> mem(W, -1.0f);
    Buffer<float> b(mem.data(), {W}, "borrowed");
    h.realize(b, gpu_target);
    for (int i = 0; i < W; i++)
        ASSERT_EQ(mem[size_t(i)], 2.0f * i + 1) << i;
    for (int i = 0; i < W; i++)
        mem[size_t(i)] = 1000.0f + i;
    in.set(b);
    Buffer<float> g = on_gpu.realize({W}, gpu_target);
    Buffer<float> c = on_host.realize({W});
    for (int i = 0; i < W; i++) {
        ASSERT_EQ(g(i), 1010.0f + i) << i;
        ASSERT_EQ(c(i), 1100.0f + i) << i;
        ASSERT_EQ(mem[size_t(i)], 1000.0f + i) << i;
    }

    Buffer<float> owned({W}, "owned");
    float *kept = owned.data();
    h.realize(owned, gpu_target);
    kept[5] = 1005.0f;
    std::string msg = message_of<RuntimeError>([&] { owned.set_host_dirty(); });
    EXPECT_CONTAINS(msg, "set_host_dirty() on Buffer owned, whose device copy holds newer data");
    EXPECT_CONTAINS(msg, "Call copy_to_host()");
    owned.copy_to_host();
    kept[5] = 1005.0f;
    owned.set_host_dirty();
    in.set(owned);
    Buffer<float> g2 = on_gpu.realize({W}, gpu_target);
    EXPECT_EQ(g2(5), 1015.0f);
    EXPECT_EQ(g2(6), 2.0f * 6 + 11);
}

// Two views of one matrix, its left and right halves: a kernel's result copied back into one
// view writes that view's elements only, not the other half's that lie between its rows
// (which a host pipeline wrote meanwhile).
TEST(GPUSchedule, AViewCopiedBackWritesOnlyItsOwnElements) {
    const int W = 80, H = 13;
    Buffer<float> matrix({W, H}, "matrix");
    auto half = [&](int first, const std::string &name) {
        return Buffer<float>(&matrix(first, 0), {{0, W / 2, 1, 0}, {0, H, W, 0}}, name);
    };
    Buffer<float> left = half(0, "left"), right = half(W / 2, "right");
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    Func on_gpu("on_gpu"), on_host("on_host");
    on_gpu(x, y) = cast<float>(x + 1000 * y);
    on_gpu.gpu_tile(x, y, bx, by, tx, ty, 8, 4);
    on_host(x, y) = cast<float>(-x - 1000 * y);
    on_host.realize(right);           // the right half changes on the host
    on_gpu.realize(left, gpu_target); // borrowed memory: copied back as the run ends
    for (int j = 0; j < H; j++) {
        for (int i = 0; i < W / 2; i++) {
            ASSERT_EQ(matrix(i, j), float(i + 1000 * j)) << "left, " << i << ", " << j;
            ASSERT_EQ(matrix(W / 2 + i, j), float(-i - 1000 * j)) << "right, " << i << ", " << j;
        }
    }
}

// A view whose few elements lie gigabytes apart (two rows 2^28 elements apart) would need a
// device copy of the whole span: refused, naming the buffer, before anything is touched.
TEST(GPUSchedule, AViewSpreadOverGigabytesIsRefused) {
    // The span reserved, so that no other buffer (the output) lies inside it; only the first
    // row is memory.
    const size_t span = (size_t(1) << 30) + 4096;
    void *reserved = mmap(nullptr, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(reserved, MAP_FAILED);
    ASSERT_EQ(mprotect(reserved, 4096, PROT_READ | PROT_WRITE), 0);
    float *row = static_cast<float *>(reserved);
    for (int i = 0; i < 64; i++)
        row[i] = 1.0f;
    Buffer<float> spread(row, {{0, 64, 1, 0}, {0, 2, 1 << 28, 0}}, "spread");
    Var x("x"), y("y"), bx("bx"), tx("tx");
    Func f("f");
    f(x, y) = spread(x, 0) * 2.0f; // reads the first row only, but takes the buffer
    f.gpu_tile(x, bx, tx, 16);
    try {
        f.realize({64, 1}, gpu_target);
        FAIL() << "expected a RuntimeError";
    } catch (const RuntimeError &e) {
        EXPECT_NE(std::string(e.what()).find("Buffer spread: its 128 elements (512 bytes) lie "
                                             "spread over 1073742080 bytes of memory"),
                  std::string::npos)
            << e.what();
    }
    munmap(reserved, span);
}

// An intermediate only kernels use lives in device memory alone, and kernels index it with
// 32-bit flat indices: one of more than 2^31 - 1 elements is refused before it is allocated,
// as host code refuses its own, also where its element count leaves int64's range. The
// dataflow report refuses the same sizes.
TEST(GPUSchedule, AnIntermediateBeyond32BitIndicesIsRefused) {
    Param<int> rows("rows"), depth("depth");
    Var x("x"), y("y"), z("z"), bx("bx"), by("by"), tx("tx"), ty("ty");
    Func f("f"), out("out");
    f(x, y, z) = cast<float>(x + y + z);
    out(x, y) = f(x, y, 0) + f(x, y, depth - 1);
    f.compute_root().bound(y, 0, rows).bound(z, 0, depth).gpu_tile(x, y, bx, by, tx, ty, 32, 8);
    out.gpu_tile(x, y, bx, by, tx, ty, 32, 8);
    rows.set(8);
    depth.set(2);
    Buffer<float> small = out.realize({64, 8}, gpu_target);
    small.copy_to_host();
    EXPECT_EQ(small(63, 7), float(63 + 7) * 2 + 1);
    rows.set(1 << 20);
    depth.set(1 << 10); // 64 x 2^20 x 2^10: 2^36 elements
    EXPECT_CONTAINS(message_of<RuntimeError>([&] {
                        out.realize({64, 8}, gpu_target);
                    }),
                    "The storage of Func f would hold 68719476736 elements; pipelines address "
                    "at most 2^31 - 1 elements per Func");
    ReportArguments args;
    args.scalars["rows"] = 1 << 20;
    args.scalars["depth"] = 1 << 10;
    EXPECT_CONTAINS(message_of<CompileError>([&] {
                        out.report({64, 8}, gpu_target, args);
                    }),
                    "cannot use these sizes: The storage of Func f would hold 68719476736");
    // Extents whose product leaves int64's range: the count saturates instead of wrapping.
    rows.set(INT32_MAX);
    depth.set(INT32_MAX);
    EXPECT_CONTAINS(message_of<RuntimeError>([&] {
                        out.realize({64, 8}, gpu_target);
                    }),
                    "The storage of Func f would hold more than 2^63 - 1 elements");
}

// Host pipelines and GPU pipelines share Buffers: each sees the other's latest data without
// the caller copying. Element access is avoided between the runs (it would bring the data to
// the host itself and hide a pipeline that does not).
TEST(GPUSchedule, HostPipelinesAndKernelsSeeEachOthersData) {
    const int W = 40;
    Var x("x"), bx("bx"), tx("tx");
    Buffer<float> a({W}, "a"), mid({W}, "mid"), b({W}, "b");
    fill_random(a, 1, 2, 12);
    std::vector<float> a0(W);
    for (int i = 0; i < W; i++)
        a0[size_t(i)] = a(i);
    // A kernel writes mid (newer on the device); a host pipeline reads it.
    Func on_gpu("on_gpu");
    on_gpu(x) = a(x) * 2.0f;
    on_gpu.gpu_tile(x, bx, tx, 16);
    on_gpu.realize(mid, gpu_target);
    Func on_host("on_host");
    on_host(x) = mid(x) + 0.5f;
    on_host.realize(b);
    for (int i = 0; i < W; i++)
        ASSERT_EQ(b(i), a0[size_t(i)] * 2.0f + 0.5f) << "host read of a kernel's output, x = " << i;
    // A host pipeline overwrites a, which the kernel already copied to the device; the
    // kernel runs again and must read the new a.
    Func host_writes("host_writes");
    host_writes(x) = cast<float>(x) + 100.0f;
    host_writes.realize(a);
    on_gpu.realize(mid, gpu_target);
    mid.copy_to_host();
    for (int i = 0; i < W; i++)
        ASSERT_EQ(mid(i), (i + 100.0f) * 2.0f) << "kernel read after a host write, x = " << i;
    // A kernel writes mid, then a host pipeline overwrites it: the host's values stay.
    on_gpu.realize(mid, gpu_target);
    host_writes.realize(mid);
    for (int i = 0; i < W; i++)
        ASSERT_EQ(mid(i), i + 100.0f) << "host write after a kernel's, x = " << i;
    // One pipeline: a kernel computes one output, host code another that reads a buffer a
    // kernel of an earlier run left on the device.
    on_gpu.realize(mid, gpu_target);
    Func k("k"), h("h");
    k(x) = a(x) - 1.0f;
    k.gpu_tile(x, bx, tx, 8);
    h(x) = mid(x) * 3.0f;
    Realization r = Pipeline({k, h}).realize({W}, gpu_target);
    Buffer<float> got_k = r[0], got_h = r[1];
    got_k.copy_to_host();
    for (int i = 0; i < W; i++) {
        ASSERT_EQ(got_k(i), i + 99.0f) << i;
        ASSERT_EQ(got_h(i), (i + 100.0f) * 2.0f * 3.0f)
            << "host output in a GPU pipeline, x = " << i;
    }
}

// An intermediate that kernels and host code both use, as Halide allows: its data moves
// between host and device as a pipeline buffer's does. A GPU stage read by a GPU output and a
// host output (run twice, so the second run starts from the first's copies); host stages,
// one with an update, read by kernels and by host code; a GPU stage whose host consumer is
// computed row by row, inside a host loop.
TEST(GPUSchedule, IntermediatesSharedByKernelsAndHostCode) {
    const int W = 45, H = 13;
    Buffer<float> in({W, H}, "in");
    fill_random(in, -2, 2, 31);
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    auto g_of = [&](int i, int j) { return double(in(i, j)) * 2 + 1; };
    for (int run = 0; run < 2; run++) {
        Func g("g"), on_gpu("on_gpu"), on_host("on_host");
        g(x, y) = in(x, y) * 2.0f + 1.0f;
        on_gpu(x, y) = g(x, y) + 3.0f;
        on_host(x, y) = g(x, y) * g(x, y);
        g.compute_root().gpu_tile(x, y, bx, by, tx, ty, 16, 4);
        on_gpu.gpu_tile(x, y, bx, by, tx, ty, 8, 8);
        on_host.parallel(y).vectorize(x, 8, TailStrategy::GuardWithIf);
        Realization r = Pipeline({on_gpu, on_host}).realize({W, H}, gpu_target);
        Buffer<float> a = r[0], b = r[1];
        a.copy_to_host();
        for (int j = 0; j < H; j++) {
            for (int i = 0; i < W; i++) {
                ASSERT_TRUE(close(a(i, j), g_of(i, j) + 3, 1e-6, 1e-6)) << i << "," << j;
                ASSERT_TRUE(close(b(i, j), g_of(i, j) * g_of(i, j), 1e-6, 1e-6)) << i << "," << j;
            }
        }
    }
    {
        Func g("g"), h("h"), k1("k1"), k2("k2"), host("host");
        g(x, y) = in(x, y) - 0.5f;
        h(x, y) = g(x, y) * 2.0f;
        h(x, y) = h(x, y) + 1.0f;
        k1(x, y) = g(x, y) * 4.0f;
        k2(x, y) = h(x, y) + k1(x, y);
        host(x, y) = g(x, y) + h(x, y);
        g.compute_root();
        h.compute_root();
        k1.compute_root().gpu_tile(x, y, bx, by, tx, ty, 16, 4);
        k2.gpu_tile(x, y, bx, by, tx, ty, 16, 4);
        Realization r = Pipeline({k2, host}).realize({W, H}, gpu_target);
        Buffer<float> a = r[0], b = r[1];
        a.copy_to_host();
        for (int j = 0; j < H; j++) {
            for (int i = 0; i < W; i++) {
                const double gv = double(in(i, j)) - 0.5, hv = gv * 2 + 1;
                ASSERT_TRUE(close(a(i, j), hv + gv * 4, 1e-6, 1e-6)) << i << "," << j;
                ASSERT_TRUE(close(b(i, j), gv + hv, 1e-6, 1e-6)) << i << "," << j;
            }
        }
    }
    {
        Func g("g"), rows("rows"), out("out");
        g(x, y) = in(x, y) * 3.0f;
        rows(x, y) = g(x, y) + g(x, (y + 1) % H);
        out(x, y) = rows(x, y) * 0.5f;
        g.compute_root().gpu_tile(x, y, bx, by, tx, ty, 8, 8);
        rows.compute_at(out, y);
        Buffer<float> got = out.realize({W, H}, gpu_target);
        for (int j = 0; j < H; j++)
            for (int i = 0; i < W; i++)
                ASSERT_TRUE(close(got(i, j),
                                  (double(in(i, j)) * 3 + double(in(i, (j + 1) % H)) * 3) * 0.5,
                                  1e-6, 1e-6))
                    << i << "," << j;
    }
}

// Layernorm with one block per row, the GPU benchmark's schedule (apps/common/LayerNormGPU.h):
// 256 threads each sum 4 elements of the row into shared memory (rfactor), one thread adds
// the partial sums, then every thread normalizes 4 elements. The time of this first run is
// printed: on the simulator it is most of the test's time (the suite's budget is a few
// seconds); on a GPU it is mostly the copies and the kernel's loading, which bench_gpu leaves out.
TEST(GPUSchedule, LayerNormOneBlockPerRow) {
    const int N = 1024, R = 256, T = 256;
    Buffer<float> in({N, R}, "in");
    fill_random(in, -2, 3, 9);
    Func out = aicf_apps::layernorm_one_block_per_row(in, N, T, "out");
    Pipeline p(out);
    p.compile_jit(gpu_target);
    auto start = std::chrono::steady_clock::now();
    Buffer<float> result = p.realize({N, R}, gpu_target)[0];
    result.copy_to_host();
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::cout << "layernorm " << R << " x " << N << " on "
              << (getenv("AICF_DEVICE") ? getenv("AICF_DEVICE") : "sim")
              << ", one block per row, first run (the copies and the kernel's loading included): "
              << ms << " ms\n";
    for (int j = 0; j < R; j++) {
        const aicf_test::RowMoments r = aicf_test::row_moments(in, j, N);
        const double m = r.mean, v = r.squares / N;
        for (int i = 0; i < N; i++) {
            double want = (in(i, j) - m) / std::sqrt(v + 1e-5);
            ASSERT_TRUE(close(result(i, j), want, 1e-4, 1e-4)) << i << "," << j;
        }
    }
}

// A tile in shared memory read with its halves swapped through a select: each branch stays
// in the block's 32 points (the select's condition bounds each), so the input of exactly
// the output's size suffices.
TEST(GPUSchedule, ASelectBetweenTwoHalvesOfATileStaysInTheTile) {
    const int N = 128;
    Buffer<float> in({N}, "in");
    fill_random(in, -1, 1, 31);
    Var x("x"), bx("bx"), tx("tx");
    Func a("a"), out("out");
    a(x) = in(x)*2.0f;
    Expr base = (x / 32) * 32, lx = x % 32;
    out(x) = a(base + select(lx < 16, lx + 16, lx - 16)) + 1.0f;
    out.bound(x, 0, N).gpu_tile(x, bx, tx, 32);
    a.compute_at(out, bx).store_in(MemoryType::GPUShared).gpu_threads(x);
    Buffer<float> result = out.realize({N}, gpu_target);
    result.copy_to_host();
    for (int i = 0; i < N; i++) {
        const int l = i % 32, from = i / 32 * 32 + (l < 16 ? l + 16 : l - 16);
        ASSERT_EQ(result(i), in(from)*2.0f + 1.0f) << i;
    }
}

// The same schedule at widths the threads do not divide, and at one below the threads: the
// last round of each thread's sum is guarded, and the mean and variance are over all N.
TEST(GPUSchedule, LayerNormOneBlockPerRowAtOtherWidths) {
    for (const auto &[N, T] : std::vector<std::pair<int, int>>{{100, 32}, {257, 64}, {33, 64}}) {
        const int R = 3;
        Buffer<float> in({N, R}, "in");
        fill_random(in, -2, 3, 10 + N);
        Buffer<float> result =
            aicf_apps::layernorm_one_block_per_row(in, N, T, "out").realize({N, R}, gpu_target)[0];
        result.copy_to_host();
        for (int j = 0; j < R; j++) {
            const aicf_test::RowMoments r = aicf_test::row_moments(in, j, N);
            const double m = r.mean, v = r.squares / N;
            for (int i = 0; i < N; i++)
                ASSERT_TRUE(close(result(i, j), (in(i, j) - m) / std::sqrt(v + 1e-5), 1e-4, 1e-4))
                    << "N " << N << ", T " << T << ": " << i << "," << j;
        }
    }
}

// The GPU benchmark's matmul (apps/common/MatmulGPU.h): 128 x 128 per block, 8 x 8 per thread
// in registers, vectorized by 4, at sizes the tiles do not divide (the last tiles shift
// inwards; the last step of k stages 3 rows of the 8 with as many threads as a whole step).
TEST(GPUSchedule, RegisterTiledMatmul) {
    // K = 129: the last step stages one row of A, with threads to spare in its round.
    for (const int K : {203, 129}) {
        const int N = 200, M = 150;
        Buffer<float> A({K, M}, "A"), B({N, K}, "B");
        fill_random(A, -1, 1, 10);
        fill_random(B, -1, 1, 11);
        Func out = aicf_apps::matmul_register_tiled(A, B, K, "out");
        Buffer<float> C = out.realize({N, M}, gpu_target);
        C.copy_to_host();
        for (int j = 0; j < M; j++)
            for (int i = 0; i < N; i++) {
                double want = 0;
                for (int r = 0; r < K; r++)
                    want += double(A(r, j)) * B(i, r);
                ASSERT_TRUE(close(C(i, j), want, 1e-4, 1e-4))
                    << i << "," << j << ": " << C(i, j) << " vs " << want;
            }
    }
}

// A stage in shared memory, with an update, staged at each step of a reduction by threads
// over its two dimensions fused: the last step's region is shorter (K = 21, steps of 8), so
// the fused loop runs over the step's whole 8 rows with the 3 past the end idle. The fused
// dimension inner (x, which varies) and outer (y, which does not), in rounds and not.
TEST(GPUSchedule, FusedStagingOverAShortLastStep) {
    const int K = 21, N = 45, M = 23;
    Buffer<float> A({K, M}, "A"), B({N, K}, "B");
    fill_random(A, -1, 1, 14);
    fill_random(B, -1, 1, 15);
    for (const bool in_rounds : {false, true}) {
        Var x("x"), y("y"), t("t"), hi("hi"), lo("lo"), rounds("rounds");
        Func a("a");
        a(x, y) = A(x, y);
        a(x, y) += A(x, y) * A(x, y);
        Func out = aicf_test::staged_product(a, B, K);
        for (Stage s : {Stage(a.function(), 0), a.update()}) {
            s.fuse(x, y, t);
            if (in_rounds) {
                s.split(t, rounds, t, 32, TailStrategy::GuardWithIf)
                    .split(t, hi, lo, 16)
                    .gpu_threads(lo, hi);
            } else {
                s.gpu_threads(t);
            }
        }
        Buffer<float> C = out.realize({N, M}, gpu_target);
        C.copy_to_host();
        for (int j = 0; j < M; j++)
            for (int i = 0; i < N; i++) {
                double want = 0;
                for (int r = 0; r < K; r++) {
                    const double av = A(r, j);
                    want += (av + av * av) * B(i, r);
                }
                ASSERT_TRUE(close(C(i, j), want, 1e-4, 1e-4))
                    << (in_rounds ? "in rounds " : "") << i << "," << j << ": " << C(i, j) << " vs "
                    << want;
            }
    }
}

// A stage whose region bound() fixes, its two dimensions fused onto the 32 lanes of a warp
// (the fused extent a constant from the bounds), summed by a reduction of each block's rows.
TEST(GPUSchedule, FusedLanesOverBoundedDimensions) {
    const int N = 6;
    Buffer<float> A({4, 8, N}, "A");
    fill_random(A, -1, 1, 16);
    Var x("x"), c("c"), y("y"), yo("yo"), yi("yi"), f("f");
    RDom r(0, 4, 0, 8, "r");
    Func s("s"), out("out");
    s(x, c, y) = A(x, c, y) * 2.0f;
    out(y) = 0.0f;
    out(y) += s(r.x, r.y, y);
    out.split(y, yo, yi, 4, TailStrategy::GuardWithIf).gpu_blocks(yo).gpu_threads(yi);
    out.update().split(y, yo, yi, 4, TailStrategy::GuardWithIf).gpu_blocks(yo).gpu_threads(yi);
    s.compute_at(out, yo).bound(x, 0, 4).bound(c, 0, 8);
    s.fuse(x, c, f).gpu_lanes(f).gpu_threads(y);
    Buffer<float> got = out.realize({N}, gpu_target);
    got.copy_to_host();
    for (int j = 0; j < N; j++) {
        double want = 0;
        for (int cc = 0; cc < 8; cc++)
            for (int i = 0; i < 4; i++)
                want += 2.0 * double(A(i, cc, j));
        ASSERT_TRUE(close(got(j), want, 1e-5, 1e-5)) << j << ": " << got(j) << " vs " << want;
    }
}

// An accumulator in registers whose rows are split as its consumer's, GuardWithIf on both:
// the outer loop of its split runs once per block (a tile covers the block's rows, its count
// not a constant where the last block's rows are fewer), so the stages that write and read it
// name the same point of each thread. 37 rows: the last block has 5.
TEST(GPUSchedule, RegisterAccumulatorSplitAsItsGuardedConsumer) {
    const int D = 32, N = 37, M = 19;
    Buffer<float> A({M, N}, "A"), B({D, M}, "B");
    fill_random(A, -1, 1, 12);
    fill_random(B, -1, 1, 13);
    Var c("c"), i("i"), io("io"), ii("ii"), si("si"), ti("ti");
    RDom rk(0, M, "rk");
    Func acc("acc"), O("O");
    acc(c, i) = 0.0f;
    acc(c, i) += A(rk, i) * B(c, rk);
    O(c, i) = acc(c, i) * 2.0f;
    O.bound(c, 0, D)
        .split(i, io, ii, 8, TailStrategy::GuardWithIf)
        .gpu_blocks(io)
        .gpu_threads(c, ii);
    acc.compute_at(O, io)
        .store_in(MemoryType::Register)
        .split(i, si, ti, 8, TailStrategy::GuardWithIf)
        .gpu_threads(c, ti);
    acc.update().split(i, si, ti, 8, TailStrategy::GuardWithIf).gpu_threads(c, ti);
    Buffer<float> out = O.realize({D, N}, gpu_target);
    out.copy_to_host();
    for (int y = 0; y < N; y++)
        for (int x = 0; x < D; x++) {
            double want = 0;
            for (int k = 0; k < M; k++)
                want += double(A(k, y)) * B(x, k);
            ASSERT_TRUE(close(out(x, y), 2 * want, 1e-4, 1e-4)) << x << "," << y;
        }
}

// A Func in registers whose rows run as a loop of the whole block, with only its columns on
// threads, read by threads along both: every thread computes the rows it holds (the nest of
// a Func in registers runs on every thread, not on the first along y alone). Each tail.
TEST(GPUSchedule, RegisterRowsComputedByEveryThreadThatReadsThem) {
    const int W = 32, H = 37;
    Buffer<int> in({W, 40}, "in"); // 40 rows: what RoundUp's last tile reads
    for (int y = 0; y < 40; y++)
        for (int x = 0; x < W; x++)
            in(x, y) = (x * 7 + y * 13) % 101 - 50;
    for (TailStrategy t :
         {TailStrategy::GuardWithIf, TailStrategy::ShiftInwards, TailStrategy::RoundUp}) {
        Var x("x"), i("i"), io("io"), ii("ii");
        Func f("f"), O("O");
        f(x, i) = in(x, i) * 3 + i;
        O(x, i) = f(x, i) + 1;
        O.bound(x, 0, W).split(i, io, ii, 8, t).gpu_blocks(io).gpu_threads(x, ii);
        // (Its rows unrolled: registers are not indexed by a loop's variable.)
        f.compute_at(O, io)
            .store_in(MemoryType::Register)
            .gpu_threads(x)
            .bound_extent(i, 8)
            .unroll(i);
        if (t == TailStrategy::RoundUp) O.bound(i, 0, 40);
        const int rows = t == TailStrategy::RoundUp ? 40 : H;
        Buffer<int> out = O.realize({W, rows}, gpu_target);
        out.copy_to_host();
        for (int y = 0; y < rows; y++)
            for (int c = 0; c < W; c++)
                ASSERT_EQ(out(c, y), in(c, y) * 3 + y + 1) << c << ", " << y;
    }
}

} // namespace

// A producer read through x / 2 (an upsampling), staged per block in shared memory: its
// region starts at either parity, so its extent is 17 or 18 (not one expression); the
// constant bound sizes the threads and the storage. Checked at sizes the tile does not
// divide and at an odd origin, against a plain loop.
TEST(GPUSchedule, UpsampledProducerStagedPerBlock) {
    Buffer<float> in({64, 40}, "in");
    fill_random(in, -4.0f, 4.0f, 31);
    // The default tail shifts the last tiles inwards; a guarded one ends the region at the
    // output's end, min(start + 31, end) / 2, which the simplifier keeps apart from the
    // start, written b * 16 + m / 2.
    for (TailStrategy tail : {TailStrategy::Auto, TailStrategy::GuardWithIf}) {
        Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
        Func f("f"), up("up");
        f(x, y) = in(x, y) * 2.0f;
        up(x, y) = f(x / 2, y / 2) + f(x / 2 + 1, y / 2);
        up.gpu_tile(x, y, bx, by, tx, ty, 32, 8, tail);
        f.compute_at(up, bx).store_in(MemoryType::GPUShared).gpu_threads(x, y);
        for (int origin : {0, 3}) {
            Buffer<float> out({100, 70}, "out");
            out.set_min({origin, origin});
            up.realize(out, gpu_target);
            out.copy_to_host();
            for (int j = origin; j < origin + 70; j++)
                for (int i = origin; i < origin + 100; i++)
                    ASSERT_EQ(out(i, j), in(i / 2, j / 2) * 2.0f + in(i / 2 + 1, j / 2) * 2.0f)
                        << i << ", " << j << ", tail " << int(tail);
        }
    }
}

// A stage per block in shared memory with its region rounded out to multiples of 8
// (align_bounds), under guarded tiles: the region's end is min(start + 16, end) rounded up,
// apart from its start rounded down, and still bounded by a constant (24 points), at output
// origins that are and are not multiples of 8.
TEST(GPUSchedule, AlignedRegionOfASharedStageUnderGuardedTails) {
    const int W = 37, H = 23;
    for (int origin : {0, 5}) {
        // The rounded regions reach up to 7 points before the output and 23 past it.
        Buffer<float> in({W + 40, H}, "in");
        in.set_min({origin - 8, origin});
        fill_random(in, -2, 2, 41);
        Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
        Func g("g"), f("f");
        g(x, y) = in(x, y) + 0.5f;
        f(x, y) = g(x, y) * g(x + 1, y) + 1.0f;
        f.gpu_tile(x, y, bx, by, tx, ty, 16, 4, TailStrategy::GuardWithIf);
        g.compute_at(f, bx).align_bounds(x, 8).store_in(MemoryType::GPUShared).gpu_threads(x, y);
        Buffer<float> out({W, H}, "out");
        out.set_min({origin, origin});
        f.realize(out, gpu_target);
        out.copy_to_host();
        for (int j = origin; j < origin + H; j++)
            for (int i = origin; i < origin + W; i++)
                ASSERT_TRUE(close(out(i, j),
                                  (double(in(i, j)) + 0.5) * (double(in(i + 1, j)) + 0.5) + 1.0,
                                  1e-5, 1e-5))
                    << i << ", " << j << ", origin " << origin;
    }
}

// A stage in shared memory read by the block's output and by a per-thread stage, under
// guarded tails: the block's region runs from the earlier of the two reads' clamped starts to
// the later end (at most 7 rows: min(t + 3, e) + 1 - min(t - 2, min(t, e) - 1) + 1).
TEST(GPUSchedule, SharedStageReadByTheOutputAndAPerThreadStageUnderGuardedTails) {
    const int W = 13, H = 9;
    Buffer<float> in({W + 3, H + 4}, "in");
    in.set_min({-1, -2});
    fill_random(in, -2, 2, 43);
    Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
    Func f("f"), g("g"), out("out");
    f(x, y) = in(x, y) * 2.0f;
    g(x, y) = f(x, y - 1) + f(x, y + 1);
    out(x, y) = g(x, y) * f(x + 1, y - 2);
    out.gpu_tile(x, y, xo, yo, xi, yi, 4, 4, TailStrategy::GuardWithIf);
    f.compute_at(out, xo).gpu_threads(x, y);
    g.compute_at(out, xi);
    Buffer<float> got = out.realize({W, H}, gpu_target)[0];
    got.copy_to_host();
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++) {
            const double want = (2.0 * in(i, j - 1) + 2.0 * in(i, j + 1)) * 2.0 * in(i + 1, j - 2);
            ASSERT_TRUE(close(got(i, j), want, 1e-5, 1e-5)) << i << ", " << j;
        }
}

// The same for a pointwise consumer under tiles shifted inwards: a block's region is 8 points
// from a start that is no multiple of 4, rounded out to multiples of 4 (at most 12 points; its
// size, ((t + 3) / 4) * 4 - (t / 4) * 4 + 8, has that bound once t cancels).
TEST(GPUSchedule, AlignedRegionOfASharedStageOfAPointwiseConsumer) {
    // (The rounded regions reach up to 3 points before the output and 3 past it.)
    Buffer<int> in({50, 16}, "in");
    in.set_min({-4, 0});
    fill_random(in, -1000, 1000, 43);
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    Func f("f"), g("g");
    f(x, y) = in(x, y) * 2;
    g(x, y) = f(x, y) + 1;
    g.gpu_tile(x, y, bx, by, tx, ty, 8, 4);
    f.compute_at(g, bx).gpu_threads(x, y).align_bounds(x, 4);
    Buffer<int> out({42, 16}, "out");
    out.set_min({-1, 0});
    g.realize(out, gpu_target);
    out.copy_to_host();
    for (int j = 0; j < 16; j++)
        for (int i = -1; i < 41; i++)
            ASSERT_EQ(out(i, j), in(i, j) * 2 + 1) << i << ", " << j;
}

// A producer read through a division by a negative constant (x / -2 is -(x / 2), Euclidean),
// staged per block in shared memory: its region has a constant size bound too. At a
// negative output origin, against a plain loop.
TEST(GPUSchedule, ProducerReadThroughANegativeDivisor) {
    Buffer<int> in({200, 20}, "in");
    in.set_min({-100, -5});
    fill_random(in, -1000, 1000, 32);
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    Func f("f"), out("out");
    f(x, y) = in(x, y) * 7 + y;
    out(x, y) = f(x / -2, y);
    out.gpu_tile(x, y, bx, by, tx, ty, 16, 4);
    f.compute_at(out, bx).store_in(MemoryType::GPUShared).gpu_threads(x, y);
    Buffer<int> result({45, 5}, "result");
    result.set_min({-20, 2});
    out.realize(result, gpu_target);
    result.copy_to_host();
    auto euclid = [](int a, int b) {
        int q = a / b;
        return a % b < 0 ? (b > 0 ? q - 1 : q + 1) : q;
    };
    for (int j = 2; j < 7; j++)
        for (int i = -20; i < 25; i++)
            ASSERT_EQ(result(i, j), in(euclid(i, -2), j) * 7 + j) << i << ", " << j;
}

// An update whose three pure dimensions are fused into one loop and split with GuardWithIf
// over GPU blocks and threads, reading a converted 16-bit input computed at the root in the
// same fused tiles. Bounds of the fused parts lost a clamp (the simplifier dropped it knowing
// an extent positive, where the region's analysis did not), and the input was refused as read
// from -127.
TEST(GPUSchedule, FusedDimensionsOfAnUpdateInGuardedTiles) {
    const int D = 8, S = 16, H = 2;
    Buffer<float16_t> v({D, S, H}, "v");
    fill_random(v, -2.0f, 2.0f, 33);
    Var d("d"), s("s"), h("h"), ds("ds"), dsh("dsh"), bx("bx"), tx("tx");
    RDom rt(0, S, "rt");
    Func converted("converted"), f("f"), out("out");
    converted(d, s, h) = cast<float>(v(d, s, h));
    f(d, s, h) = 0.0f;
    f(d, s, h) += converted(d, rt, h) * cast<float>(s + 1);
    out(d, s, h) = f(d, s, h) * 2.0f;
    auto fused_tiles = [&](auto &&st) {
        st.fuse(d, s, ds).fuse(ds, h, dsh).gpu_tile(dsh, bx, tx, 256, TailStrategy::GuardWithIf);
    };
    converted.compute_root();
    fused_tiles(converted);
    f.compute_root();
    fused_tiles(f);
    fused_tiles(f.update());
    fused_tiles(out);
    Buffer<float> result = out.realize({D, 5, H}, gpu_target)[0];
    result.copy_to_host();
    for (int k = 0; k < H; k++)
        for (int j = 0; j < 5; j++)
            for (int i = 0; i < D; i++) {
                double sum = 0;
                for (int r = 0; r < S; r++)
                    sum += double(float(v(i, r, k))) * (j + 1);
                ASSERT_TRUE(aicf_test::close(result(i, j, k), 2 * sum, 1e-5, 1e-5))
                    << i << ", " << j << ", " << k << ": " << result(i, j, k) << " vs " << 2 * sum;
            }
}

// Operands padded with zeros, each computed at the root over its points fused into one loop
// and split into blocks of 256 threads: the outer coordinate is the quotient by the inner
// extent, which the simplifier knows is positive (and drops the clamp of the quotient) and
// bounds inference must know too. It asked for B's rows from -511. Against a plain loop.
TEST(GPUSchedule, FusedLoopsOfPaddedOperands) {
    const int N = 8, M = 16, K = 40;
    Buffer<float> A({K, M}, "A"), B({N, K}, "B");
    aicf_test::fill_random(A, -1, 1, 61);
    aicf_test::fill_random(B, -1, 1, 62);
    Var x("x"), y("y"), xy("xy"), bx("bx"), tx("tx");
    Func a("a"), b("b"), prod("prod"), out("out");
    a(x, y) = select(x < K, A(min(x, K - 1), y), 0.0f);
    b(x, y) = select(y < K, B(x, min(y, K - 1)), 0.0f);
    RDom k(0, 32, 0, 2, "k");
    prod(x, y) = 0.0f;
    prod(x, y) += a(k.y * 32 + k.x, y) * b(x, k.y * 32 + k.x);
    out(x, y) = prod(x, y);
    for (Func f : {a, b, prod})
        f.compute_root();
    for (Func f : {a, b, prod, out})
        f.fuse(x, y, xy).gpu_tile(xy, bx, tx, 256, TailStrategy::GuardWithIf);
    prod.update().fuse(x, y, xy).gpu_tile(xy, bx, tx, 256, TailStrategy::GuardWithIf);
    Buffer<float> result = out.realize({N, M}, gpu_target);
    result.copy_to_host();
    for (int j = 0; j < M; j++)
        for (int i = 0; i < N; i++) {
            double want = 0;
            for (int q = 0; q < K; q++)
                want += double(A(q, j)) * B(i, q);
            ASSERT_TRUE(aicf_test::close(result(i, j), want, 1e-5, 1e-5)) << i << ", " << j;
        }
}

// A producer per thread read at x / 2 and (x - 3) / 2, and at y / 2 and y / 2 + 1: at most
// 3 x 2 points per thread, whatever the thread, though the region moves with the thread by
// quotients. Its registers have that constant size (the difference of two quotients of one
// value is bounded); it was refused as not a constant. Exact integers against plain loops,
// with Euclidean division, at sizes that are not multiples of the tile.
TEST(GPUSchedule, PerThreadProducerReadAtQuotientsHasAConstantSize) {
    for (auto [W, H] : {std::pair{37, 23}, {1, 1}, {5, 9}}) {
        SCOPED_TRACE(std::to_string(W) + " x " + std::to_string(H));
        Buffer<int> in({W + 2, H + 2}, "in");
        for (int j = 0; j < H + 2; j++)
            for (int i = 0; i < W + 2; i++)
                in(i, j) = (i * 37 + j * 101) % 201 - 100;
        Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
        Func f("f"), g("g");
        f(x, y) = in(clamp(x, 0, W + 1), clamp(y, 0, H + 1)) * 3 + x;
        g(x, y) = f(x / 2, y / 2) - f((x - 3) / 2, y / 2 + 1) * 2;
        g.gpu_tile(x, y, bx, by, tx, ty, 8, 4, TailStrategy::GuardWithIf);
        // Unrolled (the varying extent under its constant bound, each copy guarded), so that
        // the registers are indexed by constants.
        f.compute_at(g, tx).unroll(x).unroll(y);
        Buffer<int> result = g.realize({W, H}, gpu_target);
        result.copy_to_host();
        auto ediv = [](int a) { return a >= 0 ? a / 2 : -((1 - a) / 2); };
        auto F = [&](int a, int b) {
            return in(std::clamp(a, 0, W + 1), std::clamp(b, 0, H + 1)) * 3 + a;
        };
        for (int j = 0; j < H; j++)
            for (int i = 0; i < W; i++)
                ASSERT_EQ(result(i, j), F(ediv(i), ediv(j)) - F(ediv(i - 3), ediv(j) + 1) * 2)
                    << i << ", " << j;
    }
}

// A producer read at a quotient of a quotient, ((x - 3) / 2) / 3, and at x / 6 + 1, by a thread
// that computes 4 points: the simplifier keeps the nested quotient beside the other terms of
// x, so that the size of the region the thread needs (at most 3 points) shows only once the
// quotients are merged (x / 6) and the clamped windows are paired.
TEST(GPUSchedule, PerThreadProducerReadAtNestedQuotients) {
    for (int W : {301, 1, 7}) {
        SCOPED_TRACE(W);
        const int N = W / 6 + 2;
        Buffer<int> in({N + 1}, "in");
        in.set_min({-1});
        for (int i = -1; i < N; i++)
            in(i) = (i * 53 + 11) % 97 - 48;
        Var x("x"), bx("bx"), tx("tx"), xi("xi"), xv("xv");
        Func f("f"), g("g");
        f(x) = in(x)*5 - x;
        g(x) = f(((x - 3) / 2) / 3) + f(x / 6 + 1) * 2;
        g.split(x, bx, xi, 64, TailStrategy::GuardWithIf).split(xi, tx, xv, 4);
        g.gpu_blocks(bx).gpu_threads(tx).unroll(xv);
        f.compute_at(g, tx).unroll(x);
        Buffer<int> result = g.realize({W}, gpu_target);
        result.copy_to_host();
        auto floor_div = [](int a, int b) { return a >= 0 ? a / b : -((b - 1 - a) / b); };
        auto F = [&](int a) { return in(a)*5 - a; };
        for (int i = 0; i < W; i++)
            ASSERT_EQ(result(i), F(floor_div(floor_div(i - 3, 2), 3)) + F(i / 6 + 1) * 2) << i;
    }
}
