#ifndef AICF_DSL_LOOP_LIMITS_H
#define AICF_DSL_LOOP_LIMITS_H

// The largest loops AICF compiles as straight code, which schedules are checked against when
// they are written (vectorize(x, n), unroll(x, n)) and lowering where the extent is known.

#include <cstdint>

namespace aicf {

// Lanes of a vectorized loop.
constexpr int64_t kMaxVectorLanes = 64;
// Iterations of an unrolled loop.
constexpr int64_t kMaxUnroll = 256;

} // namespace aicf

#endif
