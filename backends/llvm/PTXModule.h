#ifndef AICF_BACKENDS_LLVM_PTX_MODULE_H
#define AICF_BACKENDS_LLVM_PTX_MODULE_H

// What the PTX code generator (CodeGen_PTX.cpp: one kernel as LLVM IR) and the module around
// its kernels (PTXModule.cpp: libdevice, optimization, the NVPTX backend) share.

#include "dsl/Target.h"
#include "lowering/Kernel.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <string>

namespace aicf {
namespace backends {

extern const char *const ptx_triple;

// "sm_80", "sm_90a": the target's architecture as PTX and ptxas name it.
std::string ptx_arch_name(const Target &t);

// Adds `kernel` to `module` as an NVPTX entry for `target`, in LLVM IR.
void emit_ptx_kernel(llvm::LLVMContext &context, llvm::Module &module, const Target &target,
                     const lowering::LoweredKernel &kernel);

} // namespace backends
} // namespace aicf

#endif
