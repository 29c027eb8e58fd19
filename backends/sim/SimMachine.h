#ifndef AICF_BACKENDS_SIM_SIMMACHINE_H
#define AICF_BACKENDS_SIM_SIMMACHINE_H

// The state of one block in the simulator: its threads' columns of values, the active mask,
// shared and private memory, and the one function every load and store goes through, which
// checks each access (bounds; races and unwritten reads in shared memory, see SimChecks.h)
// and counts what the warps ask of memory (SimCounters.h).

#include "backends/sim/SimChecks.h"
#include "backends/sim/SimCounters.h"
#include "backends/sim/SimValue.h"
#include "lowering/Kernel.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
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

// The threads that execute a node: `on` per thread, with their count, the lowest and highest
// active thread, and the number of warps (32 consecutive threads) with an active thread.
struct Mask {
    std::vector<uint8_t> on;
    int count = 0, first = -1, last = -1, warps = 0;

    void resize(int threads) { on.assign(size_t(threads), 0); }
    void recount() {
        count = warps = 0;
        first = last = -1;
        const int n = int(on.size());
        for (int w = 0; w < n; w += 32) {
            const int end = std::min(n, w + 32);
            const int active = count_on(w, end);
            if (active == 0) continue;
            count += active;
            warps++;
            if (first < 0) {
                first = w;
                while (!on[size_t(first)])
                    first++;
            }
            last = end - 1;
            while (!on[size_t(last)])
                last--;
        }
    }

private:
    // The active threads in [begin, end): the flags are bytes of 0 or 1, so multiplying
    // eight of them read as a word by 0x0101...01 sums them into the top byte.
    int count_on(int begin, int end) const {
        int active = 0, t = begin;
        for (; t + 8 <= end; t += 8) {
            uint64_t eight;
            std::memcpy(&eight, &on[size_t(t)], 8);
            active += int((eight * 0x0101010101010101ull) >> 56);
        }
        for (; t < end; t++)
            active += on[size_t(t)];
        return active;
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
    // Global traffic over the launch, by direction (0: loads, 1: stores).
    int64_t traffic_bytes[2] = {0, 0};
    int64_t traffic_sectors[2] = {0, 0};
};

// Where an instruction stands in the kernel body, for messages and the profile, and what it
// did over the launch.
struct Site {
    enum Op : uint8_t { Load, Store, Barrier, Shuffle };
    Op op = Load;
    const Storage *storage = nullptr; // loads and stores
    std::string func;                 // the Func being computed there
    std::string loop;                 // the innermost enclosing loop, "" outside loops
    int loop_slot = -1;               // that loop's variable
    int func_shared = -1;       // `func`'s allocation in LoweredKernel::shared, -1 if not there
    bool wgmma_operand = false; // a Load: an operand wgmma.mma_async reads (labelled so)
    // Loads and stores: what they touched (shared: the Func, found at the first request).
    std::string memory;
    int64_t requests = 0, bytes = 0;
    int64_t transactions = 0; // global: sectors; shared: wavefronts
};

// One load or store instruction, for all threads of the block.
struct Access {
    Storage *storage = nullptr;
    Site *site = nullptr;
    Kind kind = Kind::Int;
    int bits = 0, elem_bytes = 0, lanes = 1;
    bool is_store = false;
    bool atomic = false;  // part of an atomic read-modify-write: no race checks
    bool profiled = true; // counted as an instruction and in the profile (false: the caller does)
    Col index;            // in elements of the accessed type
    Col predicate;        // lanes that access memory, when has_predicate
    bool has_predicate = false;
    Col value;           // stores: the values
    Word *out = nullptr; // loads: threads * lanes words, or lanes words for a uniform result
};

class Machine {
public:
    Machine(const lowering::LoweredKernel &k, bool checks);

    // Runs one load or store for the active threads. Every memory access of the kernel comes
    // through here with all its threads' addresses. Returns whether a load's result is
    // uniform: when all active threads read the same address of memory they share, or when
    // only one thread is active.
    bool access(const Access &a);

    // A barrier that all threads reached.
    void barrier();

    void start_block(const std::array<int, 3> &b);

    // A warp shuffle (shfl.sync.bfly) of the active threads: thread t reads the value of
    // lane (t's lane xor `offset`) of its warp. Checks that each active thread is in its own
    // member mask (one word per thread in `member_mask`), that every lane of that mask is an
    // active thread executing the shuffle with the same mask, and that the lane it reads is
    // one of them. Returns the thread each active thread reads.
    const std::vector<int> &shuffle_sources(Col member_mask, int offset, const Site &site);

