#ifndef AICF_IR_DIFFERENCE_OF_CHAINS_H
#define AICF_IR_DIFFERENCE_OF_CHAINS_H

// The constant range of the difference of two clamped values, where interval arithmetic,
// which bounds each alone, finds none (Bounds uses it for differences).

#include "dsl/ir/IR.h"

#include <cstdint>
#include <optional>

namespace aicf {
namespace ir {

// Constant ends of a - b, where found, for a and b chains of min or max over values a
// constant apart: min(t + 31, e) - min(t, t + 1, e) lies in [0, 31] whatever t and e (the
// extent of a clamped window). Each end optional; for integer types that do not wrap.
struct DifferenceRange {
    std::optional<int64_t> lo, hi;
};
DifferenceRange difference_of_chains(const Expr &a, const Expr &b);
// The same within a budget of steps, shared with the caller's other searches (the types not
// checked).
DifferenceRange difference_of_chains(const Expr &a, const Expr &b, int &budget);

} // namespace ir
} // namespace aicf

#endif
