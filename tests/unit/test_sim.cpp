// The simulator device's executor: kernels written directly in kernel IR, run over a grid on
// the CPU and checked against plain C++ loops.

#include "backends/sim/SimMachine.h"
#include "backends/sim/Simulator.h"
#include "dsl/aicf.h"
#include "dsl/ir/IROperator.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>

using namespace aicf;
using namespace aicf::ir;
using aicf::backends::sim::KernelProfile;
using aicf::backends::sim::LaunchArgument;
using aicf::lowering::KernelArgument;
using aicf::lowering::kSharedMemoryName;
using aicf::lowering::LoweredKernel;

namespace {

Expr thread_index(int d) {
    return Call::make(Int(32), Intrinsic::gpu_thread_index, {Expr(d)}, Call::PureIntrinsic);
}

Expr block_index(int d) {
    return Call::make(Int(32), Intrinsic::gpu_block_index, {Expr(d)}, Call::PureIntrinsic);
}

Stmt barrier() {
    return Evaluate::make(Call::make(Int(32), Intrinsic::gpu_barrier, {}, Call::Intrinsic));
}

Expr var(const std::string &name, Type t = Int(32)) {
    return Variable::make(t, name);
}

Expr load(Type t, const std::string &name, Expr index, Expr predicate = Expr()) {
    return Load::make(t, name, std::move(index), std::move(predicate));
}

Stmt store(const std::string &name, Expr value, Expr index, Expr predicate = Expr()) {
    return Store::make(name, std::move(value), std::move(index), std::move(predicate));
}

Stmt serial(const std::string &name, Expr min, Expr extent, Stmt body) {
    return For::make(name, std::move(min), std::move(extent), ForType::Serial, std::move(body));
}

KernelArgument buffer_arg(const std::string &name, Type elem) {
    KernelArgument a;
    a.name = name;
    a.is_buffer = true;
    a.type = elem;
    a.read = a.written = true;
    return a;
}

KernelArgument scalar_arg(const std::string &name, Type t) {
    KernelArgument a;
    a.name = name;
    a.type = t;
    return a;
}

template <typename T> LaunchArgument buffer(std::vector<T> &v) {
    LaunchArgument a;
    a.data = v.data();
    a.bytes = int64_t(v.size() * sizeof(T));
    return a;
}

LaunchArgument scalar_int(int32_t v) {
    LaunchArgument a;
    a.bits = uint64_t(uint32_t(v));
    return a;
}

LaunchArgument scalar_float(float v) {
    LaunchArgument a;
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    a.bits = bits;
    return a;
}

LoweredKernel make_kernel(const std::string &name, std::array<int, 3> threads,
                          std::vector<KernelArgument> args, Stmt body, int64_t shared_bytes = 0) {
    LoweredKernel k;
    k.name = name;
    k.threads = threads;
    k.args = std::move(args);
    k.shared_bytes = shared_bytes;
    k.body = std::move(body);
    return k;
}

std::vector<float> random_floats(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
    std::vector<float> v(n);
    for (float &x : v)
        x = dist(rng);
    return v;
}

// Every check on, whatever AICF_SIM_CHECKS says.
backends::sim::LaunchOptions all_checks() {
    backends::sim::LaunchOptions options;
    options.checks = true;
    return options;
}

// Runs `k` expecting a RuntimeError and returns its message.
std::string launch_error(const LoweredKernel &k, std::array<int, 3> grid,
                         const std::vector<LaunchArgument> &args) {
    try {
        backends::sim::launch(k, grid, args, all_checks());
    } catch (const RuntimeError &e) {
        return e.what();
    }
    ADD_FAILURE() << "kernel " << k.name << " ran without the expected error";
    return "";
}

} // namespace

TEST(SimElementwise, GuardedKernelOverARaggedSize) {
    const int n = 1000, threads = 128, blocks = (n + threads - 1) / threads;
    std::vector<float> a = random_floats(n, 1), b = random_floats(n, 2);
    std::vector<float> out(n + 24, -7.0f);
    Expr i = var("i");
    Stmt body = LetStmt::make(
        "i", block_index(0) * threads + thread_index(0),
        IfThenElse::make(
            i < var("n"),
            store("out", load(Float(32), "a", i) * var("s", Float(32)) + load(Float(32), "b", i),
                  i)));
    LoweredKernel k = make_kernel("axpy", {threads, 1, 1},
                                  {buffer_arg("a", Float(32)), buffer_arg("b", Float(32)),
                                   buffer_arg("out", Float(32)), scalar_arg("n", Int(32)),
                                   scalar_arg("s", Float(32))},
                                  body);
    backends::sim::launch(k, {blocks, 1, 1},
                          {buffer(a), buffer(b), buffer(out), scalar_int(n), scalar_float(2.5f)});
    for (int j = 0; j < n; j++) {
        float expected = a[j] * 2.5f + b[j];
        ASSERT_EQ(out[j], expected) << "at " << j;
    }
    for (int j = n; j < n + 24; j++)
        EXPECT_EQ(out[j], -7.0f) << "the guard let " << j << " through";
}

TEST(SimIndices, ThreadsAndBlocksInThreeDimensions) {
    const std::array<int, 3> threads{{8, 4, 2}}, grid{{3, 2, 2}};
    const int width = threads[0] * grid[0], height = threads[1] * grid[1];
    const int depth = threads[2] * grid[2];
    std::vector<int32_t> out(size_t(width * height * depth), -1);
    Expr x = block_index(0) * threads[0] + thread_index(0);
    Expr y = block_index(1) * threads[1] + thread_index(1);
    Expr z = block_index(2) * threads[2] + thread_index(2);
    Expr code = thread_index(0) + thread_index(1) * 10 + thread_index(2) * 100 +
                block_index(0) * 1000 + block_index(1) * 10000 + block_index(2) * 100000;
    Stmt body = store("out", code, x + (y + z * height) * width);
    LoweredKernel k = make_kernel("coords", threads, {buffer_arg("out", Int(32))}, body);
    backends::sim::launch(k, grid, {buffer(out)});
    for (int zz = 0; zz < depth; zz++) {
        for (int yy = 0; yy < height; yy++) {
            for (int xx = 0; xx < width; xx++) {
                int expected = xx % 8 + (yy % 4) * 10 + (zz % 2) * 100 + (xx / 8) * 1000 +
                               (yy / 4) * 10000 + (zz / 2) * 100000;
                ASSERT_EQ(out[size_t(xx + (yy + zz * height) * width)], expected)
                    << "at " << xx << ", " << yy << ", " << zz;
            }
        }
    }
}

