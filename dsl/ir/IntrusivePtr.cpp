#include "dsl/ir/IntrusivePtr.h"

#include <vector>

namespace aicf {

void destroy_ref_counted(const RefCounted *p) {
    thread_local bool destroying = false;
    thread_local std::vector<const RefCounted *> waiting;
    if (destroying) {
        waiting.push_back(p);
        return;
    }
    destroying = true;
    delete p;
    while (!waiting.empty()) {
        const RefCounted *next = waiting.back();
        waiting.pop_back();
        delete next;
    }
    destroying = false;
}

} // namespace aicf
