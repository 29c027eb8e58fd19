// Cross-thread reductions: a reduction loop on GPU lanes or threads, reduced by warp shuffles
// (and across warps through shared memory), checked against plain loops in double precision
// at widths that fill no warp evenly.

#include "ErrorMessage.h"
#include "GPUTarget.h"
#include "Reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace aicf;
using aicf_test::close;
using aicf_test::fill_random;
using aicf_test::message_of;

namespace {

const Target gpu_target = aicf_test::gpu_test_target();

// Where the reduction of a row runs.
enum class RowMapping {
    WarpPerRow,  // the row's reduction on the 32 lanes of a warp, 4 rows (warps) per block
    BlockPerRow, // the row's reduction on the 256 threads of a block, the result in shared memory
    BlockPerRowInRegisters, // the same, each thread holding the result in a register
};

const RowMapping kMappings[] = {RowMapping::WarpPerRow, RowMapping::BlockPerRow,
                                RowMapping::BlockPerRowInRegisters};

const char *to_string(RowMapping m) {
    return m == RowMapping::WarpPerRow    ? "warp per row"
           : m == RowMapping::BlockPerRow ? "block per row"
                                          : "block per row, in registers";
}

// out(y) = red(y) * 2 + 1 with red a reduction over the row y of width `width`; `define`
// gives red its update. Rows are split four to a block (warp per row), or one to a block.
template <typename Define>
Func row_reduction(RowMapping mapping, int width, Func red, Define define) {
    Var y("y"), yo("yo"), yi("yi");
    RDom r(0, width, "r");
    RVar ro("ro"), lane("lane");
    define(red, r, y);
    Func out("out");
    out(y) = red(y);
    if (mapping == RowMapping::WarpPerRow) {
        out.split(y, yo, yi, 4).gpu_blocks(yo).gpu_threads(yi);
        red.compute_at(out, yi);
        red.update().split(r.x, ro, lane, 32).reorder(ro, lane).gpu_lanes(lane);
    } else {
        out.gpu_blocks(y);
        red.compute_at(out, y);
        if (mapping == RowMapping::BlockPerRowInRegisters) red.store_in(MemoryType::Register);
        red.update().split(r.x, ro, lane, 256).reorder(ro, lane).gpu_threads(lane);
    }
    return out;
}

const int kRows = 7; // not a multiple of the rows per block

TEST(GPUCrossThreadReduction, SumOfEachRowAtWidthsThatFillNoWarp) {
    for (RowMapping mapping : kMappings) {
        for (int width : {1, 31, 33, 1000, 1024, 4095}) {
            SCOPED_TRACE(std::string(to_string(mapping)) + ", width " + std::to_string(width));
            Buffer<float> in({width, kRows}, "in");
            fill_random(in, -1, 1, unsigned(width));
            Func sum("sum");
            Func out = row_reduction(mapping, width, sum, [&](Func f, RDom r, Var y) {
                f(y) = 0.0f;
                f(y) += in(r.x, y);
            });
            Buffer<float> o = out.realize({kRows}, gpu_target);
            for (int j = 0; j < kRows; j++) {
                double want = 0;
                for (int i = 0; i < width; i++)
                    want += in(i, j);
                EXPECT_TRUE(close(o(j), want, 1e-5, 1e-5)) << j << ": " << o(j) << " vs " << want;
            }
        }
    }
}

// max, min and * have identities other than 0: lanes past the row must not contribute 0.
// Rows reduced per block of 4 in shared memory, the rows split with a guarded tail in both
// stages: in the last block, the rows past the end are neither initialized nor updated (the
// combined partial is merged under the tail's guard too, so it reads no row that was never
// written, which the simulator would report).
TEST(GPUCrossThreadReduction, RowsSplitWithAGuardedTailInsideABlock) {
    const int width = 100;
    for (bool on_lanes : {true, false}) {
        for (int rows : {9, 5, 1}) {
            SCOPED_TRACE(std::string(on_lanes ? "lanes" : "threads") + ", " + std::to_string(rows) +
                         " rows");
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
            Stage update = sum.update();
            update.split(y, sy, ty, 4, TailStrategy::GuardWithIf)
                .split(r.x, ro, lane, 32)
                .reorder(ro, lane, ty);
            if (on_lanes) {
                update.gpu_lanes(lane).gpu_threads(ty);
            } else {
                update.gpu_threads(lane, ty);
            }
            Buffer<float> o = out.realize({rows}, gpu_target);
            for (int j = 0; j < rows; j++) {
                double want = 0;
                for (int i = 0; i < width; i++)
                    want += in(i, j);
                EXPECT_TRUE(close(o(j), 2 * want, 1e-5, 1e-5)) << j << ": " << o(j);
            }
        }
    }
}

TEST(GPUCrossThreadReduction, MaxMinAndProductOfNegativeRows) {
    for (RowMapping mapping : kMappings) {
        const int width = 37;
        SCOPED_TRACE(to_string(mapping));
        Buffer<float> in({width, kRows}, "in");
        fill_random(in, -3, -1, 7);
        Func mx("mx"), mn("mn"), prod("prod");
        Func out_max = row_reduction(mapping, width, mx, [&](Func f, RDom r, Var y) {
            f(y) = std::numeric_limits<float>::lowest();
            f(y) = max(f(y), in(r.x, y));
        });
        Func out_min = row_reduction(mapping, width, mn, [&](Func f, RDom r, Var y) {
            f(y) = std::numeric_limits<float>::max();
            f(y) = min(in(r.x, y), f(y));
        });
        Func out_prod = row_reduction(mapping, width, prod, [&](Func f, RDom r, Var y) {
            f(y) = 1.0f;
            f(y) = f(y) * (in(r.x, y) * -0.5f);
        });
        Buffer<float> a = out_max.realize({kRows}, gpu_target);
        Buffer<float> b = out_min.realize({kRows}, gpu_target);
        Buffer<float> c = out_prod.realize({kRows}, gpu_target);
        for (int j = 0; j < kRows; j++) {
            double hi = -1e30, lo = 1e30, p = 1;
            for (int i = 0; i < width; i++) {
                hi = std::max(hi, double(in(i, j)));
                lo = std::min(lo, double(in(i, j)));
                p *= in(i, j) * -0.5;
            }
            EXPECT_EQ(a(j), float(hi)) << j;
            EXPECT_EQ(b(j), float(lo)) << j;
            EXPECT_TRUE(close(c(j), p, 1e-5, 0)) << j << ": " << c(j) << " vs " << p;
        }
    }
}

// Bitwise and logical reductions of rows: a checksum (^), the flags seen (|) and always set
// (&) of uint32 words, and "any"/"all" of bools.
TEST(GPUCrossThreadReduction, BitwiseAndLogicalRows) {
    for (RowMapping mapping : kMappings) {
        const int width = 45;
        SCOPED_TRACE(to_string(mapping));
        Buffer<uint32_t> in({width, kRows}, "in");
        std::mt19937 rng(8);
        for (int j = 0; j < kRows; j++)
            for (int i = 0; i < width; i++)
                in(i, j) = uint32_t(rng()) | (j % 3 == 0 ? 0x10u : 0u);
        Func xr("xr"), orr("orr"), andr("andr"), any("any"), all("all");
        Func out_x = row_reduction(mapping, width, xr, [&](Func f, RDom r, Var y) {
            f(y) = 0u;
            f(y) = f(y) ^ in(r.x, y);
        });
        Func out_o = row_reduction(mapping, width, orr, [&](Func f, RDom r, Var y) {
            f(y) = 0u;
            f(y) = f(y) | (in(r.x, y) & 0xC0000000u);
        });
        Func out_a = row_reduction(mapping, width, andr, [&](Func f, RDom r, Var y) {
            f(y) = 0xFFFFFFFFu;
            f(y) = (in(r.x, y) | 0xFFFFFFEFu) & f(y);
        });
        Func out_any = row_reduction(mapping, width, any, [&](Func f, RDom r, Var y) {
            f(y) = false;
            f(y) = f(y) || in(r.x, y) < 200000000u;
        });
        Func out_all = row_reduction(mapping, width, all, [&](Func f, RDom r, Var y) {
            f(y) = true;
            f(y) = f(y) && in(r.x, y) > 40000000u;
        });
        Buffer<uint32_t> a = out_x.realize({kRows}, gpu_target);
        Buffer<uint32_t> b = out_o.realize({kRows}, gpu_target);
        Buffer<uint32_t> c = out_a.realize({kRows}, gpu_target);
        Buffer<bool> d = out_any.realize({kRows}, gpu_target);
        Buffer<bool> e = out_all.realize({kRows}, gpu_target);
        for (int j = 0; j < kRows; j++) {
            const aicf_test::BitwiseRow want = aicf_test::bitwise_row(
                in, j, width, 0xC0000000u, 0xFFFFFFEFu, 200000000u, 40000000u);
            const uint32_t got[] = {a(j), b(j), c(j)};
            const uint32_t wanted[] = {want.xor_all, want.seen, want.kept};
            for (int k = 0; k < 3; k++)
                EXPECT_EQ(got[k], wanted[k]) << j << ", reduction " << k;
            EXPECT_EQ(d(j), want.any_below) << j;
            EXPECT_EQ(e(j), want.all_above) << j;
        }
    }
}

// Integer updates whose new value is itself a sum or a product, f += in + 5: lowered, the
// simplifier regroups them ((f + in) + 5), and they are still a sum (and a product, a max) of
// the Func and one value per point. Exact integers, with wrapping products of uint32.
TEST(GPUCrossThreadReduction, IntegerUpdatesOfCompoundValues) {
    for (RowMapping mapping : kMappings) {
        const int width = 37;
        SCOPED_TRACE(to_string(mapping));
        Buffer<int> in({width, kRows}, "in");
        Buffer<uint32_t> in_u({width, kRows}, "in_u");
        for (int j = 0; j < kRows; j++) {
            for (int i = 0; i < width; i++) {
                in(i, j) = (i * 7919 + j * 104729) % 2001 - 1000;
                in_u(i, j) = uint32_t(i * 2654435761u + j * 40503u) | 1u;
            }
        }
        Func plus("plus"), minus("minus"), times("times"), top("top");
        Func out_plus = row_reduction(mapping, width, plus, [&](Func f, RDom r, Var y) {
            f(y) = 3;
            f(y) += in(r.x, y) + 5;
        });
        Func out_minus = row_reduction(mapping, width, minus, [&](Func f, RDom r, Var y) {
            f(y) = -2;
            f(y) -= in(r.x, y) * 3 + y;
        });
        Func out_times = row_reduction(mapping, width, times, [&](Func f, RDom r, Var y) {
            f(y) = 1u;
            f(y) *= in_u(r.x, y) * 3u;
        });
        Func out_top = row_reduction(mapping, width, top, [&](Func f, RDom r, Var y) {
            f(y) = -5000;
            f(y) = max(f(y), max(in(r.x, y), r.x * 20 - 900));
        });
        Buffer<int> a = out_plus.realize({kRows}, gpu_target);
        Buffer<int> b = out_minus.realize({kRows}, gpu_target);
        Buffer<uint32_t> c = out_times.realize({kRows}, gpu_target);
        Buffer<int> d = out_top.realize({kRows}, gpu_target);
        for (int j = 0; j < kRows; j++) {
            int64_t sum = 3, difference = -2, highest = -5000;
            uint32_t product = 1;
            for (int i = 0; i < width; i++) {
                sum += in(i, j) + 5;
                difference -= int64_t(in(i, j)) * 3 + j;
                product *= in_u(i, j) * 3u;
                highest = std::max<int64_t>({highest, in(i, j), i * 20 - 900});
            }
            EXPECT_EQ(a(j), sum) << j;
            EXPECT_EQ(b(j), difference) << j;
            EXPECT_EQ(c(j), product) << j;
            EXPECT_EQ(d(j), highest) << j;
        }
    }
}

// Values of 8, 16 and 64 bits travel through 32-bit shuffles, widened or in two halves.
TEST(GPUCrossThreadReduction, ValuesOfEveryWidthShuffleExactly) {
    for (RowMapping mapping : kMappings) {
        const int width = 45;
        SCOPED_TRACE(to_string(mapping));
        Buffer<int32_t> in({width, kRows}, "in");
        fill_random(in, -1000, 1000, 11);
        Func s64("s64"), f64("f64"), m8("m8"), m16("m16"), h16("h16");
        Func o64 = row_reduction(mapping, width, s64, [&](Func f, RDom r, Var y) {
            // Beyond 32 bits: the high half must travel too.
            f(y) = cast<int64_t>(0);
            f(y) += cast<int64_t>(in(r.x, y)) * cast<int64_t>(1) << 40;
        });
        Func od = row_reduction(mapping, width, f64, [&](Func f, RDom r, Var y) {
            f(y) = 0.0;
            f(y) += cast<double>(in(r.x, y)) / 3.0;
        });
        Func o8 = row_reduction(mapping, width, m8, [&](Func f, RDom r, Var y) {
            f(y) = cast<uint8_t>(0);
            f(y) = max(f(y), cast<uint8_t>(in(r.x, y) & 255));
        });
        Func o16 = row_reduction(mapping, width, m16, [&](Func f, RDom r, Var y) {
            f(y) = cast<int16_t>(32767);
            f(y) = min(f(y), cast<int16_t>(in(r.x, y) * 20));
        });
        Func oh = row_reduction(mapping, width, h16, [&](Func f, RDom r, Var y) {
            f(y) = cast<bfloat16_t>(-1000.0f);
            f(y) = max(f(y), cast<bfloat16_t>(in(r.x, y)));
        });
        Buffer<int64_t> a = o64.realize({kRows}, gpu_target);
        Buffer<double> b = od.realize({kRows}, gpu_target);
        Buffer<uint8_t> c = o8.realize({kRows}, gpu_target);
        Buffer<int16_t> d = o16.realize({kRows}, gpu_target);
        Buffer<bfloat16_t> e = oh.realize({kRows}, gpu_target);
        for (int j = 0; j < kRows; j++) {
            int64_t sum = 0;
            double third = 0;
            int m8_want = 0, m16_want = 32767;
            float hmax = -1000;
            for (int i = 0; i < width; i++) {
                sum += int64_t(in(i, j)) * (int64_t(1) << 40);
                third += double(in(i, j)) / 3.0;
                m8_want = std::max(m8_want, in(i, j) & 255);
                m16_want = std::min(m16_want, in(i, j) * 20);
                hmax = std::max(hmax, float(bfloat16_t(float(in(i, j)))));
            }
            EXPECT_EQ(a(j), sum) << j;
            EXPECT_TRUE(close(b(j), third, 1e-12, 1e-12)) << j;
            EXPECT_EQ(int(c(j)), m8_want) << j;
            EXPECT_EQ(int(d(j)), m16_want) << j;
            EXPECT_EQ(float(e(j)), hmax) << j;
        }
    }
}

// Argmax that keeps the index, with many ties, each lane (or thread) reducing a consecutive
// chunk of the row or every 32nd (256th) point (the coalesced loads of a row): the partials
// merge by value and then by index, so the first index wins a tie for `v > a`, the later one
// for {max(a, v), select(v < a, i, k)}, as the serial definition has it. A 2-D domain keeps
// both indexes and compares them row first.
TEST(GPUCrossThreadReduction, ArgmaxOverStridedLanesBreaksTiesByIndex) {
    for (RowMapping mapping : kMappings) {
        for (int width : {33, 1000}) {
            for (int form = 0; form < 4; form++) {
                const bool later = form % 2 == 1, strided = form >= 2;
                SCOPED_TRACE(std::string(to_string(mapping)) + ", width " + std::to_string(width) +
                             (later ? ", later index on ties" : ", first index on ties") +
                             (strided ? ", strided" : ", chunks"));
                Buffer<float> in({width, kRows}, "in");
                for (int j = 0; j < kRows; j++)
                    for (int i = 0; i < width; i++)
                        in(i, j) = float((i * 7 + j * 3) % 5); // each value many times
                Func best("best"), out("out");
                Var y("y"), yo("yo"), yi("yi");
                RDom r(0, width, "r");
                RVar ro("ro"), lane("lane");
                Expr v = in(r.x, y);
                best(y) = Tuple(Expr(-1.0f), Expr(-1));
                if (later) {
                    best(y) = Tuple(max(best(y)[0], v), select(v < best(y)[0], best(y)[1], r.x));
                } else {
                    Expr better = v > best(y)[0];
                    best(y) = Tuple(select(better, v, best(y)[0]), select(better, r.x, best(y)[1]));
                }
                out(y) = best(y)[1];
                const bool warp = mapping == RowMapping::WarpPerRow;
                if (warp) {
                    out.split(y, yo, yi, 4).gpu_blocks(yo).gpu_threads(yi);
                } else {
                    out.gpu_blocks(y);
                }
                best.compute_at(out, warp ? yi : y);
                if (mapping == RowMapping::BlockPerRowInRegisters)
                    best.store_in(MemoryType::Register);
                const int threads = warp ? 32 : 256;
                if (strided) {
                    best.update().split(r.x, ro, lane, threads).reorder(ro, lane);
                } else {
                    best.update().split(r.x, lane, ro, (width + threads - 1) / threads);
                }
                if (warp) {
                    best.update().gpu_lanes(lane);
                } else {
                    best.update().gpu_threads(lane);
                }
                Buffer<int32_t> o = out.realize({kRows}, gpu_target)[0];
                for (int j = 0; j < kRows; j++) {
                    int at = 0;
                    for (int i = 1; i < width; i++)
                        if (later ? in(i, j) >= in(at, j) : in(i, j) > in(at, j)) at = i;
                    EXPECT_EQ(o(j), at) << j;
                }
            }
        }
    }
    // Over a 2-D domain (the later point on ties, rows outermost), lanes over every 32nd
    // column.
    const int W = 45, H = 7;
    Buffer<int> in({W, H}, "in");
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++)
            in(i, j) = (i * 5 + j * 11) % 4;
    Func best("best2"), out("out2");
    Var x("x");
    RDom r(0, W, 0, H, "r");
    RVar ro("ro"), lane("lane");
    Expr v = in(r.x, r.y);
    best(x) = Tuple(Expr(-1), Expr(-1), Expr(-1));
    Expr keep = v < best(x)[0];
    best(x) =
        Tuple(max(best(x)[0], v), select(keep, best(x)[1], r.x), select(keep, best(x)[2], r.y));
    out(x) = best(x)[1] + 100 * best(x)[2] + x;
    out.gpu_blocks(x);
    best.compute_at(out, x);
    best.update().split(r.x, ro, lane, 32).reorder(ro, lane).gpu_lanes(lane);
    Buffer<int32_t> o = out.realize({2}, gpu_target)[0];
    int ax = 0, ay = 0;
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++)
            if (in(i, j) >= in(ax, ay)) ax = i, ay = j;
    EXPECT_EQ(o(0), ax + 100 * ay);
    EXPECT_EQ(o(1), ax + 100 * ay + 1);
}

