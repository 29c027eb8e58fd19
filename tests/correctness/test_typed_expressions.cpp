// Random expressions over every scalar type (8- to 64-bit integers, float16, bfloat16, float32,
// float64), with casts between them, computed four ways: by the reference interpreter
// (tests/common/Interpreter.h: each type's arithmetic and rounding written out in plain C++,
// no AICF code path), scalar on the host, vectorized at an odd or even width on the host, and
// as a GPU kernel (on the device AICF_DEVICE names, the simulator without a GPU). Scalar code
// must give the reference's value wherever that value is defined (a signed 32- or 64-bit
// overflow leaves it undefined), and vector code and kernels must agree with scalar code bit
// for bit: they change where values are computed, never what. The seed is fixed;
// AICF_TYPED_SEED and AICF_TYPED_COUNT change it and the number of expressions.

#include "FloatToInt.h"
#include "Interpreter.h"
#include "Reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <type_traits>
#include <utility>

using namespace aicf;
using aicf_test::env_int;
using namespace aicf::ir;

namespace {

const Type all_types[] = {UInt(8), Int(8),   UInt(16),  Int(16),    Int(32),   UInt(32),
                          Int(64), UInt(64), Float(16), BFloat(16), Float(32), Float(64)};
constexpr int type_count = sizeof(all_types) / sizeof(all_types[0]);

struct ExprGenerator {
    std::mt19937 rng;
    const Buffer<int> &in;
    Var x;
    int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); }

    Expr leaf(Type t) {
        Expr v = pick(2) ? Expr(in(x)) : Expr(in(x + 3) * 7 - x);
        return cast(t, v);
    }
    // An expression of type t, up to `depth` operations deep. Integer division and remainder
    // are total (x / 0 == 0); float division divides by b*b + 1, so never by zero.
    Expr expr(Type t, int depth) {
        if (depth == 0 || pick(4) == 0) return leaf(t);
        Expr a = expr(t, depth - 1), b = expr(t, depth - 1);
        switch (pick(t.is_float() ? 9 : 12)) {
        case 0:
            return a + b;
        case 1:
            return a - b;
        case 2:
            return a * b;
        case 3:
            return min(a, b);
        case 4:
            return max(a, b);
        case 5:
            return select(a < b, a, b + a);
        case 6:
            return cast(t, cast(all_types[pick(type_count)], a));
        case 7:
            return t.is_float() ? a / (b * b + cast(t, 1)) : a / b;
        case 8:
            return t.is_float() ? abs(a) : a % b;
        case 9:
            return a & b;
        case 10:
            return a ^ (b | a);
        default:
            return a >> cast(t, pick(5));
        }
    }
};

} // namespace

TEST(TypedExpressions, ScalarCodeMatchesTheReferenceAndVectorsAndKernelsMatchIt) {
    const unsigned seed = unsigned(env_int("AICF_TYPED_SEED", 1));
    const int count = env_int("AICF_TYPED_COUNT", 120);
    static const int widths[] = {2, 3, 4, 5, 7, 8, 16, 17, 32, 33, 64};
    int64_t compared = 0, undefined = 0;
    for (int c = 0; c < count; c++) {
        std::mt19937 rng(seed * 7919u + unsigned(c));
        const int W = 70 + int(rng() % 60);
        Buffer<int> in({W + 8}, "in");
        for (int i = 0; i < W + 8; i++)
            in(i) = int(rng() % 2001) - 1000;
        ExprGenerator gen{rng, in, Var("x")};
        Var x = gen.x, xo("xo"), xi("xi");
        Type t = all_types[gen.pick(type_count)], out_t = all_types[gen.pick(type_count)];
        Expr e = gen.expr(t, 4);
        const int width = widths[gen.pick(11)];
        TailStrategy tail = gen.pick(2) ? TailStrategy::GuardWithIf : TailStrategy::ShiftInwards;
        std::ostringstream what;
        what << "expression " << c << ": " << to_string(t) << " -> " << to_string(out_t)
             << ", width " << width << "\n"
             << e;

        Func scalar("scalar"), vector("vector"), kernel("kernel");
        scalar(x) = cast(out_t, e);
        vector(x) = cast(out_t, e);
        kernel(x) = cast(out_t, e);
        vector.vectorize(x, width, tail);
        kernel.gpu_tile(x, xo, xi, width, TailStrategy::GuardWithIf);
        Buffer<> want = scalar.realize({W})[0];
        Buffer<> got_vector = vector.realize({W})[0];
        Buffer<> got_kernel = kernel.realize({W}, Target("host-cuda-sm_80"))[0];
        aicf_test::Interpreter reference;
        const uint8_t *scalar_data = static_cast<const uint8_t *>(want.raw_data());
        for (int i = 0; i < W; i++) {
            aicf_test::Value expected =
                reference.evaluate(cast(out_t, e), {{"x", aicf_test::make_int(Int(32), i)}});
            if (!expected.defined) {
                undefined++;
                continue;
            }
            compared++;
            aicf_test::Value got = aicf_test::load_value(out_t, scalar_data + i * out_t.bytes());
            ASSERT_TRUE(aicf_test::same_value(got, expected))
                << "scalar code at x = " << i << ": " << got.to_string() << ", the reference "
                << expected.to_string() << "\n"
                << what.str();
        }
        const size_t bytes = size_t(W) * size_t(out_t.bytes());
        ASSERT_EQ(std::memcmp(want.raw_data(), got_vector.raw_data(), bytes), 0) << "vectorized\n"
                                                                                 << what.str();
        ASSERT_EQ(std::memcmp(want.raw_data(), got_kernel.raw_data(), bytes), 0) << "GPU kernel\n"
                                                                                 << what.str();
    }
    // Most values are defined: the reference really checked the expressions.
    std::printf("[ reference ] %lld values compared, %lld left undefined by a signed overflow\n",
                (long long)compared, (long long)undefined);
    EXPECT_GT(compared, 3 * undefined);
}

