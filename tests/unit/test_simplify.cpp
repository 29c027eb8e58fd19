#include "dsl/ir/Simplify.h"

#include "dsl/ir/Bounds.h"
#include "dsl/ir/IREquality.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Substitute.h"
#include "random_expr.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>

using namespace aicf::ir;

namespace {

Expr var(const std::string &name, Type t = Int(32)) {
    return Variable::make(t, name);
}

Scope<Interval> ranges(const std::vector<std::tuple<std::string, int, int>> &vars) {
    Scope<Interval> s;
    for (const auto &[name, lo, hi] : vars)
        s.push(name, Interval(Expr(lo), Expr(hi)));
    return s;
}

::testing::AssertionResult simplifies_to(const Expr &in, const Expr &expected,
                                         const Scope<Interval> &bounds = Scope<Interval>()) {
    Expr result = simplify(in, bounds);
    if (equal(result, expected)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "simplify(" << in << ")\n  gave     " << result << "\n  expected " << expected;
}

::testing::AssertionResult stmt_simplifies_to(const Stmt &in, const Stmt &expected) {
    Stmt result = simplify(in);
    if (equal(result, expected)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "simplify of\n"
                                         << in << "gave\n"
                                         << result << "expected\n"
                                         << expected;
}

// A range of test points: first, last, step.
struct GridAxis {
    int first, last, step;
};

// Each of `forms` and its simplified form agree at every point (x, y) of the grid, with z = 7.
void expect_same_on_grid(const std::vector<Expr> &forms, GridAxis xs, GridAxis ys) {
    for (const Expr &f : forms) {
        Expr g = simplify(f);
        for (int xv = xs.first; xv <= xs.last; xv += xs.step)
            for (int yv = ys.first; yv <= ys.last; yv += ys.step) {
                std::map<std::string, Expr> at = {{"x", Expr(xv)}, {"y", Expr(yv)}, {"z", Expr(7)}};
                EXPECT_TRUE(equal(simplify(substitute(at, f)), simplify(substitute(at, g))))
                    << f << " -> " << g << " at x = " << xv << ", y = " << yv;
            }
    }
}

class SimplifyTest : public ::testing::Test {
protected:
    Expr x = var("x"), y = var("y"), z = var("z"), a = var("a"), b = var("b");
    Expr fx = var("fx", Float(32)), fy = var("fy", Float(32));
    Expr u8 = var("u8", UInt(8)), c = var("c", Bool()), d = var("d", Bool());
};

// ---------------------------------------------------------------------------------------------
// Constant folding

TEST_F(SimplifyTest, FoldsIntegerArithmetic) {
    EXPECT_TRUE(simplifies_to(Add::make(3, 4), Expr(7)));
    EXPECT_TRUE(simplifies_to(Sub::make(7, 10), Expr(-3)));
    EXPECT_TRUE(simplifies_to(Mul::make(6, -7), Expr(-42)));
    EXPECT_TRUE(simplifies_to(Min::make(6, -7), Expr(-7)));
    EXPECT_TRUE(simplifies_to(Max::make(6, -7), Expr(6)));
}

TEST_F(SimplifyTest, FoldsEuclideanDivisionAndModulo) {
    EXPECT_TRUE(simplifies_to(Div::make(-7, 2), Expr(-4)));
    EXPECT_TRUE(simplifies_to(Mod::make(-7, 2), Expr(1)));
    EXPECT_TRUE(simplifies_to(Div::make(7, -2), Expr(-3)));
    EXPECT_TRUE(simplifies_to(Mod::make(7, -2), Expr(1)));
    EXPECT_TRUE(simplifies_to(Div::make(-7, -2), Expr(4)));
    EXPECT_TRUE(simplifies_to(Mod::make(-7, -2), Expr(1)));
    EXPECT_TRUE(simplifies_to(Div::make(5, 0), Expr(0)));
    EXPECT_TRUE(simplifies_to(Mod::make(5, 0), Expr(0)));
    EXPECT_TRUE(simplifies_to(Div::make(x, 0), Expr(0)));
    EXPECT_TRUE(simplifies_to(Mod::make(x, 0), Expr(0)));
}

TEST_F(SimplifyTest, FoldingWrapsToTheTypeWidth) {
    EXPECT_TRUE(simplifies_to(Add::make(Expr(INT32_MAX), 1), Expr(INT32_MIN)));
    EXPECT_TRUE(simplifies_to(Add::make(Expr(uint8_t(250)), Expr(uint8_t(10))), Expr(uint8_t(4))));
    EXPECT_TRUE(simplifies_to(Add::make(Expr(int8_t(100)), Expr(int8_t(100))), Expr(int8_t(-56))));
    EXPECT_TRUE(simplifies_to(Sub::make(Expr(uint32_t(0)), Expr(uint32_t(1))),
                              Expr(uint32_t(4294967295u))));
    // Unsigned division and comparison use the unsigned values.
    EXPECT_TRUE(simplifies_to(Div::make(Expr(uint32_t(4294967295u)), Expr(uint32_t(2))),
                              Expr(uint32_t(2147483647u))));
    EXPECT_TRUE(
        simplifies_to(LT::make(Expr(uint32_t(1)), Expr(uint32_t(4294967295u))), const_true()));
    EXPECT_TRUE(simplifies_to(Min::make(Expr(uint64_t(1)), Expr(UINT64_MAX)), Expr(uint64_t(1))));
}

TEST_F(SimplifyTest, FoldsFloatsInTheirOwnPrecision) {
    EXPECT_TRUE(simplifies_to(Add::make(Expr(0.1f), Expr(0.2f)), Expr(0.1f + 0.2f)));
    EXPECT_TRUE(simplifies_to(Mul::make(Expr(1.0 / 3), Expr(3.0)), Expr((1.0 / 3) * 3.0)));
    EXPECT_TRUE(simplifies_to(Div::make(Expr(1.0f), Expr(3.0f)), Expr(1.0f / 3.0f)));
    Expr inf = simplify(Div::make(Expr(1.0f), Expr(0.0f)));
    ASSERT_TRUE(as_const_float(inf).has_value());
    EXPECT_TRUE(std::isinf(*as_const_float(inf)));
    EXPECT_TRUE(simplifies_to(Mod::make(Expr(5.5f), Expr(2.0f)), Expr(1.5f)));
    EXPECT_TRUE(simplifies_to(Mod::make(Expr(-1.0), Expr(3.0)), Expr(2.0)));
    // float16: 1 + 2^-12 rounds back to 1.
    Expr h1 = make_const(Float(16), 1.0), tiny = make_const(Float(16), 1.0 / 4096);
    EXPECT_TRUE(simplifies_to(Add::make(h1, tiny), h1));
    EXPECT_TRUE(simplifies_to(Min::make(Expr(2.0f), Expr(-1.0f)), Expr(-1.0f)));
}

TEST_F(SimplifyTest, FoldsComparisonsAndLogic) {
    EXPECT_TRUE(simplifies_to(LT::make(3, 4), const_true()));
    EXPECT_TRUE(simplifies_to(GE::make(3, 4), const_false()));
    EXPECT_TRUE(simplifies_to(NE::make(3, 4), const_true()));
    Expr nan = Expr(std::numeric_limits<float>::quiet_NaN());
    EXPECT_TRUE(simplifies_to(LT::make(nan, Expr(1.0f)), const_false()));
    EXPECT_TRUE(simplifies_to(EQ::make(nan, nan), const_false()));
    EXPECT_TRUE(simplifies_to(NE::make(nan, nan), const_true()));
    EXPECT_TRUE(simplifies_to(And::make(const_true(), const_false()), const_false()));
    EXPECT_TRUE(simplifies_to(Or::make(const_true(), const_false()), const_true()));
    EXPECT_TRUE(simplifies_to(Not::make(const_false()), const_true()));
    EXPECT_TRUE(simplifies_to(Select::make(LT::make(1, 2), Expr(10), Expr(20)), Expr(10)));
}

TEST_F(SimplifyTest, FoldsCasts) {
    EXPECT_TRUE(simplifies_to(Cast::make(UInt(8), 300), Expr(uint8_t(44))));
    EXPECT_TRUE(simplifies_to(Cast::make(Int(32), Expr(3.7f)), Expr(3)));
    EXPECT_TRUE(simplifies_to(Cast::make(Int(32), Expr(-3.7f)), Expr(-3)));
    EXPECT_TRUE(simplifies_to(Cast::make(Float(32), 5), Expr(5.0f)));
    EXPECT_TRUE(simplifies_to(Cast::make(Int(32), Expr(uint8_t(200))), Expr(200)));
    EXPECT_TRUE(simplifies_to(Cast::make(Int(32, 4), Broadcast::make(Expr(2.5f), 4)),
                              Broadcast::make(Expr(2), 4)));
    // Float to int saturates at the type's limits and takes NaN to 0, as generated code does
    // (integer narrowing still wraps, above).
    EXPECT_TRUE(simplifies_to(Cast::make(Int(8), Expr(300.0f)), Expr(int8_t(127))));
    EXPECT_TRUE(simplifies_to(Cast::make(Int(8), Expr(-300.0f)), Expr(int8_t(-128))));
    EXPECT_TRUE(simplifies_to(Cast::make(UInt(8), Expr(-3.0f)), Expr(uint8_t(0))));
    EXPECT_TRUE(simplifies_to(Cast::make(UInt(16), Expr(1e9f)), Expr(uint16_t(65535))));
    EXPECT_TRUE(simplifies_to(Cast::make(Int(32), Expr(3e10)), Expr(2147483647)));
    EXPECT_TRUE(simplifies_to(Cast::make(Int(32), Expr(std::nanf(""))), Expr(0)));
    EXPECT_TRUE(simplifies_to(Cast::make(UInt(64), Expr(-1.0)), make_const(UInt(64), int64_t(0))));
}

TEST_F(SimplifyTest, DropsOnlyCastsThatChangeNothing) {
    // Through a wider integer, or an integer through a float that holds it exactly into a
    // float: the inner cast goes.
    EXPECT_TRUE(simplifies_to(Cast::make(Int(8), Cast::make(Int(64), x)), Cast::make(Int(8), x)));
    EXPECT_TRUE(
        simplifies_to(Cast::make(Float(32), Cast::make(Float(64), x)), Cast::make(Float(32), x)));
    // An integer through a float into a narrower integer saturates; without the float it would
    // wrap: uint16(float64(-5)) is 0, uint16(-5) is 65531.
    Expr through_float = Cast::make(UInt(16), Cast::make(Float(64), x));
    EXPECT_TRUE(simplifies_to(through_float, through_float));
    EXPECT_TRUE(simplifies_to(substitute({{"x", Expr(-5)}}, through_float), Expr(uint16_t(0))));
    // Into an integer type that holds every value of the source, nothing saturates.
    EXPECT_TRUE(
        simplifies_to(Cast::make(Int(64), Cast::make(Float(64), x)), Cast::make(Int(64), x)));
}

TEST_F(SimplifyTest, FoldsVectorConstants) {
    Expr three = Broadcast::make(3, 4), four = Broadcast::make(4, 4);
    EXPECT_TRUE(simplifies_to(Add::make(three, four), Broadcast::make(7, 4)));
    EXPECT_TRUE(simplifies_to(LT::make(three, four), const_true(4)));
    EXPECT_TRUE(simplifies_to(Mod::make(Broadcast::make(-7, 4), Broadcast::make(3, 4)),
                              Broadcast::make(2, 4)));
}

TEST_F(SimplifyTest, FoldsPureIntrinsics) {
    auto call = [](Type t, Intrinsic op, std::vector<Expr> args) {
        return Call::make(t, op, args);
    };
    EXPECT_TRUE(simplifies_to(call(Int(32), Intrinsic::abs, {-5}), Expr(5)));
    EXPECT_TRUE(simplifies_to(call(Int(32), Intrinsic::bitwise_and, {12, 10}), Expr(8)));
    EXPECT_TRUE(simplifies_to(call(Int(32), Intrinsic::bitwise_or, {12, 10}), Expr(14)));
    EXPECT_TRUE(simplifies_to(call(Int(32), Intrinsic::bitwise_xor, {12, 10}), Expr(6)));
    EXPECT_TRUE(simplifies_to(call(Int(32), Intrinsic::shift_left, {1, 4}), Expr(16)));
    EXPECT_TRUE(simplifies_to(call(Int(32), Intrinsic::shift_right, {-16, 2}), Expr(-4)));
    EXPECT_TRUE(simplifies_to(call(Float(32), Intrinsic::floor, {Expr(2.5f)}), Expr(2.0f)));
    EXPECT_TRUE(simplifies_to(call(Float(64), Intrinsic::sqrt, {Expr(4.0)}), Expr(2.0)));
    EXPECT_TRUE(simplifies_to(call(Bool(), Intrinsic::is_nan, {Expr(1.0f)}), const_false()));
    // Transcendental functions are left to the target's implementation.
    Expr e = call(Float(32), Intrinsic::exp, {Expr(1.0f)});
    EXPECT_TRUE(simplifies_to(e, e));
    // abs of something known non-negative is the thing itself.
    EXPECT_TRUE(simplifies_to(call(Int(32), Intrinsic::abs, {Mod::make(x, 5)}), Mod::make(x, 5)));
}

// ---------------------------------------------------------------------------------------------
// Canonical sums

TEST_F(SimplifyTest, CancelsAndCombinesTerms) {
    EXPECT_TRUE(simplifies_to(Sub::make(Add::make(x, 3), Add::make(x, 1)), Expr(2)));
    Expr a4 = Mul::make(a, 4);
    EXPECT_TRUE(simplifies_to(Sub::make(Add::make(a4, b), Add::make(b, a4)), Expr(0)));
    EXPECT_TRUE(simplifies_to(Add::make(Mul::make(x, 2), x), Mul::make(x, 3)));
    EXPECT_TRUE(simplifies_to(Sub::make(Add::make(x, y), y), x));
    EXPECT_TRUE(simplifies_to(Sub::make(Mul::make(x, y), Mul::make(y, x)), Expr(0)));
    EXPECT_TRUE(simplifies_to(Mul::make(Add::make(x, 1), 4), Add::make(Mul::make(x, 4), 4)));
    EXPECT_TRUE(simplifies_to(Mul::make(Mul::make(x, 3), 0), Expr(0)));
    EXPECT_TRUE(simplifies_to(Sub::make(x, x), Expr(0)));
}

TEST_F(SimplifyTest, RebuildsSumsReadably) {
    // Positive terms first, in name order, then subtracted terms, then the constant.
    Expr e = Add::make(Add::make(3, Sub::make(y, z)), x);
    EXPECT_EQ(to_string(simplify(e)), "(((x + y) - z) + 3)");
    EXPECT_EQ(to_string(simplify(Sub::make(3, x))), "(3 - x)");
    EXPECT_EQ(to_string(simplify(Mul::make(x, -1))), "(0 - x)");
    EXPECT_EQ(to_string(simplify(Add::make(Mul::make(y, 4), Sub::make(x, 5)))),
              "((x + (y * 4)) - 5)");
    EXPECT_EQ(to_string(simplify(Mul::make(y, x))), "(x * y)");
}

TEST_F(SimplifyTest, KeepsFloatArithmeticInOrder) {
    Expr e = Sub::make(Add::make(fx, Expr(1.0f)), Expr(1.0f));
    EXPECT_TRUE(simplifies_to(e, e));
    Expr f = Sub::make(Add::make(fx, fy), fy);
    EXPECT_TRUE(simplifies_to(f, f));
    EXPECT_TRUE(simplifies_to(Mul::make(fx, Expr(1.0f)), fx));
    // x + 0.0 is +0.0 at x = -0.0; x + (-0.0) and x - 0.0 are x everywhere.
    EXPECT_TRUE(simplifies_to(Add::make(Expr(0.0f), fx), Add::make(fx, Expr(0.0f))));
    EXPECT_TRUE(simplifies_to(Add::make(Expr(-0.0f), fx), fx));
    EXPECT_TRUE(simplifies_to(Sub::make(fx, Expr(0.0f)), fx));
    EXPECT_TRUE(simplifies_to(Sub::make(fx, Expr(-0.0f)), Sub::make(fx, Expr(-0.0f))));
    // x * 0 is not 0 for NaN or infinity.
    Expr g = Mul::make(fx, Expr(0.0f));
    EXPECT_TRUE(simplifies_to(g, g));
    // Constants move to the right (addition is commutative even in IEEE).
    EXPECT_TRUE(simplifies_to(Add::make(Expr(2.0f), fx), Add::make(fx, Expr(2.0f))));
    // min(a, b) is a < b ? a : b and max(a, b) is a > b ? a : b: b when they compare equal,
    // so folding tells -0.0 from +0.0 as generated code does; and min and max of floats do
    // not commute (a NaN or a zero of the other sign picks the side).
    for (float a : {-0.0f, 0.0f}) {
        for (bool is_min : {true, false}) {
            const float b = -a;
            Expr e = is_min ? Expr(Min::make(Expr(a), Expr(b))) : Expr(Max::make(Expr(a), Expr(b)));
            auto v = as_const_float(simplify(e));
            ASSERT_TRUE(v.has_value());
            EXPECT_EQ(std::signbit(*v), std::signbit(b)) << a << (is_min ? " min" : " max");
        }
    }
    Expr m = Min::make(Expr(2.0f), fx);
    EXPECT_TRUE(simplifies_to(m, m));
}

TEST_F(SimplifyTest, CancelsInWrappingTypes) {
    // Sums are exact modulo 2^bits, so cancellation holds for narrow and unsigned types too.
    Expr e = Sub::make(Add::make(u8, Expr(uint8_t(3))), Add::make(u8, Expr(uint8_t(1))));
    EXPECT_TRUE(simplifies_to(e, Expr(uint8_t(2))));
    Expr u = var("u", UInt(32));
    EXPECT_TRUE(
        simplifies_to(Add::make(u, Expr(uint32_t(4294967295u))), Sub::make(u, Expr(uint32_t(1)))));
}

TEST_F(SimplifyTest, CombinesRampsAndBroadcasts) {
    EXPECT_TRUE(simplifies_to(Add::make(Broadcast::make(x, 4), Broadcast::make(y, 4)),
                              Broadcast::make(Add::make(x, y), 4)));
    EXPECT_TRUE(simplifies_to(Add::make(Ramp::make(x, 1, 4), Broadcast::make(2, 4)),
                              Ramp::make(Add::make(x, 2), 1, 4)));
    EXPECT_TRUE(simplifies_to(Add::make(Ramp::make(x, 1, 4), Ramp::make(y, 2, 4)),
                              Ramp::make(Add::make(x, y), 3, 4)));
    EXPECT_TRUE(simplifies_to(Mul::make(Ramp::make(x, 1, 4), Broadcast::make(3, 4)),
                              Ramp::make(Mul::make(x, 3), 3, 4)));
    EXPECT_TRUE(
        simplifies_to(Sub::make(Ramp::make(x, 2, 4), Ramp::make(x, 2, 4)), Broadcast::make(0, 4)));
    EXPECT_TRUE(simplifies_to(Sub::make(Ramp::make(x, 1, 4), Ramp::make(y, 1, 4)),
                              Broadcast::make(Sub::make(x, y), 4)));
    EXPECT_TRUE(simplifies_to(Ramp::make(x, 0, 4), Broadcast::make(x, 4)));
}

// ---------------------------------------------------------------------------------------------
// Division and remainder

TEST_F(SimplifyTest, DividesOutMultiples) {
    EXPECT_TRUE(simplifies_to(Div::make(Mul::make(x, 4), 4), x));
    EXPECT_TRUE(
        simplifies_to(Div::make(Add::make(Mul::make(x, 4), y), 4), Add::make(x, Div::make(y, 4))));
    EXPECT_TRUE(simplifies_to(Div::make(Mul::make(x, 6), 3), Mul::make(x, 2)));
    EXPECT_TRUE(simplifies_to(Mod::make(Mul::make(x, 4), 4), Expr(0)));
    EXPECT_TRUE(simplifies_to(Mod::make(Add::make(Mul::make(x, 4), y), 4), Mod::make(y, 4)));
    EXPECT_TRUE(simplifies_to(Div::make(x, 1), x));
    EXPECT_TRUE(simplifies_to(Mod::make(x, 1), Expr(0)));
    EXPECT_TRUE(simplifies_to(Div::make(Add::make(Mul::make(x, 2), 1), 2), x));
    EXPECT_TRUE(simplifies_to(Mod::make(Add::make(Mul::make(x, 2), 1), 2), Expr(1)));
    EXPECT_TRUE(
        simplifies_to(Div::make(Add::make(Mul::make(x, 8), 13), 4), Add::make(Mul::make(x, 2), 3)));
    EXPECT_TRUE(simplifies_to(Mod::make(Sub::make(Mul::make(x, 8), 3), 4), Expr(1)));
    // A negative constant moves out toward zero only: the tile count (x - 1) / 8 + 1 of a
    // split keeps its form, which (x + 7) / 8 would overflow for x near 2^31 - 1.
    Expr tiles = Add::make(Div::make(Sub::make(x, 1), 8), 1);
    EXPECT_TRUE(simplifies_to(tiles, tiles));
    EXPECT_TRUE(
        simplifies_to(Div::make(Sub::make(Mul::make(x, 8), 3), 4), Sub::make(Mul::make(x, 2), 1)));
    EXPECT_TRUE(
        simplifies_to(Div::make(Sub::make(x, 9), 8), Sub::make(Div::make(Sub::make(x, 1), 8), 1)));
}

// x - (x / c) * c is x's remainder, which interval analysis bounds by [0, c - 1]: the last
// tile of a split, `e + 34 - ((e + 34) / 35) * 35`, is then known not to be empty.
TEST_F(SimplifyTest, SumsOfAQuotientAndItsNumeratorBecomeARemainder) {
    Expr n = Add::make(x, 34);
    EXPECT_TRUE(simplifies_to(Sub::make(n, Mul::make(Div::make(n, 35), 35)), Mod::make(n, 35)));
    // k copies, with other terms around: 2y + 2x - 8 * (x / 4) + 5 == 2y + 2 * (x % 4) + 5.
    Expr e = Add::make(
        Sub::make(Add::make(Mul::make(y, 2), Mul::make(x, 2)), Mul::make(Div::make(x, 4), 8)), 5);
    EXPECT_TRUE(
        simplifies_to(e, Add::make(Add::make(Mul::make(y, 2), Mul::make(Mod::make(x, 4), 2)), 5)));
    Interval b = bounds_of_expr_in_scope(simplify(Sub::make(n, Mul::make(Div::make(n, 35), 35))),
                                         Scope<Interval>());
    ASSERT_TRUE(b.has_lower_bound() && b.has_upper_bound());
    EXPECT_TRUE(is_const_zero(b.min)) << b.min;
    EXPECT_TRUE(equal(simplify(b.max), Expr(34))) << b.max;
    // Only when the numerator's terms all cancel: x - (x + y) / 2 * 2 keeps its quotient.
    Expr kept = simplify(Sub::make(x, Mul::make(Div::make(Add::make(x, y), 2), 2)));
    EXPECT_EQ(kept.as<Mod>(), nullptr) << kept;
    EXPECT_FALSE(simplifies_to(kept, Mod::make(Add::make(x, y), 2)));
}

// A point split into its tile and its place in the tile, put back together: (x / 4) * 64 +
// (x % 4) * 16 is 16 x (a warp index fused from a warpgroup and its 4 warps), also among other
// terms and in either order; a remainder at another scale, or of another divisor, stays.
TEST_F(SimplifyTest, AQuotientAndItsRemainderRecombine) {
    EXPECT_TRUE(simplifies_to(Add::make(Mul::make(Div::make(x, 8), 8), Mod::make(x, 8)), x));
    EXPECT_TRUE(
        simplifies_to(Add::make(Mul::make(Div::make(x, 4), 64), Mul::make(Mod::make(x, 4), 16)),
                      Mul::make(x, 16)));
    EXPECT_TRUE(simplifies_to(
        Add::make(Add::make(Mul::make(Mod::make(x, 4), 16), y), Mul::make(Div::make(x, 4), 64)),
        Add::make(Mul::make(x, 16), y)));
    for (Expr e : {Add::make(Mul::make(Div::make(x, 4), 64), Mul::make(Mod::make(x, 4), 8)),
                   Add::make(Mul::make(Div::make(x, 4), 4), Mod::make(x, 8))}) {
        Expr kept = simplify(e);
        bool has_div = false;
        visit_each<Div>(kept, [&](const Div *) { has_div = true; });
        EXPECT_TRUE(has_div) << kept;
    }
}

// min(x + k, y) - min(x, y) is y - x clamped to [0, k] (max alike): x and y appear once,
// so interval analysis bounds the extent of a region clamped at both ends by k.
TEST_F(SimplifyTest, DifferencesOfMinsWithASharedOperandBecomeAClamp) {
    auto clamp = [](Expr e, int k) { return Min::make(Max::make(e, 0), k); };
    EXPECT_TRUE(simplifies_to(Sub::make(Min::make(Add::make(x, 8), y), Min::make(x, y)),
                              clamp(Sub::make(y, x), 8)));
    EXPECT_TRUE(simplifies_to(Sub::make(Max::make(y, Add::make(x, 3)), Max::make(x, y)),
                              clamp(Add::make(Sub::make(x, y), 3), 3)));
    // The other way round, negated; other terms of the sum stay.
    EXPECT_TRUE(
        simplifies_to(Add::make(Sub::make(Min::make(x, y), Min::make(y, Add::make(x, 5))), z),
                      Sub::make(z, clamp(Sub::make(y, x), 5))));
    Scope<Interval> anything; // x and y unbounded
    anything.push("x", Interval::everything());
    anything.push("y", Interval::everything());
    Interval b = bounds_of_expr_in_scope(
        simplify(Sub::make(Min::make(Add::make(x, 8), y), Min::make(x, y))), anything);
    ASSERT_TRUE(b.has_lower_bound() && b.has_upper_bound());
    EXPECT_TRUE(is_const_zero(simplify(b.min)) && equal(simplify(b.max), Expr(8)))
        << b.min << " " << b.max;
    // Every form agrees with the original at every point of a grid.
    std::vector<Expr> forms = {
        Sub::make(Min::make(Add::make(x, 8), y), Min::make(x, y)),
        Sub::make(Min::make(x, y), Min::make(y, Add::make(x, 5))),
        Sub::make(Max::make(Add::make(x, 3), y), Max::make(y, x)),
        Sub::make(Max::make(x, y), Max::make(Add::make(x, 4), y)),
        Add::make(Sub::make(Min::make(x, y), Min::make(y, Add::make(x, 5))), z),
    };
    expect_same_on_grid(forms, {-12, 12, 3}, {-12, 12, 2});
}

// min(a + d, b + d) - min(a, b) is d, for max too and with the operands in either order: a
// tile's start clamped by a constant, min(m + t, 5), less the same start measured from the
// output's min m, min(5 - m, t), is m, rather than two mins bounded apart.
TEST_F(SimplifyTest, DifferencesOfMinsShiftedByTheSameAmountCancel) {
    EXPECT_TRUE(
        simplifies_to(Sub::make(Min::make(Add::make(x, y), 5), Min::make(Sub::make(5, x), y)), x));
    EXPECT_TRUE(simplifies_to(
        Add::make(Sub::make(Max::make(Add::make(y, 3), Add::make(z, 3)), Max::make(z, y)), x),
        Add::make(x, 3)));
    // Different shifts do not cancel.
    EXPECT_FALSE(simplifies_to(Sub::make(Min::make(Add::make(x, 1), y), Min::make(x, z)), Expr(1)));
    std::vector<Expr> forms = {
        Sub::make(Min::make(Add::make(x, y), 5), Min::make(Sub::make(5, x), y)),
        Sub::make(Max::make(Add::make(y, 3), Add::make(z, 3)), Max::make(z, y)),
        Sub::make(Min::make(Add::make(x, 1), y), Min::make(x, z)),
    };
    expect_same_on_grid(forms, {-12, 12, 3}, {-12, 12, 2});
}

// A clamped tile index times the tile size, clamped again: min(min(x, c1) * c2, c3) is
// min(x * c2, c3) where c1 * c2 >= c3 (and max alike), as a guarded loop of tiles inside a
// block writes the start of its last tile.
TEST_F(SimplifyTest, AClampedIndexTimesAPositiveSizeClampedAgain) {
    EXPECT_TRUE(simplifies_to(Min::make(Mul::make(Min::make(x, 2), 128), 136),
                              Min::make(Mul::make(x, 128), 136)));
    EXPECT_TRUE(simplifies_to(Max::make(Mul::make(Max::make(x, -1), 8), -4),
                              Max::make(Mul::make(x, 8), -4)));
    // With a size known only at run time: the last tile's index (e + 127) / 128 - 1 times 128
    // is at least the last tile's start e - 128.
    const Expr last = Sub::make(Div::make(Add::make(y, 127), 128), 1);
    EXPECT_TRUE(simplifies_to(Min::make(Mul::make(Min::make(x, last), 128), Sub::make(y, 128)),
                              Min::make(Sub::make(y, 128), Mul::make(x, 128))));
    // Where c1 * c2 is the tighter clamp, the outer one goes.
    EXPECT_TRUE(simplifies_to(Min::make(Mul::make(Min::make(x, 1), 128), 136),
                              Mul::make(Min::make(x, 1), 128)));
    // Every form (a negative size too, which the rule leaves) agrees on a grid.
    expect_same_on_grid({Min::make(Mul::make(Min::make(Add::make(x, y), 2), 128), 136),
                         Max::make(Mul::make(Max::make(Sub::make(x, y), -1), 8), -4),
                         Min::make(Mul::make(Min::make(x, 1), 128), 136),
                         Min::make(Mul::make(Min::make(x, 2), -3), 5),
                         Max::make(Mul::make(Min::make(x, 2), 4), 5),
                         Min::make(Mul::make(Min::make(x, last), 128), Sub::make(y, 128))},
                        {-12, 12, 1}, {-6, 6, 1});
}

// The start of a region's last tile shifted inwards, min(e - 128, max((e + 127) / 128 - 1, 0)
// * 128), is e - 128 for every e: the max is at least its first operand, and ((e + 127) / 128)
// * 128 at least e. Such bounds of min, max and division terms decide a min, max or
// comparison whose operands' terms cancel only through them.
TEST_F(SimplifyTest, MinMaxAndComparisonsDecidedThroughBoundsOfTheirTerms) {
    const Expr last_start =
        Mul::make(Max::make(Sub::make(Div::make(Add::make(y, 127), 128), 1), 0), 128);
    EXPECT_TRUE(simplifies_to(Min::make(Sub::make(y, 128), last_start), Sub::make(y, 128)));
    EXPECT_TRUE(simplifies_to(Min::make(last_start, Sub::make(y, 128)), Sub::make(y, 128)));
    // (y + 3) / 4 * 4 is at most y + 3.
    const Expr rounded = Mul::make(Div::make(Add::make(y, 3), 4), 4);
    EXPECT_TRUE(simplifies_to(Max::make(rounded, Add::make(y, 3)), Add::make(y, 3)));
    EXPECT_TRUE(simplifies_to(LE::make(rounded, Add::make(y, 3)), const_true()));
    EXPECT_TRUE(simplifies_to(LT::make(Add::make(y, 3), rounded), const_false()));
    // A min over such a term, bounded above: min(x, y) <= y.
    EXPECT_TRUE(
        simplifies_to(LE::make(Add::make(Min::make(x, y), 2), Add::make(y, 2)), const_true()));
    // One less and the bound no longer holds (e = 128: 0 < 1): these stay.
    const Expr kept = Min::make(Sub::make(y, 127), last_start);
    EXPECT_FALSE(simplifies_to(kept, Sub::make(y, 127)));
    EXPECT_FALSE(simplifies_to(LE::make(rounded, Add::make(y, 2)), const_true()));
    expect_same_on_grid({Min::make(Sub::make(y, 128), last_start), kept,
                         Max::make(rounded, Add::make(y, 3)),
                         Select::make(LE::make(rounded, Add::make(y, 2)), x, y),
                         Min::make(Sub::make(x, 5), Mul::make(Max::make(Div::make(x, 4), y), 4))},
                        {-12, 12, 1}, {-300, 300, 1});
}

// a + ((b - a) / c) * c is b - (b - a) % c: the last point of a tile rounded up from a to b
// is bounded by b, not by a's and b's ranges added. Only where a term of the numerator
// cancels; every form agrees with the original on a grid.
TEST_F(SimplifyTest, AStartPlusARoundedDownLengthBecomesTheEndLessARemainder) {
    Expr e = Add::make(x, Mul::make(Div::make(Sub::make(y, x), 4), 4));
    EXPECT_TRUE(simplifies_to(e, Sub::make(y, Mod::make(Sub::make(y, x), 4)))) << simplify(e);
    Scope<Interval> scope;
    scope.push("x", Interval(Expr(0), Expr(24)));
    scope.push("y", Interval(Expr(8), Expr(36)));
    Interval b = bounds_of_expr_in_scope(simplify(e), scope);
    ASSERT_TRUE(b.has_upper_bound());
    EXPECT_TRUE(equal(simplify(b.max), Expr(36))) << b.max; // bounded apart: 24 + 36 = 60
    // Nothing of (y + z) cancels against x: the quotient stays.
    EXPECT_TRUE(simplifies_to(Add::make(x, Mul::make(Div::make(Add::make(y, z), 4), 4)),
                              Add::make(x, Mul::make(Div::make(Add::make(y, z), 4), 4))));
    std::vector<Expr> forms = {
        e, Add::make(Add::make(x, 3), Mul::make(Div::make(Sub::make(Add::make(y, 5), x), 3), 6)),
        Sub::make(z, Mul::make(Div::make(Sub::make(y, x), 4), 8))};
    expect_same_on_grid(forms, {-13, 13, 2}, {-12, 12, 3});
}

// min(p, q) + max(q - p, 0) is q, and max(p, q) + min(q - p, 0) is q (a subtracted min(d, 0)
// counts as max(-d, 0)): the last point of a region whose min is kept at most its max, min
// plus extent minus one, is its max. d may have had terms moved into its min.
TEST_F(SimplifyTest, AClampedStartPlusItsExtentIsTheEnd) {
    Expr q = Min::make(Add::make(y, 11), 36);
    EXPECT_TRUE(simplifies_to(Add::make(Min::make(y, q), Max::make(Sub::make(q, y), 0)), q));
    EXPECT_TRUE(simplifies_to(Sub::make(Min::make(x, y), Min::make(Sub::make(x, y), 0)), y));
    EXPECT_TRUE(simplifies_to(Add::make(Max::make(x, y), Min::make(Sub::make(x, y), 0)), x));
    EXPECT_TRUE(simplifies_to(
        Add::make(Add::make(Min::make(x, y), Max::make(Sub::make(x, y), 0)), z), Add::make(x, z)));
    // The same operands under the same kind of min and max do not match.
    EXPECT_FALSE(simplifies_to(Add::make(Min::make(x, y), Min::make(Sub::make(x, y), 0)), x));
    std::vector<Expr> forms = {
        Add::make(Min::make(y, q), Max::make(Sub::make(q, y), 0)),
        Sub::make(Min::make(x, y), Min::make(Sub::make(x, y), 0)),
        Add::make(Max::make(x, y), Min::make(Sub::make(x, y), 0)),
        Sub::make(Max::make(x, y), Max::make(Sub::make(y, x), 0)),
        Add::make(Min::make(x, y), Min::make(Sub::make(x, y), 0)),
    };
    expect_same_on_grid(forms, {-12, 12, 3}, {-12, 40, 4});
}

TEST_F(SimplifyTest, DivisionByCommonFactorsAndNesting) {
    EXPECT_TRUE(simplifies_to(Div::make(Div::make(x, 2), 3), Div::make(x, 6)));
    EXPECT_TRUE(
        simplifies_to(Div::make(Add::make(Div::make(x, 2), 1), 3), Div::make(Add::make(x, 2), 6)));
    EXPECT_TRUE(simplifies_to(Div::make(Add::make(Mul::make(x, 4), 2), 8), Div::make(x, 2)));
    EXPECT_TRUE(simplifies_to(Mod::make(Mod::make(x, 8), 4), Mod::make(x, 4)));
    EXPECT_TRUE(simplifies_to(Div::make(x, -1), Sub::make(0, x)));
    EXPECT_TRUE(simplifies_to(Mod::make(x, -4), Mod::make(x, 4)));
}

TEST_F(SimplifyTest, DivisionUsesBounds) {
    Scope<Interval> s = ranges({{"y", 0, 3}, {"z", 4, 7}});
    EXPECT_TRUE(simplifies_to(Div::make(y, 4), Expr(0), s));
    EXPECT_TRUE(simplifies_to(Mod::make(y, 4), y, s));
    EXPECT_TRUE(simplifies_to(Div::make(z, 4), Expr(1), s));
    EXPECT_TRUE(simplifies_to(Mod::make(z, 4), Sub::make(z, 4), s));
    EXPECT_TRUE(simplifies_to(Div::make(Add::make(Mul::make(x, 4), y), 4), x, s));
    EXPECT_TRUE(simplifies_to(Mod::make(Add::make(Mul::make(x, 4), y), 4), y, s));
    // A remainder's own range: 0 <= x % 4 < 4.
    EXPECT_TRUE(simplifies_to(Div::make(Mod::make(x, 4), 4), Expr(0)));
    EXPECT_TRUE(simplifies_to(Mod::make(Mod::make(x, 4), 4), Mod::make(x, 4)));
    EXPECT_TRUE(simplifies_to(Div::make(Add::make(Mul::make(x, 4), Mod::make(y, 4)), 4), x));
    // Narrow types: the range of the type itself.
    Expr wide = Cast::make(Int(32), u8);
    EXPECT_TRUE(simplifies_to(Div::make(wide, 256), Expr(0)));
    EXPECT_TRUE(simplifies_to(Mod::make(wide, 256), wide));
}

TEST_F(SimplifyTest, WrappingTypesKeepTheirDivisions) {
    // (u8 * 4) / 4 != u8 when the product wraps.
    Expr e = Div::make(Mul::make(u8, Expr(uint8_t(4))), Expr(uint8_t(4)));
    EXPECT_TRUE(simplifies_to(e, e));
    Expr m =
        Mod::make(Add::make(Mul::make(u8, Expr(uint8_t(3))), Expr(uint8_t(1))), Expr(uint8_t(3)));
    EXPECT_TRUE(simplifies_to(m, m));
    // Division itself never wraps.
    EXPECT_TRUE(simplifies_to(Div::make(Div::make(u8, Expr(uint8_t(2))), Expr(uint8_t(4))),
                              Div::make(u8, Expr(uint8_t(8)))));
    EXPECT_TRUE(simplifies_to(Div::make(u8, Expr(uint8_t(1))), u8));
}

TEST_F(SimplifyTest, DividesVectors) {
    EXPECT_TRUE(simplifies_to(Div::make(Ramp::make(Mul::make(x, 4), 4, 4), Broadcast::make(4, 4)),
                              Ramp::make(x, 1, 4)));
    EXPECT_TRUE(simplifies_to(Mod::make(Ramp::make(Mul::make(x, 4), 8, 4), Broadcast::make(4, 4)),
                              Broadcast::make(0, 4)));
    EXPECT_TRUE(simplifies_to(Div::make(Ramp::make(0, 1, 4), Broadcast::make(8, 4)),
                              Broadcast::make(0, 4)));
    EXPECT_TRUE(
        simplifies_to(Mod::make(Ramp::make(8, 1, 4), Broadcast::make(8, 4)), Ramp::make(0, 1, 4)));
}

// A packed layout's (x / c, x % c) of a vectorized x: when every lane stays within one multiple
// of c, the quotient is one value and the remainders a dense ramp, so the access is no gather.
TEST_F(SimplifyTest, RampsWithinOneMultipleShareAQuotient) {
    Expr base = Add::make(Mul::make(x, 64), 16);
    EXPECT_TRUE(simplifies_to(Div::make(Ramp::make(base, 1, 16), Broadcast::make(64, 16)),
                              Broadcast::make(x, 16)));
    EXPECT_TRUE(simplifies_to(Mod::make(Ramp::make(base, 1, 16), Broadcast::make(64, 16)),
                              Ramp::make(16, 1, 16)));
    // Descending lanes: 15 down to 0.
    Expr down = Add::make(Mul::make(x, 64), 15);
    EXPECT_TRUE(simplifies_to(Div::make(Ramp::make(down, -1, 16), Broadcast::make(64, 16)),
                              Broadcast::make(x, 16)));
    // The last lane of a ramp from 64x + 56 reaches 64x + 71: two quotients, left as they are.
    Expr across =
        Div::make(Ramp::make(Add::make(Mul::make(x, 64), 56), 1, 16), Broadcast::make(64, 16));
    EXPECT_TRUE(simplifies_to(across, across));
    // 64x - 1 is 63 past a multiple of 64, so the next lane crosses it.
    Expr before =
        Mod::make(Ramp::make(Sub::make(Mul::make(x, 64), 1), 1, 4), Broadcast::make(64, 4));
    EXPECT_NE(simplify(before).as<Mod>(), nullptr) << simplify(before);
    // A base that is not a known multiple plus a constant: x + 1 may be anywhere modulo 64.
    Expr unknown = Div::make(Ramp::make(Add::make(x, 1), 1, 4), Broadcast::make(64, 4));
    EXPECT_TRUE(simplifies_to(unknown, unknown));
}

// ---------------------------------------------------------------------------------------------
// Min and max

TEST_F(SimplifyTest, MinMaxOfRelatedExpressions) {
    EXPECT_TRUE(simplifies_to(Min::make(x, x), x));
    EXPECT_TRUE(simplifies_to(Min::make(Add::make(x, 1), Add::make(x, 3)), Add::make(x, 1)));
    EXPECT_TRUE(simplifies_to(Max::make(Add::make(x, 1), Add::make(x, 3)), Add::make(x, 3)));
    EXPECT_TRUE(simplifies_to(Min::make(Sub::make(x, 1), x), Sub::make(x, 1)));
    EXPECT_TRUE(simplifies_to(Min::make(5, x), Min::make(x, 5)));
    EXPECT_TRUE(simplifies_to(Min::make(y, x), Min::make(x, y)));
    EXPECT_TRUE(simplifies_to(Min::make(x, Min::make(x, y)), Min::make(x, y)));
    EXPECT_TRUE(simplifies_to(Min::make(x, Max::make(x, y)), x));
    EXPECT_TRUE(simplifies_to(Max::make(Min::make(x, y), x), x));
}

TEST_F(SimplifyTest, MinMaxOfConstantsNest) {
    EXPECT_TRUE(simplifies_to(Min::make(Min::make(x, 3), 5), Min::make(x, 3)));
    EXPECT_TRUE(simplifies_to(Min::make(Min::make(x, 5), 3), Min::make(x, 3)));
    EXPECT_TRUE(simplifies_to(Max::make(Max::make(x, 3), 5), Max::make(x, 5)));
    // max(x, 5) >= 5 > 3
    EXPECT_TRUE(simplifies_to(Min::make(Max::make(x, 5), 3), Expr(3)));
}

TEST_F(SimplifyTest, MinMaxOfTypeLimits) {
    EXPECT_TRUE(simplifies_to(Max::make(x, Expr(INT32_MIN)), x));
    EXPECT_TRUE(simplifies_to(Min::make(x, Expr(INT32_MAX)), x));
    EXPECT_TRUE(simplifies_to(Min::make(x, Expr(INT32_MIN)), Expr(INT32_MIN)));
    EXPECT_TRUE(simplifies_to(Max::make(u8, Expr(uint8_t(0))), u8));
    EXPECT_TRUE(simplifies_to(Min::make(u8, Expr(uint8_t(0))), Expr(uint8_t(0))));
    EXPECT_TRUE(simplifies_to(Min::make(u8, Expr(uint8_t(255))), u8));
}

TEST_F(SimplifyTest, MinMaxUseBounds) {
    Scope<Interval> s = ranges({{"x", 0, 5}, {"y", 10, 20}, {"z", 6, 10}});
    EXPECT_TRUE(simplifies_to(Min::make(x, y), x, s));
    EXPECT_TRUE(simplifies_to(Max::make(x, y), y, s));
    // Through the difference: (a + z) - (a + 5) = z - 5 >= 1.
    EXPECT_TRUE(simplifies_to(Min::make(Add::make(a, z), Add::make(a, 5)), Add::make(a, 5), s));
    EXPECT_TRUE(simplifies_to(Min::make(Mod::make(a, 4), 4), Mod::make(a, 4)));
    EXPECT_TRUE(simplifies_to(Max::make(Mod::make(a, 4), -1), Mod::make(a, 4)));
    Expr wide = Cast::make(Int(32), u8);
    EXPECT_TRUE(simplifies_to(Min::make(wide, 300), wide));
    EXPECT_TRUE(simplifies_to(Max::make(wide, 0), wide));
}

// Quotients by the same positive constant keep the order of their numerators, within one: so
// a region read at many points, a chain of such mins or maxes, becomes one bound (a 5-level
// pyramid's inlined upsampling reads its coarsest level at 16 points per output).
TEST_F(SimplifyTest, MinMaxOfQuotientsByTheSameConstant) {
    auto q = [&](int k) { return Div::make(Add::make(x, k), 16); };
    EXPECT_TRUE(simplifies_to(Min::make(q(13), q(5)), q(5)));
    EXPECT_TRUE(simplifies_to(Max::make(q(13), q(5)), q(13)));
    // (x + 15) / 16 <= (x + 13) / 16 + 1: their numerators differ by 2 < 16.
    EXPECT_TRUE(simplifies_to(Max::make(Add::make(q(13), 1), q(15)), Add::make(q(13), 1)));
    EXPECT_TRUE(simplifies_to(Min::make(Add::make(q(13), 1), q(15)), q(15)));
    // (x + 17) / 16 - x / 16 is 1 or 2; quotients of unrelated numerators stay undecided.
    EXPECT_TRUE(
        simplifies_to(Min::make(q(17), Add::make(q(0), 1)), Add::make(Div::make(x, 16), 1)));
    Expr undecided = simplify(Min::make(Div::make(y, 16), q(0)));
    EXPECT_TRUE(undecided.as<Min>() != nullptr) << undecided;
    // Chains, as unions of regions build them, with an operand nothing decides (y).
    Expr chain = q(15);
    for (int k : {7, 3, 11, 1, 9, 5, 13})
        chain = Max::make(Add::make(q(k), 1), chain);
    EXPECT_TRUE(simplifies_to(chain, Add::make(q(13), 1)));
    Expr with_y = Min::make(q(8), Min::make(y, q(0)));
    Expr simplified = simplify(with_y);
    int quotients = 0;
    visit_each<Div>(simplified, [&](const Div *) { quotients++; });
    EXPECT_EQ(quotients, 1) << simplified;
    // Nested quotients.
    EXPECT_TRUE(simplifies_to(Min::make(Div::make(Add::make(Div::make(x, 4), 1), 4),
                                        Div::make(Div::make(Add::make(x, 3), 4), 4)),
                              Div::make(Add::make(x, 3), 16)));
    expect_same_on_grid({Min::make(q(13), q(5)), Max::make(Add::make(q(13), 1), q(15)),
                         Min::make(Add::make(q(13), 1), q(15)), chain, with_y,
                         Min::make(q(17), Add::make(q(0), 1)),
                         Max::make(Div::make(Sub::make(x, y), 8), Div::make(Sub::make(x, 9), 8))},
                        {-70, 70, 1}, {-20, 20, 3});
}

// The region a clamped stencil reads is a chain of maxes (mins) with one clamped point per
// operand. The clamps share their bounds, so the chain keeps one: the region of the points
// x - 1, x and x + 1 is the clamp of x + 1. Each stage of a chain of stencils nests the next
// one's region in every operand, so this decides whether the regions grow twofold or
// fourfold per stage.
TEST_F(SimplifyTest, ChainsOfClampedPointsShareTheirClamp) {
    auto clamped = [](const Expr &e) { return Max::make(Min::make(e, 36), 0); };
    const Expr x_minus_1 = Sub::make(x, 1), x_plus_1 = Add::make(x, 1);
    const Expr high = Max::make(clamped(x_minus_1), Max::make(clamped(x), clamped(x_plus_1)));
    EXPECT_TRUE(simplifies_to(high, clamped(x_plus_1)));
    const Expr low = Min::make(Min::make(clamped(x_plus_1), y), clamped(x_minus_1));
    const Expr low_simplified = simplify(low);
    int clamps = 0;
    visit_each<Min>(low_simplified, [&](const Min *m) { clamps += is_const(m->b, 36); });
    EXPECT_EQ(clamps, 1) << low_simplified;
    // With the point read unclamped as well (a stencil's centre), x appears twice.
    const Expr with_centre = simplify(Max::make(x, high));
    int uses = 0;
    visit_each<Variable>(with_centre, [&](const Variable *v) { uses += v->name == "x"; });
    EXPECT_EQ(uses, 2) << with_centre;
    // Clamps with different bounds stay apart.
    const Expr apart = simplify(Max::make(clamped(x), Max::make(Min::make(y, 20), 0)));
    int mins = 0;
    visit_each<Min>(apart, [&](const Min *) { mins++; });
    EXPECT_EQ(mins, 2) << apart;
    expect_same_on_grid(
        {high, low, Max::make(x, high), Max::make(clamped(x), Max::make(Min::make(y, 20), 0))},
        {-50, 50, 1}, {-30, 40, 7});
}

// Terms of a sum that cancel inside a min or max move into it: the loop variable then
// appears once, which interval analysis needs to bound the expression tightly.
TEST_F(SimplifyTest, SumsMoveIntoMinMaxWhereTermsCancel) {
    Expr six_x = Mul::make(x, 6);
    EXPECT_TRUE(simplifies_to(Sub::make(Min::make(Add::make(six_x, 5), y), six_x),
                              Min::make(Sub::make(y, six_x), 5)));
    // z + max(x + z, y) - (x + z): z cancels outside, x inside.
    Expr r = simplify(Sub::make(Add::make(z, Max::make(Add::make(x, z), y)), Add::make(x, z)));
    const Max *m = r.as<Max>();
    ASSERT_NE(m, nullptr) << r;
    Expr y_minus_x = simplify(Sub::make(y, x));
    EXPECT_TRUE((equal(m->a, z) && equal(m->b, y_minus_x)) ||
                (equal(m->b, z) && equal(m->a, y_minus_x)))
        << r;
    // Nothing cancels: the sum stays outside.
    Expr kept = simplify(Add::make(Min::make(x, y), z));
    EXPECT_NE(kept.as<Add>(), nullptr) << kept;
    // A term that cancels inside a nested min moves down to it: the start of a guarded tile
    // plus the last vector's offset within it, x*32 + min(min(z - x*32 - 1, 31) - 7, y*8),
    // becomes one where x*32 no longer appears with both signs.
    Expr tile = Mul::make(x, 32);
    Expr nested =
        Add::make(tile, Min::make(Sub::make(Min::make(Sub::make(Sub::make(z, tile), 1), 31), 7),
                                  Mul::make(y, 8)));
    Expr moved = simplify(nested);
    int uses_of_x = 0;
    visit_each<Variable>(moved, [&](const Variable *v) { uses_of_x += v->name == "x"; });
    EXPECT_EQ(uses_of_x, 2) << moved; // once per side of the outer min
    EXPECT_EQ(moved.as<Min>() != nullptr, true) << moved;
    Interval i =
        bounds_of_expr_in_scope(moved, ranges({{"x", 0, 3}, {"y", 0, 3}, {"z", 100, 100}}));
    EXPECT_TRUE(equal(simplify(i.max), Expr(92))) << moved << " has max " << i.max;
}

TEST_F(SimplifyTest, FloatMinMaxAreNotReordered) {
    Expr e = Min::make(Expr(5.0f), fx);
    EXPECT_TRUE(simplifies_to(e, e));
    EXPECT_TRUE(simplifies_to(Max::make(fx, fx), fx));
}

// ---------------------------------------------------------------------------------------------
// Comparisons

TEST_F(SimplifyTest, ComparesAnExpressionWithItself) {
    EXPECT_TRUE(simplifies_to(LT::make(x, x), const_false()));
    EXPECT_TRUE(simplifies_to(LE::make(x, x), const_true()));
    EXPECT_TRUE(simplifies_to(EQ::make(x, x), const_true()));
    EXPECT_TRUE(simplifies_to(NE::make(x, x), const_false()));
    EXPECT_TRUE(simplifies_to(GT::make(Add::make(x, 1), x), const_true()));
    EXPECT_TRUE(simplifies_to(LT::make(Add::make(x, 3), Add::make(x, 1)), const_false()));
    EXPECT_TRUE(simplifies_to(EQ::make(Add::make(x, 1), x), const_false()));
    // Floats: x < x is false even for NaN, but x <= x and x == x are not known.
    EXPECT_TRUE(simplifies_to(LT::make(fx, fx), const_false()));
    EXPECT_TRUE(simplifies_to(LE::make(fx, fx), LE::make(fx, fx)));
    EXPECT_TRUE(simplifies_to(EQ::make(fx, fx), EQ::make(fx, fx)));
}

TEST_F(SimplifyTest, ComparisonsUseBounds) {
    Scope<Interval> s = ranges({{"x", 0, 10}});
    EXPECT_TRUE(simplifies_to(LT::make(x, 11), const_true(), s));
    EXPECT_TRUE(simplifies_to(LT::make(x, 0), const_false(), s));
    EXPECT_TRUE(simplifies_to(GE::make(x, 0), const_true(), s));
    EXPECT_TRUE(simplifies_to(LT::make(Mul::make(x, 2), 21), const_true(), s));
    EXPECT_TRUE(simplifies_to(EQ::make(x, 11), const_false(), s));
    EXPECT_TRUE(simplifies_to(LT::make(x, 10), LT::make(x, 10), s));
    EXPECT_TRUE(simplifies_to(LT::make(Mod::make(y, 4), 4), const_true()));
    EXPECT_TRUE(simplifies_to(GE::make(Mod::make(y, 4), 0), const_true()));
    Expr wide = Cast::make(Int(32), u8);
    EXPECT_TRUE(simplifies_to(LT::make(wide, 256), const_true()));
    EXPECT_TRUE(simplifies_to(GE::make(u8, Expr(uint8_t(0))), const_true()));
}

TEST_F(SimplifyTest, ComparisonsTakeACanonicalForm) {
    EXPECT_TRUE(
        simplifies_to(LT::make(Add::make(x, 1), Add::make(y, 3)), LT::make(x, Add::make(y, 2))));
    EXPECT_TRUE(simplifies_to(GT::make(x, y), LT::make(y, x)));
    EXPECT_TRUE(simplifies_to(GE::make(x, y), LE::make(y, x)));
    EXPECT_TRUE(simplifies_to(LT::make(Sub::make(x, y), 0), LT::make(x, y)));
    EXPECT_TRUE(simplifies_to(LT::make(Mul::make(x, 2), 10), LT::make(x, 5)));
    EXPECT_TRUE(simplifies_to(LT::make(Mul::make(x, 2), 9), LT::make(x, 5)));
    EXPECT_TRUE(simplifies_to(LE::make(Mul::make(x, 2), 9), LE::make(x, 4)));
    EXPECT_TRUE(simplifies_to(EQ::make(Mul::make(x, 2), 7), const_false()));
    EXPECT_TRUE(simplifies_to(EQ::make(Mul::make(x, 2), 8), EQ::make(x, 4)));
    EXPECT_TRUE(simplifies_to(EQ::make(5, Add::make(x, 3)), EQ::make(x, 2)));
    EXPECT_TRUE(simplifies_to(GT::make(x, 0), LT::make(0, x)));
}

TEST_F(SimplifyTest, NotFlipsIntegerComparisonsOnly) {
    EXPECT_TRUE(simplifies_to(Not::make(LT::make(x, y)), LE::make(y, x)));
    EXPECT_TRUE(simplifies_to(Not::make(LE::make(x, y)), LT::make(y, x)));
    EXPECT_TRUE(simplifies_to(Not::make(EQ::make(x, y)), NE::make(x, y)));
    EXPECT_TRUE(simplifies_to(Not::make(NE::make(x, y)), EQ::make(x, y)));
    EXPECT_TRUE(simplifies_to(Not::make(Not::make(c)), c));
    // !(a < b) is not a >= b when either is NaN.
    Expr e = Not::make(LT::make(fx, fy));
    EXPECT_TRUE(simplifies_to(e, e));
    EXPECT_TRUE(simplifies_to(Not::make(EQ::make(fx, fy)), NE::make(fx, fy)));
}

TEST_F(SimplifyTest, ProvesWithSymbolicBounds) {
    Expr n = var("n");
    Scope<Interval> s;
    s.push("x", Interval(Expr(0), Sub::make(n, 1)));
    EXPECT_TRUE(can_prove(LT::make(x, n), s));
    EXPECT_TRUE(can_prove(LE::make(Add::make(x, 1), n), s));
    EXPECT_TRUE(can_prove(GE::make(x, 0), s));
    EXPECT_FALSE(can_prove(LT::make(x, Sub::make(n, 1)), s));
    EXPECT_TRUE(simplifies_to(Min::make(x, n), x, s));
    EXPECT_TRUE(simplifies_to(Max::make(Add::make(x, 1), n), n, s));
    EXPECT_FALSE(can_prove(LT::make(x, n)));
    // can_prove means "proved", not "true": false is also the answer for unknowns.
    EXPECT_FALSE(can_prove(LT::make(x, y)));
    EXPECT_TRUE(can_prove(LT::make(x, Add::make(x, 1))));
}

// ---------------------------------------------------------------------------------------------
// Logic and select

TEST_F(SimplifyTest, BooleanIdentities) {
    EXPECT_TRUE(simplifies_to(And::make(c, const_true()), c));
    EXPECT_TRUE(simplifies_to(And::make(c, const_false()), const_false()));
    EXPECT_TRUE(simplifies_to(Or::make(const_true(), c), const_true()));
    EXPECT_TRUE(simplifies_to(Or::make(c, const_false()), c));
    EXPECT_TRUE(simplifies_to(And::make(c, c), c));
    EXPECT_TRUE(simplifies_to(Or::make(c, c), c));
    EXPECT_TRUE(simplifies_to(And::make(c, Not::make(c)), const_false()));
    EXPECT_TRUE(simplifies_to(Or::make(Not::make(c), c), const_true()));
    EXPECT_TRUE(simplifies_to(EQ::make(c, const_true()), c));
    EXPECT_TRUE(simplifies_to(EQ::make(c, const_false()), Not::make(c)));
    Expr both = And::make(c, d);
    EXPECT_TRUE(simplifies_to(both, both));
}

TEST_F(SimplifyTest, SelectIdentities) {
    EXPECT_TRUE(simplifies_to(Select::make(const_true(), x, y), x));
    EXPECT_TRUE(simplifies_to(Select::make(const_false(), x, y), y));
    EXPECT_TRUE(simplifies_to(Select::make(c, x, x), x));
    EXPECT_TRUE(simplifies_to(Select::make(Not::make(c), x, y), Select::make(c, y, x)));
    EXPECT_TRUE(simplifies_to(Select::make(c, const_true(), const_false()), c));
    EXPECT_TRUE(simplifies_to(Select::make(c, const_false(), const_true()), Not::make(c)));
    Scope<Interval> s = ranges({{"x", 0, 10}});
    EXPECT_TRUE(simplifies_to(Select::make(LT::make(x, 20), x, y), x, s));
    EXPECT_TRUE(simplifies_to(
        Select::make(Broadcast::make(c, 4), Broadcast::make(x, 4), Broadcast::make(y, 4)),
        Broadcast::make(Select::make(c, x, y), 4)));
}

// ---------------------------------------------------------------------------------------------
// Lets and casts

TEST_F(SimplifyTest, SubstitutesSimpleLets) {
    Expr t = var("t");
    EXPECT_TRUE(simplifies_to(Let::make("t", 3, Add::make(t, x)), Add::make(x, 3)));
    EXPECT_TRUE(simplifies_to(Let::make("t", y, Mul::make(t, 2)), Mul::make(y, 2)));
    EXPECT_TRUE(simplifies_to(Let::make("t", Mul::make(x, y), x), x));
    EXPECT_TRUE(simplifies_to(Let::make("t", Mul::make(x, y), Add::make(t, t)),
                              Let::make("t", Mul::make(x, y), Mul::make(t, 2))));
    // The let's value bounds its variable: t in [0, 3].
    EXPECT_TRUE(simplifies_to(Let::make("t", Mod::make(x, 4), LT::make(t, 4)), const_true()));
}

TEST_F(SimplifyTest, LetSubstitutionAvoidsCapture) {
    // let t = y in (let y = x * 2 in t + y): substituting t would capture the inner y.
    Expr t = var("t");
    Expr e = Let::make("t", y, Let::make("y", Mul::make(x, 2), Add::make(t, y)));
    EXPECT_TRUE(simplifies_to(e, e));
    aicf::test::Evaluator eval;
    eval.vars = {{"x", 5}, {"y", 7}};
    EXPECT_EQ(eval(simplify(e)), 17);
}

TEST_F(SimplifyTest, SimplifiesCasts) {
    EXPECT_TRUE(simplifies_to(Cast::make(Int(32), x), x));
    Expr i16 = var("i16", Int(16));
    EXPECT_TRUE(
        simplifies_to(Cast::make(Int(64), Cast::make(Int(32), i16)), Cast::make(Int(64), i16)));
    EXPECT_TRUE(simplifies_to(Cast::make(Int(16), Cast::make(Int(32), i16)), i16));
    Expr lossy = Cast::make(Int(32), Cast::make(UInt(8), x));
    EXPECT_TRUE(simplifies_to(lossy, lossy));
    EXPECT_TRUE(simplifies_to(Cast::make(Float(32, 4), Broadcast::make(x, 4)),
                              Broadcast::make(Cast::make(Float(32), x), 4)));
}

// ---------------------------------------------------------------------------------------------
// Statements

class SimplifyStmtTest : public SimplifyTest {
protected:
    Stmt store(const std::string &buf, Expr value, Expr index) {
        return Store::make(buf, value, index, Expr());
    }
};

TEST_F(SimplifyStmtTest, RemovesEmptyLoopsAndUnrollsSingleIterations) {
    Stmt body = store("buf", x, x);
    EXPECT_FALSE(simplify(For::make("x", 0, 0, ForType::Serial, body)).defined());
    EXPECT_FALSE(simplify(For::make("x", 0, -3, ForType::Serial, body)).defined());
    EXPECT_TRUE(stmt_simplifies_to(For::make("x", 5, 1, ForType::Serial, body),
                                   store("buf", Expr(5), Expr(5))));
    // A GPU loop of one iteration still defines the launch.
    Stmt gpu = For::make("x", 0, 1, ForType::GPUBlock, GPUDim::X, body);
    EXPECT_TRUE(stmt_simplifies_to(gpu, gpu));
}

TEST_F(SimplifyStmtTest, LoopBoundsAreKnownInTheBody) {
    Stmt guarded = IfThenElse::make(LT::make(x, 10), store("buf", x, x));
    EXPECT_TRUE(stmt_simplifies_to(For::make("x", 0, 10, ForType::Serial, guarded),
                                   For::make("x", 0, 10, ForType::Serial, store("buf", x, x))));
    Expr n = var("n");
    Stmt sym = IfThenElse::make(LT::make(x, Add::make(n, 2)), store("buf", x, x));
    EXPECT_TRUE(stmt_simplifies_to(For::make("x", 2, n, ForType::Serial, sym),
                                   For::make("x", 2, n, ForType::Serial, store("buf", x, x))));
    Stmt kept = IfThenElse::make(LT::make(x, 9), store("buf", x, x));
    EXPECT_TRUE(stmt_simplifies_to(For::make("x", 0, 10, ForType::Serial, kept),
                                   For::make("x", 0, 10, ForType::Serial, kept)));
}

// A split's guard is written in the original variable, which a let defines from the loops:
// `for yo in [0, 4): let y = yo * 8 + m + 7 in if (y < m + 32) ...` always holds.
TEST_F(SimplifyStmtTest, GuardsAreDecidedThroughLetValues) {
    Expr yo = var("yo"), m = var("m"), yv = var("y");
    auto nest = [&](int extent) {
        Expr value = Add::make(Add::make(Mul::make(yo, 8), m), 7);
        Stmt body = IfThenElse::make(LT::make(yv, Add::make(m, 32)), store("buf", yv, x));
        return For::make("yo", 0, extent, ForType::Serial, LetStmt::make("y", value, body));
    };
    Stmt proved = simplify(nest(4));
    EXPECT_EQ(to_string(proved).find("if ("), std::string::npos) << proved;
    // One more iteration reaches y = m + 39: the guard stays.
    Stmt kept = simplify(nest(5));
    EXPECT_NE(to_string(kept).find("if ("), std::string::npos) << kept;
}

// The last simplification before code generation copies short linear lets into their uses,
// so a realization's min cancels against the min its storage index subtracts.
TEST_F(SimplifyStmtTest, CodegenSimplificationCancelsThroughLinearLets) {
    Expr yo = var("yo"), m = var("m"), yv = var("y");
    Expr value = Add::make(Add::make(Mul::make(yo, 8), m), 3);
    Stmt s = For::make("yo", 0, 4, ForType::Serial,
                       LetStmt::make("y", value, store("buf", 1, Mul::make(Sub::make(yv, m), 48))));
    EXPECT_TRUE(stmt_simplifies_to(simplify_for_codegen(s),
                                   For::make("yo", 0, 4, ForType::Serial,
                                             store("buf", 1, Add::make(Mul::make(yo, 384), 144)))))
        << simplify_for_codegen(s);
    // The ordinary simplification keeps the let (analyses read guards in its variable).
    EXPECT_NE(to_string(simplify(s)).find("let y"), std::string::npos) << simplify(s);
}

TEST_F(SimplifyStmtTest, IfThenElseOnConstants) {
    Stmt then_case = store("a", 1, 0), else_case = store("b", 2, 0);
    EXPECT_TRUE(
        stmt_simplifies_to(IfThenElse::make(const_true(), then_case, else_case), then_case));
    EXPECT_TRUE(
        stmt_simplifies_to(IfThenElse::make(const_false(), then_case, else_case), else_case));
    EXPECT_FALSE(simplify(IfThenElse::make(const_false(), then_case)).defined());
    // An empty then case turns into a negated condition.
    Stmt e = IfThenElse::make(LT::make(x, y), Evaluate::make(0), else_case);
    EXPECT_TRUE(stmt_simplifies_to(e, IfThenElse::make(LE::make(y, x), else_case)));
}

TEST_F(SimplifyStmtTest, LetStmts) {
    Expr t = var("t");
    EXPECT_TRUE(stmt_simplifies_to(LetStmt::make("t", 4, store("buf", t, Add::make(t, x))),
                                   store("buf", 4, Add::make(x, 4))));
    EXPECT_TRUE(stmt_simplifies_to(LetStmt::make("t", Mul::make(x, y), store("buf", 1, x)),
                                   store("buf", 1, x)));
    Stmt used = LetStmt::make("t", Mul::make(x, y), store("buf", t, t));
    EXPECT_TRUE(stmt_simplifies_to(used, used));
}

TEST_F(SimplifyStmtTest, AssertsProvedTrueAreRemoved) {
    Expr msg = Call::make(Int(32), Intrinsic::runtime_error, {Expr(1)}, Call::Intrinsic);
    Stmt body = store("buf", 1, 0);
    EXPECT_TRUE(stmt_simplifies_to(Block::make(AssertStmt::make(LT::make(1, 2), msg), body), body));
    Stmt failing = AssertStmt::make(LT::make(2, 1), msg);
    EXPECT_TRUE(stmt_simplifies_to(failing, AssertStmt::make(const_false(), msg)));
}

TEST_F(SimplifyStmtTest, NoOpsDisappear) {
    Stmt body = store("buf", 1, 0);
    Stmt block = Block::make({Evaluate::make(3), body, Evaluate::make(x)});
    EXPECT_TRUE(stmt_simplifies_to(block, body));
    EXPECT_FALSE(simplify(Evaluate::make(Add::make(x, 1))).defined());
    Expr call = Call::make(Int(32), Intrinsic::runtime_error, {Expr(1)}, Call::Intrinsic);
    EXPECT_TRUE(stmt_simplifies_to(Evaluate::make(call), Evaluate::make(call)));
    EXPECT_FALSE(simplify(ProducerConsumer::make_produce("f", Evaluate::make(0))).defined());
    EXPECT_FALSE(simplify(Store::make("buf", x, x, const_false())).defined());
    Stmt alloc =
        Allocate::make("tmp", Int(32), MemoryType::Stack, {Add::make(2, 3)}, Evaluate::make(0));
    EXPECT_FALSE(simplify(alloc).defined());
}

TEST_F(SimplifyStmtTest, SimplifiesChildrenOfOtherStatements) {
    Expr five = Add::make(2, 3);
    Stmt body = Provide::make("f", {Add::make(x, Sub::make(1, 1))}, {Mul::make(y, 1)});
    Stmt r = Realize::make("f", {Int(32)}, MemoryType::Auto, {Range(Sub::make(x, x), five)}, body);
    Stmt expected = Realize::make("f", {Int(32)}, MemoryType::Auto, {Range(0, 5)},
                                  Provide::make("f", {x}, {y}));
    EXPECT_TRUE(stmt_simplifies_to(r, expected));
    Stmt used =
        Block::make(store("tmp", 1, 0), store("out", Load::make(Int(32), "tmp", 0, Expr()), x));
    Stmt alloc = Allocate::make("tmp", Int(32), MemoryType::Stack, {five}, used);
    EXPECT_TRUE(stmt_simplifies_to(
        alloc, Allocate::make("tmp", Int(32), MemoryType::Stack, {Expr(5)}, used)));
    Expr load = Load::make(Int(32), "in", Add::make(x, Sub::make(y, y)), Expr());
    EXPECT_TRUE(simplifies_to(load, Load::make(Int(32), "in", x, Expr())));
}

// Storage that nothing reads goes, with its stores and what then does nothing (a producer
// computed for a consumer that a failed guard removed); storage read anywhere stays.
TEST_F(SimplifyStmtTest, StorageThatNothingReadsGoes) {
    Stmt produce = ProducerConsumer::make_produce(
        "tmp",
        For::make("i", 0, 8, ForType::Serial, store("tmp", Mul::make(x, var("i")), var("i"))));
    Stmt kept_store = store("out", y, x);
    Stmt unread = Allocate::make("tmp", Int(32), MemoryType::Heap, {Expr(8)},
                                 Block::make(produce, kept_store));
    EXPECT_TRUE(stmt_simplifies_to(unread, kept_store));
    EXPECT_FALSE(
        simplify(Allocate::make("tmp", Int(32), MemoryType::Heap, {Expr(8)}, produce)).defined());
    // Read by a load, by a store's value or index, through its address or its descriptor.
    Expr read = Load::make(Int(32), "tmp", 3, Expr());
    for (Stmt reader :
         {store("out", read, x), store("tmp", read, 4), store("tmp", 1, read),
          Evaluate::make(Call::make(Int(32), Intrinsic::runtime_error,
                                    {Variable::make(Handle(), "tmp")}, Call::Intrinsic)),
          Evaluate::make(Call::make(Int(32), Intrinsic::runtime_error,
                                    {Variable::make(Handle(), "tmp.buffer")}, Call::Intrinsic))}) {
        Stmt s = Allocate::make("tmp", Int(32), MemoryType::Heap, {Expr(8)},
                                Block::make(produce, reader));
        EXPECT_NE(simplify(s).as<Allocate>(), nullptr) << s;
    }
}

TEST_F(SimplifyStmtTest, UnchangedStatementsAreShared) {
    Stmt s = For::make("x", 0, var("n"), ForType::Serial, store("buf", x, x));
    EXPECT_TRUE(simplify(s).same_as(s));
}

// ---------------------------------------------------------------------------------------------
// Randomized checks against a reference evaluator

class RandomSimplifyTest : public ::testing::Test {
protected:
    std::vector<std::string> names = {"x", "y", "z"};
};

// Constants at the ends of the int32 range, against inputs at the ends too: the simplified
// expression takes the same value and overflows nowhere the original does not (subtracting
// INT_MIN, adding 7 to round up, the difference of x and INT_MIN in a comparison, and a
// product distributed over a sum whose scaled constant wraps each overflow where the original
// does not).
TEST_F(RandomSimplifyTest, ConstantsAtTheEndsOfTheRange) {
    const Expr x = Variable::make(Int(32), "x");
    const Expr lowest(INT32_MIN), highest(INT32_MAX);
    const std::vector<Expr> cases = {
        EQ::make(x, lowest),
        LE::make(x, lowest),
        LT::make(x, Add::make(lowest, 1)),
        EQ::make(x, highest),
        LT::make(highest, x),
        Mul::make(x, lowest),
        Select::make(LT::make(Add::make(x, lowest), 0), Expr(1), Expr(0)),
        Min::make(Add::make(x, lowest), 0),
        Mod::make(Sub::make(x, 1), 3),
        Add::make(Div::make(Sub::make(x, 1), 8), 1),
        Div::make(Sub::make(x, 9), 8),
        Sub::make(Mul::make(x, 2), lowest),
        Sub::make(Sub::make(x, lowest), 1),
        LT::make(Sub::make(x, lowest), 0),
        Mul::make(Sub::make(x, lowest), 2),
        Mul::make(Add::make(x, 1 << 30), 4),
    };
    for (const Expr &e : cases) {
        const Expr s = simplify(e);
        for (int64_t v :
             {int64_t(INT32_MIN), int64_t(INT32_MIN) + 1, int64_t(-9), int64_t(-1), int64_t(0),
              int64_t(1), int64_t(9), int64_t(INT32_MAX) - 1, int64_t(INT32_MAX)}) {
            aicf::test::Evaluator eval;
            eval.vars["x"] = v;
            const int64_t expected = eval(e);
            if (eval.overflow) continue;
            const int64_t got = eval(s);
            ASSERT_FALSE(eval.overflow)
                << "simplify introduced an overflow at x = " << v << ":\n  " << e << "\n  " << s;
            ASSERT_EQ(got, expected)
                << "x = " << v << "\n  original   " << e << "\n  simplified " << s;
        }
    }
}

TEST_F(RandomSimplifyTest, SimplifiedExpressionsEvaluateTheSame) {
    aicf::test::ExprGenerator gen(1234, names);
    std::mt19937 rng(99);
    std::uniform_int_distribution<int> value(-50, 50);
    int checked = 0;
    for (int i = 0; i < 4000; i++) {
        Expr e = i % 4 == 3 ? Select::make(gen.bool_expr(3), Expr(1), Expr(0)) : gen.int_expr(4);
        Expr s = simplify(e);
        for (int k = 0; k < 8; k++) {
            aicf::test::Evaluator eval;
            for (const std::string &n : names)
                eval.vars[n] = value(rng);
            int64_t expected = eval(e);
            if (eval.overflow) continue;
            eval.overflow = false;
            int64_t got = eval(s);
            ASSERT_FALSE(eval.overflow)
                << "simplify introduced an overflow:\n  " << e << "\n  " << s;
            ASSERT_EQ(got, expected)
                << "x=" << eval.vars["x"] << " y=" << eval.vars["y"] << " z=" << eval.vars["z"]
                << "\n  original   " << e << "\n  simplified " << s;
            checked++;
        }
    }
    EXPECT_GT(checked, 20000);
}

TEST_F(RandomSimplifyTest, SimplifyingWithBoundsIsExactInsideTheBounds) {
    aicf::test::ExprGenerator gen(777, names);
    std::mt19937 rng(5);
    int checked = 0, shrunk = 0;
    for (int i = 0; i < 3000; i++) {
        Scope<Interval> scope;
        std::map<std::string, std::pair<int, int>> range;
        for (const std::string &n : names) {
            int lo = gen.pick(-20, 20), hi = lo + gen.pick(0, 12);
            range[n] = {lo, hi};
            scope.push(n, Interval(Expr(lo), Expr(hi)));
        }
        Expr e = gen.int_expr(4);
        Expr s = simplify(e, scope);
        Expr plain = simplify(e);
        shrunk += !equal(s, plain);
        for (int k = 0; k < 8; k++) {
            aicf::test::Evaluator eval;
            for (const std::string &n : names) {
                eval.vars[n] =
                    std::uniform_int_distribution<int>(range[n].first, range[n].second)(rng);
            }
            int64_t expected = eval(e);
            if (eval.overflow) continue;
            ASSERT_EQ(eval(s), expected)
                << "x=" << eval.vars["x"] << " y=" << eval.vars["y"] << " z=" << eval.vars["z"]
                << "\n  original   " << e << "\n  simplified " << s;
            checked++;
        }
    }
    EXPECT_GT(checked, 15000);
    // The bounds must actually be used.
    EXPECT_GT(shrunk, 300);
}

TEST_F(RandomSimplifyTest, SymbolicBoundsAreExactInsideTheBounds) {
    // x in [0, n - 1], y in [n, n + 5], n and z free.
    aicf::test::ExprGenerator gen(4242, names);
    std::mt19937 rng(8);
    Expr n = var("n");
    Scope<Interval> scope;
    scope.push("x", Interval(Expr(0), Sub::make(n, 1)));
    scope.push("y", Interval(n, Add::make(n, 5)));
    int checked = 0, shrunk = 0;
    for (int i = 0; i < 2000; i++) {
        Expr e = gen.int_expr(4);
        Expr s = simplify(e, scope);
        shrunk += !equal(s, simplify(e));
        for (int k = 0; k < 8; k++) {
            aicf::test::Evaluator eval;
            int nv = std::uniform_int_distribution<int>(1, 30)(rng);
            eval.vars = {{"n", nv},
                         {"x", std::uniform_int_distribution<int>(0, nv - 1)(rng)},
                         {"y", std::uniform_int_distribution<int>(nv, nv + 5)(rng)},
                         {"z", std::uniform_int_distribution<int>(-50, 50)(rng)}};
            int64_t expected = eval(e);
            if (eval.overflow) continue;
            ASSERT_EQ(eval(s), expected)
                << "n=" << nv << " x=" << eval.vars["x"] << " y=" << eval.vars["y"]
                << " z=" << eval.vars["z"] << "\n  original   " << e << "\n  simplified " << s;
            checked++;
        }
    }
    EXPECT_GT(checked, 10000);
    EXPECT_GT(shrunk, 100);
}

TEST_F(RandomSimplifyTest, VectorExpressionsEvaluateTheSame) {
    aicf::test::ExprGenerator gen(555, names);
    std::mt19937 rng(21);
    std::uniform_int_distribution<int> value(-50, 50);
    int checked = 0;
    for (int i = 0; i < 1500; i++) {
        int stride = gen.pick(-3, 3), lanes = gen.pick(2, 5);
        Expr e = aicf::test::Vectorizer("x", stride, lanes).mutate(gen.int_expr(4));
        Expr s = simplify(e);
        ASSERT_EQ(s.type(), e.type()) << e << "\n" << s;
        for (int k = 0; k < 4; k++) {
            aicf::test::Evaluator eval;
            for (const std::string &n : names)
                eval.vars[n] = value(rng);
            for (int lane = 0; lane < lanes; lane++) {
                eval.lane = lane;
                eval.overflow = false;
                int64_t expected = eval(e);
                if (eval.overflow) continue;
                ASSERT_EQ(eval(s), expected)
                    << "lane " << lane << " x=" << eval.vars["x"] << " y=" << eval.vars["y"]
                    << " z=" << eval.vars["z"] << "\n  original   " << e << "\n  simplified " << s;
                checked++;
            }
        }
    }
    EXPECT_GT(checked, 10000);
}

TEST_F(RandomSimplifyTest, SimplifyIsIdempotent) {
    aicf::test::ExprGenerator gen(4321, names);
    int failures = 0;
    for (int i = 0; i < 2000; i++) {
        Expr e = gen.int_expr(4);
        Expr once = simplify(e), twice = simplify(once);
        if (!equal(once, twice)) {
            if (failures++ < 5) {
                ADD_FAILURE() << "not a fixed point:\n  " << once << "\n  " << twice;
            }
        }
    }
    EXPECT_EQ(failures, 0);
}

TEST(SimplifyPerformance, LargeTreesStayFast) {
    Expr x = var("x"), y = var("y");
    Expr sum = x;
    for (int i = 0; i < 300; i++)
        sum = Add::make(sum, Mul::make(y, i % 7));
    Expr nested = x;
    for (int i = 0; i < 60; i++) {
        nested = Min::make(Max::make(nested, Add::make(y, i)), Add::make(x, 100 - i));
    }
    // Chains the simplifier asks about at every step: sums whose coefficients leave int32's
    // range (so they never fold), and clamps of clamps. Each question used to walk the whole
    // chain below it, so that the time grew with the square of the chain's length.
    Expr wrapping = x;
    for (int i = 0; i < 3000; i++)
        wrapping = Add::make(Mul::make(wrapping, 3), i);
    Expr clamps = x;
    for (int i = 0; i < 1500; i++)
        clamps = Max::make(Min::make(Add::make(clamps, 1), 4000), i % 7);
    auto start = std::chrono::steady_clock::now();
    Expr s1 = simplify(Sub::make(sum, sum));
    Expr s2 = simplify(nested);
    Expr s3 = simplify(wrapping);
    Expr s4 = simplify(clamps);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_TRUE(equal(s1, Expr(0)));
    EXPECT_TRUE(s2.defined());
    // Both still compute what they did.
    for (int value : {-7, 0, 5, 3999}) {
        int32_t want = value;
        for (int i = 0; i < 3000; i++)
            want = int32_t(uint32_t(want) * 3u + uint32_t(i));
        EXPECT_TRUE(equal(simplify(substitute("x", Expr(value), s3)), Expr(want))) << value;
        int32_t clamped = value;
        for (int i = 0; i < 1500; i++)
            clamped = std::max(std::min(clamped + 1, 4000), i % 7);
        EXPECT_TRUE(equal(simplify(substitute("x", Expr(value), s4)), Expr(clamped))) << value;
    }
    EXPECT_LT(seconds, 2.0);
}

// The simplifier remembers the bounds of each node it has asked about, but only under the
// same bindings: the same node inside a let that rebinds one of its variables has other
// bounds, before and after the let.
TEST(SimplifyBounds, ASharedNodeUnderALetThatRebindsItsVariable) {
    Expr x = var("x"), y = var("y");
    Expr e = Add::make(x, 1); // one node, used inside and outside the let
    Expr small = LT::make(e, 50);
    Expr rebound = Let::make("x", Add::make(Mod::make(y, 4), 100), small);
    Scope<Interval> bounds = ranges({{"x", 0, 10}});
    // Outside, x + 1 < 50 holds; inside, x is 100 to 103 and it does not.
    EXPECT_TRUE(simplifies_to(And::make(small, rebound), const_false(), bounds));
    EXPECT_TRUE(simplifies_to(And::make(rebound, small), const_false(), bounds));
    EXPECT_TRUE(simplifies_to(Or::make(small, rebound), const_true(), bounds));
    EXPECT_TRUE(simplifies_to(Or::make(rebound, small), const_true(), bounds));
}

} // namespace
