// The cost of running a compiled host pipeline again: its large intermediates come from a pool
// the compiled pipeline keeps (no page faults once it has run), and a Callable runs it with its
// arguments directly. Results are checked against plain loops.

#include "Reference.h"
#include "dsl/HostMemory.h"

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

using namespace aicf;
using aicf_test::fill_random;

namespace {

using aicf_test::kSanitized;

long minor_faults() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

// Two stages at the root over a 2048 x 1024 float input: each intermediate is 8 MiB.
struct RootStages {
    Var x{"x"}, y{"y"};
    Func a{"pool_a"}, b{"pool_b"}, out{"pool_out"};
    explicit RootStages(const Buffer<float> &in) {
        a(x, y) = in(x, y) * 2.0f + 1.0f;
        b(x, y) = a(x, y) * a(x, y) - in(x, y);
        out(x, y) = b(x, y) + a(x, y) * 0.5f;
        a.compute_root();
        b.compute_root();
    }
};

void expect_root_stages(const Buffer<float> &in, const Buffer<float> &out) {
    for (int y = 0; y < out.height(); y += 7) {
        for (int x = 0; x < out.width(); x += 5) {
            double a = double(in(x, y)) * 2 + 1, b = a * a - in(x, y);
            ASSERT_NEAR(out(x, y), b + a * 0.5, 1e-5 * (1 + std::abs(b))) << x << ", " << y;
        }
    }
}

} // namespace

TEST(HostMemoryPool, ReusesBlocksAndKeepsNoMoreThanItsPeak) {
    HostMemoryPool pool;
    void *a = pool.allocate(8 << 20), *b = pool.allocate(3 << 20);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(pool.used_bytes(), size_t(12) << 20); // 3 MiB rounds to 4 (whole huge pages)
    EXPECT_TRUE(pool.release(a));
    EXPECT_TRUE(pool.release(b));
    EXPECT_FALSE(pool.release(&pool)); // not from the pool
    EXPECT_EQ(pool.free_bytes(), size_t(12) << 20);
    // The same requests get the same blocks back; a request less than half a block's size
    // does not take it.
    EXPECT_EQ(pool.allocate(8 << 20), a);
    EXPECT_EQ(pool.allocate(4 << 20), b);
    void *small = pool.allocate(1 << 20);
    EXPECT_NE(small, a);
    EXPECT_NE(small, b);
    pool.release(a);
    pool.release(b);
    pool.release(small);
    EXPECT_EQ(pool.free_bytes(), size_t(13) << 20); // 8 + 4 MiB blocks and the 1 MiB one
    // A much larger request: the peak grows to 64 MiB, and once 77 MiB are free the smallest
    // blocks (1, 4 and 8 MiB) go until no more than the peak is kept.
    void *big = pool.allocate(64 << 20);
    ASSERT_NE(big, nullptr);
    EXPECT_TRUE(pool.release(big));
    EXPECT_EQ(pool.free_bytes(), size_t(64) << 20);
    EXPECT_EQ(pool.used_bytes(), 0u);
}

TEST(HostMemoryPool, RealizingAgainTouchesNoNewPages) {
    const int W = 2048, H = 1024;
    Buffer<float> in({W, H}, "pool_in");
    fill_random(in, -1, 1, 7);
    Buffer<float> out({W, H}, "pool_result");
    RootStages p(in);
    p.out.realize(out); // compiles, and maps the intermediates' pages once
    expect_root_stages(in, out);
    // Run once before counting, so that the code of this loop has been run too: the first
    // run of a page of this binary's code is a fault of its own.
    auto realize_20 = [&] {
        for (int i = 0; i < 20; i++)
            p.out.realize(out);
    };
    realize_20();
    const long before = minor_faults();
    realize_20();
    const long faults = minor_faults() - before;
    expect_root_stages(in, out);
    // Two 8 MiB intermediates fresh from the system would fault at least once per 2 MiB
    // (huge pages) and usually per 4 KiB, on each of the 20 realizes: 160 faults at the
    // least. Under a sanitizer, whose allocator holds freed memory back and hands out fresh
    // memory for the small allocations of each run, a few faults remain.
    EXPECT_LE(faults, kSanitized ? 20 : 0) << "page faults over 20 realizes after the first";
}

TEST(HostMemoryPool, TwoThreadsRealizingOnePipelineEachGetTheirOwnBlocks) {
    const int W = 1024, H = 512; // intermediates of 2 MiB
    Buffer<float> in({W, H}, "pool_in2");
    fill_random(in, -1, 1, 8);
    RootStages p(in);
    p.out.realize({W, H});
    std::atomic<int> wrong{0};
    auto work = [&] {
        Buffer<float> out({W, H});
        for (int i = 0; i < 15; i++) {
            p.out.realize(out);
            for (int y = 0; y < H; y += 31) {
                for (int x = 0; x < W; x += 17) {
                    double a = double(in(x, y)) * 2 + 1, b = a * a - in(x, y);
                    if (std::abs(out(x, y) - (b + a * 0.5)) > 1e-5 * (1 + std::abs(b))) wrong++;
                }
            }
        }
    };
    std::thread t1(work), t2(work);
    t1.join();
    t2.join();
    EXPECT_EQ(wrong.load(), 0);
}

