// Boundary conditions, lerp and mux, checked against plain C++: each boundary condition's
// coordinate is found by folding the point back into the region step by step (no modulo
// arithmetic, unlike the library), on inputs whose mins are not 0, over output regions that
// reach several periods past each edge.

#include "GPUTarget.h"
#include "Reference.h"

#include "ErrorMessage.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <type_traits>

using namespace aicf;
using aicf_test::fill_random;

namespace {

enum class Kind { RepeatEdge, ConstantExterior, RepeatImage, MirrorImage, MirrorInterior };
const Kind all_kinds[] = {Kind::RepeatEdge, Kind::ConstantExterior, Kind::RepeatImage,
                          Kind::MirrorImage, Kind::MirrorInterior};
const char *kind_name(Kind k) {
    const char *names[] = {"repeat_edge", "constant_exterior", "repeat_image", "mirror_image",
                           "mirror_interior"};
    return names[int(k)];
}

// The point of [m, m + e) that x reads, or -1 << 30 for "outside" (constant_exterior).
int fold(Kind kind, int x, int m, int e) {
    int i = x - m;
    if (i >= 0 && i < e) return x;
    switch (kind) {
    case Kind::RepeatEdge:
        return std::clamp(x, m, m + e - 1);
    case Kind::ConstantExterior:
        return -(1 << 30);
    case Kind::RepeatImage:
        while (i < 0)
            i += e;
        while (i >= e)
            i -= e;
        return m + i;
    case Kind::MirrorImage:
    case Kind::MirrorInterior: {
        if (e == 1) return m;
        const bool edge = kind == Kind::MirrorImage;
        while (i < 0 || i >= e) {
            if (i < 0) i = edge ? -i - 1 : -i;
            if (i >= e) i = edge ? 2 * e - 1 - i : 2 * e - 2 - i;
        }
        return m + i;
    }
    }
    return 0;
}

Func apply(Kind kind, const ImageParam &in, float value) {
    switch (kind) {
    case Kind::RepeatEdge:
        return BoundaryConditions::repeat_edge(in);
    case Kind::ConstantExterior:
        return BoundaryConditions::constant_exterior(in, value);
    case Kind::RepeatImage:
        return BoundaryConditions::repeat_image(in);
    case Kind::MirrorImage:
        return BoundaryConditions::mirror_image(in);
    case Kind::MirrorInterior:
        return BoundaryConditions::mirror_interior(in);
    }
    return Func();
}

// out(x, y) = padded(x, y) * 2 + padded(x + 1, y - 1), over a region reaching far outside the
// input, checked point by point.
void check_kind(Kind kind, int w, int h, const std::string &schedule) {
    SCOPED_TRACE(std::string(kind_name(kind)) + " of " + std::to_string(w) + " x " +
                 std::to_string(h) + ", " + schedule);
    Buffer<float> input({w, h}, "in");
    input.set_min({-3, 4});
    fill_random(input, -2.0, 2.0, 17 + w * 31 + h);
    ImageParam in(Float(32), 2, "in");
    in.set(input);
    const float value = -7.5f;
    Func padded = apply(kind, in, value);
    Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
    Func out("out");
    out(x, y) = padded(x, y) * 2.0f + padded(x + 1, y - 1);
    Target target;
    if (schedule == "vectorized") {
        out.vectorize(x, 8, TailStrategy::GuardWithIf).parallel(y);
    } else if (schedule == "tiles") {
        out.tile(x, y, xo, yo, xi, yi, 5, 3, TailStrategy::GuardWithIf);
        padded.compute_at(out, xo).vectorize(padded.args()[0], 4, TailStrategy::GuardWithIf);
    } else if (schedule == "gpu") {
        target = aicf_test::gpu_test_target();
        out.gpu_tile(x, y, xo, yo, xi, yi, 8, 4, TailStrategy::GuardWithIf);
        padded.compute_at(out, xo).gpu_threads(padded.args()[0], padded.args()[1]);
    }
    Buffer<float> result({4 * w + 9, 3 * h + 7}, "out");
    result.set_min({-3 - 2 * w - 5, 4 - h - 4});
    out.realize(result, target);
    auto at = [&](int px, int py) -> double {
        const int fx = fold(kind, px, -3, w), fy = fold(kind, py, 4, h);
        if (fx == -(1 << 30) || fy == -(1 << 30)) return value;
        return input(fx, fy);
    };
    int bad = 0;
    for (int j = result.min(1); j < result.min(1) + result.extent(1); j++) {
        for (int i = result.min(0); i < result.min(0) + result.extent(0); i++) {
            const double want = at(i, j) * 2.0 + at(i + 1, j - 1);
            if (std::fabs(result(i, j) - want) > 1e-5 && bad++ < 5)
                ADD_FAILURE() << "out(" << i << ", " << j << ") = " << result(i, j) << ", want "
                              << want;
        }
    }
    EXPECT_EQ(bad, 0);
}

} // namespace

