// Stencils and reductions (RDom, inline reductions, Tuples) against Eigen and plain loops.

#include "ErrorMessage.h"
#include "GPUTarget.h"
#include "Reference.h"

#include <Eigen/Dense>

#include <cmath>
#include <random>
#include <vector>

using namespace aicf;
using aicf_test::close;
using aicf_test::fill_random;

TEST(Stencil, TwoStageBlurMatchesLoops) {
    const int W = 45, H = 31;
    // The input is larger than the output by the stencil's reach on each side.
    Buffer<float> in(W + 2, H + 2);
    fill_random(in, -1.0, 1.0, 10);
    in.set_min({-1, -1});
    Var x("x"), y("y");
    Func blur_x("blur_x"), blur_y("blur_y");
    blur_x(x, y) = (in(x - 1, y) + in(x, y) + in(x + 1, y)) / 3.0f;
    blur_y(x, y) = (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3.0f;
    blur_x.compute_root();
    Buffer<float> out = blur_y.realize({W, H});
    for (int j = 0; j < H; j++) {
        for (int i = 0; i < W; i++) {
            double s = 0;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++)
                    s += in(i + dx, j + dy);
            ASSERT_TRUE(close(out(i, j), s / 9.0, 1e-5, 1e-6)) << i << "," << j;
        }
    }
}

TEST(Reduction, MatrixMultiplyMatchesEigen) {
    const int M = 37, N = 29, K = 53;
    Buffer<float> A(K, M), B(N, K); // A is M x K row-major: A(k, m)
    fill_random(A, -1.0, 1.0, 11);
    fill_random(B, -1.0, 1.0, 12);
    Var i("i"), j("j");
    RDom k(0, K, "k");
    Func C("C");
    C(j, i) = 0.0f;
    C(j, i) += A(k, i) * B(j, k);
    Buffer<float> out = C.realize({N, M});

    Eigen::Map<Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> a(A.data(), M,
                                                                                        K);
    Eigen::Map<Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> b(B.data(), K,
                                                                                        N);
    Eigen::MatrixXd ref = a.cast<double>() * b.cast<double>();
    for (int r = 0; r < M; r++)
        for (int c = 0; c < N; c++)
            ASSERT_TRUE(close(out(c, r), ref(r, c), 1e-4, 1e-5)) << r << "," << c;
}

TEST(Reduction, RowWiseLayerNormMatchesLoops) {
    const int D = 67, Rows = 13;
    Buffer<float> in(D, Rows), gamma(D), beta(D);
    fill_random(in, -3.0, 3.0, 13);
    fill_random(gamma, 0.5, 1.5, 14);
    fill_random(beta, -0.5, 0.5, 15);
    Var c("c"), r("r");
    RDom k(0, D, "k");
    Func mean("mean"), var("var"), norm("norm");
    mean(r) = sum(in(k, r)) / float(D);
    Expr centered = in(k, r) - mean(r);
    var(r) = sum(centered * centered) / float(D);
    mean.compute_root();
    var.compute_root();
    norm(c, r) = (in(c, r) - mean(r)) * rsqrt(var(r) + 1e-5f) * gamma(c) + beta(c);
    Buffer<float> out = norm.realize({D, Rows});
    for (int row = 0; row < Rows; row++) {
        const aicf_test::RowMoments r = aicf_test::row_moments(in, row, D);
        const double m = r.mean, v = r.squares / D;
        for (int i = 0; i < D; i++) {
            double ref = (in(i, row) - m) / std::sqrt(v + 1e-5) * gamma(i) + beta(i);
            ASSERT_TRUE(close(out(i, row), ref, 1e-4, 1e-5)) << i << "," << row;
        }
    }
}

TEST(Reduction, RowWiseSoftmaxMatchesLoops) {
    const int D = 50, Rows = 7;
    Buffer<float> in(D, Rows);
    fill_random(in, -8.0, 8.0, 16);
    Var c("c"), r("r");
    RDom k(0, D, "k");
    Func row_max("row_max"), e("e"), denom("denom"), softmax("softmax");
    row_max(r) = maximum(in(k, r));
    e(c, r) = exp(in(c, r) - row_max(r));
    denom(r) = sum(e(k, r));
    softmax(c, r) = e(c, r) / denom(r);
    row_max.compute_root();
    e.compute_root();
    denom.compute_root();
    Buffer<float> out = softmax.realize({D, Rows});
    for (int row = 0; row < Rows; row++) {
        double mx = -1e30, s = 0;
        for (int i = 0; i < D; i++)
            mx = std::max(mx, double(in(i, row)));
        for (int i = 0; i < D; i++)
            s += std::exp(in(i, row) - mx);
        double total = 0;
        for (int i = 0; i < D; i++) {
            double ref = std::exp(in(i, row) - mx) / s;
            total += out(i, row);
            ASSERT_TRUE(close(out(i, row), ref, 1e-5, 1e-7)) << i << "," << row;
        }
        EXPECT_NEAR(total, 1.0, 1e-5);
    }
}

