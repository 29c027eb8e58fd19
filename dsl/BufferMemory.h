#ifndef AICF_DSL_BUFFERMEMORY_H
#define AICF_DSL_BUFFERMEMORY_H

// Where a buffer's elements lie in memory, and copies between its host memory and its device
// copy. The device copy mirrors the
// span of the host elements, gaps included (the rows of a view into a wider matrix), so
// copying it back whole would also write the gaps: memory that belongs to someone else (the
// other half of that matrix, perhaps written since by another pipeline or thread).

#include "dsl/BufferABI.h"

namespace aicf {

// The bytes of one element of `b`, and how many elements it has (0 where an extent is not
// positive).
int64_t buffer_element_bytes(const aicf_buffer_t *b);
int64_t buffer_elements(const aicf_buffer_t *b);

// Copies the device data of `b` back to its host elements, and only to them: in one copy
// where they fill their span, else through a host copy of the span, element run by element
// run. Returns what the device's copy_to_host returns (or 1, with a message, when the
// staging memory cannot be had).
int copy_elements_to_host(aicf_buffer_t *b, char *error, size_t error_size);

// Whether an element of `a` (whose first element is at address `base_a`) and an element of
// `b` share memory. Exact where both have elements of one size and the same strides (views of
// one array: the left and right halves of a matrix interleave their rows and share no
// element); otherwise whether the spans of their elements meet.
bool buffers_share_memory(const aicf_buffer_t *a, uint64_t base_a, const aicf_buffer_t *b,
                          uint64_t base_b);

} // namespace aicf

#endif
