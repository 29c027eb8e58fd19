#ifndef AICF_LOWERING_EXTRACT_KERNELS_H
#define AICF_LOWERING_EXTRACT_KERNELS_H

#include "dsl/Target.h"
#include "lowering/Kernel.h"

#include <string>
#include <vector>

namespace aicf {
namespace lowering {

struct ExtractedKernels {
    ir::Stmt host;
    std::vector<LoweredKernel> kernels;
};

// Takes every outermost GPU block loop nest out of the host code as a kernel. The first of
// the GPU kernel passes (Lower.cpp lists them; each takes a LoweredKernel).
// Expects: flat storage (after storage flattening, unrolling, vectorization and
// hoist_allocations) where GPU loops were checked by place_gpu_storage.
// Guarantees: each kernel's body is its loop nest as it was, its block loops perfectly nested
// with distinct hardware dimensions; name, id, target and funcs are set. In the host code the
// nest is replaced by gpu_launch(kernel index, grid x, grid y, grid z), the grid being the
// block loops' extents (host expressions); launch_kernels adds the arguments.
ExtractedKernels extract_kernels(const ir::Stmt &s, const Target &target,
                                 const std::string &pipeline_name);

} // namespace lowering
} // namespace aicf

#endif
