#ifndef AICF_APPS_GEMM_GPU_H
#define AICF_APPS_GEMM_GPU_H

// C = A * B on tensor cores (C(x, y) = sum over k of A(k, y) * B(x, k), accumulated in
// float32): A and B in bfloat16, float16, or float32 (rounded to TF32 by the instruction),
// with an epilogue applied to the accumulators in registers before the one store of each
// point: a bias along x, GELU, a residual, and conversion to the output type.
//
// The schedule: a 128 x 64 tile of C per block of 4 warps (4 x 8 x 4 threads), each warp a
// 32 x 64 part of it as 4 x 4 tiles of the instruction (16 rows x 8 columns), accumulated in
// the lanes' registers in the instruction's fragment layout; for each step of 32 along k the
// block stages 64 x 32 of A and 32 x 128 of B in shared memory, in 16-byte pieces copied
// asynchronously (cp.async) `stages` - 1 steps ahead into as many buffers (1: none). The tiles
// need not divide C (of at least 128 x 64): the last ones shift inwards; nor need 32 divide
// K: A and B read as zeros past its end. The GPU tests check this schedule on the simulator,
// and the GPU benchmark measures it.
//
// On Hopper (the target cuda-sm_90a), GemmSchedule::hopper() runs the products on warpgroup
// tensor cores instead (wgmma.mma_async, gpu_wgmma): each warpgroup of 4 warps a 64-row band
// of a tile 128 columns wide (warpgroup_n), its 64 x 128 accumulators in registers (64 floats
// a thread), A and B staged in shared memory in core matrices (core_matrix_storage), which
// wgmma reads there itself, with no ldmatrix.

#include "dsl/aicf.h"

#include <optional>
#include <string>
#include <utility>

namespace aicf_apps {

struct GemmEpilogue {
    std::optional<aicf::Func> bias;     // bias(x), added to the product
    bool gelu = false;                  // then GELU (the erf form)
    std::optional<aicf::Func> residual; // then residual(x, y) added
    aicf::Type out_type = aicf::Float(32);
};

// A transformer's epilogues over inputs (Buffers or ImageParams): bias(x) and GELU, stored as
// float32; and the same plus residual(x, y), stored as bfloat16.
template <typename Bias> GemmEpilogue bias_gelu_epilogue(const Bias &bias) {
    aicf::Var x("x");
    aicf::Func b("bias_f");
    b(x) = bias(x);
    GemmEpilogue e;
    e.bias = b;
    e.gelu = true;
    return e;
}
template <typename Bias, typename Residual>
GemmEpilogue bias_gelu_residual_epilogue(const Bias &bias, const Residual &residual) {
    aicf::Var x("x"), y("y");
    aicf::Func r("residual_f");
    r(x, y) = residual(x, y);
    GemmEpilogue e = bias_gelu_epilogue(bias);
    e.residual = r;
    e.out_type = aicf::BFloat(16);
    return e;
}

// The schedule's choices. The defaults are the schedule above; lesson 11 of the tutorial
// compares them, and the GPU property test draws them.
struct GemmSchedule {
    int warps = 4;   // along x, each warp_x() = 8 n_tiles columns wide
    int n_tiles = 4; // instruction tiles (8 columns) per warp along x
    int m_tiles = 4; // instruction tiles (16 rows) per warp, and block, along y
    int k_tiles = 2; // instruction steps (16 of k; 8 for float) per staged step of k
    // How the staged tiles' rows are stored: as they come (an ldmatrix of 8 rows may fall in
    // one group of banks), padded by 16 bytes, or with their 16-byte pieces swizzled.
    enum class Rows { Plain, Padded, Swizzled } rows = Rows::Padded;
    int stages = 3; // cp.async stages; 1: copies by plain loads and stores, two barriers a step
    // How the stages are filled: cp.async, or (stages = 2) each thread's loads of the next
    // step kept in registers during this step's products, which also pipelines tiles that
    // are computed on their way into shared memory (a normalized operand) and a block's
    // column tiles computed one after another.
    aicf::PipelineCopy copy = aicf::PipelineCopy::Async;
    // Where K is known only at run time: read A in whole 16-byte pieces along k, so that every
    // piece (the last one zero-filled past K) is one cp.async. K must then be a multiple of a
    // piece (8 elements of 16 bits, 4 of 32): otherwise A reads past its end, which the
    // pipeline refuses when it runs (a RuntimeError naming A). Where false, any K is taken,
    // and A's pieces are read element by element.
    bool k_in_pieces = false;
    // Column tiles (block_x() wide) one block computes one after another: what the product's
    // prologue computes at the block loop (bx), such as LayerNorm's statistics of the block's
    // rows, is then shared by that many tiles. 1: one tile per block. The tiles past the end
    // are skipped by a guard around the tile (the stages of each tile's loop over k inside it).
    int column_tiles = 1;
    // Rows of tiles whose blocks the grid launches one after another (1: the grid's rows of
    // tiles along x, in order): the blocks running at once then share fewer, more reused
    // tiles of A and B in L2.
    int row_group = 1;
    // The last row of tiles guarded, for products with fewer rows than a tile (a decoding
    // step's few tokens) or rows that no tile divides: the accumulator is still computed over
    // whole tiles (bound_extent), A's rows past its last read through a clamp, and only the
    // stores past the last row skipped. Where A's rows end (its min plus its extent along
    // dimension 1) is known where A is a Buffer, an ImageParam or an input buffer; a Func A
    // needs it in a_row_end (the MLP block passes its input's). Without guarded rows the last
    // row tile shifts inwards over its neighbour, which needs at least block_y() rows.
    bool guard_rows = false;
    aicf::Expr a_row_end;
    // Warpgroups of 4 warps running wgmma.mma_async (Hopper, the target cuda-sm_90a), each a
    // 64-row band of the tile, which is warpgroup_n columns wide (a multiple of 8 up to 256);
    // 0: mma.sync in the warps above (sm_80 and later). warps, n_tiles, m_tiles and rows apply
    // to mma.sync only: wgmma's tiles are stored in core matrices.
    int warpgroups = 0;
    int warpgroup_n = 128;

