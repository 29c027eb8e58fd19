// Loop partitioning: a loop whose body tests its variable runs its steady state without the
// tests, and still computes exactly what the loop with them computes.

#include "GPUTarget.h"
#include "Reference.h"

#include <algorithm>
#include <cstdint>
#include <sstream>

using namespace aicf;
using aicf_test::fill_random;

namespace {

int count(const std::string &text, const std::string &what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        n++;
    return n;
}

// The lines of `text` that contain `what`.
std::vector<std::string> lines_with(const std::string &text, const std::string &what) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (line.find(what) != std::string::npos) lines.push_back(line);
    return lines;
}

} // namespace

// The guard of a GuardWithIf split of an update stage, vectorized: the steady state stores
// whole vectors without a mask; the last, partial vector keeps its mask.
TEST(PartitionLoops, AGuardedVectorizedUpdateRunsUnmaskedInTheSteadyState) {
    const int H = 37;
    Buffer<float> in(230, H);
    fill_random(in, -1, 1, 5);
    in.set_min({-3, 0});
    Var x("x"), xo("xo"), xi("xi");
    RDom r(0, H, "r");
    Func f("f");
    f(x) = 1.0f;
    f(x) += in(x, r) * in(x, r);
    f.update().split(x, xo, xi, 16, TailStrategy::GuardWithIf).reorder(xi, r, xo).vectorize(xi);

    std::string stmt = f.lowered_stmt();
    EXPECT_EQ(count(stmt, "serial for (f.s1.xo,"), 2) << stmt;
    std::vector<std::string> stores = lines_with(stmt, "f[ramp(");
    ASSERT_EQ(stores.size(), 2u) << stmt;
    EXPECT_EQ(stores[0].find(" if "), std::string::npos) << stores[0];
    EXPECT_NE(stores[1].find(" if "), std::string::npos) << stores[1];

    // never_partition leaves the loop whole, masks and all; never_partition_all, every loop.
    Func whole("whole"), none("none");
    for (Func *g : {&whole, &none}) {
        (*g)(x) = 1.0f;
        (*g)(x) += in(x, r) * in(x, r);
        g->update()
            .split(x, xo, xi, 16, TailStrategy::GuardWithIf)
            .reorder(xi, r, xo)
            .vectorize(xi);
    }
    whole.update().never_partition(xo);
    none.update().never_partition_all();
    for (Func *g : {&whole, &none}) {
        std::string text = g->lowered_stmt();
        EXPECT_EQ(count(text, "serial for (" + g->name() + ".s1.xo,"), 1) << text;
        ASSERT_EQ(lines_with(text, g->name() + "[ramp(").size(), 1u) << text;
    }

    for (int W : {1, 15, 16, 17, 48, 203, 227}) {
        for (int x0 : {-3, 0}) {
            Buffer<float> out(W), out_whole(W);
            out.set_min({x0});
            out_whole.set_min({x0});
            f.realize(out);
            whole.realize(out_whole);
            for (int i = x0; i < x0 + W; i++) {
                double want = 1;
                for (int k = 0; k < H; k++)
                    want += double(in(i, k)) * in(i, k);
                ASSERT_TRUE(aicf_test::close(out(i), want, 1e-5, 1e-5))
                    << "W " << W << " x " << i << ": " << out(i) << " vs " << want;
                ASSERT_EQ(out_whole(i), out(i)) << "W " << W << " x " << i;
            }
        }
    }
}

// A parallel loop stays one loop (one fork and join): each iteration runs the body without
// masks or with them.
TEST(PartitionLoops, AParallelGuardedLoopPicksItsBodyPerIteration) {
    const int H = 19;
    Buffer<int> in(140, H);
    fill_random(in, -50, 50, 6);
    Var x("x"), xo("xo"), xi("xi");
    RDom r(0, H, "r");
    Func f("f");
    f(x) = x;
    f(x) += in(x, r) * (r + 1);
    f.update()
        .split(x, xo, xi, 8, TailStrategy::GuardWithIf)
        .reorder(xi, r, xo)
        .vectorize(xi)
        .parallel(xo);

    std::string stmt = f.lowered_stmt();
    EXPECT_EQ(count(stmt, "parallel for (f.s1.xo,"), 1) << stmt;
    std::vector<std::string> stores = lines_with(stmt, "f[ramp(");
    ASSERT_EQ(stores.size(), 2u) << stmt;
    EXPECT_EQ(stores[0].find(" if "), std::string::npos) << stores[0];

    for (int W : {1, 7, 8, 9, 64, 131}) {
        Buffer<int> out = f.realize({W});
        for (int i = 0; i < W; i++) {
            int want = i;
            for (int k = 0; k < H; k++)
                want += in(i, k) * (k + 1);
            ASSERT_EQ(out(i), want) << "W " << W << " x " << i;
        }
    }
}

