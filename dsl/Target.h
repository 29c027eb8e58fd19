#ifndef AICF_TARGET_H
#define AICF_TARGET_H

// What to compile for: a CPU, optionally with a CUDA GPU ("host-cuda-sm_90"), and optional
// features ("host-fma"). The CPU is "host", the one compiling, or a level of the x86-64 psABI
// ("x86-64", "x86-64-v2", "x86-64-v3": AVX2 and FMA, "x86-64-v4": AVX-512) for code compiled
// ahead of time that must run on other machines. Lowering asks the target what it can do (threads
// per block, shared memory, tensor-core instructions) and refuses what it cannot, with a
// CompileError, before any code is generated.

#include <cstdint>
#include <string>

namespace aicf {

class Target {
public:
    // The CPU: the one compiling (Host), or an x86-64 level, which any CPU that has its
    // features runs.
    enum Arch { Host, X86_64, X86_64_v2, X86_64_v3, X86_64_v4 };
    enum Feature {
        // Let floating-point a * b + c become one fused multiply-add (one rounding instead
        // of two), as CUDA does by default. Results may then differ in the last bits between
        // schedules that group the operations differently.
        FMA = 1 << 0,
        // float32 exp, log, tanh, erf and pow on the host call the C library's vector math
        // (glibc's libmvec, within 4 ulp) instead of AICF's inline polynomials (within 1 to
        // 2 ulp, backends/llvm/InlineMath.h).
        LibraryMath = 1 << 1,
        // Let floating-point additions and multiplications be reassociated, as Halide does by
        // default: LLVM then vectorizes a serial float reduction (a row's sum, a dot product)
        // into partial sums across lanes, and may regroup other float arithmetic. Results
        // then depend on the vector width and on LLVM's choices. exp, log, tanh and erf stay
        // as written, within their error bounds.
        Reassociate = 1 << 2,
    };

    Target() = default;
    // This machine's CPU with no GPU, as Target() (Halide's get_host_target()).
    static Target host() { return Target(); }
    // Parses a CPU ("host", "x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"), then any of
    // "-fma", "-libm", "-reassoc" and "-cuda-sm_<NN>" (NN in 80, 86, 89, 90, 90a), e.g.
    // "host-cuda-sm_90a-fma".
    // Raises CompileError naming the valid forms otherwise.
    explicit Target(const std::string &s);

    Arch arch() const { return arch_; }
    Target with_arch(Arch a) const;
    // LLVM's name of the CPU ("x86-64-v3"); empty for Host, whose CPU is detected.
    std::string cpu_name() const;
    // The features of this target's CPU that the CPU running this call lacks, comma-separated
    // ("avx512f, avx512bw"); empty when it runs code compiled for the target (always for Host).
    std::string missing_cpu_features() const;
    // The highest x86-64 level the CPU running this call runs (under AICF_CPU_LEVEL's cap):
    // what "host" means in code compiled ahead of time.
    static Arch highest_level_here();
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
    // Threads resident on one multiprocessor at most (2048 on sm_80 and sm_90, 1536 on sm_86
    // and sm_89).
    int max_threads_per_multiprocessor() const;
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
