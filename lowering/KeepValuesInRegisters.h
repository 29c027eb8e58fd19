#ifndef AICF_LOWERING_KEEP_VALUES_IN_REGISTERS_H
#define AICF_LOWERING_KEEP_VALUES_IN_REGISTERS_H

#include "lowering/Kernel.h"

namespace aicf {
namespace lowering {

// A kernel accesses memory once where the IR reads or writes the same element several times
// in a row, and keeps the value in a register in between:
// - a guard that does not depend on a loop is tested once, outside it;
// - an element a loop reads and writes at one index, in every iteration (an update's point,
//   accumulated over a serial reduction loop), is loaded before the loop, lives in a register
//   during it, and is stored once after it;
// - an element that several statements read (the copies of an unrolled loop, a producer
//   computed per thread and its consumer), or that a loop reads at an index that does not
//   depend on it, is loaded once.
// LLVM would find most of these loads itself (value numbering and loop-invariant code motion,
// knowing from the alias metadata which statements leave a buffer alone); doing it in the
// kernel IR makes the simulator, which runs this IR, count the accesses the PTX makes.
// A value is kept only where that is certain to be right: the first access runs whenever the
// statement holding it runs (not under a condition, not in a loop that may run no time), no
// statement in between writes the buffer elsewhere or allocates it anew, and no barrier lies
// in between where another thread of the kernel may write it.
// Expects: a kernel after fuse_gpu_thread_loops and simplify.
// Guarantees: a shared read is one Load bound by a LetStmt before the first statement that
// makes it ("in.loaded.0"); an element kept through a loop is a register allocation around it
// ("f.kept.0"); everything else is unchanged.
void keep_values_in_registers(LoweredKernel &kernel);

} // namespace lowering
} // namespace aicf

#endif
