#ifndef AICF_LOWERING_PIPELINE_STAGING_H
#define AICF_LOWERING_PIPELINE_STAGING_H

#include "dsl/Function.h"
#include "lowering/Kernel.h"

#include <map>
#include <string>
#include <vector>

namespace aicf {
namespace lowering {

// Software pipelining of Funcs staged in shared memory at a serial loop (gpu_pipeline(2)):
// the loads of iteration i + 1 are issued into registers before iteration i's consumers run,
// and iteration i + 1 starts by storing them into shared memory.
// Expects: a kernel after fuse_gpu_thread_loops (one SPMD body, barriers placed, shared
// memory packed into kSharedMemoryName), and the Funcs to pipeline.
// Guarantees: for each such Func F, the serial loop that holds `produce F` runs, per thread,
// loads into a register array "F.pipelined" (the loads for the loop's first iteration before
// it; those for iteration i + 1 at the start of F's consumers in iteration i, when there is
// one), and F's stores write shared memory from that array; F's loops inside the serial loop
// are unrolled to their constant bounds, each copy guarded. Raises CompileError naming F when
// it is not staged at a serial loop of the kernel, when its stores read anything but device
// buffers the kernel does not write, or when a loop of its staging has no constant bound of
// at most 16 iterations, or when it is computed in no kernel. One computed at a serial loop of
// one iteration (which lowering removes) has nothing to load ahead and stays as it is.
void pipeline_staged_loads(std::vector<LoweredKernel> &kernels,
                           const std::map<std::string, ir::Function> &env);

} // namespace lowering
} // namespace aicf

#endif