// RDom predicates bound the reduction loop from above (r <= y) or below (r >= y): the
// iterations where they hold run without the test.
TEST(PartitionLoops, ATriangularReductionRunsItsTrueRangeWithoutTheTest) {
    const int N = 29;
    Buffer<float> a(N, N);
    fill_random(a, -1, 1, 8);
    Var y("y");
    RDom lower(0, N, "r"), upper(0, N, "s");
    lower.where(lower <= y);
    upper.where(upper >= y + 3);
    Func f("f"), g("g");
    f(y) = 0.0f;
    f(y) += a(lower, y);
    g(y) = 0.0f;
    g(y) += a(upper, y) * 2.0f;

    std::string fs = f.lowered_stmt(), gs = g.lowered_stmt();
    // f: the steady state alone; the iterations past y, where the predicate fails, run
    // nothing and go. g: the steady state alone, the iterations before y + 3 gone.
    EXPECT_EQ(count(fs, "serial for (f.s1.r.x,"), 1) << fs;
    EXPECT_EQ(count(fs, " if "), 0) << fs;
    EXPECT_EQ(count(gs, "serial for (g.s1.s.x,"), 1) << gs;
    EXPECT_EQ(count(gs, " if "), 0) << gs;

    Buffer<float> fo = f.realize({N}), go = g.realize({N});
    for (int j = 0; j < N; j++) {
        float want_f = 0, want_g = 0;
        for (int i = 0; i < N; i++) {
            if (i <= j) want_f += a(i, j);
            if (i >= j + 3) want_g += a(i, j) * 2.0f;
        }
        EXPECT_EQ(fo(j), want_f) << j;
        EXPECT_EQ(go(j), want_g) << j;
    }
}

// A select marked likely() splits the loop into the points where it holds and those around
// them: a constant border around an image runs its interior without the select.
TEST(PartitionLoops, ALikelySelectLeavesTheInteriorWithoutTheSelect) {
    const int W = 50;
    Buffer<int> in(W);
    fill_random(in, -1000, 1000, 3);
    Var x("x");
    Func bordered("bordered");
    bordered(x) = select(likely(x >= 0 && x < W), in(clamp(x, 0, W - 1)), -7) * 3;

    std::string stmt = bordered.lowered_stmt();
    EXPECT_EQ(count(stmt, "serial for (bordered.s0.x,"), 3) << stmt;
    std::vector<std::string> stores = lines_with(stmt, "bordered[");
    ASSERT_EQ(stores.size(), 3u) << stmt;
    EXPECT_EQ(stores[1].find("select"), std::string::npos) << stores[1];

    for (int x0 : {-9, -1, 0, 3, 48, 60}) {
        for (int n : {1, 2, 10, 70}) {
            Buffer<int> out(n);
            out.set_min({x0});
            bordered.realize(out);
            for (int i = x0; i < x0 + n; i++)
                ASSERT_EQ(out(i), (i >= 0 && i < W ? in(i) : -7) * 3) << i;
        }
    }
}

// A vectorized stage over a width known only at run time: its ShiftInwards tail computes
// each vector from min(x * 16, width - 16). The steady state stores at x * 16 without the
// min; the last vector, shifted inwards, after it.
TEST(PartitionLoops, AShiftInwardsTailLeavesTheSteadyStateWithoutItsMin) {
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    Func f("f");
    f(x, y) = in(x, y) * 3.0f + Expr(x);
    f.vectorize(x, 16);
    std::string stmt = f.lowered_stmt();
    EXPECT_EQ(count(stmt, "serial for (f.s0.x,"), 2) << stmt;
    std::vector<std::string> stores = lines_with(stmt, "f[");
    ASSERT_EQ(stores.size(), 2u) << stmt;
    EXPECT_EQ(stores[0].find("min("), std::string::npos) << stores[0];

    for (int W : {16, 17, 31, 32, 45, 100}) {
        Buffer<float> b(W + 3, 4);
        fill_random(b, -10.0f, 10.0f, W);
        in.set(b);
        Buffer<float> out(W, 3);
        f.realize(out);
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < W; i++)
                ASSERT_EQ(out(i, j), b(i, j) * 3.0f + float(i)) << W << ": " << i << ", " << j;
    }
}

