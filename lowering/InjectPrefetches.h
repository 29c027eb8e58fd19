#ifndef AICF_LOWERING_INJECT_PREFETCHES_H
#define AICF_LOWERING_INJECT_PREFETCHES_H

#include "dsl/Function.h"
#include "dsl/ir/IR.h"

#include <map>
#include <string>

namespace aicf {
namespace lowering {

// Software prefetches (Stage::prefetch). Each request that build_stage put at the top of a
// loop's body becomes, in the same place, prefetch intrinsics over the region the loop's body
// reads of the Func or input buffer, with the look-ahead loop's variable advanced by the
// offset: one prefetch per 64-byte line of the innermost stored dimension, inside loops over
// the other dimensions.
// Expects: bounds inference done (the body's reads are final), each request an
// Evaluate(prefetch_request(name, at loop, from loop, offset, strategy, stage)) inside the
// body of its loop `at`, not inside another loop there.
// Guarantees: every address prefetched lies in a region some iteration of the loops really
// reads (an iteration past the end of the look-ahead loop is skipped or clamped to the last),
// so the region is inside the Func's storage or the buffer's checked extent. A request that
// cannot be honoured raises a CompileError naming the stage and the loop: a GPU or vectorized
// loop, a Func with no storage around the loop, a loop that does not read what it prefetches,
// a region that cannot be bounded.
ir::Stmt inject_prefetches(const ir::Stmt &s, const std::map<std::string, ir::Function> &env);

} // namespace lowering
} // namespace aicf

#endif
