// Pointwise math against plain double-precision loops.

#include "ErrorMessage.h"
#include "Reference.h"

#include "dsl/HostMemory.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

using namespace aicf;
using aicf_test::close;
using aicf_test::fill_random;

TEST(Elementwise, ArithmeticAndMathMatchDoubleLoop) {
    const int W = 37, H = 23;
    Buffer<float> a(W, H), b(W, H);
    fill_random(a, -2.0, 2.0, 1);
    fill_random(b, 0.5, 3.0, 2);
    Var x("x"), y("y");
    Func f("f");
    f(x, y) = a(x, y) * b(x, y) + sqrt(b(x, y)) - exp(a(x, y) * 0.5f) / (1.0f + abs(a(x, y))) +
              tanh(a(x, y)) + erf(b(x, y) - 1.0f) + pow(b(x, y), 1.5f) + log(b(x, y)) +
              fma(a(x, y), b(x, y), 0.25f) + floor(a(x, y) * 3.0f) - rsqrt(b(x, y));
    Buffer<float> out = f.realize({W, H});
    for (int j = 0; j < H; j++) {
        for (int i = 0; i < W; i++) {
            double av = a(i, j), bv = b(i, j);
            double ref = av * bv + std::sqrt(bv) - std::exp(av * 0.5) / (1.0 + std::fabs(av)) +
                         std::tanh(av) + std::erf(bv - 1.0) + std::pow(bv, 1.5) + std::log(bv) +
                         (av * bv + 0.25) + std::floor(av * 3.0) - 1.0 / std::sqrt(bv);
            ASSERT_TRUE(close(out(i, j), ref, 1e-5, 1e-5))
                << i << "," << j << ": " << out(i, j) << " vs " << ref;
        }
    }
}

// Indices computed in a wider integer type and clamped into the buffer (int64 and uint32
// arithmetic, as a user's index math may be) are bounded like int32 ones, from a buffer and
// from a Func computed at the root.
TEST(Elementwise, IndicesComputedInWiderTypesAndClamped) {
    Buffer<int> b({11}, "b");
    fill_random(b, -100, 100, 3);
    Var x("x");
    const Expr wide = cast<int64_t>(x), unsigned_x = cast<uint32_t>(x);
    const std::vector<Expr> indices = {clamp(wide + 1, 0, 10), clamp(wide * 2, 0, 10),
                                       clamp(unsigned_x + 3, 0, 10), max(wide - 4, 0)};
    for (size_t i = 0; i < indices.size(); i++) {
        Func f("f"), g("g"), h("h");
        f(x) = b(indices[i]);
        g(x) = b(x) * 3;
        h(x) = g(indices[i]);
        g.compute_root();
        Buffer<int> got_f = f.realize({10}), got_h = h.realize({10});
        for (int k = 0; k < 10; k++) {
            const int64_t at[] = {std::clamp<int64_t>(k + 1, 0, 10),
                                  std::clamp<int64_t>(2 * k, 0, 10),
                                  std::clamp<int64_t>(k + 3, 0, 10), std::max<int64_t>(k - 4, 0)};
            ASSERT_EQ(got_f(k), b(int(at[i]))) << "index " << i << ", x = " << k;
            ASSERT_EQ(got_h(k), 3 * b(int(at[i]))) << "index " << i << ", x = " << k;
        }
    }
}

TEST(Elementwise, IntegerDivisionAndModuloAreEuclidean) {
    Var x("x"), y("y");
    Func f("f"), g("g");
    // x - 20 in [-20, 20], divisors in [-5, 5] including 0 (which yields 0).
    Expr num = x - 20, den = y - 5;
    f(x, y) = num / den;
    g(x, y) = num % den;
    Buffer<int> q = f.realize({41, 11});
    Buffer<int> r = g.realize({41, 11});
    for (int j = 0; j < 11; j++) {
        for (int i = 0; i < 41; i++) {
            int a = i - 20, b = j - 5;
            if (b == 0) {
                EXPECT_EQ(q(i, j), 0);
                EXPECT_EQ(r(i, j), 0);
                continue;
            }
            int rem = a % b;
            if (rem < 0) rem += std::abs(b);
            EXPECT_EQ(r(i, j), rem) << a << " % " << b;
            EXPECT_EQ(q(i, j), (a - rem) / b) << a << " / " << b;
            EXPECT_EQ(q(i, j) * b + r(i, j), a);
        }
    }
}