// An index clamped to the input (a clamp-to-edge boundary) over a region wider than the
// input: the points left of its end read in(x) without the min; the rest read its last value.
TEST(PartitionLoops, AClampedIndexRunsWithoutTheMinInsideTheInput) {
    ImageParam in(Int(32), 1, "in");
    Param<int> n("n");
    Var x("x");
    Func g("g");
    g(x) = in(min(x, n - 1)) * 2 + 1;
    std::string stmt = g.lowered_stmt();
    EXPECT_EQ(count(stmt, "serial for (g.s0.x,"), 2) << stmt;
    std::vector<std::string> stores = lines_with(stmt, "g[");
    ASSERT_EQ(stores.size(), 2u) << stmt;
    EXPECT_EQ(stores[0].find("min("), std::string::npos) << stores[0];

    Buffer<int> b(40);
    fill_random(b, -1000, 1000, 5);
    in.set(b);
    for (int nv : {1, 7, 40}) {
        n.set(nv);
        for (int W : {1, 5, 39, 60}) {
            Buffer<int> out(W);
            g.realize(out);
            for (int i = 0; i < W; i++)
                ASSERT_EQ(out(i), b(std::min(i, nv - 1)) * 2 + 1) << nv << ", " << W << ": " << i;
        }
    }
}

// An index clamped at both edges (repeat-edge boundary), vectorized: the steady state reads
// whole vectors with neither the min nor the max (the max is a test of the min, which the
// steady state drops too); the prologue and epilogue keep both. Bounds known only at run
// time, regions past either edge, and bounds that cross (lo > hi, where the clamp is lo).
TEST(PartitionLoops, AnIndexClampedAtBothEdgesRunsWithoutEitherInTheSteadyState) {
    ImageParam in(Int(32), 1, "in");
    Param<int> lo("lo"), hi("hi");
    Var x("x");
    Func g("g"), h("h");
    g(x) = in(clamp(x - 1, lo, hi)) + in(clamp(x, lo, hi)) * 3 + in(clamp(x + 2, lo, hi)) * 5;
    g.vectorize(x, 8);
    // The same clamps nested the other way round, and a max of a max inside a min.
    h(x) = in(min(max(x, lo), hi)) * 7 + in(min(max(max(x - 3, lo), lo + 1), hi));
    h.vectorize(x, 8);
    std::string stmt = g.lowered_stmt();
    EXPECT_EQ(count(stmt, "serial for (g.s0.x,"), 3) << stmt;
    std::vector<std::string> stores = lines_with(stmt, "g[");
    ASSERT_EQ(stores.size(), 3u) << stmt;
    EXPECT_EQ(stores[1].find("min("), std::string::npos) << stores[1];
    EXPECT_EQ(stores[1].find("max("), std::string::npos) << stores[1];
    EXPECT_NE(stores[0].find("max("), std::string::npos) << stores[0];
    EXPECT_NE(stores[2].find("min("), std::string::npos) << stores[2];
    std::string hstmt = h.lowered_stmt();
    std::vector<std::string> hstores = lines_with(hstmt, "h[");
    ASSERT_EQ(hstores.size(), 3u) << hstmt;
    EXPECT_EQ(hstores[1].find("min("), std::string::npos) << hstores[1];
    EXPECT_EQ(hstores[1].find("max("), std::string::npos) << hstores[1];

    Buffer<int> b(100);
    fill_random(b, -1000, 1000, 9);
    b.set_min({-20});
    in.set(b);
    auto at = [&](int i, int l, int u) { return b(std::max(std::min(i, u), l)); };
    for (auto [lv, hv] : {std::pair{0, 63}, {-20, 79}, {5, 5}, {10, 3}, {-7, 40}}) {
        lo.set(lv);
        hi.set(hv);
        for (auto [x0, W] : {std::pair{0, 64}, {-30, 130}, {-3, 17}, {50, 8}, {-40, 9}}) {
            Buffer<int> out(W), hout(W);
            out.set_min({x0});
            hout.set_min({x0});
            g.realize(out);
            h.realize(hout);
            for (int i = x0; i < x0 + W; i++) {
                // clamp(v, lo, hi) is max(min(v, hi), lo): lo where the bounds cross.
                const int want = at(i - 1, lv, hv) + at(i, lv, hv) * 3 + at(i + 2, lv, hv) * 5;
                ASSERT_EQ(out(i), want) << lv << ".." << hv << " at " << i;
                const int hwant = b(std::min(std::max(i, lv), hv)) * 7 +
                                  b(std::min(std::max(std::max(i - 3, lv), lv + 1), hv));
                ASSERT_EQ(hout(i), hwant) << lv << ".." << hv << " at " << i;
            }
        }
    }
}

