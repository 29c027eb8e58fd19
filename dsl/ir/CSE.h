#ifndef AICF_IR_CSE_H
#define AICF_IR_CSE_H

// Common subexpression elimination: a subexpression that an expression computes more than
// once (structurally equal, used by two different parents) is computed once, bound by a Let
// around that expression, and used by name. Constants, variables and broadcasts or ramps of
// them are left in place; nothing that contains a call with side effects or a Let is moved.
// Values and the order of side effects do not change.

#include "dsl/ir/IR.h"

namespace aicf {
namespace ir {

Expr common_subexpression_elimination(const Expr &e);
// Each expression of the statement on its own (a Store's value, its index, a loop's bounds...).
Stmt common_subexpression_elimination(const Stmt &s);

} // namespace ir
} // namespace aicf

#endif
