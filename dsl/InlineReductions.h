#ifndef AICF_INLINE_REDUCTIONS_H
#define AICF_INLINE_REDUCTIONS_H

// Reductions written inline: sum(f(r.x, y)) is a new Func over the free Vars of its argument
// (here y), initialized to the identity and updated over the RDom the argument uses.

#include "dsl/Tuple.h"
#include "dsl/ir/IR.h"

#include <string>

namespace aicf {

ir::Expr sum(const ir::Expr &e, const std::string &name = "sum");
ir::Expr product(const ir::Expr &e, const std::string &name = "product");
ir::Expr maximum(const ir::Expr &e, const std::string &name = "maximum");
ir::Expr minimum(const ir::Expr &e, const std::string &name = "minimum");
// The point of the RDom where e is largest (smallest), first one on ties, and the value
// there: Tuple(coordinate 0, coordinate 1, ..., value). A float NaN counts as beyond every
// number: where e is NaN somewhere, the result is its first NaN and that point.
Tuple argmax(const ir::Expr &e, const std::string &name = "argmax");
Tuple argmin(const ir::Expr &e, const std::string &name = "argmin");

} // namespace aicf

#endif