TEST(SimShared, TreeReductionWithBarriers) {
    const int threads = 64, blocks = 5;
    std::vector<int32_t> in(threads * blocks), out(blocks, 0);
    std::mt19937 rng(3);
    for (int32_t &v : in)
        v = int32_t(rng() % 2001) - 1000;
    Expr t = thread_index(0), s = var("s");
    Stmt step = LetStmt::make(
        "s", Expr(threads / 2) >> var("k"),
        Block::make({IfThenElse::make(t < s, store(kSharedMemoryName,
                                                   load(Int(32), kSharedMemoryName, t) +
                                                       load(Int(32), kSharedMemoryName, t + s),
                                                   t)),
                     barrier()}));
    Stmt body = Block::make({
        store(kSharedMemoryName, load(Int(32), "in", block_index(0) * threads + t), t),
        barrier(),
        serial("k", 0, 6, step),
        IfThenElse::make(t == 0, store("out", load(Int(32), kSharedMemoryName, 0), block_index(0))),
    });
    LoweredKernel k =
        make_kernel("tree_sum", {threads, 1, 1},
                    {buffer_arg("in", Int(32)), buffer_arg("out", Int(32))}, body, threads * 4);
    backends::sim::launch(k, {blocks, 1, 1}, {buffer(in), buffer(out)});
    for (int b = 0; b < blocks; b++) {
        int32_t expected = 0;
        for (int j = 0; j < threads; j++)
            expected += in[size_t(b * threads + j)];
        EXPECT_EQ(out[b], expected) << "block " << b;
    }
}

TEST(SimDivergence, IfElseAndPerThreadLoopBounds) {
    const int threads = 48;
    std::vector<int32_t> parity(threads), triangle(threads), window(threads);
    Expr t = thread_index(0);
    Stmt body = Allocate::make(
        "acc", Int(32), MemoryType::Register, {1},
        Block::make({
            IfThenElse::make(t % 2 == 0, store("parity", t * 10, t), store("parity", -t, t)),
            // sum of j for j in [0, t): every thread its own trip count
            store("acc", 0, 0),
            serial("j", 0, t, store("acc", load(Int(32), "acc", 0) + var("j"), 0)),
            store("triangle", load(Int(32), "acc", 0), t),
            // per-thread minimum, uniform extent, inside a branch: odd threads only
            IfThenElse::make(
                t % 2 == 1,
                Block::make({store("acc", 0, 0),
                             serial("w", t, 3,
                                    store("acc", load(Int(32), "acc", 0) + var("w") * var("w"), 0)),
                             store("window", load(Int(32), "acc", 0), t)}),
                store("window", 7, t)),
        }));
    LoweredKernel k = make_kernel("divergent", {threads, 1, 1},
                                  {buffer_arg("parity", Int(32)), buffer_arg("triangle", Int(32)),
                                   buffer_arg("window", Int(32))},
                                  body);
    backends::sim::launch(k, {1, 1, 1}, {buffer(parity), buffer(triangle), buffer(window)});
    for (int j = 0; j < threads; j++) {
        EXPECT_EQ(parity[j], j % 2 == 0 ? j * 10 : -j) << j;
        EXPECT_EQ(triangle[j], j * (j - 1) / 2) << j;
        int w = j * j + (j + 1) * (j + 1) + (j + 2) * (j + 2);
        EXPECT_EQ(window[j], j % 2 == 1 ? w : 7) << j;
    }
}

TEST(SimVector, RampLoadsStoresAndPredicates) {
    const int threads = 16, lanes = 4, n = 50;
    std::vector<float> in = random_floats(threads * lanes, 4);
    std::vector<float> out(threads * lanes, -1.0f), gathered(threads * lanes, -1.0f);
    Expr t = thread_index(0);
    Expr dense = Ramp::make(t * lanes, 1, lanes);
    Expr in_range = dense < Broadcast::make(var("n"), lanes);
    Expr strided = Ramp::make(t, threads, lanes); // lane l of thread t: element t + 16 l
    Stmt body = Block::make({
        store("out", load(Float(32, lanes), "in", dense, in_range) * 3.0f, dense, in_range),
        store("gathered", load(Float(32, lanes), "in", strided) + Broadcast::make(1.0f, lanes),
              dense),
    });
    LoweredKernel k = make_kernel("vec", {threads, 1, 1},
                                  {buffer_arg("in", Float(32)), buffer_arg("out", Float(32)),
                                   buffer_arg("gathered", Float(32)), scalar_arg("n", Int(32))},
                                  body);
    backends::sim::launch(k, {1, 1, 1}, {buffer(in), buffer(out), buffer(gathered), scalar_int(n)});
    for (int j = 0; j < threads * lanes; j++) {
        EXPECT_EQ(out[j], j < n ? in[j] * 3.0f : -1.0f) << j;
        int tt = j / lanes, l = j % lanes;
        EXPECT_EQ(gathered[j], in[size_t(tt + threads * l)] + 1.0f) << j;
    }
}