// Division and remainder by a constant (a tile's or a vector's size, mostly) take shorter
// instruction sequences than by a variable: a shift and a mask for a positive power of two, a
// truncating division corrected by the remainder's sign otherwise. Against Euclidean division
// in 64 bits, over the type's extremes and random values, vectorized and not.
template <typename T> void expect_euclidean_by_constants() {
    const T lowest = std::numeric_limits<T>::min(), highest = std::numeric_limits<T>::max();
    Buffer<T> in(67);
    fill_random(in, double(lowest), double(highest), 21);
    const T edges[] = {lowest, T(lowest + 1), highest, T(highest - 1), T(0), T(1), T(-1), T(7)};
    for (int i = 0; i < 8; i++)
        in(i) = edges[i];
    std::vector<int64_t> divisors = {1, 2, 3, 7, 8, 64, 100, int64_t(highest)};
    if (std::is_signed<T>::value) {
        for (int64_t c : {int64_t(-2), int64_t(-3), int64_t(-8), int64_t(-100), int64_t(lowest)})
            divisors.push_back(c);
    }
    for (int64_t c : divisors) {
        for (bool vectorized : {false, true}) {
            Var x("x");
            Func q("q"), r("r");
            const Expr divisor = cast<T>(Expr(c));
            q(x) = in(x) / divisor;
            r(x) = in(x) % divisor;
            if (vectorized) {
                q.vectorize(x, 8);
                r.vectorize(x, 8);
            }
            Buffer<T> qs = q.realize({67}), rs = r.realize({67});
            for (int i = 0; i < 67; i++) {
                const int64_t a = in(i), m = c > 0 ? c : -c;
                const int64_t rem = ((a % m) + m) % m;
                ASSERT_EQ(int64_t(rs(i)), rem)
                    << a << " % " << c << (vectorized ? ", vectors" : "");
                ASSERT_EQ(int64_t(qs(i)), int64_t(T((a - rem) / c)))
                    << a << " / " << c << (vectorized ? ", vectors" : "");
            }
        }
    }
}

TEST(Elementwise, IntegerDivisionAndModuloByConstantsAreEuclidean) {
    expect_euclidean_by_constants<int32_t>();
    expect_euclidean_by_constants<int16_t>();
    expect_euclidean_by_constants<uint8_t>();
    expect_euclidean_by_constants<uint32_t>();
}

TEST(Elementwise, TypesMixAsHalideDoes) {
    Var x("x");
    Func f("f");
    Buffer<uint8_t> in(16);
    fill_random(in, 1, 255, 3);
    // uint8 + int -> uint8 wraps; cast to int first to widen.
    f(x) = cast<int>(in(x)) * 3 + select(in(x) > 128, 1, 0) + cast<int>(in(x) / 2);
    Buffer<int> out = f.realize({16});
    for (int i = 0; i < 16; i++) {
        int v = in(i);
        EXPECT_EQ(out(i), v * 3 + (v > 128 ? 1 : 0) + v / 2);
    }
}

// An integer literal takes the other operand's type for the bitwise operators, min, max and
// select as for arithmetic (Halide's rule): uint8 arithmetic after them still wraps in 8 bits. A
// literal that does not fit is refused, and so is a clamp bound.
TEST(Elementwise, IntLiteralsTakeTheOtherOperandsType) {
    Buffer<uint8_t> a({256}, "lit_a");
    for (int i = 0; i < 256; i++)
        a(i) = uint8_t(i);
    Var x("x");
    EXPECT_EQ((a(x) ^ 0xff).type(), UInt(8));
    EXPECT_EQ((1 | a(x)).type(), UInt(8));
    EXPECT_EQ(min(a(x), 3).type(), UInt(8));
    EXPECT_EQ(max(7, a(x)).type(), UInt(8));
    EXPECT_EQ(select(a(x) > 3, a(x), 0).type(), UInt(8));
    EXPECT_EQ(select(a(x) > 3, 1, 0).type(), Int(32));
    // A C++ int64 literal too: one that does not fit is refused, never cut to 32 bits.
    EXPECT_EQ(max(Expr(x), int64_t(7)).type(), Int(32));
    EXPECT_THROW(max(Expr(x), int64_t(1) << 40), CompileError);
    EXPECT_EQ(max(cast<int64_t>(x), int64_t(1) << 40).type(), Int(64));
    EXPECT_EQ(max(Expr(x), Expr(int64_t(1) << 40)).type(), Int(64));
    Func f("lit_f");
    f(x) = Tuple(((a(x) ^ 0xff) + 1) >> 1, max(a(x), 200) + 100, select(a(x) > 9, a(x), 250) + 10,
                 (a(x) & 0x0f) | 0x30);
    Realization r = f.realize({256});
    Buffer<uint8_t> r0 = r[0], r1 = r[1], r2 = r[2], r3 = r[3];
    for (int i = 0; i < 256; i++) {
        EXPECT_EQ(r0(i), uint8_t(uint8_t(uint8_t(i ^ 0xff) + 1) >> 1)) << i;
        EXPECT_EQ(r1(i), uint8_t(std::max(i, 200) + 100)) << i;
        EXPECT_EQ(r2(i), uint8_t((i > 9 ? i : 250) + 10)) << i;
        EXPECT_EQ(r3(i), uint8_t((i & 0x0f) | 0x30)) << i;
    }
    EXPECT_THROW(a(x) & 0x1ff, CompileError);
    EXPECT_THROW(min(a(x), -1), CompileError);
    EXPECT_THROW(select(a(x) > 1, a(x), 300), CompileError);
    EXPECT_THROW(clamp(a(x), 0, 300), CompileError);
}

