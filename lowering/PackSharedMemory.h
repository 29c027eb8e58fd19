#ifndef AICF_LOWERING_PACK_SHARED_MEMORY_H
#define AICF_LOWERING_PACK_SHARED_MEMORY_H

#include "lowering/Kernel.h"

namespace aicf {
namespace lowering {

// Packs a kernel's shared allocations into the block's one shared array.
// Expects: a kernel after inject_gpu_barriers, with one GPUShared Allocate per Func.
// Guarantees: each shared Func has a byte range of the array (kernel.shared, 16-byte
// aligned, first fit, largest first; kernel.shared_bytes the total); its Allocate is gone and
// its loads and stores index kSharedMemoryName in elements of the accessed type. Two Funcs
// share bytes only when one is last touched before the other is first touched with a barrier
// in between that runs whenever both do (outside any loop or condition that does not hold
// both touches); a block-level loop that touches a Func keeps it alive for the whole loop.
// Every shared Func has a constant size and the total fits the target, or a CompileError
// names the Funcs and sizes.
void pack_shared_memory(LoweredKernel &kernel);

} // namespace lowering
} // namespace aicf

#endif