TEST(SimFloat16, StorageRoundTripAndArithmetic) {
    std::vector<float16_t> in;
    for (double v : {0.0, -0.0, 1.0, -2.5, 0.1, 65504.0, 6.0e-8, -3.0e-5, 1000.7}) {
        in.push_back(float16_t(v));
    }
    in.push_back(float16_t::from_bits(0x7c00)); // inf
    in.push_back(float16_t::from_bits(0xfc00)); // -inf
    in.push_back(float16_t::from_bits(0x7e00)); // NaN
    in.push_back(float16_t::from_bits(0x7c01)); // signalling NaN, payload 1
    in.push_back(float16_t::from_bits(0xfd55)); // quiet NaN with a payload
    const int n = int(in.size());
    std::vector<float16_t> copy(n), scaled(n);
    std::vector<bfloat16_t> brain(n);
    std::vector<float> widened(n);
    Expr t = thread_index(0);
    Expr h = load(Float(16), "in", t);
    Stmt body = IfThenElse::make(
        t < n, Block::make({
                   store("copy", h, t),
                   store("scaled", h * make_const(Float(16), 1.5) + make_const(Float(16), 0.1), t),
                   store("widened", Cast::make(Float(32), h), t),
                   store("brain", Cast::make(BFloat(16), h) * make_const(BFloat(16), 3.0), t),
               }));
    LoweredKernel k =
        make_kernel("halves", {16, 1, 1},
                    {buffer_arg("in", Float(16)), buffer_arg("copy", Float(16)),
                     buffer_arg("scaled", Float(16)), buffer_arg("widened", Float(32)),
                     buffer_arg("brain", BFloat(16))},
                    body);
    backends::sim::launch(
        k, {1, 1, 1}, {buffer(in), buffer(copy), buffer(scaled), buffer(widened), buffer(brain)});
    const float tenth = float(float16_t(0.1f));
    for (int j = 0; j < n; j++) {
        const float x = float(in[j]);
        if (std::isnan(x)) {
            EXPECT_EQ(copy[j].bits, in[j].bits) << j; // a copy changes no bit
            EXPECT_TRUE(std::isnan(float(copy[j])));
            EXPECT_TRUE(std::isnan(widened[j]));
            EXPECT_TRUE(std::isnan(float(scaled[j])));
            continue;
        }
        EXPECT_EQ(copy[j].bits, in[j].bits) << j;
        EXPECT_EQ(widened[j], x) << j;
        const float product = float(float16_t(x * 1.5f));
        EXPECT_EQ(scaled[j].bits, float16_t(product + tenth).bits) << j << ": " << x;
        const float b = float(bfloat16_t(x));
        EXPECT_EQ(brain[j].bits, bfloat16_t(b * 3.0f).bits) << j << ": " << x;
    }
}

// A bfloat16 copy and a reinterpretation as uint16 and back keep every bit, NaN payloads
// and signalling NaNs too, as loads and stores of 16 bits do on a GPU.
TEST(SimFloat16, CopiesKeepEveryBit) {
    std::vector<bfloat16_t> in;
    for (uint16_t b : {0x7f81, 0xffd5, 0x7fc0, 0x3f80, 0x0001, 0x8000})
        in.push_back(bfloat16_t::from_bits(b));
    const int n = int(in.size());
    std::vector<bfloat16_t> copy(n);
    std::vector<uint16_t> bits(n);
    Expr t = thread_index(0);
    Expr b = load(BFloat(16), "in", t);
    Stmt body = IfThenElse::make(
        t < n,
        Block::make({store("copy", b, t), store("bits", Reinterpret::make(UInt(16), b), t)}));
    LoweredKernel k = make_kernel("copies", {8, 1, 1},
                                  {buffer_arg("in", BFloat(16)), buffer_arg("copy", BFloat(16)),
                                   buffer_arg("bits", UInt(16))},
                                  body);
    backends::sim::launch(k, {1, 1, 1}, {buffer(in), buffer(copy), buffer(bits)});
    for (int j = 0; j < n; j++) {
        EXPECT_EQ(copy[j].bits, in[j].bits) << j;
        EXPECT_EQ(bits[j], in[j].bits) << j;
    }
}

TEST(SimFloat16, NarrowingRoundsToNearestEven) {
    // Random values of every magnitude, and the exact midpoints between neighbouring float16
    // and bfloat16 values, where only ties-to-even decides.
    std::mt19937 rng(6);
    std::vector<float> in;
    std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
    for (int j = 0; j < 1024; j++) {
        float v = std::ldexp(mantissa(rng), int(rng() % 50) - 32);
        in.push_back(rng() % 2 ? -v : v);
    }
    for (int j = 0; j < 1024; j++) {
        uint16_t h = uint16_t(rng() % 0x7bff);
        float mid = (float(float16_t::from_bits(h)) + float(float16_t::from_bits(h + 1))) / 2;
        in.push_back(rng() % 2 ? -mid : mid);
        uint16_t b = uint16_t(rng() % 0x7f7f);
        in.push_back((float(bfloat16_t::from_bits(b)) + float(bfloat16_t::from_bits(b + 1))) / 2);
    }
    const int n = int(in.size()), threads = 256;
    std::vector<float16_t> half(n);
    std::vector<bfloat16_t> brain(n);
    Expr i = block_index(0) * threads + thread_index(0);
    Expr x = load(Float(32), "in", i);
    Stmt body = Block::make(
        {store("half", Cast::make(Float(16), x), i), store("brain", Cast::make(BFloat(16), x), i)});
    LoweredKernel k = make_kernel("narrow", {threads, 1, 1},
                                  {buffer_arg("in", Float(32)), buffer_arg("half", Float(16)),
                                   buffer_arg("brain", BFloat(16))},
                                  body);
    backends::sim::launch(k, {n / threads, 1, 1}, {buffer(in), buffer(half), buffer(brain)});
    for (int j = 0; j < n; j++) {
        ASSERT_EQ(half[j].bits, float16_t(in[j]).bits) << in[j];
        ASSERT_EQ(brain[j].bits, bfloat16_t(in[j]).bits) << in[j];
    }
}

