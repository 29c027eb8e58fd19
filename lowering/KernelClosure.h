#ifndef AICF_LOWERING_KERNEL_CLOSURE_H
#define AICF_LOWERING_KERNEL_CLOSURE_H

#include "lowering/Kernel.h"

namespace aicf {
namespace lowering {

// Finds what a kernel takes from the host code around it.
// Expects: a kernel in its final form (Kernel.h).
// Guarantees: kernel.args lists the scalars the body uses and does not bind (sorted by name),
// then the buffers it loads or stores (sorted by name, with their element type and whether
// the kernel reads and writes them).
void kernel_closure(LoweredKernel &kernel);

} // namespace lowering
} // namespace aicf

#endif