// Candidates equal to the identity (-inf) in a form whose ties depend on order and that
// keeps no position of the domain (the candidate index is the lane's, r.x once its outer
// split runs once): threads with no element (past the row's end, or before a where()) hold
// the identity, and must not win a tie. Rows of -inf, of -inf with a few numbers, and a row
// the where() leaves empty (the Func keeps its first value), against a plain loop.
TEST(GPUCrossThreadReduction, TiesWithTheIdentityGoToRealCandidates) {
    const float inf = std::numeric_limits<float>::infinity();
    for (const auto &[width, threads] : {std::pair{20, 32}, {40, 64}, {133, 160}, {133, 256}}) {
        for (int form = 0; form < 4; form++) {
            const bool later = form % 2 == 1, masked = form >= 2;
            SCOPED_TRACE("width " + std::to_string(width) + ", " + std::to_string(threads) +
                         " threads" + (later ? ", later index on ties" : ", first on ties") +
                         (masked ? ", where(r >= from)" : ""));
            const int rows = 4;
            Buffer<float> in({width, rows}, "in");
            fill_random(in, -2.0, 2.0, 31 + form);
            for (int i = 0; i < width; i++) {
                in(i, 0) = -inf;
                if (i % 7 != 3) in(i, 1) = -inf;
            }
            Buffer<int> from({rows}, "from");
            for (int j = 0; j < rows; j++)
                from(j) = masked ? std::vector<int>{5, 9, 17, width}[size_t(j)] : 0;
            Func best("best"), out("out");
            Var y("y");
            RDom r(0, width, "r");
            r.where(r.x >= from(y));
            RVar ro("ro"), t("t");
            Expr v = in(r.x, y);
            best(y) = Tuple(-inf, Expr(-7));
            if (later) {
                best(y) = Tuple(max(best(y)[0], v), select(v < best(y)[0], best(y)[1], r.x));
            } else {
                best(y) = Tuple(max(best(y)[0], v), select(v > best(y)[0], r.x, best(y)[1]));
            }
            out(y) = best(y)[1];
            out.gpu_blocks(y);
            best.compute_at(out, y);
            best.update()
                .split(r.x, ro, t, threads, TailStrategy::GuardWithIf)
                .reorder(ro, t)
                .gpu_threads(t);
            Buffer<int32_t> o = out.realize({rows}, gpu_target)[0];
            o.copy_to_host();
            for (int j = 0; j < rows; j++) {
                float m = -inf;
                int at = -7;
                for (int i = from(j); i < width; i++) {
                    if (later ? !(in(i, j) < m) : in(i, j) > m) at = i;
                    m = std::max(m, in(i, j));
                }
                EXPECT_EQ(o(j), at) << "row " << j;
            }
        }
    }
}

