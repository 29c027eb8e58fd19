#ifndef AICF_BACKENDS_LLVM_CUDA_TOOLKIT_H
#define AICF_BACKENDS_LLVM_CUDA_TOOLKIT_H

// The CUDA toolkit's pieces that compiling kernels uses, where it is installed (it is optional):
// libdevice, the math library that kernels link, and ptxas, which assembles PTX and says what
// each kernel uses.

#include <string>
#include <vector>

namespace aicf {
namespace backends {

// libdevice.10.bc: AICF_LIBDEVICE, then the toolkit found at configure time, then the usual
// place; empty when none is there.
std::string libdevice_path();

// What ptxas says about each kernel of a PTX module for an architecture ("sm_80").
struct KernelResources {
    std::string kernel;
    std::string arch;
    int registers = 0;
    int spill_store_bytes = 0, spill_load_bytes = 0;
    int stack_frame_bytes = 0;
    int static_shared_bytes = 0;
    // What ptxas says it did to the kernel's warpgroup products (wgmma): waits or arrives it
    // injected, or the instructions serialized, each costing the overlap of the tensor cores.
    // Empty when it changed nothing.
    std::vector<std::string> wgmma_changes;
    std::string to_string() const;
};

// Whether ptxas was found (the CUDA toolkit's bin directory, PATH, or AICF_PTXAS).
bool ptxas_available();
// Whether libdevice was found (the CUDA toolkit, or AICF_LIBDEVICE): kernels that call
// exp, log, tanh, erf, sin, cos or pow need it.
bool libdevice_available();
// Assembles `ptx` for `arch` with ptxas -v; raises CompileError with ptxas's message when it
// rejects the module.
std::vector<KernelResources> assemble_ptx(const std::string &ptx, const std::string &arch);
// The cubin ptxas makes of `ptx` for `arch` ("sm_90"); CompileError when ptxas is missing or
// rejects it.
std::string ptx_to_cubin(const std::string &ptx, const std::string &arch);

} // namespace backends
} // namespace aicf

#endif