TEST(BoundaryConditions, EachKindReadsTheFoldedPointInEverySchedule) {
    for (Kind kind : all_kinds) {
        for (const char *schedule : {"inline", "vectorized", "tiles", "gpu"})
            check_kind(kind, 7, 5, schedule);
        // Regions of one and two points (a mirror's period is 2 and 2 or 0).
        check_kind(kind, 1, 2, "inline");
        check_kind(kind, 2, 1, "vectorized");
    }
}

// The input is asked for exactly its own region: a buffer of that size is enough, whatever
// the consumer's reach.
TEST(BoundaryConditions, ReadOnlyTheInputsRegion) {
    for (Kind kind : all_kinds) {
        SCOPED_TRACE(kind_name(kind));
        ImageParam in(Float(32), 1, "in");
        Buffer<float> input({10}, "in");
        fill_random(input, 1.0, 2.0, 3);
        in.set(input);
        Func padded = apply(kind, in, 0.0f);
        Var x("x");
        Func out("out");
        out(x) = padded(x * 3 - 40);
        EXPECT_NO_THROW(out.realize({40}));
    }
}

// A Buffer's region is the one it has when the boundary condition is made; a Func's is given,
// and a dimension given no bounds is read as it is.
TEST(BoundaryConditions, BuffersAndFuncsWithGivenRegions) {
    Buffer<int> input({6, 4}, "input");
    input.set_min({2, -1});
    fill_random(input, 1.0, 100.0, 5);
    Func edge = BoundaryConditions::repeat_edge(input);
    Var x("x"), y("y");
    Func out("out");
    out(x, y) = edge(x, y);
    Buffer<int> r = out.realize({12, 8});
    for (int j = 0; j < 8; j++)
        for (int i = 0; i < 12; i++)
            EXPECT_EQ(r(i, j), input(std::clamp(i, 2, 7), std::clamp(j, -1, 2)));

    Func ramp("ramp");
    ramp(x, y) = x * 100 + y;
    Func wrapped = BoundaryConditions::repeat_image(ramp, {{3, 4}, {Expr(), Expr()}});
    Func out2("out2");
    out2(x, y) = wrapped(x, y);
    Buffer<int> r2 = out2.realize({11, 3});
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 11; i++)
            EXPECT_EQ(r2(i, j), fold(Kind::RepeatImage, i, 3, 4) * 100 + j);

    Param<int> lo("lo"), n("n");
    Func mirrored = BoundaryConditions::mirror_interior(ramp, {{lo, n}});
    Func out3("out3");
    out3(x, y) = mirrored(x, y);
    lo.set(-2);
    n.set(5);
    Buffer<int> r3 = out3.realize({13, 2});
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < 13; i++)
            EXPECT_EQ(r3(i, j), fold(Kind::MirrorInterior, i, -2, 5) * 100 + j);
}

