// Cross-thread reductions in blocks of two or three dimensions, checked against plain loops
// in double precision at sizes that fill no tile:
// - a reduction loop on threads along y or z, the points it updates along x (and y): the
//   statistics of columns (BatchNorm over a batch, the gradient of a bias), each thread of a
//   column reducing a strided part of it, the partial results meeting in shared memory;
// - a reduction across several warps along x inside the rows of the block along y (a
//   normalization with several rows to a block), each row with shared slots of its own and
//   the barriers inside the rows, which every thread of the block must reach.

#include "ErrorMessage.h"
#include "GPUTarget.h"
#include "Reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
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

// out(x, y) = in(x, y) - mean of row y, 4 rows to a block on threads along y, each row's
// sum and largest value reduced across the 128 threads (4 warps) of its row along x: computed
// in each row (in registers), or at the block level in shared memory with their own rows on
// threads along y.
TEST(GPURowReductionInsideRows, RowsOfTheBlockEachReducedAcrossWarps) {
    for (TailStrategy tail : {TailStrategy::ShiftInwards, TailStrategy::GuardWithIf}) {
        for (MemoryType memory : {MemoryType::Auto, MemoryType::GPUShared, MemoryType::Register}) {
            for (int width : {1, 100, 1000}) {
                const int rows = 7;
                SCOPED_TRACE("width " + std::to_string(width) + ", memory " +
                             std::to_string(int(memory)) +
                             (tail == TailStrategy::GuardWithIf ? ", guarded" : ", shifted"));
                Buffer<float> in({width, rows}, "in");
                fill_random(in, -3, -1, unsigned(width));
                Var x("x"), y("y"), yo("yo"), yi("yi"), xo("xo"), xi("xi");
                RDom r(0, width, "r");
                RVar ro("ro"), lane("lane");
                Func sum("sum"), top("top"), out("out");
                sum(y) = 0.0f;
                sum(y) += in(r, y);
                top(y) = std::numeric_limits<float>::lowest();
                top(y) = max(top(y), in(r, y));
                out(x, y) = in(x, y) - sum(y) / float(width) + top(y);
                out.split(y, yo, yi, 4, tail)
                    .split(x, xo, xi, 128, TailStrategy::GuardWithIf)
                    .reorder(xi, xo, yi, yo)
                    .gpu_blocks(yo)
                    .gpu_threads(xi, yi);
                for (Func f : {sum, top}) {
                    Stage update = f.update();
                    update.split(r.x, ro, lane, 128);
                    if (memory == MemoryType::GPUShared) {
                        // At the block level, its rows on threads along y.
                        f.compute_at(out, yo).store_in(memory).gpu_threads(y);
                        update.reorder(ro, lane, y).gpu_threads(lane, y);
                    } else {
                        f.compute_at(out, yi);
                        if (memory != MemoryType::Auto) f.store_in(memory);
                        update.reorder(ro, lane).gpu_threads(lane);
                    }
                }
                Buffer<float> o = out.realize({width, rows}, gpu_target);
                for (int j = 0; j < rows; j++) {
                    double s = 0, m = in(0, j);
                    for (int i = 0; i < width; i++) {
                        s += in(i, j);
                        m = std::max(m, double(in(i, j)));
                    }
                    for (int i = 0; i < width; i++) {
                        double want = in(i, j) - s / width + m;
                        ASSERT_TRUE(close(o(i, j), want, 1e-5, 1e-5))
                            << i << ", " << j << ": " << o(i, j) << " vs " << want;
                    }
                }
            }
        }
    }
}

// The rows of a block on threads along x, each reduced across two warps of threads: the
// rows' loop moves to y to make room for the lanes, and each row has slots of its own.
TEST(GPURowReductionInsideRows, TheRowsLoopMovesToYForTheLanes) {
    Buffer<float> in({100, 8}, "in");
    fill_random(in, -1, 1, 4);
    Var y("y"), yo("yo"), yi("yi");
    RDom r(0, 100, "r");
    RVar ro("ro"), lane("lane");
    Func sum("sum"), out("out");
    sum(y) = 0.0f;
    sum(y) += in(r, y);
    out(y) = sum(y);
    out.split(y, yo, yi, 4).gpu_blocks(yo).gpu_threads(yi);
    sum.compute_at(out, yi);
    sum.update().split(r.x, ro, lane, 64).reorder(ro, lane).gpu_threads(lane);
    Buffer<float> o = out.realize({8}, gpu_target);
    for (int j = 0; j < 8; j++) {
        double want = 0;
        for (int i = 0; i < 100; i++)
            want += in(i, j);
        EXPECT_TRUE(close(o(j), want, 1e-5, 1e-5)) << j << ": " << o(j);
    }
}

