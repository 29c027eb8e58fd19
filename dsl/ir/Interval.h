#ifndef AICF_IR_INTERVAL_H
#define AICF_IR_INTERVAL_H

// Closed intervals of values with symbolic bounds. An undefined min (or max) means the
// interval is unbounded below (or above).

#include "dsl/ir/IR.h"

#include <vector>

namespace aicf {
namespace ir {

struct Interval {
    Expr min, max;

    Interval() = default;
    Interval(Expr mn, Expr mx) : min(std::move(mn)), max(std::move(mx)) {}
    static Interval everything() { return Interval(); }
    static Interval single_point(const Expr &e) { return Interval(e, e); }

    bool has_lower_bound() const { return min.defined(); }
    bool has_upper_bound() const { return max.defined(); }
    bool is_bounded() const { return min.defined() && max.defined(); }
    // Whether min and max are the same value (structurally equal).
    bool is_single_point() const;
};

// The smallest interval holding both (symbolic min/max of the bounds, simplified).
Interval interval_union(const Interval &a, const Interval &b);
// The largest interval inside both.
Interval interval_intersection(const Interval &a, const Interval &b);

// A box: one interval per dimension of a Func or buffer.
using Box = std::vector<Interval>;
Box box_union(const Box &a, const Box &b);

} // namespace ir
} // namespace aicf

#endif
