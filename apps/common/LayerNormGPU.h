#ifndef AICF_APPS_LAYERNORM_GPU_H
#define AICF_APPS_LAYERNORM_GPU_H

// Layernorm of each row of `in` (N columns) as one GPU block per row: T threads each sum every
// T-th element of the row into shared memory (rfactor), one thread adds the partial sums, then
// every thread normalizes every T-th element. N need not be a multiple of T. The GPU benchmark
// measures this schedule, the GPU tests check it, and apps/bench_gpu/gpu_generators.cpp compiles it
// ahead of time. `in` is a Buffer or an ImageParam; `out`, when given, is the Func to define.

#include "dsl/aicf.h"

#include <optional>
#include <string>

namespace aicf_apps {

template <typename Src>
aicf::Func layernorm_one_block_per_row(const Src &in, int N, int T, const std::string &name,
                                       const std::optional<aicf::Func> &result = {}) {
    using namespace aicf;
    Var x("x"), y("y"), u("u"), xo("xo"), tx("tx");
    user_assert(N > 0 && T > 0) << "layernorm_one_block_per_row " << name << ": the width (" << N
                                << ") and the threads (" << T << ") must be positive.";
    RDom k(0, T, 0, (N + T - 1) / T, "k");
    if (N % T != 0) k.where(k.x + T * k.y < N);
    Expr element = in(k.x + T * k.y, y);
    Func sum1("sum1"), sum2("sum2"), mean("mean"), out = result ? *result : Func(name);
    sum1(y) = 0.0f;
    sum1(y) += element;
    mean(y) = sum1(y) / float(N);
    sum2(y) = 0.0f;
    sum2(y) += (element - mean(y)) * (element - mean(y));
    out(x, y) = (in(x, y) - mean(y)) * rsqrt(sum2(y) / float(N) + 1e-5f);

    out.split(x, xo, tx, T).reorder(xo, tx, y).gpu_blocks(y).gpu_threads(tx);
    for (Func s : {sum1, sum2}) {
        s.compute_at(out, y);
        Func partial = s.update().rfactor(k.x, u);
        partial.compute_at(out, y).gpu_threads(u);
        partial.update().gpu_threads(u);
    }
    return out;
}

} // namespace aicf_apps

#endif