TEST(SimArith, EuclideanDivisionAndModulo) {
    std::vector<int32_t> a, b;
    const int32_t values[] = {0,   1,   -1,   7,   -7,         13,
                              -13, 100, -100, 128, 2147483647, -2147483647 - 1};
    const int32_t divisors[] = {0, 1, -1, 2, -2, 3, -3, 7, -7, 255, 2147483647, -2147483647 - 1};
    for (int32_t x : values) {
        for (int32_t y : divisors) {
            a.push_back(x);
            b.push_back(y);
        }
    }
    const int n = int(a.size());
    std::vector<int32_t> q(n), r(n);
    std::vector<int8_t> q8(n), r8(n);
    Expr i = block_index(0) * 32 + thread_index(0);
    Expr x = load(Int(32), "a", i), y = load(Int(32), "b", i);
    Expr x8 = Cast::make(Int(8), x), y8 = Cast::make(Int(8), y);
    Stmt body = IfThenElse::make(i < n, Block::make({
                                            store("q", x / y, i),
                                            store("r", x % y, i),
                                            store("q8", Div::make(x8, y8), i),
                                            store("r8", Mod::make(x8, y8), i),
                                        }));
    LoweredKernel k =
        make_kernel("divmod", {32, 1, 1},
                    {buffer_arg("a", Int(32)), buffer_arg("b", Int(32)), buffer_arg("q", Int(32)),
                     buffer_arg("r", Int(32)), buffer_arg("q8", Int(8)), buffer_arg("r8", Int(8))},
                    body);
    backends::sim::launch(k, {(n + 31) / 32, 1, 1},
                          {buffer(a), buffer(b), buffer(q), buffer(r), buffer(q8), buffer(r8)});
    for (int j = 0; j < n; j++) {
        EXPECT_EQ(q[j], int32_t(uint32_t(div_euclid(a[j], b[j])))) << a[j] << " / " << b[j];
        EXPECT_EQ(r[j], int32_t(mod_euclid(a[j], b[j]))) << a[j] << " % " << b[j];
        const int8_t a8 = int8_t(a[j]), b8 = int8_t(b[j]);
        EXPECT_EQ(q8[j], int8_t(uint8_t(div_euclid(a8, b8)))) << int(a8) << " / " << int(b8);
        EXPECT_EQ(r8[j], int8_t(mod_euclid(a8, b8))) << int(a8) << " % " << int(b8);
    }
}

TEST(SimArith, SaturatingCastsShiftsAndMath) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> in = {nan, 1e10f, -1e10f, -3.7f, 3.7f, 2.5f, -2.5f, 300.0f};
    const int n = int(in.size());
    std::vector<int32_t> to_int(n), shifted(n);
    std::vector<uint8_t> to_u8(n);
    std::vector<float> rounded(n), mod(n);
    Expr t = thread_index(0);
    Expr f = load(Float(32), "in", t);
    Stmt body = IfThenElse::make(
        t < n, Block::make({
                   store("to_int", Cast::make(Int(32), f), t),
                   store("to_u8", Cast::make(UInt(8), f), t),
                   store("rounded", Call::make(Float(32), Intrinsic::round, {f}), t),
                   store("mod", Mod::make(f, Expr(1.5f)), t),
                   // -1 >> t, and 1 << (t * 5): shifts by 32 or more give the sign or 0
                   store("shifted",
                         Call::make(Int(32), Intrinsic::shift_right, {Expr(-64), t * 5}) +
                             Call::make(Int(32), Intrinsic::shift_left, {Expr(1), t * 5}),
                         t),
               }));
    LoweredKernel k = make_kernel("casts", {8, 1, 1},
                                  {buffer_arg("in", Float(32)), buffer_arg("to_int", Int(32)),
                                   buffer_arg("to_u8", UInt(8)), buffer_arg("rounded", Float(32)),
                                   buffer_arg("mod", Float(32)), buffer_arg("shifted", Int(32))},
                                  body);
    backends::sim::launch(
        k, {1, 1, 1},
        {buffer(in), buffer(to_int), buffer(to_u8), buffer(rounded), buffer(mod), buffer(shifted)});
    const int32_t expected_int[] = {0, 2147483647, -2147483647 - 1, -3, 3, 2, -2, 300};
    const uint8_t expected_u8[] = {0, 255, 0, 0, 3, 2, 0, 255};
    const float expected_round[] = {nan, 1e10f, -1e10f, -4.0f, 4.0f, 2.0f, -2.0f, 300.0f};
    for (int j = 0; j < n; j++) {
        EXPECT_EQ(to_int[j], expected_int[j]) << in[j];
        EXPECT_EQ(int(to_u8[j]), int(expected_u8[j])) << in[j];
        if (j > 0) {
            EXPECT_EQ(rounded[j], expected_round[j]) << in[j];
            EXPECT_EQ(mod[j], in[j] - 1.5f * std::floor(in[j] / 1.5f)) << in[j];
        }
        const int amount = j * 5;
        const int32_t right = amount >= 32 ? -1 : (-64 >> amount);
        const int32_t left = amount >= 32 ? 0 : int32_t(uint32_t(1) << amount);
        EXPECT_EQ(shifted[j], int32_t(uint32_t(right) + uint32_t(left))) << amount;
    }
    EXPECT_TRUE(std::isnan(rounded[0]));
}

TEST(SimPrivate, RegisterAllocationIsPerThread) {
    const int threads = 32;
    std::vector<int32_t> out(threads, 0);
    Expr t = thread_index(0);
    Stmt body =
        Allocate::make("tmp", Int(32), MemoryType::Register, {4},
                       Block::make({
                           serial("j", 0, 4, store("tmp", t * 100 + var("j"), var("j"))),
                           // every thread reads its own copy, back to front, weighting by position
                           store("out",
                                 load(Int(32), "tmp", 3) * 1 + load(Int(32), "tmp", 2) * 2 +
                                     load(Int(32), "tmp", 1) * 3 + load(Int(32), "tmp", 0) * 4,
                                 t),
                       }));
    LoweredKernel k = make_kernel("registers", {threads, 1, 1}, {buffer_arg("out", Int(32))}, body);
    backends::sim::launch(k, {1, 1, 1}, {buffer(out)});
    for (int j = 0; j < threads; j++) {
        int expected = (j * 100 + 3) * 1 + (j * 100 + 2) * 2 + (j * 100 + 1) * 3 + (j * 100) * 4;
        EXPECT_EQ(out[j], expected) << j;
    }
}

