#ifndef AICF_LOWERING_LAUNCH_KERNELS_H
#define AICF_LOWERING_LAUNCH_KERNELS_H

#include "dsl/Pipeline.h"
#include "lowering/Kernel.h"

#include <vector>

namespace aicf {
namespace lowering {

// The host side of the kernels: each launch gets its kernel's arguments, and data moves
// where the kernels and the host code need it.
// Expects: the host code from extract_kernels, and the kernels after kernel_closure (their
// arguments known).
// Guarantees: gpu_launch(index, grid x, y, z, arguments...) with a buffer's descriptor for
// each buffer argument and the value for each scalar, in the kernel's argument order.
// Intermediates that kernels touch live in device memory (a CompileError names one that
// host code touches too), and host code that touches a pipeline buffer first brings the
// buffer's data back to the host (a kernel of this pipeline or an earlier one may have left
// it newer on the device) and marks what it writes newer on the host; with no kernels too.
ir::Stmt launch_kernels(const ir::Stmt &host, const std::vector<LoweredKernel> &kernels,
                        const std::vector<Argument> &args);

} // namespace lowering
} // namespace aicf

#endif
