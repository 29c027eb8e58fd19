// The machine's warpgroup products (see SimMachine.h): wgmma.mma_async groups issued,
// committed and retired by waits, and the check that no thread changes shared memory a group
// may still be reading.

#include "backends/sim/SimMachine.h"

#include "dsl/base/Error.h"
#include "lowering/WarpgroupMMA.h"

#include <algorithm>
#include <sstream>

namespace aicf {
namespace backends {
namespace sim {

void Machine::forget_retired_wgmma() {
    for (const PendingWgmma &w : wgmma_retired) {
        for (int64_t e : w.elements)
            for (int64_t b = e; b < e + w.element_bytes; b++)
                wgmma_unsynced[size_t(b)] = 0;
        wgmma_unsynced_bytes -= int64_t(w.elements.size()) * w.element_bytes;
    }
    wgmma_retired.clear();
}

void Machine::wgmma_issue(int warpgroup, std::vector<int64_t> elements, int element_bytes,
                          const Site &site) {
    if (pending_wgmma.empty()) {
        const size_t groups =
            size_t((n + lowering::kWarpgroupThreads - 1) / lowering::kWarpgroupThreads);
        pending_wgmma.resize(groups);
        wgmma_groups.assign(groups, 0);
        wgmma_readers.assign(shared.size(), 0);
        wgmma_unsynced.assign(shared.size(), 0);
    }
    for (int64_t e : elements) {
        for (int64_t b = e; b < e + element_bytes; b++) {
            // The reads themselves were bounds-checked as loads.
            wgmma_readers[size_t(b)]++;
            wgmma_read_bytes++;
        }
    }
    PendingWgmma w;
    w.elements = std::move(elements);
    w.element_bytes = element_bytes;
    w.site = &site;
    pending_wgmma[size_t(warpgroup)].push_back(std::move(w));
}

int Machine::first_active_thread_of_warpgroup(size_t g) const {
    const int first = int(g) * lowering::kWarpgroupThreads;
    for (int t = first; t < std::min(n, first + lowering::kWarpgroupThreads); t++)
        if (mask->on[size_t(t)]) return t;
    return -1;
}

template <typename Done> void Machine::retire_wgmma(size_t g, Done done, bool by_wait) {
    std::vector<PendingWgmma> &list = pending_wgmma[g];
    size_t kept = 0;
    for (size_t i = 0; i < list.size(); i++) {
        if (!done(list[i])) {
            if (kept != i) list[kept] = std::move(list[i]);
            kept++;
            continue;
        }
        for (int64_t e : list[i].elements) {
            for (int64_t b = e; b < e + list[i].element_bytes; b++) {
                wgmma_readers[size_t(b)]--;
                wgmma_read_bytes--;
                if (by_wait) wgmma_unsynced[size_t(b)] |= uint8_t(1u << g);
            }
        }
        if (by_wait) {
            wgmma_unsynced_bytes += int64_t(list[i].elements.size()) * list[i].element_bytes;
            wgmma_retired.push_back(std::move(list[i]));
        }
    }
    list.resize(kept);
}

void Machine::wgmma_commit() {
    for (size_t g = 0; g < pending_wgmma.size(); g++) {
        if (first_active_thread_of_warpgroup(g) < 0) continue;
        const int64_t group = ++wgmma_groups[g];
        for (PendingWgmma &w : pending_wgmma[g])
            if (w.group < 0) w.group = group;
    }
}

void Machine::wgmma_wait(int keep, const Site &site) {
    for (size_t g = 0; g < pending_wgmma.size(); g++) {
        const int active = first_active_thread_of_warpgroup(g);
        if (active < 0) continue;
        for (const PendingWgmma &w : pending_wgmma[g]) {
            if (w.group >= 0) continue;
            throw KernelFault("kernel " + kernel.name + ": thread " + describe_thread(active) +
                              " of block " + describe_block() + " waits (wgmma.wait_group " +
                              std::to_string(keep) + ") with a wgmma.mma_async of its " +
                              "warpgroup not committed, which no wait covers: commit it first " +
                              "(wgmma.commit_group)" + context(site, active));
        }
        const int64_t last_retired = wgmma_groups[g] - keep;
        retire_wgmma(
            g, [&](const PendingWgmma &w) { return w.group <= last_retired; }, true);
    }
}

void Machine::check_not_read_by_wgmma(int t, int64_t first, int64_t bytes, int element_bytes,
                                      const char *what, const Site &site) const {
    const unsigned own = 1u << (t / lowering::kWarpgroupThreads);
    for (int64_t byte = first; byte < first + bytes; byte++) {
        if (byte < 0 || byte >= int64_t(wgmma_readers.size())) continue;
        if (wgmma_readers[size_t(byte)] == 0) {
            // Retired by a wait, but perhaps not yet by another warpgroup's.
            const unsigned others = wgmma_unsynced[size_t(byte)] & ~own;
            if (others == 0) continue;
            const int reader = __builtin_ctz(others);
            std::ostringstream os;
            os << "kernel " << kernel.name << ": thread " << describe_thread(t) << " of block "
               << describe_block() << " " << what << " " << describe_shared(byte, -1, element_bytes)
               << ", which a wgmma.mma_async of "
               << "warpgroup " << reader << " read: that warpgroup's wgmma.wait_group retired "
               << "it, but the threads of other warpgroups may change it only after a barrier "
               << "that follows the wait (until then warpgroup " << reader
               << " may not have reached it)" << context(site, t);
            throw KernelFault(os.str());
        }
        size_t reader = 0;
        const Site *issued = nullptr;
        for (size_t g = 0; g < pending_wgmma.size() && !issued; g++) {
            for (const PendingWgmma &w : pending_wgmma[g]) {
                for (int64_t e : w.elements) {
                    if (byte >= e && byte < e + w.element_bytes) issued = w.site, reader = g;
                }
                if (issued) break;
            }
        }
        std::ostringstream os;
        os << "kernel " << kernel.name << ": thread " << describe_thread(t) << " of block "
           << describe_block() << " " << what << " " << describe_shared(byte, -1, element_bytes)
           << ", which a wgmma.mma_async of warpgroup " << reader;
        if (issued && !issued->func.empty()) os << " (computing " << issued->func << ")";
        os << " may still be reading: its operands may change only after a wgmma.wait_group "
           << "retires its group (in other warpgroups: after a barrier that follows the wait)"
           << context(site, t);
        throw KernelFault(os.str());
    }
}

void Machine::forget_all_wgmma() {
    if (pending_wgmma.empty()) return;
    for (size_t g = 0; g < pending_wgmma.size(); g++)
        retire_wgmma(
            g, [](const PendingWgmma &) { return true; }, false);
    std::fill(wgmma_groups.begin(), wgmma_groups.end(), 0);
    forget_retired_wgmma();
}

} // namespace sim
} // namespace backends
} // namespace aicf
