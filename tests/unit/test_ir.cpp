// Types, node construction, printing, structural equality and substitution.

#include "dsl/aicf.h"
#include "dsl/ir/IREquality.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/Substitute.h"

#include <gtest/gtest.h>

#include <limits>

using namespace aicf;
using namespace aicf::ir;

TEST(Types, NamesAndProperties) {
    EXPECT_EQ(to_string(Int(32)), "int32");
    EXPECT_EQ(to_string(UInt(8, 16)), "uint8x16");
    EXPECT_EQ(to_string(Bool()), "bool");
    EXPECT_EQ(to_string(Float(16)), "float16");
    EXPECT_EQ(to_string(BFloat(16)), "bfloat16");
    EXPECT_EQ(to_string(Float(64, 4)), "float64x4");
    EXPECT_EQ(Int(8).max_int(), 127);
    EXPECT_EQ(Int(8).min_int(), -128);
    EXPECT_EQ(UInt(16).max_uint(), 65535u);
    EXPECT_TRUE(Int(32).can_represent(UInt(16)));
    EXPECT_FALSE(Int(32).can_represent(UInt(32)));
    EXPECT_TRUE(Float(32).can_represent(Int(16)));
    EXPECT_FALSE(Float(32).can_represent(Int(32)));
    EXPECT_TRUE(Float(32).can_represent(BFloat(16)));
    EXPECT_FALSE(Float(16).can_represent(BFloat(16)));
    EXPECT_EQ(type_of<bfloat16_t>(), BFloat(16));
    EXPECT_EQ(type_of<uint64_t>(), UInt(64));
    EXPECT_EQ(Float(32, 8).bytes(), 4);
    EXPECT_FALSE(is_valid_value_type(Handle()));
}

TEST(IR, ImmediatesWrapToTheirType) {
    EXPECT_EQ(as_const_int(IntImm::make(Int(8), 200)).value(), -56);
    EXPECT_EQ(as_const_uint(UIntImm::make(UInt(8), 300)).value(), 44u);
    EXPECT_EQ(as_const_float(FloatImm::make(Float(32), 0.1)).value(), double(0.1f));
}

TEST(IR, PrinterShowsStructure) {
    Var x("x"), y("y");
    Expr e = select(x < y, x * 2, min(y, 7)) + cast<int>(cast<float>(x) * 0.5f);
    EXPECT_EQ(to_string(e), "(select((x < y), (x * 2), min(y, 7)) + int32((float32(x) * 0.5f)))");
    Stmt s = For::make(
        "i", 0, 10, ForType::Serial,
        Store::make("buf", Variable::make(Int(32), "i"), Variable::make(Int(32), "i"), Expr()));
    EXPECT_EQ(to_string(s), "serial for (i, 0, 10) {\n  buf[i] = i\n}\n");
}

TEST(IR, StructuralEqualityAndHash) {
    Var x("x"), y("y");
    Expr a = x + y * 3, b = x + y * 3, c = x + y * 4, d = y + x * 3;
    EXPECT_TRUE(equal(a, b));
    EXPECT_FALSE(a.same_as(b));
    EXPECT_EQ(structural_hash(a), structural_hash(b));
    EXPECT_FALSE(equal(a, c));
    EXPECT_FALSE(equal(a, d));
    EXPECT_FALSE(equal(Expr(1), Expr(int64_t(1)))); // types differ
}

TEST(IR, SubstituteRespectsShadowingLets) {
    Expr x = Variable::make(Int(32), "x");
    Expr e = Add::make(x, Let::make("x", Expr(5), Mul::make(x, Expr(2))));
    Expr r = substitute("x", Expr(7), e);
    EXPECT_EQ(to_string(r), "(7 + (let x = 5 in (x * 2)))");
    EXPECT_TRUE(uses_var(e, "x"));
    EXPECT_FALSE(uses_var(Let::make("x", Expr(1), x), "x"));
}

TEST(IR, MutatorKeepsUnchangedNodes) {
    Var x("x");
    Expr e = x * 2 + 1;
    struct Identity : IRMutator {};
    Identity m;
    EXPECT_TRUE(m(e).same_as(e));
}

TEST(IR, EuclideanDivisionHelpers) {
    EXPECT_EQ(div_euclid(-7, 2), -4);
    EXPECT_EQ(mod_euclid(-7, 2), 1);
    EXPECT_EQ(div_euclid(7, -2), -3);
    EXPECT_EQ(mod_euclid(7, -2), 1);
    EXPECT_EQ(div_euclid(-7, -2), 4);
    EXPECT_EQ(mod_euclid(-7, -2), 1);
    EXPECT_EQ(div_euclid(5, 0), 0);
    EXPECT_EQ(mod_euclid(5, 0), 0);
    // Near the ends of int64, against 128-bit arithmetic (a - r wrapped before).
    const int64_t lo = std::numeric_limits<int64_t>::min(),
                  hi = std::numeric_limits<int64_t>::max();
    for (int64_t a : {lo, lo + 1, lo + 2, hi, hi - 1, int64_t(-7), int64_t(0), int64_t(9)}) {
        for (int64_t b : {int64_t(3), int64_t(-3), int64_t(2), int64_t(7), lo, lo + 1, hi, hi - 1,
                          int64_t(-2)}) {
            __int128 r = __int128(a) % b;
            if (r < 0) r += b < 0 ? -__int128(b) : __int128(b);
            const __int128 q = (__int128(a) - r) / b;
            EXPECT_EQ(mod_euclid(a, b), int64_t(r)) << a << " mod " << b;
            EXPECT_EQ(div_euclid(a, b), int64_t(q)) << a << " / " << b;
        }
    }
}

TEST(Targets, ParseAndCapabilities) {
    Target host("host");
    EXPECT_FALSE(host.has_cuda());
    EXPECT_EQ(host.to_string(), "host");
    Target h100("host-cuda-sm_90a-fma");
    EXPECT_TRUE(h100.has_cuda());
    EXPECT_EQ(h100.cuda_capability(), 90);
    EXPECT_TRUE(h100.is_arch_specific());
    EXPECT_TRUE(h100.has_feature(Target::FMA));
    EXPECT_EQ(h100.max_shared_memory_per_block(), 227 * 1024);
    EXPECT_EQ(h100.to_string(), "host-cuda-sm_90a-fma");
    Target a100("host-cuda-sm_80");
    EXPECT_EQ(a100.max_shared_memory_per_block(), 163 * 1024);
    EXPECT_EQ(a100.max_threads_per_block(), 1024);
    EXPECT_EQ(a100.warp_size(), 32);
    EXPECT_EQ(Target("host-cuda-sm_86").max_shared_memory_per_block(), 99 * 1024);
    EXPECT_FALSE(Target("host-cuda-sm_90").is_arch_specific());
    EXPECT_TRUE(Target(a100.to_string()) == a100);
}
