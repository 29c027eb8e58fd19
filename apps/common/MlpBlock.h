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
// mlp_block_fused_epilogues in three kernels.

#include "GemmGPU.h"
#include "ModelOps.h"
#include "NormSchedules.h"

#include <string>

namespace aicf_apps {

struct MlpWeights {
    aicf::Buffer<aicf::bfloat16_t> ln_weight, ln_bias; // d
    aicf::Buffer<aicf::bfloat16_t> w1, b1;             // hidden x d, hidden
    aicf::Buffer<aicf::bfloat16_t> w2, b2;             // d x hidden, d
};

// The element-wise operators' schedule when each is its own kernel: 32 x 8 threads per block
// over 64 x 8 points, two consecutive points (4 bytes of bfloat16) per thread.
inline void schedule_pointwise_kernel(aicf::Func f) {
    using namespace aicf;
    Var x = f.args()[0], y = f.args()[1], bx("bx"), by("by"), tx("tx"), ty("ty"), xv("xv");
    f.compute_root().gpu_tile(x, y, bx, by, tx, ty, 64, 8).split(tx, tx, xv, 2).vectorize(xv);
}

template <typename Src>
aicf::Func mlp_block_by_operator(const Src &x, const MlpWeights &w, int d, int hidden,
                                 const std::string &name) {
    using namespace aicf;
    Var c("c"), t("t");
    // LayerNorm, stored in bfloat16 (one block of 128 threads per row).
    RowwiseOp ln = layer_norm<bfloat16_t>(x, w.ln_weight, w.ln_bias, d, 1e-5f, name + "_ln");
    schedule_block_per_row<bfloat16_t>(ln, 128);
    ln.out.compute_root();
    // The first product, in float32; its bias; GELU, stored in bfloat16.
    Func w1(name + "_w1"), w2(name + "_w2");
    w1(c, t) = w.w1(c, t);
    w2(c, t) = w.w2(c, t);
    Func mm1 = gemm_tensor_cores(ln.out, w1, d, name + "_mm1");
    mm1.compute_root();
    Func bias1(name + "_bias1"), gelu(name + "_gelu");
    bias1(c, t) = mm1(c, t) + cast<float>(w.b1(c));
    Expr v = bias1(c, t);
    gelu(c, t) = cast<bfloat16_t>(0.5f * v * (1.0f + erf(v * 0.70710678f)));
    schedule_pointwise_kernel(bias1);
    schedule_pointwise_kernel(gelu);
    // The second product, its bias, and the residual, stored in bfloat16.
    Func mm2 = gemm_tensor_cores(gelu, w2, hidden, name + "_mm2");
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
// residual. (LayerNorm in the first product's prologue is the next step.)
template <typename Src>
aicf::Func mlp_block_fused_epilogues(const Src &x, const MlpWeights &w, int d, int hidden,
                                     const std::string &name) {
    using namespace aicf;
    Var c("c"), t("t");
    RowwiseOp ln = layer_norm<bfloat16_t>(x, w.ln_weight, w.ln_bias, d, 1e-5f, name + "_ln");
    schedule_block_per_row<bfloat16_t>(ln, 128);
    ln.out.compute_root();
    Func w1(name + "_w1"), w2(name + "_w2"), b1(name + "_b1"), b2(name + "_b2"),
        residual(name + "_residual");
    w1(c, t) = w.w1(c, t);
    w2(c, t) = w.w2(c, t);
    b1(c) = w.b1(c);
    b2(c) = w.b2(c);
    residual(c, t) = x(c, t);
    GemmEpilogue first;
    first.bias = b1;
    first.gelu = true;
    first.out_type = BFloat(16);
    Func h = gemm_tensor_cores(ln.out, w1, d, name + "_mm1", first);
    h.compute_root();
    GemmEpilogue second;
    second.bias = b2;
    second.residual = residual;
    second.out_type = BFloat(16);
    return gemm_tensor_cores(h, w2, hidden, name, second);
}

} // namespace aicf_apps

#endif
