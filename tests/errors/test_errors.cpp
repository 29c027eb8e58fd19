// User mistakes raise CompileError or RuntimeError with a message that names the culprit.

#include "ErrorMessage.h"
#include "GPUTarget.h"
#include "Reference.h"
#include "dsl/aicf.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>

using namespace aicf;

using aicf_test::message_of;

TEST(CompileErrors, CallingAnUndefinedFunc) {
    Func f("f"), g("g");
    Var x("x");
    std::string msg = message_of<CompileError>([&] { g(x) = f(x) + 1; });
    EXPECT_CONTAINS(msg, "Func f is called before it is defined");
}

TEST(CompileErrors, WrongArgumentCount) {
    Func f("f"), g("g");
    Var x("x"), y("y");
    f(x, y) = x + y;
    std::string msg = message_of<CompileError>([&] { g(x) = f(x); });
    EXPECT_CONTAINS(msg, "Func f is called with 1 argument");
    EXPECT_CONTAINS(msg, "defined with 2: f(x, y)");
}

TEST(CompileErrors, PureVariableMissingFromLeftSide) {
    Func f("f");
    Var x("x"), y("y");
    std::string msg = message_of<CompileError>([&] { f(x) = x + y; });
    EXPECT_CONTAINS(msg, "f(x)");
    EXPECT_CONTAINS(msg, "uses the variable y, which is not on the left side");
    // In an update, named where it is used: the right side, or its RDom's where().
    Func g("g");
    RDom r(0, 5, "r");
    g(x) = 0.0f;
    msg = message_of<CompileError>([&] { g(x) += cast<float>(r + y); });
    EXPECT_CONTAINS(msg, "In update definition 0 of Func g(x), the right side uses the variable y");
    Func h("h");
    RDom w(0, 5, "w");
    w.where(w < y);
    h(x) = 0.0f;
    msg = message_of<CompileError>([&] { h(x) += cast<float>(w); });
    EXPECT_CONTAINS(msg, "In update definition 0 of Func h(x), the where() predicate of its RDom "
                         "uses the variable y, which is not on the left side.");
}

TEST(CompileErrors, UpdateTypeMismatch) {
    Func f("f");
    Var x("x");
    f(x) = 0.0f;
    std::string msg =
        message_of<CompileError>([&] { f(x) = f(x) + cast<int>(x) * 2 + cast<double>(x); });
    EXPECT_CONTAINS(msg, "update definition 0 of Func f");
    EXPECT_CONTAINS(msg, "has type float64 but the pure definition has type float32");
}

TEST(CompileErrors, FloatIndexIsRejected) {
    Func f("f"), g("g");
    Var x("x");
    f(x) = x;
    std::string msg = message_of<CompileError>([&] { g(x) = f(cast<float>(x) * 0.5f); });
    EXPECT_CONTAINS(msg, "Argument 0 of the call f(");
    EXPECT_CONTAINS(msg, "has type float32");
}

TEST(CompileErrors, SelectConditionMustBeBool) {
    Var x("x");
    std::string msg = message_of<CompileError>([&] { select(x + 1, 1.0f, 2.0f); });
    EXPECT_CONTAINS(msg, "condition of select must be bool");
}

TEST(CompileErrors, ReductionVariableInPureDefinition) {
    Func f("f");
    Var x("x");
    RDom r(0, 10, "r");
    std::string msg = message_of<CompileError>([&] { f(x) = x + r; });
    EXPECT_CONTAINS(msg, "uses the reduction variable r.x");
}

TEST(CompileErrors, UnboundedIndexNamesTheFunc) {
    Func f("f"), g("g"), h("h");
    Var x("x");
    f(x) = x * 2;
    g(x) = x * x;
    g.compute_root();
    h(x) = f(g(x));
    f.compute_root();
    std::string msg = message_of<CompileError>([&] { h.realize({10}); });
    EXPECT_CONTAINS(msg, "cannot bound the region of Func f");
    EXPECT_CONTAINS(msg, "dimension 0 (x)");
}

// An expression built by a C++ loop a hundred thousand steps deep would overflow the stack of
// every recursive pass; it is refused where it is defined, with what to do instead.
TEST(CompileErrors, ExpressionTooDeep) {
    Var x("x");
    Func f("f");
    Expr e = x;
    for (int i = 0; i < 50000; i++)
        e = e * 3 + i;
    std::string msg = message_of<CompileError>([&] { f(x) = e; });
    EXPECT_CONTAINS(msg,
                    "The definition of Func f is an expression more than 8192 operations deep.");
    EXPECT_CONTAINS(msg,
                    "reduce over an RDom instead of building a long sum or product in a C++ loop");
    // Just under the limit is fine.
    Func g("g");
    Expr ok = x;
    for (int i = 0; i < 4000; i++)
        ok = ok * 3 + 1;
    g(x) = ok;
    Buffer<int> out = g.realize({2});
    uint32_t want = 0;
    for (int i = 0; i < 4000; i++)
        want = want * 3 + 1;
    EXPECT_EQ(uint32_t(out(0)), want);
}

// Destroying such an expression (it never reaches a Func) must not recurse once per operation
// either: two million operations deep is far beyond any thread's stack when each level costs
// a frame.
TEST(CompileErrors, DeepExpressionIsDestroyedWithoutRecursion) {
    Var x("x");
    Func f("f");
    {
        Expr e = x;
        for (int i = 0; i < 2000000; i++)
            e = e + 1;
        EXPECT_THROW(f(x) = e, CompileError);
    }
    f(x) = x + 1;
    Buffer<int> out = f.realize({3});
    EXPECT_EQ(out(2), 3);
}

// One Func listed twice as an output gave two buffers and wrote only the last; a copy of the
// handle is the same Func. Its wrapper is another Func, and fills the second buffer.
TEST(CompileErrors, OutputListedTwice) {
    Var x("x");
    Func f("f");
    f(x) = x * 3 + 1;
    Func copy = f;
    for (const std::vector<Func> &outs : {std::vector<Func>{f, f}, std::vector<Func>{f, copy}}) {
        std::string msg = message_of<CompileError>([&] { Pipeline p(outs); });
        EXPECT_CONTAINS(msg, "Func f is listed twice among the outputs of a Pipeline");
        EXPECT_CONTAINS(msg, "list f.in() as the other output");
    }
    Realization r = Pipeline({f, f.in()}).realize({6});
    Buffer<int> a = r[0], b = r[1];
    for (int i = 0; i < 6; i++) {
        EXPECT_EQ(a(i), 3 * i + 1);
        EXPECT_EQ(b(i), 3 * i + 1);
    }
}

TEST(CompileErrors, NamesWithReservedCharacters) {
    std::string msg = message_of<CompileError>([&] { Func f("my.func"); });
    EXPECT_CONTAINS(msg, "contains '.' or '$'");
    // Names become symbols of PTX, objects and headers: spaces, quotes, braces, non-ASCII
    // bytes and a leading digit are refused when the name is given, not in the back end.
    for (const char *name : {"a b", "q\"uote", "x{1}", "caf\xc3\xa9", "tab\t", "2d"}) {
        msg = message_of<CompileError>([&] { Func f(name); });
        EXPECT_CONTAINS(msg, "names become symbols of the generated code: choose one of "
                             "letters, digits and '_', not starting with a digit.")
            << name;
    }
    EXPECT_CONTAINS(message_of<CompileError>([&] { Var v("a-b"); }),
                    "The Var name \"a-b\" contains '-'");
    EXPECT_CONTAINS(message_of<CompileError>([&] { Buffer<int> b({4}, "caf\xc3\xa9"); }),
                    "a byte that is not a printable ASCII character");
    EXPECT_EQ(message_of<CompileError>([&] { Func f("_ok_Name_2"); }), "no exception");
}

// A name AICF gives an unnamed object is never one the user chose: a Buffer named like the
// next unnamed one ("b18" after an unnamed b17) keeps its own values. A user name given after
// AICF handed it out still clashes, and the message says so.
TEST(CompileErrors, GeneratedNamesAvoidTheUsersNames) {
    Buffer<int> first({5});
    const std::string prefix = first.name().substr(0, 1);
    const int n = std::stoi(first.name().substr(1));
    const std::string next = prefix + std::to_string(n + 1), after = prefix + std::to_string(n + 2);
    Buffer<int> mine({5}, next);
    Param<int> p_mine(after);
    Buffer<int> second({5});
    EXPECT_NE(second.name(), next);
    for (int i = 0; i < 5; i++) {
        first(i) = i + 1;
        mine(i) = 10 * (i + 3);
        second(i) = 1000 * (i + 7);
    }
    Var x("x");
    Func sum("sum_of_three");
    sum(x) = first(x) + mine(x) + second(x) + p_mine;
    p_mine.set(5);
    Buffer<int> out = sum.realize({5});
    for (int i = 0; i < 5; i++)
        EXPECT_EQ(out(i), (i + 1) + 10 * (i + 3) + 1000 * (i + 7) + 5) << i;

    Func unnamed;
    unnamed(x) = x * 2;
    Func late(unnamed.name());
    late(x) = unnamed(x) + 1;
    std::string msg = message_of<CompileError>([&] { late.realize({4}); });
    EXPECT_CONTAINS(msg, "Two different Funcs are both named " + unnamed.name());
    EXPECT_CONTAINS(msg, "One of them was made without a name and given " + unnamed.name() +
                             " by AICF before the other was named so");
}

// cast and reinterpret to a type AICF has no values of (a typo such as Int(7)) are refused
// where they are written; they used to compile on the CPU and fail in the simulator or LLVM.
TEST(CompileErrors, CastToATypeThatDoesNotExist) {
    Buffer<float> in({4}, "in");
    Var x("x");
    for (Type t :
         {Float(8), Int(7), BFloat(32), Float(128), UInt(0), Int(128), Float(24), Int(32, 0)}) {
        std::string msg = message_of<CompileError>([&] { Expr e = cast(t, in(x)); });
        EXPECT_CONTAINS(msg, "which is no type of AICF. Values are bool, int8 to int64") << t;
    }
    EXPECT_CONTAINS(message_of<CompileError>([&] { Expr e = reinterpret(Int(4, 8), in(x)); }),
                    "reinterpret of in(x) to ");
    EXPECT_EQ(message_of<CompileError>([&] { Expr e = cast(BFloat(16), in(x)); }), "no exception");
    EXPECT_EQ(message_of<CompileError>([&] { Expr e = cast(UInt(1), x); }), "no exception");
}

// A width or lane count a Type cannot hold is refused where the Type is made: Int(264) used to
// become int8 and Float(32, 65537) a float32 of 1 lane before cast() could check them.
TEST(CompileErrors, TypeWiderThanATypeCanHold) {
    for (auto make : std::vector<std::function<Type()>>{
             [] { return Int(264); }, [] { return Float(32, 65537); }, [] { return UInt(-8); },
             [] { return Int(32, -1); }, [] { return BFloat(16).with_lanes(1 << 20); }}) {
        EXPECT_CONTAINS(message_of<CompileError>([&] { make(); }), "There is no type ");
    }
    EXPECT_CONTAINS(message_of<CompileError>([] { Int(264); }), "There is no type int264: a type "
                                                                "is at most 255 bits wide");
    EXPECT_CONTAINS(message_of<CompileError>([] { Float(32, 65537); }),
                    "There is no type float32x65537");
    EXPECT_EQ(to_string(Float(32, 65535)), "float32x65535");
}

TEST(CompileErrors, IntegerLiteralMustFit) {
    Buffer<uint8_t> in(4);
    Var x("x");
    std::string msg = message_of<CompileError>([&] { Expr e = in(x) + 300; });
    EXPECT_CONTAINS(msg, "300 does not fit in uint8");
    // Nor past float16's largest value, where it would become infinity.
    Buffer<float16_t> half(4);
    msg = message_of<CompileError>([&] { Expr e = half(x) + 70000; });
    EXPECT_CONTAINS(msg, "70000 does not fit in float16 (it would be infinity)");
    EXPECT_EQ(message_of<CompileError>([&] { Expr e = half(x) + 65504; }), "no exception");
    // Against a bool, 0 and 1 are false and true; 2 fits in no bool (C++ compares flag == 2 as
    // an int, never true).
    Buffer<bool> flag(4);
    msg = message_of<CompileError>([&] { Expr e = flag(x) == 2; });
    EXPECT_CONTAINS(msg, "The integer constant 2 does not fit in bool, the type of the other "
                         "operand of ==");
    msg = message_of<CompileError>([&] { Expr e = select(flag(x), flag(x), 7); });
    EXPECT_CONTAINS(msg, "The integer constant 7 does not fit in bool");
    EXPECT_EQ(message_of<CompileError>([&] { Expr e = (flag(x) == 1) && (flag(x) != 0); }),
              "no exception");
}

TEST(RuntimeErrors, InputTooSmallNamesBufferAndDimension) {
    ImageParam input(Float(32), 2, "input");
    Var x("x"), y("y");
    Func f("f");
    f(x, y) = input(x + 1, y) * 2.0f;
    Buffer<float> small(10, 10);
    input.set(small);
    std::string msg = message_of<RuntimeError>([&] { f.realize({10, 10}); });
    EXPECT_CONTAINS(
        msg, "Buffer input is too small: dimension 0 must cover [1, 10], but it covers [0, 9]");
    EXPECT_CONTAINS(msg, "It is read by Func f; its definition and schedule decide how far");
}

// A bound() of an intermediate fixes its storage, so what its updates write must lie inside
// it. A scan up to a Param n past the bound wrote into the next row (every row after the
// first wrong) and past the storage's end, silently; inside the bound it is exact.
TEST(RuntimeErrors, UpdatesOfABoundIntermediateStayInsideTheBound) {
    const int W = 53, H = 5;
    Buffer<int> in({W + 20, H}, "in");
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W + 20; i++)
            in(i, j) = (i * 37 + j * 11) % 201 - 100;
    Var x("x"), y("y");
    Param<int> n("n");
    Func f("f"), out("out");
    RDom r(1, n, "r");
    f(x, y) = in(x, y);
    f(r, y) = f(r - 1, y) + in(r, y);
    out(x, y) = f(x, y);
    f.compute_root().bound(x, 0, W);
    for (int last : {W - 5, W - 1}) {
        n.set(last);
        Buffer<int> o = out.realize({W, H});
        for (int j = 0; j < H; j++) {
            int64_t sum = 0;
            for (int i = 0; i < W; i++) {
                sum = i <= last ? sum + in(i, j) : in(i, j);
                ASSERT_EQ(o(i, j), sum) << "n " << last << " at " << i << ", " << j;
            }
        }
    }
    n.set(W + 7);
    EXPECT_CONTAINS(message_of<RuntimeError>([&] {
                        out.realize({W, H});
                    }),
                    "Func f is bound to [0, 52] in dimension 0, but its update definitions write "
                    "and read [0, 60]. Its storage and the points its pure definition computes "
                    "are exactly the bound");
}

// An align_bounds() after a bound() rounds the fixed region out: where that takes it past the
// bound, the RuntimeError says so (not the update definitions, which a pure Func has none of).
// A bound the alignment keeps runs, and so does align_bounds() before bound().
TEST(RuntimeErrors, AlignBoundsAfterABound) {
    Buffer<int> in({20, 20}, "in");
    in.set_min({-4, -4});
    aicf_test::fill_random(in, -100, 100, 17);
    Var x("x"), y("y");
    for (int form = 0; form < 3; form++) {
        Func f("f"), out("out");
        f(x, y) = in(x, y) * 2;
        out(x, y) = f(x, y - 1) + f(x, y + 1);
        f.compute_root();
        if (form == 0) f.bound(y, -1, 10).align_bounds(y, 4);
        if (form == 1) f.bound(y, -4, 16).align_bounds(y, 4);
        if (form == 2) f.align_bounds(y, 4).bound(y, -1, 10);
        if (form == 0) {
            EXPECT_EQ(message_of<RuntimeError>([&] {
                          out.realize({8, 8});
                      }),
                      "Func f is bound to [-1, 8] in dimension 1, but an align_bounds() called "
                      "after the bound rounds its region out to [-4, 11]. Its storage and the "
                      "points its pure definition computes are exactly the bound: bound it to "
                      "cover the aligned region, give it a min and an extent the alignment "
                      "keeps, or call align_bounds() before bound() (a later bound replaces its "
                      "rounding).");
            continue;
        }
        Buffer<int> o = out.realize({8, 8});
        for (int j = 0; j < 8; j++)
            for (int i = 0; i < 8; i++)
                ASSERT_EQ(o(i, j), 2 * in(i, j - 1) + 2 * in(i, j + 1)) << form;
    }
}