// A where() ordering a signed 8- or 16-bit value read from a buffer: a masked sum (it was an
// internal error, the predicate's narrow type meeting the int32 indices it bounds).
TEST(Reduction, WhereOnNarrowSignedValues) {
    const int N = 45;
    Buffer<int8_t> a({N}, "w8");
    Buffer<int16_t> b({N + 1}, "w16");
    for (int i = 0; i < N; i++) {
        a(i) = int8_t(i * 37);
        b(i) = int16_t(i * 3001);
    }
    b(N) = 7;
    RDom r(0, N, "r");
    r.where(a(r) > 10 && b(r) <= b(r + 1));
    Func s("masked");
    s() = 0;
    s() += cast<int32_t>(a(r)) + cast<int32_t>(b(r));
    Buffer<int32_t> o = s.realize({});
    int want = 0;
    for (int i = 0; i < N; i++)
        if (a(i) > 10 && b(i) <= b(i + 1)) want += a(i) + b(i);
    EXPECT_EQ(o(), want);
}

// A Tuple update whose where() reads an element of the Func itself (a running sum and its
// count, stopping at 40): vectorized, the test is taken once per step, before either element
// is written (the count came out one too low in every row).
TEST(Reduction, TupleUpdateWhereReadsItsOwnElement) {
    const int N = 37, M = 9;
    Buffer<float> in({N, M}, "in");
    fill_random(in, 0, 10, 40);
    for (int vec : {0, 4, 8}) {
        Var y("y");
        Func f("running");
        RDom r(0, N, "r");
        f(y) = Tuple(0.0f, 0);
        r.where(f(y)[0] < 40.0f);
        f(y) = Tuple(f(y)[0] + in(r, y), f(y)[1] + 1);
        if (vec) f.update().vectorize(y, vec);
        Realization out = f.realize({M});
        Buffer<float> sums = out[0];
        Buffer<int> counts = out[1];
        for (int j = 0; j < M; j++) {
            float s = 0;
            int n = 0;
            for (int k = 0; k < N; k++) {
                if (s < 40.0f) {
                    s += in(k, j);
                    n++;
                }
            }
            EXPECT_EQ(sums(j), s) << j << " vector " << vec;
            EXPECT_EQ(counts(j), n) << j << " vector " << vec;
        }
    }
}

// An update runs over its whole RDom, as in Halide, whichever dimensions it names: in(r.x)
// over a 3 x 5 RDom adds each value 5 times; a where() on the dimension the update does not
// name still selects its points. Update and inline forms, against plain loops.
TEST(Reduction, UpdatesRunOverEveryDimensionOfTheirRDom) {
    Buffer<int> in({3}, "in");
    fill_random(in, -50, 50, 5);
    RDom r(0, 3, 0, 5, "r");
    Func s("s"), t("t"), picked("picked");
    s() = 0;
    s() += in(r.x);
    t() = sum(in(r.x));
    RDom q(0, 3, 0, 5, "q");
    q.where(q.y % 2 == 0);
    picked() = 0;
    picked() += in(q.x);
    int total = 0, even_rows = 0;
    for (int y = 0; y < 5; y++) {
        for (int x = 0; x < 3; x++) {
            total += in(x);
            if (y % 2 == 0) even_rows += in(x);
        }
    }
    Buffer<int> got_s = s.realize({}), got_t = t.realize({}), got_picked = picked.realize({});
    EXPECT_EQ(got_s(), total);
    EXPECT_EQ(got_t(), total);
    EXPECT_EQ(got_picked(), even_rows);
    // The dimension it does not name is a loop of the update's schedule.
    Func m("m");
    m() = 0;
    m() += in(r.x);
    m.update().reorder(r.y, r.x);
    Buffer<int> got_m = m.realize({});
    EXPECT_EQ(got_m(), total);
}

