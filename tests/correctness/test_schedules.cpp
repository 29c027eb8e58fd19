// Hand-written schedules compute exactly what the default schedule computes.

#include "ErrorMessage.h"
#include "GPUTarget.h"
#include "Reference.h"
#include "ScopedEnv.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include <pthread.h>

using namespace aicf;
using aicf_test::fill_random;
using aicf_test::message_of;

namespace {

// How many times `what` occurs in `text`.
int count_of(const std::string &text, const std::string &what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        n++;
    return n;
}

// A two-stage integer stencil over an input with a margin, scheduled by `schedule`.
Buffer<int> stencil(const std::function<void(Func &, Func &, Var &, Var &)> &schedule, int W,
                    int H) {
    static Buffer<int> in = [] {
        Buffer<int> b(70, 60);
        fill_random(b, -100, 100, 31);
        b.set_min({-2, -2});
        return b;
    }();
    Var x("x"), y("y");
    Func f("f"), g("g");
    f(x, y) = in(x - 1, y) * 3 + in(x + 1, y + 1) - in(x, y - 1);
    g(x, y) = f(x, y - 1) + f(x, y + 1) * 2 + f(x + 1, y);
    schedule(f, g, x, y);
    return g.realize({W, H});
}

void expect_same(const Buffer<int> &a, const Buffer<int> &b) {
    ASSERT_EQ(a.width(), b.width());
    ASSERT_EQ(a.height(), b.height());
    for (int j = 0; j < a.height(); j++)
        for (int i = 0; i < a.width(); i++)
            ASSERT_EQ(a(i, j), b(i, j)) << i << "," << j;
}

} // namespace

TEST(Schedules, SplitsWithEveryTailStrategy) {
    const int W = 37, H = 29; // not multiples of the factors
    Buffer<int> ref = stencil([](Func &, Func &, Var &, Var &) {}, W, H);
    for (TailStrategy tail :
         {TailStrategy::Auto, TailStrategy::GuardWithIf, TailStrategy::ShiftInwards}) {
        expect_same(ref, stencil(
                             [&](Func &f, Func &g, Var &x, Var &y) {
                                 Var xo("xo"), xi("xi");
                                 g.split(x, xo, xi, 8, tail);
                                 f.compute_root().split(y, Var("yo"), Var("yi"), 5, tail);
                             },
                             W, H));
    }
    // RoundUp on an intermediate computes more than needed; storage grows to match.
    expect_same(ref, stencil(
                         [&](Func &f, Func &, Var &x, Var &) {
                             f.compute_root().split(x, Var("xo"), Var("xi"), 16,
                                                    TailStrategy::RoundUp);
                         },
                         W, H));
}

// Rounding a region out to a multiple of a factor past sqrt(2^31) (46341 and more) bounds it by
// a product whose constants multiply past 2^31 only inside the rounded extent's division.
TEST(Schedules, RegionsRoundedOutByLargeFactors) {
    Buffer<int> in(60);
    fill_random(in, -1000, 1000, 7);
    for (int factor : {46340, 46341, 65536, 100003}) {
        for (bool align : {false, true}) {
            Var x("x"), xo("xo"), xi("xi");
            Func f("f"), g("g");
            f(x) = x * 3 + 1;
            g(x) = f(x) * in(x) + f(x + 1);
            f.compute_root();
            if (align) {
                f.align_bounds(x, factor);
            } else {
                f.split(x, xo, xi, factor, TailStrategy::RoundUp);
            }
            Buffer<int> out = g.realize({60});
            for (int i = 0; i < 60; i++)
                ASSERT_EQ(out(i), (i * 3 + 1) * in(i) + (i + 1) * 3 + 1)
                    << "factor " << factor << (align ? ", aligned" : ", split") << ", x = " << i;
        }
    }
}

TEST(Schedules, TileReorderFuseRename) {
    const int W = 41, H = 23;
    Buffer<int> ref = stencil([](Func &, Func &, Var &, Var &) {}, W, H);
    expect_same(ref, stencil(
                         [](Func &f, Func &g, Var &x, Var &y) {
                             Var xi("xi"), yi("yi"), t("t");
                             g.tile(x, y, xi, yi, 8, 4).fuse(xi, yi, t);
                             f.compute_root().reorder(y, x).rename(x, Var("col"));
                         },
                         W, H));
}

// Splits by factors known only at run time, whose loops later directives fuse, reorder or
// split again: the inner loop stops at the end only where the outer one is a loop around it;
// elsewhere (the outer loop fused into another) the guard keeps the tail. Checked against
// plain loops at factors below, at and beyond the extents.
TEST(Schedules, SplitsByParamsThenFusedReorderedOrSplitAgain) {
    const int W = 50, H = 37, R = 29;
    Buffer<int> in({W, H}, "in");
    fill_random(in, -1000, 1000, 77);
    for (int schedule = 0; schedule < 6; schedule++) {
        for (int v : {1, 7, 50, 1000}) {
            SCOPED_TRACE("schedule " + std::to_string(schedule) + ", factor " + std::to_string(v));
            Param<int> p("p");
            p.set(v);
            Var x("x"), y("y"), xo("xo"), xi("xi"), yo("yo"), yi("yi"), t("t"), xii("xii");
            RDom r(0, R, "r");
            RVar ro("ro"), ri("ri"), rt("rt");
            Func f("f");
            f(x, y) = in(x, y) * 2 + y;
            f(x, y) += in((x + r.x) % W, y) * (r.x + 1);
            const TailStrategy guard = TailStrategy::GuardWithIf;
            if (schedule == 0)
                f.tile(x, y, xo, yo, xi, yi, p, p, guard).fuse(xo, yo, t).parallel(t);
            if (schedule == 1) f.split(x, xo, xi, p, guard).fuse(xo, y, t);
            if (schedule == 2) f.split(x, xo, xi, p, guard).reorder(xi, y, xo).fuse(y, xo, t);
            if (schedule == 3) f.split(x, xo, xi, p, guard).reorder(xo, xi);
            if (schedule == 4) f.split(x, xo, xi, p, guard).split(xi, xi, xii, 4, guard);
            if (schedule == 5) f.update().split(r.x, ro, ri, p, guard).fuse(ri, ro, rt);
            Buffer<int> out = f.realize({W, H});
            for (int j = 0; j < H; j++) {
                for (int i = 0; i < W; i++) {
                    int64_t want = int64_t(in(i, j)) * 2 + j;
                    for (int k = 0; k < R; k++)
                        want += int64_t(in((i + k) % W, j)) * (k + 1);
                    ASSERT_EQ(out(i, j), want) << i << "," << j;
                }
            }
        }
    }
}

TEST(Schedules, ComputeAtAndStoreAt) {
    const int W = 33, H = 27;
    Buffer<int> ref = stencil([](Func &, Func &, Var &, Var &) {}, W, H);
    expect_same(ref, stencil([](Func &f, Func &g, Var &, Var &y) { f.compute_at(g, y); }, W, H));
    expect_same(ref, stencil(
                         [](Func &f, Func &g, Var &x, Var &y) {
                             Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
                             g.tile(x, y, xo, yo, xi, yi, 8, 8);
                             f.compute_at(g, xo);
                         },
                         W, H));
    expect_same(
        ref,
        stencil([](Func &f, Func &g, Var &x, Var &y) { f.store_root().compute_at(g, y); }, W, H));
}

TEST(Schedules, UpdateStagesCanBeSplitAndReordered) {
    const int M = 19, N = 23, K = 31;
    Buffer<float> A(K, M), B(N, K);
    fill_random(A, -1.0, 1.0, 32);
    fill_random(B, -1.0, 1.0, 33);
    auto matmul = [&](bool scheduled) {
        Var i("i"), j("j");
        RDom k(0, K, "k");
        Func C("C");
        C(j, i) = 0.0f;
        C(j, i) += A(k, i) * B(j, k);
        if (scheduled) {
            Var jo("jo"), ji("ji");
            C.update().split(j, jo, ji, 8).reorder(ji, k, jo, i);
            C.split(j, jo, ji, 4);
        }
        return Buffer<float>(C.realize({N, M}));
    };
    Buffer<float> a = matmul(false), b = matmul(true);
    for (int r = 0; r < M; r++)
        for (int c = 0; c < N; c++)
            ASSERT_EQ(a(c, r), b(c, r)) << r << "," << c;
}

// C = A * B with B copied into a panel, the algorithm of the CPU benchmark's matmul, for the
// tests to schedule; check() compares a result with a double-precision loop.
struct PanelMatmul {
    Buffer<float> A, B;
    Var x{"x"}, y{"y"};
    RDom k;
    Func panel{"panel"}, prod{"prod"}, out{"out"};
    PanelMatmul(int M, int N, int K, unsigned seed) : A(K, M), B(N, K), k(0, K, "k") {
        fill_random(A, -1.0, 1.0, seed);
        fill_random(B, -1.0, 1.0, seed + 1);
        panel(x, y) = B(x, y);
        prod(x, y) = 0.0f;
        prod(x, y) += A(k, y) * panel(x, k);
        out(x, y) = prod(x, y);
    }
    void check(const Buffer<float> &C) const {
        for (int i = 0; i < A.height(); i++) {
            for (int j = 0; j < B.width(); j++) {
                double ref = 0;
                for (int r = 0; r < A.width(); r++)
                    ref += double(A(r, i)) * B(j, r);
                ASSERT_TRUE(aicf_test::close(C(j, i), ref, 1e-5, 1e-5))
                    << j << "," << i << ": " << C(j, i) << " vs " << ref;
            }
        }
    }
};

// The blocked matmul of the CPU benchmark's family: the reduction split into blocks by named
// RVars, a packed copy of B's block computed inside the block loop of the update stage, and the
// accumulator tile kept across the blocks. Sizes are not multiples of any factor.
TEST(Schedules, ComputeAtALoopOfAnUpdateStage) {
    const int M = 45, N = 70, K = 77;
    PanelMatmul m(M, N, K, 34);
    Var &x = m.x, &y = m.y, xi("xi"), yi("yi"), yo("yo"), t("t");
    RVar ko("ko"), ki("ki");
    RDom &k = m.k;
    Func &prod = m.prod, &out = m.out, &panel = m.panel;
    out.tile(x, y, xi, yi, 32, 16).fuse(x, y, t).parallel(t).vectorize(xi, 8);
    prod.compute_at(out, t).vectorize(x, 8);
    prod.update()
        .split(k, ko, ki, 16)
        .split(y, yo, yi, 3)
        .reorder(x, yi, ki, yo, ko)
        .vectorize(x, 8)
        .unroll(x)
        .unroll(yi);
    panel.compute_at(prod.update(), ko).vectorize(x, 8);
    std::string nest = out.loop_nest();
    EXPECT_NE(nest.find("for prod.s1.ko in [0, 5):\n          store panel:"), std::string::npos)
        << nest;
    m.check(out.realize({N, M}));
}

// A split whose factor divides the extent needs no guard: the simplifier proves it from the
// loop's range (here through the let that defines the original variable).
TEST(Schedules, ExactSplitOfAnUpdateHasNoGuard) {
    Var x("x"), y("y"), yo("yo"), yi("yi"), ty("ty");
    RDom k(0, 16, "k");
    Func f("f"), g("g");
    f(x, y) = 0;
    f(x, y) += k * (x + y);
    g(x, y) = f(x, y);
    // f is computed 32 rows at a time from a row known only at run time.
    g.split(y, ty, y, 32);
    f.compute_at(g, ty);
    f.update().split(y, yo, yi, 8).unroll(yi);
    std::string stmt = g.lowered_stmt();
    EXPECT_EQ(stmt.find("if ("), std::string::npos) << stmt;
    Buffer<int> out = g.realize({5, 70});
    for (int j = 0; j < 70; j++)
        for (int i = 0; i < 5; i++)
            ASSERT_EQ(out(i, j), 120 * (i + j));
}

