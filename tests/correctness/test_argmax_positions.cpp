// Argmax-style updates that keep their candidates' positions, split by rfactor: the partials
// merge by value and then by position, but what the Func held before the update (its pure
// definition's index, an earlier update's result) is not a position of this domain, and
// must win or lose ties as the earliest candidate whatever its index. Checked against the
// serial definition run by plain loops, over values with many ties.

#include "Reference.h"

#include <gtest/gtest.h>

#include <string>

using namespace aicf;

namespace {

// Small values with many ties along each column.
Buffer<int> tied_columns(int columns, int rows) {
    Buffer<int> in({columns, rows}, "in");
    for (int q = 0; q < rows; q++)
        for (int j = 0; j < columns; j++)
            in(j, q) = j % 2 == 0 ? (q * 7 + j) % 3 : (q * 7 + j) % 4;
    return in;
}

TEST(ArgmaxPositions, TheValueBeforeTheUpdateIsTheEarliestCandidate) {
    const int columns = 21, rows = 40;
    Buffer<int> in = tied_columns(columns, rows);
    for (int first : {0, -5}) {
        for (int start : {1000, -1, 7}) {
            for (bool later_wins : {false, true}) {
                SCOPED_TRACE("domain from " + std::to_string(first) + ", starting index " +
                             std::to_string(start) + (later_wins ? ", >=" : ", >"));
                Var c("c"), u("u");
                RVar ro("ro"), ri("ri");
                RDom r(first, rows, "r");
                Func best("best"), out("out");
                best(c) = Tuple(Expr(2), Expr(start));
                Expr v = in(c, r.x - first);
                Expr better = later_wins ? v >= best(c)[0] : v > best(c)[0];
                best(c) = Tuple(select(better, v, best(c)[0]), select(better, r.x, best(c)[1]));
                out(c) = best(c)[1];
                best.compute_root();
                // Every 8th point to a partial: they merge by position.
                best.update().split(r.x, ro, ri, 8).reorder(ro, ri);
                best.update().rfactor(ri, u).compute_root();
                Buffer<int> o = out.realize({columns});
                for (int j = 0; j < columns; j++) {
                    int value = 2, index = start;
                    for (int q = 0; q < rows; q++) {
                        int x = in(j, q);
                        if (later_wins ? x >= value : x > value) {
                            value = x;
                            index = q + first;
                        }
                    }
                    EXPECT_EQ(o(j), index) << "column " << j;
                }
            }
        }
    }
}

// A second argmax over the rows before those of the first: its partials' positions are all
// smaller than the index the first left, which must still win a tie.
TEST(ArgmaxPositions, ASecondUpdateOverEarlierRows) {
    const int columns = 21, rows = 40;
    Buffer<int> in = tied_columns(columns, rows);
    Var c("c"), u("u");
    RVar ro("ro"), ri("ri");
    RDom late(20, 20, "late"), early(0, 20, "early");
    Func best("best"), out("out");
    best(c) = Tuple(Expr(-1), Expr(-1));
    for (RDom r : {late, early}) {
        Expr v = in(c, r.x);
        Expr better = v > best(c)[0];
        best(c) = Tuple(select(better, v, best(c)[0]), select(better, r.x, best(c)[1]));
    }
    out(c) = best(c)[1];
    best.compute_root();
    best.update(1).split(early.x, ro, ri, 4).reorder(ro, ri);
    best.update(1).rfactor(ri, u).compute_root();
    Buffer<int> o = out.realize({columns});
    for (int j = 0; j < columns; j++) {
        int value = -1, index = -1;
        for (int q :
             {20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39,
              0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19}) {
            if (in(j, q) > value) {
                value = in(j, q);
                index = q;
            }
        }
        EXPECT_EQ(o(j), index) << "column " << j;
    }
}

// An element the update leaves as it is, beside an argmax and a sum, through rfactor's merge
// on the CPU, its partials in vector lanes or not: its value before the update comes out
// unchanged.
TEST(ArgmaxPositions, AnElementLeftAsItIsKeepsItsValue) {
    const int columns = 21, rows = 40;
    Buffer<int> in = tied_columns(columns, rows);
    for (bool lanes : {false, true}) {
        SCOPED_TRACE(lanes ? "rfactor's partials in vector lanes" : "rfactor");
        Var c("c"), u("u");
        RVar ro("ro"), ri("ri");
        RDom r(0, rows, "r");
        Func best("best"), out("out");
        best(c) = Tuple(Expr(1), in(c, 5) * 10 + 3, Expr(-3), Expr(0));
        Expr v = in(c, r.x);
        Expr better = v > best(c)[0];
        best(c) = Tuple(select(better, v, best(c)[0]), best(c)[1], select(better, r.x, best(c)[2]),
                        best(c)[3] + v);
        out(c) = best(c)[1] * 100000 + best(c)[2] * 1000 + best(c)[3];
        best.compute_root();
        best.update().split(r.x, ro, ri, 8).reorder(ro, ri);
        Func partial = best.update().rfactor(ri, u);
        partial.compute_root();
        if (lanes) partial.update().vectorize(u);
        Buffer<int> o = out.realize({columns});
        for (int j = 0; j < columns; j++) {
            int value = 1, index = -3, sum = 0;
            for (int q = 0; q < rows; q++) {
                sum += in(j, q);
                if (in(j, q) > value) value = in(j, q), index = q;
            }
            EXPECT_EQ(o(j), (in(j, 5) * 10 + 3) * 100000 + index * 1000 + sum) << "column " << j;
        }
    }
}

} // namespace
