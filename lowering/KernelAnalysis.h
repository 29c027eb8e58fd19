#ifndef AICF_LOWERING_KERNEL_ANALYSIS_H
#define AICF_LOWERING_KERNEL_ANALYSIS_H

// Analyses the GPU kernel passes share: constant bounds of sizes written in terms of the lets
// around them, and the IR of the GPU's index and barrier intrinsics.

#include "dsl/ir/IR.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IRVisitor.h"

#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace aicf {
namespace lowering {

// This thread's index in its block, and this block's index in the grid, along `d`.
ir::Expr gpu_thread_index(ir::GPUDim d);
ir::Expr gpu_block_index(ir::GPUDim d);
// A block-wide barrier that every thread of the block must reach.
ir::Stmt gpu_barrier();
bool is_gpu_barrier(const ir::Stmt &s);

// A constant upper bound of a size or an extent, if one can be found (the smaller side of a
// min suffices; sums are moved into mins and maxes to expose a constant).
std::optional<int64_t> constant_upper_bound(const ir::Expr &e);

// e where the conditions `facts` hold (each a < b or a <= b of integers, the guards around
// the place e is used): each min or max that a fact decides becomes the side it picks (a
// clamp that a guard keeps from binding: min(k + t % 8, k + n - 1) under t % 8 < n).
ir::Expr simplify_under(const ir::Expr &e, const std::vector<ir::Expr> &facts);

// Whether a call to intrinsic `op` lies in s.
bool contains_intrinsic(const ir::Stmt &s, ir::Intrinsic op);

// How far e moves when the variable `var` grows by one, where that is a constant.
std::optional<int64_t> step_along(const ir::Expr &e, const std::string &var);

// A visitor that knows the values of the lets around the current node, so that sizes written
// in terms of them can be bounded.
struct LetTracker : ir::IRVisitor {
    std::vector<std::pair<std::string, ir::Expr>> lets; // outermost first
    using ir::IRVisitor::visit;
    void visit(const ir::LetStmt *op) override;
    ir::Expr expand(const ir::Expr &e) const;
    // A constant bound on the elements of an allocation with these extents (saturating past
    // 2^40), or none.
    std::optional<int64_t> element_count_bound(const std::vector<ir::Expr> &extents) const;
};

// A mutator that knows the (mutated) values of the lets around the current node.
struct LetTrackingMutator : ir::IRMutator {
    std::vector<std::pair<std::string, ir::Expr>> lets; // outermost first
    using ir::IRMutator::visit;
    ir::Stmt visit(const ir::LetStmt *op) override;
    ir::Expr expand(const ir::Expr &e) const;
};

// "a * b * c" for an allocation's extents, for messages (loops named as users know them).
std::string product_text(const std::vector<ir::Expr> &extents);
// " (h.extent.0 is the extent of buffer h in dimension 0; ...)" for the bound symbols that text
// printed for a message names (see symbols_for_users), or nothing.
std::string symbols_clause(const std::string &text);

// Per GPU dimension, the largest constant bound of the extents of the GPU thread loops in s (1
// where none has one), their extents expanded through the lets inside s and `lets` around it
// (outermost first).
std::array<int64_t, 3>
thread_loop_bounds(const ir::Stmt &s, const std::vector<std::pair<std::string, ir::Expr>> &lets);

// Whether s contains a loop of type t.
bool contains_loop_type(const ir::Stmt &s, ir::ForType t);

// The GPU block loops of a kernel, outermost first: `outer` and the block loops directly
// inside it (through lets). With `bound`, also the names those loops and lets bind.
std::vector<const ir::For *> block_loop_nest(const ir::For *outer,
                                             std::set<std::string> *bound = nullptr);

} // namespace lowering
} // namespace aicf

#endif
