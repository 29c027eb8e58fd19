// How compile time grows with the size of a pipeline. Not a test: it prints a table, one row
// per family of pipelines, with the seconds Pipeline::compile_jit takes (lowering, and LLVM
// for the host code; the GPU families compile for the simulator device, whose kernels are
// not assembled) at sizes N = 20, 40, 80 and 160, and the growth per doubling of N, the
// time at 2N over the time at N (2 for linear growth, 4 for quadratic). A family stops
// where one size takes longer than 30 seconds.
//
// `bench_compile --small` compiles each family at N = 4 and 8 (a smoke test); a word after it
// (`bench_compile pyramid`) runs only the families whose names contain it.

#include "dsl/aicf.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using namespace aicf;

namespace {

// N pointwise stages, each reading the one before: f_i = f_{i-1} * 1.01 + 0.5.
std::vector<Func> chain(int n, bool stencil) {
    Var x("x"), y("y");
    std::vector<Func> fs;
    Func first("f0");
    first(x, y) = cast<float>(x + y);
    fs.push_back(first);
    for (int i = 1; i <= n; i++) {
        Func f("f" + std::to_string(i));
        const Func &g = fs.back();
        f(x, y) = stencil ? (g(x - 1, y) + g(x, y) + g(x + 1, y)) * 0.33f : g(x, y) * 1.01f + 0.5f;
        fs.push_back(f);
    }
    return fs;
}

Pipeline chain_root(int n) {
    std::vector<Func> fs = chain(n, false);
    Var x("x"), y("y");
    for (int i = 0; i < n; i++)
        fs[size_t(i)].compute_root().vectorize(x, 8).parallel(y);
    return Pipeline(fs.back());
}

// Each stage computed at the row loop of the next (a nested chain).
Pipeline chain_at(int n, bool stencil) {
    std::vector<Func> fs = chain(n, stencil);
    Var y("y");
    for (int i = 0; i < n; i++)
        fs[size_t(i)].compute_at(fs[size_t(i) + 1], y);
    return Pipeline(fs.back());
}

// N 5-point stencils with clamped reads (the edges repeated), each computed in the output's
// 32 x 32 tiles, which overlap by the stencils' reach: each stage's region is its consumer's
// widened and clamped to the image.
Pipeline stencils_in_tiles(int n) {
    const int w = 1000, h = 700;
    Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
    ImageParam in(Float(32), 2, "in");
    std::vector<Func> fs;
    Func first("f0");
    first(x, y) = in(clamp(x, 0, w - 1), clamp(y, 0, h - 1));
    fs.push_back(first);
    for (int i = 1; i <= n; i++) {
        Func f("f" + std::to_string(i));
        const Func &g = fs.back();
        f(x, y) = (g(clamp(x - 1, 0, w - 1), y) + g(x, y) + g(clamp(x + 1, 0, w - 1), y) +
                   g(x, clamp(y - 1, 0, h - 1)) + g(x, clamp(y + 1, 0, h - 1))) *
                  0.2f;
        fs.push_back(f);
    }
    fs.back().tile(x, y, xo, yo, xi, yi, 32, 32);
    for (int i = 0; i < n; i++)
        fs[size_t(i)].compute_at(fs.back(), xo);
    return Pipeline(fs.back());
}

// A pyramid of N / 8 levels down and back up (N / 4 stages), every level at the root, parallel
// and vectorized: each level down is read by the next one down and by its level up.
Pipeline pyramid(int n) {
    const int levels = std::max(n / 8, 1);
    Var x("x"), y("y");
    ImageParam in(Float(32), 2, "in");
    std::vector<Func> down(size_t(levels) + 1), up(size_t(levels) + 1);
    down[0](x, y) = in(clamp(x, 0, 1999), clamp(y, 0, 1999));
    for (size_t l = 1; l < down.size(); l++) {
        const Func &p = down[l - 1];
        down[l](x, y) =
            (p(2 * x - 1, 2 * y) + 2.0f * p(2 * x, 2 * y) + p(2 * x + 1, 2 * y)) * 0.25f;
        down[l].compute_root().parallel(y).vectorize(x, 8);
    }
    up.back() = down.back();
    for (size_t l = up.size() - 1; l-- > 0;) {
        const Func &q = up[l + 1];
        up[l](x, y) = (q(x / 2, y / 2) + q((x + 1) / 2, y / 2)) * 0.5f + down[l](x, y);
        up[l].compute_root().parallel(y).vectorize(x, 8);
    }
    return Pipeline(up[0]);
}

// A Func of N elements, computed per GPU tile and summed by the output.
Pipeline tuple_gpu(int n) {
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    ImageParam in(Float(32), 2, "in");
    std::vector<Expr> v;
    for (int i = 0; i < n; i++)
        v.push_back(in(x, y) * float(i + 1));
    Func t("t"), out("out");
    t(x, y) = Tuple(v);
    Expr sum = t(x, y)[0];
    for (int i = 1; i < n; i++)
        sum = sum + t(x, y)[i];
    out(x, y) = sum;
    out.gpu_tile(x, y, bx, by, tx, ty, 16, 16);
    t.compute_root().gpu_tile(x, y, bx, by, tx, ty, 16, 16);
    return Pipeline(out);
}

// N outputs of one Pipeline, each a pointwise function of the same input.
Pipeline outputs(int n) {
    Var x("x"), y("y");
    ImageParam in(Float(32), 2, "in");
    std::vector<Func> outs;
    for (int i = 0; i < n; i++) {
        Func o("o" + std::to_string(i));
        o(x, y) = in(x, y) * float(i + 1) + float(i);
        o.vectorize(x, 8);
        outs.push_back(o);
    }
    return Pipeline(outs);
}

struct Family {
    const char *name;
    bool gpu;
    std::function<Pipeline(int)> make;
};

double seconds_to_compile(const Family &f, int n) {
    Pipeline p = f.make(n);
    const Target target = f.gpu ? Target("host-cuda-sm_80") : get_target_from_environment();
    auto start = std::chrono::steady_clock::now();
    p.compile_jit(target);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

int main(int argc, char **argv) {
    // Options: --small, and a word that picks the families whose names contain it.
    bool small = false;
    std::string only;
    for (int i = 1; i < argc; i++) {
        if (std::strcmp(argv[i], "--small") == 0)
            small = true;
        else
            only = argv[i];
    }
    const std::vector<int> sizes =
        small ? std::vector<int>{4, 8} : std::vector<int>{20, 40, 80, 160};
    const std::vector<Family> families = {
        {"chain at the root", false, chain_root},
        {"chain, each at the next's rows", false, [](int n) { return chain_at(n, false); }},
        {"3-point stencils, each at the next's rows", false,
         [](int n) { return chain_at(n, true); }},
        {"clamped 5-point stencils, all in the output's tiles", false, stencils_in_tiles},
        {"pyramid of N/8 levels down and up, at the root, vectorized", false, pyramid},
        {"Tuple of N, per GPU tile", true, tuple_gpu},
        {"N outputs of one input", false, outputs},
    };
    std::printf("| pipeline (N stages or elements) |");
    for (int n : sizes)
        std::printf(" N=%d (s) |", n);
    std::printf(" growth per doubling |\n|---|");
    for (size_t i = 0; i <= sizes.size(); i++)
        std::printf("---|");
    std::printf("\n");
    for (const Family &f : families) {
        if (std::string(f.name).find(only) == std::string::npos) continue;
        std::printf("| %s |", f.name);
        std::vector<double> t;
        for (int n : sizes) {
            if (!t.empty() && t.back() > 30) {
                std::printf(" - |");
                continue;
            }
            t.push_back(seconds_to_compile(f, n));
            std::printf(" %.2f |", t.back());
            std::fflush(stdout);
        }
        std::string growth;
        for (size_t i = 1; i < t.size(); i++) {
            char s[32];
            std::snprintf(s, sizeof(s), "%s%.1fx", i > 1 ? ", " : "", t[i] / t[i - 1]);
            growth += s;
        }
        std::printf(" %s |\n", growth.c_str());
    }
    return 0;
}