// A float literal takes a float operand's type in min, max, select and pow as in arithmetic:
// a ReLU max(x, 0.0) of float32 stays float32 (it was float64, and realizing it into a
// float32 buffer failed). Against an integer operand the result is a float32. The float32
// ReLU, the float16 clamp and the select against plain loops.
TEST(Elementwise, FloatLiteralsTakeTheOtherOperandsType) {
    Buffer<float> in({37}, "flit_in");
    aicf_test::fill_random(in, -2, 2, 5);
    Var x("x");
    Param<float16_t> h("h");
    EXPECT_EQ(max(in(x), 0.0).type(), Float(32));
    EXPECT_EQ(min(0.5, in(x)).type(), Float(32));
    EXPECT_EQ(min(Expr(h), 1.5).type(), Float(16));
    EXPECT_EQ(max(Expr(h), 1.5f).type(), Float(16));
    EXPECT_EQ(select(in(x) > 0, in(x), 0.1).type(), Float(32));
    EXPECT_EQ(select(in(x) > 0, 0.1, in(x)).type(), Float(32));
    EXPECT_EQ(pow(Expr(h), 2.0).type(), Float(16));
    EXPECT_EQ(pow(Expr(h), 3).type(), Float(16));
    EXPECT_EQ(pow(Expr(x), 2).type(), Float(32));
    EXPECT_EQ(pow(2.0, in(x)).type(), Float(32));
    EXPECT_EQ(max(cast<double>(in(x)), 0.0f).type(), Float(64));
    EXPECT_EQ(max(Expr(x), 0.5).type(), Float(32));
    Func relu("relu"), leaky("leaky"), lo("lo");
    relu(x) = max(in(x), 0.0);
    leaky(x) = select(in(x) > 0.0, in(x), in(x)*0.1);
    lo(x) = min(x, 0.5) + max(0.25, in(x));
    Buffer<float> r({37}, "relu"), k({37}, "leaky"), m({37}, "lo");
    relu.realize(r);
    leaky.realize(k);
    lo.realize(m);
    for (int i = 0; i < 37; i++) {
        const float v = in(i);
        EXPECT_EQ(r(i), std::max(v, 0.0f)) << i;
        EXPECT_EQ(k(i), v > 0 ? v : v * 0.1f) << i;
        EXPECT_EQ(m(i), std::min(float(i), 0.5f) + std::max(0.25f, v)) << i;
    }
}

// abs of a narrow signed type wraps at its most negative value (abs(int8 -128) is -128, as
// documented), and a shift left by bits - 1 reaches it: neither is bounded as non-negative, in
// the regions of producers and inputs nor in the simplifier, whatever the schedule.
TEST(Elementwise, AbsAndShiftsReachTheMostNegativeValueOfNarrowTypes) {
    Buffer<int> in({512}, "wrap_in");
    in.set_min({-256});
    for (int i = -256; i < 256; i++)
        in(i) = 1000 + i;
    Var x("x");
    for (int s = 0; s < 2; s++) {
        Func p("p"), abs8("abs8"), shl("shl");
        p(x) = in(x);
        abs8(x) = p(cast<int>(abs(cast<int8_t>(x))));
        shl(x) = p(cast<int>(cast<int8_t>(x) << cast<int8_t>(7)));
        if (s == 1) p.compute_root();
        Realization r = Pipeline({abs8, shl}).realize({256});
        Buffer<int> ra = r[0], rs = r[1];
        for (int i = 0; i < 256; i++) {
            int8_t v = int8_t(i);
            int8_t av = v == -128 ? v : int8_t(v < 0 ? -v : v);
            EXPECT_EQ(ra(i), 1000 + av) << i << " schedule " << s;
            EXPECT_EQ(rs(i), 1000 + int8_t(uint8_t(v) << 7)) << i << " schedule " << s;
        }
    }
    // An input that covers only [0, 127] is too small for abs(int8): refused, not read past.
    Buffer<int> small({128}, "small");
    Func g("g");
    g(x) = small(cast<int>(abs(cast<int8_t>(x))));
    EXPECT_THROW(g.realize({256}), RuntimeError);
    // The simplifier keeps the clamp of a widened abs, in scalar and vector code alike.
    Buffer<int8_t> b({4}, "b8");
    b(0) = -128;
    b(1) = -1;
    b(2) = 0;
    b(3) = 5;
    for (int vec = 0; vec < 2; vec++) {
        Func c("c"), e("e"), k("k");
        c(x) = clamp(cast<int>(abs(b(x))), 0, 10);
        e(x) = select(cast<int>(abs(b(x))) == -128, 1, 0);
        k(x) = clamp(cast<int>(b(x) << cast<int8_t>(7)), -5, 5);
        if (vec) {
            c.vectorize(x, 4);
            e.vectorize(x, 4);
            k.vectorize(x, 4);
        }
        Realization r = Pipeline({c, e, k}).realize({4});
        Buffer<int> rc = r[0], re = r[1], rk = r[2];
        const int want_c[] = {0, 1, 0, 5}, want_e[] = {1, 0, 0, 0}, want_k[] = {0, -5, 0, -5};
        for (int i = 0; i < 4; i++) {
            EXPECT_EQ(rc(i), want_c[i]) << i << " vector " << vec;
            EXPECT_EQ(re(i), want_e[i]) << i << " vector " << vec;
            EXPECT_EQ(rk(i), want_k[i]) << i << " vector " << vec;
        }
    }
}

