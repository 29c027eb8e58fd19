#ifndef AICF_IR_BOUNDS_H
#define AICF_IR_BOUNDS_H

// Interval arithmetic over expressions: the range of values an expression can take when its
// free variables range over given intervals.

#include "dsl/ir/IR.h"
#include "dsl/ir/Interval.h"
#include "dsl/ir/Scope.h"

namespace aicf {
namespace ir {

// The bounds of e given the ranges of variables in `scope`. Variables not in scope are
// treated as symbols (the result may mention them). Expressions whose range cannot be found
// (a Load, a Call to a Func) are bounded by their type when it is narrow, else unbounded.
Interval bounds_of_expr_in_scope(const Expr &e, const Scope<Interval> &scope);

} // namespace ir
} // namespace aicf

#endif
