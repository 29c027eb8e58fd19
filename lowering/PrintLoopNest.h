#ifndef AICF_LOWERING_PRINT_LOOP_NEST_H
#define AICF_LOWERING_PRINT_LOOP_NEST_H

#include "dsl/ir/IR.h"

#include <string>

namespace aicf {
namespace lowering {

// The loop structure of a lowered statement, without bounds arithmetic or checks:
//   produce f:
//     for f.s0.y:
//       vectorized for f.s0.x.xi in [0, 8):
//         f(...) = ...
// Expects the output of schedule_functions or later passes.
std::string print_loop_nest(const ir::Stmt &s);

} // namespace lowering
} // namespace aicf

#endif