    // Tiles of 128 x 128 (4 warps) or 256 x 128 (8 warps), each warp 32 columns by 128 rows
    // (4 x 8 instruction tiles, 128 accumulators per lane), in steps of 64 along k, for
    // products of at least that size. Each step brings 64 or 85 flops per byte of its operands
    // into the block, against 43 for the default 128 x 64 tiles, so the operands come through
    // L2 the fewer times; and a step of 64 waits at half as many barriers as one of 32. On an
    // H200 (bench_gpu, 4096^3 bf16): 128 x 64 steps of 32, 236 TFLOP/s; 128 x 128 steps of
    // 32, 288; steps of 64, 326.
    static GemmSchedule large_tiles(int warps = 4) {
        GemmSchedule s;
        s.warps = warps;
        s.m_tiles = 8;
        s.k_tiles = 4;
        return s;
    }

    // wgmma on Hopper: 64 x 128 of the tile per warpgroup, 2 warpgroups (128 x 128 tiles, 256
    // threads), steps of 64 along k staged 3 deep.
    static GemmSchedule hopper(int warpgroups = 2, int n = 128) {
        GemmSchedule s;
        s.warpgroups = warpgroups;
        s.warpgroup_n = n;
        s.k_tiles = 4;
        return s;
    }

    // "128x64 w4 s3" (or "128x128 wg2 s3" for wgmma) and the choices that differ from the
    // defaults (k_tiles, rows, copy).
    std::string to_string() const {
        std::string s =
            std::to_string(block_x()) + "x" + std::to_string(block_y()) +
            (warpgroups ? " wg" + std::to_string(warpgroups) : " w" + std::to_string(warps)) +
            " s" + std::to_string(stages);
        if (k_tiles != 2) s += " k" + std::to_string(k_tiles);
        if (rows == Rows::Plain && !warpgroups) s += " plain";
        if (rows == Rows::Swizzled && !warpgroups) s += " swizzled";
        if (copy == aicf::PipelineCopy::Registers) s += " registers";
        if (column_tiles != 1) s += " c" + std::to_string(column_tiles);
        if (row_group != 1) s += " g" + std::to_string(row_group);
        if (guard_rows) s += " guarded rows";
        return s;
    }

