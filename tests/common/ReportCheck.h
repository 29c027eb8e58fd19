#ifndef AICF_TESTS_REPORT_CHECK_H
#define AICF_TESTS_REPORT_CHECK_H

// Checks the dataflow report's static counts (Pipeline::report) against the simulator's
// counters for the same pipeline and sizes: per launch, the kernel and its grid, every
// buffer's bytes loaded and stored, the flops and the tensor-core flops. Counts the report
// marks exact must be equal; those it marks as bounds must not be below the simulator's.

#include "backends/sim/Profile.h"
#include "dsl/aicf.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace aicf_test {

inline void expect_count(bool exact, int64_t reported, int64_t simulated, const std::string &what) {
    if (exact) {
        EXPECT_EQ(reported, simulated) << what;
    } else {
        EXPECT_GE(reported, simulated) << what;
    }
}

inline void expect_report_matches(const aicf::DataflowReport &report,
                                  const std::vector<aicf::backends::sim::KernelProfile> &launches) {
    ASSERT_EQ(report.kernels.size(), launches.size()) << report.to_text();
    for (size_t i = 0; i < launches.size(); i++) {
        const aicf::KernelReport &k = report.kernels[i];
        const aicf::backends::sim::KernelProfile &p = launches[i];
        const std::string where = "launch " + std::to_string(i) + " (" + k.name + ")";
        EXPECT_EQ(k.name, p.kernel) << where;
        for (int d = 0; d < 3; d++)
            EXPECT_EQ(k.grid[size_t(d)], p.grid[size_t(d)]) << where << " grid " << d;
        for (const aicf::BufferReport &b : k.buffers) {
            const aicf::backends::sim::BufferTraffic *s = p.find_buffer(b.name);
            ASSERT_NE(s, nullptr) << where << ": " << b.name;
            expect_count(k.exact, b.requested_read, s->bytes_loaded, where + " " + b.name);
            expect_count(k.exact, b.requested_written, s->bytes_stored, where + " " + b.name);
            EXPECT_LE(b.moved_read, b.requested_read) << where << " " << b.name;
            EXPECT_LE(b.moved_written, b.requested_written) << where << " " << b.name;
            EXPECT_EQ(b.moved_read > 0, b.requested_read > 0) << where << " " << b.name;
            EXPECT_EQ(b.moved_written > 0, b.requested_written > 0) << where << " " << b.name;
        }
        expect_count(k.exact, k.flops, p.flops, where + " flops");
        expect_count(k.exact, k.tensor_flops, p.tensor_flops, where + " tensor flops");
    }
}

// Realizes f over `sizes` on the test device; where that is the simulator, checks the
// report of the same pipeline against its counters.
inline aicf::Realization realize_checking_report(aicf::Func f, const std::vector<int> &sizes,
                                                 const aicf::Target &target) {
    aicf::backends::sim::ProfileRecorder recorder;
    aicf::Realization r = f.realize(sizes, target);
    if (recorder.launches().empty()) return r; // a GPU ran it
    expect_report_matches(f.report(sizes, target, aicf::ReportArguments(), false),
                          recorder.launches());
    return r;
}

} // namespace aicf_test

#endif
