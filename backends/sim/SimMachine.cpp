// The machine's member functions (see SimMachine.h): loads and stores with their checks and
// counts, cp.async copies, shuffles, and the descriptions of threads, blocks and instructions
// in messages. The warpgroup products are in SimWgmma.cpp.

#include "backends/sim/SimMachine.h"

#include "dsl/Names.h"
#include "dsl/base/Error.h"

#include <algorithm>
#include <sstream>

namespace aicf {
namespace backends {
namespace sim {

namespace {

// The class a load or store counts in.
OpClass op_class(const Access &a) {
    switch (a.storage->place) {
    case Storage::Global:
        return a.is_store ? OpClass::GlobalStore : OpClass::GlobalLoad;
    case Storage::Shared:
        return a.is_store ? OpClass::SharedStore : OpClass::SharedLoad;
    case Storage::Private:
        break;
    }
    return OpClass::Other;
}

// Whether the `bytes` bytes at `byte` lie inside the shared allocation s.
bool inside(const lowering::SharedAllocation &s, int64_t byte, int bytes) {
    return byte >= s.offset && byte + bytes <= s.offset + s.bytes;
}

} // namespace

Machine::Machine(const lowering::LoweredKernel &k, bool checks)
    : kernel(k), n(k.thread_count()), threads(k.threads), checks(checks),
      shared(size_t(k.shared_bytes)) {
    for (int d = 0; d < 3; d++)
        thread_index[d].resize(size_t(n));
    for (int t = 0; t < n; t++) {
        thread_index[0][t] = word_u(uint64_t(t % threads[0]));
        thread_index[1][t] = word_u(uint64_t((t / threads[0]) % threads[1]));
        thread_index[2][t] = word_u(uint64_t(t / (threads[0] * threads[1])));
    }
}

bool Machine::access(const Access &a) {
    const Storage &s = *a.storage;
    if (pending_bytes > 0 && s.place == Storage::Shared) check_not_pending(a);
    if ((wgmma_read_bytes > 0 || wgmma_unsynced_bytes > 0) && s.place == Storage::Shared &&
        a.is_store) {
        for (int t = 0; t < n; t++) {
            if (!mask->on[size_t(t)]) continue;
            const Word *index = lane_ptr(a.index, t, a.lanes);
            const Word *pred = a.has_predicate ? lane_ptr(a.predicate, t, a.lanes) : nullptr;
            for (int l = 0; l < a.lanes; l++)
                if (!pred || pred[l].u)
                    check_not_read_by_wgmma(t, index[l].i * a.elem_bytes, a.elem_bytes,
                                            a.elem_bytes, "stores to", *a.site);
        }
    }
    if (a.profiled) counters.count(op_class(a), mask->warps);
    const bool same_address =
        s.place != Storage::Private && a.index.uniform && (!a.has_predicate || a.predicate.uniform);
    const bool shadowed = checks && s.place == Storage::Shared && !a.atomic;
    if (mask->count == 1 || same_address) {
        // Stores from several threads to one address: the highest thread's value wins.
        const int t = a.is_store ? mask->last : mask->first;
        if (shadowed && a.is_store && mask->count > 1) check_one_value(a);
        run_threads(a, t, t + 1, true);
        // The other readers count for races too; one more is all the shadow keeps.
        if (shadowed && !a.is_store && mask->count > 1) shadow_thread(a, mask->last);
        if (s.place != Storage::Private && a.profiled) profile_uniform(a, t);
        return true;
    }
    run_threads(a, 0, n, false);
    if (s.place != Storage::Private && a.profiled) profile_warps(a);
    return false;
}

void Machine::require_whole_warps(const Site &site, const char *instruction, int group) const {
    for (int w = 0; w < n; w += group) {
        int active = -1;
        for (int t = w; t < std::min(n, w + group) && active < 0; t++)
            if (mask->on[size_t(t)]) active = t;
        if (active < 0) continue;
        for (int l = 0; l < group; l++) {
            const int t = w + l;
            if (t < n && mask->on[size_t(t)]) continue;
            std::ostringstream os;
            const char *unit = group == 32 ? "warp" : "warpgroup";
            os << "kernel " << kernel.name << ": thread " << describe_thread(active) << " of block "
               << describe_block() << " executes " << instruction << context(site, active)
               << ", but " << (group == 32 ? "lane " : "thread ") << l << " of its " << unit << " ";
            if (t >= n)
                os << "does not exist (the block has " << n << " threads)";
            else
                os << "(thread " << describe_thread(t) << ") does not";
            os << "; all " << group << (group == 32 ? " lanes" : " threads") << " of a " << unit
               << " execute it together";
            throw KernelFault(os.str());
        }
    }
}

void Machine::barrier() {
    counters.barriers++;
    if (checks) shadow.barrier();
    forget_retired_wgmma();
}

void Machine::check_not_pending(const Access &a) const {
    const bool uniform = a.index.uniform && (!a.has_predicate || a.predicate.uniform);
    for (int t = 0; t < n; t++) {
        if (!mask->on[size_t(t)]) continue;
        const Word *index = lane_ptr(a.index, t, a.lanes);
        const Word *pred = a.has_predicate ? lane_ptr(a.predicate, t, a.lanes) : nullptr;
        for (int l = 0; l < a.lanes; l++) {
            if (pred && !pred[l].u) continue;
            const int64_t first = index[l].i * a.elem_bytes;
            for (int64_t byte = first; byte < first + a.elem_bytes; byte++) {
                if (byte < 0 || byte >= int64_t(pending_byte_owner.size()) ||
                    pending_byte_owner[size_t(byte)] == 0)
                    continue;
                const int issuer = pending_byte_owner[size_t(byte)] - 1;
                std::ostringstream os;
                os << "kernel " << kernel.name << ": thread " << describe_thread(t) << " of block "
                   << describe_block() << (a.is_store ? " stores to " : " reads ")
                   << describe_shared(byte, -1, a.elem_bytes) << ", which a "
                   << "cp.async of "
                   << (issuer == t ? "its own" : "thread " + describe_thread(issuer))
                   << " is still copying to: a thread may touch a copy's destination only after "
                   << "its cp.async.wait_group covers the copy (other threads: after a barrier "
                   << "that follows the wait)" << context(*a.site, t);
                throw KernelFault(os.str());
            }
        }
        if (uniform) break;
    }
}

void Machine::profile_ldmatrix(const Access &shape, Col rows, int matrices) {
    for (int w = 0; w < n; w += 32) {
        if (!mask->on[size_t(w)]) continue; // whole warps: one lane tells
        int64_t wavefronts = 0;
        for (int j = 0; j < matrices; j++) {
            std::array<std::vector<int64_t>, 8> chunks; // by bank group: distinct 16-byte rows
            for (int r = 0; r < 8; r++) {
                const int64_t chunk = lane_ptr(rows, w + 8 * j + r, 1)->i * shape.elem_bytes / 16;
                std::vector<int64_t> &group = chunks[size_t(chunk & 7)];
                if (std::find(group.begin(), group.end(), chunk) == group.end())
                    group.push_back(chunk);
            }
            size_t most = 0;
            for (const std::vector<int64_t> &g : chunks)
                most = std::max(most, g.size());
            wavefronts += int64_t(most);
        }
        counters.count(OpClass::SharedLoad, 1);
        record(shape, 128 * int64_t(matrices), 1, wavefronts,
               lane_ptr(rows, w, 1)->i * shape.elem_bytes);
    }
}

void Machine::profile_wgmma_operand(const Access &shape, int64_t bytes, int64_t first_byte) {
    record(shape, bytes, 1, (bytes + 127) / 128, first_byte);
}

void Machine::track_async_copies() {
    if (!pending_copies.empty()) return;
    pending_copies.resize(size_t(n));
    committed_groups.assign(size_t(n), 0);
    pending_byte_owner.assign(shared.size(), 0);
}

void Machine::async_copy(const Access &shape, Col dst, Col values) {
    track_async_copies();
    const int64_t bytes = int64_t(shape.lanes) * shape.elem_bytes;
    for (int t = 0; t < n; t++) {
        if (!mask->on[size_t(t)]) continue;
        const int64_t dst_index = lane_ptr(dst, t, 1)->i, first = dst_index * shape.elem_bytes;
        auto fail = [&](const std::string &what) {
            throw KernelFault("kernel " + kernel.name + ": thread " + describe_thread(t) +
                              " of block " + describe_block() + " starts a cp.async of " +
                              std::to_string(bytes) + " bytes into shared memory at byte " +
                              std::to_string(first) + ", " + what + context(*shape.site, t));
        };
        if (first < 0 || first + bytes > int64_t(shared.size()))
            fail("outside its " + std::to_string(shared.size()) + " bytes");
        if (first % bytes != 0) fail("which is not a multiple of the copy's size");
        for (int64_t b = first; b < first + bytes; b++) {
            if (pending_byte_owner[size_t(b)] != 0) {
                fail("where a cp.async of thread " +
                     describe_thread(pending_byte_owner[size_t(b)] - 1) +
                     " is still copying (two copies to one place race)");
            }
        }
        if (wgmma_read_bytes > 0 || wgmma_unsynced_bytes > 0)
            check_not_read_by_wgmma(t, first, bytes, shape.elem_bytes, "starts a cp.async into",
                                    *shape.site);
        for (int64_t b = first; b < first + bytes; b++)
            pending_byte_owner[size_t(b)] = t + 1;
        pending_bytes += bytes;
        PendingCopy c;
        c.dst = dst_index;
        c.shape = shape;
        const Word *v = lane_ptr(values, t, shape.lanes);
        c.values.assign(v, v + shape.lanes);
        pending_copies[size_t(t)].push_back(std::move(c));
    }
    // The shared side in the profile, as a store request of each warp: the banks its bytes
    // fall in.
    for (int w = 0; w < n; w += 32) {
        keys.clear();
        int64_t warp_bytes = 0, first_byte = 0;
        for (int t = w; t < std::min(n, w + 32); t++) {
            if (!mask->on[size_t(t)]) continue;
            const int64_t first = lane_ptr(dst, t, 1)->i * shape.elem_bytes;
            if (warp_bytes == 0) first_byte = first;
            for (int64_t word = first >> 2; word <= (first + bytes - 1) >> 2; word++)
                keys.push_back(word);
            warp_bytes += bytes;
        }
        if (warp_bytes > 0) record(shape, warp_bytes, 1, bank_wavefronts(keys), first_byte);
    }
}

void Machine::async_commit() {
    track_async_copies();
    for (int t = 0; t < n; t++) {
        if (!mask->on[size_t(t)]) continue;
        // An empty group counts too: it is complete at once.
        const int64_t group = ++committed_groups[size_t(t)];
        for (PendingCopy &c : pending_copies[size_t(t)])
            if (c.group < 0) c.group = group;
    }
}

void Machine::async_wait(int keep, const Site &site) {
    if (pending_copies.empty()) return;
    std::vector<Word> index;
    for (int t = 0; t < n; t++) {
        if (!mask->on[size_t(t)]) continue;
        std::vector<PendingCopy> &copies = pending_copies[size_t(t)];
        for (const PendingCopy &c : copies) {
            if (c.group >= 0) continue;
            throw KernelFault("kernel " + kernel.name + ": thread " + describe_thread(t) +
                              " of block " + describe_block() + " waits (cp.async.wait_group " +
                              std::to_string(keep) +
                              ") with a cp.async it has not committed, "
                              "which no wait covers: commit it first" +
                              context(site, t));
        }
        const int64_t last_complete = committed_groups[size_t(t)] - keep;
        size_t kept = 0;
        for (size_t i = 0; i < copies.size(); i++) {
            PendingCopy &c = copies[i];
            if (c.group > last_complete) {
                if (kept != i) copies[kept] = std::move(c);
                kept++;
                continue;
            }
            const int64_t first = c.dst * c.shape.elem_bytes,
                          bytes = int64_t(c.shape.lanes) * c.shape.elem_bytes;
            for (int64_t b = first; b < first + bytes; b++)
                pending_byte_owner[size_t(b)] = 0;
            pending_bytes -= bytes;
            // The thread's own store, now: what the race checks see of the copy.
            index.resize(size_t(c.shape.lanes));
            for (int l = 0; l < c.shape.lanes; l++)
                index[size_t(l)].i = c.dst + l;
            Access store = c.shape;
            store.is_store = true;
            store.index = {index.data(), true};
            store.value = {c.values.data(), true};
            run_threads(store, t, t + 1, true);
        }
        copies.resize(kept);
    }
}

void Machine::start_block(const std::array<int, 3> &b) {
    forget_all_wgmma();
    if (!pending_copies.empty()) {
        for (std::vector<PendingCopy> &c : pending_copies)
            c.clear();
        std::fill(committed_groups.begin(), committed_groups.end(), 0);
        std::fill(pending_byte_owner.begin(), pending_byte_owner.end(), 0);
        pending_bytes = 0;
    }
    block = b;
    std::fill(shared.begin(), shared.end(), kGarbageByte);
    if (checks) shadow.start_block();
}

const std::vector<int> &Machine::shuffle_sources(Col member_mask, int offset, const Site &site) {
    sources.assign(size_t(n), -1);
    auto fail = [&](int t, const std::string &what) {
        std::ostringstream os;
        os << "kernel " << kernel.name << ": thread " << describe_thread(t) << " of block "
           << describe_block() << " " << what << context(site, t);
        throw KernelFault(os.str());
    };
    for (int t = 0; t < n; t++) {
        if (!mask->on[size_t(t)]) continue;
        const uint32_t members = uint32_t(lane_ptr(member_mask, t, 1)->u);
        const int warp = t & ~31, lane = t & 31;
        if (!(members >> lane & 1u)) {
            std::ostringstream os;
            os << "executes a shuffle whose member mask 0x" << std::hex << members
               << " does not hold its own lane " << std::dec << lane;
            fail(t, os.str());
        }
        for (int l = 0; l < 32; l++) {
            if (!(members >> l & 1u)) continue;
            const int other = warp + l;
            const bool there = other < n && mask->on[size_t(other)] &&
                               uint32_t(lane_ptr(member_mask, other, 1)->u) == members;
            if (there) continue;
            std::ostringstream os;
            os << "executes a shuffle with member mask 0x" << std::hex << members << std::dec
               << ", but lane " << l << " of its warp ";
            if (other >= n)
                os << "does not exist (the block has " << n << " threads)";
            else if (!mask->on[size_t(other)])
                os << "(thread " << describe_thread(other) << ") does not execute it";
            else
                os << "executes it with another mask";
            os << "; every lane of the mask must execute the shuffle together";
            fail(t, os.str());
        }
        const int source_lane = lane ^ offset;
        if (source_lane >= 32 || !(members >> source_lane & 1u)) {
            fail(t, "shuffles from lane " + std::to_string(source_lane) +
                        " of its warp, which is outside the member mask (its value is undefined)");
        }
        sources[size_t(t)] = warp + source_lane;
    }
    return sources;
}

std::string Machine::label(const Site &s, const std::string &memory, int thread) const {
    static const char *const ops[] = {"load", "store", "barrier", "shuffle"};
    std::string r = s.wgmma_operand ? "wgmma reads" : ops[s.op];
    if (s.storage) {
        const std::string &name = !s.memory.empty() ? s.memory
                                  : !memory.empty() ? memory
                                                    : s.storage->name;
        r += " " + name + "[...]";
    }
    if (!s.func.empty()) r += " in " + s.func;
    if (!s.loop.empty()) r += " at " + loop_text(s) + loop_value(s, thread);
    return r;
}

std::string Machine::loop_text(const Site &s) {
    LoopNameParts loop = parse_loop_name(s.loop);
    bool own = loop.func == s.func && loop.stage == 0;
    return own ? loop_var_for_users(s.loop) : loop_for_users(s.loop);
}

std::string Machine::context(const Site &s, int t) const {
    std::ostringstream os;
    if (!s.func.empty()) os << "while computing " << s.func;
    if (!s.loop.empty()) {
        os << (s.func.empty() ? "" : ", ") << "in loop " << loop_text(s) << loop_value(s, t);
    }
    const std::string where = os.str();
    return where.empty() ? "" : " (" + where + ")";
}

std::string Machine::loop_value(const Site &s, int t) const {
    const Col value = s.loop_slot >= 0 && t >= 0 ? slots[size_t(s.loop_slot)] : Col{};
    if (!value.p) return "";
    return " = " + std::to_string(lane_ptr(value, t, 1)->i);
}

std::string Machine::describe_thread(int t) const {
    std::ostringstream os;
    os << "(" << thread_index[0][t].i << ", " << thread_index[1][t].i << ", "
       << thread_index[2][t].i << ")";
    return os.str();
}

std::string Machine::describe_block() const {
    std::ostringstream os;
    os << "(" << block[0] << ", " << block[1] << ", " << block[2] << ")";
    return os.str();
}

// One loop over the threads, with what does not depend on the thread hoisted, as this is
// where the simulator spends its time.
void Machine::run_threads(const Access &a, int begin, int end, bool uniform) {
    const int L = a.lanes;
    const Storage &s = *a.storage;
    const bool priv = s.place == Storage::Private;
    const bool shadowed = checks && s.place == Storage::Shared && !a.atomic;
    const int64_t limit = s.bytes / a.elem_bytes;
    for (int t = begin; t < end; t++) {
        Word *out = a.is_store ? nullptr : a.out + (uniform ? 0 : size_t(t) * L);
        if (!uniform && !mask->on[t]) {
            if (out) std::fill(out, out + L, word_u(0));
            continue;
        }
        const Word *value = a.is_store ? lane_ptr(a.value, t, L) : nullptr;
        const Word *index = lane_ptr(a.index, t, L);
        const Word *pred = a.has_predicate ? lane_ptr(a.predicate, t, L) : nullptr;
        uint8_t *base = s.base + (priv ? size_t(t) * size_t(s.bytes) : 0);
        for (int l = 0; l < L; l++) {
            if (pred && !pred[l].u) {
                if (out) out[l] = word_u(0);
                continue;
            }
            const int64_t i = index[l].i;
            if (i < 0 || i >= limit) fault(a, t, i, limit);
            if (shadowed) shadow_element(a, t, i);
            uint8_t *p = base + i * a.elem_bytes;
            if (out) {
                out[l] = read_element(p, a.kind, a.bits);
            } else {
                write_element(p, a.kind, a.bits, value[l]);
            }
        }
    }
}

void Machine::shadow_thread(const Access &a, int t) {
    const Word *index = lane_ptr(a.index, t, a.lanes);
    const Word *pred = a.has_predicate ? lane_ptr(a.predicate, t, a.lanes) : nullptr;
    for (int l = 0; l < a.lanes; l++) {
        if (!pred || pred[l].u) shadow_element(a, t, index[l].i);
    }
}

void Machine::shadow_element(const Access &a, int t, int64_t i) {
    const Site *site = a.site;
    const int64_t byte = i * a.elem_bytes;
    const int g = shadow.granule_bytes();
    int32_t owner = -1;
    if (a.is_store) {
        owner = site->func_shared;
        if (owner >= 0 && !inside(kernel.shared[size_t(owner)], byte, a.elem_bytes)) {
            outside_own_allocation(a, t, byte);
        }
    }
    for (int64_t cell = byte / g; cell < (byte + a.elem_bytes) / g; cell++) {
        const Conflict c =
            a.is_store ? shadow.write(cell, t, site, owner) : shadow.read(cell, t, site);
        if (c.hazard == Hazard::None) continue;
        // An unwritten cell's owner is from an earlier block.
        const bool written = c.hazard != Hazard::Uninitialized;
        shared_fault(a, t, byte, c, written ? shadow.cell(cell).owner : -1);
    }
}

void Machine::check_one_value(const Access &a) {
    if (a.value.uniform) return;
    const int last = mask->last;
    const Word *kept = lane_ptr(a.value, last, a.lanes);
    for (int t = mask->first; t < last; t++) {
        if (!mask->on[t]) continue;
        const Word *mine = lane_ptr(a.value, t, a.lanes);
        for (int l = 0; l < a.lanes; l++) {
            if (mine[l].u == kept[l].u) continue;
            const int64_t byte = lane_ptr(a.index, t, a.lanes)[l].i * a.elem_bytes;
            shared_fault(a, last, byte, {Hazard::WriteAfterWrite, t, a.site}, -1);
        }
    }
}

std::string Machine::shared_func(int64_t byte, int32_t owner) const {
    if (owner >= 0) return kernel.shared[size_t(owner)].func;
    std::string names;
    for (const lowering::SharedAllocation &s : kernel.shared) {
        if (!inside(s, byte, 1)) continue;
        names += (names.empty() ? "" : " or ") + s.func;
    }
    return names;
}

std::string Machine::describe_shared(int64_t byte, int32_t owner, int bytes) const {
    const std::string where = "byte " + std::to_string(byte) + " of shared memory";
    if (owner < 0) {
        // The one Func whose range holds the byte, if only one does.
        for (size_t i = 0; i < kernel.shared.size(); i++) {
            if (!inside(kernel.shared[i], byte, 1)) continue;
            if (owner >= 0) return shared_func(byte, -1) + " at " + where;
            owner = int32_t(i);
        }
    }
    if (owner < 0) return where;
    const lowering::SharedAllocation &f = kernel.shared[size_t(owner)];
    return f.func + "[" + std::to_string((byte - f.offset) / bytes) + "] at " + where;
}

void Machine::profile_warps(const Access &a) {
    const bool simple = a.lanes == 1 && !a.has_predicate && a.elem_bytes <= 4;
    for (int w = 0; w < n; w += 32) {
        const int end = std::min(n, w + 32);
        int active = 0;
        int64_t first_byte = 0;
        int64_t per_request = simple ? ascending(a, w, end, active, first_byte) : -1;
        int64_t bytes = int64_t(active) * a.elem_bytes;
        if (per_request < 0) {
            keys.clear();
            active = 0;
            bytes = gather(a, w, end, active);
            per_request = transactions(a, first_byte);
        }
        if (active) record(a, bytes, 1, per_request, first_byte);
    }
}

void Machine::profile_uniform(const Access &a, int t) {
    int64_t first_byte = lane_ptr(a.index, t, a.lanes)->i * a.elem_bytes;
    if (a.lanes == 1 && !a.has_predicate) {
        record(a, int64_t(a.elem_bytes) * mask->count, mask->warps, 1, first_byte);
        return;
    }
    keys.clear();
    int active = 0;
    const int64_t bytes = gather(a, t, t + 1, active);
    const int64_t per_request = transactions(a, first_byte);
    record(a, bytes * mask->count, mask->warps, per_request, first_byte);
}

int64_t Machine::ascending(const Access &a, int begin, int end, int &active, int64_t &first_byte) {
    const bool global = a.storage->place == Storage::Global;
    const int shift = global ? 5 : 2; // sectors of 32 bytes, words of 4
    int64_t previous = -1, distinct = 0;
    int most = 0;
    std::array<int, 32> per_bank{};
    for (int t = begin; t < end; t++) {
        if (!mask->on[t]) continue;
        const int64_t byte = lane_ptr(a.index, t, 1)->i * a.elem_bytes;
        if (active++ == 0) first_byte = byte;
        const int64_t key = byte >> shift;
        if (key == previous) continue;
        if (key < previous) return -1;
        previous = key;
        distinct++;
        if (!global) most = std::max(most, ++per_bank[size_t(key & 31)]);
    }
    return global ? distinct : most;
}

int64_t Machine::gather(const Access &a, int begin, int end, int &active) {
    const int L = a.lanes, eb = a.elem_bytes;
    const bool global = a.storage->place == Storage::Global;
    int64_t bytes = 0;
    for (int t = begin; t < end; t++) {
        if (!mask->on[t]) continue;
        active++;
        const Word *index = lane_ptr(a.index, t, L);
        const Word *pred = a.has_predicate ? lane_ptr(a.predicate, t, L) : nullptr;
        for (int l = 0; l < L; l++) {
            if (pred && !pred[l].u) continue;
            const int64_t byte = index[l].i * eb;
            bytes += eb;
            if (global) {
                keys.push_back(byte >> 5); // elements are aligned: never across sectors
                continue;
            }
            for (int64_t word = byte >> 2; word <= (byte + eb - 1) >> 2; word++)
                keys.push_back(word);
        }
    }
    return bytes;
}

int64_t Machine::transactions(const Access &a, int64_t &first_byte) {
    if (keys.empty()) return 0;
    if (a.storage->place == Storage::Global) {
        first_byte = keys[0] * 32;
        return distinct_count(keys);
    }
    first_byte = keys[0] * 4;
    return bank_wavefronts(keys);
}

void Machine::record(const Access &a, int64_t bytes, int warps, int64_t per_request,
                     int64_t first_byte) {
    Site &site = *a.site;
    site.requests += warps;
    site.bytes += bytes;
    if (per_request == 0) return; // every lane predicated off
    site.transactions += per_request * warps;
    Storage &s = *a.storage;
    if (s.place == Storage::Global) {
        s.traffic_bytes[a.is_store] += bytes;
        s.traffic_sectors[a.is_store] += per_request * warps;
        return;
    }
    if (site.memory.empty()) {
        const int32_t owner = checks ? shadow.cell(first_byte / shadow.granule_bytes()).owner : -1;
        site.memory = shared_func(first_byte, owner);
        if (site.memory.empty()) site.memory = s.name;
    }
}

void Machine::fault(const Access &a, int t, int64_t index, int64_t limit) const {
    const Storage &s = *a.storage;
    std::ostringstream os;
    os << "kernel " << kernel.name << ": thread " << describe_thread(t) << " of block "
       << describe_block() << (a.is_store ? " stores to " : " loads from ");
    switch (s.place) {
    case Storage::Global:
        os << "buffer " << s.name;
        break;
    case Storage::Shared:
        os << "shared memory (" << s.name << ")";
        break;
    case Storage::Private:
        os << "allocation " << s.name;
        break;
    }
    os << " at index " << index << ", outside its valid range [0, " << limit << ") of "
       << a.elem_bytes << "-byte elements (" << s.bytes << " bytes"
       << (s.place == Storage::Private ? " per thread" : "") << ")";
    if (s.place == Storage::Shared) os << nearest_shared_func(index * a.elem_bytes);
    os << context(*a.site, t);
    throw KernelFault(os.str());
}

std::string Machine::nearest_shared_func(int64_t byte) const {
    const lowering::SharedAllocation *nearest = nullptr;
    int64_t distance = 0;
    for (const lowering::SharedAllocation &s : kernel.shared) {
        const int64_t d = byte < s.offset ? s.offset - byte : byte - (s.offset + s.bytes);
        if (!nearest || d < distance) {
            nearest = &s;
            distance = d;
        }
    }
    if (!nearest) return "";
    std::ostringstream os;
    os << "; byte " << byte << " is " << (byte < nearest->offset ? "before " : "past ")
       << nearest->func << ", which lives at bytes [" << nearest->offset << ", "
       << nearest->offset + nearest->bytes << ")";
    return os.str();
}

void Machine::outside_own_allocation(const Access &a, int t, int64_t byte) const {
    const lowering::SharedAllocation &own = kernel.shared[size_t(a.site->func_shared)];
    std::ostringstream os;
    os << "kernel " << kernel.name << ": thread " << describe_thread(t) << " of block "
       << describe_block() << " stores " << a.elem_bytes << " bytes at byte " << byte
       << " of shared memory, outside " << own.func << ", which it is computing and which "
       << "lives at bytes [" << own.offset << ", " << own.offset + own.bytes << ")";
    const std::string other = shared_func(byte, -1);
    if (!other.empty()) os << ": it overwrites " << other;
    os << context(*a.site, t);
    throw KernelFault(os.str());
}

void Machine::shared_fault(const Access &a, int t, int64_t byte, const Conflict &c,
                           int32_t owner) const {
    const Site &site = *a.site;
    const std::string func = shared_func(byte, owner);
    std::ostringstream os;
    os << "kernel " << kernel.name << ": ";
    if (c.hazard == Hazard::Uninitialized) {
        os << "thread " << describe_thread(t) << " of block " << describe_block() << " loads "
           << describe_shared(byte, owner, a.elem_bytes)
           << ", which no thread of the block has written since the kernel started ("
           << label(site, func, t) << ")";
        throw KernelFault(os.str());
    }
    const bool other_stored = c.hazard != Hazard::WriteAfterRead;
    os << "shared-memory race in block " << describe_block() << " on "
       << describe_shared(byte, owner, a.elem_bytes) << ": thread " << describe_thread(c.other)
       << (other_stored ? " stores it" : " loads it");
    if (c.other_site) os << " (" << label(*c.other_site, func) << ")";
    os << " and thread " << describe_thread(t) << (a.is_store ? " stores it" : " loads it") << " ("
       << label(site, func, t)
       << ") with no barrier between them. A barrier must separate a thread's access from "
       << "another thread's write of the same shared memory.";
    throw KernelFault(os.str());
}

} // namespace sim
} // namespace backends
} // namespace aicf
