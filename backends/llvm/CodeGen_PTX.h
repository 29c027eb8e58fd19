#ifndef AICF_BACKENDS_LLVM_CODEGEN_PTX_H
#define AICF_BACKENDS_LLVM_CODEGEN_PTX_H

// GPU kernels: the kernels of a lowered pipeline become one PTX module for the target's
// architecture, through LLVM's NVPTX backend.
//
// Each kernel is an entry taking its arguments in LoweredKernel::args order (a global
// pointer per buffer, marked noalias, and readonly when the kernel only loads from it, so
// loads can use the non-coherent cache; the value per scalar), with `maxntid` set to its
// block shape where the block has more than 256 threads or launch bounds, and shared memory
// as the module's one dynamic shared array. Math functions come from libdevice, linked and
// internalized. (CodeGen_PTX.cpp emits each kernel as LLVM IR; PTXModule.cpp makes the
// module around them and runs the NVPTX backend.)

#include "backends/llvm/CudaToolkit.h"
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

} // namespace backends
} // namespace aicf

#endif
