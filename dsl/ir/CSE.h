#ifndef AICF_IR_CSE_H
#define AICF_IR_CSE_H

// Common subexpression elimination: a subexpression that an expression computes more than
// once (structurally equal, used by two different parents) is computed once, bound by a Let
// around that expression, and used by name. Constants, variables and broadcasts or ramps of
// them are left in place, as are alignment hints and the Ramps they are the base of; nothing
// that contains a call with side effects (an alignment hint has none) or a Let is moved.
// Values and the order of side effects do not change.

#include "dsl/ir/IR.h"

namespace aicf {
namespace ir {

Expr common_subexpression_elimination(const Expr &e);
// Each expression of the statement on its own (a Store's value, its index, a loop's bounds...).
Stmt common_subexpression_elimination(const Stmt &s);

// An expression whose tree is far larger than its graph (a value used twice per step, for
// many steps: v = v * 0.9f + sqrt(v * v + 1) twelve times is 531441 leaves and 60 nodes)
// with its shared parts bound by Lets, so that passes that walk it as a tree take time in
// proportion to the graph; any other expression unchanged.
Expr share_repeated_subexpressions(const Expr &e);

} // namespace ir
} // namespace aicf

#endif
