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

// Turns every outermost GPU block loop nest into a kernel and a launch in the host code.
// Expects: flat storage (after storage flattening, unrolling and vectorization) where GPU
// loops were checked by place_gpu_storage.
// Guarantees, per kernel: block loops become lets of gpu_block_index, thread loops become
// lets of gpu_thread_index guarded where the loop is shorter than the block (one SPMD body);
// statements outside thread loops that store run on thread 0; a barrier stands between two
// parts of the body exactly where one writes memory (shared, or global memory the kernel
// writes) that the other touches with no barrier in between, including across iterations
// of the serial loops around them; the shared allocations are packed into one array by
// lifetime; the block fits the target (threads and shared memory), or a CompileError names
// the Funcs and sizes. In the host code, intermediates that kernels touch live in device
// memory, and host code that touches a pipeline buffer kernels also touch first brings the
// buffer's data back to the host.
ExtractedKernels extract_kernels(const ir::Stmt &s, const std::vector<Argument> &args,
                                 const Target &target, const std::string &pipeline_name);

} // namespace lowering
} // namespace aicf

#endif