TEST(SimMemory, ConflictingStoresAndUnwrittenSharedMemory) {
    const int threads = 40;
    std::vector<int32_t> out(3, 0);
    Expr t = thread_index(0);
    Stmt body = Block::make({
        store("out", t, 0),                                   // every thread, one address
        IfThenElse::make(t < 17, store("out", t * 2, 1)),     // the highest active thread wins
        store("out", load(Int(32), kSharedMemoryName, 5), 2), // never written: garbage
    });
    LoweredKernel k =
        make_kernel("conflicts", {threads, 1, 1}, {buffer_arg("out", Int(32))}, body, 64);
    // The check of unwritten shared memory refuses the read; without it, it reads garbage.
    std::string msg = launch_error(k, {1, 1, 1}, {buffer(out)});
    EXPECT_NE(msg.find("thread (0, 0, 0) of block (0, 0, 0) loads byte 20 of shared memory, "
                       "which no thread of the block has written since the kernel started"),
              std::string::npos)
        << msg;
    backends::sim::LaunchOptions unchecked;
    unchecked.checks = false;
    backends::sim::launch(k, {1, 1, 1}, {buffer(out)}, unchecked);
    EXPECT_EQ(out[0], threads - 1);
    EXPECT_EQ(out[1], 32);
    EXPECT_EQ(uint32_t(out[2]), 0xCDCDCDCDu);
}