namespace {

// Values a conversion into a 16-bit float can round twice: just beside the midpoints between
// neighbouring float16 or bfloat16 values, closer than float32 resolves, and past float32's
// range.
std::vector<double> hard_doubles() {
    std::vector<double> v;
    for (double mid : {1.0 + 0x1p-11, 1.0 + 0x1p-8, 501.0, 3.0 * 0x1p-25, 65520.0, 0x1.01p+24}) {
        for (double tiny : {0x1p-40, 0x1p-30, 0.0}) {
            for (double sign : {1.0, -1.0}) {
                v.push_back(sign * (mid + mid * tiny));
                v.push_back(sign * (mid - mid * tiny));
            }
        }
    }
    v.push_back(0x1p-140);  // below float32's subnormals' half: rounds to 0 or the least
    v.push_back(-0x1p-150); // exactly half of float32's least subnormal
    v.push_back(1e300);
    v.push_back(NAN);
    v.push_back(-INFINITY);
    return v;
}

std::vector<int64_t> hard_integers() {
    std::vector<int64_t> v;
    for (int64_t mid : {int64_t(1) << 24 | int64_t(1) << 16, int64_t(1) << 40 | int64_t(1) << 32,
                        int64_t(1) << 62 | int64_t(1) << 54, int64_t(65520)}) {
        for (int64_t tiny : {int64_t(1), int64_t(0), int64_t(-1)}) {
            v.push_back(mid + tiny);
            v.push_back(-(mid + tiny));
        }
    }
    v.push_back(INT64_MIN);
    v.push_back(INT64_MAX);
    return v;
}

// Converts every element of `in` to `to` as scalar code, vector code, a GPU kernel and a folded
// constant, and checks each against the reference's one rounding.
template <typename T> void expect_converted_once(const std::vector<T> &values, Type to) {
    const int n = int(values.size());
    Buffer<T> in({n}, "in");
    for (int i = 0; i < n; i++)
        in(i) = values[size_t(i)];
    Var x("x"), xo("xo"), xi("xi");
    Func scalar("scalar"), vector("vector"), kernel("kernel");
    scalar(x) = cast(to, in(x));
    vector(x) = cast(to, in(x));
    kernel(x) = cast(to, in(x));
    vector.vectorize(x, 8, TailStrategy::GuardWithIf);
    kernel.gpu_tile(x, xo, xi, 16, TailStrategy::GuardWithIf);
    Buffer<> results[] = {scalar.realize({n})[0], vector.realize({n})[0],
                          kernel.realize({n}, Target("host-cuda-sm_80"))[0]};
    const char *how[] = {"scalar code", "vector code", "a GPU kernel"};
    for (int i = 0; i < n; i++) {
        aicf_test::Value want =
            aicf_test::convert(to, aicf_test::load_value(type_of<T>(), &values[size_t(i)]));
        for (int k = 0; k < 3; k++) {
            const uint8_t *p = static_cast<const uint8_t *>(results[k].raw_data());
            aicf_test::Value got = aicf_test::load_value(to, p + i * to.bytes());
            EXPECT_TRUE(aicf_test::same_value(got, want))
                << how[k] << " converts " << values[size_t(i)] << " to " << got.to_string()
                << "; rounded once it is " << want.to_string();
        }
        Expr folded = cast(to, Expr(values[size_t(i)]));
        const FloatImm *c = folded.as<FloatImm>();
        if (c && !std::isnan(c->value)) {
            EXPECT_EQ(c->value, want.f)
                << "the constant " << values[size_t(i)] << " folded to " << to_string(to);
        }
    }
}

} // namespace

