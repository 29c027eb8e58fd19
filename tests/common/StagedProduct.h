#ifndef AICF_TESTS_STAGED_PRODUCT_H
#define AICF_TESTS_STAGED_PRODUCT_H

// out(x, y) = the sum over k in [0, K) of a(k, y) B(x, k), on GPU threads: out in 16 x 8 tiles,
// the product's accumulator per tile, its reduction in steps of 8 along k, and `a` computed
// at each step (staged in the block's shared memory: its loops are the caller's to
// schedule). The last step is shorter where 8 does not divide K.

#include "dsl/aicf.h"

namespace aicf_test {

inline aicf::Func staged_product(aicf::Func a, const aicf::Buffer<float> &B, int K) {
    using namespace aicf;
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    RVar ko("ko"), ki("ki");
    RDom k(0, K, "k");
    Func prod("prod"), out("out");
    prod(x, y) = 0.0f;
    prod(x, y) += a(k, y) * B(x, k);
    out(x, y) = prod(x, y);
    out.gpu_tile(x, y, bx, by, tx, ty, 16, 8);
    prod.compute_at(out, bx).gpu_threads(x, y);
    prod.update().split(k, ko, ki, 8).reorder(ki, x, y, ko).gpu_threads(x, y);
    a.compute_at(prod, ko);
    return out;
}

} // namespace aicf_test

#endif
