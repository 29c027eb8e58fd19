#ifndef AICF_DSL_OPERATOR_CHAINS_H
#define AICF_DSL_OPERATOR_CHAINS_H

// Chains of one associative and commutative operation on integers or bools, as the simplifier
// regroups them: an update f + (x + 5) written by the user is lowered as (f + x) + 5, which is
// still f combined with x + 5. Exact in integer (wrapping) and bool arithmetic only; for
// floats the grouping decides the rounding, and the chain is the operation as written.

#include "dsl/Associative.h"
#include "dsl/ir/Expr.h"

#include <optional>
#include <utility>
#include <vector>

namespace aicf {

struct OperatorChain {
    Combiner op;
    // The operands, each with whether it is subtracted (only in a sum: a - b + c).
    std::vector<std::pair<ir::Expr, bool>> operands;
};

// The Combiner of e's outermost operation (not a Sub), with its operands.
std::optional<Combiner> binary_operation(const ir::Expr &e, ir::Expr &a, ir::Expr &b);

// a op b.
ir::Expr combine(Combiner op, const ir::Expr &a, const ir::Expr &b);

// v as a chain of its outermost operation (+ and - together), where v is an integer or bool
// and that operation is one a Combiner names; nothing otherwise.
std::optional<OperatorChain> operator_chain(const ir::Expr &v);

// The operands combined again by `op` (at least one; a subtracted one is negated).
ir::Expr combine_chain(Combiner op, const std::vector<std::pair<ir::Expr, bool>> &operands);

} // namespace aicf

#endif
