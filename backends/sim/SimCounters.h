#ifndef AICF_BACKENDS_SIM_SIMCOUNTERS_H
#define AICF_BACKENDS_SIM_SIMCOUNTERS_H

// The simulator's launch-wide counters (see Profile.h for what they mean to a user) and the
// two measures of one warp's memory request: distinct 32-byte sectors for global memory, and
// wavefronts through the 32 four-byte banks for shared memory.

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace aicf {
namespace backends {
namespace sim {

// The class an instruction counts in; None for nodes that are no instruction (constants,
// variables, lets, thread and block indices).
enum class OpClass : uint8_t {
    None,
    Integer,
    Float,
    GlobalLoad,
    GlobalStore,
    SharedLoad,
    SharedStore,
    TensorCore, // mma.sync, once per warp
    Other,
    Count
};

struct Counters {
    std::array<int64_t, size_t(OpClass::Count)> instructions{};
    int64_t flops = 0;
    int64_t tensor_flops = 0; // 2 m n k per warp-level mma
    int64_t barriers = 0;

    void count(OpClass c, int64_t warp_instructions) {
        instructions[size_t(c)] += warp_instructions;
    }
};

// The number of distinct values in `keys` (sorted first when they are not in order).
inline int64_t distinct_count(std::vector<int64_t> &keys) {
    if (keys.empty()) return 0;
    if (!std::is_sorted(keys.begin(), keys.end())) std::sort(keys.begin(), keys.end());
    int64_t distinct = 1;
    for (size_t i = 1; i < keys.size(); i++)
        distinct += keys[i] != keys[i - 1];
    return distinct;
}

// Wavefronts of a shared request touching the 4-byte `words` in `keys`: the banks serve one
// word each per wavefront, and threads reading the same word share it (a broadcast), so it
// is the largest number of distinct words that fall into one bank, at least 1.
inline int64_t bank_wavefronts(std::vector<int64_t> &keys) {
    if (keys.empty()) return 0;
    if (!std::is_sorted(keys.begin(), keys.end())) std::sort(keys.begin(), keys.end());
    std::array<int, 32> per_bank{};
    int most = 0;
    for (size_t i = 0; i < keys.size(); i++) {
        if (i > 0 && keys[i] == keys[i - 1]) continue;
        most = std::max(most, ++per_bank[size_t(keys[i] & 31)]);
    }
    return most;
}

} // namespace sim
} // namespace backends
} // namespace aicf

#endif
