#ifndef AICF_LOWERING_FUSED_THREAD_LOOPS_H
#define AICF_LOWERING_FUSED_THREAD_LOOPS_H

#include "dsl/ir/IR.h"

namespace aicf {
namespace lowering {

// Loops fused onto GPU threads divide their index by the inner loop's extent (see
// build_stage). Where that extent varies with an outer loop but has a constant bound (the
// region a reduction's last, shorter step stages), the loop fuses over the bound: each
// fused_extent_bound(n) becomes the bound, and the guard build_stage put beside it
// (t % fused_extent_bound(n) < n) keeps the points past n idle; where n has no constant bound
// (or one past 65536), n itself, and the guard is true.
// Expects: bounds inference done (each extent is a let's value around the loop).
// Guarantees: no fused_extent_bound remains; every point the fused loop ran before runs once,
// on the same thread where the extent is its bound.
ir::Stmt bound_fused_thread_loops(const ir::Stmt &s);

} // namespace lowering
} // namespace aicf

#endif