// A bound's extent given by a Param is known to be positive only at run time: zero or less is
// a RuntimeError that says so, for bound() and bound_extent().
TEST(RuntimeErrors, BoundExtentFromAParamMustBePositive) {
    Buffer<int> in({20, 20}, "in");
    aicf_test::fill_random(in, -100, 100, 19);
    Var x("x"), y("y");
    Param<int> extent("extent");
    for (bool from_first : {false, true}) {
        Func f("f"), out("out");
        f(x, y) = in(x, y) + 1;
        out(x, y) = f(x, y + 1) - f(x, y);
        f.compute_root();
        if (from_first)
            f.bound_extent(y, extent);
        else
            f.bound(y, 0, extent);
        extent.set(10);
        Buffer<int> o = out.realize({8, 9});
        for (int j = 0; j < 9; j++)
            for (int i = 0; i < 8; i++)
                ASSERT_EQ(o(i, j), in(i, j + 1) - in(i, j)) << i << ", " << j;
        for (int bad : {0, -2}) {
            extent.set(bad);
            EXPECT_CONTAINS(
                message_of<RuntimeError>([&] {
                    out.realize({8, 9});
                }),
                "Func f is bound to an extent of " + std::to_string(bad) +
                    " in dimension 1 (from 0" +
                    (from_first ? ", its bound_extent from the first point needed" : "") +
                    "): an extent must be positive, and its consumers need [0, 9].");
        }
    }
}

// A bound() or bound_extent() of an intermediate fixes its storage, so the whole tiles its own
// loops write must lie inside it too: a split that shifts its tail inwards by more than the
// bound's extent wrote before each row (wrong values, or a corrupted heap), and one that rounds
// it up wrote past it. A RuntimeError naming the Func, its bound and what its loops write;
// with a guarded tail, the values are right.
TEST(RuntimeErrors, TilesOfABoundIntermediateStayInsideTheBound) {
    Var x("x"), y("y"), xo("xo"), xi("xi");
    for (int form = 0; form < 4; form++) {
        Func f("f"), g("g");
        f(x, y) = x + 10 * y;
        g(x, y) = f(x, y) * 3 + f(x + 1, y);
        f.compute_root();
        if (form == 0) f.vectorize(x, 8).bound(x, 0, 6).bound(y, 0, 4);
        if (form == 1) f.vectorize(x, 8).bound(x, 0, 6); // storage sized at run time
        if (form == 2) f.split(x, xo, xi, 8, TailStrategy::RoundUp).bound_extent(x, 33);
        if (form == 3) f.vectorize(x, 8, TailStrategy::GuardWithIf).bound(x, 0, 6).bound(y, 0, 4);
        const int w = form == 2 ? 32 : 5;
        if (form < 3) {
            std::string msg = message_of<RuntimeError>([&] { g.realize({w, 4}); });
            EXPECT_CONTAINS(msg, form == 2 ? "Func f is bound to [0, 32] in dimension 0 (its "
                                             "bound_extent from the first point needed), but its "
                                             "own loops write [0, 39]."
                                           : "Func f is bound to [0, 5] in dimension 0, but its "
                                             "own loops write [-2, 5].");
            EXPECT_CONTAINS(msg, "Split by a factor that divides the bound's extent, or with "
                                 "TailStrategy::GuardWithIf.");
            continue;
        }
        Buffer<int> out = g.realize({w, 4});
        for (int j = 0; j < 4; j++)
            for (int i = 0; i < w; i++)
                ASSERT_EQ(out(i, j), (i + 10 * j) * 3 + (i + 1 + 10 * j)) << i << ", " << j;
    }
    // An output's bound is checked against the buffer it is realized into.
    Func o("o");
    o(x) = x;
    o.bound(x, 0, 8);
    EXPECT_CONTAINS(message_of<RuntimeError>([&] { o.realize({10}); }),
                    "Func o is bound to [0, 7] in dimension 0, but its output buffer covers "
                    "[0, 9].");
}

// bound_extent smaller than a tile's producer needs is a RuntimeError naming it; an extent
// that is not positive, and a bound_extent on a Func that is inlined, CompileErrors.
TEST(RuntimeErrors, ABoundExtentSmallerThanATileNeeds) {
    Buffer<float> in({40}, "in");
    for (int i = 0; i < 40; i++)
        in(i) = float(i % 7) - 3.0f;
    Var x("x"), xo("xo"), xi("xi");
    Func g("g"), out("out");
    g(x) = in(x)*2.0f;
    out(x) = g(x) + g(x + 1);
    out.split(x, xo, xi, 8, TailStrategy::GuardWithIf);
    g.compute_at(out, xo).bound_extent(x, 8);
    EXPECT_CONTAINS(message_of<RuntimeError>([&] { out.realize({30}); }),
                    "Func g is bound to [0, 7] in dimension 0 (its bound_extent from the first "
                    "point needed), but its consumers need [0, 8].");
    EXPECT_CONTAINS(message_of<CompileError>([&] { g.bound_extent(x, 0); }),
                    "The extent in bound_extent given to Func g is 0; it must be positive.");
    Func h("h"), copy("copy");
    h(x) = in(x);
    copy(x) = h(x);
    h.bound_extent(x, 4);
    EXPECT_CONTAINS(message_of<CompileError>([&] { copy.realize({8}); }),
                    "no region of its own for bound_extent(x, ...) to fix");
}

// A reduction loop split with a guarded tail whose last tile would count past 2^31 - 1: the
// guard compared wrapped values and ran extra steps (a wrong sum at 2^31 - 1 points split by
// 1000). Now a RuntimeError naming the loop; below the limit the sum is exact.
TEST(RuntimeErrors, ASplitReductionWhoseLastTilePassesTheInt32Range) {
    Param<int> n("n");
    RDom r(0, n, "r");
    RVar ro("ro"), ri("ri");
    Func f("f");
    f() = cast<int64_t>(0);
    f() += cast<int64_t>(r.x % 7);
    f.update().split(r.x, ro, ri, 1000);
    n.set(1000003);
    Buffer<int64_t> sum = f.realize(std::vector<int>{});
    int64_t want = 0;
    for (int i = 0; i < 1000003; i++)
        want += i % 7;
    EXPECT_EQ(sum(), want);
    n.set(2147483647);
    EXPECT_CONTAINS(message_of<RuntimeError>([&] { f.realize(std::vector<int>{}); }),
                    "The reduction loop r.x of f.update(0) runs from 0 over 2147483647 points, "
                    "split by 1000 with a guarded tail: its last tile reaches past 2^31 - 1");
}

TEST(RuntimeErrors, WrongBufferType) {
    ImageParam input(Float(32), 1, "input");
    Var x("x");
    Func f("f");
    f(x) = input(x);
    Buffer<int> wrong(8);
    input.set(wrong);
    std::string msg = message_of<RuntimeError>([&] { f.realize({8}); });
    EXPECT_CONTAINS(msg, "Buffer input holds int32 elements, but the pipeline expects float32");
}

TEST(RuntimeErrors, WrongBufferRank) {
    ImageParam input(Float(32), 2, "input");
    Var x("x");
    Func f("f");
    f(x) = input(x, 0);
    Buffer<float> wrong(8);
    input.set(wrong);
    std::string msg = message_of<RuntimeError>([&] { f.realize({8}); });
    EXPECT_CONTAINS(msg, "Buffer input has 1 dimension, but the pipeline expects 2");
}

TEST(RuntimeErrors, OutputOfWrongType) {
    Var x("x");
    Func f("f");
    f(x) = cast<float>(x);
    std::string msg = message_of<RuntimeError>([&] { f.realize(Buffer<int>(8)); });
    EXPECT_CONTAINS(msg, "Buffer f holds int32 elements, but the pipeline expects float32");
}

TEST(RuntimeErrors, UnboundImageParam) {
    ImageParam input(Float(32), 1, "input");
    Var x("x");
    Func f("f");
    f(x) = input(x);
    std::string msg = message_of<RuntimeError>([&] { f.realize({4}); });
    EXPECT_CONTAINS(msg, "ImageParam input has no buffer bound");
}

// A Param never given a value is an error, not a 0 read silently; set, or given its value when
// it is made, it is read.
TEST(RuntimeErrors, ParamWithoutAValue) {
    Param<int> scale("scale");
    Param<float> offset(0.5f, "offset");
    Var x("x");
    Func f("f");
    f(x) = cast<float>(x * scale) + offset;
    std::string msg = message_of<RuntimeError>([&] { f.realize({4}); });
    EXPECT_CONTAINS(msg, "Param scale has no value. Call scale.set(value) before realizing, or "
                         "give it one when it is made: scale(value, \"scale\").");
    scale.set(3);
    Buffer<float> out = f.realize({4});
    for (int i = 0; i < 4; i++)
        EXPECT_EQ(out(i), float(i * 3) + 0.5f);
}

// An undefined Buffer is a bad buffer like any other: bound to an ImageParam, passed to a
// Callable or given as realize's output, it raises a RuntimeError naming the argument.
TEST(RuntimeErrors, UndefinedBuffers) {
    ImageParam input(Float(32), 1, "input");
    Var x("x");
    Func f("f");
    f(x) = input(x) * 2.0f;
    EXPECT_CONTAINS(message_of<RuntimeError>([&] { input.set(Buffer<float>()); }),
                    "ImageParam input was given an undefined Buffer");
    Buffer<float> in(4), undefined;
    input.set(in);
    EXPECT_CONTAINS(message_of<RuntimeError>([&] { f.realize(undefined); }),
                    "realize was given an undefined Buffer for f");
    Callable c = Pipeline(f).compile_to_callable();
    Buffer<float> out(4);
    EXPECT_CONTAINS(message_of<RuntimeError>([&] { c(undefined, out); }),
                    "Argument 0 (input) of the Callable of pipeline f is an undefined Buffer");
    EXPECT_CONTAINS(message_of<RuntimeError>([&] { c(in, undefined); }),
                    "Argument 1 (f) of the Callable of pipeline f is an undefined Buffer");
}

TEST(RuntimeErrors, AbsurdAllocation) {
    // The intermediate needs far more than 2^31 elements.
    Param<int> n("n");
    Var x("x"), y("y");
    Func big("big"), out("out");
    big(x, y) = x + y;
    big.compute_root();
    out(x) = big(x, n) + big(x * n, 0);
    n.set(1 << 30);
    std::string msg = message_of<RuntimeError>([&] { out.realize({16}); });
    EXPECT_CONTAINS(msg, "big");
}

TEST(RuntimeErrors, NegativeRealizeSize) {
    Var x("x");
    Func f("f");
    f(x) = x;
    std::string msg = message_of<RuntimeError>([&] { f.realize({-5}); });
    EXPECT_CONTAINS(msg, "negative");
}

// An RDom whose extent is a Param: a negative value is an error, as a negative constant is when
// the RDom is made, not a reduction over nothing. Checked before anything runs, GPU pipelines
// included.
TEST(RuntimeErrors, NegativeRDomExtentFromAParam) {
    Var x("x"), bx("bx"), tx("tx");
    Param<int> n("n");
    RDom r(0, n, "r");
    Func h("h"), out("out");
    h(x) = 0;
    h(x) += r + x;
    out(x) = h(x) * 2;
    n.set(3);
    Buffer<int> ok = out.realize({4});
    EXPECT_EQ(ok(1), 2 * (0 + 1 + 2 + 3));
    n.set(-5);
    std::string msg = message_of<RuntimeError>([&] { out.realize({4}); });
    EXPECT_CONTAINS(msg, "The reduction variable r.x of h.update(0) has the extent n, which is -5 "
                         "here; an RDom's extent "
                         "must be at least 0.");
    out.gpu_tile(x, bx, tx, 8);
    h.compute_at(out, tx);
    msg = message_of<RuntimeError>([&] { out.realize({16}, Target("host-cuda-sm_80")); });
    EXPECT_CONTAINS(msg, "The reduction variable r.x of h.update(0) has the extent n, which is "
                         "-5 here");
}

// Constant RDom bounds are checked when the RDom is made, as run-time ones are before the
// loops: past 2^31 - 2, beyond int32, or a Func (whose value no bound can use); Params wider
// than 32 bits are refused.
TEST(AlgorithmErrors, RDomBoundsPastTheInt32LoopsOrFromAFunc) {
    std::string msg = message_of<CompileError>([] { RDom r(2147483647 - 10, 100, "r"); });
    EXPECT_CONTAINS(msg, "Dimension 0 of RDom r runs from 2147483637 over 100 points, past "
                         "2^31 - 2, the last coordinate 32-bit loops reach.");
    msg = message_of<CompileError>([] { RDom r(10, 2147483647, "r"); });
    EXPECT_CONTAINS(msg, "runs from 10 over 2147483647 points, past 2^31 - 2");
    msg = message_of<CompileError>([] { RDom r(0, Expr(int64_t(3000000000)), "r"); });
    EXPECT_CONTAINS(msg, "The extent of dimension 0 of RDom r is 3000000000, beyond the 32-bit "
                         "range of loop indices ([-2^31, 2^31 - 1]).");
    // A Param wider than 32 bits would wrap when the loops run (2^32 + 5 as 5, 2^40 as 0).
    Param<int64_t> wide("wide");
    msg = message_of<CompileError>([&] { RDom r(0, wide, "r"); });
    EXPECT_CONTAINS(msg, "The extent of dimension 0 of RDom r is wide, of type int64, but loops "
                         "run over 32-bit indices. Check its range and give cast<int>() of it.");
    Param<uint32_t> unsigned_extent("unsigned_extent");
    msg = message_of<CompileError>([&] { RDom r(0, unsigned_extent, "r"); });
    EXPECT_CONTAINS(msg, "is unsigned_extent, of type uint32, but loops run over 32-bit indices");
    // The last point at 2^31 - 2 is fine, and counted.
    Buffer<int> one({1}, "one");
    one(0) = 1;
    RDom r(2147483647 - 100, 100, "r");
    Var x("x");
    Func count("count");
    count(x) = 0;
    count(x) += one(r - r);
    Buffer<int> c = count.realize({1});
    EXPECT_EQ(c(0), 100);
    Func n("n");
    n(x) = 5;
    msg = message_of<CompileError>([&] { RDom bad(0, n(0), "bad"); });
    EXPECT_CONTAINS(msg, "The extent of dimension 0 of RDom bad calls the Func n. RDom bounds may "
                         "use constants, Params and input buffer sizes, not Funcs");
}

// A fused loop counts the product of its parts' extents in 32 bits: past 2^31 - 1 it is a
// CompileError where the extents are constants and a RuntimeError where they are known only at
// run time, not a loop that wraps (and runs nothing). So too the reduction variable rfactor
// makes of a fuse, and an RDom extent such as p * q.
TEST(ScheduleErrors, FusedLoopsPastTheInt32Count) {
    Param<int> p("p"), q("q");
    auto count_of = [&](RDom r, bool with_rfactor) {
        Func total("total");
        total() = cast<int64_t>(0);
        total() += cast<int64_t>(1) + cast<int64_t>(r.x * 0 + r.y * 0);
        RVar f("f"), fo("fo"), fi("fi");
        Var u("u");
        total.update().fuse(r.x, r.y, f);
        if (with_rfactor) total.update().split(f, fo, fi, 4096).rfactor(fo, u);
        return total;
    };
    std::string msg = message_of<CompileError>(
        [&] { count_of(RDom(0, 50000, 0, 50000, "r"), false).realize({}); });
    EXPECT_CONTAINS(msg, "In the schedule of total.update(0), fuse(r.x, r.y, f) makes a loop of "
                         "2500000000 iterations, more than the 2^31 - 1 a 32-bit loop counts. "
                         "Fuse loops whose extents multiply to less");
    msg = message_of<CompileError>(
        [&] { count_of(RDom(0, 50000, 0, 50000, "r"), true).realize({}); });
    EXPECT_CONTAINS(msg, "fuse(r.x, r.y, f) makes a reduction variable of 2500000000 points");
    p.set(50000);
    q.set(50000);
    msg = message_of<RuntimeError>([&] { count_of(RDom(0, p, 0, q, "r"), false).realize({}); });
    EXPECT_CONTAINS(msg, "The loop f of total.update(0) fuses loops of 50000 and 50000 "
                         "iterations: 2500000000 in all, more than the 2^31 - 1 a 32-bit loop "
                         "counts.");
    msg = message_of<RuntimeError>([&] { count_of(RDom(0, p, 0, q, "r"), true).realize({}); });
    EXPECT_CONTAINS(msg, "that passes the 32-bit range as it is computed (a part of it is "
                         "2500000000), so its loop would run over a wrapped count.");
    // Below the limit, the count is right.
    q.set(3);
    for (bool with_rfactor : {false, true}) {
        Buffer<int64_t> c = count_of(RDom(0, p, 0, q, "r"), with_rfactor).realize({});
        EXPECT_EQ(c(), 150000);
    }
    // An extent computed in 32 bits is taken as written, not wrapped.
    q.set(50000);
    RDom big(0, p * q, "big");
    Func n("n");
    n() = cast<int64_t>(0);
    n() += cast<int64_t>(1) + cast<int64_t>(big.x * 0);
    msg = message_of<RuntimeError>([&] { n.realize({}); });
    EXPECT_CONTAINS(msg, "The reduction variable big.x has a bound, (p * q), that passes the "
                         "32-bit range as it is computed (a part of it is 2500000000)");
    // So too a shift; a product in a branch a select does not take is not computed.
    p.set(65536);
    RDom shifted(0, p << 16, "shifted");
    Func m("m");
    m() = cast<int64_t>(0);
    m() += cast<int64_t>(1) + cast<int64_t>(shifted.x * 0);
    EXPECT_CONTAINS(message_of<RuntimeError>([&] { m.realize({}); }),
                    "(a part of it is 4294967296)");
    p.set(50000);
    RDom guarded(0, select(p > 40000, 100, p * p), "guarded");
    Func k("k");
    k() = cast<int64_t>(0);
    k() += cast<int64_t>(1) + cast<int64_t>(guarded.x * 0);
    Buffer<int64_t> hundred = k.realize({});
    EXPECT_EQ(hundred(), 100);
}

