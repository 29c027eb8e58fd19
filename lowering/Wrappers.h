#ifndef AICF_LOWERING_WRAPPERS_H
#define AICF_LOWERING_WRAPPERS_H

#include "dsl/Function.h"

#include <map>
#include <string>
#include <vector>

namespace aicf {
namespace lowering {

// Points each consumer's calls at the wrappers made by Func::in: a wrapper made for that
// consumer first, else a wrapper for all consumers (wrappers of wrappers chain). Consumers
// whose calls change are replaced in `env` by rewritten copies; the user's Funcs are left as
// they are. Returns the outputs as found in the updated `env`.
std::vector<ir::Function> redirect_to_wrappers(const std::vector<ir::Function> &outputs,
                                               std::map<std::string, ir::Function> &env);

} // namespace lowering
} // namespace aicf

#endif
