#include "lowering/MapGPULoops.h"

#include "dsl/Names.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/Simplify.h"
#include "lowering/KernelAnalysis.h"

#include <set>
#include <sstream>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

class MapBlockLoops : public IRMutator {
public:
    explicit MapBlockLoops(const std::vector<const For *> &nest) : nest(nest.begin(), nest.end()) {}

private:
    std::set<const For *> nest;
    using IRMutator::visit;
    Stmt visit(const For *op) override {
        if (!nest.count(op)) return IRMutator::visit(op);
        return LetStmt::make(op->name, Add::make(op->min, gpu_block_index(op->gpu_dim)),
                             mutate(op->body));
    }
};

// The block shape: per dimension, the largest constant bound of the thread loops along it.
// The threads a block may have in x, y and z.
const int64_t kMaxThreadsPerDim[3] = {1024, 1024, 64};

class FindBlockShape : public LetTracker {
public:
    explicit FindBlockShape(LoweredKernel &k) : kernel(k) {}

private:
    LoweredKernel &kernel;
    using LetTracker::visit;
    void visit(const For *op) override {
        IRVisitor::visit(op);
        if (op->for_type != ForType::GPUThread) return;
        int d = int(op->gpu_dim);
        auto extent = constant_upper_bound(expand(op->extent));
        const std::string count = with_user_loop_names(to_string(simplify(op->extent)));
        user_assert(extent.has_value())
            << "The GPU thread loop " << loop_for_users(op->name) << " runs " << count << " times"
            << symbols_clause(count)
            << ", which is not bounded by a constant, so the block shape is unknown. Split the "
            << "loop by a constant factor (gpu_tile with a constant size does), or give the "
            << "Func a constant extent there: bound_extent(" << parse_loop_name(op->name).var
            << ", n) where each block needs a region that moves with the block (n points from "
            << "the first it needs, checked at run time), bound() where the region is fixed.";
        // (A count far past any block's is said as it is, not as the int the shape holds;
        // check_block_shape names the others with the block's whole shape.)
        user_assert(*extent <= (int64_t(1) << 30))
            << "The kernel " << kernel.name << " needs " << *extent << " threads in dimension "
            << to_string(GPUDim(d)) << " (loop " << loop_for_users(op->name)
            << "), but a block allows at most " << kMaxThreadsPerDim[d]
            << " there. Split the thread loop by a smaller factor.";
        if (*extent > kernel.threads[d]) {
            kernel.threads[d] = int(*extent);
            kernel.thread_loops[d] = op->name;
        }
    }
};

void check_block_shape(const LoweredKernel &kernel) {
    const Target &target = kernel.target;
    int64_t total = int64_t(kernel.threads[0]) * kernel.threads[1] * kernel.threads[2];
    std::ostringstream shape;
    for (int d = 0; d < 3; d++) {
        if (kernel.threads[d] > 1)
            shape << (shape.tellp() > 0 ? ", " : "") << kernel.threads[d] << " in "
                  << to_string(GPUDim(d)) << " (loop " << loop_for_users(kernel.thread_loops[d])
                  << ")";
    }
    user_assert(total <= target.max_threads_per_block())
        << "The kernel " << kernel.name << " needs " << total << " threads per block ("
        << shape.str() << "), but " << target.to_string() << " allows at most "
        << target.max_threads_per_block() << ". Split the thread loops by smaller factors.";
    for (int d = 0; d < 3; d++) {
        user_assert(kernel.threads[d] <= kMaxThreadsPerDim[d])
            << "The kernel " << kernel.name << " needs " << kernel.threads[d]
            << " threads in dimension " << to_string(GPUDim(d)) << " (loop "
            << loop_for_users(kernel.thread_loops[d]) << "), but a block allows at most "
            << kMaxThreadsPerDim[d] << " there" << (d == 2 ? " (and 1024 in x and y)" : "")
            << ". Split the loop by a factor of at most " << kMaxThreadsPerDim[d]
            << (d == 2 ? ", or map the longer loops onto x and y (gpu_threads(a, b, c) puts a on "
                         "x, b on y, c on z)"
                       : "")
            << ".";
    }
    // Launch bounds from the schedule that the block shape cannot meet.
    const GPULaunchBounds &b = kernel.launch_bounds;
    const std::string func = kernel.funcs.empty() ? kernel.name : kernel.funcs[0];
    const int per_sm = target.max_threads_per_multiprocessor();
    user_assert(b.min_blocks_per_sm * total <= per_sm)
        << "gpu_launch_bounds(" << b.min_blocks_per_sm << ") on Func " << func << " asks for "
        << b.min_blocks_per_sm << " blocks of " << total << " threads on each multiprocessor, "
        << "but one holds at most " << per_sm << " threads on " << target.to_string()
        << ". Ask for at most " << per_sm / total << ".";
    user_assert(int64_t(b.max_registers) * total <= 65536)
        << "gpu_max_registers(" << b.max_registers << ") on Func " << func << " would let its "
        << total << " threads use " << int64_t(b.max_registers) * total
        << " registers, more than a multiprocessor's 65536, so no block could start. Allow at "
        << "most " << 65536 / total << ".";
}

} // namespace

void map_gpu_loops(LoweredKernel &kernel) {
    const For *outer = kernel.body.as<For>();
    internal_assert(outer && outer->for_type == ForType::GPUBlock)
        << "map_gpu_loops: kernel " << kernel.name << " does not start with a block loop";
    std::vector<const For *> nest = block_loop_nest(outer);
    for (const For *f : nest) {
        kernel.block_loops[size_t(f->gpu_dim)] = f->name;
        kernel.loop_vars.push_back(f->name);
    }
    kernel.body = MapBlockLoops(nest).mutate(kernel.body);
    FindBlockShape shape(kernel);
    kernel.body.accept(&shape);
    check_block_shape(kernel);
}

} // namespace lowering
} // namespace aicf
