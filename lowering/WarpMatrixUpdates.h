#ifndef AICF_LOWERING_WARP_MATRIX_UPDATES_H
#define AICF_LOWERING_WARP_MATRIX_UPDATES_H

#include "dsl/Function.h"
#include "dsl/Target.h"
#include "dsl/ir/IR.h"
#include "lowering/Kernel.h"

#include <map>
#include <string>

namespace aicf {
namespace lowering {

// Updates scheduled with gpu_mma(n, m, k): their three innermost loops, a multiply-accumulate
// f(.., n, .., m, ..) += a(m, k) * b(k, n) over 8 x 16 x 16 points (8 x 16 x 8 for float
// inputs), become one warp's gpu_mma. The stage's own thread loop (its warps) moves to z and
// two thread loops take its place, over the lane's t = lane % 4 (x, 4 threads) and
// g = lane / 4 (y, 8): each lane gathers its elements of the A and B fragments (the
// operands evaluated at the rows and columns lowering/TensorCores.h gives its lane), reads its
// four points of f, and writes back the instruction's result there.
//
// Expects: the loop nests of schedule_functions, before make_room_for_lanes and the passes
// that place and size storage (f's points then live where the lanes hold them, which
// stripe_register_funcs proves for each access).
// Updates scheduled with gpu_wgmma(n, m, k) (N x 64 x 16, bf16 or f16) become one warpgroup's
// gpu_wgmma in the same way (lowering/MatrixUpdates.h): the stage's thread loop over
// warpgroups becomes one along z over their warps (4 a warpgroup), each thread holding N / 2
// points of f, and the operands, Funcs in shared memory in core matrices, are read where their
// storage puts them (the load of each one's first element, which resolve_wgmma_operands turns
// into a byte offset); the instruction is fenced, committed and waited for at once.
// Guarantees: every gpu_mma and gpu_wgmma lies inside thread loops x (4) and y (8) and no other
// thread loop of its kernel is wider along x or y, so the lanes of each warp are those of one
// instruction; its loops' extents, its operand types and the update's shape are the
// instruction's, and a gpu_wgmma's operands start on a core matrix. Raises CompileError naming
// the Func and loops otherwise, and for a target without the instruction (sm_80 for gpu_mma,
// sm_90a for gpu_wgmma).
ir::Stmt lower_warp_matrix_updates(const ir::Stmt &s,
                                   const std::map<std::string, ir::Function> &env,
                                   const Target &target);

// The 16-bit operands of each gpu_mma that lower_warp_matrix_updates gathered element by
// element from shared memory become one ldmatrix each (A: .x4, B: .x2): as stored where the
// tile's 16-byte rows hold consecutive k, with .trans where they hold consecutive m (A) or n
// (B). The elements must lie as the instruction's fragments: rows of 8 consecutive
// elements, each starting 16 bytes aligned, at a constant stride or permuted
// (swizzle_storage), all proved from the load indices; operands that do not are left as
// loads.
// Expects: shared memory packed (pack_shared_memory), the lanes' thread loops not yet fused.
// Guarantees: each ldmatrix reads exactly the elements the loads it replaces read.
void load_mma_operands_with_ldmatrix(LoweredKernel &kernel);

} // namespace lowering
} // namespace aicf

#endif
