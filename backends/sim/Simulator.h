#ifndef AICF_BACKENDS_SIM_SIMULATOR_H
#define AICF_BACKENDS_SIM_SIMULATOR_H

// The simulator device's executor: runs a LoweredKernel over a grid on the CPU with CUDA's
// execution model. Per block, all threads advance in lockstep over the kernel IR (a
// vectorized interpreter: each IR node is evaluated for every thread of the block at once),
// with an active mask for divergent control flow, the block's shared memory, and barriers.
// Values that are the same in every thread (uniform) are computed once. Every launch is
// checked (see LaunchOptions) and profiled (see Profile.h).

#include "backends/sim/Profile.h"
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

// What a launch checks beyond bounds and barriers (which it always checks).
struct LaunchOptions {
    // Shared-memory races between barriers, and reads of shared memory no thread of the
    // block has written: on unless AICF_SIM_CHECKS=0.
    bool checks = checks_from_environment();

    static bool checks_from_environment();
};

// Runs `kernel` for every block of `grid` (x, y, z) and returns what it did (the profile
// also goes to the live ProfileRecorders). Raises RuntimeError naming the kernel, the
// thread and block, the Func and the loop on a fault: an access outside a buffer or shared
// memory, a barrier under divergence, a shared-memory race, a read of unwritten shared
// memory.
KernelProfile launch(const lowering::LoweredKernel &kernel, const std::array<int, 3> &grid,
                     const std::vector<LaunchArgument> &args,
                     const LaunchOptions &options = LaunchOptions());

} // namespace sim
} // namespace backends
} // namespace aicf

#endif
