#ifndef AICF_BACKENDS_LLVM_CODEGEN_HOST_H
#define AICF_BACKENDS_LLVM_CODEGEN_HOST_H

// Host code: a lowered pipeline becomes one function
//   int32_t name(void *context, void *const *args)
// that reads its arguments from `args` (an aicf_buffer_t * per buffer, a pointer to the value
// per scalar) and returns 0, or a negative code after recording an error in `context`.

#include "lowering/Lower.h"

#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace aicf {
namespace backends {

// A target with an x86-64 level compiles the functions for that CPU (target-cpu), whatever
// machine compiles them; Host uses the target machine's CPU.
std::unique_ptr<llvm::Module> compile_host_module(const lowering::LoweredPipeline &pipeline,
                                                  const std::string &function_name,
                                                  llvm::LLVMContext &context);
// The same function added to an existing module (several builds of one pipeline in one
// library).
void compile_host_function(const lowering::LoweredPipeline &pipeline,
                           const std::string &function_name, llvm::Module &module);

} // namespace backends
} // namespace aicf

#endif
