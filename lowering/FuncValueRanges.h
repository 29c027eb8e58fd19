#ifndef AICF_LOWERING_FUNC_VALUE_RANGES_H
#define AICF_LOWERING_FUNC_VALUE_RANGES_H

#include "dsl/Function.h"
#include "dsl/ir/Bounds.h"

#include <map>
#include <string>

namespace aicf {
namespace lowering {

// The range of the values of each integer (or bool) Func of `env` that has only a pure
// definition, over all its points: the bounds of its values with its arguments unbounded,
// calls to other such Funcs bounded by their ranges. A Func read as an index (a lookup of
// clamp(ids(x), 0, n - 1) computed at the root) then bounds the region it reads as the
// same index inlined would. Ends are constants or Params; a Func whose range has neither
// end is left out.
ir::FuncValueRanges::Ranges func_value_ranges(const std::map<std::string, ir::Function> &env);

} // namespace lowering
} // namespace aicf

#endif