TEST(Schedules, AssemblyShowsTheHostCode) {
    ImageParam in(Float(32), 1, "in");
    Var x("x");
    Func f("f");
    f(x) = in(x) + 1.0f;
    f.vectorize(x, 8);
    std::string text = f.assembly();
    EXPECT_NE(text.find("aicf_f"), std::string::npos) << text; // the pipeline's function
    EXPECT_NE(text.find("addps"), std::string::npos) << text;  // vector adds (SSE or AVX)
    std::string path = ::testing::TempDir() + "aicf_assembly.s";
    f.compile_to_assembly(path);
    std::ifstream file(path);
    std::string written((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    EXPECT_EQ(written, text);
}

// A chain of ten stages, each reading the two before it, computed at the root or per group of
// rows of the last. Each stage's region is bounded through its consumers' regions; expanded
// into the output's bounds, those grew geometrically with the chain (the lowered IR of eight
// stages took 0.9 MB and 7 s, and ten were refused as unbounded). Regions now name the lets
// of their consumers' regions when expanding them would be large, and bounds skip the lets
// that cannot reach the region asked for.
TEST(Schedules, LongChainsOfStagesKeepTheirRegionsSmall) {
    const int n = 10, W = 67, H = 23;
    Buffer<float> in(W, H);
    fill_random(in, -1.0f, 1.0f, 9);
    for (bool at_rows : {false, true}) {
        Var x("x"), y("y"), yo("yo"), yi("yi");
        std::vector<Func> f;
        for (int i = 0; i < n; i++) {
            Func g("f" + std::to_string(i));
            if (i == 0) {
                g(x, y) = in(x, y) * 2.0f;
            } else {
                g(x, y) = f[i - 1](x, y) * 0.5f + (i > 1 ? Expr(f[i - 2](x, y)) : Expr(1.0f));
            }
            f.push_back(g);
        }
        f[n - 1].split(y, yo, yi, 4).parallel(yo).vectorize(x, 8);
        for (int i = 0; i < n - 1; i++) {
            if (at_rows) {
                f[i].compute_at(f[n - 1], yo).vectorize(x, 8);
            } else {
                f[i].compute_root().split(y, yo, yi, 4).parallel(yo).vectorize(x, 8);
            }
        }
        std::string stmt = f[n - 1].lowered_stmt();
        EXPECT_LT(stmt.size(), 300000u) << (at_rows ? "per row group" : "at the root");
        Buffer<float> out = f[n - 1].realize({W, H});
        for (int j = 0; j < H; j++) {
            for (int i = 0; i < W; i++) {
                double prev2 = 0, prev = 2.0 * in(i, j);
                for (int k = 1; k < n; k++) {
                    double next = prev * 0.5 + (k > 1 ? prev2 : 1.0);
                    prev2 = prev;
                    prev = next;
                }
                ASSERT_NEAR(out(i, j), prev, 1e-4 * std::max(1.0, std::fabs(prev)))
                    << i << "," << j;
            }
        }
    }
}

// What realizing `f` over `sizes` prints on standard error at the given AICF_DEBUG level; the
// result goes to `out`.
// Time steps of a 3-D stencil with clamped reads, each step computed in the tiles of the
// next (overlapped tiling). Each step's region is the union of the next one's read clamped and
// not (its centre), so it names the next one's region twice at each end; expanded, the
// regions grew fourfold a step, and five steps took 44 s to lower into 1.4 MB of IR. Clamps
// with the same bounds now merge, and a large end of a region over the tiles becomes a let.
TEST(Schedules, ClampedStencilStepsInOverlappedTilesKeepTheirRegionsSmall) {
    const int X = 19, Y = 13, Z = 7, steps = 5;
    Buffer<float> in(X, Y, Z);
    fill_random(in, -1.0f, 1.0f, 17);
    Var x("x"), y("y"), z("z"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
    std::vector<Func> s;
    Func prev("step_in");
    prev(x, y, z) = in(x, y, z);
    for (int t = 0; t < steps; t++) {
        Func f("step" + std::to_string(t));
        auto at = [&](Expr i, Expr j, Expr k) {
            return prev(clamp(i, 0, X - 1), clamp(j, 0, Y - 1), clamp(k, 0, Z - 1));
        };
        f(x, y, z) = 0.1f * (at(x - 1, y, z) + at(x + 1, y, z) + at(x, y - 1, z) + at(x, y + 1, z) +
                             at(x, y, z - 1) + at(x, y, z + 1)) -
                     0.3f * prev(x, y, z);
        s.push_back(f);
        prev = f;
    }
    Func out = s.back();
    out.tile(x, y, xo, yo, xi, yi, 8, 8).reorder(xi, yi, xo, yo, z);
    for (int t = 0; t < steps - 1; t++)
        s[size_t(t)].compute_at(out, xo);
    const std::string stmt = out.lowered_stmt();
    EXPECT_LT(stmt.size(), 400000u);
    Buffer<float> result = out.realize({X, Y, Z});
    std::vector<double> now(size_t(X * Y * Z)), next(now.size());
    auto idx = [&](int i, int j, int k) {
        return size_t((std::clamp(k, 0, Z - 1) * Y + std::clamp(j, 0, Y - 1)) * X +
                      std::clamp(i, 0, X - 1));
    };
    for (int k = 0; k < Z; k++)
        for (int j = 0; j < Y; j++)
            for (int i = 0; i < X; i++)
                now[idx(i, j, k)] = in(i, j, k);
    for (int t = 0; t < steps; t++) {
        for (int k = 0; k < Z; k++)
            for (int j = 0; j < Y; j++)
                for (int i = 0; i < X; i++)
                    next[idx(i, j, k)] = 0.1 * (now[idx(i - 1, j, k)] + now[idx(i + 1, j, k)] +
                                                now[idx(i, j - 1, k)] + now[idx(i, j + 1, k)] +
                                                now[idx(i, j, k - 1)] + now[idx(i, j, k + 1)]) -
                                         0.3 * now[idx(i, j, k)];
        std::swap(now, next);
    }
    for (int k = 0; k < Z; k++)
        for (int j = 0; j < Y; j++)
            for (int i = 0; i < X; i++) {
                const double want = now[idx(i, j, k)];
                ASSERT_TRUE(aicf_test::close(result(i, j, k), want, 1e-5, 1e-6))
                    << i << "," << j << "," << k << ": " << result(i, j, k) << " vs " << want;
            }
}

template <typename T>
std::string debug_output(const char *level, Func f, const std::vector<int> &sizes, Buffer<T> &out) {
    aicf_test::ScopedEnv debug("AICF_DEBUG", level);
    ::testing::internal::CaptureStderr();
    out = f.realize(sizes);
    return ::testing::internal::GetCapturedStderr();
}

// A chain of n stages f0 .. f(n-1): f0 = 2 in, f_k(x, y) = 0.5 f_{k-1}(x, y) + f_{k-1}(x + 1,
// y + 1), each but the last at the root, each in 16 x 8 tiles of one fused parallel loop.
std::vector<Func> chain_in_fused_tiles(const Buffer<float> &in, int n) {
    Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi"), t("t");
    std::vector<Func> f;
    for (int i = 0; i < n; i++) {
        Func g("f" + std::to_string(i));
        if (i == 0) {
            g(x, y) = in(x, y) * 2.0f;
        } else {
            g(x, y) = f[i - 1](x, y) * 0.5f + f[i - 1](x + 1, y + 1);
        }
        // Tiles of 16 x 8, shifted inwards at the right and bottom edges; the last stage's
        // (the output's) rows of 8 guarded instead.
        g.tile(x, y, xo, yo, xi, yi, 16, 8,
               i == n - 1 ? TailStrategy::GuardWithIf : TailStrategy::ShiftInwards)
            .fuse(xo, yo, t)
            .parallel(t)
            .vectorize(xi, 8);
        if (i < n - 1) g.compute_root();
        f.push_back(g);
    }
    return f;
}

// Checks the chain's output against a double-precision loop: its value at (i, j) comes from
// the input along the diagonal from (i, j).
void expect_chain_in_fused_tiles(const Buffer<float> &in, int n, const Buffer<float> &out) {
    for (int j = 0; j < out.extent(1); j++) {
        for (int i = 0; i < out.extent(0); i++) {
            std::vector<double> d(n + 1);
            for (int a = 0; a <= n; a++)
                d[a] = 2.0 * in(i + a, j + a);
            for (int k = 1; k < n; k++)
                for (int a = 0; a + k <= n; a++)
                    d[a] = 0.5 * d[a] + d[a + 1];
            ASSERT_NEAR(out(i, j), d[0], 1e-4 * std::max(1.0, std::fabs(d[0]))) << i << "," << j;
        }
    }
}

// Stages computed at the root, each in tiles of a fused loop (tile, fuse, parallel) of
// extents known only at run time. The rows each stage computes depend on the rows of the
// output alone: bounding the tile's row (the fused index divided by the number of tiles per
// row) through the fused loop's last index wrote them in terms of the output's width too,
// and each stage of the chain nested the previous one's region in its own: an MLP of two such
// matrix products took a second to lower, and so did this chain.
TEST(Schedules, RegionsOverFusedTilesStayInTheirOwnDimension) {
    const int n = 5, W = 75, H = 43;
    Buffer<float> in(W + n, H + n);
    fill_random(in, -1.0f, 1.0f, 12);
    std::vector<Func> f = chain_in_fused_tiles(in, n);
    const std::string out_name = f[n - 1].name();
    const std::string stmt = f[n - 1].lowered_stmt();
    Buffer<float> out = f[n - 1].realize({W, H});
    expect_chain_in_fused_tiles(in, n, out);
    // The rows of each stage, and the rows of its storage, are in terms of the output's rows
    // (its buffer's min and extent in dimension 1) and nothing of its width (dimension 0):
    // the row lets where the regions are named, and the storage's row count (the last factor
    // of each allocation) written out or naming such a let.
    auto rows_only = [&](const std::string &text) {
        EXPECT_EQ(text.find(out_name + ".extent.0"), std::string::npos) << text;
        EXPECT_EQ(text.find(out_name + ".min.0"), std::string::npos) << text;
    };
    int row_lets = 0, allocations = 0;
    for (size_t p = stmt.find("let f"); p != std::string::npos; p = stmt.find("let f", p + 1)) {
        const std::string line = stmt.substr(p, stmt.find('\n', p) - p);
        bool rows = false;
        for (const char *end : {".s0.y.min = ", ".s0.y.max = ", ".s0.y.extent = ",
                                ".y.min_realized = ", ".y.extent_realized = "})
            rows = rows || line.find(end) != std::string::npos;
        if (!rows || line.rfind("let " + out_name, 0) == 0) continue;
        row_lets++;
        rows_only(line);
    }
    for (size_t p = stmt.find("allocate f"); p != std::string::npos;
         p = stmt.find("allocate f", p + 1)) {
        const std::string line = stmt.substr(p, stmt.find('\n', p) - p);
        const size_t last = line.rfind(" * ");
        ASSERT_NE(last, std::string::npos) << line;
        allocations++;
        rows_only(line.substr(last));
    }
    EXPECT_EQ(allocations, n - 1);
    EXPECT_GE(row_lets + allocations, n - 1);
    // Each stage's region is in terms of the next one's, not a copy of it: expanded, the
    // regions nested through the chain and the statement took 146 KB; named, 62 KB. The last
    // shifted tile of each region starting at its end less a tile (min(e - 16, max((e + 15) /
    // 16 - 1, 0) * 16) is e - 16) takes it to 20 KB.
    EXPECT_LT(stmt.size(), 40000u);
}

// Every stage of the chain stores whole vectors. Common subexpression elimination wraps the
// index of one stage's store (a ramp whose base repeats a region's end) in lets; read as a
// vector of indices, the store was a scatter of 8 lanes, each a scalar store behind a branch.
TEST(Schedules, DenseStoresStayVectorsWhereLetsWrapTheirIndex) {
    const int n = 5, W = 75, H = 43;
    Buffer<float> in(W + n, H + n);
    fill_random(in, -1.0f, 1.0f, 13);
    std::vector<Func> f = chain_in_fused_tiles(in, n);
    const std::string stmt = f[n - 1].lowered_stmt();
    EXPECT_NE(stmt.find("[(let "), std::string::npos) << "no store's index is wrapped in lets";
    Buffer<float> out;
    // Level 3 prints the optimized LLVM module.
    const std::string module = debug_output("3", f[n - 1], {W, H}, out);
    EXPECT_NE(module.find("store <8 x float>"), std::string::npos) << module;
    EXPECT_EQ(module.find("store float "), std::string::npos) << module;
    expect_chain_in_fused_tiles(in, n, out);
}

// AICF_DEBUG=1 says which vectorized loops run serially, once per loop however many copies
// unrolling made of it, and how long each lowering pass and LLVM phase took.
TEST(Schedules, DebugLevelOneReportsFallbacksOnceAndCompileTimes) {
    Var x("x"), y("y"), yo("yo"), yi("yi"), xo("xo"), xi("xi");
    Func f("f"), g("g");
    f(x, y) = x * 3 + y;
    g(x, y) = f(x, y) * 2;
    g.split(y, yo, yi, 2).unroll(yi).split(x, xo, xi, 4).vectorize(xi);
    f.compute_at(g, xi); // storage per lane: the vector loop runs serially
    Buffer<int> out;
    std::string log = debug_output("1", g, {8, 6}, out);
    for (int j = 0; j < 6; j++)
        for (int i = 0; i < 8; i++)
            ASSERT_EQ(out(i, j), (i * 3 + j) * 2);
    auto count = [&](const std::string &s) {
        size_t n = 0;
        for (size_t at = log.find(s); at != std::string::npos; at = log.find(s, at + 1))
            n++;
        return n;
    };
    EXPECT_EQ(count("Cannot vectorize the loop xi of g"), 1u) << log;
    EXPECT_EQ(count("It runs as a serial loop."), 1u) << log;
    EXPECT_EQ(count("AICF: lowering g took "), 1u) << log;
    EXPECT_EQ(count("bounds_inference"), 1u) << log;
    EXPECT_EQ(count("AICF: host code of g took "), 1u) << log;
    EXPECT_EQ(count("LLVM optimization"), 1u) << log;
}

// On the host, LLVM may unroll innermost loops but not a loop that contains another: unrolled
// level by level, nested small loops multiplied the code and the compile time. The loop over
// rows here (5 of them, each a loop of 6) stays a loop, marked so; the optimized LLVM IR is
// what AICF_DEBUG=3 prints.
TEST(Schedules, HostLoopsThatContainLoopsStayRolled) {
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    Func f("f");
    f(x, y) = in(x, y) * 2.0f + in(x, y + 1);
    f.bound(x, 0, 6).bound(y, 0, 5);
    Buffer<float> b(6, 6);
    fill_random(b, -1.0f, 1.0f, 10);
    in.set(b);
    Buffer<float> out;
    std::string log = debug_output("3", f, {6, 5}, out);
    for (int j = 0; j < 5; j++)
        for (int i = 0; i < 6; i++)
            ASSERT_EQ(out(i, j), b(i, j) * 2.0f + b(i, j + 1));
    size_t ir = log.find("target datalayout");
    ASSERT_NE(ir, std::string::npos) << "no LLVM IR printed";
    std::string module = log.substr(ir);
    EXPECT_NE(module.find("f.s0.y_loop"), std::string::npos) << module;
    EXPECT_NE(module.find("llvm.loop.unroll.disable"), std::string::npos) << module;
}

// An innermost loop of more iterations than LLVM unrolls fully (700 vectors here, more than
// the vector registers hold) is left to LLVM's partial unrolling, which copies its body by a
// factor that divides the trip count: the loop itself then costs fewer instructions per
// vector (a column sum, a histogram). A shorter one that still loads more than the registers
// hold, and whose iterations carry nothing from one to the next (a map, as here), is unrolled
// by 4 or 2, whichever divides its trip count, or else stays rolled (a reduction's loop stays
// rolled too: see the layernorm below).
TEST(Schedules, LongInnerLoopsOfConstantLengthAreUnrolledPartially) {
    ImageParam in(Float(32), 1, "in");
    Var x("x");
    Buffer<float> b(16 * 700);
    fill_random(b, -1.0f, 1.0f, 11);
    in.set(b);
    // Vectors in the loop, and the multiplies of each pass through its body.
    for (auto [vectors, copies] : {std::pair{72, 4}, {70, 2}, {35, 1}}) {
        Func f("f");
        f(x) = in(x)*3.0f;
        f.bound(x, 0, 16 * vectors).vectorize(x, 16);
        const std::string text = f.assembly(Target("x86-64-v4"));
        EXPECT_EQ(count_of(text, "vmulps"), copies) << vectors << " vectors:\n" << text;
        Buffer<float> out = f.realize({16 * vectors});
        for (int i = 0; i < 16 * vectors; i++)
            ASSERT_EQ(out(i), b(i) * 3.0f) << i;
    }
    // Two copies of an iteration loading 20 vectors would load more than the 32 registers
    // hold: it stays rolled.
    {
        Func wide("wide");
        Expr sum = in(x);
        for (int k = 1; k < 20; k++)
            sum = sum + in(x + 16 * k);
        wide(x) = sum;
        wide.bound(x, 0, 16 * 72).vectorize(x, 16);
        const std::string text = wide.assembly(Target("x86-64-v4"));
        EXPECT_EQ(count_of(text, "vaddps"), 19) << text;
        Buffer<float> out = wide.realize({16 * 72});
        for (int i = 0; i < 16 * 72; i++) {
            float want = b(i);
            for (int k = 1; k < 20; k++)
                want = want + b(i + 16 * k);
            ASSERT_EQ(out(i), want) << i;
        }
    }
    Func f("f");
    f(x) = in(x)*3.0f;
    f.bound(x, 0, 16 * 700).vectorize(x, 16);
    EXPECT_GE(count_of(f.assembly(Target("x86-64-v4")), "vmulps"), 2);
    Buffer<float> out = f.realize({16 * 700});
    for (int i = 0; i < 16 * 700; i++)
        ASSERT_EQ(out(i), b(i) * 3.0f) << i;
}

// A tiled 3x3 blur (bench_cpu's, against Halide): each row of a tile, 16 vectors of blur_x
// and then of blur_y, loads more than the registers hold but carries nothing from one vector
// to the next. Unrolled by 4, the loop costs its increment and branch once per 4 vectors.
TEST(Schedules, StencilRowsAreUnrolledByFour) {
    const int W = 300, H = 70;
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y"), xi("xi"), yi("yi");
    Func bx("blur_x"), by("blur_y");
    bx(x, y) = (in(x - 1, y) + in(x, y) + in(x + 1, y)) * (1.0f / 3);
    by(x, y) = (bx(x, y - 1) + bx(x, y) + bx(x, y + 1)) * (1.0f / 3);
    by.tile(x, y, xi, yi, 256, 32).parallel(y).vectorize(xi, 16);
    bx.compute_at(by, x).vectorize(x, 16);
    const std::string text = by.assembly(Target("x86-64-v4"));
    // The most multiplies in one basic block (a label starts the next).
    size_t most = 0, here = 0;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        if (!line.empty() && line[0] == '.') here = 0;
        if (line.find("vmulps") != std::string::npos) most = std::max(most, ++here);
    }
    EXPECT_GE(most, 4u) << text;
    Buffer<float> b(W + 2, H + 2);
    fill_random(b, -1.0f, 1.0f, 12);
    b.set_min({-1, -1});
    in.set(b);
    Buffer<float> out = by.realize({W, H});
    for (int j = 0; j < H; j++) {
        for (int i = 0; i < W; i++) {
            double want = 0;
            for (int dy = -1; dy <= 1; dy++)
                want += (double(b(i - 1, j + dy)) + b(i, j + dy) + b(i + 1, j + dy)) / 3;
            ASSERT_NEAR(out(i, j), want / 3, 1e-5) << i << ", " << j;
        }
    }
}

// The most lines matching `what` in one basic block of `text` (a label starts the next).
size_t most_in_a_block(const std::string &text, const std::string &what) {
    size_t most = 0, here = 0;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        if (!line.empty() && line[0] == '.') here = 0;
        if (line.find(what) != std::string::npos) most = std::max(most, ++here);
    }
    return most;
}

// The most distinct vector registers that lines containing `what` write in one basic block of
// `text` (the last operand; a label starts the next block): the accumulators a reduction's
// loop updates side by side.
size_t most_accumulators_in_a_block(const std::string &text, const std::string &what) {
    size_t most = 0;
    std::set<std::string> written;
    const std::regex last(R"((%[xyz]mm\d+)\s*(#.*)?$)");
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        std::smatch m;
        if (!line.empty() && line[0] == '.') {
            written.clear();
        } else if (line.find(what) != std::string::npos && std::regex_search(line, m, last)) {
            written.insert(m[1]);
            most = std::max(most, written.size());
        }
    }
    return most;
}

// out(x, y) = the sum (or the maximum) over r of A(r, y) * B(x, r), then an epilogue or not,
// computed in register blocks of `rows` x `block` (`block` a multiple of 16: vectors, unrolled)
// that a serial loop visits `per_tile` at a time.
Func register_block_product(const Buffer<float> &A, const Buffer<float> &B, int rows, int block,
                            int per_tile, bool maximum = false, bool epilogue = false) {
    Var x("x"), y("y"), xo("xo"), xi("xi"), xt("xt"), xb("xb"), yo("yo"), yi("yi");
    RDom r(0, A.width(), "r");
    Func prod("prod"), out("out");
    if (maximum) {
        prod(x, y) = -INFINITY;
        prod(x, y) = max(prod(x, y), A(r, y) * B(x, r));
    } else {
        prod(x, y) = 0.0f;
        prod(x, y) += A(r, y) * B(x, r);
    }
    out(x, y) = epilogue ? prod(x, y) * 0.5f + 1.0f : prod(x, y);
    out.split(x, xo, xi, block)
        .split(xo, xt, xb, per_tile)
        .split(y, yo, yi, rows)
        .reorder(xi, yi, xb, xt, yo)
        .vectorize(xi, 16)
        .unroll(xi)
        .unroll(yi)
        .parallel(yo);
    prod.compute_at(out, xb).vectorize(x, 16).unroll(x).unroll(y);
    prod.update().reorder(x, y, r).vectorize(x, 16).unroll(x).unroll(y);
    return out;
}

// A matrix product in register blocks of 4 rows x 32 columns (8 AVX-512 registers, the blocks
// of Halide's sgemm schedule), 2 blocks side by side in a tile (the serial loop xb). Each
// block's reduction is 8 chains of fused multiply-adds, too few to keep two FMA units busy;
// the host code generator runs the 2 blocks' reductions in one loop (16 chains, each row of A
// loaded once for both), which sums every element in the same order: the results equal, bit
// for bit, those of one 4 x 64 block, and a double-precision product within float's rounding.
// A block of 4 x 64 (16 chains) in the same loop is left alone.
TEST(Schedules, RegisterBlocksOfATileRunSideBySide) {
    const int N = 200, M = 37, K = 53; // no tile divides them
    Buffer<float> A(K, M), B(N, K);
    fill_random(A, -1.0f, 1.0f, 41);
    fill_random(B, -1.0f, 1.0f, 42);
    const Target t("x86-64-v4-fma");
    // Run where this CPU can (the code is the same schedule's, for its own vectors).
    const Target run = t.missing_cpu_features().empty() ? t : Target("host-fma");
    auto product = [&](int block, int blocks) {
        return register_block_product(A, B, 4, block, blocks);
    };
    // Jammed: 2 x 8 chains in one loop, 16 FMAs in a block; left alone: 4 x 64 in 2 blocks, 16.
    const std::string jammed = product(32, 2).assembly(t), alone = product(64, 2).assembly(t);
    EXPECT_EQ(most_in_a_block(jammed, "vfmadd"), 16u) << jammed;
    EXPECT_EQ(most_in_a_block(alone, "vfmadd"), 16u) << alone;
    // One block per tile: nothing to jam, 8 FMAs.
    EXPECT_EQ(most_in_a_block(product(32, 1).assembly(t), "vfmadd"), 8u);

    Buffer<float> side_by_side = product(32, 2).realize({N, M}, run)[0];
    Buffer<float> wide = product(64, 1).realize({N, M}, run)[0];
    for (int j = 0; j < M; j++) {
        for (int i = 0; i < N; i++) {
            double want = 0;
            for (int k = 0; k < K; k++)
                want += double(A(k, j)) * B(i, k);
            ASSERT_NEAR(side_by_side(i, j), want, 1e-5 * K) << i << ", " << j;
            ASSERT_EQ(side_by_side(i, j), wide(i, j)) << i << ", " << j;
        }
    }
}

