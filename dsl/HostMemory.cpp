#include "dsl/HostMemory.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <vector>

#include <sys/mman.h>

namespace aicf {

namespace {

std::atomic<size_t> allocation_count{0};

} // namespace

size_t host_allocation_count() {
    return allocation_count.load(std::memory_order_relaxed);
}

void *host_allocate(size_t bytes) {
    // Over this, the size is refused before any arithmetic on it can wrap.
    if (bytes > (size_t(1) << 62)) return nullptr;
    allocation_count.fetch_add(1, std::memory_order_relaxed);
    if (bytes < huge_page_threshold)
        return std::aligned_alloc(64, (std::max<size_t>(bytes, 1) + 63) / 64 * 64);
    size_t rounded = (bytes + huge_page_threshold - 1) / huge_page_threshold * huge_page_threshold;
    void *p = std::aligned_alloc(huge_page_threshold, rounded);
#ifdef MADV_HUGEPAGE
    // Advice only: without transparent huge pages the memory is ordinary pages.
    if (p) madvise(p, rounded, MADV_HUGEPAGE);
#endif
    return p;
}

void host_free(void *p) {
    std::free(p);
}

namespace {

// The size host_allocate really reserves for `bytes` (its rounding), so that equal requests
// meet equal blocks.
size_t reserved_size(size_t bytes) {
    if (bytes < huge_page_threshold) return (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
    return (bytes + huge_page_threshold - 1) / huge_page_threshold * huge_page_threshold;
}

} // namespace

HostMemoryPool::~HostMemoryPool() {
    for (auto &[size, p] : free_blocks)
        host_free(p);
    // Blocks still in use (a run that failed part-way frees its own through release) go too.
    for (auto &[p, size] : in_use)
        host_free(p);
}

void *HostMemoryPool::allocate(size_t bytes) {
    if (bytes > (size_t(1) << 62)) return nullptr;
    const size_t size = reserved_size(bytes);
    {
        std::lock_guard<std::mutex> guard(lock);
        // The smallest free block that fits, unless it is more than twice the request.
        auto it = free_blocks.lower_bound(size);
        if (it != free_blocks.end() && it->first / 2 <= size) {
            void *p = it->second;
            size_t got = it->first;
            free_blocks.erase(it);
            free_total -= got;
            in_use.emplace(p, got);
            in_use_bytes += got;
            peak_in_use = std::max(peak_in_use, in_use_bytes);
            return p;
        }
    }
    void *p = host_allocate(bytes);
    if (!p) return nullptr;
    std::lock_guard<std::mutex> guard(lock);
    in_use.emplace(p, size);
    in_use_bytes += size;
    peak_in_use = std::max(peak_in_use, in_use_bytes);
    return p;
}

bool HostMemoryPool::release(void *p) {
    std::vector<void *> to_free;
    {
        std::lock_guard<std::mutex> guard(lock);
        auto it = in_use.find(p);
        if (it == in_use.end()) return false;
        const size_t size = it->second;
        in_use.erase(it);
        in_use_bytes -= size;
        free_blocks.emplace(size, p);
        free_total += size;
        // Keep no more than the pipeline's peak: the smallest blocks go first (a pipeline
        // realized at growing sizes leaves its old blocks behind).
        while (free_total > peak_in_use && !free_blocks.empty()) {
            auto smallest = free_blocks.begin();
            free_total -= smallest->first;
            to_free.push_back(smallest->second);
            free_blocks.erase(smallest);
        }
    }
    for (void *q : to_free)
        host_free(q);
    return true;
}

size_t HostMemoryPool::free_bytes() const {
    std::lock_guard<std::mutex> guard(lock);
    return free_total;
}

size_t HostMemoryPool::used_bytes() const {
    std::lock_guard<std::mutex> guard(lock);
    return in_use_bytes;
}

} // namespace aicf
