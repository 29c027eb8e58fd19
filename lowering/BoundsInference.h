#ifndef AICF_LOWERING_BOUNDS_INFERENCE_H
#define AICF_LOWERING_BOUNDS_INFERENCE_H

#include "dsl/Function.h"

#include <map>
#include <string>
#include <vector>

namespace aicf {
namespace lowering {

// Defines the symbolic loop bounds and realized regions that schedule_functions left open.
// Expects: the output of schedule_functions. Guarantees: every f.sN.x.min / .max and
// f.x.min_realized / .extent_realized is bound by a LetStmt outside the loops that use it:
//  - outputs iterate over their buffer's region (variables "<out>.min.d", "<out>.extent.d"),
//  - every other Func is realized over the union of what its consumers read and what its
//    own update definitions read and write; its pure stage computes all of that region and
//    its updates the part its consumers read.
// Raises CompileError when a region cannot be bounded (a data-dependent index), naming the
// Func and the dimension. Adds asserts that updates of outputs stay inside the buffer.
ir::Stmt bounds_inference(const ir::Stmt &s, const std::vector<ir::Function> &outputs,
                          const std::map<std::string, ir::Function> &env);

} // namespace lowering
} // namespace aicf

#endif
