// User mistakes raise CompileError or RuntimeError with a message that names the culprit.

#include "dsl/aicf.h"

#include <gtest/gtest.h>

#include <string>

using namespace aicf;

namespace {

template <typename E, typename F>
std::string message_of(F &&f) {
    try {
        f();
    } catch (const E &e) {
        return e.what();
    } catch (const std::exception &e) {
        return std::string("wrong exception type: ") + e.what();
    }
    return "no exception";
}

#define EXPECT_CONTAINS(text, fragment)                                                            \
    EXPECT_NE(std::string(text).find(fragment), std::string::npos) << "message: " << (text)

} // namespace

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
}

TEST(CompileErrors, UpdateTypeMismatch) {
    Func f("f");
    Var x("x");
    f(x) = 0.0f;
    std::string msg = message_of<CompileError>([&] { f(x) = f(x) + cast<int>(x) * 2 + cast<double>(x); });
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
    EXPECT_CONTAINS(msg, "uses the reduction variable r$x");
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

TEST(CompileErrors, NamesWithReservedCharacters) {
    std::string msg = message_of<CompileError>([&] { Func f("my.func"); });
    EXPECT_CONTAINS(msg, "contains '.' or '$'");
}

TEST(CompileErrors, IntegerLiteralMustFit) {
    Buffer<uint8_t> in(4);
    Var x("x");
    std::string msg = message_of<CompileError>([&] { Expr e = in(x) + 300; });
    EXPECT_CONTAINS(msg, "300 does not fit in uint8");
}

TEST(RuntimeErrors, InputTooSmallNamesBufferAndDimension) {
    ImageParam input(Float(32), 2, "input");
    Var x("x"), y("y");
    Func f("f");
    f(x, y) = input(x + 1, y) * 2.0f;
    Buffer<float> small(10, 10);
    input.set(small);
    std::string msg = message_of<RuntimeError>([&] { f.realize({10, 10}); });
    EXPECT_CONTAINS(msg, "Buffer input is too small: dimension 0 must cover [1, 10], but it covers [0, 9]");
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

TEST(RuntimeErrors, BufferTooLargeForInt32Indexing) {
    std::string msg = message_of<RuntimeError>([&] { Buffer<float> b(100000, 100000); });
    EXPECT_CONTAINS(msg, "2^31 - 1");
}
