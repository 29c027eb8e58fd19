#ifndef AICF_INLINE_REDUCTIONS_H
#define AICF_INLINE_REDUCTIONS_H

// Reductions written inline: sum(f(r.x, y)) is a new Func over the free Vars of its argument
// (here y), initialized to the identity and updated over the RDom the argument uses.
// sum(r, e) names the RDom to reduce over: the variables of any other RDom in e (an update's
// own, around the reduction) are then free variables too, each value a reduction of its own:
// f(t) += sum(rd, q(rd) * k(rd, rt)) inside an update over rt.

#include "dsl/RDom.h"
#include "dsl/Tuple.h"
#include "dsl/ir/IR.h"

#include <string>

namespace aicf {

// Without a name, each reduction gets a new one ("sum0", "sum1", ...); with a name, the Func
// is called exactly that, so that a pipeline built again the same way is the same pipeline
// (its compiled code is found again) and its schedule can name it.
ir::Expr sum(const ir::Expr &e);
ir::Expr sum(const ir::Expr &e, const std::string &name);
ir::Expr sum(const RDom &r, const ir::Expr &e);
ir::Expr sum(const RDom &r, const ir::Expr &e, const std::string &name);
ir::Expr product(const ir::Expr &e);
ir::Expr product(const ir::Expr &e, const std::string &name);
ir::Expr product(const RDom &r, const ir::Expr &e);
ir::Expr product(const RDom &r, const ir::Expr &e, const std::string &name);
ir::Expr maximum(const ir::Expr &e);
ir::Expr maximum(const ir::Expr &e, const std::string &name);
ir::Expr maximum(const RDom &r, const ir::Expr &e);
ir::Expr maximum(const RDom &r, const ir::Expr &e, const std::string &name);
ir::Expr minimum(const ir::Expr &e);
ir::Expr minimum(const ir::Expr &e, const std::string &name);
ir::Expr minimum(const RDom &r, const ir::Expr &e);
ir::Expr minimum(const RDom &r, const ir::Expr &e, const std::string &name);
// The point of the RDom where e is largest (smallest), first one on ties, and the value
// there: Tuple(coordinate 0, coordinate 1, ..., value). A float NaN counts as beyond every
// number: where e is NaN somewhere, the result is its first NaN and that point.
Tuple argmax(const ir::Expr &e);
Tuple argmax(const ir::Expr &e, const std::string &name);
Tuple argmax(const RDom &r, const ir::Expr &e);
Tuple argmax(const RDom &r, const ir::Expr &e, const std::string &name);
Tuple argmin(const ir::Expr &e);
Tuple argmin(const ir::Expr &e, const std::string &name);
Tuple argmin(const RDom &r, const ir::Expr &e);
Tuple argmin(const RDom &r, const ir::Expr &e, const std::string &name);

} // namespace aicf

#endif
