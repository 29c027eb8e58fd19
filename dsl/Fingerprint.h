#ifndef AICF_FINGERPRINT_H
#define AICF_FINGERPRINT_H

#include "dsl/Function.h"
#include "dsl/Pipeline.h"
#include "dsl/Target.h"

#include <string>
#include <vector>

namespace aicf {
namespace detail {

// A key that identifies what a pipeline computes and how: equal keys compile to the same
// code, and any difference in a definition, a schedule, the arguments or the target gives
// another key. Every field of every schedule struct is read through for_each_field
// (dsl/Fields.h), so a schedule field added later is part of the key without more code. The
// compiled-pipeline cache is keyed by it.
std::string fingerprint(const std::vector<ir::Function> &outputs, const std::vector<Argument> &args,
                        const Target &target);

} // namespace detail
} // namespace aicf

#endif