// The rows of the reduction split with a guarded tail inside the block: in the last block,
// the threads of the rows past the end skip the reduction's work behind the tail's test,
// which must leave its barriers outside, for them to reach too.
TEST(GPURowReductionInsideRows, RowsSplitWithAGuardedTailAroundTheBarriers) {
    const int width = 150;
    for (int rows : {9, 5, 1}) {
        SCOPED_TRACE(std::to_string(rows) + " rows");
        Buffer<float> in({width, rows}, "in");
        fill_random(in, -1, 1, unsigned(rows));
        Var y("y"), yo("yo"), yi("yi"), sy("sy"), ty("ty");
        RDom r(0, width, "r");
        RVar ro("ro"), lane("lane");
        Func sum("sum"), out("out");
        sum(y) = 0.0f;
        sum(y) += in(r, y);
        out(y) = sum(y) * 2.0f;
        out.split(y, yo, yi, 4, TailStrategy::GuardWithIf).gpu_blocks(yo).gpu_threads(yi);
        sum.compute_at(out, yo);
        sum.split(y, sy, ty, 4, TailStrategy::GuardWithIf).gpu_threads(ty);
        sum.update()
            .split(y, sy, ty, 4, TailStrategy::GuardWithIf)
            .split(r.x, ro, lane, 64)
            .reorder(ro, lane, ty)
            .gpu_threads(lane, ty);
        Buffer<float> o = out.realize({rows}, gpu_target);
        for (int j = 0; j < rows; j++) {
            double want = 0;
            for (int i = 0; i < width; i++)
                want += in(i, j);
            EXPECT_TRUE(close(o(j), 2 * want, 1e-5, 1e-5)) << j << ": " << o(j);
        }
    }
}

// Another stage of the kernel runs more threads along y (8) or along z than the rows (4 or
// 2): the threads past the rows skip their work, yet reach the reduction's barriers.
TEST(GPURowReductionInsideRows, BlocksWithMoreThreadsThanTheRows) {
    const int width = 300, rows = 7;
    Buffer<float> in({width, rows}, "in");
    fill_random(in, -1, 1, 9);
    for (bool along_z : {false, true}) {
        SCOPED_TRACE(along_z ? "threads along z" : "threads along y");
        Var x("x"), y("y"), z("z"), yo("yo"), yi("yi"), xo("xo"), xi("xi");
        RDom r(0, width, "r");
        RVar ro("ro"), lane("lane");
        Func sum("sum"), table("table"), out("out");
        table(x, y) = cast<float>(x * 3 + y);
        sum(y) = 0.0f;
        sum(y) += in(r, y) * in(r, y);
        out(x, y) = sqrt(sum(y)) + table(x % 8, y % 8);
        const int rows_per_block = along_z ? 2 : 4;
        out.split(y, yo, yi, rows_per_block, TailStrategy::GuardWithIf)
            .split(x, xo, xi, 128, TailStrategy::GuardWithIf)
            .reorder(xi, xo, yi, yo)
            .gpu_blocks(yo)
            .gpu_threads(xi, yi);
        table.compute_at(out, yo).bound(x, 0, 8).bound(y, 0, 8);
        if (along_z) {
            table.split(y, y, z, 2).gpu_threads(x, y, z);
        } else {
            table.gpu_threads(x, y);
        }
        sum.compute_at(out, yi);
        sum.update().split(r.x, ro, lane, 128).reorder(ro, lane).gpu_threads(lane);
        Buffer<float> o = out.realize({width, rows}, gpu_target);
        for (int j = 0; j < rows; j++) {
            double s = 0;
            for (int i = 0; i < width; i++)
                s += double(in(i, j)) * in(i, j);
            for (int i = 0; i < width; i++) {
                double want = std::sqrt(s) + (i % 8) * 3 + j % 8;
                ASSERT_TRUE(close(o(i, j), want, 1e-5, 1e-5))
                    << i << ", " << j << ": " << o(i, j) << " vs " << want;
            }
        }
    }
}