// A Param named like a variable of the Func it is used in would be read as that variable
// (f(x) = x + p, p named "x", computed x + x).
TEST(AlgorithmErrors, AParamNamedLikeAVariableOfItsFunc) {
    Var x("x");
    Param<int> p("x");
    Func f("f");
    std::string msg = message_of<CompileError>([&] { f(x) = x + p; });
    EXPECT_CONTAINS(msg, "Func f uses the Param x, which has the name of its variable x, so one "
                         "would be read as the other. Give the Param another name.");
    Var y("y");
    Func g("g");
    g(x) = x;
    msg = message_of<CompileError>([&] { g(x) += p; });
    EXPECT_CONTAINS(msg, "Func g uses the Param x, which has the name of its variable x");
    // Any other name is fine.
    Param<int> q("q");
    q.set(100);
    Func h("h");
    h(y) = y + q;
    Buffer<int> got = h.realize({3});
    EXPECT_EQ(got(2), 102);
}

// A buffer whose host pointer was set to null through raw_buffer() (a descriptor filled in by C
// code, its data not yet set) is refused before the pipeline reads or writes it.
TEST(RuntimeErrors, ABufferWithPointsAndNoMemory) {
    Var x("x");
    ImageParam im(Int(32), 1, "im");
    Func f("f");
    f(x) = im(x) + 1;
    Buffer<int> b({20}, "b");
    im.set(b);
    Buffer<int> first = f.realize({10});
    uint8_t *const saved = b.raw_buffer()->host;
    b.raw_buffer()->host = nullptr;
    std::string msg = message_of<RuntimeError>([&] { f.realize({10}); });
    EXPECT_CONTAINS(msg, "Buffer im has 20 points but no memory: its host pointer is null and it "
                         "has no device allocation.");
    b.raw_buffer()->host = saved;
    Buffer<int> out({10}, "out");
    uint8_t *const out_host = out.raw_buffer()->host;
    out.raw_buffer()->host = nullptr;
    msg = message_of<RuntimeError>([&] { f.realize(out); });
    EXPECT_CONTAINS(msg, "Buffer f has 10 points but no memory");
    out.raw_buffer()->host = out_host;
    // Borrowing a null pointer: refused with points, accepted without (an empty vector's data).
    msg = message_of<RuntimeError>([&] { Buffer<int> bad(nullptr, {4}, "bad"); });
    EXPECT_CONTAINS(msg, "Buffer bad was given a null data pointer, but it has points");
    std::vector<float> none;
    ImageParam rows(Float(32), 2, "rows");
    RDom r(0, rows.width(), "r");
    Func sums("sums");
    sums(x) = 0.0f;
    sums(x) += rows(r, x);
    rows.set(Buffer<float>(none.data(), {0, 5}, "empty_rows"));
    Buffer<float> s = sums.realize({5});
    for (int i = 0; i < 5; i++)
        EXPECT_EQ(s(i), 0.0f);
    Buffer<float> empty_out(none.data(), {0}, "empty_out");
    sums.realize(empty_out);
}

// Run-time errors name buffers as the pipeline does (an output's Func, an ImageParam, the
// Buffer a Callable was compiled with); the Buffer the caller passed is named beside it.
TEST(RuntimeErrors, MessagesNameTheBufferPassed) {
    Var x("x"), y("y");
    ImageParam in(Float(32), 2, "in");
    Func f("f");
    f(x, y) = in(x, y) + 1.0f;
    std::vector<float> m(50 * 50, 1.0f), o(50 * 50);
    std::vector<aicf_dim_t> transposed = {{0, 40, 50, 0}, {0, 40, 1, 0}};
    Buffer<float> weights(m.data(), transposed, "weights_T");
    Buffer<float> result(o.data(), transposed, "result_T");
    Buffer<float> dense({40, 40}, "dense");
    in.set(dense);
    std::string msg = message_of<RuntimeError>([&] { f.realize(result); });
    EXPECT_CONTAINS(msg, "Buffer f has stride 50 in dimension 0");
    EXPECT_CONTAINS(msg, "(Buffer f is the Buffer result_T passed for output f.)");
    in.set(weights);
    msg = message_of<RuntimeError>([&] { f.realize({40, 40}); });
    EXPECT_CONTAINS(msg, "(Buffer in is the Buffer weights_T passed for input in.)");
    Buffer<float> cb({40, 30}, "cb");
    Func g("g");
    g(x, y) = cb(x, y) * 2.0f;
    Callable c = Pipeline(g).compile_to_callable();
    Buffer<float> other({50, 30}, "other"), out({40, 30}, "out");
    msg = message_of<RuntimeError>([&] { c(other, out); });
    EXPECT_CONTAINS(msg, "Buffer cb has stride 50 in dimension 1, but the pipeline was compiled "
                         "for a buffer of stride 40 there");
    EXPECT_CONTAINS(msg, "(Buffer cb is the Buffer other passed for input cb.)");
    // A message that names the buffer before a colon.
    Buffer<float> far({10, 10}, "far");
    far.set_min({2147483638, 0});
    in.set(dense);
    msg = message_of<RuntimeError>([&] { f.realize(far); });
    EXPECT_CONTAINS(msg, "Buffer f: dimension 0 starts at 2147483638 and has extent 10");
    EXPECT_CONTAINS(msg, "(Buffer f is the Buffer far passed for output f.)");
}

// Buffer<T, D> states its rank: a buffer of another rank is refused, as one of another type.
TEST(RuntimeErrors, BufferOfTheWrongStaticRank) {
    std::string msg = message_of<RuntimeError>([&] { Buffer<float, 2> a({4, 4, 4}, "cube"); });
    EXPECT_CONTAINS(msg, "Buffer cube has 3 dimensions, but is used as a Buffer of 2 dimensions.");
    Buffer<float> line({7}, "line");
    msg = message_of<RuntimeError>([&] { Buffer<float, 2> b = line; });
    EXPECT_CONTAINS(msg, "Buffer line has 1 dimension, but is used as a Buffer of 2 dimensions.");
    Buffer<float, 1> ok = line;
    EXPECT_EQ(ok.dimensions(), 1);
}