TEST(BoundaryConditions, MistakesAreCompileErrors) {
    Var x("x"), y("y");
    Func f("f");
    f(x) = x;
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>([&] {
                        BoundaryConditions::repeat_edge(f, {{0, 4}, {0, 4}});
                    }),
                    "given a region of 2 dimensions, but f has 1");
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>([&] {
                        BoundaryConditions::mirror_image(f, {{0, 0}});
                    }),
                    "has extent 0, so there is no point to read");
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>([&] {
                        BoundaryConditions::repeat_edge(f, {{0, Expr()}});
                    }),
                    "dimension 0 is given a min but no extent");
    Buffer<uint8_t> bytes({4}, "bytes");
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>(
                        [&] { BoundaryConditions::constant_exterior(bytes, 300); }),
                    "is given the value 300 for the points outside, but bytes holds uint8, which "
                    "cannot hold it");
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>(
                        [&] { BoundaryConditions::constant_exterior(bytes, 2.5f); }),
                    "which cannot hold it");
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>(
                        [&] { BoundaryConditions::constant_exterior(bytes, cast<int>(f(x))); }),
                    "which is another type");
    EXPECT_NO_THROW(BoundaryConditions::constant_exterior(bytes, 255));
    Func g("g");
    EXPECT_CONTAINS(
        aicf_test::message_of<CompileError>([&] { BoundaryConditions::repeat_edge(g, {}); }),
        "which has no definition yet");
    Func t("t");
    t(x) = Tuple(x, x + 1);
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>([&] {
                        BoundaryConditions::constant_exterior(t, 0, {{0, 3}});
                    }),
                    "Apply it to a Func of each element");
}

// lerp is exact at both ends, computes floats in their own type and integers in float, rounded
// to nearest and saturated; mux clamps its index.
TEST(Operators, LerpAndMux) {
    Buffer<float> a({37}, "a"), b({37}, "b"), w({37}, "w");
    fill_random(a, -5.0, 5.0, 1);
    fill_random(b, -5.0, 5.0, 2);
    fill_random(w, -0.2, 1.2, 3);
    w(0) = 0.0f;
    w(1) = 1.0f;
    Buffer<uint8_t> p({37}, "p"), q({37}, "q");
    fill_random(p, 1.0, 255.0, 4);
    fill_random(q, 1.0, 255.0, 5);
    Var x("x");
    Func fl("fl"), u8("u8"), mx("mx");
    fl(x) = lerp(a(x), b(x), w(x));
    u8(x) = lerp(p(x), q(x), w(x));
    mx(x) = mux(x - 2, {a(x), b(x), 1.5f, w(x)});
    fl.vectorize(x, 8, TailStrategy::GuardWithIf);
    Buffer<float> rf = fl.realize({37});
    Buffer<uint8_t> ru = u8.realize({37});
    Buffer<float> rm = mx.realize({37});
    EXPECT_EQ(rf(0), a(0));
    EXPECT_EQ(rf(1), b(1));
    for (int i = 0; i < 37; i++) {
        const double wt = w(i);
        const double want = double(a(i)) * (1 - wt) + double(b(i)) * wt;
        EXPECT_NEAR(rf(i), want, 1e-5 * (1 + std::fabs(want))) << i;
        // (Rounded from float32, a value within float32's error of a half may round either
        // way.)
        const double exact = double(p(i)) * (1 - wt) + double(q(i)) * wt;
        const double wu = std::clamp(std::nearbyint(exact), 0.0, 255.0);
        const bool tie = std::fabs(exact - std::floor(exact) - 0.5) < 1e-3;
        EXPECT_LE(std::fabs(int(ru(i)) - wu), tie ? 1.0 : 0.0) << i;
        const float choices[] = {a(i), b(i), 1.5f, w(i)};
        EXPECT_EQ(rm(i), choices[std::clamp(i - 2, 0, 3)]) << i;
    }
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>([&] { lerp(a(x), b(x), x); }),
                    "but it is a fraction from 0 to 1");
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>([&] { mux(w(x), {a(x)}); }),
                    "give an integer");
}

