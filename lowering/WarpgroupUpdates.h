#ifndef AICF_LOWERING_WARPGROUP_UPDATES_H
#define AICF_LOWERING_WARPGROUP_UPDATES_H

// The kernel passes of updates run on warpgroup tensor cores (gpu_wgmma; lower_warp_matrix_updates
// makes the instructions, lowering/MatrixUpdates.h).

#include "lowering/Kernel.h"

namespace aicf {
namespace lowering {

// Each gpu_wgmma operand's start, the load of its first element from the block's shared array,
// becomes its byte offset into that array.
// Expects: shared memory packed (pack_shared_memory), and the staged Funcs' copies in their
// buffers (multi_buffer_async_stages), so that the load indexes the buffer the instruction
// reads.
// Then consecutive instructions into one accumulator (an unrolled loop over k) are issued
// together: the registers fenced once, each wgmma adding to the last one's result, one commit
// and one wait, so that the tensor cores run them back to back.
// Guarantees: every gpu_wgmma's operands are byte offsets.
void resolve_wgmma_operands(LoweredKernel &kernel);

// In a kernel that runs wgmma, a proxy fence before every barrier: shared memory written by
// the threads' stores and copies (the generic proxy) is then visible to the wgmma after the
// barrier (the async proxy).
// Expects: the kernel's barriers and asynchronous copies in place (copy_stages_asynchronously).
void fence_wgmma_operands(LoweredKernel &kernel);

} // namespace lowering
} // namespace aicf

#endif
