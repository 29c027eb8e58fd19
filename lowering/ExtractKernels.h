#ifndef AICF_LOWERING_EXTRACT_KERNELS_H
#define AICF_LOWERING_EXTRACT_KERNELS_H

#include "dsl/Pipeline.h"
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

// Turns every outermost GPU block loop nest into a kernel (build_kernel) and a launch in
// the host code.
// Expects: flat storage (after storage flattening, unrolling and vectorization) where GPU
// loops were checked by place_gpu_storage.
// Guarantees: each kernel as build_kernel makes it, launched where its loop nest was with
// its arguments and grid. In the host code, intermediates that kernels touch live in device
// memory, and host code that touches a pipeline buffer kernels also touch first brings the
// buffer's data back to the host.
ExtractedKernels extract_kernels(const ir::Stmt &s, const std::vector<Argument> &args,
                                 const Target &target, const std::string &pipeline_name);

} // namespace lowering
} // namespace aicf

#endif
