#ifndef AICF_APPS_TIMING_H
#define AICF_APPS_TIMING_H

// Benchmark timing: the median wall-clock time of a function, after one warm-up call (which
// also compiles), and of two functions measured alternately.

#include <algorithm>
#include <chrono>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

namespace aicf_apps {

inline double median_ms(const std::function<void()> &f, int runs) {
    f();
    std::vector<double> t;
    for (int i = 0; i < runs; i++) {
        auto a = std::chrono::steady_clock::now();
        f();
        auto b = std::chrono::steady_clock::now();
        t.push_back(std::chrono::duration<double, std::milli>(b - a).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

// The median times of two functions measured alternately, in rounds, so that a drift in the
// machine's speed affects both alike. Parallel code leaves worker threads spinning for a while
// after each parallel loop (AICF's pool, OpenMP's, Halide's), and a run that follows the
// other function's at once shares the cores with those threads: so each round starts 20 ms
// after the other function's last run, by which time its threads have gone to sleep. The
// first runs after that pause wake the threads and refill caches; the two timed runs of each
// round follow at least three untimed ones and 2 ms of them: the steady state of a function
// called again and again. The first untimed run also compiles.
inline std::pair<double, double> median_ms_alternating(const std::function<void()> &f,
                                                       const std::function<void()> &g, int rounds) {
    auto since = [](std::chrono::steady_clock::time_point start) {
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count();
    };
    std::vector<double> tf, tg;
    auto round = [&](const std::function<void()> &h, std::vector<double> &times) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        const auto warming = std::chrono::steady_clock::now();
        for (int i = 0; i < 3 || since(warming) < 2.0; i++)
            h();
        for (int i = 0; i < 2; i++) {
            const auto start = std::chrono::steady_clock::now();
            h();
            times.push_back(since(start));
        }
    };
    for (int i = 0; i < rounds; i++) {
        round(f, tf);
        round(g, tg);
    }
    std::sort(tf.begin(), tf.end());
    std::sort(tg.begin(), tg.end());
    return {tf[tf.size() / 2], tg[tg.size() / 2]};
}

} // namespace aicf_apps

#endif
