#ifndef AICF_APPS_MLP_BLOCK_H
#define AICF_APPS_MLP_BLOCK_H

// The MLP block of a transformer layer, y = x + W2 GELU(W1 LayerNorm(x) + b1) + b2, over
// `tokens` rows of `d` values, with `hidden` values in between; activations and weights in
// bfloat16, sums in float32. Tensors are row-major: x(col, token), W1(h, col) (d rows of
// hidden: the transpose of a PyTorch Linear's weight), W2(col, h) (hidden rows of d).
//
// Written once from the operators of ModelOps.h and the tensor-core product of GemmGPU.h.
// mlp_block_by_operator schedules it as frameworks run it, one kernel per operator with every
// intermediate in device memory: LayerNorm (one block per row), the product, the bias, GELU,
// the second product, its bias and the residual add, each its own kernel;
// mlp_block_fused_epilogues in three kernels; mlp_block_dataflow in two.

#include "GemmGPU.h"
#include "ModelOps.h"
#include "NormSchedules.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace aicf_apps {

// The block's weights: Buffers of values, or ImageParams (sizes known only when it runs, as
// for the dataflow report at sizes too large to allocate here).
template <typename Src> struct MlpWeightsOf {
    Src ln_weight, ln_bias; // d
    Src w1, b1;             // hidden x d, hidden
    Src w2, b2;             // d x hidden, d
};
using MlpWeights = MlpWeightsOf<aicf::Buffer<aicf::bfloat16_t>>;

// The weights as ImageParams, and the activations' ImageParam x.
inline MlpWeightsOf<aicf::ImageParam> mlp_weight_params() {
    using aicf::ImageParam;
    const aicf::Type bf16 = aicf::BFloat(16);
    return {ImageParam(bf16, 1, "ln_weight"), ImageParam(bf16, 1, "ln_bias"),
            ImageParam(bf16, 2, "w1"),        ImageParam(bf16, 1, "b1"),
            ImageParam(bf16, 2, "w2"),        ImageParam(bf16, 1, "b2")};
}
inline aicf::ImageParam mlp_input_param() {
    return aicf::ImageParam(aicf::BFloat(16), 2, "x");
}

// The extents of those ImageParams for the dataflow report of a block of these sizes.
inline aicf::ReportArguments mlp_report_arguments(int tokens, int d, int hidden) {
    aicf::ReportArguments a;
    a.buffers = {{"x", {d, tokens}}, {"ln_weight", {d}},  {"ln_bias", {d}}, {"w1", {hidden, d}},
                 {"b1", {hidden}},   {"w2", {d, hidden}}, {"b2", {d}}};
    return a;
}

// Weights of random values (LayerNorm's weight near 1; W1 and W2 scaled by 1 / sqrt(fan-in)).
inline MlpWeights random_mlp_weights(int d, int hidden, unsigned seed) {
    using aicf::bfloat16_t;
    using aicf::Buffer;
    MlpWeights w{Buffer<bfloat16_t>({d}, "ln_weight"),  Buffer<bfloat16_t>({d}, "ln_bias"),
                 Buffer<bfloat16_t>({hidden, d}, "w1"), Buffer<bfloat16_t>({hidden}, "b1"),
                 Buffer<bfloat16_t>({d, hidden}, "w2"), Buffer<bfloat16_t>({d}, "b2")};
    std::mt19937 rng(seed);
    auto fill = [&](const Buffer<bfloat16_t> &b, float lo, float hi) {
        std::uniform_real_distribution<float> dist(lo, hi);
        bfloat16_t *p = b.data();
        for (int64_t i = 0; i < b.number_of_elements(); i++)
            p[i] = bfloat16_t(dist(rng));
    };
    const float s1 = 1.5f / std::sqrt(float(d)), s2 = 1.5f / std::sqrt(float(hidden));
    fill(w.ln_weight, 0.5f, 1.5f);
    fill(w.ln_bias, -0.5f, 0.5f);
    fill(w.w1, -s1, s1);
    fill(w.b1, -0.5f, 0.5f);
    fill(w.w2, -s2, s2);
    fill(w.b2, -0.5f, 0.5f);
    return w;
}

