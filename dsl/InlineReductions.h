#ifndef AICF_INLINE_REDUCTIONS_H
#define AICF_INLINE_REDUCTIONS_H

// Reductions written inline: sum(f(r.x, y)) is a new Func over the free Vars of its argument
// (here y), initialized to the identity and updated over the RDom the argument uses.

#include "dsl/Tuple.h"
#include "dsl/ir/IR.h"

#include <string>

namespace aicf {

// Without a name, each reduction gets a new one ("sum0", "sum1", ...); with a name, the Func
// is called exactly that, so that a pipeline built again the same way is the same pipeline
// (its compiled code is found again) and its schedule can name it.
ir::Expr sum(const ir::Expr &e);
ir::Expr sum(const ir::Expr &e, const std::string &name);
ir::Expr product(const ir::Expr &e);
ir::Expr product(const ir::Expr &e, const std::string &name);
ir::Expr maximum(const ir::Expr &e);
ir::Expr maximum(const ir::Expr &e, const std::string &name);
ir::Expr minimum(const ir::Expr &e);
ir::Expr minimum(const ir::Expr &e, const std::string &name);
// The point of the RDom where e is largest (smallest), first one on ties, and the value
// there: Tuple(coordinate 0, coordinate 1, ..., value). A float NaN counts as beyond every
// number: where e is NaN somewhere, the result is its first NaN and that point.
Tuple argmax(const ir::Expr &e);
Tuple argmax(const ir::Expr &e, const std::string &name);
Tuple argmin(const ir::Expr &e);
Tuple argmin(const ir::Expr &e, const std::string &name);

} // namespace aicf

#endif
