#ifndef AICF_LOWERING_INLINE_H
#define AICF_LOWERING_INLINE_H

#include "dsl/Function.h"

namespace aicf {
namespace lowering {

// Replaces every call to `f` in `s` by f's pure definition at the call's arguments.
// Expects: f has no update definitions. Guarantees: no Call to f remains.
ir::Stmt inline_function(const ir::Stmt &s, const ir::Function &f);
ir::Expr inline_function(const ir::Expr &e, const ir::Function &f);

} // namespace lowering
} // namespace aicf

#endif