// Row t of the block in double precision, rounded where the pipelines store bfloat16
// (LayerNorm's output and GELU's); the result before its own rounding. A plain loop, for
// checking the pipelines. `magnitude`, if given, receives each output's sum of the absolute
// values of its terms (the scale of its rounding errors).
inline std::vector<double> mlp_reference_row(const aicf::Buffer<aicf::bfloat16_t> &x,
                                             const MlpWeights &w, int t, int d, int hidden,
                                             std::vector<double> *magnitude = nullptr) {
    using aicf::bfloat16_t;
    auto f = [](bfloat16_t v) { return double(float(v)); };
    auto bf16 = [&](double v) { return f(bfloat16_t(float(v))); };
    double mean = 0, var = 0;
    for (int c = 0; c < d; c++)
        mean += f(x(c, t));
    mean /= d;
    for (int c = 0; c < d; c++)
        var += (f(x(c, t)) - mean) * (f(x(c, t)) - mean);
    var /= d;
    std::vector<double> ln(static_cast<size_t>(d)), h(static_cast<size_t>(hidden)),
        y(static_cast<size_t>(d));
    for (int c = 0; c < d; c++)
        ln[size_t(c)] =
            bf16((f(x(c, t)) - mean) / std::sqrt(var + 1e-5) * f(w.ln_weight(c)) + f(w.ln_bias(c)));
    // Both products in the order the weights are stored (w1's and w2's first dimension
    // innermost), so that a row at the block's real sizes takes a fraction of a second.
    for (int j = 0; j < hidden; j++)
        h[size_t(j)] = f(w.b1(j));
    for (int c = 0; c < d; c++) {
        const bfloat16_t *w1 = &w.w1(0, c); // w.w1(j, c) at w1[j * stride]
        const int64_t stride = w.w1.stride(0);
        for (int j = 0; j < hidden; j++)
            h[size_t(j)] += ln[size_t(c)] * f(w1[j * stride]);
    }
    for (double &v : h)
        v = bf16(0.5 * v * (1 + std::erf(v / std::sqrt(2.0))));
    std::vector<double> sum(static_cast<size_t>(d));
    for (int c = 0; c < d; c++) {
        y[size_t(c)] = f(w.b2(c)) + f(x(c, t));
        sum[size_t(c)] = std::abs(y[size_t(c)]);
    }
    for (int j = 0; j < hidden; j++) {
        const bfloat16_t *w2 = &w.w2(0, j);
        const int64_t stride = w.w2.stride(0);
        for (int c = 0; c < d; c++) {
            const double term = h[size_t(j)] * f(w2[c * stride]);
            y[size_t(c)] += term;
            sum[size_t(c)] += std::abs(term);
        }
    }
    if (magnitude) *magnitude = sum;
    return y;
}

// The element-wise operators' schedule when each is its own kernel: 32 x 8 threads per block
// over 64 x 8 points, two consecutive points (4 bytes of bfloat16) per thread.
inline void schedule_pointwise_kernel(aicf::Func f) {
    using namespace aicf;
    Var x = f.args()[0], y = f.args()[1], bx("bx"), by("by"), tx("tx"), ty("ty"), xv("xv");
    f.compute_root().gpu_tile(x, y, bx, by, tx, ty, 64, 8).split(tx, tx, xv, 2).vectorize(xv);
}

