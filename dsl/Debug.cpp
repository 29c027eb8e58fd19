#include "dsl/Debug.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace aicf {

int debug_level() {
    const char *env = std::getenv("AICF_DEBUG");
    return env ? std::atoi(env) : 0;
}

PhaseTimer::PhaseTimer(std::string what) : what(std::move(what)), enabled(debug_level() >= 1) {
    if (enabled) start = last = Clock::now();
}

void PhaseTimer::phase(const std::string &name) {
    if (!enabled) return;
    Clock::time_point now = Clock::now();
    double ms = std::chrono::duration<double, std::milli>(now - last).count();
    last = now;
    auto it = std::find_if(entries.begin(), entries.end(),
                           [&](const Entry &e) { return e.name == name; });
    if (it == entries.end()) {
        entries.push_back({name, ms});
    } else {
        it->ms += ms;
    }
}

void PhaseTimer::skip() {
    if (enabled) last = Clock::now();
}

PhaseTimer::~PhaseTimer() {
    if (!enabled) return;
    double total = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    std::vector<Entry> sorted = entries;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const Entry &a, const Entry &b) { return a.ms > b.ms; });
    std::ostringstream line;
    line.setf(std::ios::fixed);
    line.precision(1);
    line << "AICF: " << what << " took " << total << " ms";
    // Phases under a tenth of a millisecond are summed as one figure.
    double rest = 0;
    int shown = 0, hidden = 0;
    for (const Entry &e : sorted) {
        if (e.ms < 0.1) {
            rest += e.ms;
            hidden++;
            continue;
        }
        line << (shown++ ? ", " : ": ") << e.name << " " << e.ms;
    }
    if (hidden) line << (shown ? ", " : ": ") << hidden << " others " << rest;
    line << "\n";
    // One write, so that lines from pipelines compiled on other threads do not interleave.
    std::fputs(line.str().c_str(), stderr);
}

} // namespace aicf
