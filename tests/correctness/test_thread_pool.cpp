// The thread pool parallel loops run on (backends/runtime/ThreadPool.h), called directly with
// C++ bodies: every iteration exactly once, the threads really working at once, errors,
// nested loops, several callers at once, a forked child; then pipelines whose parallel loops
// allocate per row, against plain loops. ThreadSanitizer runs these (scripts/sanitize.sh).

#include "backends/runtime/ThreadPool.h"
#include "dsl/aicf.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <sched.h>
#include <set>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using aicf::runtime::parallel_for;
using aicf::runtime::parallel_threads;

// A body as a C++ callable: parallel_for passes it back as the closure.
template <typename F> int32_t run(int32_t min, int32_t extent, F &f) {
    return parallel_for([](void *, int32_t i, void *c) { return (*static_cast<F *>(c))(i); },
                        nullptr, min, extent, &f);
}

TEST(ThreadPool, RunsEveryIterationOnce) {
    for (int32_t extent : {1, 2, 3, 17, 1000, 100003}) {
        const int32_t min = -7;
        std::vector<std::atomic<int>> seen(static_cast<size_t>(extent));
        auto body = [&](int32_t i) {
            seen[size_t(i - min)].fetch_add(1);
            return 0;
        };
        ASSERT_EQ(run(min, extent, body), 0);
        for (int32_t i = 0; i < extent; i++)
            ASSERT_EQ(seen[size_t(i)].load(), 1) << "iteration " << i + min << " of " << extent;
    }
}

TEST(ThreadPool, NothingToDoForNoIterations) {
    int calls = 0;
    auto body = [&](int32_t) { return ++calls, 0; };
    EXPECT_EQ(run(0, 0, body), 0);
    EXPECT_EQ(run(5, -3, body), 0);
    EXPECT_EQ(calls, 0);
}

// The threads run at once: each iteration waits until two threads have entered the loop, which
// only a second thread can bring about (a pool that ran the loop on one thread would time out).
// With one thread (AICF_NUM_THREADS=1), every iteration runs on the caller's.
TEST(ThreadPool, ThreadsWorkAtOnce) {
    if (parallel_threads() < 2) {
        // One thread: the caller runs every iteration itself.
        std::atomic<int> elsewhere{0};
        const std::thread::id caller = std::this_thread::get_id();
        auto body = [&](int32_t) {
            if (std::this_thread::get_id() != caller) elsewhere++;
            return 0;
        };
        EXPECT_EQ(run(0, 1000, body), 0);
        EXPECT_EQ(elsewhere.load(), 0);
        return;
    }
    std::mutex lock;
    std::set<std::thread::id> entered;
    std::atomic<bool> timed_out{false};
    auto body = [&](int32_t) {
        {
            std::lock_guard<std::mutex> guard(lock);
            entered.insert(std::this_thread::get_id());
        }
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        for (;;) {
            {
                std::lock_guard<std::mutex> guard(lock);
                if (entered.size() >= 2) return 0;
            }
            if (std::chrono::steady_clock::now() > until) {
                timed_out = true;
                return 1;
            }
            std::this_thread::yield();
        }
    };
    EXPECT_EQ(run(0, 64, body), 0);
    EXPECT_FALSE(timed_out.load());
    EXPECT_GE(entered.size(), 2u);
}

TEST(ThreadPool, AFailingIterationStopsTheLoopWithItsCode) {
    const int32_t extent = 1 << 22;
    std::atomic<int32_t> ran{0};
    auto body = [&](int32_t i) {
        ran++;
        return i == 1000 ? 7 : 0;
    };
    EXPECT_EQ(run(0, extent, body), 7);
    EXPECT_LT(ran.load(), extent); // the iterations not started by then are skipped
    // Each failing iteration returns its own code; the loop returns one of them.
    auto all_fail = [](int32_t i) { return 100 + i % 3; };
    const int32_t r = run(0, 1000, all_fail);
    EXPECT_TRUE(r >= 100 && r <= 102) << r;
}

TEST(ThreadPool, ANestedLoopRunsOnTheThreadThatReachesIt) {
    std::atomic<int> mismatches{0}, inner_runs{0};
    auto outer = [&](int32_t) {
        const std::thread::id me = std::this_thread::get_id();
        auto inner = [&](int32_t) {
            if (std::this_thread::get_id() != me) mismatches++;
            inner_runs++;
            return 0;
        };
        return run(0, 100, inner);
    };
    EXPECT_EQ(run(0, 16, outer), 0);
    EXPECT_EQ(inner_runs.load(), 1600);
    EXPECT_EQ(mismatches.load(), 0);
}

// Several threads run parallel loops at once; each loop's sum is its own.
TEST(ThreadPool, SeveralCallersAtOnce) {
    const int callers = 6, loops = 150;
    std::vector<std::thread> threads;
    std::vector<int> wrong(callers, 0);
    for (int t = 0; t < callers; t++) {
        threads.emplace_back([&, t] {
            for (int l = 0; l < loops; l++) {
                const int32_t extent = 50 + (t * 37 + l * 11) % 400;
                std::atomic<int64_t> sum{0};
                auto body = [&](int32_t i) {
                    sum += int64_t(i) * (t + 1);
                    return 0;
                };
                if (run(0, extent, body) != 0 ||
                    sum.load() != int64_t(extent) * (extent - 1) / 2 * (t + 1))
                    wrong[size_t(t)]++;
            }
        });
    }
    for (std::thread &th : threads)
        th.join();
    for (int t = 0; t < callers; t++)
        EXPECT_EQ(wrong[size_t(t)], 0) << "caller " << t;
}