// Register blocks of drawn shapes (1 to 4 rows of 1 or 2 vectors, 2 to 4 blocks a tile), sums
// and maxima, with and without an epilogue, at drawn sizes no block divides: each against a
// double-precision loop (a maximum of float products exactly), and bit for bit against one
// block as wide as the tile (the same order of every element's sum). Where the copies' chains
// fit (at most 8 a block, 16 in all) the blocks run side by side: the reduction's loop holds
// every block's updates; otherwise one block's.
TEST(Schedules, JammedRegisterBlocksMatchDoublePrecision) {
    std::mt19937 rng(77);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    int jammed_draws = 0;
    for (int draw = 0; draw < 16; draw++) {
        const int rows = pick(1, 4), vectors = pick(1, 2), blocks = pick(2, 4);
        const bool maximum = pick(0, 3) == 0, epilogue = pick(0, 1) == 1;
        const int width = 16 * vectors, K = pick(2, 70); // (a loop of one step is no loop)
        const int N = width * blocks + pick(1, 90), M = rows + pick(1, 30);
        SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(width) + " blocks, " +
                     std::to_string(blocks) + " a tile, " + (maximum ? "max" : "sum") +
                     (epilogue ? " with an epilogue" : "") + ", " + std::to_string(N) + " x " +
                     std::to_string(M) + " x " + std::to_string(K));
        Buffer<float> A(K, M), B(N, K);
        fill_random(A, -1.0f, 1.0f, unsigned(draw));
        fill_random(B, -1.0f, 1.0f, unsigned(draw + 100));
        auto product = [&](int block, int per_tile) {
            return register_block_product(A, B, rows, block, per_tile, maximum, epilogue);
        };
        const int chains = rows * vectors;
        const bool jammed = chains <= 8 && chains * blocks <= 16;
        jammed_draws += jammed;
        const std::string fma = maximum ? "vmaxps" : "vfmadd";
        EXPECT_EQ(most_accumulators_in_a_block(
                      product(width, blocks).assembly(Target("x86-64-v4-fma")), fma),
                  size_t(jammed ? chains * blocks : chains));
        const Target t("host-fma");
        Buffer<float> side_by_side = product(width, blocks).realize({N, M}, t)[0];
        Buffer<float> wide = product(width * blocks, 1).realize({N, M}, t)[0];
        for (int j = 0; j < M; j++) {
            for (int i = 0; i < N; i++) {
                double want = maximum ? -INFINITY : 0.0;
                for (int k = 0; k < K; k++) {
                    if (maximum)
                        want = std::max(want, double(A(k, j) * B(i, k)));
                    else
                        want += double(A(k, j)) * B(i, k);
                }
                if (epilogue) want = want * 0.5 + 1.0;
                // A maximum of float products is exact; its epilogue rounds once more.
                const double tolerance = maximum ? (epilogue ? 1e-6 : 0.0) : 1e-5 * K;
                ASSERT_NEAR(side_by_side(i, j), want, tolerance) << i << ", " << j;
                ASSERT_EQ(side_by_side(i, j), wide(i, j)) << i << ", " << j;
            }
        }
    }
    // Both kinds drawn.
    EXPECT_GT(jammed_draws, 0);
    EXPECT_LT(jammed_draws, 16);
}

// A vectorized loop whose trip count is known only at run time stays one loop: its steady
// state and its ShiftInwards tail each multiply once. LLVM's runtime unrolling copied it 8
// times with a remainder loop, for compile time and no measured speed.
TEST(Schedules, VectorLoopsOfRunTimeLengthAreNotUnrolledByLLVM) {
    ImageParam in(Float(32), 1, "in");
    Var x("x");
    Func f("f");
    f(x) = in(x)*3.0f + 1.0f;
    f.vectorize(x, 16);
    const std::string text = f.assembly(Target("x86-64-v4"));
    EXPECT_EQ(count_of(text, "vmulps"), 2) << text;
    Buffer<float> b(45);
    fill_random(b, -5.0f, 5.0f, 12);
    in.set(b);
    Buffer<float> out = f.realize({45});
    for (int i = 0; i < 45; i++)
        ASSERT_EQ(out(i), b(i) * 3.0f + 1.0f) << i;
}

// A layernorm fused by rows, each statistic's reduction split into 64 lanes (rfactor) under
// fused multiply-adds: four AVX-512 registers of partial sums per statistic. Unrolled, the
// sum's and the squared deviations' loops each became one block of loads, which LLVM merged,
// keeping the row as 64 values spilled to the stack, and it emitted the four chains one after
// another. Rolled (more is loaded than the registers hold), each iteration adds into the four
// accumulators side by side, and nothing is spilled.
TEST(Schedules, VectorReductionChainsStayInterleavedInRegisters) {
    const int D = 1024, R = 37;
    ImageParam in(Float(32), 2, "in");
    Var c("c"), r("r"), u("u");
    RDom k(0, D, "k");
    Func mean("mean"), var("var"), norm("norm");
    mean(r) = 0.0f;
    mean(r) += in(k, r);
    var(r) = 0.0f;
    var(r) += (in(k, r) - mean(r) / float(D)) * (in(k, r) - mean(r) / float(D));
    norm(c, r) = (in(c, r) - mean(r) / float(D)) * rsqrt(var(r) / float(D) + 1e-5f);
    norm.parallel(r).vectorize(c, 16);
    for (Func *f : {&mean, &var}) {
        RVar ko("ko"), ki("ki");
        Func partial = f->update().split(k, ko, ki, 64).rfactor(ki, u);
        partial.compute_at(*f, r).vectorize(u).update().reorder(u, ko).vectorize(u);
        f->compute_at(norm, r);
    }
    std::string text = norm.assembly(Target("x86-64-v4-fma"));
    // No vector register is stored to or reloaded from the stack.
    std::regex spill(R"(vmov[au]ps\s+%zmm\d+, -?\d*\(%rsp|vmov[au]ps\s+-?\d*\(%rsp[^\n]*%zmm)");
    EXPECT_FALSE(std::regex_search(text, spill)) << text;
    // Some basic block accumulates into four distinct registers with each instruction: the
    // sum's adds, and the squared deviations' fused multiply-adds.
    auto most_chains_in_a_block = [&](const std::string &pattern) {
        std::regex accumulate(pattern);
        size_t most = 0;
        std::set<std::string> chains;
        std::istringstream lines(text);
        for (std::string line; std::getline(lines, line);) {
            std::smatch m;
            if (!line.empty() && line[0] == '.') {
                chains.clear(); // a label starts a new block
            } else if (std::regex_search(line, m, accumulate)) {
                chains.insert(m[1]);
                most = std::max(most, chains.size());
            }
        }
        return most;
    };
    EXPECT_GE(most_chains_in_a_block(R"(vaddps\s+[^\n]*, %(zmm\d+), %\1$)"), 4u) << text;
    EXPECT_GE(most_chains_in_a_block(R"(vfmadd231ps\s+[^\n]*, %(zmm\d+)$)"), 4u) << text;

    // And the values, against a double-precision loop, where this CPU runs the code.
    Buffer<float> b(D, R);
    fill_random(b, -2.0f, 3.0f, 41);
    in.set(b);
    Buffer<float> out = norm.realize({D, R}, Target("host-fma"));
    for (int j = 0; j < R; j++) {
        double sum = 0, squares = 0;
        for (int i = 0; i < D; i++)
            sum += b(i, j);
        for (int i = 0; i < D; i++)
            squares += (b(i, j) - sum / D) * (b(i, j) - sum / D);
        for (int i = 0; i < D; i++) {
            double want = (b(i, j) - sum / D) / std::sqrt(squares / D + 1e-5);
            ASSERT_NEAR(out(i, j), want, 1e-4 * (1 + std::abs(want))) << i << ", " << j;
        }
    }
}

// Stack storage is aligned to the widest vector that accesses it, so vectors at multiples of
// their width never straddle two cache lines: LLVM then moves them with aligned instructions.
// With element alignment only, the block below was stored at an offset such as 444(%rsp).
TEST(Schedules, StackStorageIsAlignedForItsVectors) {
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y"), xi("xi"), yi("yi");
    Func p("p"), g("g");
    p(x, y) = in(x, y) * 2.0f;
    g(x, y) = p(x, y) + p(x, y) * p(x, y);
    // Rows at run-time offsets, so the block stays in memory rather than in registers.
    g.tile(x, y, xi, yi, 16, 3).vectorize(xi, 8).unroll(xi);
    p.compute_at(g, x).store_in(ir::MemoryType::Stack).vectorize(x, 8).unroll(x);
    std::string text = g.assembly();
    // Moves of whole vectors to or from the stack (calls' arguments are moved in 16-byte
    // pieces at any offset, so only the wider registers count against).
    std::regex aligned(R"(v?movaps\s+[^\n]*\(%rsp[,)])"),
        unaligned(
            R"(vmovups\s+[^\n]*%[yz]mm\d+[^\n]*\(%rsp[,)]|vmovups\s+[^\n]*\(%rsp[^\n]*%[yz]mm)");
    EXPECT_TRUE(std::regex_search(text, aligned)) << "no aligned vector access to the stack:\n"
                                                  << text;
    EXPECT_FALSE(std::regex_search(text, unaligned)) << "an unaligned vector access to the stack:\n"
                                                     << text;
}

// A block of accumulators computed per group of rows of a tiled, fused, parallel loop, as in a
// matrix multiply. Its consumer reads it at its own coordinates minus the block's first row and
// column, two lets of the same loop variables that cancel only through their values: with
// those substituted, every access to the block has a constant index, so LLVM keeps it in
// registers rather than zeroing it and passing it through the stack. Sizes are not multiples
// of the tiles, so the last tiles shift inwards.
TEST(Schedules, RegisterBlocksAreIndexedByConstants) {
    const int W = 80, H = 45, K = 37;
    PanelMatmul m(H, W, K, 11);
    Var &x = m.x, &y = m.y, xi("xi"), yi("yi"), yii("yii"), xy("xy");
    Func &prod = m.prod, &out = m.out, &panel = m.panel;
    out.bound(x, 0, W).bound(y, 0, H);
    out.tile(x, y, xi, yi, 32, 20)
        .fuse(x, y, xy)
        .parallel(xy)
        .split(yi, yi, yii, 6)
        .reorder(xi, yii, yi)
        .vectorize(xi, 8)
        .unroll(xi)
        .unroll(yii);
    panel.compute_at(out, xy).vectorize(x, 8);
    prod.compute_at(out, yi).vectorize(x, 8).unroll(x).unroll(y);
    prod.update().reorder(x, y, m.k).vectorize(x, 8).unroll(x).unroll(y);
    m.check(out.realize({W, H}));
    std::string stmt = out.lowered_stmt();
    std::regex access(R"(\bprod\[([^\]]*)\])"), constant(R"(ramp\(\d+, 1, 8\))");
    int accesses = 0;
    for (std::sregex_iterator it(stmt.begin(), stmt.end(), access), end; it != end; ++it) {
        if ((*it)[1].str().find("float32 *") == 0) continue; // the allocation
        EXPECT_TRUE(std::regex_match((*it)[1].str(), constant)) << "prod[" << (*it)[1] << "] in:\n"
                                                                << stmt;
        accesses++;
    }
    EXPECT_GE(accesses, 3 * 6 * 4) << stmt; // the block's 6 x 4 vectors: zeroed, updated, read
}

// A packed layout read as P(x % 16, y, x / 16) under vectorize(x, 16): where the vectors start
// at known multiples of 16 every lane has the same x / 16, and the load is one dense vector; a
// width that is not a multiple shifts the last vector inwards, across a multiple, and that vector
// is gathered. Both compute what a plain loop computes.
TEST(Schedules, PackedLayoutReadsWholeVectors) {
    for (int W : {80, 77}) {
        const int H = 5, S = (W + 15) / 16;
        Buffer<int> packed(16, H, S);
        fill_random(packed, -1000, 1000, 7);
        Var x("x"), y("y"), xo("xo"), xi("xi");
        Func f("f");
        f(x, y) = packed(x % 16, y, x / 16) * 3 + x;
        f.bound(x, 0, W).split(x, xo, xi, 16).vectorize(xi);
        Buffer<int> out = f.realize({W, H});
        for (int j = 0; j < H; j++)
            for (int i = 0; i < W; i++)
                ASSERT_EQ(out(i, j), packed(i % 16, j, i / 16) * 3 + i)
                    << W << ": " << i << "," << j;
        if (W == 80) {
            std::string stmt = f.lowered_stmt();
            EXPECT_EQ(stmt.find("x16(16)"), std::string::npos)
                << "a division or remainder per lane:\n"
                << stmt;
        }
    }
}

// The same layout read by a stage computed per tile of a fused tile loop: its vectors start at
// the tile's first column, a let (`f.x.min_realized = (g.t % 3) * 64`) that is a multiple of
// 16 only by its value. Reading packed B panels this way is how a Halide-style matrix
// multiply feeds its vectors.
TEST(Schedules, PackedLayoutReadsWholeVectorsFromATilesStart) {
    const int W = 192, H = 6, S = W / 16;
    Buffer<int> packed(16, H, S);
    fill_random(packed, -1000, 1000, 8);
    Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi"), t("t");
    Func f("f"), g("g");
    f(x, y) = packed(x % 16, y, x / 16) * 3 + x;
    g(x, y) = f(x, y) - y;
    g.bound(x, 0, W)
        .bound(y, 0, H)
        .tile(x, y, xo, yo, xi, yi, 64, 3)
        .fuse(xo, yo, t)
        .vectorize(xi, 16);
    f.compute_at(g, t).vectorize(x, 16);
    Buffer<int> out = g.realize({W, H});
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++)
            ASSERT_EQ(out(i, j), packed(i % 16, j, i / 16) * 3 + i - j) << i << "," << j;
    std::string stmt = g.lowered_stmt();
    EXPECT_EQ(stmt.find("x16(16)"), std::string::npos) << "a division or remainder per lane:\n"
                                                       << stmt;
}

// A producer stored outside a serial loop and computed inside it slides: each iteration
// computes only the rows past those the previous one computed. The results are exactly those
// of the default schedule, for stencils reaching different distances, tails and vectors.
TEST(Schedules, SlidingWindowsComputeEachRowOnce) {
    const int W = 37, H = 29;
    Buffer<int> ref = stencil([](Func &, Func &, Var &, Var &) {}, W, H);
    // Storage for everything, computed row by row.
    expect_same(
        ref,
        stencil([](Func &f, Func &g, Var &, Var &y) { f.store_root().compute_at(g, y); }, W, H));
    // Storage per strip of 8 rows (the last strip shifted inwards), vectorized along x.
    expect_same(ref, stencil(
                         [](Func &f, Func &g, Var &x, Var &y) {
                             Var yo("yo"), yi("yi");
                             g.split(y, yo, yi, 8).vectorize(x, 4);
                             f.store_at(g, yo).compute_at(g, yi).vectorize(x, 4);
                         },
                         W, H));
    // Sliding along x: the innermost loop of the consumer is x.
    expect_same(
        ref,
        stencil([](Func &f, Func &g, Var &x, Var &) { f.store_root().compute_at(g, x); }, W, H));
    // The region the lowered code computes per row starts past the previous row's last one.
    Var x("x"), y("y");
    Func f("f"), g("g");
    f(x, y) = x + y;
    g(x, y) = f(x, y - 1) + f(x, y + 2);
    f.store_root().compute_at(g, y);
    std::string stmt = g.lowered_stmt();
    EXPECT_NE(stmt.find("let f.s0.y.min = select("), std::string::npos) << stmt;
    // Rows y - 1 .. y + 2 are live at a time: the storage folds to 4 rows.
    size_t at = stmt.find("allocate f[int32 * ");
    ASSERT_NE(at, std::string::npos) << stmt;
    std::string allocation = stmt.substr(at, stmt.find('\n', at) - at);
    EXPECT_NE(allocation.find(" * 4] in heap"), std::string::npos) << allocation;
    EXPECT_NE(stmt.find(" % 4)"), std::string::npos) << stmt;
    Buffer<int> out = g.realize({6, 9});
    for (int j = 0; j < 9; j++)
        for (int i = 0; i < 6; i++)
            ASSERT_EQ(out(i, j), (i + j - 1) + (i + j + 2));
}

// Where the region does not move with the loop alone, nothing slides.
TEST(Schedules, SlidingWindowNeedsARegionThatMovesForward) {
    Var x("x"), y("y"), yo("yo"), yi("yi");
    Func f("f"), g("g");
    f(x, y) = x * 3 + y;
    g(x, y) = f(x, 20 - y) + f(x, y); // the rows needed move both ways as y grows
    f.store_root().compute_at(g, y);
    std::string stmt = g.lowered_stmt();
    EXPECT_EQ(stmt.find("select("), std::string::npos) << stmt;
    Buffer<int> out = g.realize({5, 21});
    for (int j = 0; j < 21; j++)
        for (int i = 0; i < 5; i++)
            ASSERT_EQ(out(i, j), (i * 3 + 20 - j) + (i * 3 + j));
    // A parallel loop between the storage and the computation: each iteration computes its own.
    Func f2("f2"), g2("g2");
    f2(x, y) = x + 2 * y;
    g2(x, y) = f2(x, y) + f2(x, y + 1);
    g2.split(y, yo, yi, 4).parallel(yo);
    f2.store_root().compute_at(g2, yi);
    stmt = g2.lowered_stmt();
    EXPECT_EQ(stmt.find("select("), std::string::npos) << stmt;
    Buffer<int> out2 = g2.realize({5, 18});
    for (int j = 0; j < 18; j++)
        for (int i = 0; i < 5; i++)
            ASSERT_EQ(out2(i, j), (i + 2 * j) + (i + 2 * j + 2));
}

