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

} // namespace ir
} // namespace aicf

#endif