// A child made by fork has none of its parent's workers; its loops run on threads of its own.
TEST(ThreadPool, AForkedChildRunsItsOwnLoops) {
    std::atomic<int> warm{0};
    auto body = [&](int32_t) { return warm++, 0; };
    ASSERT_EQ(run(0, 100, body), 0); // the parent's pool is running
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        std::atomic<int64_t> sum{0};
        auto add = [&](int32_t i) { return sum += i, 0; };
        const int r = run(0, 10000, add);
        _exit(r == 0 && sum.load() == int64_t(10000) * 9999 / 2 ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

// Forks while two other threads compile and realize pipelines of their own: each child
// compiles one more and runs it (a lock of the JIT or of the compiled code's cache, held by a
// thread of the parent at the fork, would keep it waiting forever; the alarm ends it).
TEST(ThreadPool, AForkedChildCompilesWhileItsParentsThreadsDo) {
    using namespace aicf;
    Buffer<float> in({40, 9}, "fork_in");
    for (int y = 0; y < 9; y++)
        for (int x = 0; x < 40; x++)
            in(x, y) = float(x - 2 * y);
    Var x("x"), y("y");
    std::atomic<bool> stop{false};
    std::atomic<int> compiled{0}, wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; t++) {
        threads.emplace_back([&, t] {
            for (int k = 0; !stop; k++) {
                Func g("fork_parent_" + std::to_string(t) + "_" + std::to_string(k));
                g(x, y) = in(x, y) * float(k + 1);
                g.parallel(y);
                Buffer<float> o = g.realize({40, 9});
                wrong += o(5, 3) != float(5 - 6) * float(k + 1);
                compiled++;
            }
        });
    }
    for (int k = 0; k < 4; k++) {
        std::this_thread::sleep_for(std::chrono::milliseconds(40));
        pid_t child = fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            alarm(60);
            Func h("fork_child_" + std::to_string(k));
            h(x, y) = in(x, y) - float(k);
            h.parallel(y).vectorize(x, 8);
            Buffer<float> o = h.realize({33, 7});
            _exit(o(5, 4) == float(5 - 8 - k) ? 0 : 1);
        }
        int status = 0;
        ASSERT_EQ(waitpid(child, &status, 0), child);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
            << "child " << k << ": status " << status;
    }
    stop = true;
    for (std::thread &th : threads)
        th.join();
    EXPECT_GT(compiled.load(), 0);
    EXPECT_EQ(wrong.load(), 0);
}

// AICF_NUM_THREADS (or else OMP_NUM_THREADS) sets the number of threads; ctest runs this test
// again with AICF_NUM_THREADS=3 (tests/CMakeLists.txt).
TEST(ThreadPool, ThreadCountFromTheEnvironment) {
    for (const char *name : {"AICF_NUM_THREADS", "OMP_NUM_THREADS"}) {
        const char *v = std::getenv(name);
        if (v && std::atoi(v) >= 1) {
            EXPECT_EQ(parallel_threads(), std::min(std::atoi(v), 1024)) << name << "=" << v;
            return;
        }
    }
    cpu_set_t cores; // otherwise, one per core this process may run on
    ASSERT_EQ(sched_getaffinity(0, sizeof cores, &cores), 0);
    EXPECT_EQ(parallel_threads(), CPU_COUNT(&cores));
}

// Pipelines: a row-wise softmax whose rows of exponentials live on the heap of each thread,
// and a blur whose parallel tiles each compute their own part of the intermediate, against
// plain loops in double precision.
TEST(ThreadPool, ParallelPipelinesMatchPlainLoops) {
    using namespace aicf;
    const int W = 300, H = 77;
    Buffer<float> in({W, H}, "pool_in");
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            in(x, y) = std::sin(0.37f * float(x) + 1.3f * float(y));

    Var c("c"), r("r"), x("x"), y("y"), xi("xi"), yi("yi");
    RDom k(0, W, "k");
    Func mx("pool_mx"), e("pool_e"), den("pool_den"), sm("pool_sm");
    mx(r) = -1e30f;
    mx(r) = max(mx(r), in(k, r));
    e(c, r) = exp(in(c, r) - mx(r));
    den(r) = 0.0f;
    den(r) += e(k, r);
    sm(c, r) = e(c, r) / den(r);
    sm.parallel(r).vectorize(c, 8);
    mx.compute_at(sm, r);
    e.compute_at(sm, r);
    den.compute_at(sm, r);
    Buffer<float> soft = sm.realize({W, H});

    Func bx("pool_bx"), by("pool_by");
    bx(x, y) = in(clamp(x - 1, 0, W - 1), y) + in(x, y) + in(clamp(x + 1, 0, W - 1), y);
    by(x, y) = bx(x, clamp(y - 1, 0, H - 1)) + bx(x, y) + bx(x, clamp(y + 1, 0, H - 1));
    by.tile(x, y, xi, yi, 64, 8).parallel(y).vectorize(xi, 8);
    bx.compute_at(by, x);
    Buffer<float> blur = by.realize({W, H});

    auto at = [&](int u, int v) {
        return double(in(std::min(std::max(u, 0), W - 1), std::min(std::max(v, 0), H - 1)));
    };
    for (int v = 0; v < H; v++) {
        double m = -1e30, s = 0;
        for (int u = 0; u < W; u++)
            m = std::max(m, double(in(u, v)));
        for (int u = 0; u < W; u++)
            s += std::exp(double(in(u, v)) - m);
        for (int u = 0; u < W; u++) {
            ASSERT_NEAR(soft(u, v), std::exp(double(in(u, v)) - m) / s, 1e-6) << u << ", " << v;
            double b = 0;
            for (int dv = -1; dv <= 1; dv++)
                for (int du = -1; du <= 1; du++)
                    b += at(u + du, v + dv);
            ASSERT_NEAR(blur(u, v), b, 1e-5) << u << ", " << v;
        }
    }
}

} // namespace