namespace {

enum class Edge { RepeatEdge, ConstantExterior, RepeatImage, MirrorImage, MirrorInterior };

// The point of [0, n) a boundary condition reads for x (-1 for the constant outside).
int edge_point(Edge e, int x, int n) {
    auto mod = [](int a, int b) { return b == 0 ? 0 : ((a % b) + b) % b; };
    switch (e) {
    case Edge::RepeatEdge:
        return std::clamp(x, 0, n - 1);
    case Edge::ConstantExterior:
        return x >= 0 && x < n ? x : -1;
    case Edge::RepeatImage:
        return mod(x, n);
    case Edge::MirrorImage: {
        const int t = mod(x, 2 * n);
        return t < n ? t : 2 * n - 1 - t;
    }
    case Edge::MirrorInterior: {
        const int t = mod(x, 2 * n - 2);
        return t < n ? t : 2 * n - 2 - t;
    }
    }
    return -1;
}

// Whether a call of `op` ("min(", "select(") in `line` has a vector in its operands, or,
// with `first_only`, in its first (a select's condition): a ramp or a broadcast of 8 lanes.
bool has_vector_operand(const std::string &line, const std::string &op, bool first_only) {
    for (size_t at = line.find(op); at != std::string::npos; at = line.find(op, at + 1)) {
        int depth = 0;
        size_t end = at + op.size() - 1;
        for (; end < line.size(); end++) {
            depth += line[end] == '(' ? 1 : line[end] == ')' ? -1 : 0;
            if (depth == 0 || (first_only && depth == 1 && line[end] == ',')) break;
        }
        const std::string args = line.substr(at, end - at);
        if (args.find("ramp(") != std::string::npos || args.find("x8(") != std::string::npos)
            return true;
    }
    return false;
}

// Whether a store's vector is computed without a test, clamp or remainder of its lanes (a
// select of whole vectors by a condition of the row, or the row's clamp, may stay).
bool lanes_without_tests(const std::string &line) {
    return !has_vector_operand(line, "select(", true) && !has_vector_operand(line, "min(", false) &&
           !has_vector_operand(line, "max(", false) && line.find("% x8(") == std::string::npos;
}

} // namespace

