#ifndef AICF_IR_MONOTONIC_H
#define AICF_IR_MONOTONIC_H

// Whether an integer expression only grows or only shrinks as one variable grows.

#include "dsl/ir/IR.h"

#include <string>

namespace aicf {
namespace ir {

// How an integer expression moves as one variable grows, the others fixed.
enum class Monotonic {
    Constant,   // e does not use the variable
    Increasing, // never decreases
    Decreasing, // never increases
    Unknown,
};

// Found through sums, differences, products and floor quotients by constants, mins, maxes
// and widening casts; anything else that uses the variable is Unknown. Assumes the arithmetic
// does not wrap, as bounds do.
Monotonic is_monotonic(const Expr &e, const std::string &var);

} // namespace ir
} // namespace aicf

#endif
