#ifndef AICF_LOWERING_LINEAR_TESTS_H
#define AICF_LOWERING_LINEAR_TESTS_H

// Tests of a loop variable read as linear forms, for loop partitioning (PartitionLoops.cpp):
// a test holds on one side of a bound of the variable where it is coef * v + rest < 0.

#include "dsl/ir/IR.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace aicf {
namespace lowering {

// e as coef * v + rest, with rest free of v and computed in 64 bits. Only sums, differences
// and products by constants of 32-bit integers are linear here. Each partial result that
// depends on v is added to `partials`: the int32 arithmetic agrees with the 64-bit analysis
// only while none of them wraps.
struct Linear {
    int64_t coef = 0;
    ir::Expr rest;
};

std::optional<Linear> linear_in(const ir::Expr &e, const std::string &v,
                                std::vector<Linear> &partials);

// a - b + adjust < 0 where one side is a quotient of v's linear form by a positive
// constant plus terms free of v, and the other is free of v (an index of an upsampling,
// x / 2 + 1, clamped to an edge): x / c < t holds exactly where x < t * c (the division
// is Euclidean, floor division for a positive divisor). As coef * v + rest < 0.
// The quotient plus its terms is an int32 value too: added to `values`.
std::optional<Linear> quotient_test(const ir::Expr &a, const ir::Expr &b, const std::string &v,
                                    int64_t adjust, std::vector<Linear> &partials,
                                    std::vector<ir::Expr> &values);

} // namespace lowering
} // namespace aicf

#endif