// An argmax that keeps positions, reduced across threads, into a value from before the
// update whose index is no position of its domain (after it, inside it, or an earlier
// update's over other rows): that value is the earliest candidate and wins ties (>), or
// loses them to any point (>=). Along x (lanes), along y (columns), and rfactor's merge.
// A reduction of each column c over r: on lanes (mapping 0), on threads along y over 16
// columns to a block (1), or through rfactor's merge on lanes (2).
void schedule_columns_argmax(Func &out, Func &best, Var &c, RDom &r, int mapping) {
    Var co("co"), ci("ci"), u("u");
    RVar ro("ro"), ri("ri");
    if (mapping == 1) {
        out.split(c, co, ci, 16, TailStrategy::GuardWithIf).gpu_blocks(co).gpu_threads(ci);
        best.compute_at(out, co).gpu_threads(c);
        best.update().split(r.x, ro, ri, 6).reorder(ro, c, ri).gpu_threads(c, ri);
        return;
    }
    out.gpu_blocks(c);
    best.compute_at(out, c);
    best.update().split(r.x, ro, ri, 8).reorder(ro, ri);
    if (mapping == 0) {
        best.update().gpu_lanes(ri);
    } else {
        best.update().rfactor(ri, u).compute_at(best, RVar("u"));
        best.update().gpu_lanes(RVar("u"));
    }
}

TEST(GPUArgmaxPositions, TheValueBeforeTheUpdateIsTheEarliestCandidate) {
    const int columns = 21, rows = 40;
    Buffer<int> in({columns, rows}, "in");
    for (int q = 0; q < rows; q++)
        for (int j = 0; j < columns; j++)
            in(j, q) = j % 2 == 0 ? (q * 7 + j) % 3 : (q * 7 + j) % 4;
    for (int mapping = 0; mapping < 3; mapping++) {
        for (int start : {1000, 7}) {
            for (bool later_wins : {false, true}) {
                SCOPED_TRACE(std::string(mapping == 0   ? "lanes"
                                         : mapping == 1 ? "columns"
                                                        : "rfactor's merge on lanes") +
                             ", starting index " + std::to_string(start) +
                             (later_wins ? ", >=" : ", >"));
                Var c("c");
                RDom r(0, rows, "r");
                Func best("best"), out("out");
                best(c) = Tuple(Expr(2), Expr(start));
                Expr v = in(c, r.x);
                Expr better = later_wins ? v >= best(c)[0] : v > best(c)[0];
                best(c) = Tuple(select(better, v, best(c)[0]), select(better, r.x, best(c)[1]));
                out(c) = best(c)[1];
                schedule_columns_argmax(out, best, c, r, mapping);
                Buffer<int> o = out.realize({columns}, gpu_target);
                for (int j = 0; j < columns; j++) {
                    int value = 2, index = start;
                    for (int q = 0; q < rows; q++) {
                        int x = in(j, q);
                        if (later_wins ? x >= value : x > value) {
                            value = x;
                            index = q;
                        }
                    }
                    EXPECT_EQ(o(j), index) << "column " << j;
                }
            }
        }
    }
}

// An element the update leaves as it is, beside an argmax and a sum: its value before the
// update (the pure definition's, read from the input) comes out unchanged, on lanes, on
// threads along y over columns, and through rfactor's merge on lanes.
TEST(GPUArgmaxPositions, AnElementLeftAsItIsKeepsItsValue) {
    const int columns = 21, rows = 40;
    Buffer<int> in({columns, rows}, "in");
    for (int q = 0; q < rows; q++)
        for (int j = 0; j < columns; j++)
            in(j, q) = (q * 7 + j * 5) % 4;
    for (int mapping = 0; mapping < 3; mapping++) {
        SCOPED_TRACE(mapping == 0   ? "lanes"
                     : mapping == 1 ? "columns"
                                    : "rfactor's merge on lanes");
        Var c("c");
        RDom r(0, rows, "r");
        Func best("best"), out("out");
        // {value, kept, index, sum}: the kept element in the middle, a float from the input.
        best(c) = Tuple(Expr(1), cast<float>(in(c, 3)) * 0.5f + 0.25f, Expr(-3), Expr(0));
        Expr v = in(c, r.x);
        Expr better = v > best(c)[0];
        best(c) = Tuple(select(better, v, best(c)[0]), best(c)[1], select(better, r.x, best(c)[2]),
                        best(c)[3] + v);
        out(c) = best(c)[1] * 1000.0f + cast<float>(best(c)[2]) + cast<float>(best(c)[3]) * 0.001f;
        schedule_columns_argmax(out, best, c, r, mapping);
        Buffer<float> o = out.realize({columns}, gpu_target);
        for (int j = 0; j < columns; j++) {
            int value = 1, index = -3, sum = 0;
            for (int q = 0; q < rows; q++) {
                sum += in(j, q);
                if (in(j, q) > value) value = in(j, q), index = q;
            }
            const double want = (in(j, 3) * 0.5 + 0.25) * 1000.0 + index + sum * 0.001;
            EXPECT_TRUE(close(o(j), want, 1e-6, 1e-4)) << "column " << j << ": " << o(j);
        }
    }
}

