#ifndef AICF_APPS_NORM_SCHEDULES_H
#define AICF_APPS_NORM_SCHEDULES_H

// GPU schedules of the row-wise operators of ModelOps.h (layernorm, RMSNorm, softmax).
//
//   warp per row   a block is one warp and runs `rows` rows one after another. The warp loads
//                  the per-column parameters once into registers (where they fit beside the
//                  row; else a block runs one row), then for each row loads the
//                  row once into registers (16 bytes per lane and load), reduces it by warp
//                  shuffles and writes the result. No shared memory, no barrier. Widths up to
//                  4096 floats (128 registers of row per lane).
//   block per row  a block of `threads` threads per row; reductions by shuffles within each
//                  warp and across warps through shared memory (one barrier each). The row is
//                  held in registers striped across the threads up to 32 elements a thread;
//                  wider rows are read again by each pass.
//   shared tree    the schedule before cross-thread reductions: per-thread partial sums in
//                  shared memory (rfactor) added by one thread. Kept as the benchmark's
//                  baseline.
//
// Each schedule bounds the output's columns to the operator's width: registers are sized when
// the kernel is compiled.

#include "ModelOps.h"

#include <string>

namespace aicf_apps {

enum class NormSchedule { WarpPerRow, BlockPerRow, SharedTree };

inline const char *to_string(NormSchedule s) {
    switch (s) {
    case NormSchedule::WarpPerRow:
        return "warp per row";
    case NormSchedule::BlockPerRow:
        return "block per row";
    default:
        return "shared tree";
    }
}

// Elements of T that make 16 bytes: one vector load or store per lane.
template <typename T> constexpr int vector_of_16_bytes() {
    return int(16 / sizeof(T));
}

namespace detail {

// Splits the columns of a stage as x = (xo * threads + t) * vec + v, with t on lanes or
// threads, v vectorized and xo unrolled when `unroll` (register arrays need constant indices).
template <typename S>
void stripe_columns(S &&s, const aicf::VarOrRVar &x, int threads, int vec, bool lanes,
                    bool unroll) {
    using namespace aicf;
    VarOrRVar xo(x.name() + "_o", x.is_rvar()), xi(x.name() + "_i", x.is_rvar()),
        t(x.name() + "_t", x.is_rvar()), v(x.name() + "_v", x.is_rvar());
    s.split(x, xo, xi, threads * vec, TailStrategy::GuardWithIf);
    s.split(xi, t, v, vec);
    s.reorder(v, xo, t);
    if (lanes)
        s.gpu_lanes(t);
    else
        s.gpu_threads(t);
    if (x.is_rvar()) {
        s.unroll(v);
    } else {
        s.vectorize(v);
    }
    if (unroll) s.unroll(xo);
}

} // namespace detail

// The warp-per-row schedule: `rows` rows a block (a warp), each held in registers. When the
// parameters would not fit in registers beside the row (more than 64 floats a lane in all),
// each block runs one row and reads the parameters as it goes, still once per block.
template <typename T> void schedule_warp_per_row(RowwiseOp &op, int rows) {
    using namespace aicf;
    const int vec = vector_of_16_bytes<T>();
    const bool params_in_registers = int64_t(1 + op.params.size()) * op.width <= 32 * 64;
    if (!params_in_registers) rows = 1;
    Var yo("yo"), yi("yi");
    op.out.bound(op.x, 0, op.width);
    op.out.split(op.y, yo, yi, rows, TailStrategy::GuardWithIf);
    detail::stripe_columns(op.out, op.x, 32, vec, true, true);
    op.out.reorder(yi, yo).gpu_blocks(yo);
    op.row.compute_at(op.out, yi).store_in(MemoryType::Register);
    detail::stripe_columns(op.row, op.x, 32, vec, true, true);
    for (Func p : op.params) {
        if (!params_in_registers) break;
        p.compute_at(op.out, yo).store_in(MemoryType::Register);
        detail::stripe_columns(p, op.x, 32, vec, true, true);
    }
    for (Func s : op.stats) {
        s.compute_at(op.out, yi).store_in(MemoryType::Register);
        detail::stripe_columns(s.update(), op.r.x, 32, vec, true, true);
    }
}

// The block-per-row schedule: `threads` threads per row (a multiple of 32).
template <typename T> void schedule_block_per_row(RowwiseOp &op, int threads) {
    using namespace aicf;
    const int vec = vector_of_16_bytes<T>();
    const bool in_registers = op.width <= threads * 32;
    op.out.bound(op.x, 0, op.width);
    detail::stripe_columns(op.out, op.x, threads, vec, false, in_registers);
    op.out.gpu_blocks(op.y);
    if (in_registers) {
        op.row.compute_at(op.out, op.y).store_in(MemoryType::Register);
        detail::stripe_columns(op.row, op.x, threads, vec, false, true);
    }
    for (Func s : op.stats) {
        s.compute_at(op.out, op.y).store_in(MemoryType::Register);
        detail::stripe_columns(s.update(), op.r.x, threads, vec, false, in_registers);
    }
}

// The shared-tree schedule: one block of `threads` threads per row; each statistic's partial
// sums (rfactor) go to shared memory and thread 0 adds them.
template <typename T> void schedule_shared_tree(RowwiseOp &op, int threads) {
    using namespace aicf;
    Var xo("xo"), tx("tx"), u("u");
    RVar ro("ro"), ri("ri");
    op.out.bound(op.x, 0, op.width);
    op.out.split(op.x, xo, tx, threads, TailStrategy::GuardWithIf)
        .reorder(tx, xo, op.y)
        .gpu_blocks(op.y)
        .gpu_threads(tx);
    for (Func s : op.stats) {
        s.compute_at(op.out, op.y);
        s.update().split(op.r.x, ro, ri, threads).reorder(ri, ro);
        Func partial = s.update().rfactor(ri, u);
        partial.compute_at(op.out, op.y).gpu_threads(u);
        partial.update().gpu_threads(u);
    }
}

template <typename T> void schedule(RowwiseOp &op, NormSchedule s) {
    switch (s) {
    case NormSchedule::WarpPerRow:
        schedule_warp_per_row<T>(op, 4);
        break;
    case NormSchedule::BlockPerRow:
        schedule_block_per_row<T>(op, op.width <= 4096 ? 256 : 512);
        break;
    default:
        schedule_shared_tree<T>(op, 256);
    }
}

} // namespace aicf_apps

#endif