// The same through rfactor: a where() leaves whole partials without a point, and an argmax
// whose ties depend on order (a label kept, not the position) must not take their identity.
// On the host and with the partials on GPU threads; a row with no point keeps its first value.
TEST(GPUCrossThreadReduction, RFactorPartialsWithNoPointLoseTies) {
    const float inf = std::numeric_limits<float>::infinity();
    const int width = 40, rows = 3;
    Buffer<float> in({width, rows}, "in");
    for (int j = 0; j < rows; j++)
        for (int i = 0; i < width; i++)
            in(i, j) = -inf;
    in(5, 1) = 1.0f;
    Buffer<int> to({rows}, "to");
    to(0) = 13, to(1) = 13, to(2) = 0;
    for (bool gpu : {false, true}) {
        SCOPED_TRACE(gpu ? "partials on GPU threads" : "host");
        Func best("best"), out("out");
        Var y("y"), u("u");
        RDom r(0, width, "r");
        r.where(r.x < to(y));
        RVar ro("ro"), ri("ri");
        Expr v = in(r.x, y), label = r.x % 9 + 100;
        best(y) = Tuple(-inf, Expr(-7));
        best(y) = Tuple(max(best(y)[0], v), select(v < best(y)[0], best(y)[1], label));
        out(y) = best(y)[1];
        best.update().split(r.x, ro, ri, 8, TailStrategy::GuardWithIf);
        Func partial = best.update().rfactor(ro, u);
        if (gpu) {
            out.gpu_blocks(y);
            best.compute_at(out, y);
            partial.compute_at(out, y).gpu_threads(u);
            partial.update().gpu_threads(u);
        } else {
            partial.compute_root();
        }
        Buffer<int32_t> o = out.realize({rows}, gpu ? gpu_target : Target("host"))[0];
        o.copy_to_host();
        for (int j = 0; j < rows; j++) {
            float m = -inf;
            int at = -7;
            for (int i = 0; i < to(j); i++) {
                if (!(in(i, j) < m)) at = i % 9 + 100;
                m = std::max(m, in(i, j));
            }
            EXPECT_EQ(o(j), at) << "row " << j;
        }
    }
}

