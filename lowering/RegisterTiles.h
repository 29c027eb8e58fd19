#ifndef AICF_LOWERING_REGISTER_TILES_H
#define AICF_LOWERING_REGISTER_TILES_H

#include "dsl/ir/IR.h"

namespace aicf {
namespace lowering {

// Register tiles: a Func computed at a GPU block loop and stored in MemoryType::Register
// is kept in pieces, each thread holding the part its thread loops compute (as an
// accumulator tile of a matrix product is).
// Expects: Realizes placed by place_gpu_storage (before storage flattening).
// A Func whose every access touches points that do not depend on the thread, and which is
// written inside thread loops only by cross-thread reductions (whose threads all hold the
// result), is held whole by each thread instead: a row's mean, read by all the row's threads.
// Guarantees: each other such Realize covers one thread's part, a box of constant size whose
// position depends on the thread index; every access to the Func, in every stage, happens
// inside thread loops and stays within the box its thread computed, or a CompileError
// names the Func, the access and what to change.
ir::Stmt register_tiles(const ir::Stmt &s);

} // namespace lowering
} // namespace aicf

#endif