// The same over a two-dimensional domain keeping both positions: the lanes across each row of
// the domain inside a serial loop over its rows (each row's combined partial merges by
// position into one of the loop's, which merges into the Func once), and rfactor's merge of
// a two-dimensional rfactor on lanes, its other loop serial around them.
TEST(GPUArgmaxPositions, LanesInsideTheRowsOfATwoDimensionalDomain) {
    const int width = 100, height = 6, rows = 5;
    Buffer<int> in({width, height, rows}, "in");
    for (int k = 0; k < rows; k++)
        for (int j = 0; j < height; j++)
            for (int i = 0; i < width; i++)
                in(i, j, k) =
                    int((unsigned(i) * 2654435761u + unsigned(j * 7 + k) * 40503u) >> 13) % 3;
    for (bool use_rfactor : {false, true}) {
        for (bool later_wins : {false, true}) {
            SCOPED_TRACE(std::string(use_rfactor ? "rfactor's merge" : "the update") +
                         (later_wins ? ", >=" : ", >"));
            Var y("y"), u("u"), v("v");
            RVar ro("ro"), lane("lane");
            RDom r(0, width, 0, height, "r");
            Func best("best"), out("out");
            // The starting index lies inside the domain, and ties with it are common.
            best(y) = Tuple(Expr(1), Expr(3), Expr(2));
            Expr x = in(r.x, r.y, y);
            Expr better = later_wins ? x >= best(y)[0] : x > best(y)[0];
            best(y) = Tuple(select(better, x, best(y)[0]), select(better, r.x, best(y)[1]),
                            select(better, r.y, best(y)[2]));
            out(y) = best(y)[1] + 1000 * best(y)[2];
            out.gpu_blocks(y);
            best.compute_at(out, y);
            best.update().split(r.x, ro, lane, 32);
            if (use_rfactor) {
                Func part = best.update().rfactor({{lane, u}, {r.y, v}});
                best.update().gpu_lanes(RVar("u"));
                part.compute_at(best, RVar("u"));
            } else {
                best.update().reorder(ro, lane, r.y).gpu_lanes(lane);
            }
            Buffer<int> o = out.realize({rows}, gpu_target);
            for (int k = 0; k < rows; k++) {
                int value = 1, i0 = 3, j0 = 2;
                for (int j = 0; j < height; j++)
                    for (int i = 0; i < width; i++)
                        if (later_wins ? in(i, j, k) >= value : in(i, j, k) > value) {
                            value = in(i, j, k);
                            i0 = i;
                            j0 = j;
                        }
                EXPECT_EQ(o(k), i0 + 1000 * j0) << "row " << k;
            }
        }
    }
}

