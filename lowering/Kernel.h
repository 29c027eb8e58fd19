#ifndef AICF_LOWERING_KERNEL_H
#define AICF_LOWERING_KERNEL_H

// A GPU kernel as lowering hands it to the devices: one SPMD body that every thread of every
// block runs, its arguments, and its launch shape. The simulator executes the body directly;
// the NVPTX code generator translates the same body.
//
// The GPU kernel passes (Lower.cpp lists them) bring a kernel to this form one step at a time,
// from its block loop nest as extract_kernels takes it out of the host code; each pass's
// header says what it expects of the body and which fields it fills in.
//
// What the body may contain:
// - gpu_thread_index(d) and gpu_block_index(d) (Int(32), d in 0..2, x = 0): this thread's
//   index in its block and this block's index in the grid.
// - Load/Store on buffer arguments by name, indexed in elements from the buffer's base.
// - Load/Store on "__shared" (kSharedMemoryName): the block's one shared-memory array,
//   `shared_bytes` long, indexed in elements of the accessed type.
// - Allocate with MemoryType::Register (constant extents): private to each thread.
// - Evaluate(gpu_barrier()): a block-wide barrier (bar.sync 0) that all threads must reach.
// - For loops of type Serial only; IfThenElse, LetStmt, Block, ProducerConsumer, AssertStmt.

#include "dsl/Schedule.h"
#include "dsl/Target.h"
#include "dsl/ir/IR.h"

#include <array>
#include <set>
#include <string>
#include <vector>

namespace aicf {
namespace lowering {

constexpr const char *kSharedMemoryName = "__shared";

struct KernelArgument {
    std::string name;
    bool is_buffer = false;
    ir::Type type;        // scalars: the value's type; buffers: the element type
    bool read = false;    // buffers: the kernel loads from it
    bool written = false; // buffers: the kernel stores to it
};

struct SharedAllocation {
    std::string func;   // the Func (storage name) that lives there
    int64_t offset = 0; // bytes from the start of shared memory
    int64_t bytes = 0;
};

struct LoweredKernel {
    std::string name;                       // unique within its pipeline
    uint64_t id = 0;                        // unique in the process (devices cache code by it)
    Target target;                          // what it was lowered for
    std::vector<std::string> funcs;         // the Funcs computed in it, outermost first
    std::vector<KernelArgument> args;       // in launch order
    std::array<int, 3> threads{{1, 1, 1}};  // block shape (x, y, z), constant
    std::array<std::string, 3> block_loops; // the loops mapped onto blocks (for messages)
    std::array<std::string, 3> thread_loops;
    std::vector<std::string> loop_vars;   // the lets that replaced block and thread loops
    int64_t shared_bytes = 0;             // dynamic shared memory per block
    ir::GPULaunchBounds launch_bounds;    // from the schedule of the Func of its block loops
    std::vector<SharedAllocation> shared; // where each shared Func lives
    ir::Stmt body;
    // Where launch_condition (in terms of the launch's arguments) is false, the host launches
    // the kernel `fallback` (an index in the pipeline's kernels) instead: the same computation
    // with its wide accesses made lane by lane (version_wide_accesses).
    ir::Expr launch_condition;
    int fallback = -1;
    // The Funcs whose stagings multi_buffer_async_stages laid out in stages, which
    // copy_stages_asynchronously may then copy with cp.async (lowering only).
    std::set<std::string> async_staged;
    // The Funcs pipelined through registers whose stagings read what the block wrote before
    // their loop (check_pipelined_reads): their first loads wait at a barrier.
    std::set<std::string> pipelined_after_writes;

    int thread_count() const { return threads[0] * threads[1] * threads[2]; }
};

// A new kernel identity, unique in the process.
uint64_t new_kernel_id();

// The names the run-time checks left inside a kernel report (the Func or buffer of each
// runtime_error message), distinct and sorted. On a GPU a failed check writes its kind, the
// index of its name here and its values to the kernel's check slot and leaves the kernel, and
// the host raises the message (CodeGen_PTX, CudaDevice): a trap would leave the CUDA context
// unusable.
std::vector<std::string> kernel_check_names(const ir::Stmt &body);

// The floating-point operations one lane of `node` performs by itself (not its operands):
// 1 for a float add, subtract, multiply, divide, modulo, min, max, comparison and math
// function; 2 for fma; 0 otherwise. The simulator's profiles and the static counts (KernelCost.h)
// use it.
int flops_per_lane(const ir::Expr &node);

// A readable summary: name, block shape, shared memory, arguments, then the body.
std::string describe_kernel(const LoweredKernel &k);
// One line: the name, the loops mapped onto blocks, threads per block, shared memory.
std::string kernel_launch_shape(const LoweredKernel &k);

} // namespace lowering
} // namespace aicf

#endif