// Every boundary condition, read by a vectorized 3-point stencil and by a 2x upsampling
// (x / 2) over regions wider than the input: the interior runs without the condition's
// test, clamp or remainder on its lanes, so the stencil loads whole vectors; the border
// keeps them. (Dimension 1, the rows, keeps its own, computed once per row.) Exact against the
// conditions' definitions, at sizes known only at run time, including inputs of one or two points.
TEST(PartitionLoops, EveryBoundaryConditionRunsItsInteriorWithoutTests) {
    for (Edge e : {Edge::RepeatEdge, Edge::ConstantExterior, Edge::RepeatImage, Edge::MirrorImage,
                   Edge::MirrorInterior}) {
        for (bool upsample : {false, true}) {
            ImageParam in(Int(32), 2, "in");
            Var x("x"), y("y");
            Func c = e == Edge::RepeatEdge         ? BoundaryConditions::repeat_edge(in)
                     : e == Edge::ConstantExterior ? BoundaryConditions::constant_exterior(in, -5)
                     : e == Edge::RepeatImage      ? BoundaryConditions::repeat_image(in)
                     : e == Edge::MirrorImage      ? BoundaryConditions::mirror_image(in)
                                                   : BoundaryConditions::mirror_interior(in);
            Func f("f");
            if (upsample)
                f(x, y) = c(x / 2 - 1, y) + c(x / 2, y) * 3 + c((x + 1) / 2 + 1, y) * 5;
            else
                f(x, y) = c(x - 1, y) + c(x, y) * 3 + c(x + 1, y) * 5;
            f.vectorize(x, 8);
            const std::string stmt = f.lowered_stmt();
            std::vector<std::string> stores = lines_with(stmt, "f[");
            const bool clean = std::any_of(stores.begin(), stores.end(), [&](const std::string &l) {
                return lanes_without_tests(l) && (upsample || count(l, "in[ramp(") == 3);
            });
            EXPECT_TRUE(clean) << int(e) << (upsample ? " upsampled" : "") << "\n" << stmt;

            for (auto [W, H] : {std::pair{37, 5}, {1, 3}, {2, 2}, {64, 4}}) {
                Buffer<int> b(W, H);
                fill_random(b, -1000, 1000, W + H);
                in.set(b);
                auto at = [&](int i, int j) {
                    const int pi = edge_point(e, i, W), pj = edge_point(e, j, H);
                    return pi < 0 || pj < 0 ? -5 : b(pi, pj);
                };
                Buffer<int> out(2 * W + 21, H + 4);
                out.set_min({-9, -2});
                f.realize(out);
                for (int j = -2; j < H + 2; j++) {
                    for (int i = -9; i < 2 * W + 12; i++) {
                        auto div = [](int a) { return a >= 0 ? a / 2 : -((1 - a) / 2); };
                        const int want = upsample ? at(div(i) - 1, j) + at(div(i), j) * 3 +
                                                        at(div(i + 1) + 1, j) * 5
                                                  : at(i - 1, j) + at(i, j) * 3 + at(i + 1, j) * 5;
                        ASSERT_EQ(out(i, j), want) << int(e) << (upsample ? " upsampled " : " ")
                                                   << W << "x" << H << " at " << i << ", " << j;
                    }
                }
            }
        }
    }
}

// The analysis reasons about exact integers; the code computes in int32, which wraps. Where
// a test's arithmetic could wrap (here, for a value of p known only at run time), the loop
// keeps its tests.
TEST(PartitionLoops, TestsWhoseArithmeticWrapsAreKept) {
    auto wrapping = [](int64_t v) { return int32_t(uint32_t(uint64_t(v))); };
    Param<int> p("p");
    RDom s(0, 50, "s");
    s.where(s + p > 0);
    Func g("g");
    g() = 0;
    g() += s;
    for (int pv : {-10, 5, 2147483640, 2147483647 - 49, 2147483647 - 48, -2147483647 - 1}) {
        p.set(pv);
        int sum = 0;
        for (int i = 0; i < 50; i++)
            if (wrapping(int64_t(i) + pv) > 0) sum += i;
        Buffer<int> got = g.realize(std::vector<int>{});
        EXPECT_EQ(got(), sum) << "p = " << pv;
    }
}

// The guarded tail of a split by a huge factor computes nothing past the end, so it is not
// looped over (it ran up to 2^31 - 1 empty iterations per tile: 70 s for 10 x 5 points).
// Where the arithmetic might wrap, it still runs with its tests (above).
TEST(PartitionLoops, AnIdleTailOfAHugeSplitRunsNoIterations) {
    Var x("x"), y("y"), xo("xo"), xi("xi");
    Func o("o");
    o(x, y) = x * 2 + y;
    o.split(x, xo, xi, 2147483647, TailStrategy::GuardWithIf);
    Buffer<int> got = o.realize({10, 5});
    for (int j = 0; j < 5; j++)
        for (int i = 0; i < 10; i++)
            ASSERT_EQ(got(i, j), i * 2 + j) << i << ", " << j;
    // The epilogue's extent is zero unless the coordinates could wrap.
    const std::string stmt = o.lowered_stmt();
    const size_t tail = stmt.find("serial for (o.s0.xi, int32(o.s0.xi.steady_end), ");
    ASSERT_NE(tail, std::string::npos) << stmt;
    EXPECT_NE(stmt.find("(int64)0, ((int64)2147483647 - o.s0.xi.steady_end)", tail),
              std::string::npos)
        << stmt;
}

