#ifndef AICF_DSL_BASE_CHANGES_H
#define AICF_DSL_BASE_CHANGES_H

// A count of the changes made to algorithms and schedules anywhere in the process. Every
// entry point that changes one (defining a Func, scheduling a stage, setting a LoopLevel,
// adding a predicate to an RDom, making a wrapper) counts a change. Compiled code remembered
// with the count it was looked up at is still the pipeline's code while the count has not
// moved, so realizing an unchanged pipeline again need not fingerprint its definition.

#include <cstdint>

namespace aicf {
namespace detail {

uint64_t definition_changes();
void note_definition_change();

} // namespace detail
} // namespace aicf

#endif