// saturating_add, saturating_sub and saturating_cast against exact arithmetic in __int128, on
// every integer type, at values near the ends of the range (where a + b written out wraps, and
// for int32 and int64, where a guard around it may be folded away), scalar and vectorized.
namespace {

template <typename T> void check_saturating(int seed) {
    const int n = 203;
    Buffer<T> a({n}, "a"), b({n}, "b");
    std::mt19937_64 rng(seed);
    const __int128 lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    for (int i = 0; i < n; i++) {
        // A third near each end, a third anywhere.
        const uint64_t r = rng();
        const __int128 span = hi - lo;
        __int128 va = lo + __int128(r % uint64_t(std::min<__int128>(span, INT64_MAX)));
        if (i % 3 == 0) va = hi - __int128(r % 5);
        if (i % 3 == 1) va = lo + __int128(r % 5);
        a(i) = T(va);
        b(i) = T(lo + __int128(rng() % uint64_t(std::min<__int128>(span, INT64_MAX))));
        if (i % 5 == 0) b(i) = T(hi - __int128(rng() % 3));
        if (i % 5 == 1) b(i) = T(lo + __int128(rng() % 3));
    }
    Var x("x");
    Func add("add"), sub("sub"), narrow("narrow");
    add(x) = saturating_add(a(x), b(x));
    sub(x) = saturating_sub(a(x), b(x));
    narrow(x) = saturating_cast<int8_t>(a(x));
    for (bool vec : {false, true}) {
        SCOPED_TRACE(std::string(vec ? "vectorized " : "scalar ") + std::to_string(sizeof(T)) +
                     (std::is_signed<T>::value ? "-byte signed" : "-byte unsigned"));
        if (vec) {
            add.vectorize(x, 8, TailStrategy::GuardWithIf);
            sub.vectorize(x, 8, TailStrategy::GuardWithIf);
            narrow.vectorize(x, 8, TailStrategy::GuardWithIf);
        }
        Buffer<T> ra = add.realize({n}), rs = sub.realize({n});
        Buffer<int8_t> rn = narrow.realize({n});
        for (int i = 0; i < n; i++) {
            const __int128 s = __int128(a(i)) + b(i), d = __int128(a(i)) - b(i);
            ASSERT_TRUE(__int128(ra(i)) == std::clamp(s, lo, hi)) << i;
            ASSERT_TRUE(__int128(rs(i)) == std::clamp(d, lo, hi)) << i;
            ASSERT_EQ(int(rn(i)), int(std::clamp<__int128>(a(i), -128, 127))) << i;
        }
    }
}

} // namespace

// select with more than two conditions: the first that holds picks the value, the last
// argument where none does; integer literals take the values' type.
TEST(Operators, SelectOfManyConditions) {
    Buffer<float> a({41}, "a");
    fill_random(a, -5.0, 5.0, 7);
    Var x("x");
    Func f("f"), g("g");
    f(x) = select(a(x) < -3.0f, -3.0f, x % 5 == 0, a(x) * 2.0f, a(x) > 3.0f, 3.0f, a(x));
    g(x) = select(x < 5, 1, x < 10, 2, x % 3 == 0, 3, x % 7 == 0, 4, 0) + cast<int>(a(x) > 0);
    f.vectorize(x, 8, TailStrategy::GuardWithIf);
    Buffer<float> rf = f.realize({41});
    Buffer<int> rg = g.realize({41});
    for (int i = 0; i < 41; i++) {
        const float v = a(i);
        const float want = v < -3 ? -3.0f : i % 5 == 0 ? v * 2 : v > 3 ? 3.0f : v;
        EXPECT_EQ(rf(i), want) << i;
        const int pick = i < 5 ? 1 : i < 10 ? 2 : i % 3 == 0 ? 3 : i % 7 == 0 ? 4 : 0;
        EXPECT_EQ(rg(i), pick + (v > 0 ? 1 : 0)) << i;
    }
}

TEST(Operators, SaturatingArithmetic) {
    check_saturating<int8_t>(1);
    check_saturating<uint8_t>(2);
    check_saturating<int16_t>(3);
    check_saturating<uint16_t>(4);
    check_saturating<int32_t>(5);
    check_saturating<uint32_t>(6);
    check_saturating<int64_t>(7);
    check_saturating<uint64_t>(8);
}