// Shift amounts outside [0, bits - 1] give 0 (or the sign) whatever their type: an int32
// amount of 256 on an int8 value is not wrapped to 0 first. A division by a shift that comes
// out 0 gives 0, vectorized too (the shift past the width was poison to LLVM, which then
// dropped the division's check for zero and trapped).
TEST(Elementwise, ShiftsByAmountsOutsideTheWidth) {
    const int N = 37;
    Buffer<int8_t> a({N}, "sh_a");
    Buffer<int32_t> amount({N}, "sh_amount");
    Buffer<uint8_t> small({N}, "sh_small");
    const int amounts[] = {0, 1, 3, 7, 8, 9, 255, 256, 257, -1, 1 << 20, -(1 << 20)};
    for (int i = 0; i < N; i++) {
        a(i) = int8_t(i * 37 - 90);
        amount(i) = amounts[i % 12];
        small(i) = uint8_t(i % 12);
    }
    Var x("x");
    for (int vec = 0; vec < 2; vec++) {
        Func l("l"), r("r"), q("q"), q16("q16");
        l(x) = a(x) << amount(x);
        r(x) = a(x) >> amount(x);
        q(x) = cast<uint8_t>(a(x)) / (cast<uint8_t>(250) >> small(x));
        q16(x) = cast<uint16_t>(a(x)) / ((cast<uint16_t>(a(x)) | 1) << (small(x) + 6));
        if (vec) {
            l.vectorize(x, 16);
            r.vectorize(x, 16);
            q.vectorize(x, 16);
            q16.vectorize(x, 16);
        }
        Realization out = Pipeline({l, r, q, q16}).realize({N});
        Buffer<int8_t> ol = out[0], orr = out[1];
        Buffer<uint8_t> oq = out[2];
        Buffer<uint16_t> oq16 = out[3];
        for (int i = 0; i < N; i++) {
            const int s = amount(i), v = a(i);
            const bool inside = s >= 0 && s < 8;
            EXPECT_EQ(ol(i), inside ? int8_t(uint8_t(v) << s) : 0) << i << " vector " << vec;
            EXPECT_EQ(orr(i), inside ? int8_t(v >> s) : (v < 0 ? -1 : 0)) << i;
            const int d = small(i) < 8 ? 250 >> small(i) : 0;
            EXPECT_EQ(oq(i), d == 0 ? 0 : uint8_t(v) / d) << i << " vector " << vec;
            const int s16 = small(i) + 6;
            const int d16 = s16 < 16 ? uint16_t((uint16_t(int16_t(v)) | 1) << s16) : 0;
            EXPECT_EQ(oq16(i), d16 == 0 ? 0 : uint16_t(int16_t(v)) / d16) << i << " vector " << vec;
        }
    }
}

// An index modulo a size known only at run time (a wrap-around boundary condition) is bounded
// by the Euclidean remainder's range, [0, |n| - 1].
TEST(Elementwise, ModuloARunTimeSizeIsBounded) {
    ImageParam in(UInt(8), 1, "wrap_src");
    Buffer<uint8_t> b({10}, "wrap_buf");
    for (int i = 0; i < 10; i++)
        b(i) = uint8_t(i * 3 + 1);
    in.set(b);
    Param<int> n("n");
    n.set(7);
    Var x("x");
    Func f("wrap_f");
    f(x) = Tuple(in(x % in.width()), in((x - 5) % n), in(x % max(in.width(), 1)));
    Realization r = f.realize({23});
    Buffer<uint8_t> r0 = r[0], r1 = r[1], r2 = r[2];
    auto euclid = [](int a, int m) { return ((a % m) + m) % m; };
    for (int i = 0; i < 23; i++) {
        EXPECT_EQ(r0(i), b(i % 10)) << i;
        EXPECT_EQ(r1(i), b(euclid(i - 5, 7))) << i;
        EXPECT_EQ(r2(i), b(i % 10)) << i;
    }
    // A divisor larger than the input: refused before running, naming the buffer.
    n.set(12);
    Func g("wrap_g");
    g(x) = in(x % n);
    EXPECT_THROW(g.realize({23}), RuntimeError);
}

