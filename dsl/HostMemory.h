#ifndef AICF_DSL_HOSTMEMORY_H
#define AICF_DSL_HOSTMEMORY_H

// Host memory for buffers and for the intermediates a pipeline allocates while it runs.

#include <cstddef>
#include <map>
#include <mutex>
#include <unordered_map>

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
// How many blocks host_allocate has handed out in this process (for tests of reuse).
size_t host_allocation_count();

// Allocations of this many bytes or more that a compiled pipeline makes while it runs come
// from its HostMemoryPool.
constexpr size_t pooled_allocation_threshold = size_t(256) << 10;

// The large blocks a compiled pipeline's intermediates used, kept for its next run: realizing
// the pipeline again reuses memory whose pages are already mapped (and huge, where the
// system gave huge pages), instead of memory fresh from the operating system that faults on
// every page. A block is reused for a request of at least half its size. The pool keeps no
// more free memory than the most its pipeline has had in use at once, and frees it all when
// the pipeline goes. Safe to use from several threads at once.
class HostMemoryPool {
public:
    HostMemoryPool() = default;
    HostMemoryPool(const HostMemoryPool &) = delete;
    HostMemoryPool &operator=(const HostMemoryPool &) = delete;
    ~HostMemoryPool();

    // As host_allocate (nullptr when memory cannot be had).
    void *allocate(size_t bytes);
    // Takes p back if it came from allocate; false otherwise (the caller frees it).
    bool release(void *p);
    // Bytes held free for reuse, and in use.
    size_t free_bytes() const;
    size_t used_bytes() const;

private:
    mutable std::mutex lock;
    std::unordered_map<void *, size_t> in_use; // block -> its size
    std::multimap<size_t, void *> free_blocks; // size -> block
    size_t in_use_bytes = 0, free_total = 0, peak_in_use = 0;
};

} // namespace aicf

#endif
