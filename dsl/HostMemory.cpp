#include "dsl/HostMemory.h"

#include <algorithm>
#include <cstdlib>

#include <sys/mman.h>

namespace aicf {

void *host_allocate(size_t bytes) {
    // Over this, the size is refused before any arithmetic on it can wrap.
    if (bytes > (size_t(1) << 62)) return nullptr;
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

} // namespace aicf
