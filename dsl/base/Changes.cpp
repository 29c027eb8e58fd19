#include "dsl/base/Changes.h"

#include <atomic>

namespace aicf {
namespace detail {

namespace {
std::atomic<uint64_t> changes{0};
} // namespace

uint64_t definition_changes() {
    return changes.load(std::memory_order_acquire);
}

void note_definition_change() {
    changes.fetch_add(1, std::memory_order_acq_rel);
}

} // namespace detail
} // namespace aicf
