// Atomic updates on the GPU: histograms (a point computed from the data) and reductions
// across blocks, through atom.global and atom.shared, checked against plain loops.

#include "GPUTarget.h"
#include "Reference.h"
#include "ScopedEnv.h"
#include "backends/sim/Profile.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

using namespace aicf;
using aicf_test::close;
using aicf_test::fill_random;

namespace {

const Target gpu_target = aicf_test::gpu_test_target();

const int N = 10007;

Buffer<int> histogram_input() {
    Buffer<int> in({N}, "in");
    for (int i = 0; i < N; i++)
        in(i) = (i * 7919) % 300 - 20; // some below the first bin, some past the last
    return in;
}

std::vector<int> histogram_reference(const Buffer<int> &in) {
    std::vector<int> want(64, 0);
    for (int i = 0; i < N; i++)
        want[size_t(std::min(std::max(in(i) / 4, 0), 63))]++;
    return want;
}

// Every element's bin incremented by one atomic add in device memory, 256 elements a block.
TEST(GPUAtomics, HistogramInDeviceMemory) {
    Buffer<int> in = histogram_input();
    Func hist("hist");
    Var b("b");
    RDom r(0, N, "r");
    RVar rb("rb"), rt("rt");
    hist(b) = 0;
    hist(clamp(in(r) / 4, 0, 63)) += 1;
    hist.update().atomic().split(r.x, rb, rt, 256).gpu_blocks(rb).gpu_threads(rt);
    Buffer<int> h = hist.realize({64}, gpu_target)[0];
    std::vector<int> want = histogram_reference(in);
    for (int i = 0; i < 64; i++)
        EXPECT_EQ(h(i), want[size_t(i)]) << i;
    std::string ptx = hist.ptx(Target("host-cuda-sm_80"));
    EXPECT_NE(ptx.find("atom.global.add.u32"), std::string::npos) << ptx;
}

// The histogram as Halide's rfactor tutorial splits it: a partial histogram per chunk of the
// input (rfactor of an update that writes a point computed from the data), each in a block's
// shared memory (atom.shared), then added into the output (atom.global).
TEST(GPUAtomics, PartialHistogramsInSharedMemory) {
    Buffer<int> in = histogram_input();
    Func hist("hist");
    Var b("b"), u("u");
    RDom r(0, N, "r");
    RVar ro("ro"), ri("ri"), rs("rs"), rt("rt");
    hist(b) = 0;
    hist(clamp(in(r) / 4, 0, 63)) += 1;
    hist.bound(b, 0, 64);
    Func partial = hist.update().split(r.x, ro, ri, 1024).rfactor(ro, u);
    hist.update().atomic().reorder(b, u).gpu_blocks(u).gpu_threads(b);
    partial.compute_at(hist, u).gpu_threads(b);
    partial.update().atomic().split(ri, rs, rt, 256).gpu_threads(rt);
    Buffer<int> h = hist.realize({64}, gpu_target)[0];
    std::vector<int> want = histogram_reference(in);
    for (int i = 0; i < 64; i++)
        EXPECT_EQ(h(i), want[size_t(i)]) << i;
    std::string ptx = hist.ptx(Target("host-cuda-sm_80"));
    EXPECT_NE(ptx.find("atom.shared.add.u32"), std::string::npos) << ptx;
    EXPECT_NE(ptx.find("atom.global.add.u32"), std::string::npos) << ptx;
}

// A block's histogram in shared memory, its threads adding 128 elements a step with atomics:
// atomic adds need no barrier between the steps, only around the whole (they waited for one
// at every step: 158 barriers for 157 steps).
TEST(GPUAtomics, SharedHistogramStepsNeedNoBarriers) {
    const int M = 20001, B = 29;
    Buffer<int> d({M}, "d");
    for (int i = 0; i < M; i++)
        d(i) = (i * 37) % 200 - 60;
    Var x("x"), xo("xo"), xi("xi");
    RVar ko("ko"), ki("ki");
    RDom r(0, M, "r");
    Func h("h"), out("out");
    h(x) = 0;
    h(clamp(d(r) / 3, 0, B - 1)) += 1;
    out(x) = h(x);
    out.bound(x, 0, 32).split(x, xo, xi, 32).gpu_blocks(xo).gpu_threads(xi);
    h.compute_at(out, xo).store_in(MemoryType::GPUShared).bound(x, 0, 32).gpu_threads(x);
    h.update().atomic().split(r, ko, ki, 128).gpu_threads(ki);
    aicf_test::ScopedEnv sim("AICF_DEVICE", "sim");
    backends::sim::ProfileRecorder recorder;
    Buffer<int> o = out.realize({32}, gpu_target);
    std::vector<int> want(32, 0);
    for (int i = 0; i < M; i++)
        want[size_t(std::min(std::max(d(i) / 3, 0), B - 1))]++;
    for (int i = 0; i < 32; i++)
        EXPECT_EQ(o(i), want[size_t(i)]) << i;
    ASSERT_EQ(recorder.launches().size(), 1u);
    EXPECT_LE(recorder.launches()[0].barriers, 3) << recorder.launches()[0].to_string();
}

// A reduction over all the blocks: each thread adds its elements with atomics, in float,
// double and int64 (exact), and min, max and product by compare-and-swap where no atomic
// instruction exists (float min and max, products).
TEST(GPUAtomics, ReductionsAcrossBlocks) {
    Buffer<float> f({N}, "f");
    fill_random(f, -1, 1, 9);
    RDom r(0, N, "r");
    RVar rb("rb"), rt("rt");
    auto across_blocks = [&](Func g) {
        g.update().atomic().split(r.x, rb, rt, 128).gpu_blocks(rb).gpu_threads(rt);
        return g;
    };
    Func sum("sum"), dsum("dsum"), isum("isum"), hi("hi"), lo("lo"), prod("prod");
    sum() = 0.0f;
    sum() += f(r);
    dsum() = 0.0;
    dsum() += cast<double>(f(r));
    isum() = cast<int64_t>(0);
    isum() += cast<int64_t>(f(r) * 1e6f) << 20;
    hi() = -2.0f;
    hi() = max(hi(), f(r));
    lo() = 2.0f;
    lo() = min(lo(), f(r));
    prod() = cast<uint32_t>(1);
    prod() = prod() * cast<uint32_t>(cast<int>(f(r) * 100.0f) * 2 + 1);
    double s = 0, hs = -2, ls = 2;
    int64_t is = 0;
    uint32_t ps = 1;
    for (int i = 0; i < N; i++) {
        s += f(i);
        is += int64_t(int32_t(f(i) * 1e6f)) * (int64_t(1) << 20);
        hs = std::max(hs, double(f(i)));
        ls = std::min(ls, double(f(i)));
        ps *= uint32_t(int(f(i) * 100.0f) * 2 + 1);
    }
    const std::vector<int> scalar;
    Buffer<float> a = across_blocks(sum).realize(scalar, gpu_target)[0];
    Buffer<double> b = across_blocks(dsum).realize(scalar, gpu_target)[0];
    Buffer<int64_t> c = across_blocks(isum).realize(scalar, gpu_target)[0];
    Buffer<float> d = across_blocks(hi).realize(scalar, gpu_target)[0];
    Buffer<float> e = across_blocks(lo).realize(scalar, gpu_target)[0];
    Buffer<uint32_t> p = across_blocks(prod).realize(scalar, gpu_target)[0];
    EXPECT_TRUE(close(a(), s, 1e-4, 1e-3)) << a() << " vs " << s;
    EXPECT_TRUE(close(b(), s, 1e-9, 1e-9)) << b() << " vs " << s;
    EXPECT_EQ(c(), is);
    EXPECT_EQ(d(), float(hs));
    EXPECT_EQ(e(), float(ls));
    EXPECT_EQ(p(), ps);
    const Target sm80("host-cuda-sm_80");
    EXPECT_NE(sum.ptx(sm80).find("atom.global.add.f32"), std::string::npos);
    EXPECT_NE(hi.ptx(sm80).find("atom.global.cas.b32"), std::string::npos);
    EXPECT_NE(dsum.ptx(sm80).find("atom.global.add.f64"), std::string::npos);
}

// Bitwise updates across blocks, one atomic and, or or xor each (widened for 8- and 16-bit
// values, which have no atomic instruction of their own).
TEST(GPUAtomics, BitwiseAcrossBlocks) {
    Buffer<uint32_t> w({N}, "w");
    Buffer<int8_t> b({N}, "b");
    std::mt19937 rng(10);
    for (int i = 0; i < N; i++) {
        w(i) = uint32_t(rng());
        b(i) = int8_t(rng());
    }
    RDom r(0, N, "r");
    RVar rb("rb"), rt("rt");
    auto across_blocks = [&](Func g) {
        g.update().atomic().split(r.x, rb, rt, 128).gpu_blocks(rb).gpu_threads(rt);
        return g;
    };
    Func x_or("x_or"), seen("seen"), always("always"), bx("bx");
    x_or() = 0x5u;
    x_or() = x_or() ^ w(r);
    seen() = 0u;
    seen() = seen() | (w(r) & 0xF0000001u);
    always() = 0xFFFFFFFFu;
    always() = always() & (w(r) | 0x7FFFFFFEu);
    bx() = cast<int8_t>(0);
    bx() = bx() ^ b(r);
    uint32_t wx = 0x5u, ws = 0, wa = ~0u;
    int8_t wb = 0;
    for (int i = 0; i < N; i++) {
        wx ^= w(i);
        ws |= w(i) & 0xF0000001u;
        wa &= w(i) | 0x7FFFFFFEu;
        wb = int8_t(wb ^ b(i));
    }
    const std::vector<int> scalar;
    Buffer<uint32_t> a = across_blocks(x_or).realize(scalar, gpu_target)[0];
    Buffer<uint32_t> s = across_blocks(seen).realize(scalar, gpu_target)[0];
    Buffer<uint32_t> c = across_blocks(always).realize(scalar, gpu_target)[0];
    Buffer<int8_t> d = across_blocks(bx).realize(scalar, gpu_target)[0];
    EXPECT_EQ(a(), wx);
    EXPECT_EQ(s(), ws);
    EXPECT_EQ(c(), wa);
    EXPECT_EQ(d(), wb);
    const Target sm80("host-cuda-sm_80");
    EXPECT_NE(x_or.ptx(sm80).find("atom.global.xor.b32"), std::string::npos);
    EXPECT_NE(seen.ptx(sm80).find("atom.global.or.b32"), std::string::npos);
    EXPECT_NE(always.ptx(sm80).find("atom.global.and.b32"), std::string::npos);
}

// 8- and 16-bit values across blocks: integer sums wrap as the type does (so the result does
// not depend on the order), min and max; float16_t and bfloat16_t sums of small integers,
// which are exact in any order. In device memory and in a block's shared memory.
TEST(GPUAtomics, NarrowTypes) {
    const int M = 80; // bfloat16 holds every integer up to 256 exactly
    Buffer<int> in({N}, "in");
    for (int i = 0; i < N; i++)
        in(i) = (i * 7919) % 201 - 100;
    RDom r(0, N, "r"), s(0, M, "s");
    RVar rb("rb"), rt("rt");
    Func i16("i16"), u8("u8"), i8("i8"), h16("h16"), b16("b16");
    i16() = cast<int16_t>(7);
    i16() += cast<int16_t>(in(r)*37);
    u8() = cast<uint8_t>(3);
    u8() = max(u8(), cast<uint8_t>(in(r) + 100));
    i8() = cast<int8_t>(5);
    i8() = min(i8(), cast<int8_t>(in(r)));
    h16() = cast<float16_t>(0.5f);
    h16() += cast<float16_t>(in(s) % 3 + 1);
    b16() = cast<bfloat16_t>(1.0f);
    b16() += cast<bfloat16_t>(in(s) % 3 + 2);
    for (Func *f : {&i16, &u8, &i8})
        f->update().atomic().split(r.x, rb, rt, 128).gpu_blocks(rb).gpu_threads(rt);
    for (Func *f : {&h16, &b16})
        f->update().atomic().split(s.x, rb, rt, 32).gpu_blocks(rb).gpu_threads(rt);
    int16_t want_i16 = 7;
    uint8_t want_u8 = 3;
    int8_t want_i8 = 5;
    float want_h16 = 0.5f, want_b16 = 1.0f;
    for (int i = 0; i < N; i++) {
        want_i16 = int16_t(want_i16 + int16_t(in(i)*37));
        want_u8 = std::max(want_u8, uint8_t(in(i) + 100));
        want_i8 = std::min(want_i8, int8_t(in(i)));
    }
    for (int i = 0; i < M; i++) {
        const int m = (in(i) % 3 + 3) % 3; // AICF's % rounds down, C++'s toward zero
        want_h16 += float(m + 1);
        want_b16 += float(m + 2);
    }
    const std::vector<int> scalar;
    EXPECT_EQ(Buffer<int16_t>(i16.realize(scalar, gpu_target)[0])(), want_i16);
    EXPECT_EQ(Buffer<uint8_t>(u8.realize(scalar, gpu_target)[0])(), want_u8);
    EXPECT_EQ(Buffer<int8_t>(i8.realize(scalar, gpu_target)[0])(), want_i8);
    EXPECT_EQ(float(Buffer<float16_t>(h16.realize(scalar, gpu_target)[0])()), want_h16);
    EXPECT_EQ(float(Buffer<bfloat16_t>(b16.realize(scalar, gpu_target)[0])()), want_b16);
    // The same 16-bit sum in each block's shared memory, then added into the output.
    Func part("part"), total("total");
    Var u("u");
    total() = cast<int16_t>(0);
    total() += cast<int16_t>(in(r)*37);
    RVar ro("ro"), ri("ri"), rs("rs"), rq("rq");
    part = total.update().split(r.x, ro, ri, 1024).rfactor(ro, u);
    total.update().atomic().gpu_blocks(u);
    part.compute_at(total, u);
    part.update().atomic().split(ri, rs, rq, 256).gpu_threads(rq);
    EXPECT_EQ(Buffer<int16_t>(total.realize(scalar, gpu_target)[0])(), int16_t(want_i16 - 7));
    const Target sm80("host-cuda-sm_80");
    EXPECT_NE(b16.ptx(sm80).find("atom.global.cas.b32"), std::string::npos) << b16.ptx(sm80);
}

// A sum over a whole 2-D image cut into runs of 1000 points whatever its shape: the domain
// fused into one loop, split, one block per run (rfactor of the fuse's outer part), the
// block's threads adding into its partial atomically and the partials into the total.
TEST(GPUAtomics, PartialsOverRunsOfAFused2DDomain) {
    const int W = 97, H = 45;
    Buffer<int> in({W, H}, "in");
    fill_random(in, -1000, 1000, 97);
    int64_t want = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            want += int64_t(in(x, y)) * (x % 5 + 1);
    RDom r(0, W, 0, H, "r");
    RVar f("f"), ro("ro"), ri("ri"), rs("rs"), rq("rq");
    Var u("u");
    Func total("total");
    total() = 0;
    total() += in(r.x, r.y) * (r.x % 5 + 1);
    Func part = total.update().fuse(r.x, r.y, f).split(f, ro, ri, 1000).rfactor(ro, u);
    total.update().atomic().gpu_blocks(u);
    part.compute_at(total, u);
    part.update().atomic().split(ri, rs, rq, 128).gpu_threads(rq);
    EXPECT_EQ(Buffer<int>(total.realize(std::vector<int>{}, gpu_target)[0])(), want);
}

} // namespace
