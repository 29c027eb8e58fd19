#ifndef AICF_LOWERING_MAP_GPU_LOOPS_H
#define AICF_LOWERING_MAP_GPU_LOOPS_H

#include "lowering/Kernel.h"

namespace aicf {
namespace lowering {

// Maps a kernel's block loops onto the grid and finds the shape of its blocks.
// Expects: a kernel from extract_kernels (its body the block loop nest).
// Guarantees: each block loop becomes a let of its min plus gpu_block_index along the loop's
// hardware dimension (block_loops and loop_vars name them). Thread loops stay loops; each
// dimension of the block (threads, thread_loops) is the largest constant bound of the thread
// loops along it, and the block fits the target (with the launch bounds the schedule set,
// launch_bounds), or a CompileError names the Func, the loops and the limit.
void map_gpu_loops(LoweredKernel &kernel);

} // namespace lowering
} // namespace aicf

#endif
