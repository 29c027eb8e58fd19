#ifndef AICF_LOWERING_GROUP_SHARED_LOADS_H
#define AICF_LOWERING_GROUP_SHARED_LOADS_H

#include "lowering/Kernel.h"

namespace aicf {
namespace lowering {

// Scalar reads of consecutive shared-memory elements as one wide read: a thread that reads
// elements e + a, ..., e + a + n - 1 (a row of a staged tile, unrolled; n elements filling 16,
// 8 or 4 bytes, e + a a multiple of n wherever the thread and its loops are) reads them with
// one vector load and takes each element from it. LLVM's load-store vectorizer finds most of
// these in the PTX; doing it in the kernel IR makes the simulator, which runs this IR, count
// the loads and shared-memory wavefronts the PTX makes, and no longer leaves the width to
// LLVM's heuristics.
// A group is made only where that is certain to be right: the reads are the values of
// LetStmts (as keep_values_in_registers leaves them), all in one straight run of statements
// (no loop, condition, barrier or write to shared memory between them), each later one inside
// the scope of the first, their indices the same expression (naming the same lets) plus
// constants.
// Expects: a kernel after keep_values_in_registers. Guarantees: each group is read by a
// LetStmt "__shared.vector.N" (an aligned Ramp) placed where its first element was read, and
// each element's LetStmt takes extract_element of it; everything else is unchanged.
void group_shared_loads(LoweredKernel &kernel);

} // namespace lowering
} // namespace aicf

#endif
