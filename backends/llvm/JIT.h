#ifndef AICF_BACKENDS_LLVM_JIT_H
#define AICF_BACKENDS_LLVM_JIT_H

// Compiling lowered pipelines to host machine code in this process (LLVM ORC LLJIT).

#include "dsl/Pipeline.h"
#include "lowering/Lower.h"

#include <memory>

namespace aicf {
namespace backends {

std::shared_ptr<CompiledPipeline> jit_compile(const lowering::LoweredPipeline &pipeline);

} // namespace backends
} // namespace aicf

#endif
