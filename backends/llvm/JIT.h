#ifndef AICF_BACKENDS_LLVM_JIT_H
#define AICF_BACKENDS_LLVM_JIT_H

// Compiling lowered pipelines to host machine code in this process (LLVM ORC LLJIT).

#include "dsl/Pipeline.h"
#include "lowering/Lower.h"

#include <memory>

namespace aicf {
namespace backends {

std::shared_ptr<CompiledPipeline> jit_compile(const lowering::LoweredPipeline &pipeline);

// Whether glibc's vector math library (libmvec: exp, log, tanh, erf, sin, cos, pow on SSE, AVX2 and
// AVX-512 vectors) is loaded in this process, so that JIT-compiled code can call it. Loaded
// on first use.
bool vector_math_library_loaded();

} // namespace backends
} // namespace aicf

#endif
