#ifndef AICF_IR_BOUNDS_H
#define AICF_IR_BOUNDS_H

// Interval arithmetic over expressions: the range of values an expression can take when its
// free variables range over given intervals.

#include "dsl/ir/IR.h"
#include "dsl/ir/Interval.h"
#include "dsl/ir/Scope.h"

#include <map>
#include <optional>
#include <string>
#include <utility>

namespace aicf {
namespace ir {

// The ranges of the values of some Funcs, by name and value index (a Tuple's element). While
// one lives, bounds_of_expr_in_scope on the same thread bounds a call to one of those Funcs by
// its range, where it would otherwise know only the call's type: the index of a gather from a
// Func computed as clamp(i, 0, 15) lies in [0, 15]. The innermost one living applies.
class FuncValueRanges {
public:
    using Ranges = std::map<std::pair<std::string, int>, Interval>;
    explicit FuncValueRanges(Ranges ranges);
    ~FuncValueRanges();
    FuncValueRanges(const FuncValueRanges &) = delete;
    FuncValueRanges &operator=(const FuncValueRanges &) = delete;
    // The ranges that apply on this thread (none where no FuncValueRanges lives).
    static const Ranges *current();

private:
    Ranges ranges;
    const FuncValueRanges *outer;
};

// The bounds of e given the ranges of variables in `scope`. Variables not in scope are
// treated as symbols (the result may mention them). Expressions whose range cannot be found
// (a Load, a Call to a Func) are bounded by their type when it is narrow, else unbounded.
Interval bounds_of_expr_in_scope(const Expr &e, const Scope<Interval> &scope);

// e with each rounded-down multiple of an integer quotient, k * (m / c) * c for a constant
// c > 0, written as k * (m - m % c); undefined when e has none. Bounding both forms and keeping
// the tighter end helps where m shares variables with the rest of e: the start of a tile plus
// its clamped extent rounded down, t + (min(e - t, 18) / 8) * 8, simplifies to
// min(e, t + 18) - min(e - t, 18) % 8, whose bounds no longer count t twice; the quotient form
// stays exact where m is a single value.
Expr quotients_as_remainders(const Expr &e);

// The bounds of e and of quotients_as_remainders(e), the tighter end of each kept (both ends
// are valid bounds, so their min and max are too). An end that e leaves unbounded stays so:
// it may stand for arithmetic that wraps. A constant end stays constant unless the other form
// gives a smaller constant.
Interval bounds_of_expr_in_scope_with_remainders(const Expr &e, const Scope<Interval> &scope);

} // namespace ir
} // namespace aicf

#endif
