#ifndef AICF_STAGE_H
#define AICF_STAGE_H

// Stage: one definition of a Func (stage 0 is the pure definition, stage i the (i-1)th
// update) and the loop directives that shape its loop nest. Directives never change what a
// stage computes, only the order and the loops it is computed in.

#include "dsl/Function.h"
#include "dsl/RDom.h"
#include "dsl/Schedule.h"
#include "dsl/Var.h"

#include <functional>
#include <string>
#include <vector>

namespace aicf {

class BufferBase;
class Func;
class ImageParam;

// A loop variable: a pure Var or a reduction RVar.
class VarOrRVar {
public:
    VarOrRVar(const Var &v) : name_(v.name()), is_rvar_(false) {}
    VarOrRVar(const RVar &r) : name_(r.name()), is_rvar_(true) {}
    VarOrRVar(const RDom &r) : VarOrRVar(RVar(r)) {}
    VarOrRVar(const std::string &name, bool is_rvar) : name_(name), is_rvar_(is_rvar) {}

    const std::string &name() const { return name_; }
    bool is_rvar() const { return is_rvar_; }

private:
    std::string name_;
    bool is_rvar_;
};

class Stage {
public:
    Stage(ir::Function f, int stage) : func(std::move(f)), stage(stage) {}

    // Splits `old` into an outer and an inner loop; inner has `factor` iterations.
    Stage &split(const VarOrRVar &old, const VarOrRVar &outer, const VarOrRVar &inner,
                 const ir::Expr &factor, TailStrategy tail = TailStrategy::Auto);
    // Fuses two loops (inner directly inside outer) into one.
    Stage &fuse(const VarOrRVar &inner, const VarOrRVar &outer, const VarOrRVar &fused);
    // Sets the loop order, innermost first; loops not named keep their places.
    Stage &reorder(const std::vector<VarOrRVar> &vars);
    template <typename... Args>
    Stage &reorder(const VarOrRVar &a, const VarOrRVar &b, const Args &...rest) {
        return reorder(std::vector<VarOrRVar>{a, b, VarOrRVar(rest)...});
    }
    // Splits x and y and orders the loops yo, xo, yi, xi (outermost first).
    Stage &tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &xo, const VarOrRVar &yo,
                const VarOrRVar &xi, const VarOrRVar &yi, const ir::Expr &xfactor,
                const ir::Expr &yfactor, TailStrategy tail = TailStrategy::Auto);
    // The same, reusing x and y as the names of the outer loops.
    Stage &tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &xi, const VarOrRVar &yi,
                const ir::Expr &xfactor, const ir::Expr &yfactor,
                TailStrategy tail = TailStrategy::Auto);
    Stage &rename(const VarOrRVar &old, const VarOrRVar &new_name);

    Stage &serial(const VarOrRVar &v);
    // Loop partitioning (automatic) splits a serial loop whose body tests its variable into a
    // steady state without the tests and a prologue and epilogue with them. These leave the
    // loop `v` (and the loops split from it later), or every loop of the stage, whole: less
    // code, or the unpartitioned loop to compare against.
    Stage &never_partition(const VarOrRVar &v);
    Stage &never_partition_all();
    // Runs the loop's iterations on several CPU threads.
    Stage &parallel(const VarOrRVar &v);
    Stage &parallel(const VarOrRVar &v, const ir::Expr &task_size,
                    TailStrategy tail = TailStrategy::Auto);
    // Turns a loop of constant extent into vector instructions.
    Stage &vectorize(const VarOrRVar &v);
    Stage &vectorize(const VarOrRVar &v, const ir::Expr &factor,
                     TailStrategy tail = TailStrategy::Auto);
    // Replicates the body of a loop of constant extent.
    Stage &unroll(const VarOrRVar &v);
    Stage &unroll(const VarOrRVar &v, const ir::Expr &factor,
                  TailStrategy tail = TailStrategy::Auto);

    // GPU mapping. Each loop named runs in parallel across GPU blocks (or across the threads
    // of a block). Nested GPU loops take the hardware dimensions innermost first: the
    // innermost block loop is block x, the next y, then z. Thread loops must be inside block
    // loops; everything between the block and the thread loops runs once per block.
    Stage &gpu_blocks(const VarOrRVar &x);
    Stage &gpu_blocks(const VarOrRVar &x, const VarOrRVar &y);
    Stage &gpu_blocks(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z);
    Stage &gpu_threads(const VarOrRVar &x);
    Stage &gpu_threads(const VarOrRVar &x, const VarOrRVar &y);
    Stage &gpu_threads(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z);
    // The lanes of one warp: x must have a constant extent of at most 32, and runs along x of
    // the block, inside the stage's thread loops. A reduction variable (or a split of one) on
    // lanes or threads makes the update a cross-thread reduction: each thread reduces its
    // share, then the threads combine their partial results by warp shuffles (and, across
    // warps, through shared memory), and every one of them ends up with the result.
    Stage &gpu_lanes(const VarOrRVar &x);
    // The update's read-modify-write of each point is one atomic operation (atom.global or
    // atom.shared on a GPU, an atomic instruction on the host), so that its reduction
    // variables may run on GPU blocks and threads or parallel loops: a histogram, a sum over
    // blocks. The update must be f(p) = f(p) op x for op in +, *, min, max on one 32- or
    // 64-bit value; the order of the updates is then irrelevant (up to float rounding).
    // Call it before mapping reduction variables onto blocks, threads or parallel loops.
    Stage &atomic();
    // Tensor cores (sm_80 and later): the innermost loops n (along the columns of the
    // result, extent 8), m (its rows, 16) and k (the reduction, 16 for bf16 or f16 inputs, 8
    // for float inputs, which are rounded to TF32) of an update f(n, m) += a(k, m) * b(n, k),
    // with f float and a, b of one of those types (converted to float), run as one warp's
    // mma.sync. The warp is the x and y threads of the block, 4 x 8 of them, added by this
    // directive inside the stage's own thread loop (which moves to z): the block must be 4 x
    // 8 x warps. Each lane holds the points of f it owns in the instruction's fragment layout,
    // column 2 * thread.x + {0, 1} and row thread.y + {0, 8} of each 16 x 8 tile, so f's pure
    // definition and its consumers are split the same way (x into outer, thread.x (4) and
    // inner (2); y into outer (2) and thread.y (8)) with f in registers.
    Stage &gpu_mma(const VarOrRVar &n, const VarOrRVar &m, const VarOrRVar &k);
    // Hopper's warpgroup tensor cores (the target cuda-sm_90a): the innermost loops n (the
    // columns, extent N: a multiple of 8 up to 256), m (the rows, 64) and k (16) of an update
    // f(n, m) += a(k, m) * b(n, k), with f float and a, b both bfloat16 or float16 (converted
    // to float), run as one wgmma.mma_async of the 4 warps of a warpgroup. a and b are read
    // from shared memory as they are stored there, so each must be a Func computed at a loop
    // of the block around the update, store_in(MemoryType::GPUShared) and
    // core_matrix_storage(), read at (k, m) or (n, k) with k and m (or n) each moving along
    // one of its two innermost stored dimensions. As with gpu_mma, the block's x and y
    // threads (4 x 8) are the lanes of each warp; the stage's own thread loop runs over the
    // warpgroups, and its place is taken by one along z over their warps (4 a warpgroup), so
    // the block is 4 x 8 x (4 x warpgroups). Each thread holds the points of f it owns in the
    // instruction's layout: row 16 * (thread.z % 4) + thread.y + {0, 8} and column 8 j + 2 *
    // thread.x + {0, 1} of its warpgroup's 64 x N tile, so f's pure definition and its
    // consumers split y into thread.z (16 rows), {0, 8} and thread.y (8), and x into j,
    // thread.x (4) and {0, 1}, with f in registers.
    Stage &gpu_wgmma(const VarOrRVar &n, const VarOrRVar &m, const VarOrRVar &k);
    // Halide's short forms: x itself becomes the block loop, tx the thread loop.
    Stage &gpu_tile(const VarOrRVar &x, const VarOrRVar &tx, const ir::Expr &x_size,
                    TailStrategy tail = TailStrategy::Auto);
    Stage &gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &tx,
                    const VarOrRVar &ty, const ir::Expr &x_size, const ir::Expr &y_size,
                    TailStrategy tail = TailStrategy::Auto);
    Stage &gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z, const VarOrRVar &tx,
                    const VarOrRVar &ty, const VarOrRVar &tz, const ir::Expr &x_size,
                    const ir::Expr &y_size, const ir::Expr &z_size,
                    TailStrategy tail = TailStrategy::Auto);
    // Splits x by `x_size` into a block loop bx and a thread loop tx (and likewise y, z).
    Stage &gpu_tile(const VarOrRVar &x, const VarOrRVar &bx, const VarOrRVar &tx,
                    const ir::Expr &x_size, TailStrategy tail = TailStrategy::Auto);
    Stage &gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &bx,
                    const VarOrRVar &by, const VarOrRVar &tx, const VarOrRVar &ty,
                    const ir::Expr &x_size, const ir::Expr &y_size,
                    TailStrategy tail = TailStrategy::Auto);
    Stage &gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z, const VarOrRVar &bx,
                    const VarOrRVar &by, const VarOrRVar &bz, const VarOrRVar &tx,
                    const VarOrRVar &ty, const VarOrRVar &tz, const ir::Expr &x_size,
                    const ir::Expr &y_size, const ir::Expr &z_size,
                    TailStrategy tail = TailStrategy::Auto);
    // Runs the whole stage in one GPU thread of a one-block kernel (for small stages whose
    // data should stay on the device).
    Stage &gpu_single_thread();

    // Software prefetch (CPU loops only). At the top of each iteration of loop `at`, fetches
    // into the first-level cache the region of `f` that the same iteration will read once loop
    // `from` (`at` itself, or a loop around it) has advanced `offset` iterations: with
    // at = from = k and offset 8, the data the k loop reads 8 iterations from now. `f` must be
    // stored around `at` (an input buffer, or a Func stored at or outside it). Prefetches never
    // fault and never change results. `strategy` decides what happens near the end of the
    // `from` loop, where the iteration `offset` ahead does not exist: skip (GuardWithIf) or
    // fetch for the last iteration (Clamp). An offset known only at run time (a Param) counts
    // as 0 when negative.
    Stage &prefetch(const Func &f, const VarOrRVar &at, const VarOrRVar &from,
                    const ir::Expr &offset = 1,
                    PrefetchBoundStrategy strategy = PrefetchBoundStrategy::GuardWithIf);
    Stage &prefetch(const BufferBase &b, const VarOrRVar &at, const VarOrRVar &from,
                    const ir::Expr &offset = 1,
                    PrefetchBoundStrategy strategy = PrefetchBoundStrategy::GuardWithIf);
    Stage &prefetch(const ImageParam &p, const VarOrRVar &at, const VarOrRVar &from,
                    const ir::Expr &offset = 1,
                    PrefetchBoundStrategy strategy = PrefetchBoundStrategy::GuardWithIf);

    // Splits an associative reduction in two. The returned Func (f_intm) reduces over the
    // reduction variables not listed, with each listed RVar turned into its paired pure Var
    // (so those loops can be parallel or vectorized); this stage then combines the partial
    // results over the listed RVars. Recognized updates: f = f op x for op in +, *, min, max
    // (also element-wise on Tuples), select-based replacements such as argmax, and the
    // streaming softmax pair (a running max with a sum of exponentials rescaled to it). The
    // order of floating-point operations changes.
    Func rfactor(const std::vector<std::pair<RVar, Var>> &preserved);
    Func rfactor(const RVar &r, const Var &v);

    // The stage as users write it, for messages: "f", "f.update(0)".
    std::string name() const;
    // The Func this stage defines, and its index (0 for the pure definition, 1 + i for update i).
    const std::string &func_name() const;
    int index() const { return stage; }
    // The loops of this stage, outermost first, as "x", "xo", ...
    std::vector<std::string> loop_names() const;

private:
    ir::Function func;
    int stage;
    ir::StageSchedule &schedule();
    const ir::Definition &definition() const;
    size_t find_dim(const VarOrRVar &v, const char *directive);
    // The checked loop names of gpu_mma or gpu_wgmma.
    std::vector<std::string> matrix_loops(const VarOrRVar &n, const VarOrRVar &m,
                                          const VarOrRVar &k, const char *directive);
    void check_fresh(const VarOrRVar &v, const char *directive);
    Stage &set_loop_type(const VarOrRVar &v, ir::ForType t, const char *directive);
    // Applies a directive made of several steps whole or not at all: when a step is refused,
    // the stage's schedule is restored before the error propagates.
    Stage &all_or_nothing(const std::function<void()> &steps);
    Stage &prefetch_named(const std::string &what, const VarOrRVar &at, const VarOrRVar &from,
                          const ir::Expr &offset, PrefetchBoundStrategy strategy);
};

} // namespace aicf

#endif
