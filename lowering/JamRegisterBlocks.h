#ifndef AICF_LOWERING_JAM_REGISTER_BLOCKS_H
#define AICF_LOWERING_JAM_REGISTER_BLOCKS_H

#include "dsl/ir/IR.h"

namespace aicf {
namespace lowering {

// Unroll and jam of a short loop around a register block (host code).
//
// A reduction whose partial results stay in a few vector registers (Halide's sgemm schedule
// keeps a 4 x 32 block of floats: 8 AVX-512 registers, each the end of a chain of fused
// multiply-adds) runs at the latency of its chains rather than at the throughput of the
// arithmetic units when it has too few of them: an FMA takes about 4 cycles and two issue
// each cycle, so 8 chains keep the units busy only if nothing else ever waits. A short
// serial loop around such a block (the 2 blocks of a tile, say) runs the whole reduction
// once per iteration. This pass gives each iteration its own copy of the block and runs
// the copies' reductions in one loop, their bodies side by side: E times the independent
// chains, and loads the copies share (the same row of A) made once. Each element is still
// summed in the same order, so the results are exactly those of the loops as scheduled.
//
// A loop L is jammed when:
// - it is serial, with a constant extent E from 2 to 4;
// - its body holds exactly one loop R, serial, reached through lets, allocations,
//   producer/consumer marks and blocks (not inside an `if`), with a min and extent that do not
//   depend on L or on anything L's body defines;
// - R's body stores vectors only, each to an allocation on the way down to R (on the stack or
//   in registers) at an index that does not change with R, and reads back what it stores
//   there (a chain); it holds no loop, no `if` and no call with effects;
// - the rest of L's body (before and after R) is lets, allocations, frees, asserts, `if`s of
//   these, and stores: to those allocations, or to buffers no part of L's body reads, and
//   those all at one place after R (so the copies' stores to them keep their order);
// - R carries at most `max_chains` chains (distinct stored vectors), and E times that is at
//   most `max_registers`, the accumulators the jammed loop may keep in registers.
// Every other loop is left as it was.
//
// Expects: final host IR (unrolled, vectorized and flattened), as the code generator gets it.
ir::Stmt jam_register_blocks(const ir::Stmt &s, int max_chains, int max_registers);

} // namespace lowering
} // namespace aicf

#endif
