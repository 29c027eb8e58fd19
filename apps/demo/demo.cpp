// The AICF demo: a transformer block's normalization and attention-score stages, written
// once as an algorithm, compiled by LLVM for this CPU and checked against a double-precision
// reference.
//
//   normalized = layernorm(x) * gamma + beta     (per row of a [rows][dim] activation)
//   scores     = softmax(normalized / sqrt(dim)) (per row)
//
// It prints the algorithm's lowered loop nest, the run time of the first realize (which
// compiles) and of later ones (which reuse the compiled code), and the largest error.

#include "dsl/aicf.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

using namespace aicf;

int main(int argc, char **argv) {
    const int rows = 256, dim = 1024;
    Buffer<float> x({dim, rows}, "x"), gamma({dim}, "gamma"), beta({dim}, "beta");
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < dim; c++) x(c, r) = dist(rng);
    for (int c = 0; c < dim; c++) {
        gamma(c) = 1.0f + 0.1f * dist(rng);
        beta(c) = 0.1f * dist(rng);
    }

    // The algorithm.
    Var c("c"), r("r");
    RDom k(0, dim, "k");
    Func mean("mean"), variance("variance"), normalized("normalized");
    Func row_max("row_max"), e("e"), denom("denom"), scores("scores");
    mean(r) = sum(x(k, r)) / float(dim);
    Expr centered = x(k, r) - mean(r);
    variance(r) = sum(centered * centered) / float(dim);
    normalized(c, r) = (x(c, r) - mean(r)) * rsqrt(variance(r) + 1e-5f) * gamma(c) + beta(c);
    Expr logits = normalized(c, r) / std::sqrt(float(dim));
    Func logit("logit");
    logit(c, r) = logits;
    row_max(r) = maximum(logit(k, r));
    e(c, r) = exp(logit(c, r) - row_max(r));
    denom(r) = sum(e(k, r));
    scores(c, r) = e(c, r) / denom(r);

    // Where each stage lives: row statistics and the exponentials are computed once and
    // stored; the normalization and the logits are recomputed where they are used.
    mean.compute_root();
    variance.compute_root();
    normalized.compute_root();
    row_max.compute_root();
    e.compute_root();
    denom.compute_root();

    std::printf("AICF demo: layernorm + softmax over a %d x %d float32 activation\n\n", rows, dim);
    std::printf("Lowered loop nest (AICF_DEBUG=2 prints every lowering pass):\n%s\n",
                scores.lowered_stmt().c_str());

    auto now = [] { return std::chrono::steady_clock::now(); };
    auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    auto t0 = now();
    Buffer<float> out = scores.realize({dim, rows});
    auto t1 = now();
    std::vector<double> times;
    for (int i = 0; i < 10; i++) {
        auto a = now();
        scores.realize(out);
        times.push_back(ms(a, now()));
    }
    std::sort(times.begin(), times.end());

    // The reference, in double precision.
    double max_err = 0;
    for (int row = 0; row < rows; row++) {
        double m = 0, v = 0;
        for (int i = 0; i < dim; i++) m += x(i, row);
        m /= dim;
        for (int i = 0; i < dim; i++) v += (x(i, row) - m) * (x(i, row) - m);
        v /= dim;
        std::vector<double> l(dim);
        double mx = -1e300, s = 0;
        for (int i = 0; i < dim; i++) {
            l[i] = ((x(i, row) - m) / std::sqrt(v + 1e-5) * gamma(i) + beta(i)) / std::sqrt(double(dim));
            mx = std::max(mx, l[i]);
        }
        for (int i = 0; i < dim; i++) s += std::exp(l[i] - mx);
        for (int i = 0; i < dim; i++) {
            double ref = std::exp(l[i] - mx) / s;
            max_err = std::max(max_err, std::fabs(out(i, row) - ref) / ref);
        }
    }

    std::printf("first realize (compile + run): %8.2f ms\n", ms(t0, t1));
    std::printf("later realize (median of 10):  %8.3f ms\n", times[times.size() / 2]);
    std::printf("largest relative error against float64: %.2e\n", max_err);
    bool ok = max_err < 1e-4;
    std::printf("%s\n", ok ? "demo: result correct" : "demo: RESULT WRONG");
    return ok ? 0 : 1;
}
