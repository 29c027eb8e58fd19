#ifndef AICF_LOWERING_STRIPED_REGISTERS_H
#define AICF_LOWERING_STRIPED_REGISTERS_H

#include "dsl/ir/IR.h"

namespace aicf {
namespace lowering {

// Funcs held in registers striped across threads: a row computed by the lanes of a warp (or
// the threads of a block) and kept in their registers for later stages, each thread holding
// only the elements it computed.
//
// A Func stored in registers whose pure definition runs a thread loop L along x, where one
// dimension d is written at x = base + (L - L.min) * S + inner + outer, the inner loops
// covering less than S and each outer loop stepping by a multiple of T * S (T threads in L):
// element x lives in thread ((x - base) / S) % T, at position
// ((x - base) / (T * S)) * S + (x - base) % S of its registers. Such a Func inside another
// thread loop must be striped; at the block level it is striped when it has outer loops (a
// register tile otherwise).
//
// Expects: Realizes placed by place_gpu_storage (before register_tiles).
// Guarantees: every access to a striped Func, in every stage, is made inside thread loops
// along x by the thread that holds the element, which is proven from the loops' bounds (the
// modular identities of the access's index, not its shape); dimension d of its Realize and
// its accesses are positions in the thread's registers. Raises CompileError naming the Func,
// the access and the layout otherwise.
ir::Stmt stripe_register_funcs(const ir::Stmt &s);

} // namespace lowering
} // namespace aicf

#endif
