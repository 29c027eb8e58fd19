#ifndef AICF_LOWERING_REALIZATION_ORDER_H
#define AICF_LOWERING_REALIZATION_ORDER_H

#include "dsl/Function.h"

#include <map>
#include <string>
#include <vector>

namespace aicf {
namespace lowering {

// The Funcs of `env` ordered so every Func comes after the Funcs it calls (producers first,
// outputs last). Raises CompileError naming the cycle if a Func depends on itself through
// other Funcs.
std::vector<std::string> realization_order(const std::vector<ir::Function> &outputs,
                                           const std::map<std::string, ir::Function> &env);

} // namespace lowering
} // namespace aicf

#endif
