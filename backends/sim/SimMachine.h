#ifndef AICF_BACKENDS_SIM_SIMMACHINE_H
#define AICF_BACKENDS_SIM_SIMMACHINE_H

// The state of one block in the simulator: its threads' columns of values, the active mask,
// shared and private memory, and the one function every load and store goes through.

#include "backends/sim/SimValue.h"
#include "lowering/Kernel.h"

#include <algorithm>
#include <array>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace aicf {
namespace backends {
namespace sim {

// Memory nobody wrote holds this byte, so that reading it does not silently give 0.
constexpr uint8_t kGarbageByte = 0xCD;

// A column of values of some type with L lanes: L words when the value is uniform (the same
// in every active thread), else threads * L words, thread-major.
struct Col {
    const Word *p = nullptr;
    bool uniform = true;
};

// The words of thread t's lanes.
inline const Word *lane_ptr(Col c, int t, int lanes) {
    return c.uniform ? c.p : c.p + size_t(t) * lanes;
}

// The threads that execute a node: `on` per thread, with their count and the lowest and
// highest active thread.
struct Mask {
    std::vector<uint8_t> on;
    int count = 0, first = -1, last = -1;

    void resize(int threads) { on.assign(size_t(threads), 0); }
    void recount() {
        count = 0;
        first = last = -1;
        for (int t = 0; t < int(on.size()); t++) {
            if (!on[t]) continue;
            if (first < 0) first = t;
            last = t;
            count++;
        }
    }
};

// A memory a kernel can access: a buffer argument, the block's shared memory, or an
// allocation private to each thread (thread t's copy at base + t * bytes).
struct Storage {
    enum Place : uint8_t { Global, Shared, Private };
    Place place = Global;
    std::string name;
    uint8_t *base = nullptr;
    int64_t bytes = 0; // private storage: per thread
    std::vector<uint8_t> owned;
};

// One load or store instruction, for all threads of the block.
struct Access {
    Storage *storage = nullptr;
    Kind kind = Kind::Int;
    int bits = 0, elem_bytes = 0, lanes = 1;
    bool is_store = false;
    Col index;     // in elements of the accessed type
    Col predicate; // lanes that access memory, when has_predicate
    bool has_predicate = false;
    Col value;           // stores: the values
    Word *out = nullptr; // loads: threads * lanes words, or lanes words for a uniform result
};

class Machine {
public:
    explicit Machine(const lowering::LoweredKernel &k)
        : kernel(k), n(k.thread_count()), threads(k.threads), shared(size_t(k.shared_bytes)) {
        for (int d = 0; d < 3; d++)
            thread_index[d].resize(size_t(n));
        for (int t = 0; t < n; t++) {
            thread_index[0][t] = word_u(uint64_t(t % threads[0]));
            thread_index[1][t] = word_u(uint64_t((t / threads[0]) % threads[1]));
            thread_index[2][t] = word_u(uint64_t(t / (threads[0] * threads[1])));
        }
    }

    // Runs one load or store for the active threads. Every memory access of the kernel comes
    // through here with all its threads' addresses, so per-instruction counters (bytes,
    // sectors per warp, bank conflicts) and race checks belong here. Returns whether a load's
    // result is uniform: when all active threads read the same address of memory they share,
    // or when only one thread is active.
    bool access(const Access &a) {
        const int L = a.lanes;
        const bool same_address = a.storage->place != Storage::Private && a.index.uniform &&
                                  (!a.has_predicate || a.predicate.uniform);
        if (mask->count == 1 || same_address) {
            // Stores from several threads to one address: the highest thread's value wins.
            const int t = a.is_store ? mask->last : mask->first;
            access_thread(a, t, a.out, a.is_store ? lane_ptr(a.value, t, L) : nullptr);
            return true;
        }
        for (int t = 0; t < n; t++) {
            Word *out = a.is_store ? nullptr : a.out + size_t(t) * L;
            if (!mask->on[t]) {
                if (out) std::fill(out, out + L, word_u(0));
                continue;
            }
            access_thread(a, t, out, a.is_store ? lane_ptr(a.value, t, L) : nullptr);
        }
        return false;
    }

    std::string describe_thread(int t) const {
        std::ostringstream os;
        os << "(" << thread_index[0][t].i << ", " << thread_index[1][t].i << ", "
           << thread_index[2][t].i << ")";
        return os.str();
    }

    std::string describe_block() const {
        std::ostringstream os;
        os << "(" << block[0] << ", " << block[1] << ", " << block[2] << ")";
        return os.str();
    }

    const lowering::LoweredKernel &kernel;
    const int n; // threads per block
    const std::array<int, 3> threads;
    std::array<int, 3> block{{0, 0, 0}};
    const Mask *mask = nullptr;
    std::vector<Col> slots;            // the values of bound variables
    std::vector<Word> thread_index[3]; // per dimension, one word per thread
    std::vector<uint8_t> shared;       // the block's shared memory
    Storage shared_storage;
    std::vector<std::unique_ptr<Storage>> storages; // buffer arguments and allocations

private:
    // Thread t's lanes of one instruction; `out` receives a load's lanes, `value` holds a
    // store's. Lanes the predicate turns off touch no memory and load 0.
    void access_thread(const Access &a, int t, Word *out, const Word *value) {
        const int L = a.lanes;
        const Word *index = lane_ptr(a.index, t, L);
        const Word *pred = a.has_predicate ? lane_ptr(a.predicate, t, L) : nullptr;
        const Storage &s = *a.storage;
        uint8_t *base = s.base + (s.place == Storage::Private ? size_t(t) * size_t(s.bytes) : 0);
        const int64_t limit = s.bytes / a.elem_bytes;
        for (int l = 0; l < L; l++) {
            if (pred && !pred[l].u) {
                if (out) out[l] = word_u(0);
                continue;
            }
            const int64_t i = index[l].i;
            if (i < 0 || i >= limit) fault(a, t, i, limit);
            uint8_t *p = base + i * a.elem_bytes;
            if (out) {
                out[l] = read_element(p, a.kind, a.bits);
            } else {
                write_element(p, a.kind, a.bits, value[l]);
            }
        }
    }

    [[noreturn]] void fault(const Access &a, int t, int64_t index, int64_t limit) const {
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
        throw RuntimeError(os.str());
    }
};

} // namespace sim
} // namespace backends
} // namespace aicf

#endif