// An index divided by a run-time factor known to be at least 1 (a downsample by a Param) is
// bounded by the index over that least factor: it used to be widened to [-x, x], so an input
// of exactly the needed size was refused. Negative indices round down, toward -1.
TEST(Elementwise, DivisionByARunTimeFactorOfAtLeastOneIsBounded) {
    Buffer<float> b({20}, "down_src");
    for (int i = 0; i < 20; i++)
        b(i) = float(i * i % 13) - 4.5f;
    Param<int> k("k");
    Var x("x");
    Func f("down_f");
    f(x) = Tuple(b(x / max(k, 1)), b(x / clamp(k, 1, 100)), b((x - 19) / max(k, 1) + 19));
    auto floor_div = [](int a, int d) { return a >= 0 ? a / d : -((-a + d - 1) / d); };
    for (int factor : {3, 1, 7, 100, -2}) {
        k.set(factor);
        const int d = std::max(factor, 1);
        Realization r = f.realize({20});
        Buffer<float> r0 = r[0], r1 = r[1], r2 = r[2];
        for (int i = 0; i < 20; i++) {
            EXPECT_EQ(r0(i), b(i / d)) << i << " by " << factor;
            EXPECT_EQ(r1(i), b(i / std::min(d, 100))) << i << " by " << factor;
            EXPECT_EQ(r2(i), b(floor_div(i - 19, d) + 19)) << i << " by " << factor;
        }
    }
    // Past the input: refused before running, naming the buffer.
    Func g("down_g");
    g(x) = b(x / max(k, 1) + 5);
    k.set(1);
    EXPECT_THROW(g.realize({20}), RuntimeError);
}

TEST(Elementwise, ParamsAndImageParams) {
    ImageParam input(Float(32), 2, "input");
    Param<float> scale("scale");
    Param<int> offset("offset");
    Var x("x"), y("y");
    Func f("f");
    f(x, y) = input(x, y) * scale + cast<float>(offset);
    Buffer<float> in(20, 10);
    fill_random(in, -1.0, 1.0, 4);
    input.set(in);
    scale.set(2.5f);
    offset.set(-3);
    Buffer<float> out = f.realize({20, 10});
    for (int j = 0; j < 10; j++)
        for (int i = 0; i < 20; i++)
            EXPECT_FLOAT_EQ(out(i, j), in(i, j) * 2.5f - 3.0f);
    // A second realize with new values reuses the compiled code and sees the new values.
    scale.set(-1.0f);
    Buffer<float> out2 = f.realize({20, 10});
    EXPECT_FLOAT_EQ(out2(3, 4), -in(3, 4) - 3.0f);
}

TEST(Buffers, BorrowedViewWithMinsAndStrides) {
    // A 6 x 4 window starting at (3, 2) of a 16 x 10 row-major array, addressed with mins.
    std::vector<float> storage(16 * 10);
    for (size_t i = 0; i < storage.size(); i++)
        storage[i] = float(i) * 0.5f + 1.0f;
    Buffer<float> window(storage.data() + 2 * 16 + 3,
                         std::vector<aicf_dim_t>{{3, 6, 1, 0}, {2, 4, 16, 0}}, "window");
    EXPECT_EQ(window(3, 2), storage[2 * 16 + 3]);
    EXPECT_EQ(window(8, 5), storage[5 * 16 + 8]);
    Var x("x"), y("y");
    Func f("f");
    f(x, y) = window(x + 3, y + 2) * 2.0f;
    Buffer<float> out = f.realize({6, 4});
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 6; i++)
            EXPECT_EQ(out(i, j), storage[(j + 2) * 16 + i + 3] * 2.0f);
    // A view that is not dense in dimension 0 is refused, naming the buffer.
    Buffer<float> strided(storage.data(), std::vector<aicf_dim_t>{{0, 5, 2, 0}, {0, 4, 16, 0}},
                          "strided");
    Func g("g");
    g(x, y) = strided(x, y);
    try {
        g.realize({5, 4});
        FAIL() << "expected a RuntimeError";
    } catch (const RuntimeError &e) {
        EXPECT_NE(std::string(e.what()).find("Buffer strided has stride 2 in dimension 0"),
                  std::string::npos)
            << e.what();
    }
    // One point along dimension 0 is dense whatever its stride: a column of the storage.
    Buffer<float> column(storage.data() + 5, std::vector<aicf_dim_t>{{0, 1, 7, 0}, {0, 10, 16, 0}},
                         "column");
    Func h("h");
    h(x, y) = column(x, y) + 1.0f;
    Buffer<float> got = h.realize({1, 10});
    for (int j = 0; j < 10; j++)
        EXPECT_EQ(got(0, j), storage[size_t(j * 16 + 5)] + 1.0f) << j;
}

