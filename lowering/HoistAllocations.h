#ifndef AICF_LOWERING_HOIST_ALLOCATIONS_H
#define AICF_LOWERING_HOIST_ALLOCATIONS_H

#include "dsl/ir/IR.h"

namespace aicf {
namespace lowering {

// Moves heap allocations whose size does not change while a serial loop runs out of that
// loop: one allocation serves every iteration instead of a malloc and free per iteration (a
// Func computed at an inner loop of its consumer, with a size the stack cannot hold). The
// storage holds nothing from one iteration to the next that the pipeline reads: each
// iteration computes what it reads before reading it.
//
// Not hoisted: allocations whose extents use a name bound inside the loop or read memory;
// allocations under a condition inside the loop (hoisting would allocate where the program
// did not); names allocated twice in the loop, or used in it outside their allocation. Never
// out of parallel, vectorized or GPU loops, nor out of a serial loop around one: each thread
// keeps storage of its own. Where the loop may run no iteration, the hoisted storage is
// empty then.
//
// Expects: flattened storage, after unrolling, vectorization and the simplification for code
// generation (which substitutes the lets that name a storage's size).
ir::Stmt hoist_allocations(const ir::Stmt &s);

} // namespace lowering
} // namespace aicf

#endif
