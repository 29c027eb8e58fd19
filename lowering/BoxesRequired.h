#ifndef AICF_LOWERING_BOXES_REQUIRED_H
#define AICF_LOWERING_BOXES_REQUIRED_H

#include "dsl/ir/IR.h"
#include "dsl/ir/Interval.h"
#include "dsl/ir/Scope.h"

#include <string>
#include <utility>
#include <vector>

namespace aicf {
namespace lowering {

// What a statement reads of a Func or an input buffer.
struct Access {
    ir::Box box;       // one interval per dimension, in terms of variables outside `s`
    bool used = false; // false when `s` never reads it
    // When defined, the access happens only if this holds (in terms of variables outside
    // `s`): the loops around every access have no iterations otherwise. Undefined when some
    // access happens unconditionally, or its loops' extents depend on what `s` binds.
    ir::Expr condition;
    // With lets by name (below): lets of `s` that the box and condition name instead of
    // expanding, each before its uses. Their values use only names defined outside `s`, so
    // whoever places the box outside `s` defines them there first (see with_definitions).
    std::vector<std::pair<std::string, ir::Expr>> definitions;
};

// Whether lets inside the statement may be named in the region rather than expanded. Bounds
// inference names a let whose value, with the lets it uses expanded, would be too large: the
// regions of a chain of stages computed at one level each refer to the next stage's region,
// and expanded they grow geometrically with the chain's length.
enum class LetsByName { Never, WhenLarge };

// `s` inside the lets `a.definitions`.
ir::Stmt with_definitions(const Access &a, ir::Stmt s);
// `s` inside those of the lets `a.definitions` that it uses, directly or through another.
ir::Stmt with_used_definitions(const Access &a, ir::Stmt s);
// Appends the definitions of `from` that `into` lacks (by name). Both lists come from the same
// statement, so each list's order still defines every let before its uses.
void merge_definitions(Access &into, const Access &from);

// The checks that buffer `buffer` covers the region `read` of it (in terms of variables
// outside the statement it came from, with its definitions: see with_definitions), one per
// dimension: each fails with an InputTooSmall runtime error naming `described` (the buffer
// and what reads it) unless the region is empty or its condition does not hold. Bounds in 64
// bits, so that near the ends of the int32 range a bound like x + 1 does not wrap.
std::vector<ir::Stmt> checks_buffer_covers(const std::string &buffer, const Access &read,
                                           const std::string &described);

// The region of Func (or input buffer) `name` that `s` reads, given the ranges of variables
// defined outside s in `scope`. Loops and lets inside `s` are accounted for. `facts` are
// ranges of variables outside `s` that the region stays symbolic in (the loops around `s`):
// they only decide what can be proven about it.
Access box_required(const ir::Stmt &s, const std::string &name,
                    const ir::Scope<ir::Interval> &scope = ir::Scope<ir::Interval>(),
                    const ir::Scope<ir::Interval> &facts = ir::Scope<ir::Interval>(),
                    LetsByName by_name = LetsByName::Never);
// The same for what `e` reads.
Access box_required(const ir::Expr &e, const std::string &name,
                    const ir::Scope<ir::Interval> &scope = ir::Scope<ir::Interval>());
// The region of Func `name` that `s` writes (its Provide nodes).
Access box_provided(const ir::Stmt &s, const std::string &name,
                    const ir::Scope<ir::Interval> &scope = ir::Scope<ir::Interval>(),
                    const ir::Scope<ir::Interval> &facts = ir::Scope<ir::Interval>(),
                    LetsByName by_name = LetsByName::Never);

} // namespace lowering
} // namespace aicf

#endif