// Guards on both loops of a tiled update, and guards four loops deep: every tile size and
// position computes the values of the unscheduled pipeline.
TEST(PartitionLoops, NestedGuardsComputeTheSameValues) {
    Buffer<int> in(70, 60);
    fill_random(in, -100, 100, 12);
    Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi"), xii("xii"), yii("yii");
    RDom r(0, 3, "r");
    auto build = [&](Func &f) {
        f(x, y) = x - y;
        f(x, y) += in(x + r, y) * (r + 1) - in(x, y + r);
    };
    Func plain("plain"), tiled("tiled"), deep("deep");
    build(plain);
    build(tiled);
    build(deep);
    tiled.update().tile(x, y, xo, yo, xi, yi, 8, 5, TailStrategy::GuardWithIf).vectorize(xi, 4);
    deep.update()
        .split(x, xo, xi, 9, TailStrategy::GuardWithIf)
        .split(xi, xi, xii, 4, TailStrategy::GuardWithIf)
        .split(y, yo, yi, 7, TailStrategy::GuardWithIf)
        .split(yi, yi, yii, 3, TailStrategy::GuardWithIf)
        .reorder(xii, yii, xi, yi, xo, yo);
    for (auto [W, H] : {std::pair{1, 1}, {8, 5}, {37, 23}, {67, 57}}) {
        Buffer<int> want = plain.realize({W, H});
        for (Func *f : {&tiled, &deep}) {
            Buffer<int> got = f->realize({W, H});
            for (int j = 0; j < H; j++)
                for (int i = 0; i < W; i++)
                    ASSERT_EQ(got(i, j), want(i, j))
                        << f->name() << " " << W << "x" << H << " at " << i << ", " << j;
        }
    }
}

namespace {

// A random linear test over the loop variables: a*x + b*y + c*r + k (+ p) compared with 0.
Expr random_test(std::mt19937 &rng, const Expr &x, const Expr &y, const Expr &r, const Expr &p,
                 std::ostringstream &log) {
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    int a = pick(-3, 3), b = pick(-2, 2), c = r.defined() ? pick(-2, 2) : 0, k = pick(-30, 30);
    bool with_p = pick(0, 3) == 0;
    Expr e = x * a + y * b + k;
    if (c != 0) e = e + r * c;
    if (with_p) e = e + p;
    log << "(" << a << "x " << b << "y " << c << "r " << k << (with_p ? " p" : "") << ")";
    switch (pick(0, 3)) {
    case 0:
        log << " < 0 ";
        return e < 0;
    case 1:
        log << " <= 0 ";
        return e <= 0;
    case 2:
        log << " > 0 ";
        return e > 0;
    default:
        log << " >= 0 ";
        return e >= 0;
    }
}

} // namespace

