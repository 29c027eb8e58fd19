// AICF against Halide 14, schedule for schedule. Each pipeline is written once, as a template
// over the library (`Lib`: aicf or Halide, whose languages share their spelling), so the two
// run exactly the same algorithm under exactly the same schedule; the only differences are
// the compilers'. Both use fused multiply-adds (AICF's host-fma target; Halide's host target
// fuses by default) and the same number of threads.

#include "halide_peers.h"

#include <cstdio>

#ifndef AICF_HAVE_HALIDE

namespace halide_peers {

void compare_with_halide(int, const std::string &) {
    std::printf("%-28s Halide 14 was not found when bench_cpu was built (Debian: "
                "libhalide14-0-dev, which scripts/bench_cpu.sh installs)\n",
                "Halide peer");
}

} // namespace halide_peers

#else

#include "Halide.h"
#include "MatmulCPU.h"
#include "Timing.h"
#include "dsl/aicf.h"
#include "peer_pipelines.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace halide_peers {

namespace {

using namespace peer_pipelines;

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
    static Expr floor(const Expr &e) { return Halide::floor(e); }
    static Expr clamp(const Expr &e, int lo, int hi) { return Halide::clamp(e, lo, hi); }
    static Expr to_int(const Expr &e) { return Halide::cast<int>(e); }
    static Expr to_float(const Expr &e) { return Halide::cast<float>(e); }
    static Func mirror_image(const Buffer &b) {
        return Halide::BoundaryConditions::mirror_image(b);
    }
    static Func constant_exterior(const Buffer &b, float v) {
        return Halide::BoundaryConditions::constant_exterior(b, v);
    }
    static Func repeat_edge(const Buffer &b) { return Halide::BoundaryConditions::repeat_edge(b); }
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

// The fastest schedule of each library over a pipeline's rows.
struct Best {
    double aicf_ms = INFINITY, halide_ms = INFINITY;
    std::string aicf_schedule, halide_schedule;
};

// The rows to run (see compare_with_halide): a name must contain it.
std::string only_rows;
bool skipped(const char *name) {
    return std::string(name).find(only_rows) == std::string::npos;
}

// Compiles both (timed), runs them alternately, and prints the row; counts it in `best`
// under the name of its schedule.
void row(const char *name, aicf::Func a, Halide::Func h, int w, int hgt, int runs, Best &best,
         const char *schedule) {
    if (skipped(name)) return;
    const aicf::Target fma("host-fma");
    aicf::Buffer<float> a_out({w, hgt});
    Halide::Buffer<float> h_out(w, hgt);
    aicf::Pipeline ap(a);
    // Each compile starts once the worker threads of the runs before have gone to sleep (see
    // median_ms_alternating): spinning, they would share the cores with the compiler.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto t0 = std::chrono::steady_clock::now();
    ap.compile_jit(fma);
    const double a_compile = ms_since(t0);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    t0 = std::chrono::steady_clock::now();
    h.compile_jit(Halide::get_host_target());
    const double h_compile = ms_since(t0);
    aicf::Realization into(std::vector<aicf::Buffer<>>{aicf::Buffer<>(a_out)});
    auto [a_ms, h_ms] = aicf_apps::median_ms_alternating([&] { ap.realize(into, fma); },
                                                         [&] { h.realize(h_out); }, runs);
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
    std::printf("%-40s %8.3f ms (AICF)       | Halide %8.3f ms              | AICF time / "
                "Halide %5.2fx | max diff %.1e | JIT compile %6.0f / %6.0f ms\n",
                name, a_ms, h_ms, a_ms / h_ms, worst, a_compile, h_compile);
    if (a_ms < best.aicf_ms) best.aicf_ms = a_ms, best.aicf_schedule = schedule;
    if (h_ms < best.halide_ms) best.halide_ms = h_ms, best.halide_schedule = schedule;
}

// Each library's fastest schedule of the pipeline against the other's.
void best_row(const char *name, const Best &best) {
    if (skipped(name) || !std::isfinite(best.aicf_ms)) return;
    const std::string a = "(AICF: " + best.aicf_schedule + ")",
                      h = "(" + best.halide_schedule + ")";
    std::printf("%-40s %8.3f ms %-20s | Halide %8.3f ms %-12s | AICF time / Halide %5.2fx\n", name,
                best.aicf_ms, a.c_str(), best.halide_ms, h.c_str(), best.aicf_ms / best.halide_ms);
}

// JIT compile times, the median of `builds` fresh builds of each library's pipeline made by
// `make(i)`, alternating: build i reads inputs one row taller than build i - 1, so AICF's
// compiled-code cache (keyed by the pipeline and its buffers' shapes) does not answer, while
// the work stays the same. One compile per row, as the rows above print, varies by a
// quarter on this kind of machine.
template <typename Make> void compile_row(const char *name, Make make, int builds) {
    if (skipped(name)) return;
    const aicf::Target fma("host-fma");
    std::vector<double> a, h;
    for (int i = 0; i < builds; i++) {
        auto [af, hf, inputs] = make(i); // `inputs` keeps the build's data alive
        aicf::Pipeline ap(af);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        auto t0 = std::chrono::steady_clock::now();
        ap.compile_jit(fma);
        a.push_back(ms_since(t0));
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        t0 = std::chrono::steady_clock::now();
        hf.compile_jit(Halide::get_host_target());
        h.push_back(ms_since(t0));
    }
    std::sort(a.begin(), a.end());
    std::sort(h.begin(), h.end());
    const double am = a[a.size() / 2], hm = h[h.size() / 2];
    std::printf("%-40s %8.0f ms (AICF)       | Halide %8.0f ms              | AICF time / "
                "Halide %5.2fx (median of %d builds each)\n",
                name, am, hm, am / hm, builds);
}

} // namespace