TEST(RuntimeErrors, AnOutputTooSmallSaysWhy) {
    Var x("x");
    Func out("out");
    out(x) = x * 2;
    out.bound(x, 0, 37);
    std::string msg = message_of<RuntimeError>([&] { out.realize({36}); });
    EXPECT_CONTAINS(msg, "Buffer out is too small: dimension 0 must cover [0, 36], but it covers "
                         "[0, 35]. The schedule of out bounds dimension 0 (bound()): its buffer "
                         "must cover that region.");
    EXPECT_EQ(msg.find("whole tiles"), std::string::npos) << msg;
    Buffer<uint8_t> img({50}, "img");
    for (int i = 0; i < 50; i++)
        img(i) = uint8_t(i * 5);
    RDom r(0, 50, "r");
    Func hist("hist");
    hist(x) = 0;
    hist(cast<int>(img(r))) += 1;
    msg = message_of<RuntimeError>([&] { hist.realize({100}); });
    EXPECT_CONTAINS(msg, "Buffer hist is too small: dimension 0 must cover [0, 255], but it "
                         "covers [0, 99]. An update of hist writes at points other than its own");
    EXPECT_EQ(msg.find("whole tiles"), std::string::npos) << msg;
    // A Func with an update whose points lie inside, and a pure stage split wider than the
    // output: the split is named, not the update.
    Func q("q");
    RDom three(0, 3, "three");
    q(x) = x;
    q(three) += 1;
    q.split(x, Var("qo"), Var("qi"), 32);
    msg = message_of<RuntimeError>([&] { q.realize({29}); });
    EXPECT_CONTAINS(msg, "Buffer q is too small: dimension 0 must cover [-3, 28], but it covers "
                         "[0, 28]. The schedule of q writes whole tiles");
    EXPECT_EQ(msg.find("An update of q"), std::string::npos) << msg;
    // A scan that starts one point early reads scan(-1): the read is named, not a write.
    Func scan("scan");
    RDom all(0, 10, "all");
    scan(x) = x;
    scan(all) = scan(all - 1) + 1;
    msg = message_of<RuntimeError>([&] { scan.realize({10}); });
    EXPECT_CONTAINS(msg, "Buffer scan is too small: dimension 0 must cover [-1, 9], but it covers "
                         "[0, 9]. An update of scan reads scan at points outside the ones it "
                         "writes (a scan's scan(r - 1) at its first r, say)");
    EXPECT_EQ(msg.find("writes at points other"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("whole tiles"), std::string::npos) << msg;
    // A scatter whose rows come from data, and whose own loop along x rounds up: dimension 0
    // is the tiles' fault, not the rows'.
    Buffer<int> ids({20}, "ids");
    for (int b = 0; b < 20; b++)
        ids(b) = b % 7;
    Var y("y"), xo("xo"), xi("xi");
    RDom rows(0, 20, "rows");
    Func dt("dt");
    dt(x, y) = 0.0f;
    dt(x, clamp(ids(rows), 0, 6)) += cast<float>(x);
    dt.update().split(x, xo, xi, 8, TailStrategy::RoundUp);
    msg = message_of<RuntimeError>([&] { dt.realize({37, 7}); });
    EXPECT_CONTAINS(msg, "Buffer dt is too small: dimension 0 must cover [0, 39], but it covers "
                         "[0, 36]. The schedule of dt writes whole tiles");
    EXPECT_EQ(msg.find("An update of dt"), std::string::npos) << msg;
    // align_bounds on an output: the cause is named, not a split it does not have; its
    // wrapper as the output runs.
    Func al("al");
    al(x) = x * 2;
    al.align_bounds(x, 8);
    msg = message_of<RuntimeError>([&] { al.realize({13}); });
    EXPECT_CONTAINS(msg, "Buffer al is too small: dimension 0 must cover [0, 15], but it covers "
                         "[0, 12]. The schedule of al aligns dimension 0 (align_bounds())");
    EXPECT_CONTAINS(msg, "or realize al.in() instead, with al computed at the root");
    EXPECT_EQ(msg.find("whole tiles"), std::string::npos) << msg;
    al.compute_root();
    Buffer<int> wrapped = al.in().realize({13});
    for (int i = 0; i < 13; i++)
        EXPECT_EQ(wrapped(i), 2 * i);
}

// The buffers of a Tuple-valued output share one region; a larger one is not "too small".
TEST(RuntimeErrors, TupleBuffersOfDifferentRegions) {
    Var x("x");
    Func t("t");
    t(x) = Tuple(cast<float>(x), x);
    Buffer<float> a({13}, "ta");
    Buffer<int> b({20}, "tb");
    std::string msg = message_of<RuntimeError>([&] { t.realize(Realization(a, b)); });
    EXPECT_CONTAINS(msg, "The buffers of a Tuple-valued output differ in dimension 0: t.0 covers "
                         "[0, 12] and t.1 covers [0, 19].");
    EXPECT_EQ(msg.find("too small"), std::string::npos) << msg;
}

// Past the last value of a Tuple or a Realization: a CompileError naming what there is.
TEST(AlgorithmErrors, TupleAndRealizationIndicesPastTheEnd) {
    Var x("x");
    Func two("two");
    two(x) = Tuple(x, x * 2);
    Realization rz = two.realize({3});
    std::string msg = message_of<CompileError>([&] { (void)rz[5]; });
    EXPECT_CONTAINS(msg, "A Realization of 2 buffers (two_0, two_1) has no element 5.");
    Tuple t(Expr(1), Expr(2));
    msg = message_of<CompileError>([&] { (void)t[2]; });
    EXPECT_CONTAINS(msg, "A Tuple of 2 values has no element 2.");
}

// Coordinates near the top of the int32 range: a buffer must end before 2^31 - 1 (loops run to
// min + extent), and the region read is checked in 64 bits, so a read at x + 5 that would wrap
// is refused, not read from the wrong end of memory.
TEST(RuntimeErrors, CoordinatesNearTheTopOfTheInt32Range) {
    const int top = 2147483647;
    Var x("x");
    ImageParam in(Int(32), 1, "in");
    Func f("f");
    f(x) = in(x) + in(x + 5);
    Buffer<int> b({20}, "b");
    for (int i = 0; i < 20; i++)
        b.data()[i] = i + 1;
    b.set_min({top - 20}); // covers [top - 20, top - 1]
    in.set(b);
    auto run = [&](int extent) {
        Buffer<int> o({extent}, "o");
        o.set_min({top - 20});
        f.realize(o);
        return o;
    };
    Buffer<int> o = run(15); // reads up to top - 20 + 14 + 5 = top - 1, the last element
    EXPECT_EQ(o(top - 6), 15 + 20);
    std::string msg = message_of<RuntimeError>([&] { run(18); });
    EXPECT_CONTAINS(
        msg, "Buffer in is too small: dimension 0 must cover [2147483627, 2147483649], but it "
             "covers [2147483627, 2147483646].");
    Buffer<int> past({10}, "past");
    past.set_min({top - 9});
    in.set(past);
    msg = message_of<RuntimeError>([&] { f.realize({1}); });
    EXPECT_CONTAINS(
        msg,
        "Buffer in: dimension 0 starts at 2147483638 and has extent 10, so it ends past 2^31 - 2");
}

TEST(RuntimeErrors, BufferTooLargeForInt32Indexing) {
    std::string msg = message_of<RuntimeError>([&] { Buffer<float> b(100000, 100000); });
    EXPECT_CONTAINS(msg, "2^31 - 1");
}

// Schedule errors: each names the stage or Func, the loop, and what would be valid.

TEST(ScheduleErrors, ComputeAtAMissingLoopListsTheLoopsThatExist) {
    Var x("x"), y("y"), xo("xo"), xi("xi");
    Func f("f"), g("g");
    f(x, y) = x + y;
    g(x, y) = f(x, y) * 2;
    g.split(x, xo, xi, 4); // g has no loop x any more
    f.compute_at(g, x);
    std::string msg = message_of<CompileError>([&] { g.realize({8, 8}); });
    EXPECT_CONTAINS(
        msg, "Func f is scheduled at loop x of g, but there is no such loop where f is used.");
    EXPECT_CONTAINS(msg, "The loops that could hold it are:\n  y of g\n  xo of g\n  xi of g\n"
                         "  (or root, or inline)");
}

TEST(ScheduleErrors, SplitOfAVariableTheStageDoesNotHaveNamesItsLoops) {
    Var x("x"), y("y"), z("z");
    Func g("g");
    g(x, y) = x + y;
    std::string msg = message_of<CompileError>([&] { g.split(z, Var("zo"), Var("zi"), 4); });
    EXPECT_CONTAINS(msg, "In the schedule of g, split names the loop z, but g has no such loop.");
    EXPECT_CONTAINS(msg, "Its loops are, outermost first: y, x.");
    msg = message_of<CompileError>([&] { g.never_partition(z); });
    EXPECT_CONTAINS(
        msg, "In the schedule of g, never_partition names the loop z, but g has no such loop.");
    // Directives that split name themselves, not the split they make.
    for (const char *directive : {"vectorize", "unroll", "parallel"}) {
        msg = message_of<CompileError>([&] {
            if (directive[0] == 'v') g.vectorize(z, 4);
            if (directive[0] == 'u') g.unroll(z, 4);
            if (directive[0] == 'p') g.parallel(z, 4);
        });
        EXPECT_CONTAINS(msg, std::string("In the schedule of g, ") + directive +
                                 " names the loop z, but g has no such loop.");
    }
}

// An update that names no variable of an RDom runs once at each point: a where() on the RDom
// does not make it the update's, and a directive that names its variables says so.
TEST(ScheduleErrors, ReductionLoopsOfAnUpdateThatNamesNoRDom) {
    RDom r(0, 10, 0, 10, "r");
    r.where(r.x == r.y);
    Func count("count");
    count() = 0;
    count() += 1;
    std::string msg = message_of<CompileError>([&] { count.update().reorder(r.y, r.x); });
    EXPECT_CONTAINS(msg, "In the schedule of count.update(0), reorder names the reduction loop "
                         "r.y, but count.update(0) uses no reduction variable, so it runs once at "
                         "each point and has no reduction loops. An update runs over the RDom "
                         "whose variables its left or right side names");
    Var x("x");
    Func g("g");
    g() = 3;
    msg = message_of<CompileError>([&] { g.split(x, Var("xo"), Var("xi"), 4); });
    EXPECT_CONTAINS(msg, "In the schedule of g, split names the loop x, but g has no such loop. "
                         "It has no loops.");
}

// A size a schedule is given is known before any loop runs: one that uses a loop's variable
// or reads a Func is refused where it is given, naming it.
TEST(ScheduleErrors, ScheduleSizesMustBeKnownBeforeLoopsRun) {
    Var x("x"), y("y"), xo("xo"), xi("xi");
    Func f("f"), g("g"), out("out");
    g(x) = x;
    f(x, y) = x + y;
    out(x, y) = f(x, y) * 2;
    const std::string after = ": a schedule's sizes must be known before any loop runs. Use "
                              "constants, Params and the shapes of inputs";
    auto expect = [&](const std::function<void()> &schedule, const std::string &what) {
        EXPECT_CONTAINS(message_of<CompileError>(schedule), what + after);
    };
    expect([&] { f.split(x, xo, xi, y); },
           "In the schedule of f, the split factor of x is y, which uses the variable y");
    expect([&] { f.vectorize(x, y + 4); },
           "In the schedule of f, the split factor of x is (y + 4), which uses the variable y");
    expect([&] { f.compute_at(out, y).bound(x, y, 8); },
           "The min given to bound(x) on Func f is y, which uses the variable y");
    expect([&] { f.bound(x, 0, g(3)); }, "The extent given to bound(x) on Func f is g(3), which "
                                         "reads g");
    expect([&] { f.align_bounds(x, y + 1); },
           "The modulus given to align_bounds(x) on Func f is (y + 1), which uses the variable y");
    expect([&] { f.align_storage(x, y + 1); }, "The alignment given to align_storage(x) on Func "
                                               "f is (y + 1), which uses the variable y");
    // Params and input shapes are known before the loops: accepted, and exact.
    Param<int> factor("factor");
    ImageParam in(Int(32), 1, "in");
    Func h("h");
    h(x) = in(x) + 1;
    h.split(x, xo, xi, factor).bound(x, 0, in.width());
    Buffer<int> data({11}, "data");
    for (int i = 0; i < 11; i++)
        data(i) = 3 * i;
    in.set(data);
    factor.set(4);
    Buffer<int> got = h.realize({11});
    for (int i = 0; i < 11; i++)
        EXPECT_EQ(got(i), 3 * i + 1);
    // Sizes beyond 32 bits, constant or not, would be cut to their low 32 bits (a split by
    // 2^40 ran no loop at all; align_bounds by it returned memory never written).
    const Expr huge = Expr(int64_t(1) << 40);
    auto beyond = [&](const std::function<void(Func &)> &schedule, const std::string &what) {
        Func k("k");
        k(x) = x * 3 + 1;
        EXPECT_CONTAINS(message_of<CompileError>([&] { schedule(k); }),
                        what + " is 1099511627776, beyond the 32-bit range of loop indices");
    };
    beyond([&](Func &k) { k.split(x, xo, xi, huge); }, "the split factor of x");
    beyond([&](Func &k) { k.vectorize(x, huge); }, "the split factor of x");
    beyond([&](Func &k) { k.gpu_tile(x, xo, xi, huge); }, "the split factor of x");
    beyond([&](Func &k) { k.align_bounds(x, huge); },
           "The modulus given to align_bounds(x) on Func k");
    beyond([&](Func &k) { k.align_storage(x, huge); },
           "The alignment given to align_storage(x) on Func k");
    beyond([&](Func &k) { k.bound(x, huge, 4); }, "The min given to bound(x) on Func k");
    Param<int64_t> wide("wide");
    EXPECT_CONTAINS(message_of<CompileError>([&] { h.split(xo, Var("a"), Var("b"), wide); }),
                    "the split factor of xo is wide, of type int64, but loops run over 32-bit "
                    "indices. Check its range and give cast<int>() of it.");
    // A factor within 32 bits whose tiles' coordinates are not (an input read at x + 1): the
    // message names the loop and its count, not a data-dependent index.
    Func s("s");
    s(x) = data(x + 1) * 2;
    s.split(x, xo, xi, INT32_MAX);
    EXPECT_CONTAINS(message_of<CompileError>([&] { s.realize({7}); }),
                    "AICF cannot bound the region of input data read in dimension 0: the loop xi "
                    "of s runs 2147483647 iterations (a split by that factor), so the coordinates "
                    "of its tiles pass the 32-bit range.");
}

// A producer read through x / 2 per tile of 3 has 2 or 3 points a tile: its loop has no
// constant extent to unroll. The message names the loop and advises a split with a guarded
// tail in the user's names, and that advice works (checked against a plain loop).
TEST(ScheduleErrors, UnrollOfALoopWithoutAConstantExtent) {
    Buffer<float> in({64}, "in");
    for (int i = 0; i < 64; i++)
        in(i) = float((i * 5) % 7) - 3.0f;
    Var x("x"), xo("xo"), xi("xi");
    auto pipeline = [&](const std::function<void(Func &)> &unroll) {
        Func f("f"), g("g");
        f(x) = in(x)*2.0f;
        g(x) = f(x / 2) + f((x + 1) / 2);
        g.split(x, xo, xi, 3);
        // At the root, f's region is the whole output's: no constant bounds its extent.
        f.compute_root();
        unroll(f);
        return g;
    };
    Func bad = pipeline([&](Func &f) { f.unroll(x); });
    const std::string msg = message_of<CompileError>([&] { bad.realize({40}); });
    EXPECT_CONTAINS(msg, "The loop x of f is unrolled, but its extent (");
    EXPECT_CONTAINS(msg, "unroll the inner loop with a guarded tail, e.g. f.unroll(x, 4, "
                         "TailStrategy::GuardWithIf)");
    EXPECT_CONTAINS(msg, "f.bound(x, 0, 3) makes the extent that constant.");
    // A loop split from a dimension, or a reduction loop: bound() takes neither; the example
    // names the loop and its stage.
    Func split_loop = pipeline([&](Func &f) {
        Var fo("fo"), fi("fi");
        f.split(x, fo, fi, 2).unroll(fo);
    });
    const std::string split_msg = message_of<CompileError>([&] { split_loop.realize({40}); });
    EXPECT_CONTAINS(split_msg, "The loop fo of f is unrolled, but its extent (");
    EXPECT_CONTAINS(split_msg, "e.g. f.unroll(fo, 4, TailStrategy::GuardWithIf)");
    EXPECT_EQ(split_msg.find(".bound("), std::string::npos) << split_msg;
    Param<int> width("width");
    Var y("y");
    RDom r(0, width, "r");
    Func h("h");
    h(y) = 0.0f;
    h(y) += cast<float>(r.x + y);
    h.update().unroll(r.x);
    width.set(5);
    const std::string rvar_msg = message_of<CompileError>([&] { h.realize({3}); });
    EXPECT_CONTAINS(rvar_msg, "e.g. h.update(0).unroll(r.x, 4, TailStrategy::GuardWithIf)");
    EXPECT_EQ(rvar_msg.find(".bound("), std::string::npos) << rvar_msg;
    Func good = pipeline([&](Func &f) { f.unroll(x, 4, TailStrategy::GuardWithIf); });
    Buffer<float> out = good.realize({40})[0];
    for (int i = 0; i < 40; i++)
        ASSERT_EQ(out(i), in(i / 2) * 2.0f + in((i + 1) / 2) * 2.0f) << i;
}

// Unrolling copies a body once per iteration: at most 256 iterations a loop, and at most 4096
// copies through unrolled loops inside one another (24 x 24 x 24 compiled for about a minute;
// 64 x 64 x 64 did not finish).
TEST(ScheduleErrors, UnrollingIsBounded) {
    Var x("x"), y("y"), z("z");
    Func f("f"), g("g");
    f(x, y, z) = x + y * z;
    g(x, y, z) = x + y * z;
    EXPECT_CONTAINS(message_of<CompileError>([&] { f.unroll(x, 300); }),
                    "In the schedule of f, unroll(x, 300): unroll takes at most 256 iterations. "
                    "Give a factor of at most 256.");
    f.bound(x, 0, 300).unroll(x);
    EXPECT_CONTAINS(message_of<CompileError>([&] {
                        f.realize({300, 2, 2});
                    }),
                    "The loop x of f is unrolled, but its extent is 300: the body would be "
                    "copied 300 times. AICF unrolls at most 256 iterations");
    g.unroll(x, 16).unroll(y, 16).unroll(z, 24);
    EXPECT_CONTAINS(message_of<CompileError>([&] {
                        g.realize({32, 32, 48});
                    }),
                    "The loops z_ui of g, y_ui of g, and x_ui of g are unrolled inside one "
                    "another, so the innermost body would be copied 24 x 16 x 16 = 6144 times. "
                    "AICF makes at most 4096 copies of a body");
    // Fewer copies of a wide vector: 512 copies of 64 lanes.
    Func h("h");
    h(x, y) = x * 3 - y;
    h.vectorize(x, 64).unroll(x, 16).unroll(y, 32);
    EXPECT_CONTAINS(message_of<CompileError>([&] {
                        h.realize({1024, 32});
                    }),
                    "The loops y_ui of h and x_ui of h are unrolled inside one another around a "
                    "vector of 64 lanes, so the innermost body would be copied 32 x 16 = 512 "
                    "times, 32768 lanes in all. AICF compiles at most 16384 lanes of unrolled "
                    "code (256 copies of this body); keep some of these loops rolled, or "
                    "vectorize by fewer lanes.");
    h = Func("h");
    h(x, y) = x * 3 - y;
    h.vectorize(x, 16).unroll(x, 4).unroll(y, 3);
    Buffer<int> wide = h.realize({131, 7});
    for (int j = 0; j < 7; j++)
        for (int i = 0; i < 131; i++)
            ASSERT_EQ(wide(i, j), i * 3 - j) << i << ", " << j;
    f = Func("f");
    f(x, y, z) = x + y * z;
    f.unroll(x, 8).unroll(y, 4).unroll(z, 3);
    Buffer<int> out = f.realize({8, 4, 3});
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 4; j++)
            for (int i = 0; i < 8; i++)
                ASSERT_EQ(out(i, j, k), i + j * k);
}

// vectorize(x, n) and unroll(x, n) split x by n into a loop compiled as straight code: a
// factor that is no constant, not positive or too large is refused where it is written, in the
// user's names, and so is a second split of x into the same inner loop. A constant expression
// is a constant.
TEST(ScheduleErrors, VectorizeAndUnrollFactors) {
    Var x("col"), y("row");
    Param<int> width("width");
    Func out("out");
    out(x, y) = x + y;
    EXPECT_CONTAINS(message_of<CompileError>([&] { out.vectorize(x, width); }),
                    "In the schedule of out, vectorize(col, width): the factor is not a "
                    "constant, and it becomes the extent of a loop vectorized into straight "
                    "code. Give a constant, e.g. out.vectorize(col, 8), or split col by width "
                    "and leave the inner loop serial.");
    EXPECT_CONTAINS(message_of<CompileError>([&] { out.unroll(y, width + 1); }),
                    "In the schedule of out, unroll(row, (width + 1)): the factor is not a "
                    "constant");
    EXPECT_CONTAINS(message_of<CompileError>([&] { out.vectorize(x, 0); }),
                    "In the schedule of out, vectorize(col, 0): the factor must be positive.");
    EXPECT_CONTAINS(message_of<CompileError>([&] { out.unroll(x, -2); }),
                    "unroll(col, -2): the factor must be positive.");
    EXPECT_CONTAINS(message_of<CompileError>([&] { out.parallel(y, 0); }),
                    "In the schedule of out, parallel(row, 0): the task size (iterations per "
                    "task) must be positive.");
    EXPECT_CONTAINS(message_of<CompileError>([&] { out.vectorize(x, 128); }),
                    "In the schedule of out, vectorize(col, 128): vectorize takes at most 64 "
                    "lanes. Give a factor of at most 64.");
    out.vectorize(x, 8);
    EXPECT_CONTAINS(message_of<CompileError>([&] { out.vectorize(x, 2); }),
                    "In the schedule of out, vectorize(col, 2) would split col into col and "
                    "col_vi, but col was already split that way (by an earlier vectorize of "
                    "it). vectorize col_vi itself, or split col with Vars of your own.");
    out.unroll(x, Expr(2) * 2);
    Buffer<int> b = out.realize({37, 3});
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 37; i++)
            ASSERT_EQ(b(i, j), i + j);
    // So too in an update, whose guarded tail needs the factor as a constant.
    Func acc("acc");
    acc(x, y) = x;
    acc(x, y) += y * 2;
    acc.update(0).vectorize(y, Expr(4) * 2).unroll(x, Expr(1) + 1);
    Buffer<int> u = acc.realize({7, 19});
    for (int j = 0; j < 19; j++)
        for (int i = 0; i < 7; i++)
            ASSERT_EQ(u(i, j), i + 2 * j);
    // vectorize(x) of a loop of no constant extent says so in the user's names.
    Func g("g");
    g(x) = x * 2;
    g.vectorize(x);
    std::string msg = message_of<CompileError>([&] { g.realize({20}); });
    EXPECT_CONTAINS(msg, "The loop col of g is vectorized, but its extent (");
    EXPECT_CONTAINS(msg, "is not a constant. Split it by a constant factor and vectorize the "
                         "inner loop, e.g. g.vectorize(col, 8).");
}

// A wrapper made by in() is the copy of a Func its consumers read; giving it a definition
// would change what they read.
TEST(AlgorithmErrors, AWrapperTakesNoDefinitions) {
    Var x("x");
    Func g("g"), f("f");
    g(x) = x;
    f(x) = g(x) + 1;
    Func w = g.in(f);
    EXPECT_CONTAINS(message_of<CompileError>([&] { w(x) = x * 100; }),
                    "Func g_in_f is the wrapper g.in(f) made, a copy of g that its consumers "
                    "read instead; it takes a schedule, not definitions.");
    Func all = g.in();
    EXPECT_CONTAINS(message_of<CompileError>([&] { all(x) += 1; }),
                    "Func g_in is the wrapper g.in() made");
    Buffer<int> out = f.realize({4});
    for (int i = 0; i < 4; i++)
        EXPECT_EQ(out(i), i + 1);
    // A wrapper for a Func that does not call the wrapped one would never be read.
    Func h("h"), k("k");
    h(x) = x * 2;
    k(x) = h(x) + f(x);
    g.in(h).compute_root();
    EXPECT_CONTAINS(message_of<CompileError>([&] { k.realize({4}); }),
                    "Func g_in_h wraps g for h (g.in(h)), but h does not call g, so the wrapper "
                    "would never be read and its schedule would do nothing.");
    // A chain of wrappers for one consumer is read through its last link.
    Func p("p"), q("q");
    p(x) = x * 3;
    q(x) = p(x) + p(x + 1);
    Func stage1 = p.in(q);
    stage1.compute_root();
    stage1.in(q).compute_at(q, x);
    Buffer<int> chained = q.realize({5});
    for (int i = 0; i < 5; i++)
        EXPECT_EQ(chained(i), 3 * i + 3 * (i + 1));
    // A where() reads the Func itself, not a wrapper.
    RDom r(0, 6, "r");
    r.where(p(r) % 2 == 0);
    Func evens("evens");
    evens() = 0;
    evens() += r;
    p.in(evens).compute_root();
    EXPECT_CONTAINS(message_of<CompileError>([&] { evens.realize({}); }),
                    "but evens reads p only in the where() of an RDom, which reads the Func "
                    "itself, not a wrapper");
}

