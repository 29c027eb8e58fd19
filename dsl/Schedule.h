#ifndef AICF_SCHEDULE_H
#define AICF_SCHEDULE_H

// What a schedule records for each Func and each of its stages: the loop dimensions, how
// they were split or fused, and where the Func is computed and stored. Lowering reads these;
// the scheduling directives on Func write them.

#include "dsl/ir/Expr.h"

#include <memory>
#include <string>
#include <vector>

namespace aicf {

// How a split handles an extent that is not a multiple of the factor.
enum class TailStrategy {
    Auto,        // ShiftInwards for pure stages; GuardWithIf for updates, reduction
                 // variables, and runs of points on GPU threads (an outer loop on threads)
    RoundUp,     // compute past the end (the realized region grows to a multiple)
    GuardWithIf, // skip the points past the end
    ShiftInwards // shift the last tile back inside (recomputes some points)
};

// How gpu_pipeline() refills a tile staged in shared memory ahead of its use.
enum class PipelineCopy {
    Registers, // loads into registers one iteration ahead, stored at the next iteration
    Async      // cp.async copies straight into one of `stages` shared buffers
};

// What prefetch() does when the iteration it fetches for lies past the end of its loop.
enum class PrefetchBoundStrategy {
    GuardWithIf, // skip the prefetch
    Clamp        // fetch for the loop's last iteration instead
};

// A place in a loop nest: inlined, at the root, or inside the loop over `var` of `func`'s
// stage `stage`. A LoopLevel is shared: setting it later changes every schedule holding it.
class LoopLevel {
public:
    LoopLevel();
    static LoopLevel inlined();
    static LoopLevel root();
    LoopLevel(const std::string &func, const std::string &var, int stage = -1);

    void set(const LoopLevel &other);
    bool is_inlined() const;
    bool is_root() const;
    bool defined() const;
    const std::string &func() const;
    const std::string &var() const;
    int stage() const;
    std::string to_string() const;
    bool same_place(const LoopLevel &o) const;

private:
    struct Contents;
    std::shared_ptr<Contents> contents;
};

namespace ir {

// One loop of a stage, innermost first in StageSchedule::dims.
struct Dim {
    std::string var;
    ForType for_type = ForType::Serial;
    bool is_rvar = false;
    bool never_partition = false; // never_partition(): loop partitioning leaves the loop whole
};

struct Split {
    enum Kind { SplitVar, FuseVars, RenameVar };
    Kind kind = SplitVar;
    std::string old_var, outer, inner; // fuse: inner and outer into old_var
    Expr factor;
    TailStrategy tail = TailStrategy::Auto;
};

// prefetch(): at the top of each iteration of loop `at`, fetch into the first-level cache the
// region of Func or input buffer `name` that the same iteration reads when loop `from` (`at`
// or a loop around it) is `offset` iterations further on.
struct Prefetch {
    std::string name;
    std::string at, from;
    Expr offset;
    PrefetchBoundStrategy strategy = PrefetchBoundStrategy::GuardWithIf;
};

struct StageSchedule {
    std::vector<Dim> dims; // innermost first; the last is the outermost loop
    std::vector<Split> splits;
    std::vector<Prefetch> prefetches;
    bool single_gpu_thread = false;   // gpu_single_thread(): one block of one thread
    bool never_partition_all = false; // never_partition_all(): no loop of the stage is partitioned
    bool atomic = false;              // atomic(): the update's read-modify-writes are atomic
    // The reduction loops (innermost first) before the first reorder that changed their
    // order, which reassociates the reduction: allowed only in a cross-thread reduction.
    // Empty when no reorder did.
    std::vector<std::string> rvars_before_reorder;
    // gpu_mma(): the loops over the columns, rows and reduction of one matrix instruction
    // (n, m, k; their names), which one warp executes together. Empty: none.
    std::vector<std::string> mma_loops;
    // gpu_wgmma(): the same for one warpgroup instruction. Empty: none.
    std::vector<std::string> wgmma_loops;
};

// A constraint on the region of a pure dimension: fixed by bound() (min and extent) or
// bound_extent() (extent; the min is the first point needed), or rounded outward by
// align_bounds() (modulus and remainder).
struct RegionConstraint {
    std::string var;
    Expr min, extent;
    Expr modulus, remainder;
};

// Storage padding from align_storage(): the dimension's stored extent is a multiple of
// `alignment`.
struct StorageAlignment {
    std::string var;
    Expr alignment;
};

// Occupancy asked of the kernel whose GPU block loops are the Func's: gpu_launch_bounds()
// and gpu_max_registers(); 0 leaves it to ptxas.
struct GPULaunchBounds {
    int min_blocks_per_sm = 0; // .minnctapersm
    int max_registers = 0;     // .maxnreg, per thread
};

// gpu_pipeline(): how many iterations of a staged tile are in flight (2 or more loads
// ahead; 0 or 1: none), and how they are copied.
struct GPUPipeline {
    int stages = 0;
    PipelineCopy copy = PipelineCopy::Registers;
};

struct FuncSchedule {
    std::vector<RegionConstraint> region_constraints;
    std::vector<std::string> storage_order; // innermost first; empty: the argument order
    std::vector<StorageAlignment> storage_alignment;
    LoopLevel compute_level = LoopLevel::inlined();
    LoopLevel store_level = LoopLevel::inlined();
    MemoryType memory_type = MemoryType::Auto;
    bool compute_level_set = false; // false: the default placement decides
    bool store_level_set = false;   // false: storage goes where the Func is computed
    GPULaunchBounds launch_bounds;
    GPUPipeline gpu_pipeline;
    bool swizzled_storage = false;    // swizzle_storage(): 16-byte pieces XOR-permuted by row
    bool core_matrix_storage = false; // core_matrix_storage(): tiled in 8 x 16-byte matrices
    // An inline reduction's Func (sum, maximum, argmax, ...): with no placement, computed in
    // the innermost loop around all its uses (as Halide does), not at the root.
    bool innermost_by_default = false;
};

} // namespace ir
} // namespace aicf

#endif
