#ifndef AICF_LOWERING_VERSION_WIDE_ACCESSES_H
#define AICF_LOWERING_VERSION_WIDE_ACCESSES_H

#include "lowering/Kernel.h"

namespace aicf {
namespace lowering {

// Dense vector accesses to device and shared memory (a thread's 16 consecutive bytes) as
// aligned wide loads and stores, with their alignment proven here or decided once per launch
// on the host instead of by a branch at every access. An access qualifies when its index is a sum
// of constant multiples of its lanes, of loop-invariant values of the launch (mins, strides), and
// of products with either: it is aligned wherever the loops and threads are exactly when those
// launch values are multiples of its lanes (device buffers start on 16-byte boundaries, the runtime
// checks each one at launch; shared memory starts on one, and its layout is constant). Expects:
// kernels after fuse_gpu_thread_loops and simplify, before kernel_closure. Guarantees: in each
// kernel, each qualifying access's Ramp base is alignment_hint(base, lanes); where that needs
// launch values to be multiples, the kernel's launch_condition says so and a copy of the kernel,
// appended to `kernels` as its fallback, makes those accesses lane by lane (alignment_hint(base,
// 0)), except those whose condition comes from one side of a min or max (a tile shifted inwards
// at the end, unaligned in the last block only), which it leaves unmarked. Other accesses are
// unchanged: the PTX back end checks the alignment of unmarked ones where they run.
void version_wide_accesses(std::vector<LoweredKernel> &kernels);

} // namespace lowering
} // namespace aicf

#endif