// Welford's (count, mean, squared deviations) per row: the lanes' summaries merged by Chan's
// formula, which keeps the variance accurate where sum and sum of squares would cancel. The
// count is a float, or an int32 divided as cast<float>(n + 1): the lanes' counts then merge
// exactly, converted to float where the mean and squares use them.
TEST(GPUCrossThreadReduction, WelfordMeanAndVariance) {
    for (bool int_count : {false, true}) {
        for (RowMapping mapping : kMappings) {
            for (int width : {1, 33, 1000}) {
                SCOPED_TRACE(std::string(to_string(mapping)) + ", width " + std::to_string(width) +
                             (int_count ? ", int32 count" : ""));
                Buffer<float> in({width, kRows}, "in");
                fill_random(in, 999, 1001, unsigned(width)); // large mean, small spread
                Func stats("stats");
                Func out = row_reduction(mapping, width, stats, [&](Func w, RDom r, Var y) {
                    w(y) = Tuple(int_count ? Expr(0) : Expr(0.0f), 0.0f, 0.0f);
                    Expr v = in(r.x, y);
                    Expr n = w(y)[0] + (int_count ? Expr(1) : Expr(1.0f));
                    Expr delta = v - w(y)[1];
                    Expr mean = w(y)[1] + delta / cast<float>(n);
                    w(y) = Tuple(n, mean, w(y)[2] + delta * (v - mean));
                });
                Realization res = out.realize({kRows}, gpu_target);
                Buffer<float> mean(res[1]), squares(res[2]);
                for (int j = 0; j < kRows; j++) {
                    const aicf_test::RowMoments r = aicf_test::row_moments(in, j, width);
                    const double m = r.mean, sq = r.squares;
                    if (int_count)
                        EXPECT_EQ(Buffer<int>(res[0])(j), width) << j;
                    else
                        EXPECT_EQ(Buffer<float>(res[0])(j), float(width)) << j;
                    EXPECT_TRUE(close(mean(j), m, 1e-6, 1e-6))
                        << j << ": " << mean(j) << " vs " << m;
                    EXPECT_TRUE(close(squares(j), sq, 1e-3, 1e-3))
                        << j << ": " << squares(j) << " vs " << sq;
                }
            }
        }
    }
}

// An argmax pair (keeping its index, so ties go to the first index in any schedule) beside a
// sum that reads neither: each group merged by its own form across lanes and threads.
TEST(GPUCrossThreadReduction, ArgmaxBesideASum) {
    for (RowMapping mapping : kMappings) {
        for (int width : {1, 33, 1000}) {
            SCOPED_TRACE(std::string(to_string(mapping)) + ", width " + std::to_string(width));
            Buffer<int> in({width, kRows}, "in");
            fill_random(in, -50, 50, unsigned(width) + 9);
            Func am("am");
            Func out = row_reduction(mapping, width, am, [&](Func f, RDom r, Var y) {
                f(y) = Tuple(std::numeric_limits<int>::min(), -1, 0.0f);
                Expr v = in(r.x, y);
                Expr better = v > f(y)[0];
                f(y) = Tuple(select(better, v, f(y)[0]), select(better, r.x, f(y)[1]),
                             f(y)[2] + cast<float>(v) * 0.5f);
            });
            Realization res = out.realize({kRows}, gpu_target);
            Buffer<int> best(res[0]), at(res[1]);
            Buffer<float> sum(res[2]);
            for (int j = 0; j < kRows; j++) {
                int want_best = std::numeric_limits<int>::min(), want_at = -1;
                double want_sum = 0;
                for (int i = 0; i < width; i++) {
                    if (in(i, j) > want_best) want_best = in(i, j), want_at = i;
                    want_sum += 0.5 * in(i, j);
                }
                EXPECT_EQ(best(j), want_best) << j;
                EXPECT_EQ(at(j), want_at) << j;
                EXPECT_EQ(sum(j), float(want_sum)) << j; // halves of small integers: exact
            }
        }
    }
}

// argmax and argmin that keep NaN as NumPy does (a NaN beats every number, the first NaN
// stays: the form the inline argmax builds), across lanes, threads and rfactor, against the
// serial loop: rows with one NaN, two, a NaN first, only NaNs, ties, and -inf or inf.
TEST(GPUCrossThreadReduction, ArgmaxAndArgminKeepTheFirstNaN) {
    const int width = 100;
    Buffer<float> in({width, kRows}, "in");
    fill_random(in, -4, 4, 77);
    in(50, 0) = NAN;
    in(99, 1) = NAN, in(33, 1) = NAN;
    in(0, 2) = NAN;
    for (int i = 0; i < width; i++)
        in(i, 3) = NAN, in(i, 4) = i % 7 == 3 ? 5.0f : 1.0f; // all NaN; ties
    in(25, 5) = INFINITY, in(26, 5) = -INFINITY;
    for (int i = 0; i < width; i++)
        in(i, 6) = -INFINITY;
    for (const bool larger : {true, false}) {
        std::vector<int> want(kRows);
        for (int j = 0; j < kRows; j++) {
            float best = larger ? -INFINITY : INFINITY;
            want[j] = 0;
            for (int i = 0; i < width; i++) {
                const float v = in(i, j);
                if (std::isnan(v)) {
                    want[j] = i;
                    break;
                }
                if (larger ? v > best : v < best) best = v, want[j] = i;
            }
        }
        auto define = [&](Func f, RDom r, Var y) {
            f(y) = Tuple(0, Expr(larger ? -INFINITY : INFINITY));
            Expr v = in(r.x, y), current = f(y)[1];
            Expr better = (larger ? v > current : v < current) || (is_nan(v) && !is_nan(current));
            f(y) = Tuple(select(better, r.x, f(y)[0]), select(better, v, current));
        };
        for (RowMapping mapping : kMappings) {
            SCOPED_TRACE(std::string(to_string(mapping)) + (larger ? ", argmax" : ", argmin"));
            Func am("am");
            Realization res =
                row_reduction(mapping, width, am, define).realize({kRows}, gpu_target);
            Buffer<int> o(res[0]);
            o.copy_to_host();
            for (int j = 0; j < kRows; j++)
                EXPECT_EQ(o(j), want[j]) << "row " << j;
        }
        // rfactor: 64 threads each over every 64th point, merged in shared memory.
        Var y("y"), u("u");
        RDom r(0, width, "r");
        RVar ro("ro"), ri("ri");
        Func am("am"), out("out");
        define(am, r, y);
        out(y) = am(y)[0];
        out.gpu_blocks(y);
        am.compute_at(out, y);
        am.update().split(r.x, ro, ri, 64, TailStrategy::GuardWithIf).reorder(ri, ro);
        Func partial = am.update().rfactor(ri, u);
        partial.compute_at(out, y).gpu_threads(u);
        partial.update().gpu_threads(u);
        Buffer<int> o = out.realize({kRows}, gpu_target);
        o.copy_to_host();
        for (int j = 0; j < kRows; j++)
            EXPECT_EQ(o(j), want[j]) << (larger ? "argmax" : "argmin") << " by rfactor, row " << j;
    }
}

