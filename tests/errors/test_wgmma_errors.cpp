// Mistakes in schedules that run on Hopper's warpgroup tensor cores (gpu_wgmma) and in the
// core-matrix layout they read (core_matrix_storage) raise CompileError naming the Func, the
// loops and what would be valid; the schedule they start from runs, checked against a plain
// double-precision loop.

#include "ErrorMessage.h"
#include "GemmGPU.h"
#include "KernelRunner.h"
#include "Reference.h"
#include "dsl/aicf.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

using namespace aicf;
using aicf_test::fill_random;
using aicf_test::message_of;

namespace {

const Target hopper("host-cuda-sm_90a");

struct WgmmaSchedule {
    Type input = BFloat(16);
    int rows = 64;                // the extent of the instruction's m loop
    bool a_in_cores = true;       // a stored with core_matrix_storage
    bool a_in_shared = true;      // a stored in GPU shared memory (else in registers)
    bool a_padded = false;        // align_storage on a as well
    bool also_gpu_mma = false;    // the update also runs gpu_mma
    bool a_transposed_in = false; // a read as a(m, k): k along its rows' index
};

// out = A * B (A: K x M, B: N x K, both 64 x 64 here) through gpu_wgmma: one block of one
// warpgroup, 64 x 64 tiles, steps of 16 along k staged in core matrices.
Func wgmma_product(const WgmmaSchedule &s, const Buffer<> &A, const Buffer<> &B) {
    const int K = 64;
    Var x("x"), y("y"), bx("bx"), by("by"), tz("tz"), ty("ty"), tx("tx"), wg("wg"), ym("ym"),
        xo("xo"), xv("xv"), t("t");
    RVar kk("kk"), ki("ki");
    RDom k(0, 16, 0, K / 16, "k");
    Func a("a"), b("b"), prod("prod"), out("out");
    if (s.a_transposed_in)
        a(y, x) = A(x, y);
    else
        a(x, y) = A(x, y);
    b(x, y) = B(x, y);
    const Expr kat = k.y * 16 + k.x;
    prod(x, y) = 0.0f;
    const Expr a_read = s.a_transposed_in ? a(y, kat) : a(kat, y);
    prod(x, y) += cast<float>(a_read) * cast<float>(b(x, kat));
    out(x, y) = prod(x, y);
    out.tile(x, y, bx, by, x, y, 64, 64).gpu_blocks(bx, by);
    aicf_apps::wgmma_accumulator_layout(Stage(out.function(), 0), x, y);
    prod.compute_at(out, bx).store_in(MemoryType::Register);
    aicf_apps::wgmma_accumulator_layout(Stage(prod.function(), 0), x, y);
    Stage update = prod.update();
    update.split(y, wg, ym, s.rows)
        .split(k.x, kk, ki, 16)
        .reorder(x, ym, ki, kk, wg, k.y)
        .gpu_threads(wg)
        .gpu_wgmma(x, ym, ki);
    if (s.also_gpu_mma) update.gpu_mma(x, ym, ki);
    // Each staged tile (16 x 64 or 64 x 16) is 128 pieces of 16 bytes: one per thread.
    for (Func f : {a, b}) {
        const Var inner = f.args()[0], outer = f.args()[1];
        f.compute_at(prod, k.y)
            .store_in(f.name() == "a" && !s.a_in_shared ? MemoryType::Register
                                                        : MemoryType::GPUShared)
            .split(inner, xo, xv, 8)
            .vectorize(xv)
            .fuse(xo, outer, t)
            .split(t, tz, t, 32)
            .split(t, ty, tx, 4)
            .gpu_threads(tx, ty, tz);
        if (f.name() == "b" || s.a_in_cores) f.core_matrix_storage();
    }
    if (s.a_padded) a.align_storage(a.args()[0], 16);
    return out;
}

// The schedule's error, or "" when it compiles and its result is right.
std::string wgmma_error(const WgmmaSchedule &s, const Target &target = hopper) {
    Buffer<> A(s.input, {64, 64}, "A"), B(s.input, {64, 64}, "B");
    if (s.input == BFloat(16)) {
        fill_random(Buffer<bfloat16_t>(A), -1, 1, 3);
        fill_random(Buffer<bfloat16_t>(B), -1, 1, 4);
    }
    Buffer<float> C({64, 64}, "C");
    try {
        Func f = wgmma_product(s, A, B);
        // Where the device cannot run it (a GPU other than sm_90), compiled only.
        if (!aicf_test::device_runs(target)) {
            (void)f.ptx(target);
            return "";
        }
        f.realize(C, target);
    } catch (const CompileError &e) {
        return e.what();
    }
    C.copy_to_host();
    EXPECT_EQ(s.input, BFloat(16)) << "compiled, but only bfloat16 inputs are checked";
    for (int j = 0; j < 64; j++) {
        for (int i = 0; i < 64; i++) {
            double want = 0;
            for (int k = 0; k < 64; k++)
                want += double(float(Buffer<bfloat16_t>(A)(k, j))) *
                        double(float(Buffer<bfloat16_t>(B)(i, k)));
            EXPECT_NEAR(C(i, j), want, 1e-4 * (1 + std::abs(want))) << i << ", " << j;
        }
    }
    return "";
}

} // namespace