TEST(TypedExpressions, ConversionsIntoSixteenBitFloatsRoundOnce) {
    for (Type to : {Float(16), BFloat(16), Float(32)}) {
        expect_converted_once(hard_doubles(), to);
        expect_converted_once(hard_integers(), to);
        std::vector<int32_t> narrow;
        for (int64_t v : hard_integers())
            if (v == int64_t(int32_t(v))) narrow.push_back(int32_t(v));
        narrow.push_back(INT32_MIN);
        expect_converted_once(narrow, to);
        std::vector<uint64_t> wide = {~uint64_t(0), uint64_t(1) << 63 | uint64_t(1) << 55 | 1};
        expect_converted_once(wide, to);
    }
}

namespace {

// Every float in `values` (as type F) converted to T by a scalar loop and by vectors of 4 and
// 16 lanes (the vectors' tails shifted inwards, so some elements go through two widths).
template <typename F, typename T> void expect_float_to_int(const std::vector<double> &values) {
    const int n = int(values.size());
    Buffer<F> in({n}, "in");
    for (int i = 0; i < n; i++)
        in(i) = F(values[size_t(i)]);
    for (int width : {1, 4, 16}) {
        Var x("x");
        Func f("f");
        f(x) = cast<T>(in(x));
        if (width > 1) f.vectorize(x, width);
        Buffer<T> out = f.realize({n});
        for (int i = 0; i < n; i++) {
            const T want = aicf_test::converted_float<T>(double(in(i)));
            ASSERT_EQ(out(i), want)
                << "cast<" << to_string(type_of<T>()) << ">(" << to_string(type_of<F>()) << " "
                << double(in(i)) << ") in vectors of " << width;
        }
    }
}

template <typename F> void expect_float_to_every_int() {
    const std::vector<double> v = aicf_test::hard_float_to_int_inputs();
    expect_float_to_int<F, int8_t>(v);
    expect_float_to_int<F, uint8_t>(v);
    expect_float_to_int<F, int16_t>(v);
    expect_float_to_int<F, uint16_t>(v);
    expect_float_to_int<F, int32_t>(v);
    expect_float_to_int<F, uint32_t>(v);
    expect_float_to_int<F, int64_t>(v);
    expect_float_to_int<F, uint64_t>(v);
}

} // namespace

// A float converted to an integer type goes towards zero and saturates at the type's ends;
// NaN gives 0. At every integer width, from float and double, in scalars and vectors (whose
// conversions clamp in the float type first, and so must match at every end).
TEST(TypedExpressions, FloatsIntoIntegersSaturate) {
    expect_float_to_every_int<float>();
    expect_float_to_every_int<double>();
}

