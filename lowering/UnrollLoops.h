#ifndef AICF_LOWERING_UNROLL_LOOPS_H
#define AICF_LOWERING_UNROLL_LOOPS_H

#include "dsl/Function.h"
#include "dsl/ir/IR.h"

#include <map>
#include <string>

namespace aicf {
namespace lowering {

// Replaces each Unrolled loop by copies of its body, one per iteration.
// Expects: simplified IR, so a loop scheduled with a constant factor has a constant extent.
// Raises CompileError naming the loop when its extent is not constant or exceeds 256, and
// naming the loops when unrolled loops inside one another would copy a body more than 4096
// times, or make more than 16384 lanes in all (256 copies of a vector of 64); `env`'s Funcs
// are named in the advice.
ir::Stmt unroll_loops(const ir::Stmt &s, const std::map<std::string, ir::Function> &env);

} // namespace lowering
} // namespace aicf

#endif