// Arithmetic on conditions shows the operands and the two ways out; an RDom made with no
// bounds says so where it is used.
TEST(AlgorithmErrors, ArithmeticOnConditionsAndAnRDomWithoutBounds) {
    Var x("x");
    std::string msg = message_of<CompileError>([&] { Expr e = (x > 2) + (x < 5); });
    EXPECT_CONTAINS(msg, "Operator + cannot apply to bool values ((x > 2) + (x < 5)). Cast a "
                         "condition to a number to count it (cast<int>(c)), or combine "
                         "conditions with && and ||.");
    Func f("f");
    f(x) = cast<int>(x > 2) + cast<int>(x < 5);
    Buffer<int> out = f.realize({8});
    for (int i = 0; i < 8; i++)
        EXPECT_EQ(out(i), int(i > 2) + int(i < 5));
    RDom r;
    Func total("total");
    total() = 0;
    msg = message_of<CompileError>([&] { total() += Expr(r); });
    EXPECT_CONTAINS(msg, "An RDom made with no bounds (RDom r;) is used as a reduction "
                         "variable. Give it its bounds first");
}

// update(i) past the updates a Func has; with none, the message says where an inline
// reduction's update is and how to schedule one.
TEST(ScheduleErrors, UpdateThatDoesNotExist) {
    Var x("x");
    RDom r(0, 4, "r");
    Func f("f"), g("g");
    f(x) = sum(x + r);
    g(x) = 0;
    g(x) += x + r;
    std::string msg = message_of<CompileError>([&] { f.update(0); });
    EXPECT_CONTAINS(msg, "Func f has 0 update definitions; update(0) does not exist. (An inline "
                         "reduction such as sum() in its definition is a Func of its own");
    EXPECT_CONTAINS(message_of<CompileError>([&] { g.update(1); }),
                    "Func g has 1 update definition; update(1) does not exist.");
    g.update(0).vectorize(x, 4);
    Buffer<int> a = f.realize({6}), b = g.realize({6});
    for (int i = 0; i < 6; i++) {
        EXPECT_EQ(a(i), 4 * i + 6);
        EXPECT_EQ(b(i), 4 * i + 6);
    }
}

// Scheduling a Func before it has a definition: it has no loops yet, and the message says so.
TEST(ScheduleErrors, AFuncWithoutADefinitionHasNoLoops) {
    Var x("x");
    Func g("g");
    EXPECT_CONTAINS(message_of<CompileError>([&] { g.parallel(x); }),
                    "In the schedule of g, parallel names the loop x, but Func g has no "
                    "definition yet, so it has no loops. Define it first, e.g. g(x) = ...");
}

// A LoopLevel made with LoopLevel() and never set names no loop: a Func scheduled there is
// refused with that said.
TEST(ScheduleErrors, ALoopLevelNeverSet) {
    Var x("x");
    Func f("f"), g("g");
    f(x) = x * 2;
    g(x) = f(x) + 1;
    LoopLevel level;
    f.compute_at(level);
    EXPECT_CONTAINS(message_of<CompileError>([&] { g.realize({8}); }),
                    "Func f is computed at a LoopLevel that was never set");
    level.set(LoopLevel(g.name(), x.name()));
    Buffer<int> out = g.realize({8});
    EXPECT_EQ(out(7), 15);
}

// The largest value and a payload read beside it, the later one on ties: without the
// candidates' positions, partials over every 64th point would merge equal candidates out of
// order (RFactor.ArgmaxPartialsOverStridedPointsBreakTiesByIndex keeps the index).
TEST(ScheduleErrors, RFactorOfAnArgmaxWithoutItsIndexNeedsConsecutiveRuns) {
    Buffer<float> in({1000}, "in"), payload({1000}, "payload");
    RDom k(0, 1000, "k");
    Var u("u");
    RVar ko("ko"), ki("ki");
    Func best("best");
    best() = Tuple(-std::numeric_limits<float>::infinity(), 0.0f);
    Expr v = in(k);
    best() = Tuple(max(best()[0], v), select(v < best()[0], best()[1], payload(k)));
    std::string msg =
        message_of<CompileError>([&] { best.update().split(k.x, ko, ki, 64).rfactor(ki, u); });
    EXPECT_CONTAINS(msg, "rfactor of best.update(0): the update keeps one candidate by "
                         "comparison (argmax-style)");
    EXPECT_CONTAINS(msg, "the domain's variables are, outermost first, ko, ki");
    // Reordering its reduction loops is refused for the same reason.
    Func again("again");
    again() = Tuple(-std::numeric_limits<float>::infinity(), 0.0f);
    Expr w = in(k);
    again() = Tuple(max(again()[0], w), select(w < again()[0], again()[1], payload(k)));
    again.update().split(k.x, ko, ki, 64).reorder(ko, ki);
    msg = message_of<CompileError>([&] { again.realize(std::vector<int>{}); });
    EXPECT_CONTAINS(msg,
                    "In the schedule of again.update(0), the order of its loops (set by "
                    "reorder, or by tile, which puts the tiles outside the points within them) "
                    "changes the order of the reduction loops (outermost first) from ko, ki to "
                    "ki, ko. The update keeps "
                    "one candidate by comparison");
}

// rfactor naming one reduction variable twice, and rfactor of an update whose where() test
// reads the Func it reduces (each step depends on the ones before): a CompileError at the
// rfactor, where both used to fail later (an InternalError; a cycle through f_intm).
TEST(ScheduleErrors, RFactorOfOneVariableTwiceOrOfARunningTest) {
    Buffer<float> in({100}, "in");
    RDom r(0, 100, "r");
    Var u("u"), v("v");
    Func twice("twice");
    twice() = 0.0f;
    twice() += in(r);
    EXPECT_CONTAINS(message_of<CompileError>([&] {
                        twice.update().rfactor({{r.x, u}, {r.x, v}});
                    }),
                    "rfactor of twice.update(0): r.x is named twice. Preserve each reduction "
                    "variable once");
    RDom q(0, 100, "q");
    Func capped("capped");
    capped() = 0.0f;
    q.where(capped() < 50.0f);
    capped() += in(q);
    EXPECT_CONTAINS(message_of<CompileError>([&] { capped.update().rfactor(q.x, u); }),
                    "rfactor of capped.update(0): the update's where() test reads capped itself");
}

// A Func the schedule stores on the stack may take at most 1 MiB: a 16 MB row there would
// overflow a thread's stack. A small one runs.
TEST(ScheduleErrors, StackStorageOverOneMebibyte) {
    for (int width : {4000000, 1000}) {
        Var x("x"), y("y");
        Func g("g"), h("h");
        g(x, y) = cast<float>(x + y);
        h(x, y) = g(x, y) + 1.0f;
        g.compute_at(h, y).bound(x, 0, width).store_in(MemoryType::Stack);
        if (width > 1000) {
            std::string msg = message_of<CompileError>([&] { h.realize({width, 2}); });
            EXPECT_CONTAINS(msg, "Func g is stored on the stack (store_in(MemoryType::Stack)), but "
                                 "its storage takes 16000000 bytes, more than the 1048576");
            EXPECT_CONTAINS(msg, "Store it in MemoryType::Heap");
        } else {
            Buffer<float> out = h.realize({width, 2});
            EXPECT_EQ(out(999, 1), 1001.0f);
        }
    }
}

// r.y, r.z and r.w of an RDom with fewer dimensions say so.
// A where() that reads the Func it reduces: "add while the running sum is below 50" runs
// serially, in order (checked against the loop); a schedule that would run its steps at once
// or in another order is refused, and so is a read at another pure point, as on the right
// side. where() after a definition used the RDom is refused.
TEST(AlgorithmErrors, WherePredicatesThatReadTheirOwnFunc) {
    const int W = 200, H = 3;
    Buffer<int> in({W, H}, "in");
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++)
            in(i, j) = (i * 7 + j * 3) % 5 + 1;
    Var y("y");
    RVar ro("ro"), ri("ri");
    auto running = [&](Func &f, RDom &k) {
        f(y) = 0;
        k.where(f(y) < 50);
        f(y) += in(k.x, y) * (k.y + 1);
    };
    {
        Func f("running");
        RDom k(0, W, 0, 2, "k");
        running(f, k);
        Buffer<int> out = f.realize({H});
        for (int j = 0; j < H; j++) {
            int s = 0;
            for (int b = 0; b < 2; b++)
                for (int a = 0; a < W; a++)
                    if (s < 50) s += in(a, j) * (b + 1);
            EXPECT_EQ(out(j), s) << j;
        }
    }
    {
        Func f("running");
        RDom k(0, W, 0, 2, "k");
        running(f, k);
        f.update().atomic().split(k.x, ro, ri, 16).parallel(ro);
        EXPECT_CONTAINS(message_of<CompileError>([&] { f.realize({H}); }),
                        "In the schedule of running.update(0), the where() predicate of its "
                        "RDom reads running, so each step depends on the steps before it, and "
                        "atomic() would let the steps run at once: keep its reduction loops "
                        "serial and in their order");
    }
    {
        Func f("running");
        RDom k(0, W, 0, 2, "k");
        running(f, k);
        f.update().reorder(k.y, k.x, y);
        EXPECT_CONTAINS(message_of<CompileError>([&] { f.realize({H}); }),
                        "but a reorder changes the order of its reduction loops");
    }
    // The predicate reads the Func at x - 1.
    Buffer<int> ones({4}, "ones");
    for (int i = 0; i < 4; i++)
        ones(i) = i % 2 + 1;
    Var x("x");
    Func g("g");
    RDom r(0, 4, "r");
    g(x) = in(x, 0);
    r.where(g(max(x - 1, 0)) < 6);
    EXPECT_CONTAINS(message_of<CompileError>([&] { g(x) = g(x) + ones(r); }),
                    "the where() predicate of its RDom reads g(max((x - 1), 0)): argument 0 "
                    "must be the pure variable x");
    // where() after a definition used the RDom.
    Func h("h");
    RDom late(0, 4, "late");
    h() = 0;
    h() += ones(late);
    EXPECT_CONTAINS(message_of<CompileError>([&] { late.where(late > 1); }),
                    "RDom late is already used by a definition, so where() comes too late");
}

TEST(AlgorithmErrors, RVarPastTheDimensionsOfItsRDom) {
    RDom r(0, 3, "r");
    Var x("x");
    Func f("f");
    std::string msg = message_of<CompileError>([&] { f(x) = x + r.w; });
    EXPECT_CONTAINS(msg, "RDom r has 1 dimension, so r.w (dimension 3) does not exist. Its "
                         "dimensions are r.x.");
    RDom two(0, 3, 0, 4, "two");
    msg = message_of<CompileError>([&] { f(x) = x + two.z; });
    EXPECT_CONTAINS(msg, "RDom two has 2 dimensions, so two.z (dimension 2) does not exist. Its "
                         "dimensions are two.x to two.y.");
}

TEST(ScheduleErrors, ParallelOverAReductionVariableIsRefused) {
    Var x("x");
    RDom r(0, 10, "r");
    Func f("f");
    f(x) = 0;
    f(x) += r;
    std::string msg = message_of<CompileError>([&] { f.update().parallel(r); });
    EXPECT_CONTAINS(msg,
                    "In the schedule of f.update(0), parallel(r.x) could race: r.x is a "
                    "reduction variable, and its iterations may update the same points of f "
                    "(they do not when an argument on the left is a constant times the "
                    "reduction variable plus terms free of the update's variables, e.g. f(r.x, "
                    "...), and the update reads f only at the point it writes, or at others with "
                    "that argument as it writes it).");
    // Iterations that may meet: two reduction variables in one argument, a division, a read
    // of another point, a fused loop.
    RDom r2(0, 4, 0, 4, "r2");
    Func g("g");
    g(x) = 0;
    g(r2.x + r2.y) += 1;
    EXPECT_CONTAINS(message_of<CompileError>([&] { g.update().parallel(r2.y); }),
                    "parallel(r2.y) could race");
    Func h("h");
    h(x) = 0;
    h(r / 2) += 1;
    EXPECT_CONTAINS(message_of<CompileError>([&] { h.update().parallel(r); }), "could race");
    // atomic() makes the parallel loop safe, not vector lanes; the message says so.
    EXPECT_CONTAINS(message_of<CompileError>([&] { h.update().atomic().vectorize(r, 8); }),
                    "(atomic() covers parallel loops and GPU blocks and threads, not vector "
                    "lanes).");
    Func scan("scan");
    scan(x) = x;
    scan(r + 1) = scan(r) + 1;
    EXPECT_CONTAINS(message_of<CompileError>([&] { scan.update().vectorize(r, 4); }), "could race");
    Func two("two");
    two(x) = 0;
    two(r2.x) += r2.y;
    EXPECT_CONTAINS(message_of<CompileError>(
                        [&] { two.update().fuse(r2.x, r2.y, RVar("f")).parallel(RVar("f")); }),
                    "could race");
    // Each iteration its own row: accepted.
    Var y("y");
    Func rows("rows");
    rows(x, y) = 0;
    rows(x, r) += x;
    EXPECT_EQ(message_of<CompileError>([&] { rows.update().parallel(r); }), "no exception");
    EXPECT_CONTAINS(msg, "Reduce with rfactor first, then parallel the new pure variable, or "
                         "make the update atomic() first.");
    // A scatter whose last write wins is no reduction: neither is suggested.
    Buffer<int> d(37);
    Func last("last");
    last(x) = 0;
    RDom q(0, 37, "q");
    last(clamp(d(q), 0, 9)) = q;
    msg = message_of<CompileError>([&] { last.update().parallel(q); });
    EXPECT_CONTAINS(msg, "could race");
    EXPECT_CONTAINS(msg, "Nor is the update a reduction that rfactor or atomic() could split "
                         "(such as last(p) = last(p) + x): the order of its steps decides its "
                         "result, so keep q.x serial.");
    EXPECT_EQ(msg.find("Reduce with rfactor"), std::string::npos) << msg;
}

TEST(ScheduleErrors, VectorizeOverAReductionVariableIsRefused) {
    Var x("x");
    RDom r(0, 10, 0, 5, "r");
    Func f("f");
    f(x) = 0;
    f(x) += r.x + r.y;
    std::string msg = message_of<CompileError>([&] { f.update().vectorize(r.y); });
    EXPECT_CONTAINS(
        msg,
        "In the schedule of f.update(0), vectorize(r.y) could race: r.y is a reduction variable");
    EXPECT_CONTAINS(msg, "then vectorize the new pure variable.");
    // With a factor, the split happens first; the inner loop is still a reduction loop.
    Func g("g");
    g(x) = 0;
    g(x) += r.x + r.y;
    msg = message_of<CompileError>([&] { g.update().vectorize(r.x, 4); });
    EXPECT_CONTAINS(msg, "vectorize(r.x, 4) could race: r.x's inner loop is a reduction "
                         "variable");
    // The merge rfactor leaves: its loop over the partials is a reduction loop too.
    Func h("h");
    Var u("u");
    RVar ro("ro"), ri("ri");
    h(x) = 0.0f;
    h(x) += cast<float>(r.x * r.y);
    h.update().split(r.x, ro, ri, 2).rfactor(ri, u);
    msg = message_of<CompileError>([&] { h.update().vectorize(RVar("u")); });
    EXPECT_CONTAINS(msg, "This update merges the partial results rfactor computed in h_intm: "
                         "vectorize the variables of h_intm it merges over (u) instead, and keep "
                         "the merge serial or map it onto gpu_lanes or gpu_threads");
}

TEST(ScheduleErrors, ReorderThatChangesTheOrderOfReductionLoops) {
    Var x("x");
    RDom r(0, 4, 0, 3, "r");
    Func f("f");
    f(x) = 0.0f;
    f(x) += cast<float>(r.x) * 0.1f + cast<float>(r.y);
    f.update().reorder(r.y, r.x);
    std::string msg = message_of<CompileError>([&] { f.realize({4}); });
    EXPECT_CONTAINS(
        msg, "In the schedule of f.update(0), the order of its loops (set by "
             "reorder, or by tile, which puts the tiles outside the points within "
             "them) changes the order of the reduction loops (outermost first) from "
             "r.y, r.x to r.x, r.y, which "
             "changes the order the reduction combines values in (only integer "
             "sums, products, minima, maxima and bitwise operations may be reordered freely).");
    EXPECT_CONTAINS(msg, "map a reduction loop onto gpu_threads or gpu_lanes");
    // An integer sum gives the same bits in any order: reordered, it is the loop's sum.
    Func exact("exact");
    exact(x) = x;
    exact(x) += r.x * 7 - r.y * x;
    exact.update().reorder(r.y, r.x);
    Buffer<int> sums = exact.realize({4});
    for (int i = 0; i < 4; i++) {
        int want = i;
        for (int ry = 0; ry < 3; ry++)
            for (int rx = 0; rx < 4; rx++)
                want += rx * 7 - ry * i;
        EXPECT_EQ(sums(i), want) << i;
    }
    // Moving a pure loop across the reduction loops is fine.
    Func g("g");
    g(x) = 0;
    g(x) += r.x * r.y;
    EXPECT_EQ(message_of<CompileError>([&] { g.update().reorder(x, r.x, r.y); }), "no exception");
}

