#ifndef AICF_IR_SIMPLIFY_H
#define AICF_IR_SIMPLIFY_H

// The simplifier: folds constants, puts integer arithmetic into a canonical form (so equal
// linear combinations compare equal and cancel), and uses known bounds of variables to
// decide min/max and comparisons. It never changes what an expression computes, including
// integer overflow behaviour of the types involved beyond what the IR defines (int32 index
// arithmetic is assumed not to overflow, as in Halide).

#include "dsl/ir/IR.h"
#include "dsl/ir/Interval.h"
#include "dsl/ir/Scope.h"

namespace aicf {
namespace ir {

// `bounds` gives known ranges of free variables (each end may be undefined).
Expr simplify(const Expr &e, const Scope<Interval> &bounds = Scope<Interval>());
// Also removes dead code: loops of extent zero or one, if/else on constant conditions,
// unused lets, and asserts that are provably true.
Stmt simplify(const Stmt &s, const Scope<Interval> &bounds = Scope<Interval>());

// The last simplification before code generation: as above, and short linear let values
// (`let y = yo * 8 + y.min + 3`) are also copied into their uses, so that address arithmetic
// cancels (`(y - y.min) * 48`) and LLVM can tell the accesses of one buffer apart. Earlier
// passes keep such lets: guards written in a split's original variable tell bounds analysis
// which range they restrict.
Stmt simplify_for_codegen(const Stmt &s);

// True if the condition holds for every value of its free variables (false means "could
// not prove", not "is false").
bool can_prove(const Expr &condition, const Scope<Interval> &bounds = Scope<Interval>());

} // namespace ir
} // namespace aicf

#endif