// The schedule the errors below change runs, against a plain loop.
TEST(WgmmaErrors, TheScheduleRuns) {
    EXPECT_EQ(wgmma_error({}), "");
}

TEST(WgmmaErrors, NeedsHopper) {
    const std::string msg = wgmma_error({}, Target("host-cuda-sm_90"));
    EXPECT_CONTAINS(msg, "prod.update(0) runs gpu_wgmma(x, ym, ki) on Hopper's warpgroup tensor "
                         "cores (wgmma), which need the target cuda-sm_90a");
    EXPECT_CONTAINS(msg, "or use gpu_mma (sm_80 and later)");
}

TEST(WgmmaErrors, TheInstructionsShape) {
    WgmmaSchedule s;
    s.rows = 32;
    EXPECT_CONTAINS(wgmma_error(s), "wgmma.mma_async m64n64k16, whose m (rows) loop ym must have "
                                    "extent 64, but it has 32. Split it by 64.");
    s = {};
    s.input = Float(32);
    EXPECT_CONTAINS(wgmma_error(s), "multiplies a float32 by a float32: it must be prod(.., n, .., "
                                    "m, ..) = prod(same point) + a(m, k) * b(k, n), with a and b "
                                    "both bfloat16 or float16");
    s = {};
    s.also_gpu_mma = true;
    EXPECT_CONTAINS(wgmma_error(s), "runs both gpu_mma and gpu_wgmma");
}

TEST(WgmmaErrors, OperandsInCoreMatrices) {
    WgmmaSchedule s;
    s.a_in_cores = false;
    EXPECT_CONTAINS(wgmma_error(s), "whose operand a is a(");
    // In terms of the stage's thread loop wg, not of the instruction's loop over warps.
    EXPECT_EQ(wgmma_error(s).find("wgmma_warp"), std::string::npos) << wgmma_error(s);
    EXPECT_CONTAINS(wgmma_error(s), "Func a must be stored in shared memory in core matrices, the "
                                    "layout wgmma reads: give it "
                                    "store_in(MemoryType::GPUShared) and core_matrix_storage().");
    s = {};
    s.a_in_shared = false;
    EXPECT_CONTAINS(wgmma_error(s), "Func a must be stored in shared memory in core matrices");
    // Stored the other way round (k along the rows' index, m along the rows): wgmma reads it
    // transposed (MN-major).
    s = {};
    s.a_transposed_in = true;
    EXPECT_EQ(wgmma_error(s), "");
}

TEST(WgmmaErrors, CoreMatrixStorage) {
    WgmmaSchedule s;
    s.a_padded = true;
    EXPECT_CONTAINS(wgmma_error(s), "core_matrix_storage on Func a: it is also padded "
                                    "(align_storage)");
    Var x("x");
    Func line("line");
    line(x) = x;
    EXPECT_CONTAINS(message_of<CompileError>([&] { line.core_matrix_storage(); }),
                    "core_matrix_storage on Func line: core matrices tile rows (the innermost "
                    "stored dimension) 8 at a time, but line has one dimension");
    // On the host: refused, as the layout is for GPU shared memory.
    Var y("y");
    Func f("f"), g("g");
    f(x, y) = x + y;
    g(x, y) = f(x, y) * 2;
    f.compute_root().core_matrix_storage();
    EXPECT_CONTAINS(message_of<CompileError>([&] {
                        g.realize({16, 16});
                    }),
                    "core_matrix_storage on Func f: core matrices lay out a tile in GPU shared "
                    "memory for the tensor cores, but f is stored in device or host memory");
}
