#ifndef AICF_LOWERING_SIZE_REGISTER_ALLOCATIONS_H
#define AICF_LOWERING_SIZE_REGISTER_ALLOCATIONS_H

#include "lowering/Kernel.h"

namespace aicf {
namespace lowering {

// Gives each thread's own storage in a kernel the constant size code generators need.
// Expects: a kernel after pack_shared_memory and fuse_gpu_thread_loops (the only allocations
// left are per thread).
// Guarantees: every Allocate is MemoryType::Register with one constant extent, its elements
// bounded by a constant of at most 4096 (or a CompileError names the Func and its size);
// scalar accesses to it whose index the lets around make constant (a register tile's parts)
// use that constant.
void size_register_allocations(LoweredKernel &kernel);

} // namespace lowering
} // namespace aicf

#endif
