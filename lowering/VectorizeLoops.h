#ifndef AICF_LOWERING_VECTORIZE_LOOPS_H
#define AICF_LOWERING_VECTORIZE_LOOPS_H

#include "dsl/ir/IR.h"

namespace aicf {
namespace lowering {

// Replaces each Vectorized loop by one iteration over vectors: the loop variable becomes
// ramp(min, 1, extent) and every value that depends on it becomes a vector. Conditions that
// vary across lanes become predicates on the loads and stores they guard.
// Expects: flat storage (after storage_flattening) and simplified IR. Raises CompileError
// naming the loop when its extent is not a constant in [2, 64]. A loop whose body cannot be
// vectorized (an allocation, a nested vectorized loop, a loop whose bounds vary across
// lanes, or a store every lane makes to one address) stays a serial loop, which computes the
// same values; AICF_DEBUG=1 says why.
ir::Stmt vectorize_loops(const ir::Stmt &s);

} // namespace lowering
} // namespace aicf

#endif