namespace detail {

// What the schedules share: LayerNorm (as its own kernel when `ln_kernel`: one block of 128
// threads per row, stored in bfloat16), and the weights as Funcs the products read.
struct MlpStart {
    RowwiseOp ln;
    aicf::Func w1, w2;
};

template <typename Src>
MlpStart mlp_start(const Src &x, const MlpWeightsOf<Src> &w, int d, const std::string &name,
                   bool ln_kernel = true) {
    using namespace aicf;
    Var c("c"), t("t");
    MlpStart s{layer_norm<bfloat16_t>(x, w.ln_weight, w.ln_bias, d, 1e-5f, name + "_ln"),
               Func(name + "_w1"), Func(name + "_w2")};
    if (ln_kernel) {
        schedule_block_per_row<bfloat16_t>(s.ln, 128);
        s.ln.out.compute_root();
    }
    s.w1(c, t) = w.w1(c, t);
    s.w2(c, t) = w.w2(c, t);
    return s;
}

// The products' epilogues when fused: bias and GELU after the first, bias and the residual
// after the second, both stored in bfloat16.
struct MlpEpilogues {
    GemmEpilogue first, second;
};

template <typename Src>
MlpEpilogues mlp_epilogues(const Src &x, const MlpWeightsOf<Src> &w, const std::string &name) {
    using namespace aicf;
    Var c("c"), t("t");
    Func b1(name + "_b1"), b2(name + "_b2"), residual(name + "_residual");
    b1(c) = w.b1(c);
    b2(c) = w.b2(c);
    residual(c, t) = x(c, t);
    MlpEpilogues e;
    e.first.bias = b1;
    e.first.gelu = true;
    e.first.out_type = BFloat(16);
    e.second.bias = b2;
    e.second.residual = residual;
    e.second.out_type = BFloat(16);
    return e;
}

// `tiles` with where the products' rows (the tokens of x) end, for guarded rows (A is a Func).
template <typename Src> GemmSchedule with_token_rows(GemmSchedule tiles, const Src &x) {
    if (tiles.guard_rows && !tiles.a_row_end.defined()) tiles.a_row_end = gemm_row_end(x);
    return tiles;
}

} // namespace detail

template <typename Src>
aicf::Func mlp_block_by_operator(const Src &x, const MlpWeightsOf<Src> &w, int d, int hidden,
                                 const std::string &name) {
    using namespace aicf;
    Var c("c"), t("t");
    detail::MlpStart s = detail::mlp_start(x, w, d, name);
    // The first product, in float32; its bias; GELU, stored in bfloat16.
    Func mm1 = gemm_tensor_cores(s.ln.out, s.w1, d, name + "_mm1");
    mm1.compute_root();
    Func bias1(name + "_bias1"), gelu(name + "_gelu");
    bias1(c, t) = mm1(c, t) + cast<float>(w.b1(c));
    Expr v = bias1(c, t);
    gelu(c, t) = cast<bfloat16_t>(0.5f * v * (1.0f + erf(v * 0.70710678f)));
    schedule_pointwise_kernel(bias1);
    schedule_pointwise_kernel(gelu);
    // The second product, its bias, and the residual, stored in bfloat16.
    Func mm2 = gemm_tensor_cores(gelu, s.w2, hidden, name + "_mm2");
    mm2.compute_root();
    Func bias2(name + "_bias2"), out(name);
    bias2(c, t) = mm2(c, t) + cast<float>(w.b2(c));
    out(c, t) = cast<bfloat16_t>(cast<float>(x(c, t)) + bias2(c, t));
    schedule_pointwise_kernel(bias2);
    schedule_pointwise_kernel(out);
    return out;
}

// The same block in three kernels, the element-wise operators fused into the products'
// epilogues: LayerNorm; the first product with its bias and GELU applied to the accumulators
// (the hidden activations stored once, in bfloat16); the second product with its bias and the
// residual. Both products under `tiles` (GemmSchedule::large_tiles() for large blocks).
template <typename Src>
aicf::Func mlp_block_fused_epilogues(const Src &x, const MlpWeightsOf<Src> &w, int d, int hidden,
                                     const std::string &name, const GemmSchedule &tiles = {}) {
    using namespace aicf;
    detail::MlpStart s = detail::mlp_start(x, w, d, name);
    detail::MlpEpilogues e = detail::mlp_epilogues(x, w, name);
    const GemmSchedule rows = detail::with_token_rows(tiles, x);
    Func h = gemm_tensor_cores(s.ln.out, s.w1, d, name + "_mm1", e.first, {}, rows);
    h.compute_root();
    return gemm_tensor_cores(h, s.w2, hidden, name, e.second, {}, rows);
}