// Tuple reductions: the streaming softmax pair (max, sum of exponentials relative to it) and
// argmax, each lane's partial merged with its partner's.
TEST(GPUCrossThreadReduction, SoftmaxPairAndArgmax) {
    for (RowMapping mapping : kMappings) {
        for (int width : {33, 1000}) {
            SCOPED_TRACE(std::string(to_string(mapping)) + ", width " + std::to_string(width));
            Buffer<float> in({width, kRows}, "in");
            fill_random(in, -4, 4, unsigned(width) + 3);
            Func pair("pair"), arg("arg");
            Var y("y"), yo("yo"), yi("yi");
            RDom r(0, width, "r");
            RVar ro("ro"), lane("lane");
            Expr v = in(r.x, y);
            pair(y) = Tuple(Expr(-std::numeric_limits<float>::infinity()), Expr(0.0f));
            Expr m = max(pair(y)[0], v);
            pair(y) = Tuple(m, pair(y)[1] * exp(pair(y)[0] - m) + exp(v - m));
            arg(y) = Tuple(Expr(-std::numeric_limits<float>::infinity()), Expr(-1));
            Expr better = v > arg(y)[0];
            arg(y) = Tuple(select(better, v, arg(y)[0]), select(better, r.x, arg(y)[1]));
            Func out("out");
            out(y) = Tuple(pair(y)[0] + log(pair(y)[1]), arg(y)[1]);
            const int threads = mapping == RowMapping::WarpPerRow ? 32 : 256;
            if (mapping == RowMapping::WarpPerRow) {
                out.split(y, yo, yi, 4).gpu_blocks(yo).gpu_threads(yi);
            } else {
                out.gpu_blocks(y);
            }
            for (Func f : {pair, arg}) {
                f.compute_at(out, mapping == RowMapping::WarpPerRow ? yi : y);
                if (mapping == RowMapping::BlockPerRowInRegisters) f.store_in(MemoryType::Register);
                f.update().split(r.x, ro, lane, threads).reorder(ro, lane);
                if (mapping == RowMapping::WarpPerRow) {
                    f.update().gpu_lanes(lane);
                } else {
                    f.update().gpu_threads(lane);
                }
            }
            Realization res = out.realize({kRows}, gpu_target);
            Buffer<float> lse(res[0]);
            Buffer<int32_t> index(res[1]);
            for (int j = 0; j < kRows; j++) {
                double hi = -1e30, s = 0;
                int at = -1;
                for (int i = 0; i < width; i++) {
                    if (in(i, j) > hi) hi = in(i, j), at = i;
                }
                for (int i = 0; i < width; i++)
                    s += std::exp(double(in(i, j)) - hi);
                EXPECT_TRUE(close(lse(j), hi + std::log(s), 1e-5, 1e-5)) << j;
                EXPECT_EQ(index(j), at) << j;
            }
        }
    }
}

// The streaming softmax pair over masked points (-inf: a causal mask, a vocabulary padded
// with -inf): a lane, thread or rfactor partial whose points are all masked starts at the
// identity (m = -inf) and takes -inf, where the update as written computes exp(-inf + inf),
// NaN. Partials take their points through the merge, which keeps a sum whose maximum does
// not move. Against a double-precision logsumexp of the unmasked points; the serial
// schedule (whose first point is never masked here) gives the same.
TEST(GPUCrossThreadReduction, SoftmaxPairOverMaskedPoints) {
    const float inf = std::numeric_limits<float>::infinity();
    const int width = 77, rows = 6;
    Buffer<float> in({width, rows}, "in");
    fill_random(in, -3, 3, 41);
    for (int i = 50; i < width; i++)
        in(i, rows - 1) = -inf; // the padded tail of a vocabulary
    for (int schedule = 0; schedule < 5; schedule++) {
        SCOPED_TRACE("schedule " + std::to_string(schedule));
        Func pair("pair"), out("out");
        Var y("y"), yo("yo"), yi("yi"), u("u");
        RDom r(0, width, "r");
        RVar ro("ro"), lane("lane");
        Expr v = select(r.x <= y * 9, in(r.x, y), -inf);
        pair(y) = Tuple(-inf, Expr(0.0f));
        Expr m = max(pair(y)[0], v);
        pair(y) = Tuple(m, pair(y)[1] * exp(pair(y)[0] - m) + exp(v - m));
        out(y) = pair(y)[0] + log(pair(y)[1]);
        Target target = gpu_target;
        if (schedule == 0) {
            target = Target("host"); // serial, as written
        } else if (schedule == 1 || schedule == 2) {
            // Lanes of a warp per row, threads of a block per row.
            const bool warp = schedule == 1;
            if (warp) {
                out.split(y, yo, yi, 2).gpu_blocks(yo).gpu_threads(yi);
            } else {
                out.gpu_blocks(y);
            }
            pair.compute_at(out, warp ? yi : y);
            pair.update()
                .split(r.x, ro, lane, warp ? 32 : 128, TailStrategy::GuardWithIf)
                .reorder(ro, lane);
            if (warp) {
                pair.update().gpu_lanes(lane);
            } else {
                pair.update().gpu_threads(lane);
            }
        } else {
            // rfactor into partials of 8 points, on the host and on GPU threads.
            pair.update().split(r.x, ro, lane, 8, TailStrategy::GuardWithIf);
            Func partial = pair.update().rfactor(ro, u);
            if (schedule == 3) {
                target = Target("host");
                partial.compute_root();
            } else {
                out.gpu_blocks(y);
                pair.compute_at(out, y);
                partial.compute_at(out, y).gpu_threads(u);
                partial.update().gpu_threads(u);
            }
        }
        Buffer<float> o = out.realize({rows}, target)[0];
        o.copy_to_host();
        for (int j = 0; j < rows; j++) {
            double hi = -inf, s = 0;
            for (int i = 0; i <= std::min(j * 9, width - 1); i++)
                hi = std::max(hi, double(in(i, j)));
            for (int i = 0; i <= std::min(j * 9, width - 1); i++)
                s += std::exp(double(in(i, j)) - hi);
            EXPECT_TRUE(close(o(j), hi + std::log(s), 1e-5, 1e-5)) << j << ": " << o(j);
        }
    }
}