    // cp.async. async_copy starts, for each active thread, the copy of `values` (what the
    // copy reads from device memory, loaded at once: lanes past the valid ones are zeros)
    // into shared memory at `dst` (elements of `shape`'s type): its bytes stay pending, and
    // any access to them raises a RuntimeError, until the thread's async_wait covers its
    // group, which writes them (as the thread's own store, for the race checks).
    // async_commit closes each active thread's open group. async_wait(n) completes the
    // groups of each active thread older than its n most recent; a wait with copies not yet
    // committed is reported (no wait would ever cover them).
    void async_copy(const Access &shape, Col dst, Col values);

    // Counts one ldmatrix of `matrices` 8x8 matrices of 16-bit elements per active warp, whose
    // row addresses (elements of `shape`'s type) are in `rows`: one shared request moving
    // 128 bytes a matrix, in as many wavefronts as the most of a matrix's eight 16-byte rows
    // that fall in one group of four banks (the model ldmatrix's swizzles are built for).
    void profile_ldmatrix(const Access &shape, Col rows, int matrices);
    // Counts one warpgroup's wgmma.mma_async reading `bytes` of one operand from shared memory,
    // starting at `first_byte`: one request, one wavefront per 128 bytes (the operand's 8 x
    // 16-byte core matrices each lie in 128 contiguous bytes, one pass through the banks).
    void profile_wgmma_operand(const Access &shape, int64_t bytes, int64_t first_byte);
    void async_commit();
    void async_wait(int n, const Site &site);

    // wgmma.mma_async reads its operands from shared memory at any time until a
    // wgmma.wait_group retires its group. wgmma_issue records the bytes the instruction of
    // warpgroup `warpgroup` reads (the first byte of each `element_bytes`-byte element):
    // until it is retired, a store or a cp.async to them raises a RuntimeError.
    // wgmma_commit closes the open group of each warpgroup with an active thread;
    // wgmma_wait(n) retires its groups older than its n most recent. A wait with wgmma not
    // yet committed is reported, as for cp.async.
    void wgmma_issue(int warpgroup, std::vector<int64_t> elements, int element_bytes,
                     const Site &site);
    void wgmma_commit();
    void wgmma_wait(int n, const Site &site);

    // Checks that every warp with an active thread executes `instruction` (a warp-collective
    // one: mma.sync, ldmatrix) with all 32 lanes: a RuntimeError names the first lane that
    // does not. With `group` 128: every warpgroup with all 128 threads (wgmma).
    void require_whole_warps(const Site &site, const char *instruction, int group = 32) const;

    // "load in[...] in f at f.s0.x": what an instruction is, for messages and profiles.
    // `memory` names what a shared access touches before its first request has; with a
    // thread, the loop's value in that thread follows ("at x = 3").
    std::string label(const Site &s, const std::string &memory = "", int thread = -1) const;

    // The site's loop as users know it: its variable alone when it is a loop of the Func the
    // site computes ("x"), else with its stage ("x of g.update(0)").
    static std::string loop_text(const Site &s);

    // " (while computing f, in loop x = 3)": where thread t is, for messages.
    std::string context(const Site &s, int t) const;

    // " = 3": the value of the site's loop variable in thread t, if it has one now.
    std::string loop_value(const Site &s, int t) const;

    // "(1, 0, 0)": thread t's index, and the block's.
    std::string describe_thread(int t) const;
    std::string describe_block() const;

    const lowering::LoweredKernel &kernel;
    const int n; // threads per block
    const std::array<int, 3> threads;
    const bool checks; // the expensive ones: races and unwritten shared memory
    std::array<int, 3> block{{0, 0, 0}};
    const Mask *mask = nullptr;
    std::vector<Col> slots;            // the values of bound variables
    std::vector<Word> thread_index[3]; // per dimension, one word per thread
    std::vector<uint8_t> shared;       // the block's shared memory
    Storage shared_storage;
    std::vector<std::unique_ptr<Storage>> storages; // buffer arguments and allocations
    std::vector<std::unique_ptr<Site>> sites;       // in program order
    SharedShadow shadow;
    Counters counters;

    // Copies a thread has started and not completed.
    struct PendingCopy {
        int64_t dst = 0;    // element of the destination
        int64_t group = -1; // -1 until committed
        Access shape;       // the store that completes it (lanes, type, site)
        std::vector<Word> values;
    };
    std::vector<std::vector<PendingCopy>> pending_copies; // per thread
    std::vector<int64_t> committed_groups;                // per thread
    std::vector<int32_t> pending_byte_owner;              // per shared byte: thread + 1, or 0
    int64_t pending_bytes = 0;