TEST(SimErrors, GlobalAccessOutOfBounds) {
    std::vector<float> in(100), out(100);
    Expr i = block_index(0) * 32 + thread_index(0);
    Stmt body = IfThenElse::make(i < 100, store("out", load(Float(32), "in", i + 1), i));
    LoweredKernel k =
        make_kernel("shift_left_by_one", {32, 1, 1},
                    {buffer_arg("in", Float(32)), buffer_arg("out", Float(32))}, body);
    std::string msg = launch_error(k, {4, 1, 1}, {buffer(in), buffer(out)});
    EXPECT_NE(msg.find("kernel shift_left_by_one"), std::string::npos) << msg;
    EXPECT_NE(msg.find("buffer in"), std::string::npos) << msg;
    EXPECT_NE(msg.find("block (3, 0, 0)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("thread (3, 0, 0)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("index 100"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[0, 100)"), std::string::npos) << msg;
}

TEST(SimErrors, SharedAndPrivateAccessOutOfBounds) {
    std::vector<int32_t> out(16);
    Expr t = thread_index(0);
    LoweredKernel shared = make_kernel("spill", {16, 1, 1}, {buffer_arg("out", Int(32))},
                                       store(kSharedMemoryName, t, t + 4), 64);
    std::string msg = launch_error(shared, {1, 1, 1}, {buffer(out)});
    EXPECT_NE(msg.find("kernel spill"), std::string::npos) << msg;
    EXPECT_NE(msg.find("shared memory (__shared)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("thread (12, 0, 0)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("index 16"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[0, 16)"), std::string::npos) << msg;

    Stmt body = Allocate::make("tmp", Int(32), MemoryType::Register, {2},
                               store("out", load(Int(32), "tmp", t - 5), t));
    LoweredKernel priv = make_kernel("private", {16, 1, 1}, {buffer_arg("out", Int(32))}, body);
    msg = launch_error(priv, {1, 1, 1}, {buffer(out)});
    EXPECT_NE(msg.find("allocation tmp"), std::string::npos) << msg;
    EXPECT_NE(msg.find("index -5"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[0, 2)"), std::string::npos) << msg;
}

TEST(SimErrors, BarrierUnderDivergence) {
    Stmt body = IfThenElse::make(thread_index(0) < 5, barrier());
    LoweredKernel k = make_kernel("bad_sync", {32, 1, 1}, {}, body);
    std::string msg = launch_error(k, {2, 1, 1}, {});
    EXPECT_NE(msg.find("barrier in kernel bad_sync reached by 5 of 32 threads of block (0, 0, 0)"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("divergent"), std::string::npos) << msg;
}

TEST(SimErrors, FailedAssertionAndUnknownVariable) {
    Expr message = Call::make(
        Int(32), Intrinsic::runtime_error,
        {Expr(int(RuntimeErrorKind::ParamOutOfRange)), Expr(std::string("p"))}, Call::Intrinsic);
    Stmt body = AssertStmt::make(thread_index(0) < 20, message);
    LoweredKernel k = make_kernel("checked", {32, 1, 1}, {}, body);
    std::string msg = launch_error(k, {1, 1, 1}, {});
    EXPECT_NE(msg.find("kernel checked"), std::string::npos) << msg;
    EXPECT_NE(msg.find("thread (20, 0, 0)"), std::string::npos) << msg;

    LoweredKernel unknown = make_kernel("lost", {4, 1, 1}, {}, Evaluate::make(var("nowhere") + 1));
    EXPECT_THROW(backends::sim::launch(unknown, {1, 1, 1}, {}), InternalError);
}

// ---- Checks: races and unwritten memory in shared memory, stores outside their Func ----

TEST(SimChecks, WriteAfterAnotherThreadsRead) {
    // Each thread reads its right neighbour's word, then overwrites its own: thread 1
    // overwrites the word thread 0 read, with no barrier in between.
    const int threads = 32;
    std::vector<int32_t> out(threads);
    Expr t = thread_index(0);
    Stmt body = Block::make({
        store(kSharedMemoryName, t, t + 1),
        barrier(),
        LetStmt::make(
            "v", load(Int(32), kSharedMemoryName, t + 1),
            Block::make({store(kSharedMemoryName, var("v") * 2, t), store("out", var("v"), t)})),
    });
    LoweredKernel k = make_kernel("neighbours", {threads, 1, 1}, {buffer_arg("out", Int(32))}, body,
                                  (threads + 1) * 4);
    std::string msg = launch_error(k, {1, 1, 1}, {buffer(out)});
    EXPECT_NE(msg.find("kernel neighbours: shared-memory race in block (0, 0, 0) on byte 4 of "
                       "shared memory: thread (0, 0, 0) loads it (load __shared[...]) and thread "
                       "(1, 0, 0) stores it (store __shared[...]) with no barrier between them"),
              std::string::npos)
        << msg;

    // With a barrier between the read and the write, it is correct.
    Stmt fixed = Block::make({
        store(kSharedMemoryName, t, t + 1),
        barrier(),
        LetStmt::make("v", load(Int(32), kSharedMemoryName, t + 1),
                      Block::make({barrier(), store(kSharedMemoryName, var("v") * 2, t),
                                   store("out", var("v"), t)})),
    });
    k.body = fixed;
    KernelProfile p = backends::sim::launch(k, {1, 1, 1}, {buffer(out)}, all_checks());
    for (int j = 0; j < threads; j++)
        EXPECT_EQ(out[j], j);
    EXPECT_EQ(p.barriers, 2);
}

TEST(SimChecks, StoresOfOneInstructionToOneAddress) {
    Expr t = thread_index(0);
    // Every thread stores the same value: harmless. Different values: a race.
    LoweredKernel same =
        make_kernel("same", {8, 1, 1}, {},
                    Block::make({store(kSharedMemoryName, 7, 0), barrier(),
                                 Evaluate::make(load(Int(32), kSharedMemoryName, 0))}),
                    4);
    backends::sim::launch(same, {1, 1, 1}, {}, all_checks());
    LoweredKernel different =
        make_kernel("different", {8, 1, 1}, {}, store(kSharedMemoryName, t, 0), 4);
    std::string msg = launch_error(different, {1, 1, 1}, {});
    EXPECT_NE(msg.find("race in block (0, 0, 0) on byte 0 of shared memory: thread (0, 0, 0) "
                       "stores it (store __shared[...]) and thread (7, 0, 0) stores it"),
              std::string::npos)
        << msg;
}

TEST(SimChecks, NeighbouringBytesOfAWordAreNoRace) {
    // 64 threads store one byte each, then each reads its neighbour's byte after a barrier.
    // Threads 0-3 write bytes of the same word: on a GPU that is no race, and the shadow
    // tracks bytes here because the kernel's smallest shared element is a byte.
    const int threads = 64;
    std::vector<uint8_t> out(threads);
    Expr t = thread_index(0);
    Expr byte = Cast::make(UInt(8), t * 3);
    Stmt body = Block::make({
        store(kSharedMemoryName, byte, t),
        barrier(),
        store("out", load(UInt(8), kSharedMemoryName, t ^ 1), t),
    });
    LoweredKernel k =
        make_kernel("bytes", {threads, 1, 1}, {buffer_arg("out", UInt(8))}, body, threads);
    backends::sim::launch(k, {1, 1, 1}, {buffer(out)}, all_checks());
    for (int j = 0; j < threads; j++)
        EXPECT_EQ(int(out[j]), ((j ^ 1) * 3) & 255) << j;

    // Without the barrier, thread 0 reads the byte thread 1 writes.
    k.body = Block::make({store(kSharedMemoryName, byte, t),
                          store("out", load(UInt(8), kSharedMemoryName, t ^ 1), t)});
    std::string msg = launch_error(k, {1, 1, 1}, {buffer(out)});
    EXPECT_NE(msg.find("on byte 1 of shared memory: thread (1, 0, 0) stores it"), std::string::npos)
        << msg;
}

TEST(SimChecks, StoreOutsideTheFuncBeingComputed) {
    // f lives in bytes [0, 64) and g in [64, 128); f's producer stores 16 elements too far.
    Expr t = thread_index(0);
    Stmt body = ProducerConsumer::make_produce("f", store(kSharedMemoryName, t * 2.0f, t + 16));
    LoweredKernel k = make_kernel("spill_into_g", {16, 1, 1}, {}, body, 128);
    k.funcs = {"f"};
    k.shared = {{"f", 0, 64}, {"g", 64, 64}};
    std::string msg = launch_error(k, {1, 1, 1}, {});
    EXPECT_NE(msg.find("kernel spill_into_g: thread (0, 0, 0) of block (0, 0, 0) stores 4 bytes "
                       "at byte 64 of shared memory, outside f, which it is computing and which "
                       "lives at bytes [0, 64): it overwrites g (while computing f)"),
              std::string::npos)
        << msg;
}

TEST(SimChecks, ShuffleWithAnInactiveLaneInItsMask) {
    // Threads 0..47 except 5 execute a butterfly shuffle (xor 1): the first warp's full mask
    // holds lane 5, which does not execute it; with a mask of its active half-warp (lanes
    // 16..31) the same warp is fine, and thread 17 reads thread 16.
    LoweredKernel k = make_kernel("shuffle", {64, 1, 1}, {}, Evaluate::make(0));
    backends::sim::Machine m(k, true);
    backends::sim::Mask mask;
    mask.resize(64);
    for (int t = 0; t < 48; t++)
        mask.on[t] = t != 5;
    mask.recount();
    EXPECT_EQ(mask.count, 47);
    EXPECT_EQ(mask.warps, 2);
    EXPECT_EQ(mask.last, 47);
    m.mask = &mask;
    backends::sim::Site site;
    site.op = backends::sim::Site::Shuffle;
    site.func = "f";
    std::vector<backends::sim::Word> masks(64, backends::sim::word_u(0xffffffffu));
    try {
        m.shuffle_sources({masks.data(), false}, 1, site);
        ADD_FAILURE() << "no error";
    } catch (const RuntimeError &e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("kernel shuffle: thread (0, 0, 0) of block (0, 0, 0) executes a "
                           "shuffle with member mask 0xffffffff, but lane 5 of its warp (thread "
                           "(5, 0, 0)) does not execute it"),
                  std::string::npos)
            << msg;
        EXPECT_NE(msg.find("while computing f"), std::string::npos) << msg;
    }
    for (int t = 0; t < 64; t++) {
        mask.on[t] = (t >= 16 && t < 32) || (t >= 32 && t < 48);
        masks[t] = backends::sim::word_u(t < 32 ? 0xffff0000u : 0x0000ffffu);
    }
    mask.recount();
    const std::vector<int> &sources = m.shuffle_sources({masks.data(), false}, 1, site);
    EXPECT_EQ(sources[17], 16);
    EXPECT_EQ(sources[32], 33);
    EXPECT_EQ(sources[3], -1);
    // Lane 20 names another mask than its group does.
    masks[20] = backends::sim::word_u(0xffffu);
    std::string msg;
    try {
        m.shuffle_sources({masks.data(), false}, 1, site);
    } catch (const RuntimeError &e) {
        msg = e.what();
    }
    EXPECT_NE(msg.find("thread (16, 0, 0) of block (0, 0, 0) executes a shuffle with member "
                       "mask 0xffff0000, but lane 20 of its warp executes it with another mask"),
              std::string::npos)
        << msg;
}

// ---- Profiles ----

TEST(SimProfile, BankConflictsOfSharedAccessPatterns) {
    // One warp reads shared memory in eight patterns; the wavefronts are the largest number of
    // distinct 4-byte words any of the 32 banks serves.
    Expr t = thread_index(0);
    struct Pattern {
        Type type;
        Expr index;
        int64_t wavefronts;
    };
    const std::vector<Pattern> patterns = {
        {Float(32), t, 1},       // consecutive words
        {Float(32), t * 2, 2},   // every other word: 16 banks, 2 words each
        {Float(32), Expr(0), 1}, // one word for all: a broadcast
        {Float(32), t / 2, 1},   // pairs of threads share a word
        {Float(64), t, 2},       // 64 words
        {UInt(8), t, 1},         // 8 words
        {Float(32), t * 32, 32}, // a column of a 32 x 32 tile
        {Float(32), t * 33, 1},  // the same, rows padded to 33
    };
    std::vector<Stmt> reads;
    std::vector<KernelArgument> args;
    std::vector<std::vector<double>> outs(patterns.size(), std::vector<double>(32));
    std::vector<LaunchArgument> values;
    for (size_t i = 0; i < patterns.size(); i++) {
        const std::string name = "out" + std::to_string(i);
        reads.push_back(store(
            name,
            Cast::make(Float(64), load(patterns[i].type, kSharedMemoryName, patterns[i].index)),
            t));
        args.push_back(buffer_arg(name, Float(64)));
        values.push_back(buffer(outs[i]));
    }
    LoweredKernel k = make_kernel("banks", {32, 1, 1}, args, Block::make(reads), 32 * 33 * 4);
    backends::sim::LaunchOptions unchecked; // the memory is never written
    unchecked.checks = false;
    KernelProfile p = backends::sim::launch(k, {1, 1, 1}, values, unchecked);
    std::vector<const backends::sim::MemoryInstructionProfile *> shared;
    for (const auto &i : p.memory_instructions) {
        if (i.shared) shared.push_back(&i);
    }
    ASSERT_EQ(shared.size(), patterns.size()) << p.to_string();
    for (size_t i = 0; i < patterns.size(); i++) {
        EXPECT_EQ(shared[i]->requests, 1) << i;
        EXPECT_EQ(shared[i]->wavefronts, patterns[i].wavefronts) << i << ": " << patterns[i].index;
        EXPECT_EQ(shared[i]->bytes, 32 * patterns[i].type.bytes()) << i;
    }
    EXPECT_EQ(p.worst_shared_instruction(), shared[6]);
    EXPECT_EQ(p.shared_wavefronts(), 1 + 2 + 1 + 1 + 2 + 1 + 32 + 1);
    EXPECT_EQ(p.instructions.shared_load, int64_t(patterns.size()));
    EXPECT_EQ(p.instructions.global_store, int64_t(patterns.size()));
}

TEST(SimProfile, SectorsInstructionsAndFlops) {
    // 48 threads: a full warp and one with 16 active threads.
    const int threads = 48;
    std::vector<float> in = random_floats(64, 7), out(threads);
    std::vector<double> wide(threads);
    Expr t = thread_index(0);
    Expr x = load(Float(32), "in", t), shifted = load(Float(32), "in", t + 1);
    Expr first = load(Float(32), "in", 0);
    Expr fused = Call::make(Float(32), Intrinsic::fma, {x, shifted, first});
    Stmt body = Block::make({
        store("out", fused + x, t),
        store("wide", Cast::make(Float(64), x), t),
    });
    LoweredKernel k = make_kernel(
        "sectors", {threads, 1, 1},
        {buffer_arg("in", Float(32)), buffer_arg("out", Float(32)), buffer_arg("wide", Float(64))},
        body);
    KernelProfile p = backends::sim::launch(k, {1, 1, 1}, {buffer(in), buffer(out), buffer(wide)});
    for (int j = 0; j < threads; j++) {
        EXPECT_EQ(out[j], std::fma(in[j], in[j + 1], in[0]) + in[j]);
        EXPECT_EQ(wide[j], double(in[j]));
    }
    // The memory instructions in program order: x, in[t + 1], in[0] and x again in the
    // first store's value, the store, x in the second store's value, the store.
    std::vector<int64_t> sectors;
    for (const auto &i : p.memory_instructions)
        sectors.push_back(i.sectors);
    // x: 128 + 64 bytes from the start of a sector: 4 + 2 sectors. in[t + 1]: the same bytes
    // 4 further on: 5 + 3. in[0]: one sector per warp. float64 of 32 + 16 threads: 8 + 4.
    EXPECT_EQ(sectors, (std::vector<int64_t>{6, 8, 2, 6, 6, 6, 12})) << p.to_string();
    EXPECT_EQ(p.memory_instructions[1].label, "load in[...] #2");
    EXPECT_EQ(p.memory_instructions[6].label, "store wide[...]");
    EXPECT_EQ(p.find_buffer("in")->bytes_loaded, 5 * threads * 4);
    EXPECT_EQ(p.find_buffer("in")->load_sectors, 6 + 8 + 2 + 6 + 6);
    EXPECT_EQ(p.find_buffer("wide")->bytes_stored, 8 * threads);
    EXPECT_EQ(p.flops, 3 * threads); // fma 2, add 1
    EXPECT_EQ(p.instructions.floating, 2 * 2);
    EXPECT_EQ(p.instructions.other, 2); // the conversion to float64
    EXPECT_EQ(p.instructions.global_load, 5 * 2);
    EXPECT_EQ(p.instructions.global_store, 2 * 2);
}

TEST(SimProfile, RecordersNest) {
    const int threads = 64, blocks = 3;
    std::vector<int32_t> in(threads * blocks, 1), out(blocks, 0);
    Expr t = thread_index(0);
    Stmt body = Block::make({
        store(kSharedMemoryName, load(Int(32), "in", block_index(0) * threads + t), t),
        barrier(),
        IfThenElse::make(t == 0, store("out", load(Int(32), kSharedMemoryName, 0), block_index(0))),
    });
    LoweredKernel k =
        make_kernel("copy_first", {threads, 1, 1},
                    {buffer_arg("in", Int(32)), buffer_arg("out", Int(32))}, body, threads * 4);
    backends::sim::ProfileRecorder outer;
    {
        backends::sim::ProfileRecorder inner;
        backends::sim::launch(k, {blocks, 1, 1}, {buffer(in), buffer(out)});
        ASSERT_EQ(inner.launches().size(), 1u);
        EXPECT_EQ(inner.launches()[0].kernel, "copy_first");
        EXPECT_EQ(inner.launches()[0].barriers, blocks);
        EXPECT_EQ(inner.launches()[0].blocks(), blocks);
    }
    backends::sim::launch(k, {2, 1, 1}, {buffer(in), buffer(out)});
    ASSERT_EQ(outer.launches().size(), 2u);
    EXPECT_EQ(outer.launches()[1].grid[0], 2);
    // Thread 0's store of out: one request of one active thread per block.
    const backends::sim::MemoryInstructionProfile *one =
        outer.launches()[1].find_instruction("store out[...]");
    ASSERT_TRUE(one);
    EXPECT_EQ(one->requests, 2);
    EXPECT_EQ(one->bytes, 2 * 4);
    EXPECT_NE(outer.launches()[1].to_string().find("store out[...]"), std::string::npos);
}

// A layernorm of each row of a 256 x 1024 matrix, one block of 256 threads per row: strided
// partial sums into shared memory, one thread adding the partials serially, twice (mean and
// variance), then every thread normalizing its four elements.
TEST(SimLayerNorm, RowsOf256x1024) {
    const int rows = 256, cols = 1024, threads = 256, per_thread = cols / threads;
    std::vector<float> in = random_floats(size_t(rows) * cols, 5), out(in.size(), 0.0f);
    const Type f32 = Float(32);
    Expr t = thread_index(0), row = block_index(0);
    Expr element = row * cols + var("k") * threads + t;
    Expr acc = load(f32, "acc", 0);
    auto serial_sum_into = [&](int slot, Expr finish) {
        // thread 0 adds the partials; the result goes to shared[slot]
        return IfThenElse::make(
            t == 0,
            Block::make({store("acc", 0.0f, 0),
                         serial("p", 0, threads,
                                store("acc", acc + load(f32, kSharedMemoryName, var("p")), 0)),
                         store(kSharedMemoryName, finish, slot)}));
    };
    Expr mean = load(f32, kSharedMemoryName, threads);
    Expr inv_std = load(f32, kSharedMemoryName, threads + 1);
    Expr centered = load(f32, "in", element) - var("mean", f32);
    Stmt body = Allocate::make(
        "acc", f32, MemoryType::Register, {1},
        Block::make({
            store("acc", 0.0f, 0),
            serial("k", 0, per_thread, store("acc", acc + load(f32, "in", element), 0)),
            store(kSharedMemoryName, acc, t),
            barrier(),
            serial_sum_into(threads, acc / float(cols)),
            barrier(),
            LetStmt::make(
                "mean", mean,
                Block::make({
                    store("acc", 0.0f, 0),
                    serial("k", 0, per_thread, store("acc", acc + centered * centered, 0)),
                    store(kSharedMemoryName, acc, t),
                    barrier(),
                    serial_sum_into(threads + 1,
                                    Call::make(f32, Intrinsic::rsqrt, {acc / float(cols) + 1e-5f})),
                    barrier(),
                    serial("k", 0, per_thread, store("out", centered * inv_std, element)),
                })),
        }));
    LoweredKernel k =
        make_kernel("layernorm", {threads, 1, 1}, {buffer_arg("in", f32), buffer_arg("out", f32)},
                    body, (threads + 2) * 4);
    auto start = std::chrono::steady_clock::now();
    backends::sim::launch(k, {rows, 1, 1}, {buffer(in), buffer(out)});
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "[ sim      ] layernorm of " << rows << " x " << cols << " floats, " << rows
              << " blocks of " << threads << " threads: " << seconds * 1e3 << " ms" << std::endl;

    double worst = 0;
    for (int r = 0; r < rows; r++) {
        const float *x = &in[size_t(r) * cols];
        double sum = 0, sq = 0;
        for (int c = 0; c < cols; c++)
            sum += x[c];
        double mu = sum / cols;
        for (int c = 0; c < cols; c++)
            sq += (x[c] - mu) * (x[c] - mu);
        double inv = 1.0 / std::sqrt(sq / cols + 1e-5);
        for (int c = 0; c < cols; c++) {
            worst = std::max(worst, std::fabs((x[c] - mu) * inv - out[size_t(r) * cols + c]));
        }
    }
    EXPECT_LT(worst, 1e-4);
}
