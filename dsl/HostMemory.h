#ifndef AICF_DSL_HOSTMEMORY_H
#define AICF_DSL_HOSTMEMORY_H

// Host memory for buffers and for the intermediates a pipeline allocates while it runs.

#include <cstddef>

namespace aicf {

// Allocations of this many bytes or more start on a 2 MiB boundary and are backed by
// transparent huge pages where the operating system allows.
constexpr size_t huge_page_threshold = size_t(2) << 20;

// At least `bytes` bytes (at least one), aligned to 64 bytes, uninitialized; nullptr when the
// memory cannot be had. A large allocation is aligned to 2 MiB and advised to use huge pages,
// so that reading a large tensor row by row (each row often a 4 KiB page of its own) does not
// miss the TLB on every row. Free with host_free.
void *host_allocate(size_t bytes);
void host_free(void *p);

} // namespace aicf

#endif