    // wgmma a warpgroup has issued and not retired.
    struct PendingWgmma {
        int64_t group = -1;            // -1 until committed
        std::vector<int64_t> elements; // the first byte of each element it reads
        int element_bytes = 2;
        const Site *site = nullptr;
    };
    std::vector<std::vector<PendingWgmma>> pending_wgmma; // per warpgroup
    std::vector<int64_t> wgmma_groups;                    // committed, per warpgroup
    std::vector<uint16_t> wgmma_readers; // per shared byte: pending wgmma that read it
    int64_t wgmma_read_bytes = 0;
    // Per shared byte: the warpgroups (a bit each; a block has at most 8) whose wait retired a
    // wgmma that read it since the last barrier. Their own threads may change it; another
    // warpgroup's only after a barrier, as it may not have reached that wait yet. The records
    // retired since the last barrier, to clear their bits there.
    std::vector<uint8_t> wgmma_unsynced;
    std::vector<PendingWgmma> wgmma_retired;
    int64_t wgmma_unsynced_bytes = 0;

private:
    // The steps of access(), defined in SimMachine.cpp, the one file that calls them. They
    // are inline so that the compiler may inline them into its loops there: it inlines no
    // function the shared library exports, which the dynamic linker could replace.

    // The lanes of the active threads in [begin, end) of one instruction. A load's lanes go
    // to its result, all in its first `lanes` words when `uniform`, else thread-major (with
    // 0 for inactive threads); a store's come from its value. Lanes the predicate turns off
    // touch no memory and load 0.
    inline void run_threads(const Access &a, int begin, int end, bool uniform);

    // Records thread t's lanes of a shared access in the shadow, without moving data.
    inline void shadow_thread(const Access &a, int t);

    inline void shadow_element(const Access &a, int t, int64_t i);

    // Several threads store to one shared address in one instruction: a race unless they
    // all store the same value.
    inline void check_one_value(const Access &a);

    // The Func that lives at `byte` of shared memory: the one last stored there (`owner`),
    // else every Func whose range holds it (lifetimes may share bytes), else "".
    inline std::string shared_func(int64_t byte, int32_t owner) const;

    // A global request per warp with an active thread: bytes asked for, distinct 32-byte
    // sectors; a shared one: wavefronts through the banks.
    inline void profile_warps(const Access &a);

    // Every active thread asks for what thread t asks for.
    inline void profile_uniform(const Access &a, int t);

    // The sectors or wavefronts of the request of threads [begin, end), one element of at
    // most 4 bytes each, counted as the addresses come: they usually ascend, so a new sector
    // or word is one unlike the previous. -1 when they do not ascend.
    inline int64_t ascending(const Access &a, int begin, int end, int &active, int64_t &first_byte);

    // Appends the sectors (global) or words (shared) of the active threads in [begin, end)
    // to `keys`, counts those threads in `active`, and returns their bytes.
    inline int64_t gather(const Access &a, int begin, int end, int &active);

    // The sectors or wavefronts of the request in `keys`, and the first byte it touches.
    inline int64_t transactions(const Access &a, int64_t &first_byte);

    // `warps` requests of `per_request` sectors or wavefronts each, asking for `bytes` in
    // all; `first_byte` is one they touch.
    inline void record(const Access &a, int64_t bytes, int warps, int64_t per_request,
                       int64_t first_byte);

    [[noreturn]] inline void fault(const Access &a, int t, int64_t index, int64_t limit) const;
    // A RuntimeError when an access touches bytes a cp.async is still copying to.
    void check_not_pending(const Access &a) const;
    // The per-thread state of cp.async, made when a kernel first uses it.
    void track_async_copies();
    // A RuntimeError when thread t writes `bytes` bytes of shared memory from `first` (elements
    // of `element_bytes`) that a wgmma still reads; `what` says how ("stores to").
    void check_not_read_by_wgmma(int t, int64_t first, int64_t bytes, int element_bytes,
                                 const char *what, const Site &site) const;
    // The first active thread of warpgroup g, or -1.
    int first_active_thread_of_warpgroup(size_t g) const;
    // Retires (or forgets, with start_block) warpgroup g's wgmma for which `done` holds; the
    // bytes of those retired by a wait stay unsynced until the next barrier.
    template <typename Done> void retire_wgmma(size_t g, Done done, bool by_wait);
    // At a barrier (or a new block): every warpgroup has passed the waits before it.
    void forget_retired_wgmma();
    // At a new block: every wgmma of the last one is done.
    void forget_all_wgmma();
    // "tile[32] at byte 128 of shared memory" (the element of `bytes`-byte elements of the
    // Func that lives there), or "byte 128 of shared memory" where no Func is.
    std::string describe_shared(int64_t byte, int32_t owner, int bytes) const;

    // For an access outside shared memory: the Func whose range ends or starts nearest to it.
    inline std::string nearest_shared_func(int64_t byte) const;

    [[noreturn]] inline void outside_own_allocation(const Access &a, int t, int64_t byte) const;

    [[noreturn]] inline void shared_fault(const Access &a, int t, int64_t byte, const Conflict &c,
                                          int32_t owner) const;

    std::vector<int64_t> keys; // the sectors or words of one warp's request
    std::vector<int> sources;  // shuffle_sources' result
};

} // namespace sim
} // namespace backends
} // namespace aicf

#endif
