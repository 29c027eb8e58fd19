#ifndef AICF_LOWERING_GPU_PLACEMENT_H
#define AICF_LOWERING_GPU_PLACEMENT_H

#include "dsl/Target.h"
#include "dsl/ir/IR.h"

#include <string>

namespace aicf {
namespace lowering {

// Checks where GPU loops sit and decides where each Func lives on a GPU.
// Expects: loop nests with Realize nodes (after bounds inference).
// Guarantees: every GPU thread loop is inside a GPU block loop; nothing is computed between
// two block loops of a kernel; no kernel is nested in another or in a parallel loop; the
// target has a GPU when GPU loops exist. Realizes inside kernels are GPUShared (at the block
// level, unless the schedule asked for Register: a register tile) or Register (inside
// thread loops); Realizes at the root that kernels touch are Heap
// (device memory). Raises CompileError naming the Func and the loop otherwise.
ir::Stmt place_gpu_storage(const ir::Stmt &s, const Target &target);

// The check place_gpu_storage makes of each GPU block loop, for passes before it that lower
// a kernel's contents (whose own checks would report a symptom): a block loop with another
// inside it must hold it directly. Raises a CompileError naming the Func computed between
// them, or a gpu_single_thread() stage computed inside the kernel.
void check_inner_block_loops(const ir::For *block_loop);

} // namespace lowering
} // namespace aicf

#endif
