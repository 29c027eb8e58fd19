#ifndef AICF_LOWERING_INJECT_EARLY_FREES_H
#define AICF_LOWERING_INJECT_EARLY_FREES_H

#include "dsl/ir/IR.h"

namespace aicf {
namespace lowering {

// Frees each host allocation right after the last statement that uses it, instead of at the
// end of its scope: in a chain of stages computed at the root, every stage's storage would
// otherwise live until the pipeline ends (the memory of all of them at once, and for LLVM one
// pointer live across the whole function per stage). The Free goes after the last statement
// of the allocation's body that touches the storage, looking into the statements that run
// exactly once where they stand (blocks, lets, productions, nested allocations), never into
// loops or conditions: so it runs exactly once whenever the allocation's body runs to its end,
// and code generation frees there instead of at the end of the scope.
//
// Not moved: storage that a device buffer mirrors (named by "<name>.buffer"), which goes with
// its device copy; storage a let aliases.
//
// Expects: host code after launch_kernels (flattened storage, kernels taken out).
ir::Stmt inject_early_frees(const ir::Stmt &s);

} // namespace lowering
} // namespace aicf

#endif