TEST(Targets, FusedMultiplyAddIsOptIn) {
    const int N = 1000;
    Buffer<float> a(N), b(N), c(N);
    fill_random(a, -1.0, 1.0, 51);
    fill_random(b, -1.0, 1.0, 52);
    fill_random(c, -1.0, 1.0, 53);
    Var x("x");
    Func f("f");
    f(x) = a(x) * b(x) + c(x);
    f.vectorize(x, 8);
    Buffer<float> plain = f.realize({N});
    Buffer<float> fused = f.realize({N}, Target("host-fma"));
    int differ = 0;
    for (int i = 0; i < N; i++) {
        // Without the feature: two roundings, exactly as C++ float arithmetic.
        ASSERT_EQ(plain(i), a(i) * b(i) + c(i)) << i;
        // With it: one rounding of the exact a * b + c.
        ASSERT_EQ(fused(i), std::fma(a(i), b(i), c(i))) << i;
        differ += plain(i) != fused(i);
    }
    EXPECT_GT(differ, 0); // the feature did change some results
    EXPECT_EQ(Target("host-fma").to_string(), "host-fma");
}

// Float % is a - b * floor(a / b), each operation rounded as written under -fma too: fused,
// 0.5 % 0.1 came out below 0 and 1e30 % 7.25 near -3e22. Against the same three roundings in
// C++, scalar and vectorized.
TEST(Targets, FloatModuloIsNotFused) {
    const int N = 2000;
    Buffer<float> a(N), b(N);
    fill_random(a, 0.0, 1000.0, 54);
    fill_random(b, 0.01, 10.0, 55);
    a(0) = 1e30f, b(0) = 7.25f;
    for (int i = 1; i < 200; i++)
        a(i) = 0.5f * float(i), b(i) = 0.1f;
    for (int vector : {1, 8}) {
        Var x("x");
        Func f("f");
        f(x) = a(x) % b(x);
        if (vector > 1) f.vectorize(x, vector);
        Buffer<float> fused = f.realize({N}, Target("host-fma"));
        for (int i = 0; i < N; i++) {
            const float q = std::floor(a(i) / b(i));
            const float product = b(i) * q;
            ASSERT_EQ(fused(i), a(i) - product) << a(i) << " % " << b(i) << ", vector " << vector;
            ASSERT_GE(fused(i), 0.0f) << a(i) << " % " << b(i);
        }
    }
}

// -reassoc lets LLVM regroup float additions: a row's serial sum is then vectorized into
// partial sums across lanes (a different order, so different last bits, still close to the
// exact sum). Without it the sum is computed in the order written. exp stays as written
// either way: the same bits with and without the feature.
TEST(Targets, ReassociationIsOptInAndVectorizesSerialSums) {
    const int W = 1001, H = 13; // a row is no multiple of any vector width
    Buffer<float> in(W, H);
    fill_random(in, -1.0, 1.0, 54);
    Var y("y"), x("x");
    RDom r(0, W, "r");
    Func sum("sum");
    sum(y) = 0.0f;
    sum(y) += in(r, y);
    Buffer<float> ordered = sum.realize({H});
    Buffer<float> regrouped = sum.realize({H}, Target("host-reassoc"));
    for (int j = 0; j < H; j++) {
        float serial = 0.0f;
        double exact = 0.0;
        for (int i = 0; i < W; i++) {
            serial += in(i, j);
            exact += in(i, j);
        }
        ASSERT_EQ(ordered(j), serial) << j;
        EXPECT_TRUE(close(regrouped(j), exact, 1e-5, 1e-5)) << j << ": " << regrouped(j);
    }
    // The row's loop adds 16 lanes at a time with the feature, one without.
    auto wide_adds = [](const std::string &text) {
        size_t n = 0;
        for (size_t at = text.find("vaddps"); at != std::string::npos;
             at = text.find("vaddps", at + 1))
            n += text.substr(at, text.find('\n', at) - at).find("%zmm") != std::string::npos;
        return n;
    };
    EXPECT_GT(wide_adds(sum.assembly(Target("x86-64-v4-reassoc"))), 0u);
    EXPECT_EQ(wide_adds(sum.assembly(Target("x86-64-v4"))), 0u);
    Func e("e");
    e(x) = exp(in(x, 0) * 3.0f);
    e.vectorize(x, 16);
    Buffer<float> free = e.realize({W}, Target("host-fma-reassoc"));
    Buffer<float> fused = e.realize({W}, Target("host-fma"));
    for (int i = 0; i < W; i++)
        ASSERT_EQ(free(i), fused(i)) << i;
    EXPECT_EQ(Target("host-fma-reassoc").to_string(), "host-fma-reassoc");
    EXPECT_TRUE(Target("x86-64-v3-reassoc").has_feature(Target::Reassociate));
}

