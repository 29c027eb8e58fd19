#ifndef AICF_LOWERING_BUILD_KERNEL_H
#define AICF_LOWERING_BUILD_KERNEL_H

#include "dsl/Target.h"
#include "lowering/Kernel.h"

#include <array>

namespace aicf {
namespace lowering {

// Turns one outermost GPU block loop nest into the body of `kernel` (whose name, id, target
// and Funcs the caller has set) and returns the grid extents, as host expressions.
// Expects: flat storage, GPU loops checked by place_gpu_storage.
// Guarantees: block loops become lets of gpu_block_index; thread loops become lets of
// gpu_thread_index, guarded where a loop is shorter than the block (one SPMD body); stores
// outside thread loops run on thread 0. A barrier stands between two parts of the body
// exactly where one writes memory (shared, or global memory the kernel writes) that the
// other touches in another thread with no barrier in between, including across iterations
// of the block-level loops around them. Shared allocations are packed into one array by
// lifetime; per-thread allocations get constant sizes and, where the lets allow, constant
// indices. The block fits the target (threads and shared memory), or a CompileError names
// the Funcs and sizes. kernel.args lists the buffers and scalars the body uses.
std::array<ir::Expr, 3> build_kernel(const ir::For *outer, const Target &target,
                                     LoweredKernel &kernel);

} // namespace lowering
} // namespace aicf

#endif