TEST(ScheduleErrors, SplitFactorMustBePositive) {
    Var x("x");
    Func f("f");
    f(x) = x;
    std::string msg = message_of<CompileError>([&] { f.split(x, Var("xo"), Var("xi"), 0); });
    EXPECT_CONTAINS(msg, "In the schedule of f, x is split by 0; a split factor must be positive.");
    msg = message_of<CompileError>([&] { f.split(x, Var("xo"), Var("xi"), -3); });
    EXPECT_CONTAINS(msg, "x is split by -3; a split factor must be positive.");
}

// A directive of several steps (vectorize with a factor splits, then vectorizes) is applied
// whole or not at all: a refused step leaves the schedule as it was, so a caller that catches
// the error can go on.
TEST(ScheduleErrors, RefusedDirectivesLeaveTheScheduleAsItWas) {
    Var x("x"), y("y");
    RDom k(0, 5, "k");
    Func f("f");
    f(x, y) = 0;
    f(x, y) += k * (x + 1) + y;
    std::string before = f.loop_nest();
    std::string msg = message_of<CompileError>([&] { f.update().vectorize(k.x, 1 << 30); });
    EXPECT_CONTAINS(msg, "could race");
    // tile: the first split succeeds, the second names a loop the stage does not have.
    msg = message_of<CompileError>(
        [&] { f.update().tile(x, Var("nope"), Var("xi"), Var("ni"), 4, 4); });
    EXPECT_CONTAINS(msg, "nope");
    msg = message_of<CompileError>(
        [&] { f.gpu_tile(x, y, Var("bx"), Var("by"), Var("tx"), Var("tx"), 8, 8); });
    EXPECT_EQ(f.loop_nest(), before);
    Buffer<int> out = f.realize({6, 3});
    EXPECT_EQ(out(2, 1), (0 + 1 + 2 + 3 + 4) * 3 + 5 * 1);
}

TEST(ScheduleErrors, FuseOfLoopsThatAreNotAdjacent) {
    Var x("x"), y("y"), z("z");
    Func f("f");
    f(x, y, z) = x + y + z;
    std::string msg = message_of<CompileError>([&] { f.fuse(x, z, Var("t")); });
    EXPECT_CONTAINS(msg, "In the schedule of f, fuse(x, z) needs x directly inside z.");
    EXPECT_CONTAINS(msg, "The loops are, outermost first: z, y, x. Reorder them first.");
}

TEST(ScheduleErrors, FuseOfAPureAndAReductionLoop) {
    Var x("x");
    RDom r(0, 4, "r");
    Func f("f");
    f(x) = 0;
    f(x) += r;
    std::string msg = message_of<CompileError>([&] { f.update().fuse(r, x, Var("t")); });
    EXPECT_CONTAINS(msg,
                    "In the schedule of f.update(0), fuse(r.x, x) mixes a reduction loop (r.x) "
                    "with a pure one (x). Fuse two pure loops or two reduction loops.");
}

TEST(ScheduleErrors, ShiftInwardsOnAnUpdateStage) {
    Var x("x");
    RDom r(0, 4, "r");
    Func f("f");
    f(x) = 0;
    f(x) += r;
    std::string msg = message_of<CompileError>(
        [&] { f.update().split(x, Var("xo"), Var("xi"), 4, TailStrategy::ShiftInwards); });
    EXPECT_CONTAINS(msg,
                    "In the schedule of f.update(0), ShiftInwards on x would apply some updates "
                    "twice. Use GuardWithIf (or RoundUp on a loop that is not the inner "
                    "loop of another split).");
}

TEST(ScheduleErrors, ReductionVariablesNeedGuardWithIf) {
    Var x("x");
    RDom r(0, 4, "r");
    Func f("f");
    f(x) = 0;
    f(x) += r;
    for (TailStrategy tail : {TailStrategy::RoundUp, TailStrategy::ShiftInwards}) {
        std::string msg =
            message_of<CompileError>([&] { f.update().split(r, Var("ro"), Var("ri"), 3, tail); });
        EXPECT_CONTAINS(
            msg, "In the schedule of f.update(0), the reduction variable r.x is split with a "
                 "tail strategy that would compute some points twice or past the end of the RDom.");
        EXPECT_CONTAINS(msg, "Reduction variables need TailStrategy::GuardWithIf.");
    }
}

TEST(ScheduleErrors, ComputeAtALoopThatDoesNotEncloseAllUses) {
    Var x("x");
    Func f("f"), g("g"), h("h");
    f(x) = x;
    g(x) = f(x) + 1;
    h(x) = g(x) + f(x); // h uses f outside g's loop
    g.compute_root();
    f.compute_at(g, x);
    std::string msg = message_of<CompileError>([&] { h.realize({8}); });
    EXPECT_CONTAINS(msg, "Func f is computed inside the loop x of g, but the call f(x) in the "
                         "definition of h uses it outside that loop.");
    EXPECT_CONTAINS(msg, "Compute f at a loop that encloses all its uses, or compute_root() it.");
}

// A Func with update definitions and no placement is computed at the root; a producer placed
// inside its consumer's loop is then used outside it, and the message says so and how to fix it.
TEST(ScheduleErrors, AUseInAReductionComputedAtTheRootByDefault) {
    auto build = [](bool place_the_reduction, Func &g) {
        Var x("x"), y("y");
        RDom r(0, 5, "r");
        Func f("f"), red("red");
        f(x, y) = x * 2 + y;
        red(y) = 0;
        red(y) += f(r, y);
        g = Func("g");
        g(x, y) = red(y) + x;
        f.compute_at(g, y);
        if (place_the_reduction) red.compute_at(g, y);
    };
    Func g;
    build(false, g);
    std::string msg = message_of<CompileError>([&] { g.realize({8, 4}); });
    EXPECT_CONTAINS(
        msg, "Func f is computed inside the loop y of g, but the call f(r.x, y) in the definition "
             "of red uses it outside that loop.");
    EXPECT_CONTAINS(msg,
                    "The use is in red, which has update definitions and no compute_at, so it is "
                    "computed at the root (the default for such a Func). Compute red inside that "
                    "loop too (red.compute_at(g, y)), or compute_root() f.");
    // The advice works, and computes what a plain loop does.
    build(true, g);
    Buffer<int> out = g.realize({8, 4});
    for (int y = 0; y < 4; y++) {
        int row = 0;
        for (int k = 0; k < 5; k++)
            row += k * 2 + y;
        for (int x = 0; x < 8; x++)
            ASSERT_EQ(out(x, y), row + x) << x << ", " << y;
    }
}

TEST(ScheduleErrors, ComputeAtOneStageOfAConsumerThatUsesItInTwo) {
    Var x("x");
    RDom r(0, 3, "r");
    Func f("f"), g("g");
    f(x) = x;
    g(x) = f(x);
    g(x) += f(x + r);
    f.compute_at(LoopLevel("g", "x", 1));
    std::string msg = message_of<CompileError>([&] { g.realize({8}); });
    EXPECT_CONTAINS(msg,
                    "Func f is computed inside the loop x of g.update(0), but the call f(x) in the "
                    "definition of g uses it outside that loop.");
    // (g's own pure stage holds the call: computing g elsewhere is no advice.)
    EXPECT_EQ(msg.find("Compute g inside that loop too"), std::string::npos) << msg;
    // A stage index below -1 names no stage.
    EXPECT_CONTAINS(message_of<CompileError>([&] { LoopLevel("g", "x", -7); }),
                    "LoopLevel(g, x, -7): the stage is -1 (the last one of g) or an index of one "
                    "of its stages");
}

// Asking a Buffer for a dimension it does not have is a bad buffer at run time.
TEST(RuntimeErrors, BufferDimensionsThatDoNotExist) {
    Buffer<float> b({4, 3}, "b");
    EXPECT_CONTAINS(message_of<RuntimeError>([&] { (void)b.extent(3); }),
                    "Buffer b has 2 dimensions; dimension 3 does not exist.");
    EXPECT_CONTAINS(message_of<RuntimeError>([&] { (void)b.min(-1); }),
                    "Buffer b has 2 dimensions; dimension -1 does not exist.");
    EXPECT_CONTAINS(message_of<RuntimeError>([&] {
                        b.set_min({1, 2, 3});
                    }),
                    "set_min on Buffer b with 3 values, but it has 2 dimensions.");
}

// An inlined Func has no loops or storage of its own; a directive on them is refused, not
// dropped. Splits and reorders alone change nothing and stay allowed.
TEST(ScheduleErrors, DirectivesOnAnInlinedFuncAreRefused) {
    auto refusal = [](const std::function<void(Func &, Var &, Var &)> &schedule) {
        Var x("x"), y("y");
        Func f("f"), g("g");
        f(x, y) = x + y;
        g(x, y) = f(x, y) * 2;
        schedule(f, x, y);
        return message_of<CompileError>([&] { g.realize({8, 8}); });
    };
    std::string msg = refusal([](Func &f, Var &x, Var &) { f.vectorize(x, 4); });
    EXPECT_CONTAINS(msg, "Func f is computed inline (the default for a Func without update "
                         "definitions), so it has no loop x for vectorize(x, 4) to act on.");
    EXPECT_EQ(msg.find("x_vi"), std::string::npos) << msg;
    msg = refusal([](Func &f, Var &, Var &y) { f.parallel(y, 2); });
    EXPECT_CONTAINS(msg, "so it has no loop y for parallel(y, 2) to act on.");
    EXPECT_CONTAINS(msg,
                    "Give it a place first, e.g. f.compute_root() or f.compute_at(consumer, var)");
    msg = refusal([](Func &f, Var &, Var &y) { f.compute_inline().parallel(y); });
    EXPECT_CONTAINS(msg, "Func f is computed inline (compute_inline()), so it has no loop y for "
                         "parallel(y) to act on.");
    msg = refusal([](Func &f, Var &x, Var &) { f.bound(x, 0, 8); });
    EXPECT_CONTAINS(msg, "so it has no region of its own for bound(x, ...) to fix.");
    msg = refusal([](Func &f, Var &x, Var &y) { f.reorder_storage(y, x); });
    EXPECT_CONTAINS(msg, "so it has no storage for reorder_storage to lay out.");
    msg = refusal([](Func &f, Var &, Var &) { f.store_in(MemoryType::Stack); });
    EXPECT_CONTAINS(msg, "so it has no storage to keep in stack memory.");
    msg = refusal([](Func &f, Var &x, Var &) { f.never_partition(x); });
    EXPECT_CONTAINS(msg, "so it has no loop x for never_partition(x) to act on.");
    msg = refusal([](Func &f, Var &, Var &) { f.never_partition_all(); });
    EXPECT_CONTAINS(msg, "so never_partition_all() has no loops to act on.");
    // A split and a reorder name loops that do not exist and change nothing.
    Var x("x"), y("y"), xo("xo"), xi("xi");
    Func f("f"), g("g");
    f(x, y) = x + y;
    g(x, y) = f(x, y) * 2;
    f.split(x, xo, xi, 4).reorder(y, xi);
    Buffer<int> out = g.realize({8, 8});
    EXPECT_EQ(out(3, 5), 16);
}

// Storage further out does not make a use outside the compute loop valid: g is computed at
// h's loop over y, before h's loop over x where f is computed, so g would read f before any of
// it exists (this computed garbage when only the storage was checked).
TEST(ScheduleErrors, StoringOutsideDoesNotCoverAUseBeforeTheComputeLoop) {
    Var x("x"), y("y");
    Func f("f"), g("g"), h("h");
    f(x, y) = x + y;
    g(x, y) = f(x, y) + f(x + 1, y);
    h(x, y) = g(x, y) * 2;
    f.compute_at(h, x).store_at(h, y);
    g.compute_at(h, y);
    std::string msg = message_of<CompileError>([&] { h.realize({8, 4}); });
    EXPECT_CONTAINS(msg, "Func f is computed inside the loop x of h, but the call f(x, y) in "
                         "the definition of g uses it outside that loop.");
}

// The same when the use outside is through an inlined Func: g calls f in both of h's stages.
TEST(ScheduleErrors, ComputeAtALoopThatMissesAUseThroughAnInlinedFunc) {
    Var x("x"), y("y");
    Func f("f"), g("g"), h("h");
    f(x, y) = x + y;
    g(x, y) = f(x, y) * 3;
    h(x, y) = g(x, y);
    h(x, y) = h(x, y) + g(x, y) % 7;
    f.compute_at(h, y); // the loop over y of h's last stage, the update
    std::string msg = message_of<CompileError>([&] { h.realize({8, 4}); });
    EXPECT_CONTAINS(msg, "Func f is computed inside the loop y of h.update(0), but the call "
                         "g(x, y) (inlined, it calls f) in the definition of h uses it outside "
                         "that loop.");
    // The loops that could hold f are those around every use, the inlined ones included:
    // here none, as h's two stages each use it.
    f.compute_at(h, Var("z"));
    msg = message_of<CompileError>([&] { h.realize({8, 4}); });
    EXPECT_CONTAINS(msg, "The loops that could hold it are:\n  none: no loop encloses every "
                         "use (only the root, or inline)");
}

// Rounding a region or padding storage by an absurd multiple is a typed error, at compile time
// when the region is known and at run time otherwise, never a wrapped index.
TEST(ScheduleErrors, AbsurdAlignmentsAreRefused) {
    Buffer<int> in({20, 20}, "in");
    for (int j = 0; j < 20; j++)
        for (int i = 0; i < 20; i++)
            in(i, j) = i + j + 1;
    auto pipeline = [&](const std::function<void(Func &, Func &, Var &, Var &)> &schedule) {
        Var x("x"), y("y");
        RDom k(0, 5, "k");
        Func f("f"), g("g"), out("out");
        f(x, y) = in(x, y) * 2;
        g(x, y) = f(x, y) + f(x, y + 1);
        out(x, y) = 0;
        out(x, y) += g(x, k) * (y + 1);
        schedule(f, g, x, y);
        return out;
    };
    Var x("x"), y("y");
    Func g("g"), copy("copy");
    g(x, y) = in(x, y) * 2;
    copy(x, y) = g(x, y) + 1;
    g.compute_root().align_bounds(y, 2147483647, -5);
    std::string msg = message_of<CompileError>([&] { copy.realize({11, 5}); });
    EXPECT_CONTAINS(
        msg, "AICF cannot bound the region of Func g that its stages write and its consumers read "
             "in dimension 1 (y): its schedule rounds regions out to multiples so large "
             "(align_bounds(y, 2147483647)) that they pass the range 32-bit indices address.");
    Func out = pipeline([](Func &f, Func &g, Var &, Var &y) {
        f.compute_at(g, y);
        g.compute_root().align_bounds(y, 2147483647, -5);
    });
    // Rounded out, g spans rows [-5, 2147483641]: 2^31 - 1 rows of 11, more than a Func holds.
    msg = message_of<RuntimeError>([&] { out.realize({11, 5}); });
    EXPECT_CONTAINS(msg, "The storage of Func g would hold 23622320117 elements; pipelines "
                         "address at most 2^31 - 1 elements per Func.");
    // A bound() reaching the top of the int32 range: f, read one row further, would span 2^31
    // rows, an extent that wraps to nothing (the storage then held no rows, and g read past it).
    out = pipeline([](Func &f, Func &g, Var &, Var &y) {
        f.compute_root();
        g.bound(y, 0, 2147483647).compute_root();
    });
    msg = message_of<RuntimeError>([&] { out.realize({11, 5}); });
    EXPECT_CONTAINS(
        msg, "Func f would be computed over [0, 2147483647] in dimension 1, more than 2^31 - 1 "
             "points, which 32-bit loops cannot count. A bound() or a consumer's reach makes it "
             "that large.");
    // Padding y of f's storage to a multiple of 2^31 - 1 rows: 11 columns of 2^31 - 1 rows.
    out = pipeline(
        [](Func &f, Func &, Var &, Var &y) { f.compute_root().align_storage(y, 2147483647); });
    msg = message_of<RuntimeError>([&] { out.realize({11, 5}); });
    EXPECT_CONTAINS(
        msg, "The storage of Func f would hold 23622320117 elements; pipelines address at most "
             "2^31 - 1 elements per Func.");
}

