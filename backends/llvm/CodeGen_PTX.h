#ifndef AICF_BACKENDS_LLVM_CODEGEN_PTX_H
#define AICF_BACKENDS_LLVM_CODEGEN_PTX_H

// GPU kernels: the kernels of a lowered pipeline become one PTX module for the target's
// architecture, through LLVM's NVPTX backend.
//
// Each kernel is an entry taking its arguments in LoweredKernel::args order (a global
// pointer per buffer, marked noalias, and readonly when the kernel only loads from it, so
// loads can use the non-coherent cache; the value per scalar), with `maxntid` set to its
// block shape and shared memory as the module's one dynamic shared array. Math functions
// come from libdevice, linked and internalized.

#include "dsl/Target.h"
#include "lowering/Kernel.h"

#include <string>
#include <vector>

namespace aicf {
namespace backends {

// The PTX text of a module holding `kernels`, for `target` (which must have a GPU).
// Raises CompileError when the target or the toolkit cannot compile them.
std::string compile_kernels_to_ptx(const std::vector<lowering::LoweredKernel> &kernels,
                                   const Target &target);

// What ptxas says about each kernel of a PTX module for an architecture ("sm_80").
struct KernelResources {
    std::string kernel;
    std::string arch;
    int registers = 0;
    int spill_store_bytes = 0, spill_load_bytes = 0;
    int stack_frame_bytes = 0;
    int static_shared_bytes = 0;
    std::string to_string() const;
};

// Whether ptxas was found (the CUDA toolkit's bin directory, PATH, or AICF_PTXAS).
bool ptxas_available();
// Whether libdevice was found (the CUDA toolkit, or AICF_LIBDEVICE): kernels that call
// exp, log, tanh, erf or pow need it.
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
