#ifndef AICF_LOWERING_INJECT_GPU_BARRIERS_H
#define AICF_LOWERING_INJECT_GPU_BARRIERS_H

#include "lowering/Kernel.h"

namespace aicf {
namespace lowering {

// Places the barriers of a kernel.
// Expects: a kernel after map_gpu_loops (block loops are lets, thread loops are loops, the
// block shape is known); shared memory still one allocation per Func.
// Guarantees: a barrier (Evaluate(gpu_barrier())) stands between two parts of the body
// exactly where one writes memory (a shared allocation, or a global buffer the kernel
// writes) that the other touches in another thread with no barrier in between, including
// across iterations of the block-level loops around them. The parts are the thread loop
// nests and the statements outside thread loops; barriers stand only outside thread loops,
// where control flow depends on block-level values only, so every thread reaches them. Two
// accesses to the same element in each thread (an index that is a one-to-one function of
// the thread index, the same in both: linear in it, or, for small blocks and loops, any
// function of it whose values at all threads differ, such as the digits t / 8 and t % 8 of a
// fused loop) need no barrier; across iterations of a loop, neither
// do accesses whose index is one-to-one in the thread index and the iteration together (no
// element is touched twice), nor two writes of a pure definition to a buffer (each point
// gets the one value the Func has there). Distinct Funcs are distinct memory
// here: pack_shared_memory lets two Funcs share bytes only across a barrier.
void inject_gpu_barriers(LoweredKernel &kernel);

} // namespace lowering
} // namespace aicf

#endif