// A value used several times per step, for many steps, is a small graph but a tree of 3^40
// leaves: defining, compiling and running it take time in proportion to the graph. (Each
// realize also looks its compiled code up by the algorithm's text.) A gather through an
// index buffer keeps its single access.
TEST(Elementwise, DeeplySharedExpressionsStaySmall) {
    const int W = 45, H = 7, steps = 40;
    Buffer<float> a(W, H);
    Buffer<int> rows(H);
    fill_random(a, -1.0, 1.0, 3);
    for (int j = 0; j < H; j++)
        rows(j) = (j * 5 + 2) % H;
    Var x("x"), y("y");
    Func f("f");
    Expr v = a(x, clamp(rows(y), 0, H - 1));
    for (int i = 0; i < steps; i++)
        v = v * 0.5f + sqrt(v * v + 1.0f) * 0.25f;
    f(x, y) = v;
    f.vectorize(x, 8);
    for (int run = 0; run < 2; run++) {
        Buffer<float> out = f.realize({W, H});
        for (int j = 0; j < H; j++)
            for (int i = 0; i < W; i++) {
                double r = a(i, rows(j));
                for (int s = 0; s < steps; s++)
                    r = r * 0.5 + std::sqrt(r * r + 1.0) * 0.25;
                ASSERT_TRUE(close(out(i, j), r, 1e-5, 1e-6))
                    << i << "," << j << ": " << out(i, j) << " vs " << r;
            }
    }
}

TEST(Buffers, BracedExtents) {
    Buffer<float> a({6, 4});
    Buffer<int> b({3, 5, 2}, "b");
    Buffer<float> c{7, 2};
    EXPECT_EQ(a.dimensions(), 2);
    EXPECT_EQ(a.width(), 6);
    EXPECT_EQ(a.height(), 4);
    EXPECT_EQ(b.dimensions(), 3);
    EXPECT_EQ(b.extent(2), 2);
    EXPECT_EQ(c.width(), 7);
    EXPECT_EQ(c.height(), 2);
}

// An element read or written on the host takes a coordinate per dimension, inside the
// buffer (its mins counted): anything else is a RuntimeError, not a read past the memory.
TEST(Buffers, ElementAccessIsChecked) {
    Buffer<int> b({4, 3}, "b");
    b(1, 2) = 5;
    EXPECT_EQ(b(1, 2), 5);
    EXPECT_CONTAINS(aicf_test::message_of<RuntimeError>([&] { (void)b(1, 2, 9); }),
                    "Buffer b has 2 dimensions, but b(1, 2, 9) gives 3 coordinates: give one per "
                    "dimension.");
    EXPECT_CONTAINS(aicf_test::message_of<RuntimeError>([&] { (void)b(1); }),
                    "Buffer b has 2 dimensions, but b(1) gives 1 coordinate");
    EXPECT_CONTAINS(aicf_test::message_of<RuntimeError>([&] { b(100, 100) = 1; }),
                    "Buffer b: b(100, 100) is outside it: dimension 0 covers [0, 3].");
    EXPECT_CONTAINS(aicf_test::message_of<RuntimeError>([&] { (void)b(3, -1); }),
                    "Buffer b: b(3, -1) is outside it: dimension 1 covers [0, 2].");
    b.set_min({10, -5});
    b(13, -3) = 7;
    EXPECT_EQ(b(13, -3), 7);
    EXPECT_EQ(b(11, -3), 5);
    EXPECT_CONTAINS(aicf_test::message_of<RuntimeError>([&] { (void)b(1, 2); }),
                    "dimension 0 covers [10, 13].");
    // Coordinates are int32s: a buffer's last one may be 2^31 - 1, not past it.
    EXPECT_CONTAINS(aicf_test::message_of<RuntimeError>([&] {
                        b.set_min({2147483646, 0});
                    }),
                    "Buffer b: dimension 0 starts at 2147483646 and has extent 4, so its last "
                    "coordinate would be 2147483649, past the 2^31 - 1 that 32-bit coordinates "
                    "reach. Give it a min of at most 2147483644.");
    EXPECT_EQ(b.min(0), 10); // unchanged
    b.set_min({2147483644, 0});
    b.fill(3);
    int n = 0;
    b.for_each_element([&](const std::vector<int> &c) {
        EXPECT_EQ(b(c[0], c[1]), 3);
        n++;
    });
    EXPECT_EQ(n, 12);
    EXPECT_EQ(b(2147483647, 2), 3);
    static int memory[4];
    std::vector<aicf_dim_t> dims = {{2147483645, 4, 1, 0}};
    EXPECT_CONTAINS(aicf_test::message_of<RuntimeError>([&] { Buffer<int> c(memory, dims, "c"); }),
                    "Buffer c: dimension 0 starts at 2147483645 and has extent 4");
}

