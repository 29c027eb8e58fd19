#ifndef AICF_LOWERING_HOIST_KERNEL_CHECKS_H
#define AICF_LOWERING_HOIST_KERNEL_CHECKS_H

#include "dsl/ir/IR.h"

namespace aicf {
namespace lowering {

// Moves the run-time checks (AssertStmt) inside GPU kernels that do not depend on where in
// the kernel they run into the host code, just before the kernel. A GPU thread cannot raise
// an error: a failed check there traps, which on a CUDA device ends the launch with an
// unspecified failure and leaves the context unusable for the rest of the process. On the
// host the same check raises its RuntimeError before any block runs, on every device alike.
//
// A check moves when its condition and message read no name bound inside the kernel (a block,
// thread or serial loop, a let) and no memory (the kernel's device copy of a buffer may be
// newer than the host's), and neither do the conditions and loop extents on its way
// from the top of the kernel: it then runs on the host under those conditions and under
// those loops running at least once, so it fails there exactly when it would have failed in
// every thread that reached it. Other checks stay in the kernel (the simulator reports their
// failure as a KernelFault; a GPU traps).
//
// Expects: the host code after `hoist_allocations`, kernels not yet extracted.
ir::Stmt hoist_kernel_checks(const ir::Stmt &s);

} // namespace lowering
} // namespace aicf

#endif
