#ifndef AICF_APPS_DEMO_BLOCK_H
#define AICF_APPS_DEMO_BLOCK_H

// The demo's algorithm, written once: a layernorm followed by a softmax over each row,
//
//   normalized = layernorm(x) * gamma + beta     (per row of a [rows][dim] activation)
//   scores     = softmax(normalized / sqrt(dim)) (per row)
//
// over any source of x, gamma and beta that can be called at a point: concrete Buffers (the
// demo's JIT runs) or ImageParams (its generator, compiled ahead of time). Its CPU schedules
// give every stage the same loops and differ in where the stages are computed.

#include "dsl/aicf.h"

#include <cmath>
#include <limits>

namespace aicf_apps {

struct DemoBlock {
    aicf::Var c{"c"}, r{"r"};
    aicf::Func input{"input"}, mean{"mean"}, variance{"variance"}, normalized{"normalized"};
    aicf::Func logit{"logit"}, row_max{"row_max"}, e{"e"}, denom{"denom"}, scores;
    aicf::RDom k;
    int dim;

    // `out` is the Func the block defines as its scores (a generator's Output).
    template <typename X, typename P>
    DemoBlock(const X &x, const P &gamma, const P &beta, int dim,
              aicf::Func out = aicf::Func("scores"))
        : scores(out), k(0, dim, "k"), dim(dim) {
        using namespace aicf;
        input(c, r) = x(c, r);
        mean(r) = 0.0f;
        mean(r) += input(k, r) / float(dim);
        variance(r) = 0.0f;
        variance(r) += (input(k, r) - mean(r)) * (input(k, r) - mean(r)) / float(dim);
        normalized(c, r) =
            (input(c, r) - mean(r)) * rsqrt(variance(r) + 1e-5f) * gamma(c) + beta(c);
        logit(c, r) = normalized(c, r) / std::sqrt(float(dim));
        row_max(r) = -std::numeric_limits<float>::infinity();
        row_max(r) = max(row_max(r), logit(k, r));
        e(c, r) = exp(logit(c, r) - row_max(r));
        denom(r) = 0.0f;
        denom(r) += e(k, r);
        scores(c, r) = e(c, r) / denom(r);
    }

    // Both CPU schedules give every stage the same loops: rows in parallel, elementwise
    // stages vectorized along the row, and each row reduction split so that the 16 lanes of a
    // vector keep 16 partial results (rfactor). They differ only in where the stages are
    // computed: over the whole tensor (operator by operator) or inside the loop over rows (one
    // dataflow region). The output's row length is declared (bound): a row's intermediates
    // then have a constant size, and the fused schedule keeps them in arrays on the stack.
    void schedule_cpu(bool region) {
        using namespace aicf;
        Var u("u");
        RVar ko("ko"), ki("ki");
        for (Func *f : {&mean, &variance, &row_max, &denom}) {
            Func partial = f->update().split(k, ko, ki, 16).rfactor(ki, u);
            partial.compute_at(*f, r).vectorize(u).update().reorder(u, ko).vectorize(u);
            if (region) {
                f->compute_at(scores, r);
            } else {
                f->compute_root().parallel(r);
            }
        }
        scores.parallel(r).vectorize(c, 16).bound(c, 0, dim);
        for (Func *f : {&normalized, &e}) {
            if (region) {
                f->compute_at(scores, r).vectorize(c, 16);
            } else {
                f->compute_root().parallel(r).vectorize(c, 16);
            }
        }
    }
};

} // namespace aicf_apps

#endif
