// AICF against Halide 14, schedule for schedule. Each pipeline is written once, as a template
// over the library (`Lib`: aicf or Halide, whose languages share their spelling), so the two
// run exactly the same algorithm under exactly the same schedule; the only differences are
// the compilers'. Both use fused multiply-adds (AICF's host-fma target; Halide's host target
// fuses by default) and the same number of threads.

#include "halide_peers.h"

#include <cstdio>

#ifndef AICF_HAVE_HALIDE

namespace halide_peers {

void compare_with_halide(int) {
    std::printf("%-28s Halide 14 was not found when bench_cpu was built (Debian: "
                "libhalide14-0-dev, which scripts/bench_cpu.sh installs)\n",
                "Halide peer");
}

} // namespace halide_peers

#else

#include "Halide.h"
#include "MatmulCPU.h"
#include "dsl/aicf.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace halide_peers {

namespace {

struct AicfLib {
    using Func = aicf::Func;
    using Var = aicf::Var;
    using RDom = aicf::RDom;
    using RVar = aicf::RVar;
    using Expr = aicf::Expr;
    using Buffer = aicf::Buffer<float>;
    static Expr exp(const Expr &e) { return aicf::exp(e); }
    static Expr tanh(const Expr &e) { return aicf::tanh(e); }
    static Expr rsqrt(const Expr &e) { return aicf::rsqrt(e); }
    static Expr max(const Expr &a, const Expr &b) { return aicf::max(a, b); }
    static Expr lowest() { return aicf::Expr(-INFINITY); }
};

struct HalideLib {
    using Func = Halide::Func;
    using Var = Halide::Var;
    using RDom = Halide::RDom;
    using RVar = Halide::RVar;
    using Expr = Halide::Expr;
    using Buffer = Halide::Buffer<float>;
    static Expr exp(const Expr &e) { return Halide::exp(e); }
    static Expr tanh(const Expr &e) { return Halide::tanh(e); }
    static Expr rsqrt(const Expr &e) { return 1.0f / Halide::sqrt(e); }
    static Expr max(const Expr &a, const Expr &b) { return Halide::max(a, b); }
    static Expr lowest() { return Halide::Expr(-INFINITY); }
};

// ---------------------------------------------------------------------------------------
// The pipelines.

enum class BlurSchedule { Root, Tiled, SlidingWindow };

// A 3x3 box blur of an input with a one-point border (mins at -1).
template <typename Lib>
typename Lib::Func blur(const typename Lib::Buffer &in, BlurSchedule schedule) {
    typename Lib::Var x("x"), y("y"), xi("xi"), yi("yi");
    typename Lib::Func bx("blur_x"), by("blur_y");
    bx(x, y) = (in(x - 1, y) + in(x, y) + in(x + 1, y)) * (1.0f / 3);
    by(x, y) = (bx(x, y - 1) + bx(x, y) + bx(x, y + 1)) * (1.0f / 3);
    switch (schedule) {
    case BlurSchedule::Root:
        bx.compute_root().parallel(y).vectorize(x, 16);
        by.parallel(y).vectorize(x, 16);
        break;
    case BlurSchedule::Tiled:
        by.tile(x, y, xi, yi, 256, 32).parallel(y).vectorize(xi, 16);
        bx.compute_at(by, x).vectorize(x, 16);
        break;
    case BlurSchedule::SlidingWindow:
        by.split(y, y, yi, 32).parallel(y).vectorize(x, 16);
        bx.store_at(by, y).compute_at(by, yi).vectorize(x, 16);
        break;
    }
    return by;
}

// Splits reduction `f` (an update over k of extent D) so that 16 vector lanes keep 16 partial
// results, computed per row r of its consumer.
template <typename Lib>
void vectorize_reduction(typename Lib::Func &f, typename Lib::RDom &k, typename Lib::Var &r) {
    typename Lib::RVar ko("ko"), ki("ki");
    typename Lib::Var u("u");
    typename Lib::Func partial = f.update().split(k, ko, ki, 16).rfactor(ki, u);
    partial.compute_at(f, r).vectorize(u).update().reorder(u, ko).vectorize(u);
}

// Row-wise layernorm over rows of D: each reduction vectorized by 16 lanes; fused by rows
// (statistics per row, just before the row is normalized) or one operator at a time (each
// statistic over all rows first).
template <typename Lib>
typename Lib::Func layernorm(const typename Lib::Buffer &in, int D, bool fused) {
    typename Lib::Var c("c"), r("r");
    typename Lib::RDom k(0, D, "k");
    typename Lib::Func mean("mean"), var("var"), norm("norm");
    mean(r) = 0.0f;
    mean(r) += in(k, r);
    var(r) = 0.0f;
    var(r) += (in(k, r) - mean(r) / float(D)) * (in(k, r) - mean(r) / float(D));
    norm(c, r) = (in(c, r) - mean(r) / float(D)) * Lib::rsqrt(var(r) / float(D) + 1e-5f);
    norm.parallel(r).vectorize(c, 16);
    for (typename Lib::Func *f : {&mean, &var}) {
        vectorize_reduction<Lib>(*f, k, r);
        if (fused) {
            f->compute_at(norm, r);
        } else {
            f->compute_root().parallel(r);
        }
    }
    return norm;
}

// Row-wise softmax: the maximum, exp, the sum, the quotient; fused by rows or one operator at
// a time.
template <typename Lib>
typename Lib::Func softmax(const typename Lib::Buffer &in, int D, bool fused) {
    typename Lib::Var c("c"), r("r");
    typename Lib::RDom k(0, D, "k");
    typename Lib::Func mx("mx"), e("e"), den("den"), sm("sm");
    mx(r) = Lib::lowest();
    mx(r) = Lib::max(mx(r), in(k, r));
    e(c, r) = Lib::exp(in(c, r) - mx(r));
    den(r) = 0.0f;
    den(r) += e(k, r);
    sm(c, r) = e(c, r) / den(r);
    sm.parallel(r).vectorize(c, 16);
    vectorize_reduction<Lib>(mx, k, r);
    vectorize_reduction<Lib>(den, k, r);
    if (fused) {
        mx.compute_at(sm, r);
        e.compute_at(sm, r).vectorize(c, 16);
        den.compute_at(sm, r);
    } else {
        mx.compute_root().parallel(r);
        e.compute_root().parallel(r).vectorize(c, 16);
        den.compute_root().parallel(r);
    }
    return sm;
}

// The schedule of Halide's own sgemm (its linear algebra app, row-major): B packed at the root
// into 32-column strips, 64 x 64 output tiles as parallel tasks, 4 x 32 blocks in registers.
template <typename Lib>
typename Lib::Func matmul(const typename Lib::Buffer &A, const typename Lib::Buffer &B, int N) {
    typename Lib::Var x("x"), y("y"), xt("xt"), yt("yt"), t("t"), xb("xb"), yb("yb"), k("k"),
        s("s");
    typename Lib::RDom r(0, N, "r");
    typename Lib::Func strips("strips"), prod("prod"), out("out");
    strips(x, k, s) = B(s * 32 + x, k);
    prod(x, y) = 0.0f;
    prod(x, y) += A(r, y) * strips(x % 32, r, x / 32);
    out(x, y) = prod(x, y);
    out.bound(x, 0, N).bound(y, 0, N);
    out.tile(x, y, xt, yt, x, y, 64, 64)
        .fuse(xt, yt, t)
        .parallel(t)
        .tile(x, y, xb, yb, x, y, 32, 4)
        .vectorize(x, 16)
        .unroll(x)
        .unroll(y);
    strips.compute_root()
        .bound(s, 0, N / 32)
        .bound(x, 0, 32)
        .reorder(x, k, s)
        .parallel(s)
        .vectorize(x, 16);
    prod.compute_at(out, xb).vectorize(x, 16).unroll(x).unroll(y);
    typename Lib::RVar ro("ro"), ri("ri");
    prod.update()
        .split(r, ro, ri, 2)
        .reorder(x, y, ri, ro)
        .vectorize(x, 16)
        .unroll(x)
        .unroll(y)
        .unroll(ri);
    return out;
}

// The MLP block of a transformer layer on the CPU, y = x + W2 GELU(W1 LayerNorm(x) + b1) + b2
// (GELU's tanh form), over T tokens of width D with a hidden width Hd. One operator at a time
// (every Func at the root, each over all tokens), or fused by blocks of 8 tokens (every
// intermediate computed per block, where it stays in cache).
template <typename Lib> struct Mlp {
    const typename Lib::Buffer &x, &w1, &b1, &w2, &b2;
    int D, Hd;

    typename Lib::Func build(bool fused) const {
        using Func = typename Lib::Func;
        typename Lib::Var d("d"), t("t"), h("h"), o("o"), to("to"), ti("ti");
        typename Lib::RDom kd(0, D, "kd"), kh(0, Hd, "kh");
        Func mean("mean"), var("var"), ln("ln"), h1("h1"), act("act"), h2("h2"), y("y");
        mean(t) = 0.0f;
        mean(t) += x(kd, t) / float(D);
        var(t) = 0.0f;
        var(t) += (x(kd, t) - mean(t)) * (x(kd, t) - mean(t)) / float(D);
        ln(d, t) = (x(d, t) - mean(t)) * Lib::rsqrt(var(t) + 1e-5f);
        h1(h, t) = b1(h);
        h1(h, t) += ln(kd, t) * w1(h, kd);
        typename Lib::Expr v = h1(h, t);
        act(h, t) = 0.5f * v * (1.0f + Lib::tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
        h2(o, t) = b2(o);
        h2(o, t) += act(kh, t) * w2(o, kh);
        y(o, t) = x(o, t) + h2(o, t);
        if (fused) {
            y.split(t, to, ti, 8).parallel(to).vectorize(o, 16);
            for (Func *f : {&mean, &var, &ln, &h1, &act, &h2})
                f->compute_at(y, to);
        } else {
            y.parallel(t).vectorize(o, 16);
            for (Func *f : {&mean, &var, &ln, &h1, &act, &h2})
                f->compute_root().parallel(t);
        }
        ln.vectorize(d, 16);
        act.vectorize(h, 16);
        h1.vectorize(h, 16).update().reorder(h, kd, t).vectorize(h, 16);
        h2.vectorize(o, 16).update().reorder(o, kh, t).vectorize(o, 16);
        if (!fused) {
            for (Func *f : {&mean, &var, &h1, &h2})
                f->update().parallel(t);
        }
        return y;
    }
};

// ---------------------------------------------------------------------------------------
// Running both.

// Host data both libraries read: an AICF buffer, and a Halide buffer over the same memory.
struct Shared {
    aicf::Buffer<float> aicf;
    Halide::Buffer<float> halide;
    Shared(int w, int h, int border, unsigned seed) : aicf({w + 2 * border, h + 2 * border}) {
        std::mt19937 rng(seed);
        std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
        float *p = aicf.data();
        for (int64_t i = 0; i < int64_t(w + 2 * border) * (h + 2 * border); i++)
            p[i] = dist(rng);
        halide = Halide::Buffer<float>(p, {w + 2 * border, h + 2 * border});
        if (border) {
            aicf.set_min({-border, -border});
            halide.set_min(-border, -border);
        }
    }
};

double ms_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
}

// The median times of f and g, run in alternating rounds of three, the first of each round
// untimed: both libraries' worker threads spin for a while after a parallel loop (OpenMP's for
// AICF, Halide's own pool), and a run that follows the other library's at once shares the
// cores with its spinning threads. So each timed run follows one of its own library.
std::pair<double, double> alternating_rounds(const std::function<void()> &f,
                                             const std::function<void()> &g, int rounds) {
    std::vector<double> tf, tg;
    auto round = [](const std::function<void()> &h, std::vector<double> &times) {
        h();
        for (int i = 0; i < 2; i++) {
            auto start = std::chrono::steady_clock::now();
            h();
            times.push_back(ms_since(start));
        }
    };
    for (int i = 0; i < rounds; i++) {
        round(f, tf);
        round(g, tg);
    }
    std::sort(tf.begin(), tf.end());
    std::sort(tg.begin(), tg.end());
    return {tf[tf.size() / 2], tg[tg.size() / 2]};
}

// Compiles both (timed), runs them alternately, and prints the row.
void row(const char *name, aicf::Func a, Halide::Func h, int w, int hgt, int runs) {
    const aicf::Target fma("host-fma");
    aicf::Buffer<float> a_out({w, hgt});
    Halide::Buffer<float> h_out(w, hgt);
    aicf::Pipeline ap(a);
    auto t0 = std::chrono::steady_clock::now();
    ap.compile_jit(fma);
    const double a_compile = ms_since(t0);
    t0 = std::chrono::steady_clock::now();
    h.compile_jit(Halide::get_host_target());
    const double h_compile = ms_since(t0);
    aicf::Realization into(std::vector<aicf::Buffer<>>{aicf::Buffer<>(a_out)});
    auto [a_ms, h_ms] =
        alternating_rounds([&] { ap.realize(into, fma); }, [&] { h.realize(h_out); }, runs);
    // The largest difference, relative to the largest value (normalized outputs cross zero).
    double worst = 0, largest = 1e-30;
    for (int y = 0; y < hgt; y++) {
        for (int x = 0; x < w; x++) {
            const double u = a_out(x, y), v = h_out(x, y);
            worst = std::max(worst, std::abs(u - v));
            largest = std::max(largest, std::abs(v));
        }
    }
    worst /= largest;
    std::printf("%-28s %8.3f ms (AICF)           | Halide %8.3f ms              | AICF time / "
                "Halide %5.2fx | max diff %.1e | JIT compile %6.0f / %6.0f ms\n",
                name, a_ms, h_ms, a_ms / h_ms, worst, a_compile, h_compile);
}

} // namespace