// A row's intermediate whose size is known only at run time lives on the heap, allocated and
// freed once per row of a parallel loop. Each thread reuses the block it freed for its next
// row: a run of 300 rows asks the C library for a block about once per thread, not per row.
// The rows are checked against a double-precision softmax.
TEST(HostRuntime, ARowsHeapIntermediateIsReusedByItsThread) {
    const int W = 700, H = 300;
    Buffer<float> in({W, H}, "rows_in");
    fill_random(in, -4, 4, 9);
    Var c("c"), r("r");
    RDom k(0, W, "k");
    Func mx("row_max"), e("row_exp"), den("row_sum"), sm("row_softmax");
    mx(r) = Expr(-INFINITY);
    mx(r) = max(mx(r), in(k, r));
    e(c, r) = exp(in(c, r) - mx(r));
    den(r) = 0.0f;
    den(r) += e(k, r);
    sm(c, r) = e(c, r) / den(r);
    sm.parallel(r).vectorize(c, 16);
    e.compute_at(sm, r).vectorize(c, 16);
    mx.compute_at(sm, r);
    den.compute_at(sm, r);
    EXPECT_NE(sm.lowered_stmt().find("allocate row_exp[float32 * "), std::string::npos);
    Buffer<float> out({W, H});
    sm.realize(out); // compiles
    const size_t before = host_allocation_count();
    sm.realize(out);
    const size_t blocks = host_allocation_count() - before;
    EXPECT_LE(blocks, 8u) << "blocks allocated for " << H << " rows";
    for (int y = 0; y < H; y++) {
        double m = -INFINITY, sum = 0;
        for (int x = 0; x < W; x++)
            m = std::max(m, double(in(x, y)));
        for (int x = 0; x < W; x++)
            sum += std::exp(double(in(x, y)) - m);
        for (int x = 0; x < W; x++) {
            double want = std::exp(double(in(x, y)) - m) / sum;
            ASSERT_NEAR(out(x, y), want, 4e-5 * want + 1e-9) << x << ", " << y;
        }
    }
}

// Storage is freed after the last stage that reads it, not when the pipeline ends: a chain of
// twelve stages at the root, each reading the one before and the one three back, holds at most
// five stages' storage at once, so the pool serves the later stages from the blocks of earlier
// ones. Checked against a double-precision loop.
TEST(HostRuntime, StorageIsFreedAfterItsLastReader) {
    const int N = 1 << 20, stages = 12;
    Buffer<float> in({N}, "chain_in");
    fill_random(in, -1, 1, 12);
    Var x("x");
    std::vector<Func> f;
    for (int i = 0; i < stages; i++) {
        Func s("chain" + std::to_string(i));
        if (i == 0) {
            s(x) = in(x)*0.5f;
        } else {
            Expr prev = f[i - 1](x) * 0.75f + in(x);
            s(x) = i >= 3 ? prev + f[i - 3](x) * 0.125f : prev;
        }
        if (i + 1 < stages) s.compute_root();
        f.push_back(s);
    }
    std::string stmt = f.back().lowered_stmt();
    // chain0 is read last by chain3.
    size_t produce3 = stmt.find("produce chain3"), free0 = stmt.find("free chain0");
    ASSERT_NE(free0, std::string::npos) << stmt;
    EXPECT_LT(produce3, free0);
    EXPECT_LT(free0, stmt.find("produce chain4"));
    Buffer<float> out({N});
    const size_t before = host_allocation_count();
    f.back().realize(out);
    const size_t blocks = host_allocation_count() - before;
    EXPECT_LE(blocks, 5u) << "blocks allocated for " << stages - 1 << " stages of 4 MiB";
    std::vector<std::vector<double>> want(stages, std::vector<double>(N));
    for (int i = 0; i < stages; i++) {
        for (int j = 0; j < N; j++) {
            double v = i == 0 ? in(j)*0.5 : want[i - 1][j] * 0.75 + in(j);
            if (i >= 3) v += want[i - 3][j] * 0.125;
            want[i][j] = v;
        }
    }
    for (int j = 0; j < N; j++)
        ASSERT_NEAR(out(j), want[stages - 1][j], 1e-5 * (1 + std::abs(want[stages - 1][j]))) << j;
}

