#ifndef AICF_LOWERING_STORAGE_FLATTENING_H
#define AICF_LOWERING_STORAGE_FLATTENING_H

#include "dsl/Function.h"
#include "dsl/Pipeline.h"

#include <map>
#include <string>
#include <vector>

namespace aicf {
namespace lowering {

// Turns multi-dimensional storage into flat memory.
// Expects: bounds_inference and add_image_checks have run. Guarantees: no Realize, Provide
// or Func/Image Call remains. Each Realize becomes one Allocate per Tuple element ("f",
// or "f.0", "f.1", ...), dense with dimension 0 innermost; each Provide becomes Stores (a
// Tuple's values are all computed before any is stored); each read becomes a Load. Input and
// output buffers are addressed through their mins and strides.
ir::Stmt storage_flattening(const ir::Stmt &s, const std::vector<Argument> &args,
                            const std::map<std::string, ir::Function> &env);

} // namespace lowering
} // namespace aicf

#endif
