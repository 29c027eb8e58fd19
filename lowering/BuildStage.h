#ifndef AICF_LOWERING_BUILD_STAGE_H
#define AICF_LOWERING_BUILD_STAGE_H

// The loops that produce one Func (schedule_functions places them): each stage's loop nest
// from its schedule (splits and their tails, fuses, reorders, renames, loop types, atomic
// updates) around its Provide, which stays written in the Func's own variables.

#include "dsl/Function.h"

namespace aicf {
namespace lowering {

// produce f { the loops of each stage, in order }. Loop bounds are symbolic (f.s0.x.min,
// f.s0.x.max): bounds inference defines them.
ir::Stmt build_produce(const ir::Function &f);

} // namespace lowering
} // namespace aicf

#endif