TEST(Reduction, ArgmaxTupleReduction) {
    const int D = 41, Rows = 9;
    Buffer<float> in(D, Rows);
    fill_random(in, -5.0, 5.0, 17);
    // A tie: the first occurrence must win.
    in(30, 2) = 100.0f;
    in(35, 2) = 100.0f;
    Var r("r");
    RDom k(0, D, "k");
    Func best("best");
    best(r) = argmax(in(k, r));
    Realization result = best.realize({Rows});
    Buffer<int> index = result[0];
    Buffer<float> value = result[1];
    for (int row = 0; row < Rows; row++) {
        int bi = 0;
        for (int i = 1; i < D; i++)
            if (in(i, row) > in(bi, row)) bi = i;
        EXPECT_EQ(index(row), bi) << row;
        EXPECT_EQ(value(row), in(bi, row)) << row;
    }
    EXPECT_EQ(index(2), 30);
}

// A NaN beats every number (NumPy's and PyTorch's rule): a row with NaNs gives its first NaN and
// that index, a row of NaNs index 0; rows without NaNs their first extreme. Host code and a GPU
// kernel, against a plain loop.
TEST(Reduction, ArgmaxAndArgminTakeTheFirstNaN) {
    const int D = 37, Rows = 6;
    Buffer<float> in(D, Rows);
    fill_random(in, -5.0, 5.0, 23);
    in(11, 1) = NAN;
    in(20, 1) = NAN;
    in(0, 2) = NAN;
    for (int i = 0; i < D; i++)
        in(i, 3) = NAN;
    in(D - 1, 4) = NAN;
    in(3, 5) = 9.0f; // no NaN, and a maximum before the end
    Var r("r"), ro("ro"), ri("ri");
    RDom k(0, D, "k");
    for (bool is_max : {true, false}) {
        for (bool gpu : {false, true}) {
            Func best(is_max ? "best_max" : "best_min");
            best(r) = is_max ? argmax(in(k, r)) : argmin(in(k, r));
            if (gpu) best.gpu_tile(r, ro, ri, 4, TailStrategy::GuardWithIf);
            Realization result =
                gpu ? best.realize({Rows}, Target("host-cuda-sm_80")) : best.realize({Rows});
            Buffer<int> index = result[0];
            Buffer<float> value = result[1];
            for (int row = 0; row < Rows; row++) {
                int want = 0;
                for (int i = 0; i < D; i++) {
                    if (std::isnan(in(i, row))) {
                        want = i;
                        break;
                    }
                    if (is_max ? in(i, row) > in(want, row) : in(i, row) < in(want, row)) want = i;
                }
                EXPECT_EQ(index(row), want) << "row " << row << (is_max ? " argmax" : " argmin")
                                            << (gpu ? " in a kernel" : "");
                if (std::isnan(in(want, row))) {
                    EXPECT_TRUE(std::isnan(value(row))) << "row " << row;
                } else {
                    EXPECT_EQ(value(row), in(want, row)) << "row " << row;
                }
            }
        }
    }
}

// An inline reduction over a named RDom inside an update over another: the update's
// variable is a free variable of the reduction, one dot product (and one argmax) per key.
// Without the RDom named, the two RDoms are refused with a message that names the form.
TEST(Reduction, InlineReductionOverANamedRDomInsideAnUpdate) {
    const int D = 7, T = 13, S = 5;
    Buffer<float> q({D, S}, "q"), k({D, T}, "k");
    fill_random(q, -1, 1, 25);
    fill_random(k, -1, 1, 26);
    Var s("s");
    RDom rd(0, D, "rd"), rt(0, T, "rt");
    Func best("best"), where("where");
    best(s) = -1e30f;
    best(s) = max(best(s), sum(rd, q(rd, s) * k(rd, rt)));
    where(s) = 0;
    where(s) = where(s) + argmax(rd, q(rd, s) * k(rd, rt))[0];
    Buffer<float> b = best.realize({S});
    Buffer<int> w = where.realize({S});
    for (int j = 0; j < S; j++) {
        double hi = -1e30;
        int positions = 0;
        for (int t = 0; t < T; t++) {
            double dot = 0, top = -1e30;
            int at = 0;
            for (int c = 0; c < D; c++) {
                dot += double(q(c, j)) * k(c, t);
                const float term = q(c, j) * k(c, t);
                if (term > top) top = term, at = c;
            }
            hi = std::max(hi, dot);
            positions += at;
        }
        EXPECT_TRUE(close(b(j), hi, 1e-5, 1e-5)) << j << ": " << b(j) << " vs " << hi;
        EXPECT_EQ(w(j), positions) << j;
    }
    Func bad("bad");
    bad(s) = 0.0f;
    std::string msg;
    try {
        bad(s) = bad(s) + sum(q(rd, s) * k(rd, rt));
    } catch (const CompileError &e) {
        msg = e.what();
    }
    EXPECT_NE(msg.find("uses reduction variables of two different RDoms; use one RDom with "
                       "several dimensions, or name the RDom to reduce over, sum(r, e)"),
              std::string::npos)
        << msg;
}

