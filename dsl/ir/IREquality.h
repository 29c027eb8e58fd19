#ifndef AICF_IR_IR_EQUALITY_H
#define AICF_IR_IR_EQUALITY_H

// Structural equality and hashing of IR: two trees are equal when they have the same shape,
// types, names and constants, whether or not they share nodes.

#include "dsl/ir/IR.h"

#include <cstddef>

namespace aicf {
namespace ir {

bool equal(const Expr &a, const Expr &b);
bool equal(const Stmt &a, const Stmt &b);
size_t structural_hash(const Expr &e);
size_t structural_hash(const Stmt &s);

// For std::unordered_map keyed by structure.
struct ExprHash {
    size_t operator()(const Expr &e) const { return structural_hash(e); }
};
struct ExprEqual {
    bool operator()(const Expr &a, const Expr &b) const { return equal(a, b); }
};

} // namespace ir
} // namespace aicf

#endif
