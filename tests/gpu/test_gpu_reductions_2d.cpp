// Reductions whose loop runs on GPU threads along y or z while the points they update run
// along x (and y): the statistics of columns (BatchNorm over a batch, the gradient of a bias),
// where each thread of a column sums a strided part of it and the partial results meet in
// shared memory. Checked against plain loops in double precision, at sizes that fill no tile.

#include "ErrorMessage.h"
#include "GPUTarget.h"
#include "Reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

using namespace aicf;
using aicf_test::close;
using aicf_test::fill_random;
using aicf_test::message_of;

namespace {

const Target gpu_target = aicf_test::gpu_test_target();

// out(c) = 0.5 * sum over n of in(c, n): `channels` columns of `rows` rows, 32 columns to a
// block on threads along x, each column's rows split over `row_threads` threads along y.
TEST(GPUColumnReduction, SumsOfColumnsWithRowsOnThreadsAlongY) {
    for (TailStrategy tail : {TailStrategy::ShiftInwards, TailStrategy::GuardWithIf}) {
        for (int row_threads : {1, 3, 8, 32}) {
            for (int rows : {1, 7, 1001}) {
                const int channels = 70;
                SCOPED_TRACE(std::to_string(row_threads) + " row threads, " + std::to_string(rows) +
                             " rows, " +
                             (tail == TailStrategy::GuardWithIf ? "guarded" : "shifted"));
                Buffer<float> in({channels, rows}, "in");
                fill_random(in, -1, 1, unsigned(rows + row_threads));
                Func s("s"), out("out");
                Var c("c"), co("co"), ci("ci");
                RDom r(0, rows, "r");
                RVar ro("ro"), ry("ry");
                s(c) = 0.0f;
                s(c) += in(c, r);
                out(c) = s(c) * 0.5f;
                out.split(c, co, ci, 32, tail).gpu_blocks(co).gpu_threads(ci);
                s.compute_at(out, co).gpu_threads(c);
                s.update().split(r.x, ro, ry, row_threads).reorder(ro, c, ry).gpu_threads(c, ry);
                Buffer<float> o = out.realize({channels}, gpu_target);
                for (int j = 0; j < channels; j++) {
                    double want = 0;
                    for (int n = 0; n < rows; n++)
                        want += in(j, n);
                    EXPECT_TRUE(close(o(j), 0.5 * want, 1e-5, 1e-5))
                        << "column " << j << ": " << o(j) << " vs " << 0.5 * want;
                }
            }
        }
    }
}

// BatchNorm's statistics: the mean and the variance of each channel over the batch and the
// pixels, as a Tuple of sums, then the normalized input. The reduction domain is two
// dimensional; its rows split over 6 threads along y leave a tail.
TEST(GPUColumnReduction, BatchNormStatisticsAsATupleOfSums) {
    const int channels = 37, pixels = 13, batch = 5;
    Buffer<float> in({channels, pixels, batch}, "in");
    fill_random(in, -2, 3, 11);
    Func stats("stats"), out("out");
    Var c("c"), p("p"), b("b"), co("co"), ci("ci");
    RDom r(0, pixels, 0, batch, "r");
    RVar rf("rf"), ro("ro"), ry("ry");
    stats(c) = Tuple(0.0f, 0.0f);
    Expr v = in(c, r.x, r.y);
    stats(c) = Tuple(stats(c)[0] + v, stats(c)[1] + v * v);
    const float count = float(pixels * batch);
    Expr mean = stats(c)[0] / count;
    Expr var = stats(c)[1] / count - mean * mean;
    out(c, p, b) = (in(c, p, b) - mean) / sqrt(var + 1e-5f);
    out.split(c, co, ci, 16, TailStrategy::GuardWithIf).reorder(ci, p, b, co).gpu_blocks(co);
    out.gpu_threads(ci);
    stats.compute_at(out, co).gpu_threads(c);
    stats.update().fuse(r.x, r.y, rf).split(rf, ro, ry, 6).reorder(ro, c, ry).gpu_threads(c, ry);
    Buffer<float> o = out.realize({channels, pixels, batch}, gpu_target);
    for (int j = 0; j < channels; j++) {
        double sum = 0, squares = 0;
        for (int n = 0; n < batch; n++)
            for (int q = 0; q < pixels; q++) {
                sum += in(j, q, n);
                squares += double(in(j, q, n)) * in(j, q, n);
            }
        double m = sum / count, variance = squares / count - m * m;
        for (int n = 0; n < batch; n++)
            for (int q = 0; q < pixels; q++) {
                double want = (in(j, q, n) - m) / std::sqrt(variance + 1e-5);
                ASSERT_TRUE(close(o(j, q, n), want, 1e-4, 1e-4))
                    << j << ", " << q << ", " << n << ": " << o(j, q, n) << " vs " << want;
            }
    }
}

// The row of each column's largest value, the first of equal ones: a merge that depends on
// the order of its candidates, over values with many ties, in a domain with a where().
TEST(GPUColumnReduction, FirstRowOfTheLargestValueAmongTies) {
    const int channels = 45, rows = 203;
    Buffer<int> in({channels, rows}, "in");
    for (int n = 0; n < rows; n++)
        for (int j = 0; j < channels; j++)
            in(j, n) = int((j * 7 + n * 13 + (n * n) % 11) % 5);
    for (bool where : {false, true}) {
        SCOPED_TRACE(where ? "rows where n % 3 != 1" : "every row");
        Func best("best"), out("out");
        Var c("c"), co("co"), ci("ci");
        RDom r(0, rows, "r");
        if (where) r.where(r.x % 3 != 1);
        RVar ro("ro"), ry("ry");
        best(c) = Tuple(Expr(-1), Expr(-1));
        Expr v = in(c, r.x);
        Expr better = v > best(c)[0];
        best(c) = Tuple(select(better, v, best(c)[0]), select(better, r.x, best(c)[1]));
        out(c) = best(c)[1];
        out.split(c, co, ci, 16, TailStrategy::GuardWithIf).gpu_blocks(co).gpu_threads(ci);
        best.compute_at(out, co).gpu_threads(c);
        best.update().split(r.x, ry, ro, 26).reorder(ro, c, ry).gpu_threads(c, ry);
        Buffer<int> o = out.realize({channels}, gpu_target);
        for (int j = 0; j < channels; j++) {
            int value = -1, row = -1;
            for (int n = 0; n < rows; n++) {
                if (where && n % 3 == 1) continue;
                if (in(j, n) > value) {
                    value = in(j, n);
                    row = n;
                }
            }
            EXPECT_EQ(o(j), row) << "column " << j;
        }
    }
}

// A reduction along z of the block, the points along x and y: the sum over the depth of a
// volume, each 8 x 4 tile of points on its own block, the depth split over 5 threads.
TEST(GPUColumnReduction, DepthSumsWithThePointsAlongXAndY) {
    const int width = 19, height = 10, depth = 23;
    Buffer<double> in({width, height, depth}, "in");
    fill_random(in, -1, 1, 5);
    Func s("s"), out("out");
    Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
    RDom r(0, depth, "r");
    RVar ro("ro"), rz("rz");
    s(x, y) = 0.0;
    s(x, y) = s(x, y) + in(x, y, r) * in(x, y, r);
    out(x, y) = sqrt(s(x, y));
    out.gpu_tile(x, y, xo, yo, xi, yi, 8, 4, TailStrategy::GuardWithIf);
    s.compute_at(out, xo).gpu_threads(x, y);
    s.update().split(r.x, ro, rz, 5).reorder(ro, x, y, rz).gpu_threads(x, y, rz);
    Buffer<double> o = out.realize({width, height}, gpu_target);
    for (int j = 0; j < height; j++)
        for (int i = 0; i < width; i++) {
            double want = 0;
            for (int k = 0; k < depth; k++)
                want += in(i, j, k) * in(i, j, k);
            EXPECT_TRUE(close(o(i, j), std::sqrt(want), 1e-12, 1e-12)) << i << ", " << j;
        }
}

// Two groups of columns in turn in each block (a serial loop at the block level around the
// reduction): the second group's threads must not write their partials while the first
// group's are still being merged.
TEST(GPUColumnReduction, GroupsOfColumnsInTurnInOneBlock) {
    const int channels = 130, rows = 77;
    Buffer<float> in({channels, rows}, "in");
    fill_random(in, -1, 1, 3);
    Func mn("mn"), out("out");
    Var c("c"), co("co"), ci("ci"), cb("cb"), cs("cs");
    RDom r(0, rows, "r");
    RVar ro("ro"), ry("ry");
    mn(c) = std::numeric_limits<float>::max();
    mn(c) = min(mn(c), in(c, r));
    out(c) = mn(c) + 1.0f;
    out.split(c, co, ci, 32, TailStrategy::GuardWithIf)
        .split(co, cb, cs, 2, TailStrategy::GuardWithIf)
        .gpu_blocks(cb)
        .gpu_threads(ci);
    mn.compute_at(out, cs).gpu_threads(c);
    mn.update().split(r.x, ro, ry, 4).reorder(ro, c, ry).gpu_threads(c, ry);
    Buffer<float> o = out.realize({channels}, gpu_target);
    for (int j = 0; j < channels; j++) {
        double want = in(j, 0);
        for (int n = 1; n < rows; n++)
            want = std::min(want, double(in(j, n)));
        EXPECT_EQ(double(o(j)), want + 1.0) << "column " << j;
    }
}

TEST(GPUColumnReductionErrors, SchedulesThatCannotCombineAcrossRows) {
    Buffer<float> in({64, 40}, "in");
    Var c("c"), co("co"), ci("ci"), cs("cs");
    RVar ro("ro"), ry("ry");
    // The columns on a serial loop inside the rows' threads (the pairs on x): one partial
    // would mix the columns.
    {
        Buffer<float> in3({4, 16, 40}, "in3");
        Var k("k");
        RDom r(0, 40, "r");
        Func s("s"), out("out");
        s(c, k) = 0.0f;
        s(c, k) += in3(c, k, r);
        out(c, k) = s(c, k);
        out.gpu_blocks(k);
        s.compute_at(out, k);
        s.update().split(r.x, ro, ry, 8).reorder(c, ro, k, ry).gpu_threads(k, ry);
        std::string msg = message_of<CompileError>([&] { out.realize({4, 16}, gpu_target); });
        EXPECT_CONTAINS(msg, "but which point depends on the inner loop c of s.update(0)");
        EXPECT_CONTAINS(msg, "or map them onto threads along x inside it");
    }
    // The result in registers: only the first thread along y would hold it.
    {
        RDom r(0, 40, "r");
        Func s("s"), out("out");
        s(c) = 0.0f;
        s(c) += in(c, r);
        out(c) = s(c);
        out.split(c, co, ci, 32).gpu_blocks(co).gpu_threads(ci);
        s.compute_at(out, co).store_in(MemoryType::Register).gpu_threads(c);
        s.update().split(r.x, ro, ry, 8).reorder(ro, c, ry).gpu_threads(c, ry);
        std::string msg = message_of<CompileError>([&] { out.realize({64}, gpu_target); });
        EXPECT_CONTAINS(msg, "whose partial results are combined by the loop's first thread, but "
                             "s is stored in registers, a copy in each thread. Store s in "
                             "GPUShared.");
    }
}

} // namespace