TEST(Reduction, ExplicitTupleUpdateKeepsMaxAndSum) {
    // An online (max, sum of exp) pair, the core of a streaming softmax.
    const int D = 33;
    Buffer<float> in(D);
    fill_random(in, -4.0, 4.0, 18);
    RDom k(0, D, "k");
    Func stats("stats");
    stats() = Tuple(-1e30f, 0.0f);
    Expr m = stats()[0], s = stats()[1];
    Expr new_m = max(m, in(k));
    stats() = Tuple(new_m, s * exp(m - new_m) + exp(in(k)-new_m));
    Realization result = stats.realize(std::vector<int>{});
    Buffer<float> mx = result[0], sm = result[1];
    double ref_m = -1e30, ref_s = 0;
    for (int i = 0; i < D; i++)
        ref_m = std::max(ref_m, double(in(i)));
    for (int i = 0; i < D; i++)
        ref_s += std::exp(in(i)-ref_m);
    EXPECT_EQ(mx(), float(ref_m));
    EXPECT_TRUE(close(sm(), ref_s, 1e-5, 0));
}

TEST(Reduction, HistogramWithDataDependentIndex) {
    const int N = 1000;
    Buffer<uint8_t> in(N);
    fill_random(in, 1, 255, 19);
    RDom r(0, N, "r");
    Func hist("hist");
    Var b("b");
    hist(b) = 0;
    hist(cast<int>(in(r))) += 1;
    Buffer<int> out = hist.realize({256});
    std::vector<int> ref(256, 0);
    for (int i = 0; i < N; i++)
        ref[in(i)]++;
    for (int i = 0; i < 256; i++)
        EXPECT_EQ(out(i), ref[i]) << i;
}

// The top byte of an int32 key, key >> 24, lies in [-128, 127] whatever the key (and of a
// uint32 one in [0, 255], and key >> 31 in [-1, 0]): a histogram of it and a table read by it
// need no clamp.
TEST(Reduction, HistogramOfTheTopByteOfInt32Keys) {
    const int N = 1001;
    Buffer<int32_t> keys(N);
    Buffer<float> table(256);
    std::mt19937 rng(23);
    for (int i = 0; i < N; i++)
        keys(i) = int32_t(rng());
    fill_random(table, -1.0, 1.0, 24);
    RDom r(0, N, "r");
    Func hist("hist"), gather("gather");
    Var b("b"), x("x");
    hist(b) = 0;
    hist((keys(r) >> 24) + 128) += 1;
    gather(x) = table((keys(x) >> 24) + 128) * 2.0f +
                table(cast<int>(cast<uint32_t>(keys(x)) >> 24)) + table((keys(x) >> 31) + 1);
    Buffer<int> out = hist.realize({256});
    Buffer<float> g = gather.realize({N});
    std::vector<int> ref(256, 0);
    for (int i = 0; i < N; i++) {
        ref[(keys(i) >> 24) + 128]++;
        const float want = table((keys(i) >> 24) + 128) * 2.0f +
                           table(int(uint32_t(keys(i)) >> 24)) + table((keys(i) >> 31) + 1);
        EXPECT_EQ(g(i), want) << i;
    }
    for (int i = 0; i < 256; i++)
        EXPECT_EQ(out(i), ref[i]) << i;
}

TEST(Reduction, WhereRestrictsTheDomain) {
    const int N = 20;
    Buffer<int> in(N);
    fill_random(in, 1, 100, 20);
    Var x("x");
    RDom r(0, N, "r");
    r.where(r.x <= x);
    Func prefix("prefix");
    prefix(x) = 0;
    prefix(x) += in(r);
    Buffer<int> out = prefix.realize({N});
    int acc = 0;
    for (int i = 0; i < N; i++) {
        acc += in(i);
        EXPECT_EQ(out(i), acc) << i;
    }
}