// An empty output computes nothing and needs no input, even where a producer's split would
// reach outside the input for a non-empty region (ShiftInwards moves its one tile inwards).
TEST(Schedules, EmptyOutputsNeedNoInput) {
    Buffer<int> in({10, 10}, "in");
    fill_random(in, -100, 100, 36);
    Var x("x"), y("y"), xo("xo"), xi("xi");
    Func a("a"), c("c");
    a(x, y) = in(x, y) * 3;
    c(x, y) = a(x, y) + 1;
    a.compute_root().split(x, xo, xi, 4);
    for (std::vector<int> size : {std::vector<int>{0, 5}, {5, 0}, {0, 0}}) {
        Buffer<int> out;
        EXPECT_NO_THROW(out = c.realize(size)) << size[0] << "x" << size[1];
    }
    // A non-empty region smaller than the split's factor does read before the input here:
    // the schedule computes a 4-wide tile shifted to start at -1.
    EXPECT_THROW(c.realize({3, 3}), RuntimeError);
    Buffer<int> ok = c.realize({8, 3});
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 8; i++)
            ASSERT_EQ(ok(i, j), in(i, j) * 3 + 1);
}

// Funcs computed at the root compute nothing for an empty output whose own loops work in whole
// tiles: the tile a vector loop shifts inwards, [-8, -1] at a width of 0, is never run, so
// nothing before it is needed either (through a chain of root Funcs, to the input).
TEST(Schedules, EmptyOutputsOfWholeTileLoopsNeedNothingOfRootProducers) {
    Var x("x"), y("y");
    ImageParam in(Int(32), 2, "in");
    Func q("q"), p("p"), f("f");
    q(x, y) = in(x, y) - in(x + 1, y);
    p(x, y) = q(x, y) * 3;
    f(x, y) = p(x, y) + 1;
    q.compute_root();
    p.compute_root().vectorize(x, 4);
    f.vectorize(x, 8);
    for (std::vector<int> size : {std::vector<int>{0, 5}, {5, 0}, {0, 0}, {8, 3}, {13, 4}}) {
        SCOPED_TRACE(std::to_string(size[0]) + "x" + std::to_string(size[1]));
        // Exactly what a non-empty output reads: one column more than it.
        Buffer<int> input({size[0] ? size[0] + 1 : 0, size[1]}, "input");
        if (size[0] && size[1]) fill_random(input, -100, 100, 38);
        in.set(input);
        Buffer<int> out({size[0], size[1]}, "out");
        ASSERT_NO_THROW(f.realize(out));
        for (int j = 0; j < size[1]; j++)
            for (int i = 0; i < size[0]; i++)
                ASSERT_EQ(out(i, j), (input(i, j) - input(i + 1, j)) * 3 + 1) << i << "," << j;
    }
    // Narrower than the vector, but not empty: whole tiles are still refused.
    Buffer<int> input({6, 2}, "input");
    fill_random(input, -100, 100, 39);
    in.set(input);
    Buffer<int> out({5, 2}, "out");
    EXPECT_THROW(f.realize(out), RuntimeError);
}

// A Func computed per tile of its consumer, read through a clamp to a constant near the top of
// the int32 range: its region per tile is bounded (it was refused as data-dependent from a
// constant of 2^30 on), and right where the clamp decides, at coordinates around it.
TEST(Schedules, ClampsToLargeConstantsBoundPerTileRegions) {
    for (int c : {1 << 30, 2000000000}) {
        SCOPED_TRACE(c);
        Buffer<float> input({21}, "input");
        fill_random(input, -1.0, 1.0, 40);
        input.set_min({c - 20});
        Var x("x"), xo("xo"), xi("xi");
        Func p("p"), f("f");
        p(x) = input(x) * 2.0f;
        f(x) = p(min(x, c)) + 1.0f;
        f.split(x, xo, xi, 8);
        p.compute_at(f, xo);
        Buffer<float> out({37}, "out");
        out.set_min({c - 20});
        ASSERT_NO_THROW(f.realize(out));
        for (int i = c - 20; i < c + 17; i++)
            ASSERT_EQ(out(i), input(std::min(i, c)) * 2.0f + 1.0f) << i;
    }
}

// An empty output of a Func with updates at its own point computes nothing, vectorized or
// not (the whole tile a vector loop would shift inwards is never run).
TEST(Schedules, EmptyOutputsOfReductionsNeedNoInput) {
    Buffer<int> in({12, 6}, "in");
    fill_random(in, -100, 100, 37);
    for (std::vector<int> size : {std::vector<int>{0, 6}, {6, 0}, {0, 0}, {5, 3}, {9, 4}}) {
        SCOPED_TRACE(std::to_string(size[0]) + "x" + std::to_string(size[1]));
        Var x("x"), y("y");
        RDom r(0, 3, "r");
        Func f("f_red");
        f(x, y) = x - y;
        f(x, y) += in(x + r, y);
        f.vectorize(x, 8);
        f.update().vectorize(x, 8, TailStrategy::GuardWithIf);
        if (size[0] == 5) {
            // Narrower than the vector: the pure stage's whole tile would write 8 columns.
            EXPECT_THROW(f.realize(size), RuntimeError);
            continue;
        }
        Buffer<int> out;
        ASSERT_NO_THROW(out = f.realize(size));
        for (int j = 0; j < size[1]; j++)
            for (int i = 0; i < size[0]; i++)
                ASSERT_EQ(out(i, j), i - j + in(i, j) + in(i + 1, j) + in(i + 2, j))
                    << i << "," << j;
    }
}

// An inline reduction goes inside the loops around its uses, down to the innermost one its
// points depend on: a row's sum used at every point of the row is computed once per row.
TEST(Pipelines, InlineReductionsGoInTheInnermostLoopTheyDependOn) {
    const int W = 50, H = 7;
    Buffer<float> in({W, H}, "in");
    fill_random(in, 0.5, 2.0, 47);
    Var x("x"), y("y");
    RDom r(0, W, "r");
    Func out("out");
    out(x, y) = in(x, y) / sum(in(r, y));
    out.vectorize(x, 8);
    const std::string nest = Pipeline(out).loop_nest(Target("host"));
    const size_t rows = nest.find("for out.s0.y"), reduce = nest.find("produce sum"),
                 points = nest.find("for out.s0.x");
    ASSERT_NE(reduce, std::string::npos) << nest;
    EXPECT_LT(rows, reduce) << nest;
    EXPECT_LT(reduce, points) << nest;
    Buffer<float> o = out.realize({W, H});
    for (int j = 0; j < H; j++) {
        double total = 0;
        for (int i = 0; i < W; i++)
            total += in(i, j);
        for (int i = 0; i < W; i++)
            EXPECT_TRUE(aicf_test::close(o(i, j), in(i, j) / total, 1e-5, 1e-7)) << i << "," << j;
    }
}

// Indices shifted by constants are bounded like the divisions and multiplications they are
// (an arithmetic shift right rounds down), and by a bounded amount they move toward 0 (or -1).
TEST(Pipelines, IndicesShiftedByConstantsAreBounded) {
    Buffer<int> in({80}, "in");
    fill_random(in, -1000, 1000, 38);
    in.set_min({-20});
    Var x("x");
    Func half("half"), twice("twice"), mixed("mixed"), varying("varying");
    half(x) = in(x >> 1);
    twice(x) = in(x << 1);
    mixed(x) = in(((x * 3) >> 2) - 5);
    varying(x) = in(x >> (x & 3));
    Buffer<int> h = half.realize({99}), t = twice.realize({30}), m = mixed.realize({60}),
                v = varying.realize({60});
    auto floor_shift = [](int a, int b) { return a >= 0 ? a >> b : -((-a + (1 << b) - 1) >> b); };
    for (int i = 0; i < 99; i++)
        ASSERT_EQ(h(i), in(i >> 1)) << i;
    for (int i = 0; i < 30; i++)
        ASSERT_EQ(t(i), in(i << 1)) << i;
    for (int i = 0; i < 60; i++) {
        ASSERT_EQ(m(i), in(floor_shift(i * 3, 2) - 5)) << i;
        ASSERT_EQ(v(i), in(i >> (i & 3))) << i;
    }
    // Negative indices: x >> 1 rounds toward negative infinity.
    Buffer<int> neg({30}, "neg");
    neg.set_min({-30});
    half.realize(neg);
    for (int i = -30; i < 0; i++)
        ASSERT_EQ(neg(i), in(floor_shift(i, 1))) << i;
    // A histogram whose bin is a byte shifted right by 3: 32 bins.
    Buffer<uint8_t> bytes({1000}, "bytes");
    for (int i = 0; i < 1000; i++)
        bytes(i) = uint8_t((i * 73 + 11) % 256);
    Func hist("hist");
    RDom r(0, 1000, "r");
    hist(x) = 0;
    hist(cast<int>(bytes(r)) >> 3) += 1;
    Buffer<int> counts = hist.realize({32});
    std::vector<int> want(32, 0);
    for (int i = 0; i < 1000; i++)
        want[size_t(bytes(i) >> 3)]++;
    for (int b = 0; b < 32; b++)
        ASSERT_EQ(counts(b), want[size_t(b)]) << b;
}

TEST(Schedules, LoopNestShowsTheSchedule) {
    Var x("x"), y("y"), xo("xo"), xi("xi");
    Func f("f"), g("g");
    f(x, y) = x + y;
    g(x, y) = f(x, y) * 2;
    g.split(x, xo, xi, 4);
    f.compute_at(g, xo);
    std::string nest = g.loop_nest();
    EXPECT_NE(
        nest.find(
            "produce g:\n  for g.s0.y:\n    for g.s0.xo:\n      store f:\n        produce f:"),
        std::string::npos)
        << nest;
    EXPECT_NE(nest.find("for g.s0.xi in [0, 4):"), std::string::npos) << nest;
}

TEST(Schedules, LoopLevelCanBeSetLater) {
    Var x("x"), y("y");
    Func f("f"), g("g");
    f(x, y) = x * 2 + y;
    g(x, y) = f(x, y) + f(x, y + 1);
    LoopLevel where;
    f.compute_at(where);
    where.set(LoopLevel("g", "y"));
    std::string nest = g.loop_nest();
    EXPECT_NE(nest.find("for g.s0.y:\n    store f:"), std::string::npos) << nest;
    Buffer<int> out = g.realize({5, 4});
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 5; i++)
            EXPECT_EQ(out(i, j), (i * 2 + j) + (i * 2 + j + 1));
}

// Compilation runs on a thread of its own with a large stack, so a pipeline can be defined,
// compiled and run from a thread with a small one (LLVM alone needs more than 256 KiB).
TEST(Pipelines, RealizeFromAThreadWithASmallStack) {
    struct Result {
        int value = 0;
        std::string error;
    } result;
    auto body = [](void *p) -> void * {
        auto *r = static_cast<Result *>(p);
        try {
            Var x("x"), y("y");
            Func f("small_stack_f"), g("small_stack_g");
            Expr e = x;
            for (int i = 0; i < 300; i++)
                e = max(e, y + i) * 3 - x;
            f(x, y) = e;
            g(x, y) = f(x, y) + f(x + 1, y);
            g.vectorize(x, 8).parallel(y);
            Buffer<int> b = g.realize({16, 4});
            r->value = b(3, 2);
        } catch (const std::exception &e) {
            r->error = e.what();
        }
        return nullptr;
    };
    pthread_attr_t attr;
    ASSERT_EQ(pthread_attr_init(&attr), 0);
    ASSERT_EQ(pthread_attr_setstacksize(&attr, 256 * 1024), 0);
    pthread_t thread;
    ASSERT_EQ(pthread_create(&thread, &attr, body, &result), 0);
    pthread_join(thread, nullptr);
    pthread_attr_destroy(&attr);
    EXPECT_EQ(result.error, "");
    // The same expression evaluated here.
    auto value = [](int x, int y) {
        int64_t e = x;
        for (int i = 0; i < 300; i++)
            e = int32_t(uint32_t(std::max<int64_t>(e, y + i)) * 3u - uint32_t(x));
        return int32_t(e);
    };
    EXPECT_EQ(result.value, int32_t(uint32_t(value(3, 2)) + uint32_t(value(4, 2))));
}

// Each step uses the step before twice: as a tree the value doubles at every step (2^300
// nodes here), as a graph it grows by a few nodes. Bounds of the let-bound steps used to grow
// with the tree, and lowering ran out of memory after about 22 steps.
TEST(Pipelines, StepsThatUseTheStepBeforeTwice) {
    Buffer<float> table(100);
    fill_random(table, -1, 1, 4);
    Var x("x");
    Expr t = cast<float>(x);
    for (int i = 0; i < 300; i++)
        t = max(t * 1.5f, t + float(i % 7)) * 0.5f - 1.0f;
    Func f("twice");
    f(x) = t + table(clamp(cast<int>(t), 0, 99));
    f.vectorize(x, 8);
    Buffer<float> out = f.realize({40});
    for (int i = 0; i < 40; i++) {
        float v = float(i);
        for (int k = 0; k < 300; k++)
            v = std::max(v * 1.5f, v + float(k % 7)) * 0.5f - 1.0f;
        float want = v + table(std::min(std::max(int(v), 0), 99));
        EXPECT_TRUE(aicf_test::close(out(i), want, 1e-5, 1e-5))
            << i << ": " << out(i) << " vs " << want;
    }
}

namespace {

// An integer that uses the step before twice at each of `steps` steps, and the same in C++.
Expr twice_per_step(Expr t, int steps) {
    for (int i = 0; i < steps; i++)
        t = (max(t * 3, t + i) % 97) + 1;
    return t;
}
int64_t twice_per_step_reference(int64_t t, int steps) {
    for (int i = 0; i < steps; i++)
        t = std::max(t * 3, t + i) % 97 + 1;
    return t;
}

} // namespace

// The same in a where predicate (printed whole into the compile cache's key, and copied node
// by node when the RDom took it) and in a condition marked likely() (expanded by loop
// partitioning): each used to take time exponential in the number of steps.
TEST(Pipelines, ConditionsThatUseTheStepBeforeTwice) {
    const int steps = 200;
    Var x("x");
    RDom q(0, 10, "q");
    q.where(twice_per_step(x + q, steps) < 50);
    Func counted("counted"), chosen("chosen");
    counted(x) = 0;
    counted(x) += q;
    chosen(x) = select(likely(twice_per_step(x, steps) < 50), x, -x);
    Buffer<int> c = counted.realize({30}), s = chosen.realize({30});
    for (int i = 0; i < 30; i++) {
        int want = 0;
        for (int k = 0; k < 10; k++)
            if (twice_per_step_reference(i + k, steps) < 50) want += k;
        EXPECT_EQ(c(i), want) << i;
        EXPECT_EQ(s(i), twice_per_step_reference(i, steps) < 50 ? i : -i) << i;
    }
}

// Inlined chains whose stages read the stage before at two points: expanded as a tree, stage n
// makes 2^n calls; each inlined definition is simplified before its consumers take it (a
// blur of n + 1 taps), so these compile at once. Exact integers against a plain loop.
TEST(Pipelines, LongChainsOfInlinedStages) {
    const int N = 60, W = 37, H = 3;
    Buffer<uint32_t> in({W + 2 * N, H}, "in");
    aicf_test::fill_random(in, 0, 1000, 61);
    Var x("x"), y("y");
    // Each stage the sum of its predecessor's neighbours (wrapping, as the type does).
    Func f("f0");
    f(x, y) = in(x + N, y);
    for (int i = 1; i <= N; i++) {
        Func g("f" + std::to_string(i));
        g(x, y) = f(x - 1, y) + f(x + 1, y);
        f = g;
    }
    // Fibonacci-like: each stage reads the two before it.
    Func a("a0"), b("a1");
    a(x, y) = in(x, y);
    b(x, y) = in(x + 1, y) * 3u;
    for (int i = 2; i <= N; i++) {
        Func c("a" + std::to_string(i));
        c(x, y) = b(x, y) + a(x + 1, y) * 2u;
        a = b;
        b = c;
    }
    Buffer<uint32_t> chain = f.realize({W, H}), fib = b.realize({W, H});
    for (int j = 0; j < H; j++) {
        std::vector<uint32_t> cur(W + 2 * N), next(W + 2 * N);
        for (int i = 0; i < W + 2 * N; i++)
            cur[i] = in(i, j);
        for (int s = 1; s <= N; s++) {
            for (int i = s; i < W + 2 * N - s; i++)
                next[i] = cur[i - 1] + cur[i + 1];
            std::swap(cur, next);
        }
        for (int i = 0; i < W; i++) {
            ASSERT_EQ(chain(i, j), cur[i + N]) << i << ", " << j;
            // a_n(x) = a_{n-1}(x) + 2 a_{n-2}(x + 1), over x .. x + N.
            std::vector<uint32_t> older(N + 2), old(N + 2), now(N + 2);
            for (int k = 0; k <= N + 1 && i + k < W + 2 * N; k++) {
                older[k] = in(i + k, j);
                old[k] = in(i + k + 1, j) * 3u;
            }
            for (int s = 2; s <= N; s++) {
                for (int k = 0; k + 1 <= N + 1; k++)
                    now[k] = old[k] + older[k + 1] * 2u;
                older = old;
                old = now;
            }
            ASSERT_EQ(fib(i, j), old[0]) << i << ", " << j;
        }
    }
}

