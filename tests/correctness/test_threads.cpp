// Realizing from several threads at once. Eight threads, each for several rounds:
//   - realize one Func that every thread shares, and one Pipeline object (the same pipeline:
//     one compilation, found in the cache by the others, its compiled code run concurrently);
//   - build and realize a pipeline of its own (different pipelines compiled at the same time:
//     the compilation cache and the JIT under concurrent use);
//   - realize a GPU pipeline on the simulator with its own buffers (the same compiled kernels
//     launched from several threads);
// and every result checked against a plain loop. The test also runs in the ThreadSanitizer
// build (scripts/sanitize.sh).
//
// What is shared must not be written: every thread reads the same input Buffer on the host.
// A Buffer that goes to a device carries its device copy with it, so each thread gives the
// GPU pipeline buffers of its own (the README says what is thread-safe).

#include "Reference.h"
#include "ScopedEnv.h"
#include "dsl/aicf.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

using namespace aicf;
using aicf_test::fill_random;

namespace {

constexpr int W = 67, H = 23, kThreads = 8, kRounds = 3;

// Counts the points of `out` that differ from want(x, y) by more than 1e-5 relative.
template <typename F> int mismatches(const Buffer<float> &out, F want) {
    int bad = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            const double w = want(x, y);
            bad += std::fabs(out(x, y) - w) > 1e-5 * (1 + std::fabs(w));
        }
    return bad;
}

TEST(Threads, EightThreadsRealizeSharedAndOwnPipelines) {
    aicf_test::ScopedEnv sim("AICF_DEVICE", "sim");
    Buffer<float> in({W + 2, H}, "threads_in");
    fill_random(in, -1, 1, 21);
    auto at = [&](int x, int y) { return double(in(x, y)); };

    // The shared pipeline: a 3-point average, vectorized, in two stages.
    Var x("x"), y("y"), xi("xi");
    Func shared_sum("shared_sum"), shared("shared");
    shared_sum(x, y) = in(x, y) + in(x + 1, y) + in(x + 2, y);
    shared(x, y) = shared_sum(x, y) / 3.0f;
    shared.vectorize(x, 8);
    shared_sum.compute_at(shared, y).vectorize(x, 8);

    Pipeline shared_pipeline(shared); // one object, realized by every thread too

    std::atomic<int> failures{0};
    std::vector<std::string> errors(kThreads);
    std::vector<std::thread> pool;
    for (int t = 0; t < kThreads; t++) {
        pool.emplace_back([&, t] {
            try {
                for (int round = 0; round < kRounds; round++) {
                    auto average = [&](int i, int j) {
                        return (at(i, j) + at(i + 1, j) + at(i + 2, j)) / 3.0;
                    };
                    Buffer<float> a = shared.realize({W, H});
                    failures += mismatches(a, average);
                    Buffer<float> a2 = shared_pipeline.realize({W, H})[0];
                    failures += mismatches(a2, average);

                    // A pipeline of this thread's own (its constant makes it another
                    // compilation), with a reduction along the row.
                    const float scale = float(t + 1) + 0.5f * float(round);
                    Var u("u"), v("v");
                    RDom r(0, 3, "r");
                    Func own("own_" + std::to_string(t)), rowsum("rowsum_" + std::to_string(t));
                    rowsum(u, v) = 0.0f;
                    rowsum(u, v) += in(u + r, v);
                    own(u, v) = rowsum(u, v) * scale;
                    rowsum.compute_root();
                    Buffer<float> b = own.realize({W, H});
                    failures += mismatches(b, [&](int i, int j) {
                        return (at(i, j) + at(i + 1, j) + at(i + 2, j)) * double(scale);
                    });

                    // A GPU pipeline on the simulator, its input a copy of this thread's own.
                    Buffer<float> mine({W + 2, H}, "threads_gpu_in");
                    for (int j = 0; j < H; j++)
                        for (int i = 0; i < W + 2; i++)
                            mine(i, j) = in(i, j);
                    Var bx("bx"), by("by"), tx("tx"), ty("ty");
                    Func g("threads_gpu");
                    g(u, v) = mine(u, v) * 2.0f + mine(u + 2, v);
                    g.gpu_tile(u, v, bx, by, tx, ty, 16, 8);
                    Buffer<float> c = g.realize({W, H}, Target("host-cuda-sm_80"));
                    c.copy_to_host();
                    failures +=
                        mismatches(c, [&](int i, int j) { return 2.0 * at(i, j) + at(i + 2, j); });
                }
            } catch (const std::exception &e) {
                errors[size_t(t)] = e.what();
                failures++;
            }
        });
    }
    for (std::thread &th : pool)
        th.join();
    for (int t = 0; t < kThreads; t++)
        EXPECT_EQ(errors[size_t(t)], "") << "thread " << t;
    EXPECT_EQ(failures.load(), 0);
}

} // namespace
