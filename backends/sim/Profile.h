#ifndef AICF_BACKENDS_SIM_PROFILE_H
#define AICF_BACKENDS_SIM_PROFILE_H

// What one kernel launch on the simulator did, counted the way a GPU profiler counts it:
// memory traffic per buffer, 32-byte sectors per warp-level global memory request (how well
// the accesses coalesce), shared-memory wavefronts per request (bank conflicts), barriers,
// instructions by class and floating-point operations.
//
// A warp is 32 consecutive linear thread ids (x fastest, then y, then z). A request is one
// memory instruction executed by one warp with at least one active thread.
//
//   sim::ProfileRecorder recorder;                  // records the sim launches of this thread
//   Buffer<float> out = f.realize({W, H}, gpu);
//   for (const sim::KernelProfile &p : recorder.launches()) std::cout << p.to_string();
//
// With AICF_SIM_PROFILE=1 every launch also prints its profile to stderr.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace aicf {
namespace backends {
namespace sim {

// The traffic of one buffer argument.
struct BufferTraffic {
    std::string name;
    int64_t bytes_loaded = 0, bytes_stored = 0;  // what the active lanes asked for
    int64_t load_sectors = 0, store_sectors = 0; // 32-byte sectors, summed over requests
};

// One load or store of the kernel body (one IR node), over the whole launch.
struct MemoryInstructionProfile {
    // "load in[...] in f at f.s0.x": the operation, the buffer or shared Func, the Func being
    // computed and the innermost loop. Unique within a profile (a "#2" suffix tells apart
    // instructions that would read the same).
    std::string label;
    std::string memory; // the buffer argument, or the Func that lives where it accesses
    bool shared = false, store = false;
    int64_t requests = 0;   // warp-level executions
    int64_t bytes = 0;      // bytes the active lanes asked for
    int64_t sectors = 0;    // global: distinct 32-byte sectors per request, summed
    int64_t wavefronts = 0; // shared: passes through the 32 banks per request, summed

    double sectors_per_request() const;
    double wavefronts_per_request() const;
    // Shared: wavefronts per request over the fewest a request of its size needs (one per 128
    // bytes): 1 without bank conflicts, 32 for a warp's 32 words in one bank.
    double conflict_ways() const;
    // Global: bytes asked for / bytes moved (sectors * 32); 1 is fully coalesced, and more
    // than 1 where lanes ask for the same bytes (a broadcast, as nvprof's gld_efficiency).
    double efficiency() const;
};

struct InstructionCounts {
    // Warp-level instructions: each IR operation executed by a warp counts once per lane of
    // its vector type (memory instructions once per request).
    int64_t integer = 0, floating = 0;
    int64_t global_load = 0, global_store = 0;
    int64_t shared_load = 0, shared_store = 0;
    int64_t tensor_core = 0; // mma.sync, once per warp
    int64_t other = 0;       // conversions, selects, vector shuffling, register arrays

    int64_t total() const;
};

struct KernelProfile {
    std::string kernel;
    std::array<int, 3> grid{{0, 0, 0}}, block{{1, 1, 1}};
    std::vector<BufferTraffic> buffers;                        // in argument order
    std::vector<MemoryInstructionProfile> memory_instructions; // in program order
    InstructionCounts instructions;
    int64_t flops = 0; // per active lane: add, sub, mul, div, mod, min, max, math calls 1; fma 2
    int64_t tensor_flops = 0; // on tensor cores: 2 m n k per warp-level mma
    int64_t barriers = 0;     // barriers executed, summed over blocks

    int64_t blocks() const;
    int64_t global_bytes_loaded() const;
    int64_t global_bytes_stored() const;
    int64_t global_sectors() const;
    // All global requests: bytes asked for / (sectors * 32), above 1 with broadcasts.
    double global_efficiency() const;
    int64_t shared_requests() const;
    int64_t shared_wavefronts() const;
    // The shared-memory instruction with the worst bank conflicts (the most conflict_ways; of
    // equals, the first), null without any.
    const MemoryInstructionProfile *worst_shared_instruction() const;
    // The first memory instruction whose label contains `text` (null if none).
    const MemoryInstructionProfile *find_instruction(const std::string &text) const;
    const BufferTraffic *find_buffer(const std::string &name) const;

    // A readable table of everything above.
    std::string to_string() const;
};

// Records the profiles of the simulator launches the constructing thread makes while it is
// alive (launches run on the thread that calls them; a recorder must be destroyed on the
// thread that made it). Recorders nest: every live recorder of the thread receives each
// launch.
class ProfileRecorder {
public:
    ProfileRecorder();
    ~ProfileRecorder();
    ProfileRecorder(const ProfileRecorder &) = delete;
    ProfileRecorder &operator=(const ProfileRecorder &) = delete;

    const std::vector<KernelProfile> &launches() const { return recorded; }
    void clear() { recorded.clear(); }

private:
    friend void record_launch(const KernelProfile &profile);
    std::vector<KernelProfile> recorded;
};

// Hands a finished launch's profile to the live recorders of this thread (and prints it when
// AICF_SIM_PROFILE=1). The simulator calls it at the end of every launch.
void record_launch(const KernelProfile &profile);

} // namespace sim
} // namespace backends
} // namespace aicf

#endif
