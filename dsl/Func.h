#ifndef AICF_FUNC_H
#define AICF_FUNC_H

// Func: a pure function over an infinite integer domain, defined once (f(x, y) = ...) and
// optionally updated (f(x) += ..., f(r) = ...). Realizing a Func compiles its pipeline and
// computes it over a region.

#include "dsl/Buffer.h"
#include "dsl/Function.h"
#include "dsl/RDom.h"
#include "dsl/Report.h"
#include "dsl/Stage.h"
#include "dsl/Tuple.h"
#include "dsl/Var.h"

#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace aicf {

// Where a Func's storage lives (store_in): Auto, Heap, Stack, Register, GPUShared.
using MemoryType = ir::MemoryType;

class Func;
class Pipeline;
class Target;

// The buffers a realize produces: one per Tuple element.
class Realization {
public:
    Realization() = default;
    explicit Realization(std::vector<Buffer<>> buffers) : buffers_(std::move(buffers)) {}
    template <typename... Bs>
    Realization(const Buffer<> &first, const Bs &...rest) : buffers_{first, Buffer<>(rest)...} {}

    size_t size() const { return buffers_.size(); }
    const Buffer<> &operator[](size_t i) const; // a CompileError past the last
    const std::vector<Buffer<>> &buffers() const { return buffers_; }
    // A single-valued realization converts to its buffer.
    template <typename T> operator Buffer<T>() const { return Buffer<T>(single()); }

private:
    std::vector<Buffer<>> buffers_;
    const Buffer<> &single() const;
};

// The left or right side f(args): assigning defines the Func, reading calls it.
class FuncRef {
public:
    FuncRef(ir::Function f, std::vector<ir::Expr> args)
        : func(std::move(f)), args(std::move(args)) {}

    FuncRef &operator=(const ir::Expr &e);
    FuncRef &operator=(const Tuple &t);
    FuncRef &operator=(const FuncRef &other);
    FuncRef &operator+=(const ir::Expr &e);
    FuncRef &operator-=(const ir::Expr &e);
    FuncRef &operator*=(const ir::Expr &e);
    FuncRef &operator/=(const ir::Expr &e);

    // The value of a single-valued Func at these arguments.
    operator ir::Expr() const;
    // Element i of a Tuple-valued Func at these arguments.
    ir::Expr operator[](int i) const;

private:
    ir::Function func;
    std::vector<ir::Expr> args;
    // Defines, or adds an update, from `values`.
    void define(const std::vector<ir::Expr> &values);
    // f(args) = f(args) op e, with an implicit pure definition `identity` if f has none.
    void update_with(const ir::Expr &e, const ir::Expr &identity, char op);
};

class Func {
public:
    Func();
    explicit Func(const std::string &name);
    explicit Func(const char *name) : Func(std::string(name)) {}
    // A zero-dimensional Func whose value is e.
    explicit Func(const ir::Expr &e);
    explicit Func(ir::Function f) : func(std::move(f)) {}

    template <typename... Args> FuncRef operator()(const Args &...args) const {
        return FuncRef(func, std::vector<ir::Expr>{ir::Expr(args)...});
    }
    FuncRef operator()(const std::vector<ir::Expr> &args) const { return FuncRef(func, args); }
    FuncRef operator()(const std::vector<Var> &args) const;

    const std::string &name() const { return func.name(); }
    bool defined() const { return func.has_pure_definition(); }
    int dimensions() const;
    int outputs() const;
    ir::Type type() const;
    const std::vector<ir::Type> &types() const;
    std::vector<Var> args() const;
    ir::Expr value() const;
    Tuple values() const;
    int num_update_definitions() const { return static_cast<int>(func.updates().size()); }
    const ir::Function &function() const { return func; }

