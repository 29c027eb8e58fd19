#ifndef AICF_TARGET_H
#define AICF_TARGET_H

// What to compile for: the host CPU, optionally with a CUDA GPU ("host-cuda-sm_90"), and
// optional features ("host-fma"). Lowering asks the target what it can do (threads per
// block, shared memory, tensor-core instructions) and refuses what it cannot, with a
// CompileError, before any code is generated. (Until GPU lowering lands, a pipeline compiled
// for a target with a GPU still runs entirely on the host.)

#include <cstdint>
#include <string>

namespace aicf {

class Target {
public:
    enum Arch { Host };
    enum Feature {
        // Let floating-point a * b + c become one fused multiply-add (one rounding instead
        // of two), as CUDA does by default. Results may then differ in the last bits between
        // schedules that group the operations differently.
        FMA = 1 << 0,
    };

    Target() = default;
    // Parses "host", then any of "-fma" and "-cuda-sm_<NN>" (NN in 80, 86, 89, 90, 90a), e.g.
    // "host-cuda-sm_90a-fma". Raises CompileError naming the valid forms otherwise.
    explicit Target(const std::string &s);

    Arch arch() const { return arch_; }
    bool has_feature(Feature f) const { return (features_ & f) != 0; }
    Target with_feature(Feature f) const;
    std::string to_string() const;
    bool operator==(const Target &o) const {
        return arch_ == o.arch_ && features_ == o.features_ && cuda_sm_ == o.cuda_sm_ &&
               arch_specific_ == o.arch_specific_;
    }

    // The GPU, if any.
    bool has_cuda() const { return cuda_sm_ != 0; }
    // Compute capability as 10 * major + minor (80, 86, 89, 90); 0 without a GPU.
    int cuda_capability() const { return cuda_sm_; }
    // sm_90a: the architecture-specific instructions of Hopper (wgmma, TMA).
    bool is_arch_specific() const { return arch_specific_; }

    // What the GPU allows per thread block.
    int max_threads_per_block() const { return has_cuda() ? 1024 : 0; }
    int warp_size() const { return has_cuda() ? 32 : 0; }
    // Shared memory a block may use once the kernel opts in above the 48 KiB default.
    int64_t max_shared_memory_per_block() const;

private:
    Arch arch_ = Host;
    unsigned features_ = 0;
    int cuda_sm_ = 0;
    bool arch_specific_ = false;
};

// The host target, or the one named by AICF_TARGET.
Target get_target_from_environment();

} // namespace aicf

#endif
