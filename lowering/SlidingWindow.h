#ifndef AICF_LOWERING_SLIDING_WINDOW_H
#define AICF_LOWERING_SLIDING_WINDOW_H

#include "dsl/Function.h"
#include "dsl/ir/IR.h"

#include <map>
#include <string>

namespace aicf {
namespace lowering {

// Sliding windows: a Func stored outside a serial loop and computed inside it
// (`blur_x.store_at(blur_y, yo).compute_at(blur_y, yi)`) keeps what earlier iterations
// computed, so each iteration after the first computes only the part of its region past the
// end of the previous one: one new row of blur_x per row of blur_y instead of three.
// Storage folding: when the region one iteration needs has a constant size along the
// sliding dimension, and the Func is only accessed inside that loop, its storage along that
// dimension shrinks to the next power of two above that size and is indexed modulo it (a
// line buffer of 4 rows for a 3-row stencil, however tall the image).
// Expects: the output of bounds_inference (each computed region as `f.s0.<arg>.min/max/
// extent` lets just outside `produce f`, inside the loops that enclose it).
// Guarantees: the region shrinks only along one dimension, only when that dimension's
// region moves monotonically with the innermost loop between the storage and the
// computation, that loop and every loop between it and the storage are serial CPU loops,
// the Func has a single (pure) definition whose loop over that dimension is neither split
// nor anything but serial; otherwise the Func is computed as before. A row is overwritten
// only once the region has moved past it.
ir::Stmt sliding_window(const ir::Stmt &s, const std::map<std::string, ir::Function> &env);

} // namespace lowering
} // namespace aicf

#endif
