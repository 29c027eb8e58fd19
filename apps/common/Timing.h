#ifndef AICF_APPS_TIMING_H
#define AICF_APPS_TIMING_H

// Benchmark timing: the median wall-clock time of a function, after one warm-up call (which
// also compiles).

#include <algorithm>
#include <chrono>
#include <functional>
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

// The median times of two functions measured alternately (f, g, f, g, ...), so that a drift in
// the machine's speed during the measurement affects both alike; one warm-up call each first.
inline std::pair<double, double> median_ms_alternating(const std::function<void()> &f,
                                                       const std::function<void()> &g, int runs) {
    f();
    g();
    std::vector<double> tf, tg;
    auto time = [](const std::function<void()> &h) {
        auto a = std::chrono::steady_clock::now();
        h();
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a)
            .count();
    };
    for (int i = 0; i < runs; i++) {
        tf.push_back(time(f));
        tg.push_back(time(g));
    }
    std::sort(tf.begin(), tf.end());
    std::sort(tg.begin(), tg.end());
    return {tf[tf.size() / 2], tg[tg.size() / 2]};
}

} // namespace aicf_apps

#endif