TEST(Callable, RunsThePipelineWithItsArguments) {
    ImageParam in(Float(32), 2, "call_in");
    Param<float> gain("gain");
    Param<int> shift("shift");
    Var x("x"), y("y");
    Func out("call_out");
    out(x, y) = in(x + shift, y) * gain + cast<float>(y);
    out.vectorize(x, 8, TailStrategy::GuardWithIf);
    Callable c = Pipeline(out).compile_to_callable();
    ASSERT_EQ(c.arguments().size(), 4u);
    EXPECT_EQ(c.arguments()[0].name, "call_in");
    EXPECT_EQ(c.arguments()[3].name, "call_out");
    Buffer<float> input({40, 9}, "call_input");
    fill_random(input, -3, 3, 9);
    Buffer<float> result({33, 9});
    // Arguments in the order arguments() lists: call_in, gain, shift, call_out.
    std::vector<std::string> names;
    for (const Argument &a : c.arguments())
        names.push_back(a.name);
    ASSERT_EQ(names, (std::vector<std::string>{"call_in", "gain", "shift", "call_out"}));
    c(input, 1.5f, 3, result);
    for (int j = 0; j < 9; j++)
        for (int i = 0; i < 33; i++)
            ASSERT_FLOAT_EQ(result(i, j), input(i + 3, j) * 1.5f + float(j)) << i << ", " << j;
    // A schedule changed later does not change the Callable (nor break it).
    out.parallel(y);
    c(input, -1.0f, 0, result);
    EXPECT_FLOAT_EQ(result(5, 4), -input(5, 4) + 4.0f);
}

// 16-bit float scalars pass as they are (a bf16 model's scale, say).
TEST(Callable, TakesSixteenBitFloatScalars) {
    Param<float16_t> h("h");
    Param<bfloat16_t> b("b");
    Var x("x");
    Func out("half_out");
    out(x) = cast<float>(h) * cast<float>(x) + cast<float>(b);
    Callable c = Pipeline(out).compile_to_callable();
    ASSERT_EQ(c.arguments().size(), 3u);
    const bool b_first = c.arguments()[0].name == "b"; // in the order arguments() lists
    Buffer<float> result({5});
    if (b_first)
        c(bfloat16_t(-2.0f), float16_t(1.5f), result);
    else
        c(float16_t(1.5f), bfloat16_t(-2.0f), result);
    for (int i = 0; i < 5; i++)
        EXPECT_EQ(result(i), 1.5f * float(i) - 2.0f) << i;
    // The other 16-bit type is refused by name.
    std::string msg = "no exception";
    try {
        c(bfloat16_t(1.5f), bfloat16_t(-2.0f), result);
    } catch (const CompileError &e) {
        msg = e.what();
    } catch (const RuntimeError &e) {
        msg = e.what();
    }
    EXPECT_NE(msg.find("(h) of the Callable of pipeline half_out is a float16 scalar, but a "
                       "bfloat16 was passed"),
              std::string::npos)
        << msg;
}

TEST(Callable, NamesTheWrongArgument) {
    ImageParam in(Float(32), 1, "call_in1");
    Param<float> gain("gain1");
    Var x("x");
    Func out("call_out1");
    out(x) = in(x)*gain;
    Callable c = Pipeline(out).compile_to_callable();
    Buffer<float> input({8}), result({8});
    fill_random(input, 1, 2, 10);
    auto message = [&](const std::function<void()> &call) {
        try {
            call();
        } catch (const CompileError &e) {
            return std::string(e.what());
        }
        return std::string("no CompileError");
    };
    EXPECT_NE(message([&] { c(input, 2.0f); })
                  .find("takes 3 arguments (call_in1, gain1, "
                        "call_out1), but was called with 2"),
              std::string::npos);
    EXPECT_NE(message([&] { c(input, 2.0, result); })
                  .find("Argument 1 (gain1) of the Callable of pipeline call_out1 is a float32 "
                        "scalar, but a float64 was passed"),
              std::string::npos);
    EXPECT_NE(message([&] { c(input, input, result); }).find("is a float32 scalar, but a buffer"),
              std::string::npos);
    EXPECT_NE(message([&] { c(input, 2, result); }).find("is a float32 scalar, but an int32 was"),
              std::string::npos);
    EXPECT_NE(message([&] { c(2.0f, 2.0f, result); })
                  .find("Argument 0 (call_in1) of the Callable of pipeline call_out1 is an input "
                        "buffer of float32, but a scalar was passed"),
              std::string::npos);
    // A buffer of the wrong type is the compiled code's own run-time check.
    Buffer<int> wrong({8});
    try {
        c(wrong, 2.0f, result);
        FAIL() << "an int buffer was taken for a float one";
    } catch (const RuntimeError &e) {
        EXPECT_NE(std::string(e.what()).find("call_in1"), std::string::npos) << e.what();
    }
    c(input, 2.0f, result);
    EXPECT_FLOAT_EQ(result(3), input(3) * 2.0f);
}
