#ifndef AICF_LOWERING_INLINE_H
#define AICF_LOWERING_INLINE_H

#include "dsl/Function.h"

#include <vector>

namespace aicf {
namespace lowering {

// Replaces every call to one of `funcs` in `s` by that Func's pure definition at the call's
// arguments. Each definition first has the calls it makes to the Funcs before it in `funcs`
// replaced and, unless it is a float, is then simplified, so that an integer chain of N
// inlined stages that each read the previous one twice costs work in proportion to the
// simplified definitions (a blur of N + 1 taps), not to the 2^N calls of the expanded tree.
// Expects: `funcs` in realization order (producers first), none with update definitions.
// Guarantees: no Call to any of them remains.
ir::Stmt inline_functions(const ir::Stmt &s, const std::vector<ir::Function> &funcs);

} // namespace lowering
} // namespace aicf

#endif