void compare_with_halide(int threads) {
    // Halide's JIT thread pool reads this when it starts.
    setenv("HL_NUM_THREADS", std::to_string(threads).c_str(), 1);
    std::printf("Against Halide 14, the same algorithm and schedule (%d threads, fused "
                "multiply-adds; JIT compile: AICF / Halide, whose first includes its runtime):\n",
                threads);
    {
        const int W = 2048, H = 2048;
        Shared in(W, H, 1, 11);
        const std::pair<const char *, BlurSchedule> schedules[] = {
            {"blur 3x3 2048^2, root", BlurSchedule::Root},
            {"blur 3x3 2048^2, tiled", BlurSchedule::Tiled},
            {"blur 3x3 2048^2, sliding", BlurSchedule::SlidingWindow}};
        for (const auto &[name, s] : schedules)
            row(name, blur<AicfLib>(in.aicf, s), blur<HalideLib>(in.halide, s), W, H, 9);
    }
    {
        const int D = 1024, R = 4096;
        Shared in(D, R, 0, 12);
        row("layernorm 4096x1024, by op", layernorm<AicfLib>(in.aicf, D, false),
            layernorm<HalideLib>(in.halide, D, false), D, R, 9);
        row("layernorm 4096x1024, fused", layernorm<AicfLib>(in.aicf, D, true),
            layernorm<HalideLib>(in.halide, D, true), D, R, 9);
        row("softmax 4096x1024, by op", softmax<AicfLib>(in.aicf, D, false),
            softmax<HalideLib>(in.halide, D, false), D, R, 9);
        row("softmax 4096x1024, fused", softmax<AicfLib>(in.aicf, D, true),
            softmax<HalideLib>(in.halide, D, true), D, R, 9);
    }
    {
        const int T = 256, D = 512, Hd = 2048;
        Shared x(D, T, 0, 15), w1(Hd, D, 0, 16), b1(Hd, 1, 0, 17), w2(D, Hd, 0, 18),
            b2(D, 1, 0, 19);
        // Weights of the size a trained layer has (about 1 / sqrt(fan-in)).
        for (Shared *w : {&w1, &w2}) {
            const float scale = 1.0f / std::sqrt(float(w == &w1 ? D : Hd));
            for (int64_t i = 0; i < int64_t(w->aicf.number_of_elements()); i++)
                w->aicf.data()[i] *= scale;
        }
        aicf::Buffer<float> b1a(b1.aicf.data(), std::vector<int>{Hd}),
            b2a(b2.aicf.data(), std::vector<int>{D});
        Halide::Buffer<float> b1h(b1.aicf.data(), Hd), b2h(b2.aicf.data(), D);
        const Mlp<AicfLib> a{x.aicf, w1.aicf, b1a, w2.aicf, b2a, D, Hd};
        const Mlp<HalideLib> h{x.halide, w1.halide, b1h, w2.halide, b2h, D, Hd};
        row("MLP 256x512x2048, by op", a.build(false), h.build(false), D, T, 5);
        row("MLP 256x512x2048, fused", a.build(true), h.build(true), D, T, 5);
    }
    {
        const int N = 1024;
        Shared A(N, N, 0, 13), B(N, N, 0, 14);
        row("matmul 1024^3, Halide sgemm", matmul<AicfLib>(A.aicf, B.aicf, N),
            matmul<HalideLib>(A.halide, B.halide, N), N, N, 9);
        // Each library's best schedule: AICF's own (apps/common/MatmulCPU.h) against
        // Halide's sgemm schedule in Halide.
        row("matmul 1024^3, AICF's own",
            aicf_apps::matmul_cpu(A.aicf, B.aicf, N,
                                  aicf_apps::cpu_matmul_block(aicf::Target("host-fma")), "out"),
            matmul<HalideLib>(A.halide, B.halide, N), N, N, 9);
    }
}

} // namespace halide_peers

#endif
