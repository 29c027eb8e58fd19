#ifndef AICF_APPS_TIMING_H
#define AICF_APPS_TIMING_H

// Benchmark timing: the median wall-clock time of a function, after one warm-up call (which
// also compiles).

#include <algorithm>
#include <chrono>
#include <functional>
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

} // namespace aicf_apps

#endif
