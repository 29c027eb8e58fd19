// The row-wise operators of apps/common/ModelOps.h (layernorm, RMSNorm, softmax) under each
// schedule of apps/common/NormSchedules.h, for float and bfloat16 storage: checked against
// plain loops in double precision, and on the simulator's counters (bytes against the
// compulsory bytes, coalescing, bank conflicts, barriers).

#include "GPUTarget.h"
#include "NormSchedules.h"
#include "Reference.h"
#include "ScopedEnv.h"
#include "backends/sim/Profile.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

using namespace aicf;
using aicf_apps::NormSchedule;
using aicf_apps::RowwiseOp;
using aicf_test::fill_random;

namespace {

const Target gpu_target = aicf_test::gpu_test_target();

enum class Op { LayerNorm, RMSNorm, Softmax };

const char *to_string(Op op) {
    return op == Op::LayerNorm ? "layernorm" : op == Op::RMSNorm ? "rmsnorm" : "softmax";
}

// One operator on random rows, with its parameters.
template <typename T> struct Problem {
    Op op;
    int width, rows;
    Buffer<T> in, weight, bias;

    Problem(Op op, int width, int rows, unsigned seed)
        : op(op), width(width), rows(rows), in({width, rows}, "in"), weight({width}, "weight"),
          bias({width}, "bias") {
        fill_random(in, -3, 3, seed);
        fill_random(weight, 0.5, 1.5, seed + 1);
        fill_random(bias, -1, 1, seed + 2);
    }

    RowwiseOp algorithm() const {
        switch (op) {
        case Op::LayerNorm:
            return aicf_apps::layer_norm<T>(in, weight, bias, width, 1e-5f, "norm");
        case Op::RMSNorm:
            return aicf_apps::rms_norm<T>(in, weight, width, 1e-5f, "norm");
        default:
            return aicf_apps::softmax<T>(in, width, "norm");
        }
    }

    // The compulsory bytes: the input read once, the output written once, the parameters
    // read once per block.
    int64_t param_count() const { return op == Op::LayerNorm ? 2 : op == Op::RMSNorm ? 1 : 0; }

    // Per row: the mean, the sum of squares (about the mean for layernorm), the max and the
    // sum of exponentials relative to it.
    struct RowStats {
        double mean = 0, squares = 0, max = -1e300, total = 0;
    };
    std::vector<RowStats> row_stats() const {
        std::vector<RowStats> stats(static_cast<size_t>(rows));
        for (int j = 0; j < rows; j++) {
            RowStats &s = stats[size_t(j)];
            for (int k = 0; k < width; k++) {
                double v = double(float(in(k, j)));
                s.mean += v;
                s.max = std::max(s.max, v);
            }
            s.mean /= width;
            for (int k = 0; k < width; k++) {
                double v = double(float(in(k, j)));
                s.squares += op == Op::LayerNorm ? (v - s.mean) * (v - s.mean) : v * v;
                s.total += std::exp(v - s.max);
            }
        }
        return stats;
    }

    double reference(const RowStats &s, int i, int j) const {
        double v = double(float(in(i, j))), w = double(float(weight(i)));
        switch (op) {
        case Op::LayerNorm:
            return (v - s.mean) / std::sqrt(s.squares / width + 1e-5) * w + double(float(bias(i)));
        case Op::RMSNorm:
            return v / std::sqrt(s.squares / width + 1e-5) * w;
        default:
            return std::exp(v - s.max) / s.total;
        }
    }

    // Realizes under `schedule` and compares every element; returns the profiles.
    std::vector<backends::sim::KernelProfile> check(NormSchedule schedule) const {
        RowwiseOp a = algorithm();
        aicf_apps::schedule<T>(a, schedule);
        backends::sim::ProfileRecorder recorder;
        Buffer<T> out({width, rows}, "out");
        a.out.realize(Realization(out), gpu_target);
        // float: the order of the sums; bfloat16: the rounding of the stored result.
        const double tol = sizeof(T) == 4 ? 2e-5 : 1.0 / 128;
        int bad = 0;
        const std::vector<RowStats> stats = row_stats();
        for (int j = 0; j < rows && bad < 5; j++) {
            for (int i = 0; i < width && bad < 5; i++) {
                double want = reference(stats[size_t(j)], i, j), got = double(float(out(i, j)));
                if (std::fabs(got - want) > tol * (1 + std::fabs(want))) {
                    ADD_FAILURE() << to_string(op) << " width " << width << ", "
                                  << aicf_apps::to_string(schedule) << ": (" << i << ", " << j
                                  << ") is " << got << ", expected " << want;
                    bad++;
                }
            }
        }
        return recorder.launches();
    }
};

const std::vector<int> kWidths = {1, 31, 33, 1000, 1024, 4095, 4096, 65536};

template <typename T> void check_all_widths(Op op) {
    for (int width : kWidths) {
        for (NormSchedule s :
             {NormSchedule::WarpPerRow, NormSchedule::BlockPerRow, NormSchedule::SharedTree}) {
            if (s == NormSchedule::WarpPerRow && width > 4096) continue; // (registers)
            // Rows: not a multiple of the warp-per-row schedule's 4 rows a block.
            const int rows = width >= 65536 ? 2 : width >= 4095 ? 5 : 7;
            SCOPED_TRACE(std::string(to_string(op)) + ", width " + std::to_string(width) + ", " +
                         aicf_apps::to_string(s));
            Problem<T>(op, width, rows, unsigned(width)).check(s);
        }
    }
}

TEST(Norms, LayerNormFloat) {
    check_all_widths<float>(Op::LayerNorm);
}
TEST(Norms, LayerNormBFloat16) {
    check_all_widths<bfloat16_t>(Op::LayerNorm);
}
TEST(Norms, RMSNormFloat) {
    check_all_widths<float>(Op::RMSNorm);
}
TEST(Norms, RMSNormBFloat16) {
    check_all_widths<bfloat16_t>(Op::RMSNorm);
}
TEST(Norms, SoftmaxFloat) {
    check_all_widths<float>(Op::Softmax);
}
TEST(Norms, SoftmaxBFloat16) {
    check_all_widths<bfloat16_t>(Op::Softmax);
}

// What the simulator counts for the schedules that hold the row in registers: the input read
// once, the output written once, the parameters once per block; every request coalesced;
// no bank conflicts; and one warp per row needs no barrier.
template <typename T> void check_counters(Op op, NormSchedule s, int width, int rows) {
    SCOPED_TRACE(std::string(to_string(op)) + ", width " + std::to_string(width) + ", " +
                 aicf_apps::to_string(s));
    Problem<T> p(op, width, rows, 5);
    std::vector<backends::sim::KernelProfile> launches = p.check(s);
    ASSERT_EQ(launches.size(), 1u);
    const backends::sim::KernelProfile &k = launches[0];
    const int64_t blocks = k.blocks();
    const int64_t row_bytes = int64_t(width) * int64_t(sizeof(T));
    const int64_t loads = row_bytes * (rows + p.param_count() * blocks);
    const int64_t stores = row_bytes * rows;
    EXPECT_NEAR(double(k.global_bytes_loaded()), double(loads), 0.01 * loads) << k.to_string();
    EXPECT_NEAR(double(k.global_bytes_stored()), double(stores), 0.01 * stores) << k.to_string();
    EXPECT_GE(k.global_efficiency(), 0.99) << k.to_string();
    if (const backends::sim::MemoryInstructionProfile *worst = k.worst_shared_instruction()) {
        EXPECT_LE(worst->wavefronts_per_request(), 1.0) << k.to_string();
    }
    if (s == NormSchedule::WarpPerRow) {
        EXPECT_EQ(k.barriers, 0) << k.to_string();
        EXPECT_EQ(k.shared_requests(), 0) << k.to_string();
    }
}

TEST(NormCounters, RowReadOnceWrittenOnceCoalescedWithoutConflicts) {
    aicf_test::ScopedEnv sim("AICF_DEVICE", "sim"); // counters come from the simulator
    for (Op op : {Op::LayerNorm, Op::RMSNorm, Op::Softmax}) {
        check_counters<float>(op, NormSchedule::WarpPerRow, 1024, 16);
        check_counters<bfloat16_t>(op, NormSchedule::WarpPerRow, 4096, 8);
        check_counters<float>(op, NormSchedule::BlockPerRow, 8192, 2);
        check_counters<bfloat16_t>(op, NormSchedule::BlockPerRow, 4096, 3);
    }
}

// Rows 1001 floats apart: the row stride is no multiple of 4, so the kernel whose 16-byte
// accesses assume it cannot run; the host launches its copy that reads lane by lane, decided
// once per launch. Rows 1004 apart take the wide kernel.
TEST(NormCounters, AlignmentIsDecidedOncePerLaunch) {
    aicf_test::ScopedEnv sim("AICF_DEVICE", "sim"); // which kernel ran: the simulator's profile
    const int width = 1000, rows = 5;
    for (int pitch : {1001, 1004}) {
        SCOPED_TRACE("rows " + std::to_string(pitch) + " floats apart");
        Buffer<float> in({pitch, rows}, "in"), weight({width}, "weight"), bias({width}, "bias");
        fill_random(in, -3, 3, 1);
        fill_random(weight, 0.5, 1.5, 2);
        fill_random(bias, -1, 1, 3);
        RowwiseOp a = aicf_apps::layer_norm<float>(in, weight, bias, width, 1e-5f, "norm");
        aicf_apps::schedule<float>(a, NormSchedule::WarpPerRow);
        backends::sim::ProfileRecorder recorder;
        Buffer<float> out = a.out.realize({width, rows}, gpu_target)[0];
        ASSERT_EQ(recorder.launches().size(), 1u);
        const std::string &kernel = recorder.launches()[0].kernel;
        EXPECT_EQ(kernel.find("_unaligned") != std::string::npos, pitch % 4 != 0) << kernel;
        for (int j = 0; j < rows; j++) {
            const aicf_test::RowMoments r = aicf_test::row_moments(in, j, width);
            const double m = r.mean, sq = r.squares;
            for (int i = 0; i < width; i += 37) {
                double want = (in(i, j) - m) / std::sqrt(sq / width + 1e-5) * weight(i) + bias(i);
                ASSERT_NEAR(out(i, j), want, 2e-5 * (1 + std::fabs(want))) << i << ", " << j;
            }
        }
    }
    // The PTX: aligned 16-byte loads and stores with no check of their addresses, and the copy
    // that reads lane by lane.
    Buffer<float> in({1000, 4}, "in"), weight({1000}, "weight"), bias({1000}, "bias");
    RowwiseOp a = aicf_apps::layer_norm<float>(in, weight, bias, 1000, 1e-5f, "norm");
    aicf_apps::schedule<float>(a, NormSchedule::WarpPerRow);
    std::string ptx = a.out.ptx(Target("host-cuda-sm_80"));
    EXPECT_NE(ptx.find("ld.global.nc.v4.f32"), std::string::npos);
    EXPECT_NE(ptx.find("st.global.v4.f32"), std::string::npos);
    EXPECT_NE(ptx.find(".entry norm_k0_norm_unaligned("), std::string::npos);
    EXPECT_EQ(ptx.find("and.b64"), std::string::npos) << "an address checked at an access";
}

} // namespace