// A pyramid down and up again, every level at the root and vectorized: each level down is read
// by the next level down and by its level up, whose vectorized region rounds by both ends of
// its consumer's, so the regions nest twice per level (eight levels took 11 s in lowering
// when they were expanded). Against double precision, at a size no level divides.
TEST(Pipelines, PyramidOfLevelsAtTheRoot) {
    const int L = 8, W = 203, H = 117;
    Buffer<float> in({W, H}, "in");
    aicf_test::fill_random(in, -1.0f, 1.0f, 62);
    Var x("x"), y("y");
    std::vector<Func> down(L + 1), up(L + 1);
    down[0](x, y) = in(clamp(x, 0, W - 1), clamp(y, 0, H - 1));
    for (int l = 1; l <= L; l++) {
        const Func &p = down[size_t(l - 1)];
        down[size_t(l)](x, y) = (p(2 * x - 1, 2 * y) + 2.0f * p(2 * x, 2 * y) +
                                 p(2 * x + 1, 2 * y) + p(2 * x, 2 * y + 1)) *
                                0.2f;
        down[size_t(l)].compute_root().parallel(y).vectorize(x, 8);
    }
    up[L] = down[L];
    for (int l = L - 1; l >= 0; l--) {
        const Func &q = up[size_t(l + 1)];
        up[size_t(l)](x, y) =
            0.5f * (q(x / 2, y / 2) + q((x + 1) / 2, y / 2)) + 0.1f * down[size_t(l)](x, y);
        up[size_t(l)].compute_root().parallel(y).vectorize(x, 8);
    }
    Buffer<float> out = up[0].realize({W, H});
    std::map<std::tuple<int, int, int>, double> memo_down, memo_up;
    std::function<double(int, int, int)> d = [&](int l, int i, int j) -> double {
        if (l == 0) return in(std::clamp(i, 0, W - 1), std::clamp(j, 0, H - 1));
        auto [it, fresh] = memo_down.try_emplace({l, i, j}, 0.0);
        if (fresh)
            it->second = (d(l - 1, 2 * i - 1, 2 * j) + 2.0 * d(l - 1, 2 * i, 2 * j) +
                          d(l - 1, 2 * i + 1, 2 * j) + d(l - 1, 2 * i, 2 * j + 1)) *
                         0.2;
        return it->second;
    };
    std::function<double(int, int, int)> u = [&](int l, int i, int j) -> double {
        if (l == L) return d(L, i, j);
        auto [it, fresh] = memo_up.try_emplace({l, i, j}, 0.0);
        if (fresh)
            it->second =
                0.5 * (u(l + 1, i / 2, j / 2) + u(l + 1, (i + 1) / 2, j / 2)) + 0.1 * d(l, i, j);
        return it->second;
    };
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++)
            ASSERT_TRUE(aicf_test::close(out(i, j), u(0, i, j), 1e-4, 1e-5)) << i << ", " << j;
}

// The same in the index an update writes (copied node by node on its way into the loop nest)
// and in the value of a reduction split by rfactor (whose self-references were replaced node
// by node).
TEST(Pipelines, UpdatesThatUseTheStepBeforeTwice) {
    const int steps = 200;
    Var x("x"), u("u");
    RDom r(0, 64, "r");
    Func histogram("histogram"), total("total");
    histogram(x) = 0;
    histogram(twice_per_step(r, steps) % 16) += 1;
    total() = 0;
    total() += twice_per_step(r, steps);
    RVar ro("ro"), ri("ri");
    total.update().split(r, ro, ri, 4).rfactor(ri, u);
    Buffer<int> h = histogram.realize({16});
    Buffer<int> t = total.realize(std::vector<int>{});
    std::vector<int> want_h(16, 0);
    int want_t = 0;
    for (int i = 0; i < 64; i++) {
        want_h[twice_per_step_reference(i, steps) % 16]++;
        want_t += int(twice_per_step_reference(i, steps));
    }
    for (int i = 0; i < 16; i++)
        EXPECT_EQ(h(i), want_h[i]) << i;
    EXPECT_EQ(t(), want_t);
}

TEST(Pipelines, SecondRealizeReusesCompiledCode) {
    Var x("x");
    Func f("cached_f");
    f(x) = x * 7 + 1;
    Buffer<int> a = f.realize({10});
    size_t compiled = detail::compiled_pipeline_count();
    Buffer<int> b = f.realize({20}); // same algorithm and schedule, other size
    EXPECT_EQ(detail::compiled_pipeline_count(), compiled);
    EXPECT_EQ(b(19), 19 * 7 + 1);
    f.vectorize(x, 4); // a new schedule compiles anew
    Buffer<int> c = f.realize({20});
    EXPECT_EQ(detail::compiled_pipeline_count(), compiled + 1);
    EXPECT_EQ(c(18), 18 * 7 + 1);
}

// Outputs may read each other: whatever order the Pipeline lists them in, each is computed
// before the Funcs that read it, directly or through an intermediate computed at the root or
// inside a loop of another output; and a read past an output's buffer is a run-time error.
TEST(Pipelines, OutputsThatReadOtherOutputs) {
    const int N = 37;
    Buffer<int> in({N + 1}, "in");
    fill_random(in, -1000, 1000, 5);
    for (int placement = 0; placement < 3; placement++) {
        for (bool listed_first : {true, false}) {
            SCOPED_TRACE("placement " + std::to_string(placement) +
                         (listed_first ? ", the reader listed first" : ", the read listed first"));
            Var x("x"), xo("xo"), xi("xi");
            Func f("read_out"), h("between"), g("reader_out");
            f(x) = in(x)*3 - 2;
            if (placement == 0) {
                g(x) = f(x) * 5 + 1; // reads f directly
            } else {
                h(x) = f(x) - f(x) / 7;
                g(x) = h(x) * 5 + 1;
                if (placement == 1) h.compute_root();
                if (placement == 2)
                    g.split(x, xo, xi, 8, TailStrategy::GuardWithIf), h.compute_at(g, xo);
            }
            Pipeline p(listed_first ? std::vector<Func>{g, f} : std::vector<Func>{f, g});
            Buffer<int> gb({N}, "gb"), fb({N}, "fb");
            p.realize(listed_first ? Realization(gb, fb) : Realization(fb, gb));
            for (int i = 0; i < N; i++) {
                const int fv = in(i)*3 - 2;
                // Integer division rounds toward negative infinity.
                const int hv = fv - (fv >= 0 ? fv / 7 : -((-fv + 6) / 7));
                ASSERT_EQ(fb(i), fv) << i;
                ASSERT_EQ(gb(i), (placement == 0 ? fv : hv) * 5 + 1) << i;
            }
        }
    }
    // g reads f one past the end of f's buffer.
    Var x("x");
    Func f("short_out"), g("past_reader");
    f(x) = in(x)*3;
    g(x) = f(x + 1) - f(x);
    Pipeline p({g, f});
    Buffer<int> gb({N}, "gb"), fb({N}, "fb");
    EXPECT_CONTAINS(message_of<RuntimeError>([&] { p.realize(Realization(gb, fb)); }),
                    "Buffer short_out is too small: dimension 0 must cover [0, 37], but it covers "
                    "[0, 36]. It is read by Func past_reader");
    Buffer<int> longer({N + 1}, "fb");
    p.realize(Realization(gb, longer));
    for (int i = 0; i < N; i++)
        ASSERT_EQ(gb(i), in(i + 1) * 3 - in(i)*3) << i;
}

TEST(Schedules, WrappersStageCopiesWhereScheduled) {
    const int W = 29, H = 21;
    Buffer<int> ref = stencil([](Func &, Func &, Var &, Var &) {}, W, H);
    // A copy of f that only g reads, computed per tile of g.
    expect_same(ref, stencil(
                         [](Func &f, Func &g, Var &x, Var &y) {
                             Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
                             g.tile(x, y, xo, yo, xi, yi, 8, 8);
                             f.compute_root();
                             f.in(g).compute_at(g, xo).vectorize(x, 4);
                         },
                         W, H));
    // A wrapper for every consumer, and a wrapper of that wrapper.
    expect_same(ref, stencil(
                         [](Func &f, Func &g, Var &, Var &y) {
                             Func staged = f.in();
                             staged.compute_at(g, y);
                             staged.in().compute_at(g, y);
                         },
                         W, H));
}

// A reduction reads itself in its update; it is not a consumer of its own wrapper, and a
// wrapper of what it reads works as for any other consumer.
TEST(Schedules, WrappersAroundAReduction) {
    const int W = 13, H = 9, K = 7;
    Buffer<int> in({W, K}, "in");
    fill_random(in, -50, 50, 3);
    auto run = [&](int variant) {
        Var x("x"), y("y");
        RDom k(0, K, "k");
        Func g("g"), out("out");
        g(x, y) = in(x, y) * 2 + 1;
        out(x, y) = 0;
        out(x, y) += g(x, k) * (y + 1);
        g.compute_root();
        if (variant == 1) g.in().compute_root();
        if (variant == 2) g.in(out).compute_at(out, y);
        if (variant == 3) out.in(); // no other consumer: the wrapper goes unused
        return out.realize({W, H});
    };
    for (int variant = 0; variant < 4; variant++) {
        Buffer<int> out = run(variant);
        for (int j = 0; j < H; j++)
            for (int i = 0; i < W; i++) {
                int want = 0;
                for (int r = 0; r < K; r++)
                    want += (in(i, r) * 2 + 1) * (j + 1);
                ASSERT_EQ(out(i, j), want) << "variant " << variant << " at " << i << "," << j;
            }
    }
}

TEST(Schedules, WrapperAppearsInTheLoopNest) {
    Var x("x"), y("y"), xo("xo"), xi("xi");
    Func f("f"), g("g");
    f(x, y) = x + y;
    g(x, y) = f(x, y) * 2 + f(x + 1, y);
    f.compute_root();
    Func copy = f.in(g);
    EXPECT_EQ(copy.name(), "f_in_g");
    EXPECT_TRUE(f.in(g).function().same_as(copy.function())); // asking again: the same wrapper
    g.split(x, xo, xi, 4);
    copy.compute_at(g, xo);
    std::string nest = g.loop_nest();
    EXPECT_NE(nest.find("for g.s0.xo:\n          store f_in_g:\n            produce f_in_g:"),
              std::string::npos)
        << nest;
    Buffer<int> out = g.realize({10, 3});
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 10; i++)
            EXPECT_EQ(out(i, j), (i + j) * 2 + (i + 1 + j));
}

TEST(Schedules, StorageLayoutAndRegionDirectives) {
    const int W = 31, H = 17;
    Buffer<int> ref = stencil([](Func &, Func &, Var &, Var &) {}, W, H);
    expect_same(ref,
                stencil([](Func &f, Func &, Var &x,
                           Var &y) { f.compute_root().reorder_storage(y, x).align_storage(y, 16); },
                        W, H));
    expect_same(ref,
                stencil([](Func &f, Func &, Var &x,
                           Var &) { f.compute_root().align_bounds(x, 4, 3).align_storage(x, 32); },
                        W, H));
    // A fixed region large enough for what g reads: [-1, W] x [-1, H].
    expect_same(ref,
                stencil([&](Func &f, Func &, Var &x,
                            Var &y) { f.compute_root().bound(x, -1, W + 2).bound(y, -1, H + 2); },
                        W, H));
}

// align_bounds rounds the region a producer computes out to whole blocks, and an input
// exactly that large suffices: the region's end is the end of the block that holds the last
// point read, found exactly for outputs of any size and start.
TEST(Schedules, AlignedRegionsNeedInputsOfExactlyTheirSize) {
    for (int start : {0, 3, -5}) {
        for (int width : {1, 7, 23, 24, 100}) {
            SCOPED_TRACE("outputs [" + std::to_string(start) + ", " +
                         std::to_string(start + width - 1) + "]");
            // f is read over [start, start + width], rounded out to blocks of 8 from 0.
            const int lo = start >= 0 ? start / 8 * 8 : -((-start + 7) / 8) * 8;
            const int last = start + width,
                      hi = (last >= 0 ? last / 8 : -((-last + 7) / 8)) * 8 + 7;
            Buffer<float> in({hi - lo + 1}, "in");
            in.set_min({lo});
            fill_random(in, -1, 1, unsigned(width));
            Var x("x");
            Func f("f"), g("g");
            f(x) = in(x)*3.0f;
            g(x) = f(x) + f(x + 1);
            f.compute_root().align_bounds(x, 8);
            Buffer<float> out({width});
            out.set_min({start});
            g.realize(out);
            for (int i = start; i < start + width; i++)
                ASSERT_EQ(out(i), in(i)*3.0f + in(i + 1) * 3.0f) << i;
        }
    }
}

TEST(Schedules, BoundMakesAnExtentConstant) {
    Buffer<float> in(3, 10);
    for (int j = 0; j < 10; j++)
        for (int c = 0; c < 3; c++)
            in(c, j) = float(c + 10 * j);
    Var c("c"), x("x");
    Func f("f");
    f(c, x) = in(c, x) * 2.0f;
    f.bound(c, 0, 3).unroll(c).reorder(x, c);
    Buffer<float> out = f.realize({3, 10});
    for (int j = 0; j < 10; j++)
        for (int k = 0; k < 3; k++)
            EXPECT_EQ(out(k, j), in(k, j) * 2.0f);
}

// A producer computed per tile of a split with GuardWithIf needs fewer points at the last
// tile (3 of its 9 there): its region's extent is not a constant, but at most 9, so its loop
// is unrolled into 9 guarded copies. bound_extent computes the 9 points from the first needed
// at every tile instead (the last tile's reading the input that far); both against a plain
// loop, at sizes 8 divides and not.
TEST(Schedules, BoundExtentKeepsAGuardedTilesProducerWhole) {
    for (int n : {37, 40, 1}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        Buffer<float> in({n + 8}, "in");
        fill_random(in, -1, 1, unsigned(n));
        Var x("x"), xo("xo"), xi("xi");
        Func g("g"), out("out");
        g(x) = in(x)*2.0f + 1.0f;
        out(x) = g(x) + g(x + 1);
        out.split(x, xo, xi, 8, TailStrategy::GuardWithIf);
        g.compute_at(out, xo).unroll(x);
        for (int fixed = 0; fixed < 2; fixed++) {
            if (fixed) g.bound_extent(x, 9);
            // Unrolled: no loop over g's points is left.
            EXPECT_EQ(out.lowered_stmt().find("for (g.s0.x"), std::string::npos);
            Buffer<float> o = out.realize({n});
            for (int i = 0; i < n; i++)
                ASSERT_EQ(o(i), (in(i)*2.0f + 1.0f) + (in(i + 1) * 2.0f + 1.0f)) << i;
        }
    }
}

// parallel(y, n) twice, as Halide allows (a Func scheduled by two loops of a program): the
// second splits y again, into tasks of n * n rows. RVars made without a name get one.
TEST(Schedules, ParallelTwiceAndUnnamedRVars) {
    Buffer<float> in({13, 70}, "in");
    fill_random(in, -1, 1, 81);
    Var x("x"), y("y");
    Func f("f");
    f(x, y) = in(x, y) * 3.0f;
    f.parallel(y, 4).parallel(y, 2, TailStrategy::GuardWithIf);
    const std::string stmt = f.lowered_stmt();
    EXPECT_CONTAINS(stmt, "parallel for (f.s0.y,");
    // One parallel loop: each task runs its 8 rows in order.
    EXPECT_EQ(stmt.find("parallel for", stmt.find("parallel for") + 1), std::string::npos) << stmt;
    Buffer<float> o = f.realize({13, 70});
    for (int j = 0; j < 70; j++)
        for (int i = 0; i < 13; i++)
            ASSERT_EQ(o(i, j), in(i, j) * 3.0f) << i << ", " << j;

    RDom r(0, 13, "r");
    RVar ro, ri;
    EXPECT_NE(ro.name(), ri.name());
    Func s("s");
    s(y) = 0.0f;
    s(y) += in(r, y);
    s.update().split(r, ro, ri, 4, TailStrategy::GuardWithIf).reorder(ri, ro);
    Buffer<float> t = s.realize({70});
    for (int j = 0; j < 70; j++) {
        double sum = 0;
        for (int i = 0; i < 13; i++)
            sum += in(i, j);
        ASSERT_TRUE(aicf_test::close(t(j), sum, 1e-5, 1e-5)) << j;
    }
}

// Halide's spellings of a few things: gpu_tile(x, y, xi, yi, w, h) with x and y the block
// loops, Target::host(), an RDom over a buffer's region, Buffer::dim(d). Against plain loops.
TEST(Schedules, HalideSpellings) {
    Buffer<float> in({23, 11}, "in");
    in.set_min({-4, 2});
    fill_random(in, -1, 1, 91);
    EXPECT_EQ(in.dim(0).min(), -4);
    EXPECT_EQ(in.dim(0).max(), 18);
    EXPECT_EQ(in.dim(1).extent(), 11);
    EXPECT_EQ(in.dim(1).stride(), 23);
    EXPECT_EQ(Target::host(), Target());

    Var x("x"), y("y"), z("z"), xi("xi"), yi("yi"), zi("zi");
    RDom r(in, "r");
    Func total("total");
    total() = 0.0f;
    total() += in(r.x, r.y);
    Buffer<float> t = total.realize({});
    double sum = 0;
    for (int j = 2; j < 13; j++)
        for (int i = -4; i < 19; i++)
            sum += in(i, j);
    EXPECT_TRUE(aicf_test::close(t(), sum, 1e-5, 1e-4)) << t() << " vs " << sum;

    ImageParam im(Float(32), 2, "im");
    im.set(in);
    RDom ri(im);
    Func colsum("colsum");
    colsum(x) = 0.0f;
    colsum(x) += im(ri.x, ri.y) * cast<float>(ri.x == x);
    Buffer<float> c({23});
    c.set_min({-4});
    colsum.realize(c);
    for (int i = -4; i < 19; i++) {
        double col = 0;
        for (int j = 2; j < 13; j++)
            col += in(i, j);
        ASSERT_TRUE(aicf_test::close(c(i), col, 1e-5, 1e-5)) << i;
    }

    const Target gpu = aicf_test::gpu_test_target();
    for (int dims = 1; dims <= 3; dims++) {
        SCOPED_TRACE(std::to_string(dims) + "-D gpu_tile");
        Func f("f");
        f(x, y, z) = in(clamp(x - 4, -4, 18), clamp(y + 2, 2, 12)) + cast<float>(z);
        if (dims == 1) f.gpu_tile(x, xi, 8, TailStrategy::GuardWithIf);
        if (dims == 2) f.gpu_tile(x, y, xi, yi, 8, 4, TailStrategy::GuardWithIf);
        if (dims == 3) f.gpu_tile(x, y, z, xi, yi, zi, 8, 4, 2, TailStrategy::GuardWithIf);
        Buffer<float> o = f.realize({21, 9, 3}, gpu);
        o.copy_to_host();
        for (int k = 0; k < 3; k++)
            for (int j = 0; j < 9; j++)
                for (int i = 0; i < 21; i++)
                    ASSERT_EQ(o(i, j, k),
                              in(std::clamp(i - 4, -4, 18), std::clamp(j + 2, 2, 12)) + float(k))
                        << i << ", " << j << ", " << k;
    }
}