// Flash attention's running output beside the softmax pair: {m, l, acc} with acc * exp(m -
// m') + exp(x - m') * v, reduced over the keys serially, on the lanes of a warp, on a block's
// threads, and in partials of 16 keys (split-K, as flash-decoding does) through rfactor.
// Causal rows, two of them with no key at all (out 0). Against a double-precision softmax.
TEST(GPUCrossThreadReduction, FlashAttentionRunningOutput) {
    const float inf = std::numeric_limits<float>::infinity();
    const int D = 12, S = 9, T = 45, offset = -2;
    Buffer<float> q({D, S}, "q"), k({D, T}, "k"), v({D, T}, "v");
    fill_random(q, -1, 1, 42);
    fill_random(k, -1, 1, 43);
    fill_random(v, -2, 2, 44);
    for (int schedule = 0; schedule < 4; schedule++) {
        SCOPED_TRACE("schedule " + std::to_string(schedule));
        Var d("d"), s("s"), t("t"), u("u");
        RDom rd(0, D, "rd"), rt(0, T, "rt");
        RVar ro("ro"), lane("lane");
        Func score("score"), fa("fa"), out("out");
        score(t, s) = 0.0f;
        score(t, s) += q(rd, s) * k(rd, t);
        Expr x = select(rt <= s + offset, score(rt, s) * (1.0f / std::sqrt(float(D))), -inf);
        fa(d, s) = Tuple(-inf, Expr(0.0f), Expr(0.0f));
        Expr m = max(fa(d, s)[0], x);
        Expr alpha = exp(fa(d, s)[0] - m), p = exp(x - m);
        // (The running output spells m' the other way round: max(x, m) is the same max.)
        Expr p_too = exp(x - max(x, fa(d, s)[0]));
        fa(d, s) = Tuple(m, fa(d, s)[1] * alpha + p, fa(d, s)[2] * alpha + v(d, rt) * p_too);
        out(d, s) = select(fa(d, s)[1] == 0.0f, 0.0f, fa(d, s)[2] / fa(d, s)[1]);
        score.compute_root();
        Target target = gpu_target;
        if (schedule == 0 || schedule == 1) {
            // A warp per output point (lanes over keys), or a block's 64 threads.
            const bool warp = schedule == 0;
            if (warp) {
                out.bound(d, 0, D).gpu_blocks(s).gpu_threads(d);
            } else {
                out.gpu_blocks(d, s);
            }
            fa.compute_at(out, d);
            fa.update()
                .split(rt, ro, lane, warp ? 32 : 64, TailStrategy::GuardWithIf)
                .reorder(ro, lane);
            if (warp) {
                fa.update().gpu_lanes(lane);
            } else {
                fa.update().gpu_threads(lane);
            }
        } else {
            // Partials of 16 keys each, merged after: on the host, and on a block's threads.
            fa.update().split(rt, ro, lane, 16, TailStrategy::GuardWithIf);
            Func partial = fa.update().rfactor(ro, u);
            if (schedule == 2) {
                target = Target("host");
                fa.compute_root();
                partial.compute_root().parallel(s);
            } else {
                out.gpu_blocks(d, s);
                fa.compute_at(out, d);
                partial.compute_at(out, d).gpu_threads(u);
                partial.update().gpu_threads(u);
            }
        }
        Buffer<float> o = out.realize({D, S}, target)[0];
        o.copy_to_host();
        for (int j = 0; j < S; j++) {
            std::vector<double> sc;
            for (int i = 0; i <= j + offset && i < T; i++) {
                double dot = 0;
                for (int c = 0; c < D; c++)
                    dot += double(q(c, j)) * k(c, i);
                sc.push_back(dot / std::sqrt(double(D)));
            }
            double hi = -inf, z = 0;
            for (double e : sc)
                hi = std::max(hi, e);
            for (double e : sc)
                z += std::exp(e - hi);
            for (int c = 0; c < D; c++) {
                double want = 0;
                for (size_t i = 0; i < sc.size(); i++)
                    want += std::exp(sc[i] - hi) / z * v(c, int(i));
                EXPECT_TRUE(close(o(c, j), want, 1e-5, 1e-5))
                    << c << ", " << j << ": " << o(c, j) << " vs " << want;
            }
        }
    }
}

// rfactor and lanes together: each lane sums its 4 consecutive floats of every 128 with one
// 16-byte load, into a vector of partials in registers (r = (ro * 32 + lane) * 4 + v, both
// inner loops preserved); the lanes' partials are then added by shuffles. Rows of 1024 take
// every load whole; rows of 1000 end in a partial vector.
TEST(GPUCrossThreadReduction, RFactorVectorPartialsThenLanes) {
    for (int W : {1024, 1000}) {
        const int H = 6;
        Buffer<float> in({W, H}, "in");
        fill_random(in, -1.0, 2.0, 21);
        Var y("y"), u("u"), v("v"), yo("yo"), yi("yi");
        RDom r(0, W, "r");
        RVar ro("ro"), ri("ri"), rl("rl"), rv("rv");
        Func sum("sum"), out("out");
        sum(y) = 0.0f;
        sum(y) += in(r, y);
        out(y) = sum(y) * 2.0f;
        sum.update().split(r.x, ro, ri, 128).split(ri, rl, rv, 4);
        Func partial = sum.update().rfactor({{rl, u}, {rv, v}});
        out.split(y, yo, yi, 4).gpu_blocks(yo).gpu_threads(yi);
        sum.compute_at(out, yi);
        sum.update().gpu_lanes(RVar("u"));
        partial.compute_at(sum, RVar("u")).store_in(MemoryType::Register).vectorize(v);
        partial.update().vectorize(v);
        Buffer<float> result = out.realize({H}, gpu_target)[0];
        result.copy_to_host();
        for (int j = 0; j < H; j++) {
            double want = 0;
            for (int i = 0; i < W; i++)
                want += 2.0 * double(in(i, j));
            EXPECT_TRUE(close(result(j), want, 1e-5, 1e-4)) << W << ", row " << j;
        }
        if (W == 1024) {
            std::string ptx = out.ptx(Target("host-cuda-sm_80"));
            EXPECT_NE(ptx.find("ld.global.nc.v4.f32"), std::string::npos) << ptx;
            EXPECT_NE(ptx.find("shfl.sync.bfly"), std::string::npos) << ptx;
            EXPECT_EQ(ptx.find("bar.sync"), std::string::npos) << ptx;
        }
    }
}

// The streaming softmax pair of x over the update's domain in red(y), and in out(y) its
// logsumexp, or for a row of no point or only -inf the pair's sum (which stays 0).
void softmax_pair(Func red, Func out, Var y, Expr x) {
    const float inf = std::numeric_limits<float>::infinity();
    red(y) = Tuple(-inf, Expr(0.0f));
    Expr m = max(red(y)[0], x);
    red(y) = Tuple(m, red(y)[1] * exp(red(y)[0] - m) + exp(x - m));
    out(y) = select(red(y)[0] == -inf, red(y)[1], red(y)[0] + log(red(y)[1]));
}

// What softmax_pair's out gives for the first `end` points of row j, in double precision.
double logsumexp_or_empty(const Buffer<float> &in, int j, int end) {
    double hi = -std::numeric_limits<double>::infinity(), sum = 0;
    for (int i = 0; i < end; i++)
        hi = std::max(hi, double(in(i, j)));
    if (std::isinf(hi)) return 0;
    for (int i = 0; i < end; i++)
        sum += std::exp(double(in(i, j)) - hi);
    return hi + std::log(sum);
}

