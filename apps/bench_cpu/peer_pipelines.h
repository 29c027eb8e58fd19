#ifndef AICF_APPS_BENCH_CPU_PEER_PIPELINES_H
#define AICF_APPS_BENCH_CPU_PEER_PIPELINES_H

// The CPU benchmarks' pipelines, each an algorithm and its schedule written once as a template
// over the library (`Lib`): AicfLib here, HalideLib in halide_peers.cpp. AICF's and Halide's
// languages share their spelling, so the same text compiled against either runs exactly the
// same algorithm under exactly the same schedule.

#include "dsl/aicf.h"

#include <cmath>
#include <string>
#include <vector>

namespace peer_pipelines {

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
    static Expr floor(const Expr &e) { return aicf::floor(e); }
    static Expr clamp(const Expr &e, int lo, int hi) { return aicf::clamp(e, lo, hi); }
    static Expr to_int(const Expr &e) { return aicf::cast<int>(e); }
    static Expr to_float(const Expr &e) { return aicf::cast<float>(e); }
    static Func mirror_image(const Buffer &b) { return aicf::BoundaryConditions::mirror_image(b); }
    static Func constant_exterior(const Buffer &b, float v) {
        return aicf::BoundaryConditions::constant_exterior(b, v);
    }
    static Func repeat_edge(const Buffer &b) { return aicf::BoundaryConditions::repeat_edge(b); }
};

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

// An image pyramid: `levels` - 1 levels of 2 x 2 averages, each computed at the root in
// parallel rows, then back up, each level the average of its own value and its coarser
// neighbour's, interpolated; the way up inlined into the output (so the output reads the
// coarsest level at 2^(levels - 1) points, and its bounds are unions of that many regions).
template <typename Lib> typename Lib::Func pyramid(const typename Lib::Buffer &in, int levels) {
    typename Lib::Var x("x"), y("y");
    std::vector<typename Lib::Func> down;
    typename Lib::Func level0("down0");
    level0(x, y) = in(x, y);
    down.push_back(level0);
    for (int l = 1; l < levels; l++) {
        typename Lib::Func d("down" + std::to_string(l));
        const typename Lib::Func &p = down.back();
        d(x, y) = (p(2 * x, 2 * y) + p(2 * x + 1, 2 * y) + p(2 * x, 2 * y + 1) +
                   p(2 * x + 1, 2 * y + 1)) *
                  0.25f;
        d.compute_root().parallel(y).vectorize(x, 16);
        down.push_back(d);
    }
    typename Lib::Func up = down.back();
    for (int l = levels - 2; l >= 0; l--) {
        typename Lib::Func u("up" + std::to_string(l));
        u(x, y) = down[size_t(l)](x, y) * 0.5f +
                  (up(x / 2, y / 2) * 0.75f + up(x / 2 + 1, y / 2 + 1) * 0.25f) * 0.5f;
        up = u;
    }
    up.parallel(y).vectorize(x, 16);
    return up;
}

// A chain of `stages` 5-point stencils of an input with a border of `stages` points (mins at
// -stages), every stage computed at the root in 128 x 32 tiles fused into one parallel loop:
// a deep pipeline whose bounds inference goes through fused tiles at every stage.
template <typename Lib>
typename Lib::Func stencil_chain(const typename Lib::Buffer &in, int stages) {
    typename Lib::Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi"), t("t");
    std::vector<typename Lib::Func> f;
    for (int i = 0; i < stages; i++) {
        typename Lib::Func g("stage" + std::to_string(i));
        if (i == 0) {
            g(x, y) = (in(x - 1, y) + in(x + 1, y) + in(x, y - 1) + in(x, y + 1)) * 0.25f;
        } else {
            const typename Lib::Func &p = f.back();
            g(x, y) = (p(x - 1, y) + p(x + 1, y) + p(x, y - 1) + p(x, y + 1)) * 0.25f;
        }
        g.tile(x, y, xo, yo, xi, yi, 128, 32).fuse(xo, yo, t).parallel(t).vectorize(xi, 16);
        if (i + 1 < stages) g.compute_root();
        f.push_back(g);
    }
    return f.back();
}

// Splits reduction `f` (an update over k of extent D) so that `lanes` vector lanes keep as
// many partial results, computed per row r of its consumer. Past one register's width (16
// floats with AVX-512), the lanes are several registers' independent chains of partial sums.
template <typename Lib>
void vectorize_reduction(typename Lib::Func &f, typename Lib::RDom &k, typename Lib::Var &r,
                         int lanes) {
    typename Lib::RVar ko("ko"), ki("ki");
    typename Lib::Var u("u");
    typename Lib::Func partial = f.update().split(k, ko, ki, lanes).rfactor(ki, u);
    partial.compute_at(f, r).vectorize(u).update().reorder(u, ko).vectorize(u);
}