// A histogram computed per tile of its consumer reaches bins outside the tile's region: its
// bound_extent counts from the first point the consumer reads or the update writes (it
// counted from the consumer's first, and refused every tile after the first). Too small an
// extent is a RuntimeError, on the CPU and in a GPU kernel (where it was a fault), against a
// plain count.
TEST(Schedules, BoundExtentOfAHistogramComputedPerTile) {
    const int N = 301, bins = 9, width = 27;
    Buffer<int> v({N}, "v");
    fill_random(v, 0.5, bins - 0.5, 61);
    std::vector<int> count(width, 0);
    for (int i = 0; i < N; i++)
        count[v(i) - 1]++; // (fill_random gives 1 to 9)
    for (bool gpu : {false, true}) {
        for (int extent : {64, 8}) {
            SCOPED_TRACE(std::string(gpu ? "gpu" : "cpu") + ", bound_extent " +
                         std::to_string(extent));
            Var x("x"), xo("xo"), xi("xi");
            RDom r(0, N, "r");
            RVar ro("ro"), ri("ri");
            Func h("h"), out("out");
            h(x) = 0;
            h(clamp(v(r) - 1, 0, bins - 1)) += 1;
            out(x) = h(x);
            Target t;
            if (gpu) {
                t = aicf_test::gpu_test_target();
                out.gpu_tile(x, xo, xi, 9);
                h.compute_at(out, xo).store_in(MemoryType::GPUShared).gpu_threads(x);
                h.update().atomic().split(r, ro, ri, 32).gpu_threads(ri);
            } else {
                out.split(x, xo, xi, 9);
                h.compute_at(out, xo);
            }
            h.bound_extent(x, extent);
            if (extent < bins) {
                EXPECT_CONTAINS(message_of<RuntimeError>([&] { out.realize({width}, t); }),
                                "Func h is bound to [0, 7] in dimension 0 (its bound_extent from "
                                "the first point needed), but its consumers need [0, 8].");
                continue;
            }
            Buffer<int> o = out.realize({width}, t);
            for (int b = 0; b < width; b++)
                ASSERT_EQ(o(b), count[b]) << b;
        }
    }
}

TEST(RFactor, SumSplitIntoParallelPartialSums) {
    const int N = 1000, R = 7;
    Buffer<int> in(N, R);
    fill_random(in, -50, 50, 41);
    auto build = [&](bool factor) {
        Var y("y"), u("u");
        RDom k(0, N, "k");
        Func total("total");
        total(y) = 0;
        total(y) += in(k, y);
        if (factor) {
            Func intm = total.update().rfactor(k.x, u);
            intm.compute_root().update().parallel(u);
            EXPECT_EQ(intm.name(), "total_intm");
        }
        return Buffer<int>(total.realize({R}));
    };
    Buffer<int> a = build(false), b = build(true);
    for (int j = 0; j < R; j++)
        EXPECT_EQ(a(j), b(j)) << j;
}

// Two updates of one Func, each reduced in partials, and one update factored twice: the
// intermediates are total_intm, total_intm2, ... (two of one name were refused). Against
// plain loops.
TEST(RFactor, SeveralIntermediatesOfOneFunc) {
    const int N = 203, R = 3;
    Buffer<int> in({N, R}, "in");
    fill_random(in, -50, 50, 43);
    Var x("x"), y("y"), u("u"), v("v");
    RVar ko("ko"), ki("ki");
    RDom k(0, N, "k"), m(0, N, "m");
    Func total("total");
    total(y) = 1;
    total(y) += in(k, y);
    total(y) = max(total(y), in(m, y) * 3);
    Func first = total.update(0).rfactor(k.x, u);
    Func second = total.update(1).split(m.x, ko, ki, 16).rfactor(ki, v);
    first.compute_root();
    second.compute_root();
    EXPECT_EQ(first.name(), "total_intm");
    EXPECT_EQ(second.name(), "total_intm2");
    Buffer<int> out = total.realize({R});
    auto row_sum = [&](int j) {
        int64_t s = 0;
        for (int i = 0; i < N; i++)
            s += in(i, j);
        return s;
    };
    for (int j = 0; j < R; j++) {
        int64_t want = 1 + row_sum(j);
        for (int i = 0; i < N; i++)
            want = std::max<int64_t>(want, 3 * in(i, j));
        EXPECT_EQ(out(j), want) << j;
    }
    Func twice("twice");
    RDom r(0, N, "r");
    twice(y) = 0;
    twice(y) += in(r, y);
    twice.update().split(r, ko, ki, 8);
    Func inner = twice.update().rfactor(ki, u);
    Func outer = twice.update().rfactor(RVar("u"), v);
    EXPECT_EQ(outer.name(), "twice_intm2");
    inner.compute_root();
    outer.compute_root();
    Buffer<int> sums = twice.realize({R});
    for (int j = 0; j < R; j++)
        EXPECT_EQ(sums(j), row_sum(j)) << j;
    // The new variable may not take the name of a loop that stays.
    Func clash("clash");
    RDom c(0, N, "c");
    clash(y) = 0;
    clash(y) += in(c, y);
    clash.update().split(c, ko, ki, 8);
    EXPECT_CONTAINS(message_of<CompileError>([&] { clash.update().rfactor(ki, Var("ko")); }),
                    "rfactor of clash.update(0): the new variable ko has the name of a loop of "
                    "clash.update(0). Use a new Var.");
    // A reduction variable on the left side chooses the point written: nothing to reduce.
    Func scatter("scatter");
    RDom s(0, N, "s");
    scatter(x) = 0;
    scatter(s) = scatter(s) + in(s, 0);
    EXPECT_CONTAINS(message_of<CompileError>([&] { scatter.update().rfactor(s, u); }),
                    "rfactor of scatter.update(0): s.x chooses the point the update writes");
}

// f -= e is a sum of negated values: rfactor splits it into partials and atomic() updates
// with it, ints and floats, against plain loops.
TEST(RFactor, SubtractingUpdates) {
    const int N = 1001, R = 5, B = 37;
    Buffer<int> d({N, R}, "d");
    fill_random(d, -9, 9, 44);
    Buffer<float> df({N}, "df");
    fill_random(df, -1, 1, 45);
    Var y("y"), u("u"), x("x");
    RVar ko("ko"), ki("ki");
    RDom k(0, N, "k");
    Func f("f");
    f(y) = 3;
    f(y) -= d(k, y);
    f.update().split(k, ko, ki, 4).rfactor(ki, u).compute_root().vectorize(u);
    Buffer<int> out = f.realize({R});
    for (int j = 0; j < R; j++) {
        int want = 3;
        for (int i = 0; i < N; i++)
            want -= d(i, j);
        EXPECT_EQ(out(j), want) << j;
    }
    Func g("g");
    RDom r(0, N, "r");
    g() = 0.5f;
    g() -= df(r);
    g.update().split(r, ko, ki, 8).rfactor(ko, u).compute_root().parallel(u);
    Buffer<float> gs = g.realize({});
    double want = 0.5;
    for (int i = 0; i < N; i++)
        want -= df(i);
    EXPECT_NEAR(gs(), want, 1e-3);
    Func h("h");
    RDom q(0, N, "q");
    h(x) = 0;
    h(clamp(d(q, 0) * 3 + 18, 0, B - 1)) -= d(q, 1);
    h.update().atomic().split(q, ko, ki, 100).parallel(ko);
    Buffer<int> hist = h.realize({B});
    std::vector<int> bins(B, 0);
    for (int i = 0; i < N; i++)
        bins[std::clamp(d(i, 0) * 3 + 18, 0, B - 1)] -= d(i, 1);
    for (int b = 0; b < B; b++)
        EXPECT_EQ(hist(b), bins[b]) << b;
}

// Bitwise and logical reductions are associative: a checksum (^), a mask of the flags seen
// (|) and of those always set (&), and "any"/"all" of bools, in vectorized and parallel
// partials through rfactor, as atomic() updates in parallel, and with their reduction loops
// reordered. Against plain loops.
TEST(RFactor, BitwiseAndLogicalReductions) {
    const int N = 1003, R = 5;
    Buffer<uint32_t> w({N, R}, "w");
    Buffer<int16_t> h({N}, "h");
    std::mt19937 rng(46);
    for (int j = 0; j < R; j++)
        for (int i = 0; i < N; i++)
            w(i, j) = uint32_t(rng()) | (j == 2 ? 0x10u : 0u);
    for (int i = 0; i < N; i++)
        h(i) = int16_t(rng());
    Var y("y"), u("u");
    RVar ko("ko"), ki("ki");
    RDom k(0, N, "k");
    Func x_or("x_or"), any_or("any_or"), all_and("all_and"), any("any"), all("all"), hx("hx");
    x_or(y) = 0u;
    x_or(y) = x_or(y) ^ w(k, y);
    any_or(y) = 0u;
    any_or(y) = (w(k, y) & 0x80000010u) | any_or(y);
    all_and(y) = 0xFFFFFFFFu;
    all_and(y) = all_and(y) & (w(k, y) | 0xFFFFFFEFu);
    any(y) = false;
    any(y) = any(y) || w(k, y) < 3000000u;
    all(y) = true;
    all(y) = (w(k, y) > 8000000u) && all(y);
    hx() = cast<int16_t>(0);
    hx() = hx() ^ h(k);
    x_or.update().split(k, ko, ki, 8).rfactor(ki, u).compute_root().vectorize(u);
    any_or.update().split(k, ko, ki, 64).rfactor(ko, u).compute_root().parallel(u);
    all_and.update().atomic().split(k, ko, ki, 100).parallel(ko);
    any.update().split(k, ko, ki, 16).rfactor(ki, u).compute_root().vectorize(u, 8);
    all.update().split(k, ko, ki, 7).reorder(ko, ki);
    hx.update().atomic().split(k, ko, ki, 128).parallel(ko);
    Buffer<uint32_t> a = x_or.realize({R}), b = any_or.realize({R}), c = all_and.realize({R});
    Buffer<bool> d = any.realize({R}), e = all.realize({R});
    Buffer<int16_t> f = hx.realize(std::vector<int>{});
    int16_t want_h = 0;
    for (int i = 0; i < N; i++)
        want_h = int16_t(want_h ^ h(i));
    EXPECT_EQ(f(), want_h);
    for (int j = 0; j < R; j++) {
        const aicf_test::BitwiseRow want =
            aicf_test::bitwise_row(w, j, N, 0x80000010u, 0xFFFFFFEFu, 3000000u, 8000000u);
        EXPECT_EQ(a(j), want.xor_all) << j;
        EXPECT_EQ(b(j), want.seen) << j;
        EXPECT_EQ(c(j), want.kept) << j;
        EXPECT_EQ(d(j), want.any_below) << j;
        EXPECT_EQ(e(j), want.all_above) << j;
    }
}

// A where() that reads the input at the reduction variable, which a split of a length the
// factor does not divide carries past the domain: the partials test the split's tail first.
TEST(RFactor, WhereReadingTheInputUnderASplitTail) {
    const int N = 211;
    Buffer<int> in({N}, "in");
    fill_random(in, -100, 100, 43);
    int64_t want = 0;
    for (int i = 0; i < N; i++)
        if (in(i) % 3 != 0) want += in(i);
    for (int factor : {9, 16, 211}) {
        RDom r(0, N, "r");
        r.where(in(r) % 3 != 0);
        Var u("u");
        RVar ro("ro"), ri("ri");
        Func s("s");
        s() = 0;
        s() += in(r);
        s.update().split(r, ro, ri, factor);
        Func partial = s.update().rfactor(ri, u);
        partial.compute_root().vectorize(u, 8);
        Buffer<int> got = s.realize(std::vector<int>{});
        EXPECT_EQ(got(), want) << "split by " << factor;
    }
}

// Sums over domains known only at run time (the input's own min and width, or the points of
// a fixed domain a where() keeps), split by factors that do not divide them: whichever loops
// rfactor preserves (the inner, the outer, both), the split's guard keeps every read inside
// the input, whose region is checked exactly, and no point outside the domain is summed.
TEST(RFactor, GuardedSplitsOverDomainsKnownAtRunTime) {
    Buffer<int> data({10}, "data"), wider({13}, "wider");
    data.set_min({-4});
    wider.set_min({-4});
    fill_random(data, -50, 50, 12);
    fill_random(wider, -50, 50, 13);
    enum Preserved { Inner, Outer, Both };
    for (Preserved p : {Inner, Outer, Both}) {
        for (int domain = 0; domain < 3; domain++) {
            SCOPED_TRACE("preserving " +
                         std::string(p == Inner   ? "the inner loop"
                                     : p == Outer ? "the outer loop"
                                                  : "both loops") +
                         ", domain " + std::to_string(domain));
            ImageParam in(Int(32), 1, "in");
            // 0: the input's min and width; 1: its min and 10 points (a wider input is
            // read only there); 2: 100 points from 0, kept where r < the input's width.
            RDom r = domain == 0   ? RDom(in.dim(0).min(), in.width(), "r")
                     : domain == 1 ? RDom(in.dim(0).min(), 10, "r")
                                   : RDom(0, 100, "r");
            if (domain == 2) r.where(r < in.width());
            Var u("u"), v("v");
            RVar ro("ro"), ri("ri");
            Func s("s");
            s() = 0;
            s() += domain == 2 ? in(r + in.dim(0).min()) : in(r);
            s.update().split(r, ro, ri, 3);
            Func partial = p == Inner   ? s.update().rfactor(ri, u)
                           : p == Outer ? s.update().rfactor(ro, u)
                                        : s.update().rfactor({{ro, u}, {ri, v}});
            partial.compute_root();
            for (Buffer<int> *b : {&data, &wider}) {
                if (domain != 1 && b == &wider) continue;
                in.set(*b);
                int want = 0;
                for (int i = -4; i < (domain == 1 ? 6 : b->width() - 4); i++)
                    want += (*b)(i);
                Buffer<int> got = s.realize(std::vector<int>{});
                EXPECT_EQ(got(), want) << "over " << b->width() << " points";
            }
        }
    }
}

TEST(RFactor, TwoDimensionalReductionKeepsOneDimension) {
    const int W = 37, H = 23;
    Buffer<float> in(W, H);
    fill_random(in, -1.0, 1.0, 42);
    RDom r(0, W, 0, H, "r");
    Var u("u");
    Func mx("mx"), ref("ref");
    ref() = maximum(in(r.x, r.y));
    mx() = -std::numeric_limits<float>::infinity();
    mx() = max(mx(), in(r.x, r.y));
    Func intm = mx.update().rfactor(r.y, u);
    intm.compute_root().update().parallel(u).vectorize(u, 8);
    Buffer<float> a = mx.realize(std::vector<int>{}), b = ref.realize(std::vector<int>{});
    EXPECT_EQ(a(), b());
}

TEST(RFactor, ArgmaxTuple) {
    const int N = 301;
    Buffer<float> in(N);
    fill_random(in, -10.0, 10.0, 43);
    RDom k(0, N, "k");
    Var u("u");
    Func best("best");
    best() = Tuple(0, -std::numeric_limits<float>::infinity());
    Expr better = in(k) > best()[1];
    best() = Tuple(select(better, Expr(k.x), best()[0]), select(better, in(k), best()[1]));
    Func intm = best.update().rfactor(k.x, u);
    intm.compute_root().vectorize(u, 4);
    Realization r = best.realize(std::vector<int>{});
    Buffer<int> index = r[0];
    int expect = 0;
    for (int i = 1; i < N; i++)
        if (in(i) > in(expect)) expect = i;
    EXPECT_EQ(index(), expect);
}

// Argmax written with max for the value and a select that keeps the current index only
// where the new value is smaller: the later index wins a tie. The rfactor of it keeps that:
// each chunk's partial keeps its latest maximum, and the merge prefers later chunks on ties.
TEST(RFactor, ArgmaxWithMaxAndTheLaterIndexOnTies) {
    const int N = 1000;
    Buffer<float> in(N);
    for (int i = 0; i < N; i++)
        in(i) = float((i * 37) % 101); // each value appears about ten times
    RDom k(0, N, "k");
    Var u("u");
    RVar ko("ko"), ki("ki");
    Func best("best");
    best() = Tuple(-std::numeric_limits<float>::infinity(), 0);
    Expr v = in(k);
    best() = Tuple(max(best()[0], v), select(v < best()[0], best()[1], k.x));
    Func intm = best.update().split(k.x, ko, ki, 64).rfactor(ko, u);
    intm.compute_root().parallel(u);
    Realization r = best.realize(std::vector<int>{});
    Buffer<float> value = r[0];
    Buffer<int> index = r[1];
    int expect = 0;
    for (int i = 1; i < N; i++)
        if (in(i) >= in(expect)) expect = i;
    EXPECT_EQ(value(), in(expect));
    EXPECT_EQ(index(), expect);
}

// rfactor of an argmax that keeps the index, with partials over every 64th point (the inner
// variable of the split preserved): the partials merge by value and then by index, so ties
// go where the serial definition sends them, the first index for `v > a`, the later one for
// {max(a, v), select(v < a, i, k)}.
TEST(RFactor, ArgmaxPartialsOverStridedPointsBreakTiesByIndex) {
    const int N = 1001;
    Buffer<float> in({N}, "in");
    for (int i = 0; i < N; i++)
        in(i) = float((i * 37) % 11); // each value about 90 times
    for (bool later : {false, true}) {
        SCOPED_TRACE(later ? "later index on ties" : "first index on ties");
        RDom k(0, N, "k");
        Var u("u");
        RVar ko("ko"), ki("ki");
        Func best("best");
        best() = Tuple(-std::numeric_limits<float>::infinity(), -1);
        Expr v = in(k);
        if (later) {
            best() = Tuple(max(best()[0], v), select(v < best()[0], best()[1], k.x));
        } else {
            Expr better = v > best()[0];
            best() = Tuple(select(better, v, best()[0]), select(better, k.x, best()[1]));
        }
        Func intm = best.update().split(k.x, ko, ki, 64).rfactor(ki, u);
        intm.compute_root().vectorize(u, 8);
        Realization r = best.realize(std::vector<int>{});
        Buffer<int> index = r[1];
        int expect = 0;
        for (int i = 1; i < N; i++)
            if (later ? in(i) >= in(expect) : in(i) > in(expect)) expect = i;
        EXPECT_EQ(index(), expect);
    }
}