// A host allocation whose element count leaves int64's range (8 x (2^31 - 1) x (2^31 - 1)): the
// count saturates instead of wrapping to a small or negative number that would pass the check.
TEST(RuntimeErrors, StorageCountBeyondInt64) {
    Param<int> n("n");
    Var x("x"), y("y"), z("z");
    Func f("f"), out("out");
    f(x, y, z) = x + y + z;
    out(x) = f(x, n - 1, n - 1) + f(x, 0, 0);
    f.compute_root().bound(y, 0, n).bound(z, 0, n);
    n.set(2);
    Buffer<int> small = out.realize({8});
    EXPECT_EQ(small(7), 7 + 1 + 1 + 7);
    n.set(INT32_MAX);
    EXPECT_CONTAINS(message_of<RuntimeError>([&] { out.realize({8}); }),
                    "The storage of Func f would hold more than 2^63 - 1 elements");
}

// An output lives in the buffer realize() is given: placing it elsewhere is refused, not ignored.
TEST(ScheduleErrors, AnOutputCannotBePlaced) {
    auto refusal = [](const std::function<void(Func &, Func &, Var &)> &schedule) {
        Var x("x"), y("y");
        Func f("f"), out("out");
        f(x, y) = x + y;
        out(x, y) = f(x, y) * 2;
        f.compute_root();
        schedule(f, out, y);
        return message_of<CompileError>([&] { out.realize({8, 8}); });
    };
    std::string msg = refusal([](Func &f, Func &out, Var &y) { out.compute_at(f, y); });
    EXPECT_CONTAINS(
        msg, "Func out is an output of the pipeline, so it is computed at the root into the "
             "buffer realize() is given; it cannot be computed at loop y of f. Schedule its loops");
    msg = refusal([](Func &, Func &out, Var &) { out.compute_inline(); });
    EXPECT_CONTAINS(msg, "it cannot be computed inline.");
    msg = refusal([](Func &f, Func &out, Var &y) { out.store_at(f, y); });
    EXPECT_CONTAINS(msg, "it cannot be stored at loop y of f.");
    msg = refusal([](Func &, Func &out, Var &) { out.store_in(MemoryType::Stack); });
    EXPECT_CONTAINS(msg, "it cannot be stored in stack memory.");
    // Storage layouts: the buffer given has its own strides.
    msg = refusal([](Func &, Func &out, Var &y) { out.reorder_storage(y, Var("x")); });
    EXPECT_CONTAINS(msg, "it cannot be stored in another order (reorder_storage()");
    EXPECT_CONTAINS(msg, "realize a wrapper such as out.in() and reorder the storage of out");
    msg = refusal([](Func &, Func &out, Var &) { out.align_storage(Var("x"), 16); });
    EXPECT_CONTAINS(msg, "it cannot be padded (align_storage()");
    // Storage in the order of the arguments is no change.
    Var x("x"), y("y");
    Func same("same");
    same(x, y) = x * 100 + y;
    same.reorder_storage(x, y);
    Buffer<int> r = same.realize({3, 2});
    EXPECT_EQ(r(2, 1), 201);
}

TEST(ScheduleErrors, StoreLevelMustEncloseTheComputeLevel) {
    Var x("x"), y("y");
    Func f("f"), g("g");
    f(x, y) = x + y;
    g(x, y) = f(x, y);
    f.compute_at(g, y).store_at(g, x);
    std::string msg = message_of<CompileError>([&] { g.realize({4, 4}); });
    EXPECT_CONTAINS(
        msg,
        "Func f is stored at loop x of g and computed at loop y of g, but the store level must "
        "enclose the compute level.");
}

TEST(ScheduleErrors, AFuncWithUpdatesCannotBeInlined) {
    Var x("x");
    RDom r(0, 3, "r");
    Func f("f"), g("g");
    f(x) = x;
    f(x) += r;
    g(x) = f(x);
    f.compute_inline();
    std::string msg = message_of<CompileError>([&] { g.realize({4}); });
    EXPECT_CONTAINS(msg, "Func f has update definitions, so it cannot be computed inline. Use "
                         "f.compute_root() (or compute_at) instead.");
}

TEST(ScheduleErrors, NewLoopNamesMustBeFresh) {
    Var x("x"), y("y"), xo("xo");
    Func f("f");
    f(x, y) = x + y;
    std::string msg = message_of<CompileError>([&] { f.split(x, y, Var("xi"), 2); });
    EXPECT_CONTAINS(msg, "In the schedule of f, split would create a loop y, but f already "
                         "has a loop of that name. Use a new Var.");
    msg = message_of<CompileError>([&] { f.split(x, xo, Var("xi"), 2).rename(xo, x); });
    EXPECT_CONTAINS(msg, "In the schedule of f, rename would create a loop x, which is already a "
                         "variable of f. Use a new Var.");
}

TEST(ScheduleErrors, RoundUpOnAnInnerLoopOfAnUpdateStage) {
    Var x("x"), xo("xo"), xi("xi");
    RDom r(0, 4, "r");
    Func f("f");
    f(x) = 0;
    f(x) += r;
    std::string msg = message_of<CompileError>([&] {
        f.update().split(x, xo, xi, 4).split(xi, Var("xio"), Var("xii"), 3, TailStrategy::RoundUp);
    });
    EXPECT_CONTAINS(
        msg, "In the schedule of f.update(0), RoundUp on xi would apply some updates twice: xi "
             "is the inner loop of an earlier split");
    EXPECT_CONTAINS(msg, "Use GuardWithIf.");
    // The outer loop runs past the end instead, which is allowed.
    Func g("g");
    g(x) = 0;
    g(x) += r;
    EXPECT_EQ(message_of<CompileError>([&] {
                  g.update()
                      .split(x, xo, xi, 4)
                      .split(xo, Var("xoo"), Var("xoi"), 3, TailStrategy::RoundUp);
              }),
              "no exception");
}

TEST(CompileErrors, UnknownTargetFeature) {
    std::string msg = message_of<CompileError>([&] { Target t("host-avx9000"); });
    EXPECT_CONTAINS(msg, "Unknown feature \"avx9000\" in target \"host-avx9000\".");
    EXPECT_CONTAINS(msg, "Valid targets: a CPU (host, the one compiling, or x86-64, x86-64-v2, "
                         "x86-64-v3, x86-64-v4), followed by any of -fma, -libm, -reassoc and "
                         "-cuda-sm_80");
    msg = message_of<CompileError>([&] { Target t("gpu"); });
    EXPECT_CONTAINS(msg, "Unknown target \"gpu\": it must start with a CPU.");
    msg = message_of<CompileError>([&] { Target t("host-cuda-sm_70"); });
    EXPECT_CONTAINS(msg, "Unknown CUDA architecture \"sm_70\" in target \"host-cuda-sm_70\".");
    msg = message_of<CompileError>([&] { Target t("host-cuda-sm_80a"); });
    EXPECT_CONTAINS(msg, "Unknown CUDA architecture \"sm_80a\"");
    msg = message_of<CompileError>([&] { Target t("host-cuda"); });
    EXPECT_CONTAINS(msg, "names cuda without an architecture");
    // An architecture misspelled is named as one.
    for (const char *arch : {"sm80", "ampere", "fma"}) {
        msg = message_of<CompileError>([&] { Target t(std::string("host-cuda-") + arch); });
        EXPECT_CONTAINS(msg, std::string("Unknown CUDA architecture \"") + arch + "\" in target");
        EXPECT_CONTAINS(msg, "architectures are written sm_ and the compute capability");
    }
    // No feature is empty or named twice.
    for (const char *target : {"host-", "host-fma-", "host--fma"})
        EXPECT_FALSE(message_of<CompileError>([&] { Target t(target); }).empty()) << target;
    msg = message_of<CompileError>([&] { Target t("host-fma-fma"); });
    EXPECT_CONTAINS(msg, "Target \"host-fma-fma\" names the feature fma twice.");
    msg = message_of<CompileError>([&] { Target t("host-"); });
    EXPECT_CONTAINS(msg, "Target \"host-\" ends with '-'");
    EXPECT_EQ(Target("host-fma-cuda-sm_90").to_string(), "host-cuda-sm_90-fma");
}

TEST(RuntimeErrors, SplitFactorFromAParamMustBePositive) {
    Param<int> factor("factor");
    Var x("x"), xo("xo"), xi("xi");
    Func f("f");
    f(x) = x * 2;
    f.split(x, xo, xi, factor);
    factor.set(4);
    Buffer<int> ok = f.realize({10});
    EXPECT_EQ(ok(9), 18);
    factor.set(0);
    std::string msg = message_of<RuntimeError>([&] { f.realize({10}); });
    EXPECT_CONTAINS(msg, "The loop x of f is split by 0; a split factor must be positive.");
    // The factor is checked before the regions the splits make: with an inner loop split
    // again, a factor of 0 or below made the output seem too small.
    Param<int> inner("inner");
    Var y("y"), t("t");
    Func g("g");
    g(x, y) = x + y;
    g(x, y) += 1;
    g.update()
        .split(x, xo, xi, factor, TailStrategy::GuardWithIf)
        .split(xi, xi, t, inner, TailStrategy::GuardWithIf);
    inner.set(3);
    for (int v : {0, -2}) {
        factor.set(v);
        msg = message_of<RuntimeError>([&] { g.realize({29, 4}); });
        EXPECT_CONTAINS(msg, "The loop x of g.update(0) is split by " + std::to_string(v) +
                                 "; a split factor must be positive.");
    }
    factor.set(5);
    Buffer<int> fine = g.realize({29, 4});
    EXPECT_EQ(fine(28, 3), 32);
}

// The modulus of align_bounds and the alignment of align_storage, known only at run time,
// must be positive: 0 made an empty region (the consumer read what nobody computed) or a
// zero-sized padding (a heap overrun).
TEST(RuntimeErrors, AlignmentsFromAParamMustBePositive) {
    Param<int> m("m");
    Var x("x"), y("y");
    for (bool storage : {false, true}) {
        Func g("g"), f("f");
        g(x, y) = x + y * 3;
        f(x, y) = g(x, y) + g(x + 1, y);
        if (storage) {
            g.compute_root().align_storage(x, m);
        } else {
            g.compute_root().align_bounds(x, m);
        }
        for (int v : {1, 3, 8}) {
            m.set(v);
            Buffer<int> out = f.realize({10, 4});
            for (int j = 0; j < 4; j++)
                for (int i = 0; i < 10; i++)
                    ASSERT_EQ(out(i, j), 2 * i + 1 + 6 * j) << v << ": " << i << "," << j;
        }
        for (int v : {0, -3}) {
            m.set(v);
            EXPECT_CONTAINS(
                message_of<RuntimeError>([&] {
                    f.realize({10, 4});
                }),
                std::string("The ") +
                    (storage ? "alignment that align_storage(x)" : "modulus that align_bounds(x)") +
                    " gives g is " + std::to_string(v) + "; it must be positive.");
        }
    }
}

// A factor known only at run time may be anything up to the int32 limit: with GuardWithIf
// the result stays exact (no index overflows, no tile runs past the end); a tile shifted
// inwards that does not fit the output is a typed error that says why.
TEST(RuntimeErrors, HugeSplitFactorFromAParam) {
    Param<int> factor("factor");
    Var x("x"), xo("xo"), xi("xi");
    Func f("f"), g("g");
    f(x) = x * 2;
    g(x) = x * 3;
    f.split(x, xo, xi, factor, TailStrategy::GuardWithIf);
    g.split(x, xo, xi, factor, TailStrategy::ShiftInwards);
    for (int v : {7, 10, 11, 1 << 30, 2147483647}) {
        factor.set(v);
        Buffer<int> out = f.realize({10});
        for (int i = 0; i < 10; i++)
            ASSERT_EQ(out(i), 2 * i) << "factor " << v << ", x = " << i;
    }
    factor.set(2147483647);
    std::string msg = message_of<RuntimeError>([&] { g.realize({10}); });
    EXPECT_CONTAINS(
        msg,
        "Buffer g is too small: dimension 0 must cover [-2147483637, 9], but it covers [0, 9]. "
        "The schedule of g writes whole tiles: a split with ShiftInwards (what split, tile, "
        "vectorize(x, n), unroll(x, n) and parallel(x, n) do by default) needs an extent of at "
        "least its factor");
}

// Coordinates 32-bit loops cannot count, from regions reached near the int32 limits: an
// intermediate read past them (its loops would wrap: wrong values, then a fault) and an RDom
// from Params that runs past 2^31 - 2 (its loop would run no iteration) are typed errors;
// just inside the limits the values are exact.
TEST(RuntimeErrors, RegionsPastTheInt32Coordinates) {
    const int MX = 2147483647, MN = -2147483647 - 1;
    Var x("x");
    for (int off : {30, 1000000}) {
        Func f("f"), g("g");
        f(x) = x / 2;
        g(x) = f(x + off);
        f.compute_root();
        Buffer<int> out({20});
        out.set_min({MX - 40});
        EXPECT_CONTAINS(message_of<RuntimeError>([&] { g.realize(out); }),
                        "Func f would be computed over [" + std::to_string(int64_t(MX) - 40 + off) +
                            ", " + std::to_string(int64_t(MX) - 21 + off) +
                            "] in dimension 0, past the coordinates 32-bit loops reach");
        Func h("h"), k("k");
        h(x) = x / 2;
        k(x) = h(x - off);
        h.compute_root();
        out.set_min({MN + 20});
        EXPECT_CONTAINS(message_of<RuntimeError>([&] { k.realize(out); }),
                        "Func h would be computed over [" + std::to_string(int64_t(MN) + 20 - off));
    }
    {
        Param<int> p("p");
        Func f("f"), g("g");
        f(x) = x / 4;
        g(x) = f(x + p);
        f.compute_root();
        p.set(2147483642);
        EXPECT_CONTAINS(message_of<RuntimeError>([&] { g.realize({50}); }),
                        "Func f would be computed over [2147483642, 2147483691]");
        p.set(MX - 60); // the last point read is MX - 11: inside
        Buffer<int> got = g.realize({50});
        for (int i = 0; i < 50; i++)
            ASSERT_EQ(got(i), (int64_t(MX) - 60 + i) / 4) << i;
    }
    {
        // A Func computed per row is checked once, before the loops, over every row.
        Var y("y");
        Func rows("rows"), out2("out2");
        rows(x, y) = x + y;
        out2(x, y) = rows(x + 1, y) - rows(x, y);
        rows.compute_at(out2, y);
        const std::string stmt = out2.lowered_stmt();
        const std::string check = "runtime_error(" +
                                  std::to_string(int(ir::RuntimeErrorKind::FuncRegionOutOfRange)) +
                                  ", \"rows\"";
        ASSERT_NE(stmt.find(check), std::string::npos) << stmt;
        EXPECT_LT(stmt.rfind(check), stmt.find("for (")) << stmt;
    }
    // Computed per tile: the range over every tile is exact at the limit, for tails shifted
    // inwards and guarded alike (the last point read is 2^31 - 12 + off).
    for (int extent : {40, 37}) {
        for (TailStrategy tail : {TailStrategy::ShiftInwards, TailStrategy::GuardWithIf}) {
            for (int off : {10, 11}) {
                Var y("y"), xo("xo"), xi("xi");
                Func tiles("tiles"), out3("out3");
                tiles(x, y) = x / 2 + y;
                out3(x, y) = tiles(x + off, y) - tiles(x, y);
                out3.split(x, xo, xi, 8, tail);
                tiles.compute_at(out3, xo);
                Buffer<int> o({extent, 3});
                o.set_min({MX - 11 - extent + 1, 0});
                if (off == 11) {
                    EXPECT_CONTAINS(message_of<RuntimeError>([&] { out3.realize(o); }),
                                    "Func tiles would be computed over [" +
                                        std::to_string(int64_t(MX) - 11 - extent + 1) +
                                        ", 2147483647] in dimension 0, past the coordinates");
                    continue;
                }
                out3.realize(o);
                for (int yy = 0; yy < 3; yy++) {
                    for (int i = 0; i < extent; i++) {
                        const int64_t at = int64_t(MX) - 11 - extent + 1 + i;
                        ASSERT_EQ(o(int(at), yy), (at + off) / 2 - at / 2) << extent << " " << i;
                    }
                }
            }
        }
    }
    // Funcs computed per point of a Func computed per guarded tile, on the CPU and on GPU
    // threads: the last tile runs only its guarded points, and f1 is read up to om + 39.
    for (bool gpu : {false, true}) {
        for (int64_t om : {int64_t(MX) - 39, int64_t(MX) - 40}) {
            Var bx("bx"), tx("tx"), xo("xo"), xi("xi");
            Func f1("f1"), f2("f2"), f3("f3"), out4("out4");
            f1(x) = x / 3;
            f2(x) = f1(x - 1) * 2 + f1(x + 1);
            f3(x) = f2(x) - f2(x + 2);
            out4(x) = f3(x) + f3(x - 1);
            Target target;
            if (gpu) {
                target = aicf_test::gpu_test_target();
                out4.gpu_tile(x, bx, tx, 8, TailStrategy::GuardWithIf);
                f3.compute_at(out4, bx).gpu_threads(x);
                f2.compute_at(f3, x).store_in(MemoryType::Register);
                f1.compute_at(f3, x).store_in(MemoryType::Register);
            } else {
                out4.split(x, xo, xi, 8, TailStrategy::GuardWithIf);
                f3.compute_at(out4, xo);
                f2.compute_at(f3, x);
                f1.compute_at(f3, x);
            }
            Buffer<int> o({37});
            o.set_min({int(om)});
            if (om == int64_t(MX) - 39) {
                EXPECT_CONTAINS(message_of<RuntimeError>([&] { out4.realize(o, target); }),
                                "Func f1 would be computed over [2147483606, 2147483647]");
                continue;
            }
            out4.realize(o, target);
            auto f = [](int64_t v) { return v >= 0 ? v / 3 : -((-v + 2) / 3); };
            auto g = [&](int64_t v) { return f(v - 1) * 2 + f(v + 1); };
            auto h = [&](int64_t v) { return g(v) - g(v + 2); };
            for (int64_t v = om; v < om + 37; v++)
                ASSERT_EQ(o(int(v)), h(v) + h(v - 1)) << gpu << " " << v;
        }
    }
    Param<int> pmin("pmin"), pext("pext");
    RDom r(pmin, pext, "r");
    Func count("count");
    count() = cast<int64_t>(0);
    count() += cast<int64_t>(r);
    pmin.set(2147483640);
    pext.set(20);
    EXPECT_CONTAINS(
        message_of<RuntimeError>([&] { count.realize(std::vector<int>{}); }),
        "The reduction variable r.x runs from 2147483640 over 20 points, past 2^31 - 2");
    pext.set(7); // ends at 2^31 - 1: the loop's end still counts in 32 bits
    Buffer<int64_t> sum = count.realize(std::vector<int>{});
    EXPECT_EQ(sum(), int64_t(2147483640) * 7 + 21);
}

