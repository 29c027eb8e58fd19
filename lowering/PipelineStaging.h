#ifndef AICF_LOWERING_PIPELINE_STAGING_H
#define AICF_LOWERING_PIPELINE_STAGING_H

#include "dsl/Function.h"
#include "lowering/Kernel.h"

#include <map>
#include <string>
#include <vector>

namespace aicf {
namespace lowering {

// What the stagings pipelined through registers read on chip, checked while shared memory is
// still named by Func.
// Expects: kernels after inject_gpu_barriers, before pack_shared_memory.
// Guarantees: raises CompileError naming the Func, what it reads and the loop when a staging
// pipelined through registers (gpu_pipeline(2)) reads what the kernel writes inside the serial
// loop the staging is at (its next values would be loaded before they are written); records
// in `pipelined_after_writes` the Funcs whose stagings read what the block writes before that
// loop (shared memory, or the kernel's outputs), whose first loads then wait at a barrier.
void check_pipelined_reads(std::vector<LoweredKernel> &kernels,
                           const std::map<std::string, ir::Function> &env);

// Software pipelining of Funcs staged in shared memory at a serial loop (gpu_pipeline(2)):
// the loads of iteration i + 1 are issued into registers before iteration i's consumers run,
// and iteration i + 1 starts by storing them into shared memory.
// Expects: a kernel after fuse_gpu_thread_loops (one SPMD body, barriers placed, shared
// memory packed into kSharedMemoryName) whose reads check_pipelined_reads checked, and the
// Funcs to pipeline.
// Guarantees: for each such Func F, the serial loop that holds `produce F` runs, per thread,
// loads into a register array "F.pipelined" (the loads for the loop's first iteration before
// it; those for iteration i + 1 at the start of F's consumers in iteration i, when there is
// one), and F's stores write shared memory from that array; F's loops inside the serial loop
// are unrolled to their constant bounds, each copy guarded. Raises CompileError naming F when
// it is not staged at a serial loop of the kernel, when it does not store into shared memory,
// or when a loop of its staging has no constant bound of
// at most 16 iterations, or when it is computed in no kernel. One computed at a serial loop of
// one iteration (which lowering removes) has nothing to load ahead and stays as it is.
void pipeline_staged_loads(std::vector<LoweredKernel> &kernels,
                           const std::map<std::string, ir::Function> &env);

} // namespace lowering
} // namespace aicf

#endif