void compare_with_halide(int threads, const std::string &only) {
    only_rows = only;
    // Halide's JIT thread pool reads this when it starts.
    setenv("HL_NUM_THREADS", std::to_string(threads).c_str(), 1);
    std::printf("Against Halide 14, the same algorithm and schedule (%d threads, fused "
                "multiply-adds; JIT compile: AICF / Halide, whose first includes its runtime):\n",
                threads);
    {
        const int W = 2048, H = 2048;
        Shared in(W, H, 1, 11);
        const std::tuple<const char *, const char *, BlurSchedule> schedules[] = {
            {"blur 3x3 2048^2, root", "root", BlurSchedule::Root},
            {"blur 3x3 2048^2, tiled", "tiled", BlurSchedule::Tiled},
            {"blur 3x3 2048^2, sliding", "sliding", BlurSchedule::SlidingWindow}};
        Best best;
        for (const auto &[name, schedule, s] : schedules)
            row(name, blur<AicfLib>(in.aicf, s), blur<HalideLib>(in.halide, s), W, H, 9, best,
                schedule);
        best_row("blur 3x3 2048^2, best of each", best);
    }
    {
        const int W = 2048, H = 2048;
        Shared in(W, H, 0, 21);
        const std::tuple<const char *, Resampling, int, int> kinds[] = {
            {"downsample 2x of 2048^2", Resampling::Down2, W / 2 - 1, H / 2 - 1},
            {"upsample 2x of 2048^2", Resampling::Up2, 2 * W - 4, 2 * H - 4},
            {"bilinear resize 0.7, tiled", Resampling::Resize, 1400, 1400},
            {"clamped blur 3x3 2048^2, tiled", Resampling::ClampedBlur, W, H},
            {"mirror_image blur 3x3 2048^2, tiled", Resampling::MirroredBlur, W, H},
            {"constant_exterior blur 3x3 2048^2, tiled", Resampling::BorderedBlur, W, H},
            {"repeat_edge upsample 2x of 2048^2", Resampling::ClampedUp2, 2 * W, 2 * H}};
        for (const auto &[name, kind, w, h] : kinds) {
            Best best;
            row(name, resample<AicfLib>(in.aicf, W, H, kind),
                resample<HalideLib>(in.halide, W, H, kind), w, h, 9, best, "");
        }
    }
    {
        // The output stays 64 points inside the input: the way up reads one coarsest point
        // past its own.
        const int W = 2048, H = 2048;
        Shared in(W, H, 0, 22);
        Best best;
        row("pyramid, 5 levels", pyramid<AicfLib>(in.aicf, 5), pyramid<HalideLib>(in.halide, 5),
            W - 64, H - 64, 9, best, "");
    }
    {
        const int W = 2048, H = 2048, stages = 5;
        Shared in(W, H, stages, 20);
        Best best;
        row("stencil chain, 5 stages", stencil_chain<AicfLib>(in.aicf, stages),
            stencil_chain<HalideLib>(in.halide, stages), W, H, 9, best, "root, fused tiles");
    }
    {
        const int D = 1024, R = 4096;
        Shared in(D, R, 0, 12);
        // 16 lanes are one AVX-512 register of partial results; 64 are four independent
        // chains of them.
        auto schedules = [&](const std::string &what, auto aicf_build, auto halide_build) {
            const std::tuple<const char *, bool, int> all[] = {
                {"by op", false, 16}, {"fused", true, 16}, {"fused x64", true, 64}};
            Best best;
            for (const auto &[schedule, fused, lanes] : all) {
                const std::string name = what + " 4096x1024, " + schedule;
                row(name.c_str(), aicf_build(fused, lanes), halide_build(fused, lanes), D, R, 9,
                    best, schedule);
            }
            best_row((what + " 4096x1024, best").c_str(), best);
        };
        schedules(
            "layernorm", [&](bool f, int l) { return layernorm<AicfLib>(in.aicf, D, f, l); },
            [&](bool f, int l) { return layernorm<HalideLib>(in.halide, D, f, l); });
        schedules(
            "softmax", [&](bool f, int l) { return softmax<AicfLib>(in.aicf, D, f, l); },
            [&](bool f, int l) { return softmax<HalideLib>(in.halide, D, f, l); });
        // 128 rows (512 KiB) stay in each core's cache: the arithmetic, not the memory, sets
        // the time.
        const int C = 128;
        Shared small(D, C, 0, 20);
        Best ln_small, sm_small;
        row("layernorm 128x1024, fused", layernorm<AicfLib>(small.aicf, D, true),
            layernorm<HalideLib>(small.halide, D, true), D, C, 15, ln_small, "fused");
        row("softmax 128x1024, fused", softmax<AicfLib>(small.aicf, D, true),
            softmax<HalideLib>(small.halide, D, true), D, C, 15, sm_small, "fused");
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
        Best best;
        row("MLP 256x512x2048, by op", a.build(false), h.build(false), D, T, 5, best, "by op");
        row("MLP 256x512x2048, fused", a.build(true), h.build(true), D, T, 5, best, "fused");
        row("MLP 256x512x2048, sgemm ops", a.build_sgemm(), h.build_sgemm(), D, T, 5, best,
            "sgemm ops");
        // The products' widths left to bounds inference: compile time over fused tiles of
        // extents known only at run time.
        Best unbounded;
        row("MLP, sgemm ops, widths free", a.build_sgemm(false), h.build_sgemm(false), D, T, 5,
            unbounded, "sgemm ops, widths free");
        best_row("MLP 256x512x2048, best", best);
    }
    {
        const int N = 1024;
        Shared A(N, N, 0, 13), B(N, N, 0, 14);
        Best best, own;
        row("matmul 1024^3, Halide sgemm", matmul<AicfLib>(A.aicf, B.aicf, N),
            matmul<HalideLib>(A.halide, B.halide, N), N, N, 9, best, "sgemm");
        // AICF's own schedule (apps/common/MatmulCPU.h), which Halide's language does not
        // spell the same way, against Halide's sgemm schedule again.
        row("matmul 1024^3, AICF's own",
            aicf_apps::matmul_cpu(A.aicf, B.aicf, N,
                                  aicf_apps::cpu_matmul_block(aicf::Target("host-fma")), "out"),
            matmul<HalideLib>(A.halide, B.halide, N), N, N, 9, own, "own");
        if (own.aicf_ms < best.aicf_ms) best.aicf_ms = own.aicf_ms, best.aicf_schedule = "own";
        best.halide_ms = std::min(best.halide_ms, own.halide_ms);
        best_row("matmul 1024^3, best", best);
    }
    // The pipelines whose compile takes longest, and the sliding window, compiled anew.
    if (only_rows.empty())
        std::printf(
            "JIT compile, the median of fresh builds (each library's whole JIT compile):\n");
    const int builds = 5;
    const std::tuple<const char *, BlurSchedule> blurs[] = {
        {"compile: blur 3x3, tiled", BlurSchedule::Tiled},
        {"compile: blur 3x3, sliding", BlurSchedule::SlidingWindow}};
    for (const auto &[name, schedule] : blurs) {
        compile_row(
            name,
            [&, schedule = schedule](int i) {
                auto in = std::make_shared<Shared>(2048, 2048 + i, 1, 11);
                return std::tuple{blur<AicfLib>(in->aicf, schedule),
                                  blur<HalideLib>(in->halide, schedule), in};
            },
            builds);
    }
    compile_row(
        "compile: pyramid, 5 levels",
        [&](int i) {
            auto in = std::make_shared<Shared>(2048, 2048 + i, 0, 22);
            return std::tuple{pyramid<AicfLib>(in->aicf, 5), pyramid<HalideLib>(in->halide, 5), in};
        },
        builds);
    compile_row(
        "compile: bilinear resize, tiled",
        [&](int i) {
            auto in = std::make_shared<Shared>(2048, 2048 + i, 0, 21);
            return std::tuple{resample<AicfLib>(in->aicf, 2048, 2048 + i, Resampling::Resize),
                              resample<HalideLib>(in->halide, 2048, 2048 + i, Resampling::Resize),
                              in};
        },
        builds);
    {
        const int D = 512, Hd = 2048;
        Shared w1(Hd, D, 0, 16), b1(Hd, 1, 0, 17), w2(D, Hd, 0, 18), b2(D, 1, 0, 19);
        aicf::Buffer<float> b1a(b1.aicf.data(), std::vector<int>{Hd}),
            b2a(b2.aicf.data(), std::vector<int>{D});
        Halide::Buffer<float> b1h(b1.aicf.data(), Hd), b2h(b2.aicf.data(), D);
        const std::tuple<const char *, int> mlps[] = {{"compile: MLP, by op", 0},
                                                      {"compile: MLP, fused", 1},
                                                      {"compile: MLP, sgemm ops", 2},
                                                      {"compile: MLP, widths free", 3}};
        for (const auto &[name, kind] : mlps) {
            compile_row(
                name,
                [&, kind = kind](int i) {
                    auto x = std::make_shared<Shared>(D, 256 + i, 0, 15);
                    const Mlp<AicfLib> a{x->aicf, w1.aicf, b1a, w2.aicf, b2a, D, Hd};
                    const Mlp<HalideLib> h{x->halide, w1.halide, b1h, w2.halide, b2h, D, Hd};
                    if (kind < 2) return std::tuple{a.build(kind == 1), h.build(kind == 1), x};
                    return std::tuple{a.build_sgemm(kind == 2), h.build_sgemm(kind == 2), x};
                },
                builds);
        }
    }
}

} // namespace halide_peers

#endif