// A chain of stencils computed in the output's tiles, which overlap by the chain's reach: the
// input must cover what the tiles read together, exactly, whether the reads are clamped to
// the image or not. One column or row less is a typed error naming the tile's loop.
TEST(RuntimeErrors, InputOfStencilsInTilesCoversExactlyWhatTheyRead) {
    const int w = 37, h = 29, steps = 3;
    Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
    for (bool clamped : {false, true}) {
        ImageParam in(Float(32), 2, "in");
        std::vector<Func> fs;
        Func first("s0");
        first(x, y) = clamped ? in(clamp(x, 0, w - 1), clamp(y, 0, h - 1)) : in(x, y);
        fs.push_back(first);
        auto cx = [&](Expr e) { return clamped ? clamp(e, 0, w - 1) : e; };
        auto cy = [&](Expr e) { return clamped ? clamp(e, 0, h - 1) : e; };
        for (int i = 1; i <= steps; i++) {
            Func f("s" + std::to_string(i));
            Func g = fs.back();
            f(x, y) = g(cx(x - 1), y) + 2.0f * g(x, y) + g(x, cy(y + 1));
            fs.push_back(f);
        }
        Func out = fs.back();
        out.tile(x, y, xo, yo, xi, yi, 16, 16);
        for (int i = 0; i < steps; i++)
            fs[size_t(i)].compute_at(out, xo);
        // What the output reads: [-3, 36] x [0, 31] unclamped, the image clamped.
        const int x0 = clamped ? 0 : -steps, y1 = clamped ? h - 1 : h - 1 + steps;
        for (int short_by : {0, 1, 2}) {
            const int x_lo = x0 + (short_by == 1 ? 1 : 0), y_hi = y1 - (short_by == 2 ? 1 : 0);
            Buffer<float> input({w - x_lo, y_hi + 1}, "in");
            input.set_min({x_lo, 0});
            aicf_test::fill_random(input, -1.0, 1.0, 7 + short_by);
            in.set(input);
            if (short_by) {
                EXPECT_CONTAINS(message_of<RuntimeError>([&] {
                                    out.realize({w, h});
                                }),
                                short_by == 1 ? "Buffer in is too small: dimension 0 must cover ["
                                              : "Buffer in is too small: dimension 1 must cover [");
                continue;
            }
            Buffer<float> got = out.realize({w, h});
            // The reference: each step in double precision over the points it needs.
            auto at = [&](int xx, int yy) {
                std::function<double(int, int, int)> v = [&](int s, int a, int b) -> double {
                    if (s == 0) return input(a, b);
                    const int l = clamped ? std::clamp(a - 1, 0, w - 1) : a - 1;
                    const int u = clamped ? std::clamp(b + 1, 0, h - 1) : b + 1;
                    return v(s - 1, l, b) + 2.0 * v(s - 1, a, b) + v(s - 1, a, u);
                };
                return v(steps, xx, yy);
            };
            for (int yy = 0; yy < h; yy++)
                for (int xx = 0; xx < w; xx++)
                    ASSERT_NEAR(got(xx, yy), at(xx, yy), 1e-4 * (1 + std::abs(at(xx, yy))))
                        << clamped << " " << xx << " " << yy;
        }
    }
}

// A Func computed at the root, read per guarded tile through min(x, 5): the tiles together
// read the input over [0, 20] exactly, and an input of that size runs. (The root Func's region
// was [0, 25]: the last tile's start and its guarded length were bounded apart.)
TEST(RuntimeErrors, ARootFuncReadByGuardedTilesCoversWhatTheyRead) {
    Var x("x"), xo("xo"), xi("xi");
    for (int n : {21, 20}) {
        Buffer<int> in({n}, "in");
        for (int i = 0; i < n; i++)
            in(i) = i * 10 - 7;
        Func f1("f1"), f2("f2"), f3("f3"), out("out");
        f1(x) = in(x);
        f2(x) = f1(x) * 3;
        f3(x) = f2(x) + f2(min(x, 5));
        out(x) = f3(x);
        out.split(x, xo, xi, 5, TailStrategy::GuardWithIf);
        f3.compute_at(out, xo);
        f2.compute_at(out, xo);
        f1.compute_root();
        if (n == 20) {
            EXPECT_CONTAINS(message_of<RuntimeError>([&] { out.realize({21}); }),
                            "Buffer in is too small: dimension 0 must cover [0, 20]");
            continue;
        }
        Buffer<int> o = out.realize({21});
        for (int i = 0; i < 21; i++)
            ASSERT_EQ(o(i), (i * 10 - 7) * 3 + (std::min(i, 5) * 10 - 7) * 3) << i;
    }
}

// An output narrower than its vector: the tile shifted inwards starts before the output and
// reads the input before it too. The output's own check comes first and says why; the input
// is not blamed, however large it is.
TEST(RuntimeErrors, AnOutputNarrowerThanItsVectorIsNamed) {
    Var x("x"), y("y");
    for (int width : {8, 32}) {
        Buffer<float> in({width, 3}, "in");
        Func f("f");
        f(x, y) = in(x, y) * 2.0f;
        f.vectorize(x, 16);
        std::string msg = message_of<RuntimeError>([&] { f.realize({8, 3}); });
        EXPECT_CONTAINS(msg, "Buffer f is too small: dimension 0 must cover [-8, 7], but it "
                             "covers [0, 7]. The schedule of f writes whole tiles");
        EXPECT_EQ(msg.find("Buffer in"), std::string::npos) << msg;
    }
}

// An output whose points share memory (a stride of 0, rows that overlap) would have its
// writes overwrite each other: refused. Rows apart by more than a row are fine.
TEST(RuntimeErrors, OutputPointsMustNotShareMemory) {
    Var x("x"), y("y");
    Func f("f");
    f(x, y) = x + 10 * y;
    std::vector<int> storage(64, -1);
    for (int stride : {0, 7, 9}) {
        Buffer<int> view(storage.data(), {8, 4});
        view.raw_buffer()->dim[1].stride = stride;
        if (stride < 8) {
            std::string msg = message_of<RuntimeError>([&] { f.realize(view); });
            EXPECT_CONTAINS(msg,
                            "The output buffer f may have points that share memory: dimension 1 "
                            "has stride " +
                                std::to_string(stride));
        } else {
            f.realize(view);
            EXPECT_EQ(storage[9 * 3 + 7], 7 + 30);
        }
    }
}

TEST(RuntimeErrors, OutputsMustNotOverlapInputs) {
    ImageParam input(Float(32), 2, "input");
    Var x("x"), y("y");
    Func f("f");
    f(x, y) = input(x, y) + 1.0f;
    Buffer<float> data({16, 8}, "data");
    data.fill(1.0f);
    input.set(data);
    std::string msg = message_of<RuntimeError>([&] { f.realize(data); });
    EXPECT_CONTAINS(msg, "The output buffer f shares memory with the input buffer input.");
    EXPECT_CONTAINS(msg, "Realize into a separate buffer");
    EXPECT_EQ(data(3, 2), 1.0f); // nothing ran
    // A buffer used directly in the algorithm is an input too.
    Func g("g");
    g(x, y) = data(x, y) * 2.0f;
    msg = message_of<RuntimeError>([&] { g.realize(data); });
    EXPECT_CONTAINS(msg, "The output buffer g shares memory with the input buffer data.");
    // Separate memory is fine.
    Buffer<float> out(16, 8);
    f.realize(out);
    EXPECT_EQ(out(3, 2), 2.0f);
    // So are views of one matrix whose elements interleave without meeting: its left half
    // read, its right half written (their rows alternate in memory).
    Buffer<float> matrix({32, 8}, "matrix");
    for (int j = 0; j < 8; j++)
        for (int i = 0; i < 32; i++)
            matrix(i, j) = float(i + 100 * j);
    auto half = [&](int first, int width) {
        return Buffer<float>(&matrix(first, 0), {{0, width, 1, 0}, {0, 8, 32, 0}});
    };
    input.set(half(0, 16));
    Buffer<float> right = half(16, 16);
    f.realize(right);
    for (int j = 0; j < 8; j++)
        for (int i = 0; i < 16; i++)
            ASSERT_EQ(matrix(16 + i, j), float(i + 100 * j) + 1.0f) << i << ", " << j;
    // One column more, and the views share the column 16.
    input.set(half(0, 17));
    msg = message_of<RuntimeError>([&] { f.realize(right); });
    EXPECT_CONTAINS(msg, "The output buffer f shares memory with the input buffer input.");
}

TEST(ScheduleErrors, NamedRVarOfASplitIsNotAnExpression) {
    RVar ko("ko");
    std::string msg = message_of<CompileError>([&] { Expr e = Expr(ko) + 1; });
    EXPECT_CONTAINS(msg, "RVar ko names a loop made by a schedule");
    EXPECT_CONTAINS(msg, "Use the RDom's own variables there.");
}

// prefetch: each mistake names the stage, the loop and what it prefetches, and says what
// would be valid.
TEST(ScheduleErrors, PrefetchMistakes) {
    Buffer<float> a({16, 16}, "a");
    Var x("x"), y("y"), xo("xo"), xi("xi"), z("z");
    Func f("f"), g("g"), h("h");
    f(x, y) = a(x, y) * 2.0f;
    g(x, y) = f(x, y) + 1.0f;
    h(x, y) = x + y;

    // A loop the stage does not have.
    std::string msg = message_of<CompileError>([&] { g.prefetch(a, z, z); });
    EXPECT_CONTAINS(msg,
                    "In the schedule of g, prefetch names the loop z, but g has no such loop.");
    EXPECT_CONTAINS(msg, "Its loops are, outermost first: y, x.");
    // Looking ahead in a loop inside the one the prefetch is placed in.
    msg = message_of<CompileError>([&] { g.prefetch(a, y, x); });
    EXPECT_CONTAINS(msg, "prefetch of a at loop y from loop x: x is inside y");
    EXPECT_CONTAINS(msg, "must be y itself or a loop around it");
    // Looking back.
    msg = message_of<CompileError>([&] { g.prefetch(a, x, y, -2); });
    EXPECT_CONTAINS(msg,
                    "looks -2 iterations of y ahead; a prefetch looks ahead (offset 0 or more)");
    msg = message_of<CompileError>([&] { g.prefetch(a, x, y, 1.5f); });
    EXPECT_CONTAINS(msg, "must be an integer number of iterations of y");
}

TEST(ScheduleErrors, PrefetchMistakesFoundWhenLowering) {
    Buffer<float> a({16, 16}, "a");
    Var x("x"), y("y"), xo("xo"), xi("xi");
    auto pipeline = [&](const std::function<void(Func &, Func &, Func &)> &schedule) {
        Func f("f"), g("g"), h("h");
        f(x, y) = a(x, y) * 2.0f;
        h(x, y) = cast<float>(x + y);
        g(x, y) = f(x, y) + 1.0f;
        schedule(f, g, h);
        return message_of<CompileError>([&] { g.realize({16, 16}); });
    };
    // A later split replaced the loop.
    std::string msg =
        pipeline([&](Func &, Func &g, Func &) { g.prefetch(a, x, y).split(x, xo, xi, 4); });
    EXPECT_CONTAINS(
        msg, "In the schedule of g, the prefetch of a names the loop x, which a later directive "
             "replaced. The loops are, outermost first: y, xo, xi.");
    // A vectorized loop.
    msg = pipeline([&](Func &, Func &g, Func &) { g.prefetch(a, x, x).vectorize(x); });
    EXPECT_CONTAINS(msg,
                    "In the schedule of g, the prefetch of a at loop x: that loop is vectorized.");
    EXPECT_CONTAINS(msg, "Prefetch at a serial, unrolled or parallel loop around it.");
    // An inlined Func has no storage.
    msg = pipeline([&](Func &f, Func &g, Func &) { g.prefetch(f, y, y); });
    EXPECT_CONTAINS(msg, "the prefetch of f at loop y: f has no storage around that loop");
    EXPECT_CONTAINS(msg, "Store it at or outside the loop");
    // A Func stored inside the loop.
    msg = pipeline([&](Func &f, Func &g, Func &) {
        f.compute_at(g, x);
        g.prefetch(f, y, y);
    });
    EXPECT_CONTAINS(msg, "f has no storage around that loop");
    // Something the loop does not read.
    msg = pipeline([&](Func &, Func &g, Func &h) {
        h.compute_root();
        g.prefetch(h, y, y);
    });
    EXPECT_CONTAINS(
        msg, "the prefetch of h at loop y: the loop does not read h, so there is nothing of it "
             "to prefetch.");
    // A Func the pipeline computes after the stage that prefetches it, which does not read
    // it: the message says so, and what the loop reads (it spoke of the Func's storage, which
    // a compute_root does not change).
    Func f2("f2"), h2("h2"), g2("g2");
    f2(x, y) = a(x, y) * 2.0f;
    h2(x, y) = a(x, y) + 1.0f;
    g2(x, y) = f2(x, y) + h2(x, y);
    f2.compute_root().prefetch(h2, y, y, 2);
    h2.compute_root();
    msg = message_of<CompileError>([&] { g2.realize({16, 16}); });
    EXPECT_CONTAINS(msg, "In the schedule of f2, the prefetch of h2 at loop y: the loop does not "
                         "read h2, so there is nothing of it to prefetch. It reads a.");
}

// A prefetch whose region is bounded only by a clamp over a whole table (a gather's rows,
// prefetched at a loop over many rows) would fetch the table in every iteration.
TEST(ScheduleErrors, PrefetchOfAWholeTableIsRefused) {
    ImageParam table(Float(32), 2, "table");
    ImageParam ids(Int(32), 1, "ids");
    Var x("x"), y("y"), yo("yo"), yi("yi");
    Func g("g");
    g(x, y) = table(x, clamp(ids(y), 0, 99999));
    g.split(y, yo, yi, 64).prefetch(table, yo, yo, 1);
    std::string msg = message_of<CompileError>(
        [&] { g.compile_to_lowered_stmt(::testing::TempDir() + "g.stmt"); });
    EXPECT_CONTAINS(
        msg,
        "the prefetch of table at loop yo: each iteration would fetch at least 100000 cache lines");
    EXPECT_CONTAINS(msg, "Prefetch at an inner loop");
    // At the inner loop each iteration reads one row, and the prefetch fetches that row.
    Func h("h");
    h(x, y) = table(x, clamp(ids(y), 0, 99999));
    h.split(y, yo, yi, 64).prefetch(table, yi, yi, 1);
    h.compile_to_lowered_stmt(::testing::TempDir() + "h.stmt");
}