// Conditions with C++ bools, 64-bit lerp at its ends, and constants that do not fit.
TEST(Operators, ConditionsWithBoolsAndConstantsThatDoNotFit) {
    Var x("x");
    Param<bool> flag("flag");
    const bool on = true;
    Func f("f");
    f(x) = select((x < 3) && on, 1, 0) + select(on || (x > 5), 10, 0) +
           select(!(x == 2) && flag, 100, 0);
    flag.set(true);
    Buffer<int> r = f.realize({8});
    for (int i = 0; i < 8; i++)
        EXPECT_EQ(r(i), (i < 3 ? 1 : 0) + 10 + (i != 2 ? 100 : 0)) << i;

    Buffer<int64_t> big({2}, "big");
    big(0) = (int64_t(1) << 60) + 1;
    big(1) = -(int64_t(1) << 61) - 3;
    Func l0("l0"), l1("l1");
    l0(x) = lerp(big(0), big(1), cast<float>(x) * 0.0f);
    l1(x) = lerp(big(0), big(1), 1.0f);
    EXPECT_EQ(Buffer<int64_t>(l0.realize({1}))(0), big(0));
    EXPECT_EQ(Buffer<int64_t>(l1.realize({1}))(0), big(1));

    Func m("m");
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>([&] {
                        std::vector<Expr> many(300, Expr(1.0f));
                        m(x) = mux(cast<uint8_t>(x), many);
                    }),
                    "mux chooses among 300 values by an index of type uint8");
    Func small("small");
    small(x) = cast<int8_t>(x);
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>([&] { small(x) += 300; }),
                    "the constant 300 does not fit in int8, the type of small");
}

// A bound of clamp that the value's type cannot hold (an int32 row count for uint8 ids, an
// int32 Param for an int16 value) widens the value, as min and max widen it, rather than
// being narrowed to it: the gather below read row 43 (299 as uint8) for ids 100 and 250.
TEST(Operators, ClampWidensToABoundOfAWiderType) {
    Var d("d"), n("n");
    const int width = 3, rows = 300;
    Buffer<float> table(width, rows);
    fill_random(table, -1.0f, 1.0f, 3);
    Buffer<uint8_t> ids(std::vector<int>{5}, "ids");
    const uint8_t id_values[] = {100, 250, 7, 255, 0};
    for (int i = 0; i < 5; i++)
        ids(i) = id_values[i];
    ImageParam t(Float(32), 2, "t");
    Func gathered("gathered");
    Expr row = clamp(ids(n), 0, t.height() - 1);
    EXPECT_EQ(row.type(), Int(32));
    gathered(d, n) = t(d, row);
    t.set(table);
    Buffer<float> out = gathered.realize({width, 5});
    for (int i = 0; i < 5; i++)
        for (int k = 0; k < width; k++)
            EXPECT_EQ(out(k, i), table(k, id_values[i])) << i;
    // Fewer rows than ids: the clamp holds at the last row.
    Buffer<float> few(width, 200);
    fill_random(few, -1.0f, 1.0f, 4);
    t.set(few);
    out = gathered.realize({width, 5});
    for (int i = 0; i < 5; i++)
        EXPECT_EQ(out(0, i), few(0, std::min<int>(id_values[i], 199))) << i;

    Param<int> high("high"), low("low");
    Var x("x");
    Func wide("wide"), signed_low("signed_low"), literal("literal");
    wide(x) = clamp(cast<int16_t>(30000 - x), 0, high);
    signed_low(x) = clamp(cast<uint8_t>(200 + x), low, 255);
    literal(x) = clamp(cast<uint8_t>(x * 100), 0, 255);
    EXPECT_EQ(literal.value().type(), UInt(8));
    high.set(70000);
    low.set(-5);
    Buffer<int> w = wide.realize({2}), l = signed_low.realize({2});
    EXPECT_EQ(w(0), 30000);
    EXPECT_EQ(w(1), 29999);
    EXPECT_EQ(l(0), 200);
    EXPECT_EQ(l(1), 201);

    // Signed and unsigned types of one width meet in the next wider signed one: a uint32 hash
    // clamped to an int32 row count keeps hashes of 2^31 and more at the last row (in int32
    // they clamped to 0), and a uint8 Param bound of an int8 value stays 200.
    Buffer<uint32_t> hashes(std::vector<int>{4}, "hashes");
    const uint32_t hash_values[] = {0x80000000u, 0xffffffffu, 7u, 0x7fffffffu};
    for (int i = 0; i < 4; i++)
        hashes(i) = hash_values[i];
    Param<int> count("count");
    Param<uint8_t> top("top");
    Func row_of("row_of"), small("small");
    Expr hashed = clamp(hashes(x), 0, count - 1);
    EXPECT_EQ(hashed.type(), Int(64));
    row_of(x) = cast<int>(hashed);
    small(x) = clamp(cast<int8_t>(x * 5), 0, top);
    EXPECT_EQ(small.value().type(), Int(16));
    count.set(100);
    top.set(200);
    Buffer<int> rows_of = row_of.realize({4});
    Buffer<int16_t> s = small.realize({3});
    for (int i = 0; i < 4; i++)
        EXPECT_EQ(rows_of(i), int(std::min<uint32_t>(hash_values[i], 99))) << i;
    for (int i = 0; i < 3; i++)
        EXPECT_EQ(s(i), i * 5) << i;
    // A literal bound is checked against the type the other bound widened to.
    Func late("late");
    late(x) = clamp(cast<uint8_t>(x), count - 240, 300);
    EXPECT_EQ(late.value().type(), Int(32));
}