// rfactor rebuilds the update's loops over the partials; those of the pure variables keep
// what the schedule made of them before (here parallel, and a split vectorized).
TEST(RFactor, ScheduleOfThePureVariablesIsKept) {
    const int W = 37, H = 203;
    Buffer<float> in({W, H}, "in");
    fill_random(in, -1.0, 1.0, 45);
    Var x("x"), xo("xo"), xi("xi"), u("u");
    RDom r(0, H, "r");
    RVar ro("ro"), ri("ri");
    Func cs("cs");
    cs(x) = 0.0f;
    cs(x) += in(x, r);
    cs.update().split(x, xo, xi, 8, TailStrategy::GuardWithIf).parallel(xo).vectorize(xi);
    cs.update().split(r.x, ro, ri, 16, TailStrategy::GuardWithIf);
    Func part = cs.update().rfactor(ri, u);
    part.compute_root();
    const std::string nest = Pipeline(cs).loop_nest(Target("host"));
    EXPECT_NE(nest.find("parallel for cs.s1.xo"), std::string::npos) << nest;
    EXPECT_NE(nest.find("vectorized for cs.s1.xi"), std::string::npos) << nest;
    Buffer<float> out = cs.realize({W});
    for (int i = 0; i < W; i++) {
        double want = 0;
        for (int j = 0; j < H; j++)
            want += in(i, j);
        EXPECT_TRUE(aicf_test::close(out(i), want, 1e-5, 1e-5)) << i;
    }
}

// A where predicate that reads an input at the reduction variable, with that variable split
// GuardWithIf: the predicate is evaluated only where the guard lets the point through, so it
// reads only the input's points.
TEST(Schedules, WherePredicatesReadOnlyInsideTheGuards) {
    const int W = 45, H = 9;
    Buffer<float> in({W, H}, "in");
    fill_random(in, -1.0, 1.0, 46);
    for (bool vector : {false, true}) {
        SCOPED_TRACE(vector ? "vectorized over rows" : "serial");
        Var y("y"), yo("yo"), yi("yi");
        RDom r(0, W, "r");
        r.where(in(r.x, y) > 0.0f);
        RVar ro("ro"), ri("ri");
        Func pos("pos");
        pos(y) = 0.0f;
        pos(y) += in(r.x, y);
        pos.update().split(r.x, ro, ri, 32, TailStrategy::GuardWithIf);
        if (vector) pos.update().vectorize(y, 4, TailStrategy::GuardWithIf);
        Buffer<float> out = pos.realize({H});
        for (int j = 0; j < H; j++) {
            double want = 0;
            for (int i = 0; i < W; i++)
                if (in(i, j) > 0) want += in(i, j);
            EXPECT_TRUE(aicf_test::close(out(j), want, 1e-5, 1e-5)) << j;
        }
    }
}

// A histogram, whose update writes a point computed from the data: atomic() lets its
// reduction loop run in parallel; rfactor splits it into a partial histogram per chunk of
// the input (in parallel), then adds the partials.
TEST(RFactor, HistogramAtomicallyAndInPartials) {
    const int N = 20011;
    Buffer<int> in(N);
    for (int i = 0; i < N; i++)
        in(i) = (i * 7919) % 300 - 20;
    std::vector<int> want(64, 0);
    for (int i = 0; i < N; i++)
        want[size_t(std::min(std::max(in(i) / 4, 0), 63))]++;
    for (int way = 0; way < 2; way++) {
        Func hist("hist");
        Var b("b"), u("u");
        RDom r(0, N, "r");
        RVar ro("ro"), ri("ri");
        hist(b) = 0;
        hist(clamp(in(r) / 4, 0, 63)) += 1;
        if (way == 0) {
            hist.update().atomic().split(r.x, ro, ri, 1000).parallel(ro);
        } else {
            Func partial = hist.update().split(r.x, ro, ri, 1000).rfactor(ro, u);
            partial.compute_root().update().parallel(u);
        }
        Buffer<int> h = hist.realize({64})[0];
        for (int i = 0; i < 64; i++)
            EXPECT_EQ(h(i), want[size_t(i)]) << (way ? "rfactor" : "atomic") << ", bin " << i;
    }
}

// An atomic update whose pure loop is vectorized: each lane updates a point of its own (a
// row of features added into the row of its bin), one atomic operation per lane, while the
// reduction loop runs in parallel. Vectorizing the reduction loop itself is refused (its
// lanes may update one point together).
TEST(RFactor, AtomicUpdatesWithAVectorizedPureLoop) {
    const int N = 3001, D = 20, B = 7;
    Buffer<float> feat({D, N}, "feat");
    Buffer<int> bin({N}, "bin");
    fill_random(feat, -1, 1, 47);
    for (int i = 0; i < N; i++)
        bin(i) = (i * 37) % B;
    Var d("d"), b("b");
    RDom r(0, N, "r");
    RVar ro("ro"), ri("ri");
    Func sums("sums");
    sums(d, b) = 0.0f;
    sums(d, clamp(bin(r), 0, B - 1)) += feat(d, r);
    sums.update().atomic().split(r, ro, ri, 500).parallel(ro).vectorize(d, 8);
    Buffer<float> out = sums.realize({D, B});
    for (int j = 0; j < B; j++)
        for (int c = 0; c < D; c++) {
            double want = 0;
            for (int i = 0; i < N; i++)
                if (bin(i) == j) want += feat(c, i);
            EXPECT_TRUE(aicf_test::close(out(c, j), want, 1e-4, 1e-4)) << c << ", " << j;
        }
    Func count("count");
    count(b) = 0;
    count(clamp(bin(r), 0, B - 1)) += 1;
    EXPECT_CONTAINS(message_of<CompileError>(
                        [&] { count.update().atomic().split(r, ro, ri, 8).vectorize(ri); }),
                    "vectorize(ri) could race: ri is a reduction variable");
}

// Welford's running (count, mean, squared deviations) splits into partial summaries per
// chunk, merged by Chan's formula: the variance of values with a large mean stays accurate.
// The count is a float, or an int32 divided as cast<float>(n + 1), whose partial counts the
// merge converts and which stays exact.
TEST(RFactor, WelfordInParallelChunks) {
    const int N = 10007;
    Buffer<float> in(N);
    fill_random(in, 999, 1001, 17);
    for (bool int_count : {false, true}) {
        SCOPED_TRACE(int_count ? "int32 count" : "float count");
        RDom k(0, N, "k");
        Var u("u");
        RVar ko("ko"), ki("ki");
        Func w("w");
        w() = Tuple(int_count ? Expr(0) : Expr(0.0f), 0.0f, 0.0f);
        Expr v = in(k);
        Expr n = w()[0] + (int_count ? Expr(1) : Expr(1.0f));
        Expr delta = v - w()[1];
        Expr mean = w()[1] + delta / cast<float>(n);
        w() = Tuple(n, mean, w()[2] + delta * (v - mean));
        Func partial = w.update().split(k.x, ko, ki, 1000).rfactor(ko, u);
        partial.compute_root().update().parallel(u);
        Realization r = w.realize(std::vector<int>{});
        Buffer<float> m = r[1], squares = r[2];
        double want_m = 0, want_sq = 0;
        for (int i = 0; i < N; i++)
            want_m += in(i);
        want_m /= N;
        for (int i = 0; i < N; i++)
            want_sq += (in(i)-want_m) * (in(i)-want_m);
        if (int_count)
            EXPECT_EQ(Buffer<int>(r[0])(), N);
        else
            EXPECT_EQ(Buffer<float>(r[0])(), float(N));
        EXPECT_NEAR(m(), want_m, 1e-3);
        EXPECT_NEAR(squares() / N, want_sq / N, 1e-3 * (want_sq / N));
    }
}

// An argmax pair beside a count that neither element reads: each group of elements has its
// own form, merged on its own. Ties go to the first index, as in the serial loop.
TEST(RFactor, ArgmaxBesideACount) {
    const int N = 10007;
    Buffer<int> in(N);
    fill_random(in, -500, 500, 19);
    RDom k(0, N, "k");
    Var u("u");
    RVar ko("ko"), ki("ki");
    Func am("am");
    am() = Tuple(std::numeric_limits<int>::min(), -1, 0);
    Expr better = in(k) > am()[0];
    am() = Tuple(select(better, in(k), am()[0]), select(better, k.x, am()[1]),
                 am()[2] + select(in(k) > 0, 1, 0));
    Func partial = am.update().split(k.x, ko, ki, 100).rfactor(ko, u);
    partial.compute_root().update().parallel(u);
    Realization r = am.realize(std::vector<int>{});
    Buffer<int> best = r[0], at = r[1], positives = r[2];
    int want_best = std::numeric_limits<int>::min(), want_at = -1, want_positives = 0;
    for (int i = 0; i < N; i++) {
        if (in(i) > want_best) want_best = in(i), want_at = i;
        want_positives += in(i) > 0;
    }
    EXPECT_EQ(best(), want_best);
    EXPECT_EQ(at(), want_at);
    EXPECT_EQ(positives(), want_positives);
}

TEST(RFactor, RefusesWhatItCannotProve) {
    RDom k(0, 10, "k");
    Var u("u");
    Func f("f");
    Buffer<float> in(10);
    f() = 1.0f;
    f() = f() * 0.5f - in(k);
    try {
        f.update().rfactor(k.x, u);
        FAIL() << "expected a CompileError";
    } catch (const CompileError &e) {
        EXPECT_NE(std::string(e.what()).find("cannot tell that this update is associative"),
                  std::string::npos)
            << e.what();
    }
}

TEST(RFactor, StreamingSoftmaxPair) {
    // The (max, sum of exp) state of a streaming softmax, per row, with the row split into
    // partial results that run in parallel and are merged with rescaling.
    const int D = 203, R = 5;
    Buffer<float> in(D, R);
    fill_random(in, -6.0, 6.0, 44);
    RDom k(0, D, "k");
    Var r("r"), u("u");
    Func stats("stats");
    stats(r) = Tuple(-std::numeric_limits<float>::infinity(), 0.0f);
    Expr m = stats(r)[0], s = stats(r)[1];
    Expr new_m = max(m, in(k, r));
    stats(r) = Tuple(new_m, s * exp(m - new_m) + exp(in(k, r) - new_m));
    // A partial state per element of the row (the pure variable u), computed in parallel,
    // then merged with rescaling.
    Func intm = stats.update().rfactor(k.x, u);
    intm.compute_root().update().parallel(u, 16);
    Realization result = stats.realize({R});
    Buffer<float> mx = result[0], sum = result[1];
    for (int row = 0; row < R; row++) {
        double ref_m = -1e30, ref_s = 0;
        for (int i = 0; i < D; i++)
            ref_m = std::max(ref_m, double(in(i, row)));
        for (int i = 0; i < D; i++)
            ref_s += std::exp(in(i, row) - ref_m);
        EXPECT_EQ(mx(row), float(ref_m)) << row;
        EXPECT_NEAR(sum(row), ref_s, 1e-4 * ref_s) << row;
    }
}

// The Halide idiom for a vectorized reduction: split the reduction variable and rfactor the
// inner loop, so that each lane of a vector keeps its own partial sum. With a factor that does
// not divide the extent, the last block of the reduction is guarded.
TEST(RFactor, InnerLoopOfASplitBecomesVectorLanes) {
    for (int D : {1024, 203}) {
        const int R = 7;
        Buffer<float> in(D, R);
        fill_random(in, -1.0, 1.0, 45);
        RDom k(0, D, "k");
        Var r("r"), u("u");
        RVar ko("ko"), ki("ki");
        Func sum("sum");
        sum(r) = 0.0f;
        sum(r) += in(k, r) * in(k, r);
        Func part = sum.update().split(k, ko, ki, 16).rfactor(ki, u);
        sum.parallel(r);
        part.compute_at(sum, r).vectorize(u);
        // The intermediate keeps the user's reduction variable, so it schedules its update.
        part.update().reorder(u, ko).vectorize(u);
        std::string nest = sum.loop_nest();
        EXPECT_NE(nest.find("for sum_intm.s1.ko in [0, " + std::to_string((D + 15) / 16) +
                            "):\n"
                            "          vectorized for sum_intm.s1.u in [0, 16)"),
                  std::string::npos)
            << nest;
        Buffer<float> out = sum.realize({R});
        for (int row = 0; row < R; row++) {
            double ref = 0;
            for (int i = 0; i < D; i++)
                ref += double(in(i, row)) * in(i, row);
            EXPECT_TRUE(aicf_test::close(out(row), ref, 1e-5, 1e-5))
                << D << " " << row << ": " << out(row) << " vs " << ref;
        }
    }
    // Preserving the outer loop of a split works the same way.
    Buffer<int> in(100, 3);
    fill_random(in, -9, 9, 46);
    RDom k(0, 100, "k");
    Var r("r"), u("u");
    RVar ko("ko"), ki("ki");
    Func total("total");
    total(r) = 0;
    total(r) += in(k, r);
    total.update().split(k, ko, ki, 8).rfactor(ko, u).compute_root().update().parallel(u);
    Buffer<int> out = total.realize({3});
    for (int row = 0; row < 3; row++) {
        int ref = 0;
        for (int i = 0; i < 100; i++)
            ref += in(i, row);
        EXPECT_EQ(out(row), ref);
    }
}

// Two loops preserved from a split of a split (r = (ro * 128 + lane) * 4 + v): the
// intermediate's variables come in the order rfactor names them, whatever the order of the
// loops in the domain, and the merge reads each partial where it was written.
TEST(RFactor, LoopsOfNestedSplitsPreservedInAnyOrder) {
    const int W = 1000, H = 3;
    Buffer<float> in(W, H);
    fill_random(in, -1.0, 1.0, 47);
    for (bool lane_first : {true, false}) {
        Var y("y"), u("u"), v("v");
        RDom r(0, W, "r");
        RVar ro("ro"), ri("ri"), rl("rl"), rv("rv");
        Func sum("sum");
        sum(y) = 0.0f;
        sum(y) += in(r, y) + cast<float>(r.x % 7);
        sum.update().split(r.x, ro, ri, 128).split(ri, rl, rv, 4);
        Func part = lane_first ? sum.update().rfactor({{rl, u}, {rv, v}})
                               : sum.update().rfactor({{rv, v}, {rl, u}});
        part.compute_root();
        Buffer<float> out = sum.realize({H});
        for (int row = 0; row < H; row++) {
            double ref = 0;
            for (int i = 0; i < W; i++)
                ref += double(in(i, row)) + double(i % 7);
            EXPECT_TRUE(aicf_test::close(out(row), ref, 1e-5, 1e-4))
                << (lane_first ? "lane first, row " : "v first, row ") << row << ": " << out(row)
                << " vs " << ref;
        }
    }
}

// Random splits of an integer reduction, preserving either loop, with the partial results
// vectorized or in parallel: integer sums do not depend on the order, so every schedule must
// give exactly the plain sum, whatever the extent and the factor.
TEST(RFactor, RandomSplitsOfIntegerReductionsAreExact) {
    std::mt19937 rng(2026);
    for (int trial = 0; trial < 40; trial++) {
        const int D = 1 + int(rng() % 300), R = 1 + int(rng() % 5), factor = 1 + int(rng() % 20);
        const bool keep_inner = rng() % 2, vector_lanes = rng() % 2, rows_parallel = rng() % 2;
        Buffer<int> in(D, R);
        fill_random(in, -1000, 1000, 100 + unsigned(trial));
        RDom k(0, D, "k");
        Var r("r"), u("u");
        RVar ko("ko"), ki("ki");
        Func total("total");
        total(r) = 0;
        total(r) += in(k, r) * (r + 1);
        Func part = total.update().split(k, ko, ki, factor).rfactor(keep_inner ? ki : ko, u);
        part.compute_at(total, r);
        if (vector_lanes && keep_inner) {
            part.vectorize(u);
            part.update().reorder(u, ko).vectorize(u);
        } else {
            part.update().parallel(u);
        }
        if (rows_parallel) total.update().parallel(r);
        std::string schedule = "D " + std::to_string(D) + " factor " + std::to_string(factor) +
                               (keep_inner ? " inner" : " outer") +
                               (vector_lanes ? " vector" : "") +
                               (rows_parallel ? " parallel rows" : "");
        Buffer<int> out;
        ASSERT_NO_THROW(out = total.realize({R})) << schedule;
        for (int row = 0; row < R; row++) {
            int ref = 0;
            for (int i = 0; i < D; i++)
                ref += in(i, row) * (row + 1);
            ASSERT_EQ(out(row), ref) << schedule << " row " << row;
        }
    }
}

// rfactor of loops that fuses and renames made of reduction variables, as Halide allows: a
// 2-D domain (mins not zero, extents that no factor divides, a where() on some forms) fused
// into one loop, split, and the outer part preserved as parallel partials. Integer sums are
// exact in any order, so every form must give the plain sum.
TEST(RFactor, LoopsOfFusesAndRenamesArePreserved) {
    const int W = 37, H = 23;
    Buffer<int> in({W + 5, H + 4}, "in");
    fill_random(in, -1000, 1000, 48);
    Param<int> w("w"), h("h");
    w.set(W);
    h.set(H);
    for (int form = 0; form < 7; form++) {
        Var u("u");
        const bool symbolic = form == 6;
        RDom r(3, symbolic ? Expr(w) : Expr(W), 2, symbolic ? Expr(h) : Expr(H), "r");
        const bool filtered = form == 5;
        if (filtered) r.where((r.x + 2 * r.y) % 3 != 0);
        RVar f("f"), fo("fo"), fi("fi"), k("k"), xo("xo"), xi("xi");
        Func s("s");
        s() = 0;
        s() += in(r.x, r.y) * (r.x - r.y);
        Stage up = s.update();
        Func part;
        std::string text;
        if (form == 0) {
            part = up.fuse(r.x, r.y, f).split(f, fo, fi, 64).rfactor(fo, u);
            text = "fuse(r.x, r.y, f).split(f, fo, fi, 64).rfactor(fo)";
        } else if (form == 1) {
            part = up.fuse(r.x, r.y, f).rfactor(f, u);
            text = "fuse(r.x, r.y, f).rfactor(f)";
        } else if (form == 2) {
            part = up.rename(r.x, k).rfactor(k, u);
            text = "rename(r.x, k).rfactor(k)";
        } else if (form == 3) {
            part = up.split(r.x, xo, xi, 8).fuse(xo, r.y, f).rfactor(f, u);
            text = "split(r.x, xo, xi, 8).fuse(xo, r.y, f).rfactor(f)";
        } else if (form == 4) {
            part = up.fuse(r.x, r.y, r.x).split(r.x, r.x, fi, 16).rfactor(r.x, u);
            text = "fuse(r.x, r.y, r.x).split(r.x, r.x, fi, 16).rfactor(r.x)";
        } else {
            part = up.fuse(r.x, r.y, f).split(f, fo, fi, 50).rfactor(fi, u);
            text = std::string(filtered ? "where, " : "Param extents, ") +
                   "fuse(r.x, r.y, f).split(f, fo, fi, 50).rfactor(fi)";
        }
        part.compute_root().update().parallel(u);
        Buffer<int> out;
        ASSERT_NO_THROW(out = s.realize({})) << text;
        int64_t want = 0;
        for (int y = 2; y < 2 + H; y++)
            for (int x = 3; x < 3 + W; x++)
                if (!filtered || (x + 2 * y) % 3 != 0) want += int64_t(in(x, y)) * (x - y);
        EXPECT_EQ(out(), want) << text;
    }
}

