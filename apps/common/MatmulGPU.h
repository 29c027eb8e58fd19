#ifndef AICF_APPS_MATMUL_GPU_H
#define AICF_APPS_MATMUL_GPU_H

// C = A * B in float32 (C(x, y) = sum over k of A(k, y) * B(x, k)) as the classic register-
// tiled GPU kernel: a 128 x 128 tile of C per block of 16 x 16 threads, 8 x 8 points per
// thread accumulated in registers (8 rows; two runs of 4 columns, 64 apart, so that a row of
// threads reads B and writes C in consecutive 16-byte pieces, without bank conflicts); for
// each step of 8 along k the block stages 8 x 128 of A and 128 x 8 of B in shared memory (A
// with its rows innermost), so that each step of the reduction reads four float4 per thread
// from shared memory for 64 fused multiply-adds.
// The tiles need not divide the size of C (of at least 128 x 128): the last ones shift inwards;
// nor need 8 divide K: the last step stages and reads fewer rows. The GPU benchmark measures
// this schedule and the GPU tests check it, and apps/bench_gpu/gpu_generators.cpp compiles it
// ahead of time. A and B are Buffers or ImageParams; K is their shared extent; `result`, when
// given, is the Func to define (a generator's Output); min_blocks_per_sm, when positive, is
// the kernel's launch bound.

#include "dsl/aicf.h"

#include <optional>
#include <string>

namespace aicf_apps {

template <typename Src>
aicf::Func
matmul_register_tiled(const Src &A, const Src &B, const aicf::Expr &K, const std::string &name,
                      const std::optional<aicf::Func> &result = {}, int min_blocks_per_sm = 0) {
    using namespace aicf;
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty"), xr("xr"), yr("yr"), xh("xh"),
        xl("xl");
    Var t("t"), lo("lo"), hi("hi"), xo("xo"), xv("xv"), rounds("rounds");
    RVar ko("ko"), ki("ki");
    RDom k(0, K, "k");
    Func a("a"), b("b"), prod("prod"), out = result ? *result : Func(name);
    a(x, y) = A(x, y);
    b(x, y) = B(x, y);
    prod(x, y) = 0.0f;
    prod(x, y) += a(k, y) * b(x, k);
    out(x, y) = prod(x, y);

    // A thread's 8 columns are two runs of 4, 64 apart (x = xh * 64 + tx * 4 + xr): the 16
    // threads of a row read B's staged tile, and write C, in consecutive 16-byte pieces.
    auto thread_tile = [&](Stage s) {
        s.split(x, xh, xl, 64)
            .split(xl, tx, xr, 4)
            .split(y, ty, yr, 8)
            .gpu_threads(tx, ty)
            .vectorize(xr)
            .unroll(xh)
            .unroll(yr);
        return s;
    };
    out.tile(x, y, bx, by, x, y, 128, 128).gpu_blocks(bx, by);
    // With the loads pipelined, a thread needs about 129 registers: one block per
    // multiprocessor. min_blocks_per_sm = 2 caps them at 128 (ptxas spills a little on sm_80).
    if (min_blocks_per_sm > 0) out.gpu_launch_bounds(min_blocks_per_sm);
    thread_tile(Stage(out.function(), 0)).reorder(xr, xh, yr, tx, ty, bx, by);
    prod.compute_at(out, bx).store_in(MemoryType::Register);
    thread_tile(Stage(prod.function(), 0)).reorder(xr, xh, yr, tx, ty);
    thread_tile(prod.update().split(k, ko, ki, 8)).reorder(xr, xh, yr, ki, tx, ty, ko).unroll(ki);
    // 128 x 8 of B: one float4 per thread. A and B are pipelined: each thread loads the next
    // step's tiles into registers before this step's product, which hides their latency.
    b.compute_at(prod, ko)
        .gpu_pipeline(2)
        .split(x, xo, xv, 4)
        .vectorize(xv)
        .fuse(xo, y, t)
        .split(t, hi, lo, 16)
        .gpu_threads(lo, hi);
    // 8 x 128 of A, stored with its rows innermost and padded to 132 (the eight rows a warp
    // stores at once then fall in different banks): four elements per thread, in four rounds
    // (fewer at the last step of a reduction that 8 does not divide, the threads past its
    // end idle).
    a.compute_at(prod, ko)
        .gpu_pipeline(2)
        .reorder_storage(y, x)
        .align_storage(y, 132)
        .fuse(x, y, t)
        .split(t, rounds, t, 256, TailStrategy::GuardWithIf)
        .split(t, hi, lo, 16)
        .gpu_threads(lo, hi);
    return out;
}

} // namespace aicf_apps

#endif