// Host memory: 64-byte aligned and zeroed; from 2 MiB on, aligned to 2 MiB so that transparent
// huge pages can back it. A pipeline's own large intermediate gets the same, and the results
// do not depend on which kind of memory they came from.
TEST(Buffers, LargeBuffersStartOnAHugePageBoundary) {
    Buffer<float> small({100, 3}, "small"), large({1024, 1024}, "large");
    EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data()) % 64, 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(large.data()) % aicf::huge_page_threshold, 0u);
    for (int y = 0; y < 1024; y += 97)
        for (int x = 0; x < 1024; x += 89)
            ASSERT_EQ(large(x, y), 0.0f);

    Var x("x"), y("y");
    Func a("a"), b("b");
    a(x, y) = cast<float>(x * 3 - y);
    b(x, y) = a(x, y) + a(1023 - x, y); // a is read in reverse: a whole 4 MiB intermediate
    a.compute_root();
    Buffer<float> out = b.realize({1024, 1024});
    for (int j = 0; j < 1024; j += 31)
        for (int i = 0; i < 1024; i += 37)
            ASSERT_EQ(out(i, j), float(i * 3 - j) + float((1023 - i) * 3 - j));
}

// exp, log, tanh, erf, pow, sin and cos on vectors of every width (and on scalars) agree
// with a double-precision loop, special values included, and give the same bits at every
// width: a schedule's vectorization never changes a result. (sin and cos, near their zeros,
// within 1e-6 of the result rather than relatively.)
TEST(Elementwise, VectorMathAtEveryWidth) {
    const int N = 203;
    Buffer<float> a(N), b(N);
    fill_random(a, -6.0, 6.0, 4);
    fill_random(b, 0.01, 9.0, 5);
    const float specials_a[] = {0.0f,      -0.0f, 100.0f, -200.0f, INFINITY,
                                -INFINITY, NAN,   1e-30f, 88.7f,   -87.3f};
    const float specials_b[] = {0.0f, 1.0f, -1.0f, INFINITY, 1e-38f, 2.0f, NAN, 1e30f, 0.5f, 3.0f};
    for (int i = 0; i < 10; i++) {
        a(i) = specials_a[i];
        b(i) = specials_b[i];
    }
    auto reference = [&](int which, int i) -> double {
        double u = a(i), v = b(i);
        switch (which) {
        case 0:
            return std::exp(u);
        case 1:
            return std::log(v);
        case 2:
            return std::tanh(u);
        case 3:
            return std::erf(u);
        case 4:
            return std::pow(v, u);
        case 5:
            return std::sin(u);
        default:
            return std::cos(u);
        }
    };
    std::vector<Buffer<float>> first(7);
    for (int lanes : {1, 4, 5, 8, 16, 20, 32}) {
        Var x("x");
        Func f("f");
        f(x) = Tuple(exp(a(x)), log(b(x)), tanh(a(x)), erf(a(x)), pow(b(x), a(x)), sin(a(x)),
                     cos(a(x)));
        if (lanes > 1) f.vectorize(x, lanes, TailStrategy::GuardWithIf);
        Realization r = f.realize({N});
        for (int k = 0; k < 7; k++) {
            Buffer<float> out(r[k]);
            for (int i = 0; i < N; i++) {
                double want = reference(k, i);
                float got = out(i);
                SCOPED_TRACE(::testing::Message() << "function " << k << ", lanes " << lanes
                                                  << ", input " << a(i) << ", " << b(i));
                if (std::isnan(want)) {
                    ASSERT_TRUE(std::isnan(got)) << got;
                } else if (std::isinf(want) || std::fabs(want) > 3.4e38) {
                    ASSERT_EQ(got, float(want));
                } else {
                    ASSERT_TRUE(close(got, want, 4e-6, k >= 5 ? 1e-6 : 1e-37))
                        << got << " vs " << want;
                }
                if (!first[k].defined()) continue;
                float earlier = first[k](i);
                ASSERT_TRUE(std::memcmp(&earlier, &got, sizeof got) == 0)
                    << earlier << " at 1 lane, " << got;
            }
            if (!first[k].defined()) first[k] = out;
        }
    }
}

TEST(Elementwise, VectorMathInDoublePrecision) {
    const int N = 77;
    Buffer<double> a(N), b(N);
    fill_random(a, -5.0, 5.0, 6);
    fill_random(b, 0.01, 7.0, 7);
    for (int lanes : {1, 3, 8}) {
        Var x("x");
        Func f("f");
        f(x) = exp(a(x)) + log(b(x)) * tanh(a(x)) - erf(a(x)) + pow(b(x), a(x) * 0.5) +
               sin(a(x)) * cos(b(x));
        if (lanes > 1) f.vectorize(x, lanes, TailStrategy::GuardWithIf);
        Buffer<double> out = f.realize({N});
        for (int i = 0; i < N; i++) {
            double u = a(i), v = b(i);
            double want = std::exp(u) + std::log(v) * std::tanh(u) - std::erf(u) +
                          std::pow(v, u * 0.5) + std::sin(u) * std::cos(v);
            ASSERT_TRUE(close(out(i), want, 1e-13, 1e-13))
                << lanes << " lanes, " << i << ": " << out(i) << " vs " << want;
        }
    }
}
