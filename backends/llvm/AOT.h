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

// Writes `files` for the builds of one pipeline (lowered for their targets, with the same
// arguments, most preferred first; Pipeline::compile_multitarget_to_files says how one is
// chosen when there are several), whose C functions are named `function_name` (a C
// identifier), `function_name`_argv and `function_name`_metadata. A build for "host" is
// compiled for the highest x86-64 level this machine runs. Raises CompileError for a name that
// is not a C identifier or builds that do not make one library, and RuntimeError for a file it
// cannot write.
void compile_to_files(const std::vector<lowering::LoweredPipeline> &builds,
                      const std::string &function_name, const OutputFiles &files);

// The C type a scalar argument of type t takes in the generated functions ("float",
// "int32_t", "uint16_t" for the 16-bit float types, whose bits it carries).
std::string c_type_of(ir::Type t);

} // namespace backends
} // namespace aicf

#endif