// The coordinates of a Func are int32: an int64 or unsigned 32-bit argument that may not fit
// is refused, where it was narrowed as it was (an id of 2^32 + 2 read row 2 through a
// constant_exterior boundary). One clamped into int32 bounds is taken.
TEST(Operators, FuncArgumentsWiderThanInt32MustFit) {
    Var d("d"), n("n"), x("x");
    Buffer<float> table(2, 10);
    fill_random(table, -1.0f, 1.0f, 5);
    Buffer<int64_t> ids(std::vector<int>{3}, "ids");
    ids(0) = (int64_t(1) << 32) + 2;
    ids(1) = 4;
    ids(2) = -(int64_t(1) << 32) + 5;
    Func bordered = BoundaryConditions::constant_exterior(table, 0.0f);
    Func g("g");
    std::string msg = aicf_test::message_of<CompileError>([&] { g(d, n) = bordered(d, ids(n)); });
    EXPECT_CONTAINS(msg, "has type int64, but the coordinates of a Func are int32");
    EXPECT_CONTAINS(msg, "Clamp it to the points");
    Buffer<uint32_t> unsigned_ids(std::vector<int>{2}, "unsigned_ids");
    Func h("h");
    msg = aicf_test::message_of<CompileError>([&] { h(d, n) = bordered(d, unsigned_ids(n)); });
    EXPECT_CONTAINS(msg, "has type uint32");
    // Clamped into the table's rows (an int32 bound), or of a range that fits, it is taken.
    Func clamped("clamped"), widened("widened");
    clamped(d, n) = bordered(d, clamp(ids(n), 0, table.dim(1).extent() - 1));
    Buffer<float> c = clamped.realize({2, 3});
    EXPECT_EQ(c(1, 0), table(1, 9));
    EXPECT_EQ(c(1, 1), table(1, 4));
    EXPECT_EQ(c(1, 2), table(1, 0));
    msg = aicf_test::message_of<CompileError>(
        [&] { widened(x) = bordered(0, cast<int64_t>(x) * 3); });
    EXPECT_CONTAINS(msg, "may not fit");
    // Shifts and quotients of a uint32, and values over a reduction domain, are bounded.
    Buffer<uint32_t> keys(std::vector<int>{3}, "keys");
    keys(0) = 0xffffffffu;
    keys(1) = 5u << 28;
    keys(2) = 3u;
    Func shifted("shifted"), divided("divided"), over("over");
    shifted(n) = bordered(0, keys(n) >> 28);
    divided(n) = bordered(1, keys(n) / (1u << 28));
    RDom r(0, 4, "r");
    over(x) = 0.0f;
    over(x) += bordered(0, cast<int64_t>(r) * 3 - 1);
    Buffer<float> sh = shifted.realize({3}), dv = divided.realize({3});
    for (int i = 0; i < 3; i++) {
        const uint32_t k = keys(i) >> 28;
        EXPECT_EQ(sh(i), k < 10 ? table(0, int(k)) : 0.0f) << i;
        EXPECT_EQ(dv(i), k < 10 ? table(1, int(k)) : 0.0f) << i;
    }
    Buffer<float> o = over.realize({1});
    EXPECT_FLOAT_EQ(o(0), table(0, 2) + table(0, 5) + table(0, 8));
    // A uint32 kept below a bound by a select is bounded by it.
    Func selected("selected");
    selected(n) = bordered(0, select(keys(n) < 7u, keys(n), 9u));
    Buffer<float> se = selected.realize({3});
    for (int i = 0; i < 3; i++)
        EXPECT_EQ(se(i), table(0, keys(i) < 7u ? int(keys(i)) : 9)) << i;
    Func fits("fits");
    fits(x) = bordered(0, cast<int64_t>(x));
    Buffer<float> w = fits.realize({12});
    for (int i = 0; i < 12; i++)
        EXPECT_EQ(w(i), i < 10 ? table(0, i) : 0.0f) << i;
}

