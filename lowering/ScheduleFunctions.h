#ifndef AICF_LOWERING_SCHEDULE_FUNCTIONS_H
#define AICF_LOWERING_SCHEDULE_FUNCTIONS_H

#include "dsl/Function.h"

#include <map>
#include <string>
#include <vector>

namespace aicf {
namespace lowering {

// Whether a Func is computed inline in its consumers: by default every Func that is not an
// output and has no update definitions.
bool is_inlined(const ir::Function &f, const std::vector<ir::Function> &outputs);

// Builds the loop nests of the pipeline. Each Func that is not inlined becomes
//   realize f(region) { produce f { loops of each stage } consume f { ... } }
// around its consumers; outputs are produced innermost; inlined Funcs are substituted into
// their callers. Loop bounds are symbolic (f.s0.x.min, f.s0.x.max; region variables
// f.x.min_realized, f.x.extent_realized): bounds inference defines them.
ir::Stmt schedule_functions(const std::vector<ir::Function> &outputs,
                            const std::vector<std::string> &order,
                            const std::map<std::string, ir::Function> &env);

} // namespace lowering
} // namespace aicf

#endif