    int warp_x() const { return 8 * n_tiles; }
    int block_x() const { return warpgroups ? warpgroup_n : warps * warp_x(); }
    int block_y() const { return warpgroups ? 64 * warpgroups : 16 * m_tiles; }
    int threads() const { return warpgroups ? 128 * warpgroups : 32 * warps; }
    int mma_k(aicf::Type in) const { return in == aicf::Float(32) ? 8 : 16; }
    int k_step(aicf::Type in) const { return mma_k(in) * k_tiles; }
};

// The points of gpu_wgmma's accumulator f(x, y) as its threads hold them, for f's pure
// definition and its consumers: column 8j + 2 thread.x + {0, 1} and row 16 thread.z +
// thread.y + {0, 8} of each warpgroup's 64 x N (a block of 4 x 8 x 4 warpgroups threads).
inline void wgmma_accumulator_layout(aicf::Stage s, const aicf::Var &x, const aicf::Var &y) {
    aicf::Var tz("tz"), yh("yh"), ty("ty"), xt("xt"), tx("tx"), xl("xl");
    s.split(y, tz, y, 16)
        .split(y, yh, ty, 8)
        .split(x, xt, x, 8)
        .split(x, tx, xl, 2)
        .reorder(xl, yh, xt, tx, ty, tz)
        .gpu_threads(tx, ty, tz)
        .unroll(xt)
        .unroll(yh)
        .vectorize(xl);
}

// The reference the GEMM's checks share: point (x, y) of A * B in double precision from
// A's and B's own values (K = A's extent along its first dimension), and the sum of its
// terms' magnitudes (the scale of float rounding errors). A plain loop.
template <typename T>
double gemm_reference_point(const aicf::Buffer<T> &A, const aicf::Buffer<T> &B, int x, int y,
                            double *magnitude = nullptr) {
    double sum = 0, size = 0;
    for (int k = 0; k < A.extent(0); k++) {
        const double term = double(float(A(k, y))) * double(float(B(x, k)));
        sum += term;
        size += term < 0 ? -term : term;
    }
    if (magnitude) *magnitude = size;
    return sum;
}

// Where the rows of A end (one past its last row along dimension 1), where its type knows it.
template <typename T> aicf::Expr gemm_row_end(const aicf::Buffer<T> &A) {
    return A.min(1) + A.extent(1);
}
template <typename Src> auto gemm_row_end(const Src &A) -> decltype(A.dim(1).extent()) {
    return A.dim(1).min() + A.dim(1).extent();
}
inline aicf::Expr gemm_row_end(const aicf::Func &) {
    return aicf::Expr();
}

template <typename Src>
aicf::Func gemm_tensor_cores(const Src &A, const Src &B, const aicf::Expr &K,
                             const std::string &name, const GemmEpilogue &epilogue = {},
                             const std::optional<aicf::Func> &result = {},
                             const GemmSchedule &schedule = {}) {
    using namespace aicf;
    const Type in = A.type();
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty"), xl("xl"), yh("yh"), xt("xt"),
        yt("yt"), wz("wz"), xm("xm"), ym("ym"), t("t"), tz("tz"), r("r"), xv("xv"), xo("xo");
    RVar ki("ki"), kk("kk");
    // The reduction in whole steps of k (k.y steps of k.x), so that no step is partial even
    // when K is known only when the pipeline runs; A and B are zero past K.
    // (Counts the schedule divides by: an error that names them, not a division by zero.)
    for (auto [field, value] : {std::pair<const char *, int>{"warps", schedule.warps},
                                {"n_tiles", schedule.n_tiles},
                                {"m_tiles", schedule.m_tiles},
                                {"k_tiles", schedule.k_tiles},
                                {"column_tiles", schedule.column_tiles},
                                {"row_group", schedule.row_group}})
        user_assert(value > 0) << "gemm_tensor_cores " << name << ": GemmSchedule::" << field
                               << " is " << value << "; it must be at least 1.";
    user_assert(schedule.warpgroups >= 0)
        << "gemm_tensor_cores " << name << ": GemmSchedule::warpgroups is " << schedule.warpgroups
        << "; it must be 0 (mma.sync) or at least 1 (wgmma).";
    const int step = schedule.k_step(in);
    const ir::IntImm *k_const = K.as<ir::IntImm>();
    const bool pad = !k_const || k_const->value % step != 0;
    RDom k(0, step, 0, (K + (step - 1)) / step, "k");
    Expr kk_at = k.y * step + k.x;
    // The staged tiles and the accumulator, named after the product (several in a pipeline).
    Func a(name + "_a"), b(name + "_b"), prod(name + "_prod"), out = result ? *result : Func(name);
    Expr zero = cast(in, 0.0f);
    // A is staged in 16-byte pieces along k: where K is a known multiple of a piece, each
    // piece is wholly inside or past K, and the test is made per piece (a piece past the end is
    // then a cp.async that zero-fills it); otherwise element by element.
    const int piece = 16 / in.bytes();
    // With guarded rows, the last tile's rows past A's last repeat it (never stored).
    const Expr row_end = !schedule.guard_rows           ? Expr()
                         : schedule.a_row_end.defined() ? schedule.a_row_end
                                                        : gemm_row_end(A);
    user_assert(!schedule.guard_rows || row_end.defined())
        << "gemm_tensor_cores " << name << " with guard_rows: A is a Func, whose rows the "
        << "product cannot know; give where they end in GemmSchedule::a_row_end (an input's, "
        << "such as x.dim(1).min() + x.dim(1).extent()).";
    const Expr row = row_end.defined() ? min(y, row_end - 1) : Expr(y);
    if (!pad) {
        a(x, y) = A(x, row);
    } else if ((k_const && k_const->value % piece == 0) || (!k_const && schedule.k_in_pieces)) {
        Expr p = x / piece, last = (K + (piece - 1)) / piece - 1;
        a(x, y) = select(p <= last, A(min(p, last) * piece + x % piece, row), zero);
    } else {
        a(x, y) = select(x < K, A(min(x, K - 1), row), zero);
    }
    b(x, y) = pad ? select(y < K, B(x, min(y, K - 1)), zero) : B(x, y);
    prod(x, y) = 0.0f;
    prod(x, y) += cast<float>(a(kk_at, y)) * cast<float>(b(x, kk_at));
    Expr v = prod(x, y);
    if (epilogue.bias) v = v + cast<float>((*epilogue.bias)(x));
    if (epilogue.gelu) v = 0.5f * v * (1.0f + erf(v * 0.70710678f));
    if (epilogue.residual) v = v + cast<float>((*epilogue.residual)(x, y));
    out(x, y) = cast(epilogue.out_type, v);

    // Points in the accumulators' layout: column 2 * tx + xl and row ty + 8 * yh of each
    // 16 x 8 tile of a warp's 32 x 64.
    auto fragments = [&](Stage s) {
        if (schedule.warpgroups) {
            wgmma_accumulator_layout(s, x, y);
            return;
        }
        s.split(x, wz, x, schedule.warp_x())
            .split(x, xt, x, 8)
            .split(x, tx, xl, 2)
            .split(y, yt, y, 16)
            .split(y, yh, ty, 8)
            .reorder(xl, yh, xt, yt, tx, ty, wz)
            .gpu_threads(tx, ty, wz)
            .unroll(xt)
            .unroll(yt)
            .unroll(yh)
            .vectorize(xl);
    };
    if (row_end.defined()) {
        // The rows in tiles whose last is guarded; the accumulator over whole tiles there too.
        out.split(x, bx, x, schedule.block_x())
            .split(y, by, y, schedule.block_y(), TailStrategy::GuardWithIf)
            .reorder(x, y, bx, by);
        prod.bound_extent(y, schedule.block_y());
    } else {
        out.tile(x, y, bx, by, x, y, schedule.block_x(), schedule.block_y());
    }
    Var tile = bx;
    if (schedule.column_tiles > 1) {
        // The block's tiles in a serial loop inside the block loop (those past the end
        // skipped).
        tile = Var("bxi");
        out.split(bx, bx, tile, schedule.column_tiles, TailStrategy::GuardWithIf);
    }
    if (schedule.row_group > 1) {
        // Blocks launched row_group tiles down y for each tile along x (those past the last
        // row of tiles skipped), the innermost block loop byi.
        Var byi("byi");
        out.split(by, by, byi, schedule.row_group, TailStrategy::GuardWithIf)
            .reorder(byi, bx)
            .gpu_blocks(byi, bx, by);
        if (schedule.column_tiles == 1) tile = byi;
    } else {
        out.gpu_blocks(bx, by);
    }
    fragments(Stage(out.function(), 0));
    prod.compute_at(out, tile).store_in(MemoryType::Register);
    fragments(Stage(prod.function(), 0));
    const int mma_k = schedule.mma_k(in);
    if (schedule.warpgroups) {
        // Each warpgroup's 64 rows by the tile's columns, 16 of k an instruction.
        Var wg("wg");
        prod.update()
            .split(y, wg, ym, 64)
            .split(k.x, kk, ki, 16)
            .reorder(x, ym, ki, kk, wg, k.y)
            .gpu_threads(wg)
            .unroll(kk)
            .gpu_wgmma(x, ym, ki);
    } else {
        prod.update()
            .split(x, wz, x, schedule.warp_x())
            .split(x, xt, xm, 8)
            .split(y, yt, ym, 16)
            .split(k.x, kk, ki, mma_k)
            .reorder(xm, ym, ki, xt, yt, kk, wz, k.y)
            .gpu_threads(wz)
            .unroll(xt)
            .unroll(yt)
            .unroll(kk)
            .gpu_mma(xm, ym, ki);
    }
    // The staged tiles in 16-byte pieces, by all the block's threads in rounds. In core
    // matrices, consecutive threads take the 8 rows of one (16 bytes apart in shared memory),
    // then the next along the row: a warp stores 512 contiguous bytes, and reads 64 contiguous
    // bytes of each of 8 rows.
    auto stage = [&](Func f) {
        f.compute_at(prod, k.y)
            .gpu_pipeline(schedule.stages, schedule.copy)
            .split(x, xo, xv, piece)
            .vectorize(xv);
        if (schedule.warpgroups) {
            Var yo("yo"), yi("yi");
            f.store_in(MemoryType::GPUShared)
                .core_matrix_storage()
                .split(y, yo, yi, 8)
                .reorder(xv, yi, xo, yo)
                .fuse(yi, xo, t)
                .fuse(t, yo, t);
        } else {
            f.fuse(xo, y, t);
        }
        f.split(t, r, t, schedule.threads(), TailStrategy::GuardWithIf)
            .split(t, tz, t, 32)
            .split(t, ty, tx, 4)
            .gpu_threads(tx, ty, tz);
    };
    // Rows padded or swizzled so that the eight rows an ldmatrix (or a fragment's loads)
    // reads at once fall in different banks: A's padded by 16 bytes, B's by 8 elements.
    stage(a);
    stage(b);
    if (schedule.warpgroups) return out;
    if (schedule.rows == GemmSchedule::Rows::Padded) {
        a.align_storage(x, step + 16 / in.bytes());
        b.align_storage(x, schedule.block_x() + 8);
    } else if (schedule.rows == GemmSchedule::Rows::Swizzled) {
        // A swizzle permutes the 16-byte pieces of rows of 32, 64 or 128k bytes; a shorter
        // row (B's, 8 elements wide) is padded instead.
        auto swizzles = [](int bytes) {
            const int pieces = bytes / 16;
            return bytes % 16 == 0 && (pieces == 2 || pieces == 4 || pieces % 8 == 0);
        };
        if (swizzles(step * in.bytes()))
            a.swizzle_storage();
        else
            a.align_storage(x, step + 16 / in.bytes());
        if (swizzles(schedule.block_x() * in.bytes()))
            b.swizzle_storage();
        else
            b.align_storage(x, schedule.block_x() + 8);
    }
    return out;
}

} // namespace aicf_apps

#endif