    // Computes the Func over [0, sizes[d]) in each dimension into new buffers.
    Realization realize(const std::vector<int> &sizes);
    Realization realize(const std::vector<int> &sizes, const Target &target);
    // realize({W, H}), and realize({}) for a Func of no dimensions ({} alone could also be
    // an empty Realization).
    Realization realize(std::initializer_list<int> sizes) {
        return realize(std::vector<int>(sizes));
    }
    Realization realize(std::initializer_list<int> sizes, const Target &target) {
        return realize(std::vector<int>(sizes), target);
    }
    // Computes the Func over the region of the given buffers (one per Tuple element).
    void realize(const Realization &outputs);
    void realize(const Realization &outputs, const Target &target);
    template <typename T> void realize(const Buffer<T> &output) {
        realize(Realization(std::vector<Buffer<>>{Buffer<>(output)}));
    }
    template <typename T> void realize(const Buffer<T> &output, const Target &target) {
        realize(Realization(std::vector<Buffer<>>{Buffer<>(output)}), target);
    }

    // The pipeline's IR after lowering, as text (for reading, or `AICF_DEBUG=2` for every pass).
    std::string lowered_stmt() const;
    std::string lowered_stmt(const Target &target) const;
    void compile_to_lowered_stmt(const std::string &filename) const;
    // The GPU kernels as PTX for the target's architecture, and what ptxas says about them.
    std::string ptx(const Target &target) const;
    void compile_to_ptx(const std::string &filename, const Target &target) const;
    std::string kernel_resources(const Target &target) const;
    // The dataflow report at output sizes `sizes` (Pipeline::report).
    DataflowReport report(const std::vector<int> &sizes, const Target &target,
                          const ReportArguments &args = ReportArguments(),
                          bool baseline = true) const;
    // The host code as assembly for this CPU (what the JIT runs).
    std::string assembly() const;
    std::string assembly(const Target &target) const;
    void compile_to_assembly(const std::string &filename) const;
    void compile_to_assembly(const std::string &filename, const Target &target) const;

    // The loop nest the schedule produces, readable ("produce f: for y: for x: ...").
    // For a target with a GPU, the kernels follow: their block loops, threads per block and
    // shared memory.
    std::string loop_nest() const;
    std::string loop_nest(const Target &target) const;
    void print_loop_nest() const;
    void print_loop_nest(const Target &target) const;

    // Update definition i as a Stage, to schedule its loops.
    Stage update(int i = 0);

