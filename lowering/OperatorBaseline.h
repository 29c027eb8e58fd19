#ifndef AICF_LOWERING_OPERATOR_BASELINE_H
#define AICF_LOWERING_OPERATOR_BASELINE_H

// The dataflow report's baseline: an algorithm scheduled the way frameworks run it, one
// kernel per operator with every intermediate in device memory.

#include "dsl/Function.h"

#include <vector>

namespace aicf {
namespace lowering {

// Copies of `outputs` and every Func they read, with a plain GPU schedule replacing the
// user's: each Func computed at the root, each of its stages its own kernel, its two pure
// dimensions in blocks of 16 x 16 threads (one dimension, or three and more fused into one:
// 256 threads; none: one thread), one point per thread, reductions serial in each thread.
// Updates that rfactor split are the algorithm's again (the intermediates are the
// schedule's). A Func that only renames another Func or an input (f(x, y) = g(x, y)) is
// inlined, as it is no operator. The bounds the algorithm states (bound, align_bounds) are
// kept. The user's Funcs are not changed.
std::vector<ir::Function> operator_by_operator(const std::vector<ir::Function> &outputs);

} // namespace lowering
} // namespace aicf

#endif
