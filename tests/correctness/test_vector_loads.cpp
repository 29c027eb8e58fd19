// Vector loads whose lanes are not one dense ramp: strided (a downsample), halved (an
// upsample), reversed, divided by 3. On the host, lanes at constant distances from the first
// lane of their class are read with dense loads of the span they cover and a shuffle; the
// rest are gathered. Either way the values are those of a plain loop.

#include "Reference.h"
#include "ScopedEnv.h"

#include <cstdint>
#include <functional>
#include <string>

#include <sys/mman.h>
#include <unistd.h>

using namespace aicf;
using aicf_test::fill_random;

namespace {

int floor_div(int a, int b) {
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// The optimized LLVM module of f realized over `width` points (AICF_DEBUG=3 prints it).
template <typename T> std::string optimized_module(Func f, int width, Buffer<T> &out) {
    aicf_test::ScopedEnv debug("AICF_DEBUG", "3");
    ::testing::internal::CaptureStderr();
    out = Buffer<T>(width);
    f.realize(out);
    return ::testing::internal::GetCapturedStderr();
}

// Each pattern of index, for one element type and vector width, over outputs of several
// widths and positions (vectors split with a guarded tail, so the steady state reads whole
// vectors and the tail masked ones), against a loop over the same input.
template <typename T> void check_patterns(int lanes, unsigned seed) {
    const int N = 700;
    Buffer<T> in(N);
    fill_random(in, T(0), T(100), seed);
    in.set_min({-100});
    auto at = [&](int i) { return in(i); };
    struct Pattern {
        std::string name;
        std::function<Expr(Var)> value;
        std::function<T(int)> want;
    };
    const std::vector<Pattern> patterns = {
        {"stride 2", [&](Var x) { return in(2 * x) + in(2 * x + 1); },
         [&](int i) { return T(at(2 * i) + at(2 * i + 1)); }},
        {"stride 3", [&](Var x) { return in(3 * x + 2) - in(3 * x); },
         [&](int i) { return T(at(3 * i + 2) - at(3 * i)); }},
        {"stride 4", [&](Var x) { return in(4 * x - 1) * T(3); },
         [&](int i) { return T(at(4 * i - 1) * T(3)); }},
        {"halved", [&](Var x) { return in(x / 2) + in((x + 1) / 2) * T(2); },
         [&](int i) { return T(at(floor_div(i, 2)) + at(floor_div(i + 1, 2)) * T(2)); }},
        {"quartered", [&](Var x) { return in(x / 4 + 3); },
         [&](int i) { return at(floor_div(i, 4) + 3); }},
        {"divided by 3", [&](Var x) { return in(x / 3); },
         [&](int i) { return at(floor_div(i, 3)); }},
        {"reversed", [&](Var x) { return in(100 - x); }, [&](int i) { return at(100 - i); }},
        {"stride -2", [&](Var x) { return in(300 - 2 * x); },
         [&](int i) { return at(300 - 2 * i); }},
    };
    for (const Pattern &p : patterns) {
        Var x("x"), xo("xo"), xi("xi");
        Func f("f");
        f(x) = p.value(x);
        f.split(x, xo, xi, lanes, TailStrategy::GuardWithIf).vectorize(xi);
        for (auto [x0, W] : {std::pair{0, 3 * lanes}, {-17, 61}, {5, lanes + 3}, {-10, 1}}) {
            Buffer<T> out(W);
            out.set_min({x0});
            f.realize(out);
            for (int i = x0; i < x0 + W; i++)
                ASSERT_EQ(out(i), p.want(i)) << p.name << ", " << lanes << " lanes, at " << i;
        }
    }
}

} // namespace

TEST(VectorLoads, StridedHalvedAndReversedIndicesAgreeWithAPlainLoop) {
    check_patterns<float>(8, 1);
    check_patterns<float>(16, 2);
    check_patterns<int16_t>(16, 3);
    check_patterns<uint8_t>(32, 4);
    check_patterns<int32_t>(4, 5);
}

// The loads of a downsample by 2 and of an upsample by 2 (whose even and odd lanes are two
// dense ramps, from either parity of the output's start) are dense loads and shuffles: the
// optimized module gathers nothing.
TEST(VectorLoads, ADownsampleAndAnUpsampleGatherNothing) {
    Buffer<float> in(300);
    fill_random(in, -1.0f, 1.0f, 7);
    Var x("x");
    Func down("down"), up("up");
    down(x) = (in(2 * x) + in(2 * x + 1)) * 0.5f;
    down.vectorize(x, 16);
    up(x) = in(x / 2) * 0.75f + in((x + 1) / 2) * 0.25f;
    up.vectorize(x, 16);
    Buffer<float> out;
    std::string module = optimized_module(down, 100, out);
    EXPECT_EQ(module.find("gather"), std::string::npos) << module;
    EXPECT_NE(module.find("shufflevector <16 x float>"), std::string::npos) << module;
    for (int i = 0; i < 100; i++)
        ASSERT_EQ(out(i), (in(2 * i) + in(2 * i + 1)) * 0.5f) << i;
    module = optimized_module(up, 100, out);
    EXPECT_EQ(module.find("gather"), std::string::npos) << module;
    for (int i = 0; i < 100; i++)
        ASSERT_EQ(out(i), in(i / 2) * 0.75f + in((i + 1) / 2) * 0.25f) << i;
    // From an odd start the classes swap: the lanes at even positions read (x0 + 1) / 2 on.
    Buffer<float> odd(97);
    odd.set_min({3});
    up.realize(odd);
    for (int i = 3; i < 100; i++)
        ASSERT_EQ(odd(i), in(i / 2) * 0.75f + in((i + 1) / 2) * 0.25f) << i;
}

namespace {

// Input memory whose first element starts a page and whose last ends one, between pages that
// may not be read: a load past either end of the input faults.
class GuardedInput {
public:
    explicit GuardedInput(int elements) : page(size_t(sysconf(_SC_PAGESIZE))) {
        const size_t bytes = size_t(elements) * sizeof(float);
        data_pages = (bytes + page - 1) / page;
        region = mmap(nullptr, (data_pages + 2) * page, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        EXPECT_NE(region, MAP_FAILED);
        char *base = static_cast<char *>(region);
        mprotect(base, page, PROT_NONE);
        mprotect(base + (data_pages + 1) * page, page, PROT_NONE);
        first = reinterpret_cast<float *>(base + (data_pages + 1) * page - bytes);
    }
    ~GuardedInput() { munmap(region, (data_pages + 2) * page); }
    float *first;

private:
    size_t page, data_pages = 0;
    void *region;
};

} // namespace

// Strided accesses of one input whose lanes interleave (a downsample's in(2x) and in(2x + 1),
// a 3-tap filter's in(2x - 1) .. in(2x + 1)) share their dense loads: the second access adds
// none. The shared loads read nothing outside the span the accesses read (the input ends at
// a page that faults), and every output is that of a plain loop.
TEST(VectorLoads, InterleavedStridedAccessesShareTheirLoads) {
    struct Pattern {
        std::string name;
        int stride, first, last; // the taps, each in(stride * x + tap)
    };
    int count = 0;
    for (const Pattern &p :
         {Pattern{"2 taps, stride 2", 2, 0, 1}, Pattern{"3 taps, stride 2", 2, -1, 1},
          Pattern{"3 taps, stride 3", 3, 0, 2}, Pattern{"4 taps, stride 2", 2, 0, 3}}) {
        for (int W : {512, 509, 61, 16}) {
            // Reads stride * x + tap for x in [0, W): from `first` to stride * (W - 1) + last.
            const int N = p.stride * (W - 1) + p.last - p.first + 1;
            GuardedInput memory(N);
            Buffer<float> in(memory.first, {N}, "in");
            in.set_min({p.first});
            fill_random(in, -1.0f, 1.0f, unsigned(W));
            Var x("x");
            // A name of its own: a pipeline compiled before is not compiled (nor printed) again.
            Func f("f"), one("one" + std::to_string(count++));
            Expr sum = 0.0f;
            for (int tap = p.first; tap <= p.last; tap++)
                sum = sum + in(p.stride * x + tap) * float(tap + 3);
            f(x) = sum;
            f.vectorize(x, 16);
            one(x) = in(p.stride * x + p.first) * 2.0f;
            one.vectorize(x, 16);
            Buffer<float> out, single;
            const std::string module = optimized_module(f, W, out);
            for (int i = 0; i < W; i++) {
                double want = 0;
                for (int tap = p.first; tap <= p.last; tap++)
                    want += double(in(p.stride * i + tap)) * (tap + 3);
                ASSERT_NEAR(out(i), want, 1e-5) << p.name << ", width " << W << ", at " << i;
            }
            if (W != 512) continue;
            auto vector_loads = [](const std::string &text) {
                size_t count = 0;
                for (size_t at = text.find("load <16 x float>"); at != std::string::npos;
                     at = text.find("load <16 x float>", at + 1))
                    count++;
                return count;
            };
            const size_t alone = vector_loads(optimized_module(one, W, single));
            // Each tap beyond the first covers at most `stride` more elements: no more than one
            // more vector per run of 16 / stride taps.
            EXPECT_GT(alone, 0u);
            EXPECT_LE(vector_loads(module), alone + alone / 2) << p.name << "\n" << module;
        }
    }
    // Another input read at the same index as one of the pair reads only its own span.
    for (int W : {512, 61}) {
        GuardedInput a_memory(2 * W), b_memory(2 * W - 1);
        Buffer<float> a(a_memory.first, {2 * W}, "a"), b(b_memory.first, {2 * W - 1}, "b");
        fill_random(a, -1.0f, 1.0f, 5);
        fill_random(b, -1.0f, 1.0f, 6);
        Var x("x");
        Func f("f");
        f(x) = a(2 * x) + a(2 * x + 1) * 2.0f + b(2 * x) * 3.0f;
        f.vectorize(x, 16);
        Buffer<float> out = f.realize({W});
        for (int i = 0; i < W; i++)
            ASSERT_NEAR(out(i), a(2 * i) + a(2 * i + 1) * 2.0 + b(2 * i) * 3.0, 1e-5) << i;
    }
}