// How the dataflow schedule's first product stages its operands: A, LayerNorm's output
// computed on its way into shared memory, and W1.
enum class MlpStaging {
    OneStep,   // both a step at a time, by plain loads (two barriers a step)
    Registers, // two stages through registers: each thread loads (and normalizes) the next
               // step's part of the tiles during this step's products
    Async,     // three stages in a ring of shared buffers: W1 in cp.async copies, A's normalized
               // values stored by the threads that compute them, two steps ahead
};

// The block as two dataflow regions, in two kernels. The first computes LayerNorm in the
// first product's prologue: each block computes its rows' statistics once (4 lanes along
// each row, rows on the y and z threads) into shared memory, for the 8 column tiles it then
// computes one after another, and normalizes A's tiles on their way into shared memory, so
// the normalized rows never go to device memory; bias and GELU are
// applied to its accumulators, and the hidden activations stored once in bfloat16. The second
// product adds its bias and the residual in its epilogue. `staging` says how the first
// product's tiles are staged. `tiles` sets both products' tile shapes and steps along k (its
// warps: 4, or its warpgroups on Hopper) and the second product's staging.
template <typename Src>
aicf::Func mlp_block_dataflow(const Src &x, const MlpWeightsOf<Src> &w, int d, int hidden,
                              const std::string &name, MlpStaging staging = MlpStaging::OneStep,
                              const GemmSchedule &tiles = {}) {
    using namespace aicf;
    detail::MlpStart s = detail::mlp_start(x, w, d, name, false);
    detail::MlpEpilogues e = detail::mlp_epilogues(x, w, name);
    RowwiseOp &ln = s.ln;
    GemmSchedule computed_tiles;
    computed_tiles.warps = tiles.warps;
    computed_tiles.n_tiles = tiles.n_tiles;
    computed_tiles.m_tiles = tiles.m_tiles;
    computed_tiles.k_tiles = tiles.k_tiles;
    computed_tiles.warpgroups = tiles.warpgroups;
    computed_tiles.warpgroup_n = tiles.warpgroup_n;
    computed_tiles.column_tiles = 8;
    computed_tiles.guard_rows = tiles.guard_rows;
    if (staging == MlpStaging::Async) {
        computed_tiles.stages = 3;
        computed_tiles.copy = PipelineCopy::Async;
    } else {
        computed_tiles.stages = staging == MlpStaging::Registers ? 2 : 1;
        computed_tiles.copy = PipelineCopy::Registers;
    }
    Func h = gemm_tensor_cores(ln.out, s.w1, d, name + "_mm1", e.first, {},
                               detail::with_token_rows(computed_tiles, x));
    h.compute_root();
    // The statistics at the first product's block loop: rows split 8 a warp at a time (32 for
    // the default 4 warps) over the block's 8 threads along y and its warps along z (x of
    // extent 1 in the pure stage), each row reduced by the 4 lanes along x.
    const int stat_rows = tiles.warpgroups ? 32 : 8 * tiles.warps;
    Var yo("yo"), yi("yi"), ty("ty"), tz("tz"), one("one");
    RVar ro("ro"), lane("lane");
    for (Func st : ln.stats) {
        const Var y(st.args()[0]);
        st.compute_at(h, Var("bx"));
        st.split(y, yo, yi, stat_rows)
            .split(yi, tz, ty, 8)
            .split(ty, ty, one, 1)
            .reorder(one, ty, tz, yo)
            .gpu_threads(one, ty, tz);
        st.update()
            .split(ln.r.x, ro, lane, 4)
            .split(y, yo, yi, stat_rows)
            .split(yi, tz, ty, 8)
            .reorder(ro, lane, ty, tz, yo)
            .gpu_lanes(lane)
            .gpu_threads(ty, tz);
    }
    return gemm_tensor_cores(h, s.w2, hidden, name, e.second, {},
                             detail::with_token_rows(tiles, x));
}

} // namespace aicf_apps

#endif
