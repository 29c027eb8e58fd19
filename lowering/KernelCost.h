#ifndef AICF_LOWERING_KERNEL_COST_H
#define AICF_LOWERING_KERNEL_COST_H

// What a pipeline's kernels do at concrete sizes, counted from the lowered IR without running
// them: the launches the host code makes (its grids and scalar arguments), and per launch the
// device-memory bytes its loads and stores ask for, the elements they reach, and its
// floating-point operations. The counts follow the simulator's definitions (backends/sim/
// Profile.h: bytes the active lanes ask for, flops_per_lane per active lane, 2 m n k per warp-level
// mma), so the simulator's counters check them.
//
// A kernel's body runs once per thread of every block. The counter treats the block and
// thread indices as loops around the body and walks it over ranges of each loop variable at
// once: where every condition, predicate, loop bound and copy length is the same over the
// ranges (proven from their bounds), the body's counts are multiplied by the points in them;
// otherwise the outermost variable the quantity depends on is split in two and each half is
// counted. Tails and guards cost a few splits each, so a launch of millions of threads over
// thousands of loop iterations is counted in milliseconds. A quantity that depends on data
// (a loaded value) is taken at its largest (conditions true), and the count is marked as an
// upper bound; so is a condition still undecided after 2^17 splits of a kernel's ranges.

#include "dsl/BufferABI.h"
#include "lowering/Lower.h"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace aicf {
namespace lowering {

// A buffer a launch reads or writes in device memory.
struct BufferCost {
    std::string name;
    int element_bytes = 0;
    int64_t bytes_loaded = 0, bytes_stored = 0; // asked for by the active lanes
    // The elements (from the buffer's base) the loads and the stores reach lie in [lo, hi]
    // (hi < lo: none).
    int64_t load_lo = 0, load_hi = -1;
    int64_t store_lo = 0, store_hi = -1;
    // Where the buffer's shape is given: the coordinates (from its mins) that the loads and
    // the stores reach, per dimension, the largest stride first. The elements lie in that box,
    // which for a window of a wider array (or a tile of a matrix) holds far fewer than the
    // span. Empty when unknown or nothing is reached.
    std::vector<std::pair<int64_t, int64_t>> load_box, store_box;
};

struct KernelCost {
    std::vector<BufferCost> buffers; // the kernel's buffer arguments, in launch order
    int64_t flops = 0;               // per active lane, as flops_per_lane counts
    int64_t tensor_flops = 0;        // 2 m n k per warp-level mma
    // False when a count depends on data; the counts are then an upper bound.
    bool exact = true;
};

// One launch the host code makes at the given sizes.
struct StaticLaunch {
    int kernel = -1; // an index in the pipeline's kernels
    std::array<int64_t, 3> grid{{1, 1, 1}};
    std::map<std::string, ir::Expr> scalars; // the kernel's scalar arguments, as constants
};

// The shapes of a pipeline's buffer arguments and the values of its scalar arguments.
struct ConcreteArguments {
    struct Shape {
        ir::Type type;
        std::vector<aicf_dim_t> dims;
    };
    std::map<std::string, Shape> buffers;
    std::map<std::string, ir::Expr> scalars;
};

// A check of the pipeline that the arguments fail: the runtime error it raises (an
// ir::RuntimeErrorKind, the name it is about, its details).
struct FailedCheck {
    int32_t kind = 0;
    std::string name;
    std::array<int64_t, 6> details{};
};

struct StaticRun {
    std::vector<StaticLaunch> launches;     // in the order the host code makes them
    std::map<std::string, int64_t> scratch; // device memory the host code allocates, in bytes
    // False when the host code chose between launches on something other than the sizes.
    bool exact = true;
    // Set when the arguments fail a check; the launches stop there.
    std::optional<FailedCheck> failed;
};

// The launches the host code of `p` makes for these arguments. Raises CompileError naming
// the argument when one is missing.
StaticRun static_launches(const LoweredPipeline &p, const ConcreteArguments &args);

// The cost of one launch of kernel `k`.
// `shapes`: the buffers whose dimensions are known (the pipeline's inputs and outputs), for
// the boxes of coordinates their accesses reach.
KernelCost static_kernel_cost(const LoweredKernel &k, const StaticLaunch &launch,
                              const std::map<std::string, std::vector<aicf_dim_t>> &shapes = {});

} // namespace lowering
} // namespace aicf

#endif
