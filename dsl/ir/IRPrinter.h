#ifndef AICF_IR_IR_PRINTER_H
#define AICF_IR_IR_PRINTER_H

// Prints IR as readable pseudo-code.

#include "dsl/ir/IR.h"

#include <ostream>
#include <string>

namespace aicf {
namespace ir {

std::ostream &operator<<(std::ostream &os, const Expr &e);
std::ostream &operator<<(std::ostream &os, const Stmt &s);
std::ostream &operator<<(std::ostream &os, const Type &t);

std::string to_string(const Expr &e);
std::string to_string(const Stmt &s);
// A one-line statement (a Provide, a Store) as a message quotes it: without the final newline.
std::string statement_text(const Stmt &s);
// The expression with each node that is reached more than once (a value an algorithm uses
// several times) written once and then referred to by number: linear in the number of
// distinct nodes, where the plain text grows with every path through them. Distinct
// expressions give distinct texts.
std::string to_shared_string(const Expr &e);

} // namespace ir
} // namespace aicf

#endif
