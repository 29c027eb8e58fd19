#include "dsl/ir/Bounds.h"

#include "dsl/ir/DifferenceOfChains.h"
#include "dsl/ir/IREquality.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/Monotonic.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"
#include "random_expr.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

using namespace aicf::ir;

namespace {

Expr var(const std::string &name, Type t = Int(32)) {
    return Variable::make(t, name);
}

::testing::AssertionResult same_end(const char *which, const Expr &got, const Expr &expected) {
    if (!got.defined() && !expected.defined()) return ::testing::AssertionSuccess();
    if (got.defined() && expected.defined() && equal(got, expected)) {
        return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << which << " is " << got << ", expected " << expected;
}

::testing::AssertionResult has_bounds(const Expr &e, const Scope<Interval> &scope, const Expr &lo,
                                      const Expr &hi) {
    Interval i = bounds_of_expr_in_scope(e, scope);
    auto r = same_end("min", i.min, lo);
    if (r) r = same_end("max", i.max, hi);
    if (!r) r << " (bounds of " << e << ")";
    return r;
}

class BoundsTest : public ::testing::Test {
protected:
    Expr x = var("x"), y = var("y"), n = var("n");
    Expr fx = var("fx", Float(32));
    Expr u8 = var("u8", UInt(8));
    Scope<Interval> scope;

    void SetUp() override {
        scope.push("x", Interval(Expr(0), Expr(10)));
        scope.push("y", Interval(Expr(5), Expr(6)));
        scope.push("fx", Interval(Expr(0.0f), Expr(1.0f)));
    }
};

TEST_F(BoundsTest, ConstantsAndVariables) {
    EXPECT_TRUE(has_bounds(Expr(7), scope, Expr(7), Expr(7)));
    EXPECT_TRUE(has_bounds(x, scope, Expr(0), Expr(10)));
    // A variable not in scope is a symbol.
    EXPECT_TRUE(has_bounds(n, scope, n, n));
    EXPECT_TRUE(has_bounds(Add::make(n, 1), scope, Add::make(n, 1), Add::make(n, 1)));
    // An interval with one end.
    Scope<Interval> half;
    half.push("x", Interval(Expr(3), Expr()));
    EXPECT_TRUE(has_bounds(Add::make(x, 1), half, Expr(4), Expr()));
    EXPECT_TRUE(has_bounds(Sub::make(0, x), half, Expr(), Expr(-3)));
}

TEST_F(BoundsTest, AddSubMul) {
    EXPECT_TRUE(has_bounds(Add::make(x, y), scope, Expr(5), Expr(16)));
    EXPECT_TRUE(has_bounds(Sub::make(x, y), scope, Expr(-6), Expr(5)));
    EXPECT_TRUE(has_bounds(Mul::make(x, 3), scope, Expr(0), Expr(30)));
    EXPECT_TRUE(has_bounds(Mul::make(x, -2), scope, Expr(-20), Expr(0)));
    EXPECT_TRUE(has_bounds(Mul::make(-2, x), scope, Expr(-20), Expr(0)));
    Scope<Interval> s;
    s.push("x", Interval(Expr(-2), Expr(3)));
    s.push("y", Interval(Expr(-5), Expr(4)));
    EXPECT_TRUE(has_bounds(Mul::make(x, y), s, Expr(-15), Expr(12)));
    // Non-negative factors with one unbounded end.
    s.push("z", Interval(Expr(1), Expr()));
    EXPECT_TRUE(has_bounds(Mul::make(var("z"), Add::make(x, 2)), s, Expr(0), Expr()));
    Scope<Interval> unbounded;
    unbounded.push("x", Interval());
    EXPECT_TRUE(has_bounds(Mul::make(x, y), unbounded, Expr(), Expr()));
}

TEST_F(BoundsTest, DivAndMod) {
    Scope<Interval> s;
    s.push("x", Interval(Expr(-5), Expr(10)));
    s.push("y", Interval(Expr(1), Expr(4)));
    EXPECT_TRUE(has_bounds(Div::make(x, 4), s, Expr(-2), Expr(2)));
    EXPECT_TRUE(has_bounds(Div::make(x, -4), s, Expr(-2), Expr(2)));
    EXPECT_TRUE(has_bounds(Div::make(x, 0), s, Expr(0), Expr(0)));
    EXPECT_TRUE(has_bounds(Div::make(x, y), s, Expr(-5), Expr(10)));
    // Any divisor, including 0: |x / d| <= |x|.
    EXPECT_TRUE(has_bounds(Div::make(x, n), s, Expr(-10), Expr(10)));
    EXPECT_TRUE(has_bounds(Mod::make(x, 8), s, Expr(0), Expr(7)));
    EXPECT_TRUE(has_bounds(Mod::make(x, -8), s, Expr(0), Expr(7)));
    EXPECT_TRUE(has_bounds(Mod::make(y, 8), s, Expr(1), Expr(4)));
    EXPECT_TRUE(has_bounds(Mod::make(Add::make(y, 8), 8), s, Expr(1), Expr(4)));
    EXPECT_TRUE(has_bounds(Mod::make(n, y), s, Expr(0), Expr(3)));
    // A divisor known only at run time: the Euclidean remainder lies in [0, |d| - 1] (and
    // x % 0 is 0), within [0, x] for x >= 0.
    Expr size_of_n = Sub::make(Max::make(Call::make(Int(32), Intrinsic::abs, {n}), 1), 1);
    EXPECT_TRUE(has_bounds(Mod::make(n, n), s, Expr(0), size_of_n));
    Scope<Interval> sym;
    sym.push("x", Interval(Expr(0), n));
    Expr size_of_y = Sub::make(Max::make(Call::make(Int(32), Intrinsic::abs, {y}), 1), 1);
    EXPECT_TRUE(has_bounds(Mod::make(x, y), sym, Expr(0), Min::make(n, size_of_y)));
    EXPECT_TRUE(has_bounds(Div::make(x, 2), sym, Expr(0), Div::make(n, 2)));
    // Symbolic bounds of x survive a divisor of unknown sign, and of unknown size when it is
    // not negative: |x / d| <= |x|.
    EXPECT_TRUE(has_bounds(Div::make(x, y), sym, Sub::make(0, n), n));
    Scope<Interval> sym_d;
    sym_d.push("x", Interval(Expr(0), n));
    sym_d.push("y", Interval(Expr(0), Expr()));
    EXPECT_TRUE(has_bounds(Div::make(x, y), sym_d, Expr(0), n));
    Scope<Interval> signed_x;
    signed_x.push("x", Interval(Sub::make(0, n), Mul::make(n, 2)));
    signed_x.push("y", Interval(Expr(), Expr()));
    Expr m = Max::make(n, Mul::make(n, 2)); // max(-x.min, x.max): n's sign is not known
    EXPECT_TRUE(has_bounds(Div::make(x, y), signed_x, Sub::make(0, m), m));
}

TEST_F(BoundsTest, MinMaxSelect) {
    EXPECT_TRUE(has_bounds(Min::make(x, y), scope, Expr(0), Expr(6)));
    EXPECT_TRUE(has_bounds(Max::make(x, y), scope, Expr(5), Expr(10)));
    EXPECT_TRUE(has_bounds(Min::make(x, n), scope, Min::make(n, 0), Min::make(n, 10)));
    EXPECT_TRUE(
        has_bounds(Select::make(LT::make(n, 0), x, Add::make(y, 20)), scope, Expr(0), Expr(26)));
    Scope<Interval> half;
    half.push("x", Interval(Expr(), Expr(4)));
    EXPECT_TRUE(has_bounds(Min::make(x, 7), half, Expr(), Expr(4)));
    EXPECT_TRUE(has_bounds(Max::make(x, 7), half, Expr(7), Expr(7)));
}

// A branch of a select is bounded by what the condition says of an expression in it:
// select(x < 5, x + 16, x - 5) with x in [0, 10] is x + 16 in [16, 20] or x - 5 in [0, 5];
// from either side of the comparison, strict or not.
TEST_F(BoundsTest, SelectBranchesNarrowedByTheirCondition) {
    const Expr e = Mod::make(x, Expr(32));
    EXPECT_TRUE(has_bounds(Select::make(LT::make(x, 5), Add::make(x, 16), Sub::make(x, 5)), scope,
                           Expr(0), Expr(20)));
    EXPECT_TRUE(has_bounds(Select::make(LT::make(x, 5), Sub::make(x, 5), Add::make(x, 16)), scope,
                           Expr(-5), Expr(26)));
    EXPECT_TRUE(has_bounds(Select::make(LT::make(e, 16), Add::make(e, 16), Sub::make(e, 16)),
                           Scope<Interval>(), Expr(0), Expr(31)));
    EXPECT_TRUE(has_bounds(Select::make(GE::make(e, 16), Sub::make(e, 16), Add::make(e, 16)),
                           Scope<Interval>(), Expr(0), Expr(31)));
    EXPECT_TRUE(has_bounds(Select::make(LT::make(Expr(3), x), Sub::make(x, 4), Expr(0)), scope,
                           Expr(0), Expr(6)));
    EXPECT_TRUE(
        has_bounds(Select::make(LE::make(x, 4), x, Sub::make(x, 5)), scope, Expr(0), Expr(5)));
    // Narrow types wrap: no narrowing.
    const Expr b = var("b", UInt(8));
    EXPECT_TRUE(has_bounds(Select::make(LT::make(b, make_const(UInt(8), int64_t(16))),
                                        Add::make(b, make_const(UInt(8), int64_t(16))), b),
                           Scope<Interval>(), make_const(UInt(8), int64_t(0)),
                           make_const(UInt(8), int64_t(255))));
    // The compared value itself is bounded in any type: an index kept below a table's size.
    const Expr u = var("u", UInt(32)), u1000 = make_const(UInt(32), int64_t(1000));
    Scope<Interval> loaded; // a uint32 loaded from memory: any value
    loaded.push("u", Interval(make_zero(UInt(32)), make_const(UInt(32), int64_t(0xffffffffu))));
    loaded.push("b", Interval(make_zero(UInt(8)), make_const(UInt(8), int64_t(255))));
    EXPECT_TRUE(has_bounds(Select::make(LT::make(u, u1000), u, make_zero(UInt(32))), loaded,
                           make_zero(UInt(32)), make_const(UInt(32), int64_t(999))));
    EXPECT_TRUE(has_bounds(Select::make(GE::make(u, u1000), make_zero(UInt(32)), u), loaded,
                           make_zero(UInt(32)), make_const(UInt(32), int64_t(999))));
    EXPECT_TRUE(has_bounds(Select::make(LT::make(b, make_const(UInt(8), int64_t(16))), b,
                                        make_const(UInt(8), int64_t(3))),
                           loaded, make_zero(UInt(8)), make_const(UInt(8), int64_t(15))));
}

TEST_F(BoundsTest, ComparisonsAndLogic) {
    Expr t = const_true(), f = const_false();
    EXPECT_TRUE(has_bounds(LT::make(x, 20), scope, t, t));
    EXPECT_TRUE(has_bounds(LT::make(x, 5), scope, f, t));
    EXPECT_TRUE(has_bounds(GT::make(x, 100), scope, f, f));
    EXPECT_TRUE(has_bounds(LE::make(x, 10), scope, t, t));
    EXPECT_TRUE(has_bounds(GE::make(y, 5), scope, t, t));
    EXPECT_TRUE(has_bounds(EQ::make(x, 11), scope, f, f));
    EXPECT_TRUE(has_bounds(NE::make(x, 11), scope, t, t));
    EXPECT_TRUE(has_bounds(And::make(LT::make(x, 20), LT::make(x, 5)), scope, f, t));
    EXPECT_TRUE(has_bounds(And::make(LT::make(x, 20), GT::make(x, 50)), scope, f, f));
    EXPECT_TRUE(has_bounds(Or::make(LT::make(x, 20), LT::make(x, 5)), scope, t, t));
    EXPECT_TRUE(has_bounds(Not::make(LT::make(x, 20)), scope, f, f));
}

TEST_F(BoundsTest, Casts) {
    // A narrow variable not in scope is a symbol; one with an unknown range has the type's.
    EXPECT_TRUE(has_bounds(u8, scope, u8, u8));
    EXPECT_TRUE(has_bounds(Cast::make(Int(32), u8), scope, Cast::make(Int(32), u8),
                           Cast::make(Int(32), u8)));
    scope.push("u8", Interval());
    EXPECT_TRUE(has_bounds(u8, scope, Expr(uint8_t(0)), Expr(uint8_t(255))));
    EXPECT_TRUE(has_bounds(Cast::make(Int(32), u8), scope, Expr(0), Expr(255)));
    EXPECT_TRUE(has_bounds(Cast::make(Int(64), x), scope, Expr(int64_t(0)), Expr(int64_t(10))));
    EXPECT_TRUE(has_bounds(Cast::make(UInt(8), x), scope, Expr(uint8_t(0)), Expr(uint8_t(10))));
    Scope<Interval> wide;
    wide.push("x", Interval(Expr(0), Expr(300)));
    EXPECT_TRUE(has_bounds(Cast::make(UInt(8), x), wide, Expr(uint8_t(0)), Expr(uint8_t(255))));
    EXPECT_TRUE(has_bounds(Cast::make(Int(32), fx), scope, Expr(0), Expr(1)));
    EXPECT_TRUE(has_bounds(Cast::make(Float(32), x), scope, Expr(0.0f), Expr(10.0f)));
    // Float to int32 of an unknown float: nothing is known.
    scope.push("g", Interval());
    EXPECT_TRUE(has_bounds(Cast::make(Int(32), var("g", Float(32))), scope, Expr(), Expr()));
    EXPECT_TRUE(has_bounds(Cast::make(Int(16), var("g", Float(32))), scope, Expr(int16_t(-32768)),
                           Expr(int16_t(32767))));
}

// A float converted to an integer: symbolic ends carry over where every value is a finite
// number (the code generators round such arithmetic as written, as the ends are); a value
// that may be NaN converts to 0.
TEST_F(BoundsTest, FloatsConvertedToIntegers) {
    Scope<Interval> s;
    Expr a = var("a"), b = var("b");
    s.push("x", Interval(a, b));
    auto at = [&](const Expr &e, const Expr &v) { return simplify(Let::make("x", v, e)); };
    // floor(x * 1.5f): the ends are the expression at x's ends.
    Expr scaled = Cast::make(Int(32), Call::make(Float(32), Intrinsic::floor,
                                                 {Mul::make(Cast::make(Float(32), x), 1.5f)}));
    Interval i = bounds_of_expr_in_scope(scaled, s);
    ASSERT_TRUE(i.is_bounded()) << scaled;
    EXPECT_TRUE(equal(simplify(i.min), at(scaled, a))) << i.min << " vs " << at(scaled, a);
    EXPECT_TRUE(equal(simplify(i.max), at(scaled, b))) << i.max;
    // The same through a division by a constant, a min and a let.
    Expr halved = Let::make("h", Div::make(Cast::make(Float(32), x), 2.0f),
                            Cast::make(Int(32), Min::make(var("h", Float(32)), 100.0f)));
    EXPECT_TRUE(bounds_of_expr_in_scope(halved, s).is_bounded()) << halved;
    // A multiply-add is rounded twice in the loop as in the bound: the ends are exact,
    // symbolic or constant, in a narrow type too (the conversion saturates).
    Expr madd = Cast::make(Int(32), Add::make(Mul::make(Cast::make(Float(32), x), 1.5f), 0.5f));
    EXPECT_TRUE(has_bounds(madd, s, at(madd, a), at(madd, b)));
    EXPECT_TRUE(has_bounds(madd, scope, Expr(0), Expr(15)));
    Expr narrow = Cast::make(UInt(8), Add::make(Mul::make(Cast::make(Float(32), x), 1.5f), 0.5f));
    EXPECT_TRUE(has_bounds(narrow, s, at(narrow, a), at(narrow, b)));
    // tanh of an unknown float is in [-1, 1] unless it is NaN, which converts to 0.
    Expr g = var("g", Float(32));
    scope.push("g", Interval());
    Expr t = Call::make(Float(32), Intrinsic::tanh, {g});
    EXPECT_TRUE(has_bounds(Cast::make(Int(32), Max::make(Mul::make(t, 10.0f), 5.0f)), scope,
                           Expr(0), Expr(10)));
    EXPECT_TRUE(has_bounds(Cast::make(Int(32), Add::make(Mul::make(t, 10.0f), 20.0f)), scope,
                           Expr(0), Expr(30)));
    // A product that may overflow to infinity (and to NaN, times zero) is not bounded.
    Expr huge = Mul::make(Mul::make(Cast::make(Float(32), x), 1e30f), 1e30f);
    EXPECT_TRUE(has_bounds(Cast::make(Int(32), huge), s, Expr(), Expr()));
}

TEST_F(BoundsTest, NarrowTypesAndWrapAround) {
    Expr a = var("a", UInt(8));
    Scope<Interval> s;
    s.push("a", Interval(Expr(uint8_t(0)), Expr(uint8_t(100))));
    EXPECT_TRUE(has_bounds(Add::make(a, a), s, Expr(uint8_t(0)), Expr(uint8_t(200))));
    // 200 + 100 wraps in uint8, so only the type's range is known.
    Scope<Interval> high;
    high.push("a", Interval(Expr(uint8_t(200)), Expr(uint8_t(255))));
    EXPECT_TRUE(
        has_bounds(Add::make(a, Expr(uint8_t(100))), high, Expr(uint8_t(0)), Expr(uint8_t(255))));
    EXPECT_TRUE(
        has_bounds(Sub::make(a, Expr(uint8_t(100))), high, Expr(uint8_t(100)), Expr(uint8_t(155))));
    Expr i16 = var("i16", Int(16)), u32 = var("u32", UInt(32));
    s.push("i16", Interval());
    s.push("u32", Interval());
    EXPECT_TRUE(has_bounds(i16, s, Expr(int16_t(-32768)), Expr(int16_t(32767))));
    EXPECT_TRUE(has_bounds(u32, s, Expr(uint32_t(0)), Expr()));
}

TEST_F(BoundsTest, LoadsAndCalls) {
    EXPECT_TRUE(has_bounds(Load::make(UInt(8), "in", x, Expr()), scope, Expr(uint8_t(0)),
                           Expr(uint8_t(255))));
    EXPECT_TRUE(has_bounds(Load::make(Int(32), "in", x, Expr()), scope, Expr(), Expr()));
    EXPECT_TRUE(has_bounds(Load::make(Float(32), "in", x, Expr()), scope, Expr(), Expr()));
    Expr f = Call::make_func(Bool(), "f", {x}, FunctionPtr(), 0);
    EXPECT_TRUE(has_bounds(f, scope, const_false(), const_true()));
    Expr img = Call::make_image(Int(16), "img", {x}, Parameter());
    EXPECT_TRUE(has_bounds(img, scope, Expr(int16_t(-32768)), Expr(int16_t(32767))));

    Scope<Interval> s;
    s.push("x", Interval(Expr(-7), Expr(3)));
    auto abs = [](Expr e) { return Call::make(e.type(), Intrinsic::abs, {e}); };
    EXPECT_TRUE(has_bounds(abs(x), s, Expr(0), Expr(7)));
    EXPECT_TRUE(has_bounds(abs(Add::make(x, 10)), s, Expr(3), Expr(13)));
    EXPECT_TRUE(has_bounds(abs(Sub::make(x, 10)), s, Expr(7), Expr(17)));
    EXPECT_TRUE(has_bounds(abs(n), s, Expr(0), Max::make(n, Sub::make(0, n))));
    // Unbounded below (data): abs(-2^31) is -2^31, so nothing is known.
    s.push("n", Interval());
    EXPECT_TRUE(has_bounds(abs(n), s, Expr(), Expr()));
    Expr mask = Call::make(Int(32), Intrinsic::bitwise_and, {n, Expr(15)});
    EXPECT_TRUE(has_bounds(mask, s, Expr(0), Expr(15)));
    Expr fl = Call::make(Float(32), Intrinsic::floor, {Mul::make(fx, Expr(2.5f))});
    EXPECT_TRUE(has_bounds(fl, scope, Expr(0.0f), Expr(2.0f)));
    Expr th = Call::make(Float(32), Intrinsic::tanh, {var("g", Float(32))});
    EXPECT_TRUE(has_bounds(th, scope, Expr(-1.0f), Expr(1.0f)));
}

TEST_F(BoundsTest, RampsBroadcastsAndLets) {
    EXPECT_TRUE(has_bounds(Ramp::make(x, 2, 4), scope, Expr(0), Expr(16)));
    EXPECT_TRUE(has_bounds(Ramp::make(x, -1, 4), scope, Expr(-3), Expr(10)));
    EXPECT_TRUE(has_bounds(Ramp::make(x, y, 3), scope, Expr(0), Expr(22)));
    EXPECT_TRUE(has_bounds(Broadcast::make(y, 8), scope, Expr(5), Expr(6)));
    Expr t = var("t");
    EXPECT_TRUE(
        has_bounds(Let::make("t", Mul::make(x, 2), Add::make(t, 1)), scope, Expr(1), Expr(21)));
    // The let variable never escapes: it is replaced by its value's bounds.
    EXPECT_TRUE(
        has_bounds(Let::make("t", n, Add::make(t, 1)), scope, Add::make(n, 1), Add::make(n, 1)));
    // A let shadows a variable of the scope.
    EXPECT_TRUE(has_bounds(Let::make("x", Expr(100), x), scope, Expr(100), Expr(100)));
}

TEST_F(BoundsTest, Floats) {
    Expr e = Add::make(Mul::make(fx, Expr(2.0f)), Expr(1.0f));
    EXPECT_TRUE(has_bounds(e, scope, Expr(1.0f), Expr(3.0f)));
    EXPECT_TRUE(has_bounds(Div::make(fx, Expr(2.0f)), scope, Expr(0.0f), Expr(0.5f)));
    EXPECT_TRUE(has_bounds(Mul::make(fx, Expr(-1.0f)), scope, Expr(-1.0f), Expr(-0.0f)));
    Expr g = var("g", Float(32));
    EXPECT_TRUE(has_bounds(Mul::make(fx, g), scope, Expr(), Expr()));
    EXPECT_TRUE(has_bounds(Div::make(Expr(1.0f), fx), scope, Expr(), Expr()));
    EXPECT_TRUE(has_bounds(Min::make(fx, Expr(0.5f)), scope, Expr(0.0f), Expr(0.5f)));
    // A float remainder is near [0, y) only for dividends within 2^20 * y (each step rounds:
    // 2.4e8 % 3 is 16), and a product by zero is zero only for finite factors (inf * 0 is NaN).
    EXPECT_TRUE(has_bounds(Mod::make(g, Expr(3.0f)), scope, Expr(), Expr()));
    EXPECT_TRUE(has_bounds(Mod::make(fx, Expr(3.0f)), scope, Expr(-6.0f), Expr(9.0f)));
    EXPECT_TRUE(has_bounds(Mul::make(g, Expr(0.0f)), scope, Expr(), Expr()));
    EXPECT_TRUE(has_bounds(Mul::make(fx, Expr(0.0f)), scope, Expr(0.0f), Expr(0.0f)));
}

TEST_F(BoundsTest, SymbolicIntervals) {
    Scope<Interval> s;
    s.push("x", Interval(Expr(0), Sub::make(n, 1)));
    EXPECT_TRUE(has_bounds(Add::make(x, 1), s, Expr(1), n));
    EXPECT_TRUE(has_bounds(Mul::make(x, 2), s, Expr(0), Sub::make(Mul::make(n, 2), 2)));
    EXPECT_TRUE(has_bounds(Sub::make(x, n), s, Sub::make(0, n), Expr(-1)));
    // Results are simplified.
    Interval i = bounds_of_expr_in_scope(Sub::make(Add::make(x, 5), x), s);
    EXPECT_TRUE(equal(i.min, Sub::make(6, n))) << i.min;
    EXPECT_TRUE(equal(i.max, Add::make(n, 4))) << i.max;
}

TEST_F(BoundsTest, EndsNearTheTypeLimitsAreDroppedNotWrapped) {
    Scope<Interval> s;
    s.push("x", Interval(Expr(0), Expr(INT32_MAX - 1)));
    // max would be n + 2147483651, which int32 cannot hold.
    Interval i = bounds_of_expr_in_scope(Add::make(Add::make(x, n), 5), s);
    EXPECT_TRUE(equal(i.min, Add::make(n, 5))) << i.min;
    EXPECT_FALSE(i.max.defined()) << i.max;
    // Constant ends are combined exactly and limited to the type.
    EXPECT_TRUE(has_bounds(Mul::make(x, 4), s, Expr(0), Expr(INT32_MAX)));
}

// ---------------------------------------------------------------------------------------------
// Interval helpers

TEST(IntervalTest, UnionAndIntersection) {
    Expr x = var("x");
    Interval a(Expr(0), Expr(10)), b(Expr(5), Expr(20)), up(Expr(3), Expr());
    Interval u = interval_union(a, b);
    EXPECT_TRUE(equal(u.min, Expr(0)) && equal(u.max, Expr(20)));
    Interval i = interval_intersection(a, b);
    EXPECT_TRUE(equal(i.min, Expr(5)) && equal(i.max, Expr(10)));
    // Unbounded on either side stays unbounded in a union ...
    Interval ua = interval_union(a, up);
    EXPECT_TRUE(equal(ua.min, Expr(0)));
    EXPECT_FALSE(ua.max.defined());
    EXPECT_FALSE(interval_union(a, Interval::everything()).min.defined());
    // ... and gives way to the other side in an intersection.
    Interval ia = interval_intersection(a, up);
    EXPECT_TRUE(equal(ia.min, Expr(3)) && equal(ia.max, Expr(10)));
    // Symbolic ends are combined with min/max and simplified.
    Interval sym = interval_union(Interval(x, Add::make(x, 4)), Interval(Add::make(x, 1), x));
    EXPECT_TRUE(equal(sym.min, x));
    EXPECT_TRUE(equal(sym.max, Add::make(x, 4)));
    Interval p = Interval::single_point(x);
    EXPECT_TRUE(interval_union(p, p).is_single_point());
}

TEST(IntervalTest, BoxUnion) {
    Box a = {Interval(Expr(0), Expr(9)), Interval(Expr(0), Expr(3))};
    Box b = {Interval(Expr(5), Expr(14)), Interval(Expr(-2), Expr())};
    Box u = box_union(a, b);
    ASSERT_EQ(u.size(), 2u);
    EXPECT_TRUE(equal(u[0].min, Expr(0)) && equal(u[0].max, Expr(14)));
    EXPECT_TRUE(equal(u[1].min, Expr(-2)));
    EXPECT_FALSE(u[1].max.defined());
    EXPECT_EQ(box_union(Box(), a).size(), 2u);
    EXPECT_EQ(box_union(a, Box()).size(), 2u);
}

// ---------------------------------------------------------------------------------------------
// Randomized: the bounds contain every value the expression takes

TEST(RandomBoundsTest, BoundsContainEveryValue) {
    std::vector<std::string> names = {"x", "y", "z"};
    aicf::test::ExprGenerator gen(2024, names);
    std::mt19937 rng(11);
    int checked = 0, bounded = 0;
    for (int i = 0; i < 3000; i++) {
        Scope<Interval> scope;
        std::map<std::string, std::pair<int, int>> range;
        for (const std::string &n : names) {
            int lo = gen.pick(-30, 30), hi = lo + gen.pick(0, 15);
            range[n] = {lo, hi};
            scope.push(n, Interval(Expr(lo), Expr(hi)));
        }
        Expr e = gen.int_expr(4);
        Interval b = bounds_of_expr_in_scope(e, scope);
        ASSERT_TRUE(!b.min.defined() || as_const_int(b.min)) << e << " has min " << b.min;
        ASSERT_TRUE(!b.max.defined() || as_const_int(b.max)) << e << " has max " << b.max;
        bounded += b.is_bounded();
        for (int k = 0; k < 8; k++) {
            aicf::test::Evaluator eval;
            for (const std::string &n : names) {
                eval.vars[n] =
                    std::uniform_int_distribution<int>(range[n].first, range[n].second)(rng);
            }
            int64_t v = eval(e);
            if (eval.overflow) continue;
            checked++;
            if (b.min.defined()) {
                ASSERT_LE(*as_const_int(b.min), v)
                    << e << " at x=" << eval.vars["x"] << " y=" << eval.vars["y"]
                    << " z=" << eval.vars["z"];
            }
            if (b.max.defined()) {
                ASSERT_GE(*as_const_int(b.max), v)
                    << e << " at x=" << eval.vars["x"] << " y=" << eval.vars["y"]
                    << " z=" << eval.vars["z"];
            }
        }
    }
    EXPECT_GT(checked, 15000);
    // Bounded variables give bounded results nearly always.
    EXPECT_GT(bounded, 2700);
}

TEST(RandomBoundsTest, VectorBoundsContainEveryLane) {
    std::vector<std::string> names = {"x", "y", "z"};
    aicf::test::ExprGenerator gen(99, names);
    std::mt19937 rng(12);
    Scope<Interval> scope;
    for (const std::string &n : names)
        scope.push(n, Interval(Expr(-10), Expr(10)));
    int checked = 0;
    for (int i = 0; i < 1000; i++) {
        int stride = gen.pick(-3, 3), lanes = gen.pick(2, 6);
        Expr e = aicf::test::Vectorizer("x", stride, lanes).mutate(gen.int_expr(3));
        Interval b = bounds_of_expr_in_scope(e, scope);
        ASSERT_TRUE(!b.min.defined() || as_const_int(b.min)) << e << " has min " << b.min;
        ASSERT_TRUE(!b.max.defined() || as_const_int(b.max)) << e << " has max " << b.max;
        for (int k = 0; k < 4; k++) {
            aicf::test::Evaluator eval;
            for (const std::string &n : names) {
                eval.vars[n] = std::uniform_int_distribution<int>(-10, 10)(rng);
            }
            for (int lane = 0; lane < lanes; lane++) {
                eval.lane = lane;
                eval.overflow = false;
                int64_t v = eval(e);
                if (eval.overflow) continue;
                checked++;
                if (b.min.defined()) {
                    ASSERT_LE(*as_const_int(b.min), v) << e << " lane " << lane;
                }
                if (b.max.defined()) {
                    ASSERT_GE(*as_const_int(b.max), v) << e << " lane " << lane;
                }
            }
        }
    }
    EXPECT_GT(checked, 8000);
}

// x in [0, n - 1] and y in [n, n + 5], with n a free symbol: the bounds `bound` gives each of
// 1500 expressions from `make` contain its value at 8 random points.
void expect_symbolic_bounds_contain_every_value(
    const std::function<Expr(aicf::test::ExprGenerator &, std::mt19937 &)> &make,
    const std::function<Interval(const Expr &, const Scope<Interval> &)> &bound) {
    std::vector<std::string> names = {"x", "y"};
    aicf::test::ExprGenerator gen(31337, names);
    std::mt19937 rng(3);
    Expr n = var("n");
    Scope<Interval> scope;
    scope.push("x", Interval(Expr(0), Sub::make(n, 1)));
    scope.push("y", Interval(n, Add::make(n, 5)));
    int checked = 0;
    for (int i = 0; i < 1500; i++) {
        Expr e = make(gen, rng);
        Interval b = bound(e, scope);
        for (int k = 0; k < 8; k++) {
            aicf::test::Evaluator eval;
            int64_t nv = std::uniform_int_distribution<int>(1, 30)(rng);
            eval.vars["n"] = nv;
            eval.vars["x"] = std::uniform_int_distribution<int>(0, int(nv) - 1)(rng);
            eval.vars["y"] = std::uniform_int_distribution<int>(int(nv), int(nv) + 5)(rng);
            int64_t v = eval(e);
            if (eval.overflow) continue;
            checked++;
            if (b.min.defined()) {
                int64_t lo = eval(b.min);
                ASSERT_LE(lo, v) << e << " has min " << b.min << " at n=" << nv
                                 << " x=" << eval.vars["x"] << " y=" << eval.vars["y"];
            }
            if (b.max.defined()) {
                int64_t hi = eval(b.max);
                ASSERT_GE(hi, v) << e << " has max " << b.max << " at n=" << nv
                                 << " x=" << eval.vars["x"] << " y=" << eval.vars["y"];
            }
        }
    }
    EXPECT_GT(checked, 8000);
}

TEST(RandomBoundsTest, SymbolicBoundsContainEveryValue) {
    expect_symbolic_bounds_contain_every_value(
        [](aicf::test::ExprGenerator &gen, std::mt19937 &) { return gen.int_expr(3); },
        [](const Expr &e, const Scope<Interval> &s) { return bounds_of_expr_in_scope(e, s); });
}

// Sums with a rounded-down multiple of a quotient, p + k * (min(q, r) / c) * c, bounded in
// both forms: the tighter ends still contain every value.
TEST(RandomBoundsTest, BoundsWithRemaindersContainEveryValue) {
    expect_symbolic_bounds_contain_every_value(
        [](aicf::test::ExprGenerator &gen, std::mt19937 &rng) {
            int c = std::uniform_int_distribution<int>(2, 9)(rng);
            int k = std::uniform_int_distribution<int>(-2, 2)(rng);
            Expr q = Min::make(gen.int_expr(2), gen.int_expr(1));
            Expr p = gen.int_expr(2);
            return Add::make(
                p, Mul::make(Div::make(Add::make(q, Sub::make(Expr(0), p)), c), (k ? k : 1) * c));
        },
        [](const Expr &e, const Scope<Interval> &s) {
            return bounds_of_expr_in_scope_with_remainders(e, s);
        });
}

TEST_F(BoundsTest, MonotonicThroughSumsQuotientsMinsAndMaxes) {
    EXPECT_EQ(is_monotonic(Add::make(Mul::make(x, 8), y), "x"), Monotonic::Increasing);
    EXPECT_EQ(is_monotonic(y, "x"), Monotonic::Constant);
    // The tile index of a shifted split: min(n - 8x - 1, 7) / 72 falls as x grows.
    Expr tile = Div::make(Min::make(Sub::make(Sub::make(n, Mul::make(x, 8)), 1), 7), 72);
    EXPECT_EQ(is_monotonic(tile, "x"), Monotonic::Decreasing);
    EXPECT_EQ(is_monotonic(Div::make(x, -3), "x"), Monotonic::Decreasing);
    EXPECT_EQ(is_monotonic(Max::make(Mul::make(x, -2), Sub::make(y, x)), "x"),
              Monotonic::Decreasing);
    EXPECT_EQ(is_monotonic(Cast::make(Int(64), x), "x"), Monotonic::Increasing);
    // Mixed directions, products of the variable, remainders and narrowing casts are unknown.
    EXPECT_EQ(is_monotonic(Add::make(x, tile), "x"), Monotonic::Unknown);
    EXPECT_EQ(is_monotonic(Mul::make(x, y), "x"), Monotonic::Unknown);
    EXPECT_EQ(is_monotonic(Mod::make(x, 4), "x"), Monotonic::Unknown);
    EXPECT_EQ(is_monotonic(Cast::make(Int(8), x), "x"), Monotonic::Unknown);
}

// Random expressions that is_monotonic calls increasing or decreasing in x move that way
// between x and x + 1 at random points.
TEST(RandomBoundsTest, MonotonicExpressionsMoveOneWay) {
    std::vector<std::string> names = {"x", "y"};
    aicf::test::ExprGenerator gen(4242, names);
    std::mt19937 rng(5);
    int checked = 0, classified = 0;
    for (int i = 0; i < 3000; i++) {
        Expr e = gen.int_expr(3);
        Monotonic m = is_monotonic(e, "x");
        if (m != Monotonic::Increasing && m != Monotonic::Decreasing) continue;
        classified++;
        for (int k = 0; k < 8; k++) {
            aicf::test::Evaluator at, next;
            int xv = std::uniform_int_distribution<int>(-50, 50)(rng);
            int yv = std::uniform_int_distribution<int>(-50, 50)(rng);
            at.vars = {{"x", xv}, {"y", yv}};
            next.vars = {{"x", xv + 1}, {"y", yv}};
            int64_t a = at(e), b = next(e);
            if (at.overflow || next.overflow) continue;
            checked++;
            if (m == Monotonic::Increasing)
                ASSERT_LE(a, b) << e << " at x = " << xv << ", y = " << yv;
            else
                ASSERT_GE(a, b) << e << " at x = " << xv << ", y = " << yv;
        }
    }
    EXPECT_GT(classified, 300);
    EXPECT_GT(checked, 2000);
}

// The start of a tile plus its extent clamped to 18 and rounded down to 8 ends at the end of
// the region, not at the largest start plus 16; where the start is a single value the
// quotient form keeps its exact end.
TEST_F(BoundsTest, RoundedDownTileEndsWithTheRegion) {
    Expr t = var("t"), e = var("e");
    Expr end = Add::make(t, Mul::make(Div::make(Min::make(Sub::make(e, t), 18), 8), 8));
    Scope<Interval> over;
    over.push("t", Interval(Expr(0), Expr(29)));
    over.push("e", Interval(Expr(28), Expr(28)));
    EXPECT_TRUE(equal(simplify(bounds_of_expr_in_scope(end, over).max), Expr(45)));
    Interval b = bounds_of_expr_in_scope_with_remainders(end, over);
    EXPECT_TRUE(equal(simplify(b.max), Expr(28))) << b.max;
    Scope<Interval> point;
    point.push("t", Interval::single_point(Expr(24)));
    point.push("e", Interval::single_point(Expr(28)));
    Interval p = bounds_of_expr_in_scope_with_remainders(end, point);
    EXPECT_TRUE(equal(simplify(p.max), Expr(24)) && equal(simplify(p.min), Expr(24)))
        << p.min << " " << p.max;
    EXPECT_FALSE(quotients_as_remainders(Add::make(t, Mul::make(Div::make(e, 8), 4))).defined());
}

// Two windows clamped alike differ by at most their offset, wherever they lie: the extent of
// a clamped region has a constant bound even where its position is a symbol (n here).
TEST_F(BoundsTest, ClampedWindowsOfOneSizeDifferByTheirOffset) {
    auto clamp_at = [&](int offset) {
        return Min::make(Max::make(Add::make(Mul::make(n, 8), offset), 0), 29);
    };
    auto has_range = [](const DifferenceRange &r, std::optional<int64_t> lo,
                        std::optional<int64_t> hi) { return r.lo == lo && r.hi == hi; };
    EXPECT_TRUE(has_range(difference_of_chains(clamp_at(8), clamp_at(-1)), 0, 9));
    EXPECT_TRUE(has_range(difference_of_chains(clamp_at(-1), clamp_at(3)), -4, 0));
    // Operands in either order, and a symbolic bound shared by both.
    Expr crossed = Max::make(0, Min::make(n, Add::make(y, 3)));
    Expr plain = Max::make(Min::make(y, n), 0);
    EXPECT_TRUE(has_range(difference_of_chains(crossed, plain), 0, 3));
    // Bounds that differ by a constant widen the range by it.
    Expr wider = Min::make(Max::make(Mul::make(n, 8), 0), 30);
    EXPECT_TRUE(has_range(difference_of_chains(clamp_at(8), wider), -1, 8));
    // Chains of different lengths: a window's end less its start, min(t, t + 1, e).
    Expr t = var("t"), e = var("e");
    EXPECT_TRUE(has_range(difference_of_chains(Min::make(Add::make(t, 31), e),
                                               Min::make(t, Min::make(Add::make(t, 1), e))),
                          0, 31));
    // Bounds or values not a constant apart: no constant bound.
    Expr other = Min::make(Max::make(Mul::make(n, 8), 0), var("m"));
    EXPECT_FALSE(difference_of_chains(clamp_at(8), other).hi.has_value());
    Expr unclamped = Add::make(Mul::make(n, 9), 1);
    EXPECT_FALSE(difference_of_chains(clamp_at(8), unclamped).hi.has_value());
    // Interval arithmetic uses it only for ends it would leave unbounded: with n a symbol the
    // difference is its own exact bound; with a bound e that may be anything, [0, 8].
    Expr diff = Sub::make(clamp_at(8), clamp_at(-1));
    Interval exact = bounds_of_expr_in_scope(diff, scope);
    EXPECT_TRUE(exact.is_single_point() && !is_const(exact.min));
    Scope<Interval> open;
    open.push("e", Interval());
    EXPECT_TRUE(has_bounds(Sub::make(Min::make(Add::make(n, 8), e), Min::make(n, e)), open, Expr(0),
                           Expr(8)));
    // Every value lies in the range.
    for (int v = -20; v < 20; v++) {
        Expr d = simplify(substitute("n", Expr(v), diff));
        ASSERT_TRUE(as_const_int(d) && *as_const_int(d) >= 0 && *as_const_int(d) <= 9) << v;
    }
}

// Quotients by one positive constant differ by their dividends' difference over it, rounded
// outwards: a region read through x / 2 has a constant extent bound wherever it starts.
TEST_F(BoundsTest, QuotientsOfValuesAConstantApart) {
    Expr e = var("e"), t = var("t");
    auto has_range = [](const DifferenceRange &r, std::optional<int64_t> lo,
                        std::optional<int64_t> hi) { return r.lo == lo && r.hi == hi; };
    auto quotient = [](const Expr &a, int d) { return Div::make(a, Expr(d)); };
    EXPECT_TRUE(
        has_range(difference_of_chains(quotient(Add::make(e, 1), 2), quotient(e, 2)), 0, 1));
    EXPECT_TRUE(
        has_range(difference_of_chains(quotient(Add::make(e, 31), 16), quotient(e, 16)), 1, 2));
    EXPECT_TRUE(
        has_range(difference_of_chains(quotient(Add::make(e, 32), 16), quotient(e, 16)), 2, 2));
    EXPECT_TRUE(
        has_range(difference_of_chains(quotient(Sub::make(e, 5), 4), quotient(e, 4)), -2, -1));
    // Through min chains in the dividends: a clamped window's ends.
    EXPECT_TRUE(has_range(difference_of_chains(quotient(Min::make(Add::make(t, 31), e), 4),
                                               quotient(Min::make(t, e), 4)),
                          0, 8));
    // Other divisors, or dividends not a constant apart: no range.
    EXPECT_FALSE(difference_of_chains(quotient(Add::make(e, 1), 2), quotient(e, 4)).hi);
    EXPECT_FALSE(difference_of_chains(quotient(Add::make(e, 1), -2), quotient(e, -2)).hi);
    EXPECT_FALSE(difference_of_chains(quotient(Mul::make(e, 2), 2), quotient(e, 2)).hi);
    // Interval arithmetic, with e anything; and every value in the range.
    Scope<Interval> open;
    open.push("e", Interval());
    Expr diff = Sub::make(quotient(Add::make(e, 31), 16), quotient(e, 16));
    EXPECT_TRUE(has_bounds(diff, open, Expr(1), Expr(2)));
    // As the simplifier writes a region's start (b * 16 + m) / 2: b * 8 + m / 2. The end
    // min(b * 16 + m + 15, nn) / 2 less it, with nn anything, is at most 8 (interval
    // arithmetic alone gave 15).
    Expr b = var("b"), m = var("m"), nn = var("nn");
    open.push("b", Interval());
    open.push("m", Interval());
    open.push("nn", Interval());
    Expr start = Add::make(Mul::make(b, 8), quotient(m, 2));
    Expr end = quotient(Min::make(Add::make(Add::make(Mul::make(b, 16), m), 15), nn), 2);
    Interval span = bounds_of_expr_in_scope(Sub::make(end, start), open);
    EXPECT_TRUE(span.has_upper_bound() && equal(simplify(span.max), Expr(8))) << span.max;
    // One quotient: min(b * 8 + 7, nn) / 4 - b * 2 is floor((min(b * 8 + 7, nn) - b * 8) / 4),
    // at most 1; b * 2 less it is a ceiling, at least -1.
    Expr q = quotient(Min::make(Add::make(Mul::make(b, 8), 7), nn), 4);
    Interval one = bounds_of_expr_in_scope(Sub::make(q, Mul::make(b, 2)), open);
    EXPECT_TRUE(one.has_upper_bound() && equal(simplify(one.max), Expr(1))) << one.max;
    Interval other = bounds_of_expr_in_scope(Sub::make(Mul::make(b, 2), q), open);
    EXPECT_TRUE(other.has_lower_bound() && equal(simplify(other.min), Expr(-1))) << other.min;
    // A quotient by -d is the negated quotient by d: (m + 5) / -2 - m / -2 lies in [-3, -2].
    Interval negated =
        bounds_of_expr_in_scope(Sub::make(quotient(Add::make(m, 5), -2), quotient(m, -2)), open);
    EXPECT_TRUE(negated.is_bounded() && equal(simplify(negated.min), Expr(-3)) &&
                equal(simplify(negated.max), Expr(-2)))
        << negated.min << " " << negated.max;
    for (int v = -9; v < 9; v++) {
        const int64_t q = div_euclid(v + 5, -2) - div_euclid(v, -2);
        EXPECT_TRUE(q >= -3 && q <= -2) << v;
    }
    for (int v = -40; v < 40; v++) {
        const int64_t q = div_euclid(v + 31, 16) - div_euclid(v, 16);
        EXPECT_TRUE(q >= 1 && q <= 2) << v;
        EXPECT_TRUE(equal(simplify(substitute("e", Expr(v), diff)), Expr(int(q)))) << v;
    }
}
} // namespace

// The last point of a tile read through a clamp to a large constant: the constants of the two
// operands are inside their terms (a min's bound), and adding the operands folds none of them.
// Bounded; before, their sum (2^31) counted as a fold that could wrap, and the region of the
// Func read was unbounded.
TEST(Bounds, SumsOfClampsToLargeConstantsStayBounded) {
    for (int64_t c : {int64_t(1) << 30, int64_t(2000000000)}) {
        Expr k = make_const(Int(32), c);
        Expr tile = Add::make(var("m"), Mul::make(var("t"), make_const(Int(32), int64_t(8))));
        Expr first = Min::make(tile, k);
        Expr extent = Min::make(Max::make(Sub::make(k, tile), make_const(Int(32), int64_t(0))),
                                make_const(Int(32), int64_t(7)));
        Scope<Interval> s;
        s.push("t", Interval(make_const(Int(32), int64_t(0)), var("n")));
        Interval i = bounds_of_expr_in_scope(Add::make(first, extent), s);
        EXPECT_TRUE(i.is_bounded()) << c << ": " << i.min << " .. " << i.max;
        // A constant that does fold still may not wrap.
        Expr near_top =
            Add::make(Min::make(var("x"), k), make_const(Int(32), int64_t(INT32_MAX - 7)));
        EXPECT_FALSE(bounds_of_expr_in_scope(near_top, s).max.defined()) << c;
    }
}
