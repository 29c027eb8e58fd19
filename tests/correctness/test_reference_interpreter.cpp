// The reference interpreter (tests/common/Interpreter.h) is what the property tests trust, so
// it is checked here against loops written by hand, and shown to notice a wrong value.

#include "Interpreter.h"
#include "Reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

using namespace aicf;
using aicf_test::fill_random;
using aicf_test::Interpreter;

TEST(ReferenceInterpreter, MatrixProductMatchesADoubleLoop) {
    const int M = 7, N = 9, K = 13;
    Buffer<float> A({K, M}, "A"), B({N, K}, "B");
    fill_random(A, -1, 1, 1);
    fill_random(B, -1, 1, 2);
    Var i("i"), j("j");
    RDom k(0, K, "k");
    Func C("C");
    C(j, i) = 0.5f;
    C(j, i) += A(k, i) * B(j, k);
    Buffer<float> got(Interpreter().realize(C, {N, M})[0]);
    for (int y = 0; y < M; y++) {
        for (int x = 0; x < N; x++) {
            double want = 0.5;
            for (int r = 0; r < K; r++)
                want += double(A(r, y)) * double(B(x, r));
            EXPECT_NEAR(got(x, y), want, 1e-5) << "at (" << x << ", " << y << ")";
        }
    }
}

TEST(ReferenceInterpreter, ScatteredUpdatesWherePredicatesAndParams) {
    const int W = 23, Bins = 5;
    Buffer<int> in({W}, "in");
    for (int x = 0; x < W; x++)
        in(x) = (x * 37) % 11 - 3;
    Param<int> offset("offset");
    offset.set(2);
    Var x("x");
    RDom r(0, W, "r");
    r.where(in(r) != 0);
    Func hist("hist");
    hist(x) = offset;
    hist(clamp(in(r) % Bins, 0, Bins - 1)) += 1;
    Buffer<int> got(Interpreter().realize(hist, {Bins})[0]);
    int want[Bins] = {2, 2, 2, 2, 2};
    for (int v = 0; v < W; v++)
        if (in(v) != 0) want[((in(v) % Bins) + Bins) % Bins]++; // Euclidean
    for (int b = 0; b < Bins; b++)
        EXPECT_EQ(got(b), want[b]) << "bin " << b;
}

TEST(ReferenceInterpreter, TupleReductionsKeepTheFirstMaximum) {
    Buffer<float> in({6}, "in");
    const float values[] = {1, 4, -2, 4, 3, 0};
    for (int x = 0; x < 6; x++)
        in(x) = values[x];
    Var x("x");
    RDom r(0, 6, "r");
    Func best("best");
    best(x) = argmax(in(r) + cast<float>(x), "best_of");
    std::vector<Buffer<>> got = Interpreter().realize(best, {2});
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(Buffer<int>(got[0])(0), 1);
    EXPECT_EQ(Buffer<float>(got[1])(1), 5.0f);
}

TEST(ReferenceInterpreter, ComparisonFindsAWrongValue) {
    Var x("x"), y("y");
    Func f("f");
    f(x, y) = cast<float>(x) * 0.25f + cast<float>(y);
    std::vector<Buffer<>> want = Interpreter().realize(f, {5, 4});
    Buffer<float> got = f.realize({5, 4});
    EXPECT_EQ(aicf_test::compare_with_reference({Buffer<>(got)}, want, 0, 0), "");
    got(3, 2) += 1e-3f;
    std::string problem = aicf_test::compare_with_reference({Buffer<>(got)}, want, 1e-5, 1e-6);
    EXPECT_NE(problem.find("at (3, 2)"), std::string::npos) << problem;
    EXPECT_NE(problem.find("1 of 20 values differ"), std::string::npos) << problem;
}

TEST(ReferenceInterpreter, SignedOverflowIsUndefinedAndNarrowIntegersWrap) {
    Interpreter interp;
    Expr big(int32_t(2000000000));
    Var x("x");
    aicf_test::Value v = interp.evaluate(Expr(x) + big, {{"x", aicf_test::make_int(Int(32), 2e9)}});
    EXPECT_FALSE(v.defined);
    aicf_test::Value w = interp.evaluate(cast<int8_t>(x) * cast<int8_t>(x),
                                         {{"x", aicf_test::make_int(Int(32), 100)}});
    EXPECT_TRUE(w.defined);
    EXPECT_EQ(w.as_int(), int8_t(100 * 100 % 256));
    aicf_test::Value q =
        interp.evaluate(Expr(x) / -3 + Expr(x) % 0, {{"x", aicf_test::make_int(Int(32), -7)}});
    EXPECT_EQ(q.as_int(), 3); // Euclidean: -7 == -3 * 3 + 2; x % 0 == 0
}

TEST(ReferenceInterpreter, ScansReadWhatEarlierPointsLeft) {
    Var x("x");
    RDom r(1, 9, "r");
    Func scan("scan");
    scan(x) = x;
    scan(r) = scan(r - 1) + scan(r);
    Buffer<int> sums(Interpreter().realize(scan, {10})[0]);
    for (int i = 0; i < 10; i++)
        EXPECT_EQ(sums(i), i * (i + 1) / 2) << "at " << i;
    // Mirroring in place: the second half reads values the first half already overwrote.
    RDom all(0, 10, "all");
    Func mirror("mirror");
    mirror(x) = x;
    mirror(all) = mirror(9 - all);
    Buffer<int> m(Interpreter().realize(mirror, {10})[0]);
    const int want[] = {9, 8, 7, 6, 5, 5, 6, 7, 8, 9};
    for (int i = 0; i < 10; i++)
        EXPECT_EQ(m(i), want[i]) << "at " << i;
    EXPECT_EQ(Buffer<int>(mirror.realize({10}))(7), 7); // and AICF agrees
}
