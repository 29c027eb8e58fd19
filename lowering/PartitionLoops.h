#ifndef AICF_LOWERING_PARTITION_LOOPS_H
#define AICF_LOWERING_PARTITION_LOOPS_H

#include "dsl/ir/IR.h"

#include <set>
#include <string>

namespace aicf {
namespace lowering {

// Splits each serial loop whose body tests its variable into up to three loops: a prologue,
// a steady state and an epilogue. Throughout the steady state the tests are known to pass,
// so it runs without them: the guards of GuardWithIf tails, RDom predicates, prefetch
// guards (the conditions of `if` statements), the conditions of selects marked likely(), and,
// in a loop with no serial or parallel loop inside, a min or max with the variable on one
// side (a ShiftInwards tail's min(x * 16, n - 16), an index clamped to an edge), which the
// steady state replaces by the side it picks there. In a clamp, max(min(e, hi), lo), the max
// is read as a test of e, and dropped where the min is too: the steady state reads e.
// A vectorized loop inside the steady state then needs no masks. The prologue and epilogue
// keep every test, so the three loops compute exactly what the one did; except that where
// one test alone bounds the loop on that side, depends on no name bound inside the loop but
// its variable, and cannot wrap, it fails throughout the prologue or epilogue, which then runs
// only its failing branch (the guarded tail of a split past the end runs nothing, and the
// producers computed for it go too). A parallel loop stays one loop whose iterations choose
// between the body with and without the tests.
//
// A test counts when it compares (<, <=, >, >=) int32 values that depend linearly on the
// loop variable, and the rest of it, over every value the loops and lets inside the loop
// take, has a bound that does not change while the loop runs. A test is used by the
// innermost serial or parallel loop it depends on. Like the simplifier, the analysis takes
// signed arithmetic not to overflow; still, where the terms with the loop variable could wrap
// (checked at run time when that depends on parameters) the steady state is empty. Loops inside
// a vectorized loop, and loops around a GPU barrier, GPU loop or shared allocation, are left
// whole. A partition copies the loop body at most three times, and partitions nest at most
// three deep.
//
// Loops named in `never` (never_partition()) are left whole.
//
// Expects: flattened storage and simplified IR, before unrolling and vectorization.
ir::Stmt partition_loops(const ir::Stmt &s, const std::set<std::string> &never);

} // namespace lowering
} // namespace aicf

#endif