// An argmax that keeps a payload and not the candidates' positions keeps the later of equal
// values in the domain's order: partials of a fuse that runs the domain in its order are
// consecutive runs of it and merge in order; a fuse of the outer variable inside the inner
// one is refused.
TEST(RFactor, FusesOfAnOrderDependentUpdateMustKeepTheDomainsOrder) {
    const int W = 13, H = 11;
    Buffer<float> in({W, H}, "in"), payload({W, H}, "payload");
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            in(x, y) = float((x * 7 + y * 5) % 4); // many ties
            payload(x, y) = float(x + 100 * y);
        }
    auto define = [&](Func &best, RDom &r) {
        best() = Tuple(-std::numeric_limits<float>::infinity(), 0.0f);
        Expr v = in(r.x, r.y);
        best() = Tuple(max(best()[0], v), select(v < best()[0], best()[1], payload(r.x, r.y)));
    };
    Var u("u");
    RVar f("f"), fo("fo"), fi("fi");
    RDom r(0, W, 0, H, "r");
    Func best("best");
    define(best, r);
    best.update().fuse(r.x, r.y, f).split(f, fo, fi, 10).rfactor(fo, u).compute_root();
    Realization got = best.realize(std::vector<int>{});
    float want_v = -std::numeric_limits<float>::infinity(), want_p = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            if (!(in(x, y) < want_v)) want_v = in(x, y), want_p = payload(x, y);
    EXPECT_EQ(Buffer<float>(got[0])(), want_v);
    EXPECT_EQ(Buffer<float>(got[1])(), want_p);

    RDom q(0, W, 0, H, "q");
    Func again("again");
    define(again, q);
    again.update().reorder(q.y, q.x).fuse(q.y, q.x, f);
    EXPECT_CONTAINS(message_of<CompileError>([&] { again.update().rfactor(f, u); }),
                    "rfactor of again.update(0): the update keeps one candidate by comparison "
                    "(argmax-style), and which of equal candidates it keeps depends on their "
                    "order; fuse(q.y, q.x, f) does not run the domain in its order");
}

TEST(Schedules, GuardedProducerInsideGuardedConsumerReadsOnlyWhatItNeeds) {
    // The consumer's rows are vectorized with a guarded tail, and the producer, stored at
    // the root and computed per vector of rows, is vectorized with a guarded tail too. The
    // input has exactly the rows the output needs: nothing past them may be required.
    Buffer<int> in(37, 29);
    fill_random(in, -100, 100, 61);
    Var x("x"), y("y");
    Func a("a"), c("c");
    a(x, y) = in(x, y) * 3 + 7;
    c(x, y) = a(x, y) + 1;
    c.vectorize(y, 8, TailStrategy::GuardWithIf);
    a.store_root().compute_at(c, y).vectorize(y, 9, TailStrategy::GuardWithIf);
    Buffer<int> out = c.realize({37, 29});
    for (int j = 0; j < 29; j++)
        for (int i = 0; i < 37; i++)
            ASSERT_EQ(out(i, j), in(i, j) * 3 + 8) << i << "," << j;
}

TEST(Schedules, FusedProducerInsideGuardedConsumerReadsOnlyWhatItNeeds) {
    Buffer<int> in(37, 29);
    fill_random(in, -100, 100, 62);
    Var x("x"), y("y"), t("t");
    Func b("b"), c("c");
    b(x, y) = in(x, y) * 3 - y;
    c(x, y) = b(x, y) * 2 + x;
    c.vectorize(y, 8, TailStrategy::GuardWithIf);
    b.compute_at(c, y).fuse(x, y, t);
    Buffer<int> out = c.realize({37, 29});
    for (int j = 0; j < 29; j++)
        for (int i = 0; i < 37; i++)
            ASSERT_EQ(out(i, j), (in(i, j) * 3 - j) * 2 + i) << i << "," << j;
}

namespace {

// A k-blocked integer matmul of a 23 x 19 input by a Func stored per column strip, with the
// prefetches `schedule` asks for: every prefetch must leave every value as it was.
Buffer<int> prefetched_matmul(
    const std::function<void(Func &, Func &, Func &, Buffer<int> &, RDom &)> &schedule) {
    static Buffer<int> a = [] {
        Buffer<int> b({37, 23}, "a");
        fill_random(b, -50, 50, 7);
        return b;
    }();
    static Buffer<int> b = [] {
        Buffer<int> t({29, 37}, "b");
        fill_random(t, -50, 50, 8);
        return t;
    }();
    Var x("x"), y("y");
    RDom k(0, 37, "k");
    Func panel("panel"), prod("prod"), out("out");
    panel(x, y) = b(x, y) * 2;
    prod(x, y) = 0;
    prod(x, y) += a(k, y) * panel(x, k);
    out(x, y) = prod(x, y);
    schedule(panel, prod, out, a, k);
    return out.realize({29, 23});
}

} // namespace

// Prefetches are hints: at the loop of a reduction or around it, looking ahead by 0, a few or
// more iterations than the loop has, skipped or clamped at the end, of a Func or an input,
// through vectorized or reordered storage, they leave every value exactly as it was.
TEST(Schedules, PrefetchChangesNoValue) {
    Buffer<int> ref = prefetched_matmul([](Func &, Func &, Func &, Buffer<int> &, RDom &) {});
    Buffer<int> expected(29, 23);
    {
        // The reference, recomputed here by a plain loop.
        Buffer<int> a(37, 23), b(29, 37);
        fill_random(a, -50, 50, 7);
        fill_random(b, -50, 50, 8);
        for (int j = 0; j < 23; j++)
            for (int i = 0; i < 29; i++) {
                int s = 0;
                for (int k = 0; k < 37; k++)
                    s += a(k, j) * b(i, k) * 2;
                expected(i, j) = s;
            }
    }
    expect_same(expected, ref);
    Var x("x"), y("y"), xo("xo"), xi("xi"), yo("yo"), yi("yi");
    RVar ko("ko"), ki("ki");
    for (PrefetchBoundStrategy strategy :
         {PrefetchBoundStrategy::GuardWithIf, PrefetchBoundStrategy::Clamp}) {
        for (int offset : {0, 1, 3, 40}) {
            SCOPED_TRACE(::testing::Message() << "offset " << offset << ", clamp "
                                              << (strategy == PrefetchBoundStrategy::Clamp));
            // At the k loop, of the panel and of the input.
            expect_same(expected, prefetched_matmul([&](Func &panel, Func &prod, Func &out,
                                                        Buffer<int> &a, RDom &k) {
                            out.split(x, xo, xi, 16, TailStrategy::ShiftInwards).reorder(xi, y, xo);
                            panel.compute_at(out, xo).vectorize(x, 8);
                            prod.compute_at(out, y).vectorize(x, 8);
                            prod.update()
                                .split(k, ko, ki, 4)
                                .reorder(x, ki, ko)
                                .vectorize(x, 8)
                                .unroll(ki)
                                .prefetch(panel, ko, ko, offset, strategy)
                                .prefetch(a, ko, ko, offset, strategy);
                        }));
            // At an inner loop, looking ahead in an outer one (the next rows of the input),
            // with the panel stored transposed.
            expect_same(expected, prefetched_matmul([&](Func &panel, Func &prod, Func &out,
                                                        Buffer<int> &a, RDom &k) {
                            panel.compute_root().reorder_storage(y, x);
                            prod.compute_root();
                            prod.update()
                                .split(y, yo, yi, 5)
                                .reorder(x, k, yi, yo)
                                .prefetch(a, yi, yo, offset, strategy)
                                .prefetch(panel, k, yi, offset, strategy);
                            out.prefetch(prod, y, y, offset, strategy);
                        }));
        }
    }
}

// A prefetch appears where it was asked for: in the loop nest, in the lowered statement
// (guarded by the end of the look-ahead loop), and as prefetch instructions in the host code.
TEST(Schedules, PrefetchIsInTheLoopNestAndTheCode) {
    Buffer<float> a({64, 40}, "a");
    fill_random(a, -1, 1, 9);
    Var y("y");
    RDom k(0, 64, "k");
    Func f("f");
    f(y) = 0.0f;
    f(y) += a(k, y);
    f.update().prefetch(a, k, k, 16);
    std::string nest = f.loop_nest();
    EXPECT_NE(nest.find("for f.s1.k.x in [0, 64):\n      prefetch a\n"), std::string::npos) << nest;
    std::string stmt = f.lowered_stmt();
    EXPECT_NE(stmt.find("prefetch("), std::string::npos) << stmt;
    // The loop is partitioned where the look-ahead runs past its end: the first 48 iterations
    // prefetch without a test, the last 16 do not prefetch.
    EXPECT_NE(stmt.find("serial for (f.s1.k.x, 0, 48) {\n      prefetch("), std::string::npos)
        << stmt;
    EXPECT_NE(stmt.find("serial for (f.s1.k.x, 48, 16) {\n      f["), std::string::npos) << stmt;
    std::string text = f.assembly();
    EXPECT_NE(text.find("prefetcht0"), std::string::npos) << text;
    auto check = [&](Func &g) {
        Buffer<float> out = g.realize({40});
        for (int j = 0; j < 40; j++) {
            float s = 0;
            for (int i = 0; i < 64; i++)
                s += a(i, j);
            ASSERT_EQ(out(j), s) << j;
        }
    };
    check(f);
    // The same pipeline without the prefetch is a different schedule: it compiles anew.
    size_t compiled = detail::compiled_pipeline_count();
    Func plain("f");
    plain(y) = 0.0f;
    plain(y) += a(k, y);
    check(plain);
    EXPECT_EQ(detail::compiled_pipeline_count(), compiled + 1);
    // A look-ahead known only at run time; a negative one counts as 0.
    Param<int> ahead("ahead");
    Func g("g");
    g(y) = 0.0f;
    g(y) += a(k, y);
    g.update().prefetch(a, k, k, ahead, PrefetchBoundStrategy::Clamp);
    stmt = g.lowered_stmt();
    EXPECT_NE(stmt.find("max(ahead, 0)"), std::string::npos) << stmt;
    for (int v : {-1000, 0, 7, 1 << 30}) {
        ahead.set(v);
        check(g);
    }
}

// A gather's row is a single row per iteration: the prefetch fetches table row ids(y + 4),
// not every row the clamp allows; values stay exact.
TEST(Schedules, PrefetchOfAGatherFetchesOneRow) {
    const int D = 40, R = 50, N = 30;
    Buffer<float> table({D, R}, "table");
    Buffer<int> ids({N}, "ids");
    fill_random(table, -1, 1, 11);
    for (int i = 0; i < N; i++)
        ids(i) = (i * 17 + 3) % R;
    Var x("x"), y("y");
    Func out("out");
    out(x, y) = table(x, clamp(ids(y), 0, R - 1)) * 2.0f;
    out.vectorize(x, 8).prefetch(table, y, y, 4);
    std::string stmt = out.lowered_stmt();
    EXPECT_EQ(stmt.find("table.prefetch.0.1, "), std::string::npos) << stmt; // no loop over rows
    EXPECT_NE(stmt.find("let table.prefetch.0.1 = max(min(ids["), std::string::npos) << stmt;
    Buffer<float> result = out.realize({D, N});
    for (int j = 0; j < N; j++)
        for (int i = 0; i < D; i++)
            ASSERT_EQ(result(i, j), table(i, ids(j)) * 2.0f) << i << "," << j;
}

// A Tuple-valued Func stored around the loop: each element's storage is prefetched.
TEST(Schedules, PrefetchOfATupleFunc) {
    Buffer<int> in({50, 20}, "in");
    fill_random(in, -100, 100, 12);
    Var x("x"), y("y");
    Func pair("pair"), out("out");
    pair(x, y) = Tuple(in(x, y) * 2, cast<float>(in(x, y)) * 0.5f);
    out(x, y) = pair(x, y)[0] + cast<int>(pair(x, y)[1] * 4.0f);
    pair.compute_root();
    out.prefetch(pair, y, y, 2);
    std::string stmt = out.lowered_stmt();
    EXPECT_NE(stmt.find("prefetch(pair.0["), std::string::npos) << stmt;
    EXPECT_NE(stmt.find("prefetch(pair.1["), std::string::npos) << stmt;
    Buffer<int> result = out.realize({50, 20});
    for (int j = 0; j < 20; j++)
        for (int i = 0; i < 50; i++)
            ASSERT_EQ(result(i, j), in(i, j) * 4) << i << "," << j;
}

// rfactor of loops that splits made under the name they split (split(r, r, ri), and the
// splits unroll and vectorize by a factor make): each name is the loop the last split that
// made it made, the tail of a split that does not divide the domain stays guarded, and a
// split of a split is followed.
TEST(Schedules, RFactorOfSplitsThatReuseTheirNames) {
    for (const int n : {5, 60, 100}) {
        Buffer<int> in({n}, "in");
        fill_random(in, -1000, 1000, 40 + n);
        int64_t want = 0;
        for (int i = 0; i < n; i++)
            want += in(i);
        for (int form = 0; form < 4; form++) {
            Var u("u");
            RDom r(0, n, "r");
            RVar ri("ri"), ro("ro");
            Func s("s");
            s() = 0;
            s() += in(r);
            std::string text;
            if (form == 0) {
                s.update().split(r, r, ri, 8).rfactor(ri, u).compute_root();
                text = "split(r, r, ri, 8).rfactor(ri)";
            } else if (form == 1) {
                s.update().split(r, r, ri, 8).rfactor(r, u).compute_root();
                text = "split(r, r, ri, 8).rfactor(r)";
            } else if (form == 2) {
                s.update().split(r, ro, ri, 17).unroll(ri, 13).rfactor(ro, u).compute_root();
                text = "split(r, ro, ri, 17).unroll(ri, 13).rfactor(ro)";
            } else {
                s.update().unroll(r, 4).rfactor(RVar(r.x.name() + "_ui"), u).compute_root();
                text = "unroll(r, 4).rfactor(r_ui)";
            }
            Buffer<int> out = s.realize({});
            EXPECT_EQ(out(), want) << text << " at " << n;
        }
    }
}

// A refused rfactor leaves the update as it was: its splits are still loops of the update,
// not domains of a half-made intermediate.
TEST(Schedules, ARefusedRFactorChangesNothing) {
    const int n = 7;
    Buffer<int> in({n}, "in");
    fill_random(in, -100, 100, 41);
    Var x("x"), u("u");
    RDom s(0, n, "s");
    Func f("f");
    f(x) = in(x);
    f(s) = f(s) * 3;
    f.update().vectorize(s, 2);
    // s's inner loop writes the point it chooses: nothing to reduce along it.
    EXPECT_CONTAINS(
        message_of<CompileError>([&] { f.update().rfactor(RVar(s.x.name() + "_vi"), u); }),
        "chooses the point the update writes");
    Buffer<int> out = f.realize({n});
    for (int i = 0; i < n; i++)
        EXPECT_EQ(out(i), in(i)*3) << i;
}

// A Func with updates stored outside a parallel loop and computed inside it would have the
// loop's threads apply its updates at once to the points their regions share (here rows both
// threads need, each adding 1 to them): refused. Stored at the parallel loop, each thread has
// its own. (A pure Func may be: Schedules.SlidingWindowNeedsARegionThatMovesForward.)
TEST(Schedules, StorageOutsideAParallelLoopComputedInsideIsRefused) {
    const int W = 64, H = 40;
    Buffer<int> in({W, H + 1}, "in");
    fill_random(in, -100, 100, 42);
    for (int form = 0; form < 3; form++) {
        Var x("x"), y("y"), yo("yo"), yi("yi");
        Func f("f"), g("g");
        f(x, y) = in(x, y);
        f(x, y) += 1;
        g(x, y) = f(x, y) + f(x, y + 1);
        if (form == 0) {
            g.parallel(y);
            f.store_root().compute_at(g, y);
        } else if (form == 1) {
            g.split(y, yo, yi, 4).parallel(yi);
            f.store_at(g, yo).compute_at(g, yi);
        } else {
            g.split(y, yo, yi, 4).parallel(yo);
            f.store_at(g, yo).compute_at(g, yi);
        }
        if (form < 2) {
            EXPECT_CONTAINS(message_of<CompileError>([&] {
                                g.realize({W, H});
                            }),
                            "inside the parallel loop " + std::string(form == 0 ? "y" : "yi") +
                                " of g: its threads would compute into one allocation at once, and "
                                "where their regions meet, each would apply f's updates to the "
                                "same points.");
            continue;
        }
        Buffer<int> out = g.realize({W, H});
        for (int j = 0; j < H; j++)
            for (int i = 0; i < W; i++)
                ASSERT_EQ(out(i, j), in(i, j) + 1 + in(i, j + 1) + 1) << i << "," << j;
    }
}