// Row-wise layernorm over rows of D: each reduction vectorized by `lanes` lanes; fused by rows
// (statistics per row, just before the row is normalized) or one operator at a time (each
// statistic over all rows first).
template <typename Lib>
typename Lib::Func layernorm(const typename Lib::Buffer &in, int D, bool fused, int lanes = 16) {
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
        vectorize_reduction<Lib>(*f, k, r, lanes);
        if (fused) {
            f->compute_at(norm, r);
        } else {
            f->compute_root().parallel(r);
        }
    }
    return norm;
}

// Row-wise softmax: the maximum, exp, the sum, the quotient; fused by rows or one operator at
// a time, each reduction vectorized by `lanes` lanes.
template <typename Lib>
typename Lib::Func softmax(const typename Lib::Buffer &in, int D, bool fused, int lanes = 16) {
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
    vectorize_reduction<Lib>(mx, k, r, lanes);
    vectorize_reduction<Lib>(den, k, r, lanes);
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

// The schedule of Halide's own sgemm (its linear algebra app, row-major), for the product
// out(x, y) = sum over k in [0, K) of a(k, y) w(x, k), x in [0, N): w packed at the root into
// 32-column strips, 64 x 64 output tiles fused into one parallel loop, 4 x 32 blocks in
// registers. `a` is a buffer or a Func (computed at the root); rows > 0 bounds y to
// [0, rows). Like Halide's app, x is bounded to [0, N) unless `bound_width` is false: then
// the width is known only when the product is realized, as in a pipeline whose consumer
// decides it.
template <typename Lib, typename Src>
typename Lib::Func sgemm_product(const Src &a, const typename Lib::Buffer &w, int K, int N,
                                 int rows, const std::string &name, bool bound_width = true) {
    typename Lib::Var x("x"), y("y"), xt("xt"), yt("yt"), t("t"), xb("xb"), yb("yb"), k("k"),
        s("s");
    typename Lib::RDom r(0, K, name + "_r");
    typename Lib::Func strips(name + "_strips"), prod(name + "_prod"), out(name);
    strips(x, k, s) = w(s * 32 + x, k);
    prod(x, y) = 0.0f;
    prod(x, y) += a(r, y) * strips(x % 32, r, x / 32);
    out(x, y) = prod(x, y);
    if (bound_width) out.bound(x, 0, N);
    if (rows > 0) out.bound(y, 0, rows);
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

// The N x N x N matrix product A B under Halide's sgemm schedule.
template <typename Lib>
typename Lib::Func matmul(const typename Lib::Buffer &A, const typename Lib::Buffer &B, int N) {
    return sgemm_product<Lib>(A, B, N, N, N, "out");
}

// The MLP block of a transformer layer on the CPU, y = x + W2 GELU(W1 LayerNorm(x) + b1) + b2
// (GELU's tanh form), over T tokens of width D with a hidden width Hd. One operator at a time
// (every Func at the root, each over all tokens), or fused by blocks of 8 tokens (every
// intermediate computed per block, where it stays in cache).
template <typename Lib> struct Mlp {
    const typename Lib::Buffer &x, &w1, &b1, &w2, &b2;
    int D, Hd;

    // One operator at a time, each product under Halide's sgemm schedule (with its output's
    // width bounded, or not: see sgemm_product).
    typename Lib::Func build_sgemm(bool bound_widths = true) const {
        using Func = typename Lib::Func;
        typename Lib::Var d("d"), t("t"), h("h"), o("o");
        typename Lib::RDom kd(0, D, "kd");
        Func mean("mean"), var("var"), ln("ln"), act("act"), y("y");
        mean(t) = 0.0f;
        mean(t) += x(kd, t) / float(D);
        var(t) = 0.0f;
        var(t) += (x(kd, t) - mean(t)) * (x(kd, t) - mean(t)) / float(D);
        ln(d, t) = (x(d, t) - mean(t)) * Lib::rsqrt(var(t) + 1e-5f);
        Func h1 = sgemm_product<Lib>(ln, w1, D, Hd, 0, "h1", bound_widths);
        typename Lib::Expr v = h1(h, t) + b1(h);
        act(h, t) = 0.5f * v * (1.0f + Lib::tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
        Func h2 = sgemm_product<Lib>(act, w2, Hd, D, 0, "h2", bound_widths);
        y(o, t) = x(o, t) + h2(o, t) + b2(o);
        y.parallel(t).vectorize(o, 16);
        for (Func *f : {&mean, &var, &ln, &h1, &act, &h2})
            f->compute_root();
        for (Func *f : {&mean, &var}) {
            f->parallel(t);
            f->update().parallel(t);
        }
        ln.parallel(t).vectorize(d, 16);
        act.parallel(t).vectorize(h, 16);
        return y;
    }

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

enum class Resampling { Down2, Up2, Resize, ClampedBlur, MirroredBlur, BorderedBlur, ClampedUp2 };

// Image resampling, each output row a parallel task and each row 16 lanes at a time, over an
// input of w x h points (mins at 0, so 2x + 1 and x / 2 + 1 stay inside for the output
// sizes used):
// - Down2: each output the mean of a 2x2 block (lanes read at stride 2);
// - Up2: each output a blend of two neighbours at half resolution (lanes read x / 2);
// - Resize: bilinear by 0.7, source positions computed in float and converted to indices,
//   reading an intermediate computed per tile of 64 x 32 over that tile's footprint;
// - ClampedBlur: a 3x3 box blur of the image clamped at its edges, in tiles of 256 x 32;
// - MirroredBlur, BorderedBlur: the same of BoundaryConditions::mirror_image and of
//   constant_exterior (0 outside) of the image;
// - ClampedUp2: Up2 of BoundaryConditions::repeat_edge of the image, over the whole output.
template <typename Lib>
typename Lib::Func resample(const typename Lib::Buffer &in, int w, int h, Resampling kind) {
    typename Lib::Var x("x"), y("y"), xi("xi"), yi("yi");
    typename Lib::Func out("resampled");
    switch (kind) {
    case Resampling::Down2:
        out(x, y) = (in(2 * x, 2 * y) + in(2 * x + 1, 2 * y) + in(2 * x, 2 * y + 1) +
                     in(2 * x + 1, 2 * y + 1)) *
                    0.25f;
        out.parallel(y).vectorize(x, 16);
        break;
    case Resampling::Up2:
        out(x, y) = in(x / 2, y / 2) * 0.75f + in(x / 2 + 1, y / 2) * 0.25f;
        out.parallel(y).vectorize(x, 16);
        break;
    case Resampling::Resize: {
        typename Lib::Func scaled("scaled");
        scaled(x, y) = in(x, y) * 2.0f - 1.0f;
        const float step = 1 / 0.7f;
        typename Lib::Expr sx = Lib::to_float(x) * step, sy = Lib::to_float(y) * step;
        typename Lib::Expr ix = Lib::to_int(Lib::floor(sx)), iy = Lib::to_int(Lib::floor(sy));
        typename Lib::Expr fx = sx - Lib::to_float(ix), fy = sy - Lib::to_float(iy);
        out(x, y) = (scaled(ix, iy) * (1 - fx) + scaled(ix + 1, iy) * fx) * (1 - fy) +
                    (scaled(ix, iy + 1) * (1 - fx) + scaled(ix + 1, iy + 1) * fx) * fy;
        out.tile(x, y, xi, yi, 64, 32).parallel(y).vectorize(xi, 16);
        scaled.compute_at(out, x).vectorize(x, 16);
        break;
    }
    case Resampling::ClampedUp2: {
        typename Lib::Func edge = Lib::repeat_edge(in);
        out(x, y) = edge(x / 2, y / 2) * 0.75f + edge(x / 2 + 1, y / 2) * 0.25f;
        out.parallel(y).vectorize(x, 16);
        break;
    }
    case Resampling::ClampedBlur:
    case Resampling::MirroredBlur:
    case Resampling::BorderedBlur: {
        typename Lib::Func clamped("clamped"), bx("blur_x");
        if (kind == Resampling::MirroredBlur)
            clamped = Lib::mirror_image(in);
        else if (kind == Resampling::BorderedBlur)
            clamped = Lib::constant_exterior(in, 0.0f);
        else
            clamped(x, y) = in(Lib::clamp(x, 0, w - 1), Lib::clamp(y, 0, h - 1));
        bx(x, y) = (clamped(x - 1, y) + clamped(x, y) + clamped(x + 1, y)) * (1.0f / 3);
        out(x, y) = (bx(x, y - 1) + bx(x, y) + bx(x, y + 1)) * (1.0f / 3);
        out.tile(x, y, xi, yi, 256, 32).parallel(y).vectorize(xi, 16);
        bx.compute_at(out, x).vectorize(x, 16);
        break;
    }
    }
    return out;
}

} // namespace peer_pipelines

#endif
