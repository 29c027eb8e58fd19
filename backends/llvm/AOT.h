#ifndef AICF_BACKENDS_LLVM_AOT_H
#define AICF_BACKENDS_LLVM_AOT_H

// Pipelines compiled ahead of time: an object file (or a static library holding it) with the
// pipeline's C functions (backends/runtime/AOTABI.h), its host code and its kernels, and a C
// header that declares them. The object needs only libaicf_runtime at link time.

#include "dsl/Pipeline.h"
#include "lowering/Lower.h"

#include <string>

namespace aicf {
namespace backends {

// Writes `files` for the lowered pipeline `p`, whose C functions are named `function_name`
// (a C identifier), `function_name`_argv and `function_name`_metadata. Raises CompileError
// for a name that is not a C identifier and RuntimeError for a file it cannot write.
void compile_to_files(const lowering::LoweredPipeline &p, const std::string &function_name,
                      const OutputFiles &files);

// The C type a scalar argument of type t takes in the generated functions ("float",
// "int32_t", "uint16_t" for the 16-bit float types, whose bits it carries).
std::string c_type_of(ir::Type t);

} // namespace backends
} // namespace aicf

#endif
