#include "dsl/ir/IntrusivePtr.h"

#include <cstdlib>

namespace aicf {

namespace {

// The objects waiting to be deleted on this thread. Plain data only: a thread-local object
// with a destructor could be gone while other thread-local or static objects still release
// IR as a thread or the process ends.
constexpr size_t inline_slots = 64;
thread_local bool destroying = false;
thread_local const RefCounted *inline_waiting[inline_slots];
thread_local const RefCounted **spilled = nullptr; // beyond the inline slots, on the heap
thread_local size_t waiting = 0, spilled_capacity = 0;

// Keeps p for deletion after the current one; false if no memory could hold it.
bool keep(const RefCounted *p) {
    if (waiting < inline_slots) {
        inline_waiting[waiting++] = p;
        return true;
    }
    const size_t index = waiting - inline_slots;
    if (index == spilled_capacity) {
        const size_t capacity = spilled_capacity ? spilled_capacity * 2 : 1024;
        auto *grown = static_cast<const RefCounted **>(
            std::realloc(static_cast<void *>(spilled), capacity * sizeof(*spilled)));
        if (!grown) return false;
        spilled = grown;
        spilled_capacity = capacity;
    }
    spilled[index] = p;
    waiting++;
    return true;
}

const RefCounted *take() {
    waiting--;
    return waiting < inline_slots ? inline_waiting[waiting] : spilled[waiting - inline_slots];
}

} // namespace

void destroy_ref_counted(const RefCounted *p) {
    if (destroying) {
        if (keep(p)) return;
        delete p; // out of memory for the list: deleted at once, recursing as before
        return;
    }
    destroying = true;
    delete p;
    while (waiting > 0)
        delete take();
    std::free(static_cast<void *>(spilled));
    spilled = nullptr;
    spilled_capacity = 0;
    destroying = false;
}

} // namespace aicf