// A where() on a pure variable (rows whose sum counts, rows picked by parity) computed per
// point of its consumer: the region stays that point, where the guard fails too, so the Func
// fits on the stack of a CPU row loop and in a GPU thread's registers. (The region was the
// point and the guard's last row, growing with the row: the pure definition ran over every
// row before, and a Func of a constant size was refused.)
TEST(Reduction, WhereOnAPureVariableKeepsAPointsRegion) {
    const int W = 13, H = 23;
    Buffer<float> in({W, H}, "in");
    fill_random(in, -1.0, 1.0, 31);
    for (int guard = 0; guard < 2; guard++) {
        for (bool gpu : {false, true}) {
            Var x("x"), y("y"), yo("yo"), yi("yi"), bx("bx"), by("by"), tx("tx"), ty("ty");
            RDom r(0, W, "r");
            r.where(guard == 0 ? y < 7 : y % 3 == 1);
            Func sum("sum"), out("out");
            sum(y) = 0.5f;
            sum(y) += in(r, y) * in(r, y);
            out(x, y) = sum(y) - in(x, y);
            Target target;
            if (gpu) {
                target = aicf_test::gpu_test_target();
                out.gpu_tile(x, y, bx, by, tx, ty, 8, 4);
                sum.compute_at(out, tx).store_in(MemoryType::Register);
            } else {
                out.split(y, yo, yi, 4);
                sum.compute_at(out, yi).store_in(MemoryType::Stack);
                const std::string stmt = out.lowered_stmt();
                EXPECT_NE(stmt.find("allocate sum[float32 * 1]"), std::string::npos) << stmt;
            }
            Buffer<float> got = out.realize({W, H}, target);
            for (int j = 0; j < H; j++) {
                double acc = 0.5;
                if (guard == 0 ? j < 7 : j % 3 == 1)
                    for (int i = 0; i < W; i++)
                        acc += double(in(i, j)) * in(i, j);
                for (int i = 0; i < W; i++)
                    ASSERT_TRUE(close(got(i, j), acc - in(i, j), 1e-5, 1e-5))
                        << guard << gpu << ": out(" << i << ", " << j << ") = " << got(i, j);
            }
        }
    }
}

// Updates whose reduction variable picks the point each iteration writes (f(r) = f(r) + ...,
// f(2r + 1) = ..., f(r.x, r.y) = ...) have iterations that touch disjoint points: their
// loops run in parallel, as vector lanes (with a where() predicate and a tail the width does
// not divide) or on GPU blocks, and give what a plain loop gives.
TEST(Reduction, UpdatesWritingOnePointPerIterationRunInParallelAndInLanes) {
    const int N = 29, H = 6;
    Buffer<int> in({N, H}, "in");
    fill_random(in, -50, 50, 21);
    Var x("x"), y("y");
    for (int how = 0; how < 4; how++) {
        RDom r(0, N, "r"), r2(0, N, 0, H, "r2");
        Func f("f"), g("g"), h("h");
        f(x) = x;
        f(r) = f(r) + in(r, 1) * 2;
        g(x) = -1;
        g(2 * r + 1) = in(r, 2) * 3;
        r2.where(in(r2.x, r2.y) > 0);
        h(x, y) = 7;
        h(r2.x, r2.y) = h(r2.x, r2.y) + in(r2.x, r2.y);
        Target target;
        if (how == 0) {
            f.update().parallel(r);
            g.update().parallel(r, 4);
            h.update().parallel(r2.y).parallel(r2.x);
        } else if (how == 1) {
            f.update().vectorize(r, 8);
            g.update().vectorize(r, 4);
            h.update().vectorize(r2.x, 8).parallel(r2.y);
        } else if (how == 2) {
            RVar ro("ro"), ri("ri");
            h.update().split(r2.x, ro, ri, 5).parallel(ro).vectorize(ri);
            f.update().split(r, ro, ri, 3).parallel(ro).unroll(ri);
        } else {
            target = Target("host-cuda-sm_80");
            RVar ro("ro"), ri("ri");
            f.update().gpu_blocks(r);
            g.update().split(r, ro, ri, 8).gpu_blocks(ro);
            h.update().gpu_blocks(r2.x, r2.y);
        }
        Buffer<int> got_f = f.realize({N}, target)[0], got_g = g.realize({2 * N + 1}, target)[0],
                    got_h = h.realize({N, H}, target)[0];
        for (int i = 0; i < N; i++) {
            EXPECT_EQ(got_f(i), i + in(i, 1) * 2) << how << ", f(" << i << ")";
            EXPECT_EQ(got_g(2 * i), -1) << how << ", g(" << 2 * i << ")";
            EXPECT_EQ(got_g(2 * i + 1), in(i, 2) * 3) << how << ", g(" << 2 * i + 1 << ")";
            for (int j = 0; j < H; j++)
                EXPECT_EQ(got_h(i, j), 7 + (in(i, j) > 0 ? in(i, j) : 0))
                    << how << ", h(" << i << ", " << j << ")";
        }
    }
}