    // Loop directives on the pure definition (see Stage).
    Func &split(const VarOrRVar &old, const VarOrRVar &outer, const VarOrRVar &inner,
                const ir::Expr &factor, TailStrategy tail = TailStrategy::Auto);
    Func &fuse(const VarOrRVar &inner, const VarOrRVar &outer, const VarOrRVar &fused);
    Func &reorder(const std::vector<VarOrRVar> &vars);
    template <typename... Args>
    Func &reorder(const VarOrRVar &a, const VarOrRVar &b, const Args &...rest) {
        return reorder(std::vector<VarOrRVar>{a, b, VarOrRVar(rest)...});
    }
    Func &tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &xo, const VarOrRVar &yo,
               const VarOrRVar &xi, const VarOrRVar &yi, const ir::Expr &xfactor,
               const ir::Expr &yfactor, TailStrategy tail = TailStrategy::Auto);
    Func &tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &xi, const VarOrRVar &yi,
               const ir::Expr &xfactor, const ir::Expr &yfactor,
               TailStrategy tail = TailStrategy::Auto);
    Func &rename(const VarOrRVar &old, const VarOrRVar &new_name);
    Func &serial(const VarOrRVar &v);
    Func &never_partition(const VarOrRVar &v);
    Func &never_partition_all();
    Func &parallel(const VarOrRVar &v);
    Func &parallel(const VarOrRVar &v, const ir::Expr &task_size,
                   TailStrategy tail = TailStrategy::Auto);
    Func &vectorize(const VarOrRVar &v);
    Func &vectorize(const VarOrRVar &v, const ir::Expr &factor,
                    TailStrategy tail = TailStrategy::Auto);
    Func &unroll(const VarOrRVar &v);
    Func &unroll(const VarOrRVar &v, const ir::Expr &factor,
                 TailStrategy tail = TailStrategy::Auto);

    // GPU mapping of the pure definition (see Stage).
    Func &gpu_blocks(const VarOrRVar &x);
    Func &gpu_blocks(const VarOrRVar &x, const VarOrRVar &y);
    Func &gpu_blocks(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z);
    Func &gpu_threads(const VarOrRVar &x);
    Func &gpu_threads(const VarOrRVar &x, const VarOrRVar &y);
    Func &gpu_threads(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z);
    Func &gpu_lanes(const VarOrRVar &x);
    // Halide's short forms: x itself becomes the block loop, tx the thread loop.
    Func &gpu_tile(const VarOrRVar &x, const VarOrRVar &tx, const ir::Expr &x_size,
                   TailStrategy tail = TailStrategy::Auto);
    Func &gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &tx, const VarOrRVar &ty,
                   const ir::Expr &x_size, const ir::Expr &y_size,
                   TailStrategy tail = TailStrategy::Auto);
    Func &gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z, const VarOrRVar &tx,
                   const VarOrRVar &ty, const VarOrRVar &tz, const ir::Expr &x_size,
                   const ir::Expr &y_size, const ir::Expr &z_size,
                   TailStrategy tail = TailStrategy::Auto);
    Func &gpu_tile(const VarOrRVar &x, const VarOrRVar &bx, const VarOrRVar &tx,
                   const ir::Expr &x_size, TailStrategy tail = TailStrategy::Auto);
    Func &gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &bx, const VarOrRVar &by,
                   const VarOrRVar &tx, const VarOrRVar &ty, const ir::Expr &x_size,
                   const ir::Expr &y_size, TailStrategy tail = TailStrategy::Auto);
    Func &gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z, const VarOrRVar &bx,
                   const VarOrRVar &by, const VarOrRVar &bz, const VarOrRVar &tx,
                   const VarOrRVar &ty, const VarOrRVar &tz, const ir::Expr &x_size,
                   const ir::Expr &y_size, const ir::Expr &z_size,
                   TailStrategy tail = TailStrategy::Auto);
    Func &gpu_single_thread();
    // Software prefetch in the pure definition's loops: see Stage::prefetch.
    Func &prefetch(const Func &f, const VarOrRVar &at, const VarOrRVar &from,
                   const ir::Expr &offset = 1,
                   PrefetchBoundStrategy strategy = PrefetchBoundStrategy::GuardWithIf);
    Func &prefetch(const BufferBase &b, const VarOrRVar &at, const VarOrRVar &from,
                   const ir::Expr &offset = 1,
                   PrefetchBoundStrategy strategy = PrefetchBoundStrategy::GuardWithIf);
    Func &prefetch(const ImageParam &p, const VarOrRVar &at, const VarOrRVar &from,
                   const ir::Expr &offset = 1,
                   PrefetchBoundStrategy strategy = PrefetchBoundStrategy::GuardWithIf);

    // Where the Func's storage lives. Auto: on a GPU, shared memory when computed at the
    // block loops, registers when computed inside the thread loops, device memory at the
    // root; on the host, the stack when small and constant, the heap otherwise.
    Func &store_in(ir::MemoryType t);

    // Occupancy of the GPU kernel this Func's block loops make (PTX launch bounds): at least
    // `min_blocks_per_sm` of its blocks resident on each multiprocessor at once (1 to 32;
    // .minnctapersm: ptxas then limits the registers per thread to fit them), or at most
    // `registers` registers per thread (16 to 255; .maxnreg). Values the kernel's block shape
    // cannot meet on the target (more threads or registers than a multiprocessor has) are a
    // CompileError when it is compiled.
    Func &gpu_launch_bounds(int min_blocks_per_sm);

    // Software pipelining of a Func staged in GPU shared memory at a serial loop inside the
    // thread loops' block (a tile refilled at each step of a reduction), so that the loads'
    // latency hides behind the computation. 1 turns it off.
    // - PipelineCopy::Registers (2 stages): each thread loads the next iteration's values from
    //   device memory into registers before the current iteration's consumers run, and stores
    //   them into shared memory at the next iteration's start. Its loops inside that loop are
    //   unrolled (at most 16 iterations each).
    // - PipelineCopy::Async (2 to 4 stages): the Func gets `stages` shared buffers, used in
    //   turn; iteration i's tile is copied `stages - 1` iterations ahead (cp.async, 4 to 16
    //   bytes a copy, on sm_80 and later; plain loads and stores where a copy's alignment is
    //   not met), and each iteration starts by waiting for its own copies and one barrier.
    //   Every Func staged at that loop must be pipelined so, with the same stages.
    Func &gpu_pipeline(int stages, PipelineCopy copy = PipelineCopy::Registers);
    Func &gpu_max_registers(int registers);

    // The Func is computed over exactly [min, min + extent) in `var` (a run-time error if its
    // consumers need more); a constant extent lets that loop be unrolled or vectorized. A
    // later bound of the same Var replaces this one (and a later align_bounds, the earlier).
    Func &bound(const Var &var, const ir::Expr &min, const ir::Expr &extent);
    // The Func is computed over exactly `extent` points in `var`, from the first point its
    // consumers need wherever it is computed (a run-time error if they need more): a region
    // of constant size whose start varies, such as a tile's producer at the last tile of a
    // split with GuardWithIf, computed whole where its consumer is guarded. Replaces a
    // bound() of the same Var, and a later bound() replaces it.
    Func &bound_extent(const Var &var, const ir::Expr &extent);
    // Rounds the computed region in `var` outward to a multiple of `modulus` (plus
    // `remainder`) at both ends.
    Func &align_bounds(const Var &var, const ir::Expr &modulus, const ir::Expr &remainder = 0);
    // The order of the dimensions in memory, innermost first (the loop order is separate).
    Func &reorder_storage(const std::vector<Var> &vars);
    template <typename... Args>
    Func &reorder_storage(const Var &a, const Var &b, const Args &...rest) {
        return reorder_storage(std::vector<Var>{a, b, Var(rest)...});
    }
    // Pads the stored extent of `var` to a multiple of `alignment` elements (e.g. to keep
    // rows aligned, or to shift rows across memory banks).
    Func &align_storage(const Var &var, const ir::Expr &alignment);
    // An XOR swizzle of the storage, for tiles in GPU shared memory: the 16-byte pieces of
    // each row (the innermost stored dimension) are permuted by the row's index (the next
    // stored dimension), so that 8 consecutive rows read at one column (an ldmatrix, or a
    // column of 16-byte pieces) fall in 8 different groups of banks, as padding the rows by
    // 16 bytes would, without the padding. Rows must be 32, 64 or a multiple of 128 bytes
    // long (a constant); each 16-byte piece stays whole, so accesses within one stay dense.
    Func &swizzle_storage();
    // The layout the warpgroup tensor cores read (gpu_wgmma), for tiles in GPU shared memory:
    // the two innermost stored dimensions (rows, and the rows' index) tiled in core matrices of
    // 8 rows x 16 bytes, each 128 contiguous bytes; rows are padded to whole 16-byte pieces
    // and their count to a multiple of 8. A 16-byte piece of a row stays whole, so copies of
    // whole pieces (cp.async) stay dense.
    Func &core_matrix_storage();

    // A wrapper: a new Func equal to this one that `consumer` reads instead of it, to be
    // scheduled on its own (the Halide way to stage a copy, e.g. a tile in shared memory).
    // Asking again for the same consumer gives the same wrapper.
    Func in(const Func &consumer);
    // The same for every consumer of this Func.
    Func in();

    // Placement: where the Func is computed and where its storage lives.
    Func &compute_root();
    Func &compute_inline();
    // Computes the Func inside the loop over `var` of `consumer` (its last stage that has
    // that loop), just the region that one iteration needs.
    Func &compute_at(const Func &consumer, const VarOrRVar &var);
    // Inside the loop over `var` of one stage of `consumer`, e.g. a reduction loop of an update
    // (`panel.compute_at(prod.update(), ko)`).
    Func &compute_at(const Stage &consumer, const VarOrRVar &var);
    Func &compute_at(const LoopLevel &level);
    // Allocates the Func's storage at an outer loop (or the root) than where it is computed.
    Func &store_at(const Func &consumer, const VarOrRVar &var);
    Func &store_at(const Stage &consumer, const VarOrRVar &var);
    Func &store_at(const LoopLevel &level);
    Func &store_root();

private:
    ir::Function func;
    // The Pipeline that realize uses, kept so that realizing again finds the compiled code
    // without walking the definition (shared by copies; set atomically).
    std::shared_ptr<Pipeline> pipeline_;
    std::shared_ptr<Pipeline> realize_pipeline();
};

} // namespace aicf

#endif
