#ifndef AICF_LOWERING_ADD_IMAGE_CHECKS_H
#define AICF_LOWERING_ADD_IMAGE_CHECKS_H

#include "dsl/Pipeline.h"

#include <vector>

namespace aicf {
namespace lowering {

// Reads the shape of every buffer argument from its descriptor and checks it.
// Expects: the output of bounds_inference (buffer shapes appear as "<b>.min.<d>",
// "<b>.extent.<d>", "<b>.stride.<d>"). Guarantees, before the pipeline's body runs:
//  - each buffer's rank and element type match the argument (RuntimeError otherwise),
//  - each extent is non-negative and the buffer spans under 2^31 elements,
//  - the buffers of a Tuple-valued output have the same shape;
// and that no input is read outside its buffer: each input covers a bound of the region the
// whole pipeline reads of it, checked before the body; or, where that bound does not fit
// (interval arithmetic can exceed what is read), the region each iteration of a host loop at
// which Funcs are computed reads, checked at the start of the iteration, the region each block
// of a kernel that computes Funcs reads, checked before the kernel (its block loops run on the
// host), and what is read outside those loops, checked before the body.
// Binds "<b>" (the host pointer) and the shape variables with LetStmts.
ir::Stmt add_image_checks(const ir::Stmt &s, const std::vector<Argument> &args);

} // namespace lowering
} // namespace aicf

#endif