// A bool is a byte in memory, 0 or 1, as in C: a bool Func stored and loaded as vectors (at
// widths that do not divide the extent), in a GPU kernel's global or shared memory, a bool
// input and a bool output give what a plain loop gives, byte for byte.
TEST(TypedExpressions, BoolsAreBytesInMemoryInEverySchedule) {
    const int W = 29;
    std::mt19937 rng(5);
    Buffer<int> a({W}, "a");
    Buffer<bool> flag({W}, "flag");
    for (int i = 0; i < W; i++) {
        a(i) = int(rng() % 19) - 9;
        flag(i) = rng() % 4 != 0;
    }
    enum Where { Scalar, Vectors, KernelGlobal, KernelShared };
    for (Where where : {Scalar, Vectors, KernelGlobal, KernelShared}) {
        for (int width : {3, 8, 16}) {
            if (where == Scalar && width != 3) continue;
            Var x("x"), xo("xo"), xi("xi");
            Func b("b"), o("o"), nb("nb");
            b(x) = a(x) > 0 && flag(x);
            o(x) = select(b(x), a(x), 100);
            nb(x) = !(a(x) > 0 && flag(x)); // a bool output
            Target target;
            switch (where) {
            case Scalar:
                b.compute_root();
                break;
            case Vectors:
                b.compute_root().vectorize(x, width, TailStrategy::GuardWithIf);
                o.vectorize(x, width, TailStrategy::GuardWithIf);
                nb.vectorize(x, width, TailStrategy::GuardWithIf);
                break;
            case KernelGlobal:
            case KernelShared:
                target = Target("host-cuda-sm_80");
                o.gpu_tile(x, xo, xi, width, TailStrategy::GuardWithIf);
                nb.gpu_tile(x, xo, xi, width, TailStrategy::GuardWithIf);
                if (where == KernelGlobal)
                    b.compute_root().gpu_tile(x, xo, xi, width, TailStrategy::GuardWithIf);
                else
                    b.compute_at(o, xo).gpu_threads(x).store_in(MemoryType::GPUShared);
                break;
            }
            const std::string what =
                "placement " + std::to_string(int(where)) + ", width " + std::to_string(width);
            Realization r = Pipeline({o, nb}).realize({W}, target);
            Buffer<int> got_o = r[0];
            Buffer<bool> got_nb = r[1];
            for (int i = 0; i < W; i++) {
                const bool want = a(i) > 0 && flag(i);
                EXPECT_EQ(got_o(i), want ? a(i) : 100) << what << ", x = " << i;
                unsigned char byte;
                std::memcpy(&byte, &got_nb(i), 1);
                EXPECT_EQ(int(byte), int(!want)) << what << ", the byte of nb at x = " << i;
            }
        }
    }
}

// A comparison holds per point, so it converts to no C++ bool: `if (x < 3)` and
// `x < 3 ? a : b` do not compile (they would test that the Expr exists). It is still an Expr of
// type bool wherever one is taken.
template <typename T, typename = void> struct TestsAsBool : std::false_type {};
template <typename T>
struct TestsAsBool<T, decltype(void(std::declval<T>() ? 1 : 0))> : std::true_type {};
TEST(TypedExpressions, ConditionsAreNoCppBools) {
    Var x("x"), y("y");
    static_assert(!TestsAsBool<decltype(x < 3)>::value, "");
    static_assert(!TestsAsBool<decltype(x == y && !(y > 1))>::value, "");
    static_assert(!TestsAsBool<decltype(is_nan(cast<float>(x)))>::value, "");
    static_assert(!std::is_convertible<decltype(x != y), bool>::value, "");
    static_assert(TestsAsBool<Expr>::value, "an Expr still tests whether it is defined");
    Expr c = x < 3 || y >= 2;
    EXPECT_TRUE(c.type().is_bool());
    Func f("f");
    f(x, y) = select(c, x, y);
    Buffer<int> out = f.realize({5, 4});
    for (int j = 0; j < 4; j++) {
        for (int i = 0; i < 5; i++)
            EXPECT_EQ(out(i, j), (i < 3 || j >= 2) ? i : j);
    }
}

// A string literal names a Param of any type (Param<bool> flag("flag") once took the literal
// as the value true, under a made-up name); a number is its value.
TEST(TypedExpressions, ParamsNamedByStringLiterals) {
    Param<bool> flag("flag");
    Param<float> zero(0), scale(2.5f, "scale");
    Param<int> n("n");
    EXPECT_EQ(flag.name(), "flag");
    EXPECT_FALSE(flag.get());
    EXPECT_EQ(zero.get(), 0.0f);
    EXPECT_EQ(scale.name(), "scale");
    EXPECT_EQ(scale.get(), 2.5f);
    Var x("x");
    Func f("f");
    f(x) = select(flag, 1.0f, 2.0f) * scale + cast<float>(n + x) + zero;
    n.set(3);
    flag.set(false);
    Buffer<float> off = f.realize({4});
    flag.set(true);
    Buffer<float> on = f.realize({4});
    for (int i = 0; i < 4; i++) {
        EXPECT_EQ(off(i), 5.0f + float(3 + i)) << i;
        EXPECT_EQ(on(i), 2.5f + float(3 + i)) << i;
    }
}