// Random linear tests in selects marked likely() and in where predicates, under random splits,
// vectorization and parallel loops: the partitioned pipeline computes exactly what the same
// pipeline with never_partition_all() on every stage computes.
TEST(PartitionLoops, RandomTestsAgreeWithTheLoopsLeftWhole) {
    const unsigned seed = unsigned(aicf_test::env_int("AICF_PARTITION_SEED", 1));
    const int count = aicf_test::env_int("AICF_PARTITION_COUNT", 40);
    Buffer<int> in(90, 70);
    fill_random(in, -100, 100, 17);
    in.set_min({-40, -30});
    int partitions = 0;
    for (int c = 0; c < count; c++) {
        std::mt19937 rng(seed * 7919u + unsigned(c));
        auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
        std::ostringstream log;
        Param<int> p("p");
        // Signed arithmetic is taken not to overflow (as the simplifier does), so no value of
        // p makes the tests overflow.
        const int pv = std::vector<int>{-7, 0, 5, 100000}[pick(0, 3)];
        const int n = pick(1, 12);
        const int factor = std::vector<int>{2, 3, 4, 8, 16}[pick(0, 4)];
        const bool vectorize = pick(0, 1), parallel = pick(0, 2) == 0, update_split = pick(0, 1);
        // On the GPU the reduction loop runs inside each thread, and its where predicate
        // depends on the thread's coordinates.
        const bool gpu = pick(0, 3) == 0;
        auto build = [&](Func &f, bool partition) {
            Var x("x"), y("y"), xo("xo"), xi("xi");
            RDom r(0, n, "r");
            std::ostringstream unused;
            std::mt19937 tests(rng());
            std::ostringstream &l = partition ? log : unused;
            Expr t1 = random_test(tests, x, y, Expr(), p, l);
            Expr cond = pick(0, 1) ? (t1 && random_test(tests, x, y, Expr(), p, l)) : t1;
            f(x, y) = select(likely(cond), in(clamp(x, -40, 49), clamp(y, -30, 39)), x - y);
            r.where(random_test(tests, x, y, r, p, l));
            f(x, y) += in(clamp(x + r, -40, 49), clamp(y, -30, 39)) * (r + 1);
            if (gpu) {
                Var bx("bx"), by("by"), tx("tx"), ty("ty");
                f.gpu_tile(x, y, bx, by, tx, ty, factor, 4, TailStrategy::GuardWithIf);
                f.update().gpu_tile(x, y, bx, by, tx, ty, factor, 4);
            } else if (update_split) {
                Stage u = f.update();
                u.split(x, xo, xi, factor, TailStrategy::GuardWithIf).reorder(xi, r, xo);
                if (vectorize) u.vectorize(xi);
                if (parallel) u.parallel(y);
            } else {
                f.split(x, xo, xi, factor, TailStrategy::GuardWithIf);
                if (vectorize) f.vectorize(xi);
                if (parallel) f.parallel(y);
            }
            if (!partition) {
                f.never_partition_all();
                f.update().never_partition_all();
            }
        };
        // The same draws for both: rebuild with a copy of the generator.
        std::mt19937 saved = rng;
        Func partitioned("f"), whole("f");
        build(partitioned, true);
        std::mt19937 after = rng;
        rng = saved;
        build(whole, false);
        rng = after;
        p.set(pv);
        const int W = pick(1, 60), H = pick(1, 40), x0 = pick(-45, 10), y0 = pick(-35, 10);
        log << " p " << pv << " n " << n << " factor " << factor << (gpu ? " gpu" : "")
            << (vectorize ? " vectorize" : "") << (parallel ? " parallel" : "")
            << (update_split ? " update" : " pure") << " region " << W << "x" << H << " at " << x0
            << "," << y0;
        Buffer<int> got(W, H), want(W, H);
        got.set_min({x0, y0});
        want.set_min({x0, y0});
        const Target target = gpu ? aicf_test::gpu_test_target() : Target("host");
        partitioned.realize(got, target);
        whole.realize(want, target);
        partitions += partitioned.lowered_stmt(target).find(".steady_") != std::string::npos;
        for (int j = y0; j < y0 + H; j++)
            for (int i = x0; i < x0 + W; i++)
                ASSERT_EQ(got(i, j), want(i, j))
                    << "case " << c << ": " << log.str() << " at " << i << ", " << j;
    }
    // Most draws have a test that partitions a loop; the check above is then not vacuous.
    EXPECT_GE(partitions, count / 2) << "of " << count;
}

// A row sum computed per point into a one-element stack buffer, its update split and
// vectorized by 7 with a guard: the vector stores are masked to the one lane in the buffer.
// Partitioned, the steady state (empty here) stores whole vectors. LLVM took a masked store
// wider than its buffer to be elsewhere and read the sum from before the stores: every sum
// came out 0. Buffers accessed by vectors now have room for a whole vector.
TEST(PartitionLoops, MaskedVectorsIntoASmallBuffer) {
    const int D = 53, R = 19;
    Buffer<float> in(D, R);
    fill_random(in, -3, 3, 21);
    Var c("c"), r("r"), ro("ro"), ri("ri");
    RDom k(0, D, "k");
    Func msum("msum"), mean("mean");
    msum(r) = 0.0f;
    msum(r) += in(k, r);
    mean(c, r) = msum(r) / float(D) + c;
    mean.split(r, ro, ri, 5, TailStrategy::GuardWithIf);
    msum.compute_at(mean, c);
    msum.update()
        .parallel(r, 7)
        .vectorize(Var("r_task"), 7, TailStrategy::GuardWithIf)
        .split(Var("r_task"), Var("r_task"), Var("r_taski"), 6);
    Buffer<float> out = mean.realize({4, R});
    for (int y = 0; y < R; y++) {
        double s = 0;
        for (int x = 0; x < D; x++)
            s += in(x, y);
        for (int x = 0; x < 4; x++)
            ASSERT_TRUE(aicf_test::close(out(x, y), s / D + x, 1e-5, 1e-5))
                << x << ", " << y << ": " << out(x, y);
    }
}
