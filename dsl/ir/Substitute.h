#ifndef AICF_IR_SUBSTITUTE_H
#define AICF_IR_SUBSTITUTE_H

// Replacing free variables by expressions, and asking which variables an expression uses.

#include "dsl/ir/IR.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace aicf {
namespace ir {

// Replaces free occurrences of variables (those not bound by an inner Let/LetStmt of the same
// name) by the given expressions.
Expr substitute(const std::string &name, const Expr &replacement, const Expr &e);
Stmt substitute(const std::string &name, const Expr &replacement, const Stmt &s);
Expr substitute(const std::map<std::string, Expr> &replacements, const Expr &e);
Stmt substitute(const std::map<std::string, Expr> &replacements, const Stmt &s);

// Replaces the variables bound by `lets` (outermost first; a value may use the variables
// bound before it) by their values, except those named in `keep`.
Expr substitute_lets(const std::vector<std::pair<std::string, Expr>> &lets, Expr e,
                     const std::set<std::string> &keep = {});

// Replaces every occurrence of `find` (compared structurally) by `replacement`.
Expr substitute_expr(const Expr &find, const Expr &replacement, const Expr &e);

// Whether e (or s) refers to a free variable of the given name.
bool uses_var(const Expr &e, const std::string &name);
bool uses_var(const Stmt &s, const std::string &name);
bool uses_vars(const Expr &e, const std::set<std::string> &names);

// The names of the free variables of e (or s), including the buffers Loads and Stores name.
std::set<std::string> free_vars(const Expr &e);
std::set<std::string> free_vars(const Stmt &s);

} // namespace ir
} // namespace aicf

#endif
