#ifndef AICF_LOWERING_FUSE_GPU_THREAD_LOOPS_H
#define AICF_LOWERING_FUSE_GPU_THREAD_LOOPS_H

#include "lowering/Kernel.h"

namespace aicf {
namespace lowering {

// Makes a kernel's body one SPMD program that every thread of a block runs.
// Expects: a kernel after map_gpu_loops (block shape known), with its barriers placed.
// Guarantees: each thread loop becomes a let of its min plus gpu_thread_index along its
// hardware dimension, guarded where the loop is shorter than the block; thread dimensions a
// loop nest does not use run it on their thread 0 only; stores outside thread loops run on
// thread 0, except stores to register allocations, which every thread makes to its own copy;
// a store inside some thread loops of a nest runs on thread 0 of the nest's other dimensions.
// No GPU loop remains; loop_vars names the lets that replaced them.
void fuse_gpu_thread_loops(LoweredKernel &kernel);

} // namespace lowering
} // namespace aicf

#endif
