#ifndef AICF_APPS_BENCH_CPU_HALIDE_PEERS_H
#define AICF_APPS_BENCH_CPU_HALIDE_PEERS_H

// Halide 14 as a peer: the same algorithms under the same schedules, written once as
// templates over the library (halide_peers.cpp) and run by AICF and by Halide in this process
// on the same data, alternating. Built where Debian's libhalide14-0-dev is installed
// (scripts/bench_cpu.sh installs it); AICF itself never depends on Halide.

#include <string>

namespace halide_peers {

// Prints a row per pipeline and schedule: AICF's time, Halide's, their ratio, the largest
// difference between their results (relative to the largest value), and each one's JIT
// compile time (Halide's first includes starting its JIT runtime); or a line saying that
// Halide was not found when the benchmark was built.
// `only`: where not empty, the rows whose names contain it, and no others.
void compare_with_halide(int threads, const std::string &only = "");

} // namespace halide_peers

#endif
