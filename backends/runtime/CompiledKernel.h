#ifndef AICF_BACKENDS_RUNTIME_COMPILED_KERNEL_H
#define AICF_BACKENDS_RUNTIME_COMPILED_KERNEL_H

// A GPU kernel as devices run it: its launch shape, its parameters in launch order, and its
// code, with no compiler IR in sight. A GPU gets PTX, made from the kernel on first use (a
// pipeline that only ever runs on the simulator never pays for NVPTX); the simulator, which
// executes the kernel IR itself, gets that IR through an opaque handle.

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace aicf {
namespace lowering {
struct LoweredKernel;
}

namespace runtime {

struct KernelParameter {
    std::string name;
    bool is_buffer = false;
    int scalar_bytes = 0; // scalars: the bytes of the value a launch passes
    bool written = false; // buffers: the kernel stores to it
};

// The check slot's 64-bit words: set when a check failed; the runtime_error kind; the index of
// its name in check_names; six values for its message; the failing thread's block index
// (x, y, z) and thread index (x, y, z).
enum CheckSlotWord {
    kCheckSlotFailed = 0,
    kCheckSlotKind = 1,
    kCheckSlotName = 2,
    kCheckSlotDetails = 3,
    kCheckSlotBlock = 9,
    kCheckSlotThread = 12,
    kCheckSlotWords = 16,
};

class CompiledKernel {
public:
    // `make_ptx` makes the kernel's PTX when a GPU first needs it.
    CompiledKernel(std::shared_ptr<const lowering::LoweredKernel> ir,
                   std::function<std::string()> make_ptx);

    std::string name;               // unique within its pipeline
    uint64_t id = 0;                // unique in the process (devices cache loaded code by it)
    std::vector<std::string> funcs; // the Funcs it computes, for messages
    std::array<int, 3> threads{{1, 1, 1}}; // block shape
    int64_t shared_bytes = 0;              // dynamic shared memory per block
    int min_compute_capability = 0;        // of the GPU it was compiled for (10 * major + minor)
    std::vector<KernelParameter> params;
    // The names its run-time checks report (lowering::kernel_check_names). A kernel with
    // checks takes one more parameter on a GPU: a 128-byte check slot, zero before the launch,
    // where the first failed check writes what the host needs to raise its message
    // (kCheckSlot* below).
    std::vector<std::string> check_names;
    // The kernel assembled ahead of time, by compute capability; a GPU loads the one for its
    // own capability where there is one, else the PTX.
    std::vector<std::pair<int, std::string>> cubins;

    // The kernel in PTX (compiled once, on the first call; thread-safe).
    const std::string &ptx() const;
    // The kernel IR, for the simulator.
    const lowering::LoweredKernel &ir() const { return *ir_; }

private:
    struct LazyPTX {
        std::function<std::string()> make;
        std::once_flag made;
        std::string text;
    };
    std::shared_ptr<const lowering::LoweredKernel> ir_;
    std::shared_ptr<LazyPTX> ptx_; // shared by copies, so the PTX is made once
};

} // namespace runtime
} // namespace aicf

#endif
