#ifndef AICF_BACKENDS_LLVM_OPTIMIZE_H
#define AICF_BACKENDS_LLVM_OPTIMIZE_H

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace aicf {
namespace backends {

// LLVM's O3 pipeline for the target machine (loop and SLP vectorization on), the same for
// host code and kernels. The first call also sets LLVM's code generation options (see
// Optimize.cpp), before any module reaches machine code.
void optimize_module(llvm::Module &module, llvm::TargetMachine &tm);

} // namespace backends
} // namespace aicf

#endif
