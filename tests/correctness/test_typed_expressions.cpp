// Random expressions over every scalar type (8- to 64-bit integers, float16, bfloat16, float32,
// float64), with casts between them, computed three ways: scalar on the host, vectorized at an
// odd or even width on the host, and as a GPU kernel (on the device AICF_DEVICE names, the
// simulator without a GPU). The three must agree bit for bit: vector code and kernels change
// where values are computed, never what. The seed is fixed; AICF_TYPED_SEED and
// AICF_TYPED_COUNT change it and the number of expressions.

#include "Reference.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>

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

TEST(TypedExpressions, VectorsAndKernelsAgreeWithScalarCodeBitForBit) {
    const unsigned seed = unsigned(env_int("AICF_TYPED_SEED", 1));
    const int count = env_int("AICF_TYPED_COUNT", 120);
    static const int widths[] = {2, 3, 4, 5, 7, 8, 16, 17, 32, 33, 64};
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
        const size_t bytes = size_t(W) * size_t(out_t.bytes());
        ASSERT_EQ(std::memcmp(want.raw_data(), got_vector.raw_data(), bytes), 0) << "vectorized\n"
                                                                                 << what.str();
        ASSERT_EQ(std::memcmp(want.raw_data(), got_kernel.raw_data(), bytes), 0) << "GPU kernel\n"
                                                                                 << what.str();
    }
}