// A scan along r.x in rows r.y reads f(r.x - 1, r.y), a point of its own row: the rows own
// their points, so r.y runs in parallel, in lanes, inside r.x or on GPU blocks and threads
// (each was refused, as a race or as a reordered reduction). A scan that reads the row before
// it still races over rows.
TEST(Reduction, RowsOfAScanOverATwoDimensionalRDomRunInParallel) {
    const int W = 37, H = 11;
    Buffer<float> in({W, H}, "in");
    fill_random(in, -1.0f, 1.0f, 23);
    Var x("x"), y("y");
    for (int how = 0; how < 5; how++) {
        RDom r(1, W - 1, 0, H, "r");
        Func f("f");
        f(x, y) = in(x, y);
        f(r.x, r.y) = f(r.x - 1, r.y) * 0.5f + in(r.x, r.y);
        Target target;
        RVar yo("yo"), yi("yi");
        if (how == 0) {
            f.update().parallel(r.y);
        } else if (how == 1) {
            f.update().vectorize(r.y, 4);
        } else if (how == 2) {
            f.update().split(r.y, yo, yi, 4).parallel(yo).vectorize(yi);
        } else if (how == 3) {
            // The rows inside the scan's loop: each row still meets r.x in its order.
            f.update().reorder(r.y, r.x).vectorize(r.y, 4);
        } else {
            target = aicf_test::gpu_test_target();
            f.update().split(r.y, yo, yi, 4).gpu_blocks(yo).gpu_threads(yi);
        }
        Buffer<float> got = f.realize({W, H}, target)[0];
        for (int j = 0; j < H; j++) {
            double acc = in(0, j);
            EXPECT_EQ(got(0, j), in(0, j));
            for (int i = 1; i < W; i++) {
                acc = acc * 0.5 + in(i, j);
                ASSERT_TRUE(aicf_test::close(got(i, j), acc, 1e-5, 1e-6))
                    << how << ": f(" << i << ", " << j << ") = " << got(i, j) << ", not " << acc;
            }
        }
    }
    // The where() predicate may read the row too: a running sum that restarts once past 5.
    Buffer<int> steps({W, H}, "steps");
    fill_random(steps, -3, 4, 29);
    RDom rw(1, W - 1, 0, H, "rw");
    Func capped("capped");
    capped(x, y) = steps(x, y);
    rw.where(capped(rw.x - 1, rw.y) <= 5);
    capped(rw.x, rw.y) = capped(rw.x - 1, rw.y) + steps(rw.x, rw.y);
    capped.update().parallel(rw.y);
    Buffer<int> got = capped.realize({W, H});
    for (int j = 0; j < H; j++) {
        int prev = steps(0, j);
        for (int i = 1; i < W; i++) {
            prev = prev <= 5 ? prev + steps(i, j) : steps(i, j);
            ASSERT_EQ(got(i, j), prev) << i << ", " << j;
        }
    }
    RDom r(0, W, 1, H - 1, "r");
    Func down("down");
    down(x, y) = in(x, y);
    down(r.x, r.y) = down(r.x, r.y - 1) + in(r.x, r.y);
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>([&] { down.update().parallel(r.y); }),
                    "could race");
}

// A Func of no dimensions realizes with empty braces, with or without a target, as a Func or
// a Pipeline: {} names the sizes, not an empty Realization.
TEST(Reduction, ZeroDimensionalResultsRealizeWithEmptyBraces) {
    const int N = 37;
    Buffer<int> in({N}, "in");
    fill_random(in, -20, 20, 22);
    int want = 0;
    for (int i = 0; i < N; i++)
        want += in(i)*in(i);
    RDom r(0, N, "r");
    Func total("total");
    total() = 0;
    total() += in(r)*in(r);
    Buffer<int> a = total.realize({}), b = total.realize({}, Target("host"));
    Buffer<int> c = Pipeline(total).realize({});
    EXPECT_EQ(a(), want);
    EXPECT_EQ(b(), want);
    EXPECT_EQ(c(), want);
}