// Each thread reduces a consecutive run of 3 points serially (rfactor), and the merge of the
// runs goes across the threads or lanes of the row: the merge rfactor writes applies the
// update's own merge (a softmax pair, an argmax keeping a label whose ties go to the later
// point), which cross-thread reductions take from the rfactor, not from the merge's text.
// Rows end early (a where()), hold only -inf, or no point at all; the runs of the argmax
// carry whether they had a point, and a thread whose runs had none does not win a tie.
TEST(GPUCrossThreadReduction, RFactorMergeAcrossThreadsAndLanes) {
    const float inf = std::numeric_limits<float>::infinity();
    const int width = 77, rows = 7;
    Buffer<float> in({width, rows}, "in");
    fill_random(in, -3, 3, 57);
    for (int i = 0; i < width; i++)
        in(i, 2) = -inf; // a row of -inf
    for (int i = 40; i < width; i++)
        in(i, 4) = -inf;  // a padded tail
    in(9, 5) = in(30, 5); // a tie in a row that ends at 31
    Buffer<int> to({rows}, "to");
    const int ends[rows] = {77, 76, 20, 0, 77, 31, 5};
    for (int j = 0; j < rows; j++)
        to(j) = ends[j];
    for (bool argmax : {false, true}) {
        for (int mapping = 0; mapping < 3; mapping++) {
            SCOPED_TRACE(std::string(argmax ? "argmax with a label" : "softmax pair") +
                         (mapping == 0   ? ", host"
                          : mapping == 1 ? ", threads"
                                         : ", lanes"));
            Func red("red"), out("out");
            Var y("y"), u("u");
            RDom r(0, width, "r");
            r.where(r.x < to(y));
            RVar run("run"), ri("ri");
            Expr v = in(r.x, y);
            if (argmax) {
                red(y) = Tuple(-inf, Expr(-7));
                red(y) = Tuple(max(red(y)[0], v), select(v < red(y)[0], red(y)[1], r.x % 9 + 100));
                out(y) = cast<float>(red(y)[1]);
            } else {
                softmax_pair(red, out, y, v);
            }
            red.update().split(r.x, run, ri, 3, TailStrategy::GuardWithIf);
            Func runs = red.update().rfactor(run, u);
            Target target = gpu_target;
            if (mapping == 0) {
                target = Target("host");
                runs.compute_root();
            } else {
                out.gpu_blocks(y);
                red.compute_at(out, y);
                if (mapping == 1) {
                    red.update().gpu_threads(RVar("u"));
                } else {
                    red.update().gpu_lanes(RVar("u"));
                }
                runs.compute_at(red, RVar("u")).store_in(MemoryType::Register);
            }
            Buffer<float> o = out.realize({rows}, target)[0];
            o.copy_to_host();
            for (int j = 0; j < rows; j++) {
                if (!argmax) {
                    // (No point, or only -inf: the pair stays empty, {-inf, 0}.)
                    const double want = logsumexp_or_empty(in, j, to(j));
                    EXPECT_TRUE(close(o(j), want, 1e-5, 1e-5)) << j << ": " << o(j);
                    continue;
                }
                float hi = -inf;
                int at = -7;
                for (int i = 0; i < to(j); i++) {
                    if (!(in(i, j) < hi)) at = i % 9 + 100;
                    hi = std::max(hi, in(i, j));
                }
                EXPECT_EQ(o(j), float(at)) << "row " << j;
            }
        }
    }
}

// Split-K over chunks of 64 points, as flash-decoding splits a long row: each chunk's partial
// (the intermediate rfactor makes) on a block of its own, reduced across the lanes of a warp
// (its update's loop, whose values rfactor wrote as steps of the streaming softmax pair, or of
// an argmax that keeps its index), then the chunks merged. On the host, the intermediate's
// update split again by a second rfactor.
TEST(GPUCrossThreadReduction, RFactorIntermediateAcrossLanes) {
    const float inf = std::numeric_limits<float>::infinity();
    const int width = 333, rows = 4;
    Buffer<float> in({width, rows}, "in");
    fill_random(in, -3, 3, 91);
    for (int i = 0; i < width; i++)
        in(i, 1) = -inf; // a row of only -inf
    for (int i = 200; i < width; i++)
        in(i, 2) = -inf;           // a padded tail: whole chunks of -inf
    in(17, 3) = in(300, 3) = 9.0f; // a tie for the argmax, in two chunks
    for (bool argmax : {false, true}) {
        for (bool gpu : {true, false}) {
            SCOPED_TRACE(std::string(argmax ? "argmax" : "softmax pair") + (gpu ? ", GPU" : ""));
            Func red("red"), out("out");
            Var y("y"), u("u"), v("v");
            RDom r(0, width, "r");
            RVar ro("ro"), ri("ri"), rio("rio"), lane("lane"), a("a"), b("b");
            Expr x = in(r.x, y);
            if (argmax) {
                red(y) = Tuple(-inf, Expr(-1));
                red(y) = Tuple(select(x > red(y)[0], x, red(y)[0]),
                               select(x > red(y)[0], r.x, red(y)[1]));
                out(y) = cast<float>(red(y)[1]);
            } else {
                softmax_pair(red, out, y, x);
            }
            red.update().split(r.x, ro, ri, 64, TailStrategy::GuardWithIf);
            Func chunk = red.update().rfactor(ro, u);
            chunk.compute_root();
            if (gpu) {
                chunk.gpu_blocks(u, y);
                chunk.update().split(ri, rio, lane, 32).reorder(rio, lane).gpu_lanes(lane);
                chunk.update().gpu_blocks(u, y);
            } else {
                chunk.update().split(ri, a, b, 8);
                chunk.update().rfactor(b, v).compute_root();
            }
            Buffer<float> o = out.realize({rows}, gpu ? gpu_target : Target("host"))[0];
            o.copy_to_host();
            for (int j = 0; j < rows; j++) {
                if (!argmax) {
                    const double want = logsumexp_or_empty(in, j, width);
                    EXPECT_TRUE(close(o(j), want, 1e-5, 1e-5)) << j << ": " << o(j);
                    continue;
                }
                float hi = -inf;
                int at = -1;
                for (int i = 0; i < width; i++) {
                    if (in(i, j) > hi) at = i;
                    hi = std::max(hi, in(i, j));
                }
                EXPECT_EQ(o(j), float(at)) << "row " << j;
            }
        }
    }
}

// A sum each thread of an 8 x 4 block keeps in its registers, reduced on the lanes of x: each
// row of 8 threads along x is a group of lanes of its own and reduces the same values for
// its own copies, then every thread scales its point of the tile.
TEST(GPUCrossThreadReduction, RegisterResultInBlocksWithRowsAlongY) {
    const int W = 45, B = 5;
    Buffer<float> in({W, B}, "in"), img({8, 4, B}, "img");
    fill_random(in, -1, 1, 61);
    fill_random(img, -2, 2, 62);
    // Rows of 12 threads along x are no group of lanes: refused, with what would do.
    for (int row : {8, 16, 12}) {
        SCOPED_TRACE("rows of " + std::to_string(row));
        Func s("s"), out("out");
        Var x("x"), y("y"), b("b");
        RDom r(0, W, "r");
        RVar ro("ro"), lane("lane");
        s(b) = 0.0f;
        s(b) += in(r, b);
        out(x, y, b) = img(x % 8, y, b) * s(b);
        out.bound(x, 0, row).bound(y, 0, 4).gpu_blocks(b).gpu_threads(x, y);
        s.compute_at(out, b).store_in(MemoryType::Register);
        s.update().split(r.x, ro, lane, row, TailStrategy::GuardWithIf).reorder(ro, lane);
        s.update().gpu_lanes(lane);
        if (row == 12) {
            EXPECT_CONTAINS(message_of<CompileError>([&] {
                                out.realize({12, 4, B}, gpu_target);
                            }),
                            "rows of 12 threads along x are not groups of lanes of their own (a "
                            "power of two up to 32)");
            continue;
        }
        Buffer<float> o = out.realize({row, 4, B}, gpu_target)[0];
        o.copy_to_host();
        for (int k = 0; k < B; k++) {
            double sum = 0;
            for (int i = 0; i < W; i++)
                sum += in(i, k);
            for (int j = 0; j < 4; j++)
                for (int i = 0; i < row; i++)
                    ASSERT_TRUE(close(o(i, j, k), img(i % 8, j, k) * sum, 1e-5, 1e-5))
                        << i << "," << j << "," << k << ": " << o(i, j, k);
        }
    }
}

