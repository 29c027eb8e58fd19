#ifndef AICF_BACKENDS_SIM_SIMULATOR_H
#define AICF_BACKENDS_SIM_SIMULATOR_H

// The simulator device's executor: runs a LoweredKernel over a grid on the CPU with CUDA's
// execution model. Per block, all threads advance in lockstep over the kernel IR (a
// vectorized interpreter: each IR node is evaluated for every thread of the block at once),
// with an active mask for divergent control flow, the block's shared memory, and barriers.
// Values that are the same in every thread (uniform) are computed once.

#include "lowering/Kernel.h"

#include <array>
#include <cstdint>
#include <vector>

namespace aicf {
namespace backends {
namespace sim {

// One argument value of a launch, in the order of LoweredKernel::args.
struct LaunchArgument {
    void *data = nullptr; // buffers: the base of the device allocation
    int64_t bytes = 0;    // buffers: its size; accesses outside it are errors
    uint64_t bits = 0;    // scalars: the value's bits (the low bytes for narrow types)
};

// Runs `kernel` for every block of `grid` (x, y, z). Raises RuntimeError naming the kernel
// on a fault (an access outside a buffer or shared memory, a barrier under divergence).
void launch(const lowering::LoweredKernel &kernel, const std::array<int, 3> &grid,
            const std::vector<LaunchArgument> &args);

} // namespace sim
} // namespace backends
} // namespace aicf

#endif