// A literal of any C++ integer type takes the other operand's type, as an int does: a uint32
// hash constant, a size_t count and a uint64 past INT64_MAX, each checked against the same
// arithmetic in C++ on random inputs; one that does not fit is refused.
TEST(Operators, LiteralsOfEveryIntegerType) {
    const int n = 37;
    Buffer<uint32_t> u({n}, "u");
    Buffer<uint64_t> w({n}, "w");
    std::mt19937_64 rng(11);
    for (int i = 0; i < n; i++) {
        u(i) = uint32_t(rng());
        w(i) = rng();
    }
    Var x("x");
    const Expr h = u(x) * 0x9E3779B1u;
    EXPECT_EQ(h.type(), UInt(32));
    EXPECT_EQ((x + size_t(3)).type(), Int(32));
    EXPECT_EQ((int64_t(2) * x).type(), Int(32));
    // long long is another type than int64_t on Linux: its literals work alike.
    EXPECT_EQ(Expr(5LL).type(), Int(64));
    EXPECT_EQ(Expr(5ULL).type(), UInt(64));
    EXPECT_EQ(clamp(x, 0LL, 10ULL).type(), Int(32));
    EXPECT_EQ((u(x) << 2ull).type(), UInt(32));
    Func f("f"), g("g"), k("k");
    f(x) =
        (h ^ (h >> 15)) + min(u(x), 4000000000u) - select(u(x) > 3000000000u, u(x) & 0xFFFFu, 7u);
    g(x) = select(w(x) >= 0xFFFFFFFF00000000ull, w(x) + 0x8000000000000001ull, w(x) / 3ull);
    k(x) = select(x * int64_t(5) + size_t(2) < 60, 1, 0) + select(u(x) != 0u, 10, 0);
    f.vectorize(x, 8);
    Buffer<uint32_t> rf = f.realize({n});
    Buffer<uint64_t> rg = g.realize({n});
    Buffer<int> rk = k.realize({n});
    for (int i = 0; i < n; i++) {
        const uint32_t hi = u(i) * 0x9E3779B1u;
        const uint32_t m = u(i) < 4000000000u ? u(i) : 4000000000u;
        EXPECT_EQ(rf(i), (hi ^ (hi >> 15)) + m - (u(i) > 3000000000u ? u(i) & 0xFFFFu : 7u)) << i;
        EXPECT_EQ(rg(i), w(i) >= 0xFFFFFFFF00000000ull ? w(i) + 0x8000000000000001ull : w(i) / 3)
            << i;
        EXPECT_EQ(rk(i), (i * 5 + 2 < 60 ? 1 : 0) + (u(i) != 0 ? 10 : 0)) << i;
    }

    Func bad("bad");
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>([&] { bad(x) = x + (int64_t(1) << 40); }),
                    "The integer constant 1099511627776 does not fit in int32, the type of the "
                    "other operand of +");
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>(
                        [&] { bad(x) = cast<int64_t>(x) < 0xFFFFFFFFFFFFFFFFull; }),
                    "The integer constant 18446744073709551615 does not fit in int64");
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>([&] { bad(x) = u(x) & -1; }),
                    "The integer constant -1 does not fit in uint32");
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>([&] { bad(x) = cast<uint8_t>(x) + 300u; }),
                    "The integer constant 300 does not fit in uint8");
}