// The block's width along x set by another stage whose thread loop runs over a region a where()
// narrows (min(y + 31, 39) + 1 points, at most 40, named by a let): a row's sum on 32 lanes,
// kept in every thread's registers, pads the block to whole warps (64) as it does for a
// constant 40; reduced in one copy per block, it is refused. The lanes once saw a block 32 wide
// and shuffled across rows of threads.
TEST(GPUCrossThreadReduction, BlockWidthFromARegionThatAWhereNarrows) {
    const int W = 40, H = 6;
    Buffer<float> in({W, H}, "in");
    fill_random(in, -1, 1, 63);
    for (bool registers : {true, false}) {
        SCOPED_TRACE(registers ? "a copy per thread" : "a copy per block");
        Var x("x"), y("y"), yo("yo"), yi("yi");
        RDom r(0, W, "r");
        RVar ro("ro"), lane("lane");
        r.where(r <= y + 30);
        Func sq("sq"), sum("sum"), out("out");
        sq(x, y) = in(x, y) * in(x, y);
        sum(y) = 0.0f;
        sum(y) += sq(r, y);
        out(y) = sum(y) + 1.0f;
        if (registers) {
            out.split(y, yo, yi, 2).gpu_blocks(yo).gpu_threads(yi);
            sq.compute_at(out, yo).gpu_threads(x, y);
            sum.compute_at(out, yi);
        } else {
            out.gpu_blocks(y);
            sq.compute_at(out, y).gpu_threads(x);
            sum.compute_at(out, y);
        }
        sum.update()
            .split(r.x, ro, lane, 32, TailStrategy::GuardWithIf)
            .reorder(ro, lane)
            .gpu_lanes(lane);
        if (!registers) {
            EXPECT_CONTAINS(message_of<CompileError>([&] { out.realize({H}, gpu_target); }),
                            "need those threads to fill aligned groups of 32 lanes, but the "
                            "kernel's blocks are 40 threads wide in x");
            continue;
        }
        Buffer<float> o = out.realize({H}, gpu_target)[0];
        o.copy_to_host();
        for (int j = 0; j < H; j++) {
            double want = 1;
            for (int i = 0; i < W && i <= j + 30; i++)
                want += double(in(i, j)) * in(i, j);
            ASSERT_TRUE(close(o(j), want, 1e-5, 1e-5)) << j << ": " << o(j) << " vs " << want;
        }
    }
}

// A warp per row inside an intermediate computed at the root (its own kernel, read by the
// output's kernel after it): the rows reduced on lanes inside the intermediate's thread loop,
// which stores each row's value once. Refused before, though the same schedule on the
// output ran.
TEST(GPUCrossThreadReduction, WarpPerRowInsideAnIntermediate) {
    const int C = 100, N = 7;
    Buffer<float> in({C, N}, "in");
    fill_random(in, -1, 1, 71);
    for (bool intermediate : {false, true}) {
        SCOPED_TRACE(intermediate ? "in mid, computed at the root" : "in the output");
        Var n("n"), no("no"), ni("ni");
        RDom r(0, C, "r");
        RVar ro("ro"), lane("lane");
        Func red("red"), mid("mid"), out("out");
        red(n) = 0.0f;
        red(n) += in(r, n);
        mid(n) = red(n) * 2.0f;
        out(n) = mid(n) + 1.0f;
        Func owner = intermediate ? mid : out;
        if (intermediate) {
            mid.compute_root();
            out.gpu_tile(n, no, ni, 32, TailStrategy::GuardWithIf);
        }
        owner.split(n, no, ni, 4, TailStrategy::GuardWithIf).gpu_blocks(no).gpu_threads(ni);
        red.compute_at(owner, ni);
        red.update().split(r, ro, lane, 32).reorder(ro, lane).gpu_lanes(lane);
        Buffer<float> o = out.realize({N}, gpu_target)[0];
        o.copy_to_host();
        for (int j = 0; j < N; j++) {
            double sum = 0;
            for (int i = 0; i < C; i++)
                sum += in(i, j);
            ASSERT_TRUE(close(o(j), 2 * sum + 1, 1e-5, 1e-5)) << j << ": " << o(j);
        }
    }
}

// A where() that reads the Func it reduces ("add while the row's sum is below 50") keeps
// its reduction serial, in each thread: computed inside the threads of its consumer, or at
// the root over threads of its own. The test is bound before the store it guards; fusing the
// thread loops used to move the store's guard above that binding (an InternalError).
TEST(GPUSerialReduction, RunningTestInEachThread) {
    const int W = 20, H = 13;
    Buffer<int> in({W, H}, "in");
    fill_random(in, 0, 20, 71);
    for (int mode = 0; mode < 2; mode++) {
        Var y("y"), yo("yo"), yi("yi");
        Func s("s"), out("out");
        RDom r(0, W, "r");
        s(y) = 0;
        r.where(s(y) < 50);
        s(y) = s(y) + in(r, y);
        out(y) = s(y) * 3;
        out.gpu_tile(y, yo, yi, 8);
        if (mode == 0) {
            s.compute_at(out, yi);
        } else {
            s.compute_root().gpu_tile(y, yo, yi, 8);
            s.update().gpu_tile(y, yo, yi, 8);
        }
        Buffer<int> result = out.realize({H}, gpu_target)[0];
        result.copy_to_host();
        for (int j = 0; j < H; j++) {
            int64_t want = 0;
            for (int i = 0; i < W; i++)
                if (want < 50) want += in(i, j);
            EXPECT_EQ(result(j), 3 * want) << "mode " << mode << ", row " << j;
        }
    }
}

// A bound() of an intermediate gives its pure loops the bound's constant extent, so they can
// run on GPU threads; its scan, up to a Param, is checked against the bound at run time.
TEST(GPUSerialReduction, ScanOfABoundIntermediateOnThreads) {
    const int W = 53, H = 37;
    Buffer<int> in({W + 20, H}, "in");
    fill_random(in, -100, 100, 72);
    Var x("x"), y("y"), yo("yo"), yi("yi");
    Param<int> n("n");
    Func f("f"), out("out");
    RDom r(1, n, "r");
    f(x, y) = in(x, y);
    f(r, y) = f(r - 1, y) + in(r, y);
    out(x, y) = f(x, y);
    out.bound(x, 0, W).split(y, yo, yi, 4).gpu_blocks(yo).gpu_threads(x, yi);
    f.compute_at(out, yo).bound(x, 0, W).gpu_threads(x, y);
    f.update().gpu_threads(y);
    const int last = W - 5;
    n.set(last);
    Buffer<int> result = out.realize({W, H}, gpu_target)[0];
    result.copy_to_host();
    for (int j = 0; j < H; j++) {
        int64_t sum = 0;
        for (int i = 0; i < W; i++) {
            sum = i <= last ? sum + in(i, j) : in(i, j);
            ASSERT_EQ(result(i, j), sum) << i << ", " << j;
        }
    }
    n.set(W);
    EXPECT_CONTAINS(message_of<RuntimeError>([&] {
                        out.realize({W, H}, gpu_target);
                    }),
                    "Func f is bound to [0, 52] in dimension 0, but its update definitions write "
                    "and read [0, 53]");
    // The check reads no block or thread index: it runs on the host before the launch (in
    // the kernel, a failed check traps and leaves a CUDA context unusable).
    EXPECT_EQ(out.ptx(gpu_target).find("trap"), std::string::npos);
    // There it runs only where the kernel would: with no rows there is no block, and nothing
    // to check.
    Buffer<int> no_rows({W, 0}, "no_rows");
    out.realize(no_rows, gpu_target);
    n.set(last);
    out.realize(result, gpu_target);
    result.copy_to_host();
    EXPECT_EQ(result(W - 1, H - 1), in(W - 1, H - 1));
}

} // namespace