// Two ways the lanes' partials of a 2-D argmax could lose their order:
// - a variable of the domain that runs one iteration (a single row) is simplified away with
//   the position it names, which the merge must still know to compare the other;
// - the Func held in registers by every thread of a consumer along x (an argmin read by all
//   of them): the serial loop's partial must be each thread's own, set up in each.
TEST(GPUArgmaxPositions, ASingleRowAndAResultInEveryThread) {
    const int width = 75, rows = 3;
    for (int height : {1, 4}) {
        for (bool in_registers : {false, true}) {
            SCOPED_TRACE(std::to_string(height) + " rows of the domain" +
                         (in_registers ? ", the result in registers" : ""));
            Buffer<int> in({width, height, rows}, "in");
            for (int k = 0; k < rows; k++)
                for (int j = 0; j < height; j++)
                    for (int i = 0; i < width; i++)
                        in(i, j, k) = (i * 5 + j * 3 + k) % 2 - 3; // many ties
            Var x("x"), y("y"), xo("xo"), xi("xi");
            RVar ro("ro"), lane("lane");
            RDom r(0, width, 0, height, "r");
            Func best("best"), out("out");
            best(y) = Tuple(Expr(-2), Expr(-3), Expr(77));
            Expr v = in(r.x, r.y, y);
            Expr better = v <= best(y)[0];
            best(y) = Tuple(select(better, v, best(y)[0]), select(better, r.x, best(y)[1]),
                            select(better, r.y, best(y)[2]));
            out(x, y) = best(y)[1] * 1000 + best(y)[2] * 10 + x;
            out.split(x, xo, xi, 32, TailStrategy::GuardWithIf)
                .reorder(xi, xo, y)
                .gpu_blocks(y)
                .gpu_threads(xi);
            best.compute_at(out, y);
            if (in_registers) best.store_in(MemoryType::Register);
            best.update().split(r.x, ro, lane, 32).reorder(ro, lane, r.y).gpu_lanes(lane);
            Buffer<int> o = out.realize({40, rows}, gpu_target);
            for (int k = 0; k < rows; k++) {
                int value = -2, i0 = -3, j0 = 77;
                for (int j = 0; j < height; j++)
                    for (int i = 0; i < width; i++)
                        if (in(i, j, k) <= value) {
                            value = in(i, j, k);
                            i0 = i;
                            j0 = j;
                        }
                for (int i = 0; i < 40; i++)
                    ASSERT_EQ(o(i, k), i0 * 1000 + j0 * 10 + i) << i << ", " << k;
            }
        }
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
    // Inside the thread loop of its consumer: the barrier would not be reached by every
    // thread. Both messages lead to the block loop.
    for (bool shared : {false, true}) {
        RDom r(0, 40, "r");
        Func s("s"), out("out");
        s(c) = 0.0f;
        s(c) += in(c, r);
        out(c) = s(c);
        out.split(c, co, ci, 32, TailStrategy::GuardWithIf).gpu_blocks(co).gpu_threads(ci);
        s.compute_at(out, ci);
        if (shared) s.store_in(MemoryType::GPUShared);
        s.update().split(r.x, ro, ry, 4).reorder(ro, c, ry).gpu_threads(c, ry);
        std::string msg = message_of<CompileError>([&] { out.realize({64}, gpu_target); });
        if (shared) {
            EXPECT_CONTAINS(msg, "or store and compute it at the block loop co of out");
        } else {
            EXPECT_CONTAINS(msg, "the loop is inside the GPU thread loop ci of out, where a "
                                 "barrier would not be reached by every thread. Compute s at a "
                                 "block loop (compute_at), so that ry is the outermost thread "
                                 "loop of s.update(0).");
        }
    }
    // Slots for 24 doubles of 32 x 32 threads: more shared memory than a block has, said of
    // the reduction's loop.
    {
        RDom r(0, 40, "r");
        Func s("s"), out("out");
        std::vector<Expr> zeros(24, Expr(0.0)), sums;
        s(c) = Tuple(zeros);
        for (int e = 0; e < 24; e++)
            sums.push_back(s(c)[e] + cast<double>(in(c, r)) * double(e + 1));
        s(c) = Tuple(sums);
        out(c) = s(c)[0] + s(c)[23];
        out.split(c, co, ci, 32, TailStrategy::GuardWithIf).gpu_blocks(co).gpu_threads(ci);
        s.compute_at(out, co).gpu_threads(c);
        s.update().split(r.x, ro, ry, 32).reorder(ro, c, ry).gpu_threads(c, ry);
        std::string msg = message_of<CompileError>([&] { out.realize({64}, gpu_target); });
        EXPECT_CONTAINS(msg, "s.s1.ry.warp_partials.23: 8192 bytes at offset");
        EXPECT_CONTAINS(msg, "(the partial results of the cross-thread reduction over ry of "
                             "s.update(0): fewer threads in that loop, or fewer points reduced "
                             "at once, make it smaller)");
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
