#ifndef AICF_LOWERING_CROSS_THREAD_REDUCTIONS_H
#define AICF_LOWERING_CROSS_THREAD_REDUCTIONS_H

#include "dsl/Function.h"
#include "dsl/ir/IR.h"

#include <map>
#include <string>

namespace aicf {
namespace lowering {

// Cross-thread reductions: an update whose reduction loop (or a split of it) runs on GPU
// threads or lanes, so that every thread of the loop updates the same point of the Func.
// Each thread reduces its share into a register partial, starting from the update's
// identity; the threads then combine their partials by butterfly shuffles within the warp
// (shfl.sync.bfly) and, when the loop spans several warps, through one shared-memory slot per
// warp, one barrier and a last shuffle step; every thread of the loop ends up holding the
// result and merges it into the Func once (each thread into its own copy when the Func lives
// in registers; one thread otherwise).
// Expects: Realizes placed by place_gpu_storage, register tiles checked, storage not yet
// flattened.
// Guarantees: no two threads of a thread loop update one point of a Func; the partials are
// Register allocations and the warp partials GPUShared ones (flat already); every
// shuffle is executed by all lanes of its member mask, and every lane it reads holds the
// identity or a partial. Raises CompileError naming the Func and the loop when the update
// is not associative, or the loop cannot be laid on whole warps.
// `env` gives each update its reduction domain (an argmax that keeps the index merges by it).
ir::Stmt lower_cross_thread_reductions(const ir::Stmt &s,
                                       const std::map<std::string, ir::Function> &env);

// A cross-thread reduction along x inside the thread loops of another stage (a row reduced
// by the lanes of a warp, inside the loop over rows) needs the x threads: that stage's thread
// loops move up one dimension (x to y, y to z).
// Expects: the loop nests of schedule_functions. Raises CompileError when the outer stage
// already uses all three dimensions.
ir::Stmt make_room_for_lanes(const ir::Stmt &s);

// Whether `loop` is a GPU thread loop over which an update of its stage is a cross-thread
// reduction (its threads update the same point), before lower_cross_thread_reductions.
bool is_cross_thread_reduction(const ir::For *loop);

} // namespace lowering
} // namespace aicf

#endif