namespace {

// Every element of a one-dimensional input at its own point, for `in` of any type.
Buffer<> input_of(Type t, const std::vector<aicf_test::Value> &values) {
    Buffer<> in(t, {int(values.size())}, "in");
    uint8_t *p = static_cast<uint8_t *>(in.raw_data());
    for (size_t i = 0; i < values.size(); i++) {
        const uint64_t bits = values[i].storage_bits();
        std::memcpy(p + i * size_t(t.bytes()), &bits, size_t(t.bytes()));
    }
    return in;
}

// Computes e(x) over the input's points as scalar code, vector code (8 lanes over an extent
// they do not divide) and a GPU kernel, and checks each point against the reference wherever
// the reference defines it.
void expect_reference_values(const Expr &e, int n, const std::string &what) {
    Var x("x"), xo("xo"), xi("xi");
    Func scalar("scalar"), vector("vector"), kernel("kernel");
    scalar(x) = e;
    vector(x) = e;
    kernel(x) = e;
    vector.vectorize(x, 8, TailStrategy::GuardWithIf);
    kernel.gpu_tile(x, xo, xi, 16, TailStrategy::GuardWithIf);
    Buffer<> results[] = {scalar.realize({n})[0], vector.realize({n})[0],
                          kernel.realize({n}, Target("host-cuda-sm_80"))[0]};
    const char *how[] = {"scalar code", "vector code", "a GPU kernel"};
    aicf_test::Interpreter reference;
    for (int i = 0; i < n; i++) {
        aicf_test::Value want = reference.evaluate(e, {{"x", aicf_test::make_int(Int(32), i)}});
        if (!want.defined) continue;
        for (int k = 0; k < 3; k++) {
            const uint8_t *p = static_cast<const uint8_t *>(results[k].raw_data());
            aicf_test::Value got = aicf_test::load_value(e.type(), p + i * e.type().bytes());
            EXPECT_TRUE(aicf_test::same_value(got, want))
                << how[k] << " at input " << i << ": " << got.to_string() << ", the reference "
                << want.to_string() << "\n"
                << what << "\n"
                << e;
        }
    }
}

} // namespace

// Constants and inputs at the ends of each integer type's range: a comparison or a sum the
// simplifier rewrites must keep its value where the type wraps (x + 1 == 0 at the largest
// uint64) and must not overflow where the original does not (x * 2 - INT_MIN, whose constant
// the type cannot negate).
TEST(TypedExpressions, IntegerConstantsAtTheEndsOfTheRange) {
    for (Type t : {UInt(8), Int(8), UInt(16), Int(16), Int(32), UInt(32), Int(64), UInt(64)}) {
        const int64_t lo = t.is_int() ? t.min_int() : 0;
        const int64_t hi = t.bits == 64 && t.is_uint() ? -1 : int64_t(t.max_int());
        std::vector<aicf_test::Value> values;
        for (int64_t v : {lo, lo + 1, int64_t(-1), int64_t(0), int64_t(1), int64_t(2),
                          int64_t(t.bits == 64 && t.is_uint() ? -2 : hi - 1), hi}) {
            if (t.is_int() || v >= 0 || (t.bits == 64 && v >= -2))
                values.push_back(aicf_test::make_int(t, v));
        }
        Buffer<> in = input_of(t, values);
        Var x("x");
        const Expr v = in(x), one = cast(t, 1), zero = cast(t, 0);
        const Expr least = t.is_int() ? cast(t, Expr(int64_t(t.min_int()))) : zero;
        const Expr most = t.is_int() ? cast(t, Expr(int64_t(t.max_int())))
                                     : cast(t, Expr(uint64_t(t.max_uint())));
        const Expr cases[] = {
            v + one == zero,
            v + one<one, v + one <= zero, select(v + one < v, one, zero), v - one> v,
            v + most < v,
            max(v, least + one) == most,
            min(v, most - one) == least,
            max(v, least + one) + one,
            v * 2 - least,
            v - least,
            v + least,
            v * least,
            least - v,
            (v - one) / 8 + one,
            (v - one) % 3,
            (v + most) / 2,
            v - most + one,
        };
        for (const Expr &e : cases)
            expect_reference_values(e, int(values.size()), to_string(t));
    }
}

// A uint64 past int64's range converts into a negative int64 (conversions wrap): a test,
// abs or max of it must not take it as non-negative, as the uint64's range alone would say.
TEST(TypedExpressions, LargeUint64sConvertIntoNegativeInt64s) {
    std::vector<aicf_test::Value> values;
    for (uint64_t v : {uint64_t(0xFFFFFFFFFFFFFFBDull), uint64_t(5), uint64_t(1) << 63,
                       ~uint64_t(0), uint64_t(INT64_MAX)})
        values.push_back(aicf_test::make_int(UInt(64), int64_t(v)));
    Buffer<> in = input_of(UInt(64), values);
    Var x("x");
    const Expr v = cast<int64_t>(in(x));
    const int n = int(values.size());
    expect_reference_values(select(v < 0, 1, 0), n, "int64(u) < 0");
    expect_reference_values(abs(v), n, "abs(int64(u))");
    expect_reference_values(max(v, Expr(int64_t(0))), n, "max(int64(u), 0)");
    expect_reference_values(cast<int32_t>(v >> 40), n, "int64(u) >> 40");
    Func f("f");
    f(x) = select(v < 0, 1, 0);
    Buffer<int> out = f.realize({n});
    EXPECT_EQ(out(0), 1); // 0xFF...BD is -67
    EXPECT_EQ(out(1), 0);
}

// A 16-bit float remainder folded from constants is the one code computes: the steps in
// float32, the result rounded once to 16 bits (1000 % 0.3 is 0.2373 in float16, where
// rounding every step to float16 gives 0).
TEST(TypedExpressions, SixteenBitFloatRemaindersFoldAsCodeComputesThem) {
    for (Type t : {Float(16), BFloat(16)}) {
        std::vector<aicf_test::Value> values;
        for (double v : {0.3, 7.0, -0.3, 1e-3})
            values.push_back(aicf_test::make_float(t, v));
        Buffer<> in = input_of(t, values);
        Var x("x");
        for (double a : {1000.0, -1000.0, 77.7}) {
            const Expr lit = cast(t, Expr(a));
            expect_reference_values(lit % in(x), int(values.size()), to_string(t) + " computed");
            for (double b : {0.3, -0.3})
                expect_reference_values(lit % cast(t, Expr(b)), 1, to_string(t) + " folded");
        }
    }
}

// A divisor that overflows to zero (b * b at b = 2^16 in int32) or to -1 leaves the quotient
// undefined (signed 32- and 64-bit arithmetic is taken not to overflow) but never traps: the
// process goes on, in scalar and vector code.
TEST(TypedExpressions, DivisorsThatOverflowDoNotTrap) {
    for (Type t : {Int(32), Int(64)}) {
        const int64_t half = t.bits == 32 ? int64_t(1) << 16 : int64_t(1) << 32;
        std::vector<aicf_test::Value> values;
        for (int64_t v : {half, -half, int64_t(3), t.min_int()})
            values.push_back(aicf_test::make_int(t, v));
        Buffer<> in = input_of(t, values);
        Var x("x");
        const Expr b = in(x), a = cast(t, 7);
        for (const Expr &e : {a / (b * b), a % (b * b), b / (b * b - b * b - 1), b % (b * b + b)}) {
            Func scalar("scalar"), vector("vector");
            scalar(x) = e;
            vector(x) = e;
            vector.vectorize(x, 8, TailStrategy::GuardWithIf);
            EXPECT_NO_THROW(scalar.realize({int(values.size())})) << e;
            EXPECT_NO_THROW(vector.realize({int(values.size())})) << e;
            // Where nothing overflows the value is the reference's.
            expect_reference_values(e, int(values.size()), to_string(t));
        }
    }
}

// Float zeros keep their sign: -x of +0.0 is -0.0, x + 0.0 of -0.0 is +0.0, and the identities
// that hold are x + (-0.0) and x - 0.0.
TEST(TypedExpressions, SignsOfFloatZeros) {
    for (Type t : {Float(16), BFloat(16), Float(32), Float(64)}) {
        std::vector<aicf_test::Value> values;
        for (double v : {0.0, -0.0, 1.5, -2.0, double(INFINITY), double(-INFINITY), double(NAN)})
            values.push_back(aicf_test::make_float(t, v));
        Buffer<> in = input_of(t, values);
        Var x("x");
        const Expr v = in(x), pz = cast(t, Expr(0.0)), nz = cast(t, Expr(-0.0));
        const Expr cases[] = {-v,     v + pz, pz + v,   v + nz, v - pz,  v - nz,  pz - v,
                              nz - v, -(-v),  -(v * 2), v * 1,  -v + pz, -(v - v)};
        for (const Expr &e : cases)
            expect_reference_values(e, int(values.size()), to_string(t));
    }
}
