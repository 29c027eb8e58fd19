#include "lowering/GPUPlacement.h"

#include "dsl/Names.h"
#include "dsl/base/Error.h"
#include "dsl/ir/Bounds.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Monotonic.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"
#include "lowering/BoxesRequired.h"
#include "lowering/CrossThreadReductions.h"
#include "lowering/KernelAnalysis.h"

#include <algorithm>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// The statement under a run of LetStmts.
Stmt skip_lets(Stmt s) {
    while (const LetStmt *l = s.as<LetStmt>())
        s = l->body;
    return s;
}

// The names of the Funcs and buffers read or written inside kernels.
std::set<std::string> names_used_in_kernels(const Stmt &s) {
    std::set<std::string> names;
    visit_each<For>(s, [&](const For *op) {
        if (op->for_type != ForType::GPUBlock) return;
        visit_each<Call>(op->body, [&](const Call *c) {
            if (c->call_type == Call::Func) names.insert(c->name);
        });
        visit_each<Provide>(op->body, [&](const Provide *p) { names.insert(p->name); });
    });
    return names;
}

// Whether the threads of `loop` write apart along `w`: what thread t writes ends before
// what thread t + 1 starts (or the reverse), and where it starts moves one way with t.
bool threads_write_apart(const Interval &w, const std::string &loop) {
    if (!w.is_bounded()) return false;
    Expr next = Add::make(Variable::make(Int(32), loop), 1);
    Expr next_min = substitute(loop, next, w.min), next_max = substitute(loop, next, w.max);
    Monotonic m = is_monotonic(w.min, loop);
    return (m == Monotonic::Increasing && can_prove(LT::make(w.max, next_min))) ||
           (m == Monotonic::Decreasing && can_prove(LT::make(next_max, w.min)));
}

// A Func stored per block in shared memory but computed inside the thread loops of another
// stage (store_at a block loop, compute_at a thread loop) puts what every thread computes in
// one tile: two threads computing the same point would write it at once. Checks, for each
// such thread loop, that its threads write apart along some dimension.
void check_threads_write_apart(const Realize *op, const std::string &block) {
    // Innermost first: the loop the Func is computed at names the points one thread computes.
    std::vector<const For *> loops;
    visit_each<For>(op->body, [&](const For *loop) {
        if (loop->for_type == ForType::GPUThread && func_of_loop(loop->name) != op->name &&
            !is_const(loop->extent, 1))
            loops.push_back(loop);
    });
    for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
        const For *loop = *it;
        Access w = box_provided(loop->body, op->name);
        if (!w.used) continue;
        bool apart = false;
        for (const Interval &i : w.box)
            apart = apart || threads_write_apart(i, loop->name);
        if (apart) continue;
        // Said as sizes and steps where they are constants, as the intervals otherwise.
        std::ostringstream sizes, steps, intervals;
        bool sized = true, stepped = true;
        Expr next = Add::make(Variable::make(Int(32), loop->name), 1);
        for (size_t d = 0; d < w.box.size(); d++) {
            const Interval &i = w.box[d];
            auto size =
                i.is_bounded() ? as_const_int(simplify(Sub::make(i.max, i.min))) : std::nullopt;
            auto step =
                i.is_bounded()
                    ? as_const_int(simplify(Sub::make(substitute(loop->name, next, i.min), i.min)))
                    : std::nullopt;
            sized = sized && size;
            stepped = stepped && step;
            if (size) sizes << (d ? " x " : "") << *size + 1;
            if (step) steps << (d ? " x " : "") << *step;
            intervals << (d ? ", " : "") << "["
                      << with_user_loop_names(i.has_lower_bound() ? to_string(i.min) : "-inf")
                      << ", "
                      << with_user_loop_names(i.has_upper_bound() ? to_string(i.max) : "inf")
                      << "]";
        }
        // Sizes (a stencil's footprint) say it where the steps are not constants (a guarded
        // tail clamps where the last threads start).
        std::string computed = !sized     ? intervals.str()
                               : !stepped ? "a region of " + sizes.str() + " points"
                                          : "a region of " + sizes.str() +
                                                " points, and the next thread's starts " +
                                                steps.str() + " further on";
        user_error << "Func " << op->name << " is stored per block in shared memory (at the GPU "
                   << "block loop " << loop_for_users(block)
                   << ") but computed inside the GPU thread loop " << loop_for_users(loop->name)
                   << ", where each thread computes " << computed
                   << ": neighbouring threads compute points in common, and would write them "
                   << "into the block's tile at once. Compute " << op->name << " at the block loop "
                   << loop_for_users(block)
                   << " (its points are then computed once, by the block's threads together), "
                   << "or store it inside the thread loop as well (each thread keeps its own "
                   << "copy in registers).";
    }
}

// A Func stored per block in shared memory (or in device memory, outside the kernel) and
// computed inside a thread loop T of another stage, outside a thread loop L that runs inside
// T (compute_at the outer of the consumer's thread loops): its stores run on the first thread
// along L only (FuseGPUThreadLoops), and the others read it inside T, where no barrier
// separates them from the stores.
void check_tile_computed_before_read(const Realize *op, const std::string &block) {
    class Check : public IRVisitor {
    public:
        explicit Check(const Realize *op, const std::string &block) : op(op), block(block) {}

    private:
        const Realize *op;
        const std::string &block;        // empty: stored in device memory, outside the kernel
        std::vector<const For *> around; // the thread loops around the node
        using IRVisitor::visit;
        void visit(const For *loop) override {
            const bool thread = loop->for_type == ForType::GPUThread;
            if (thread) around.push_back(loop);
            IRVisitor::visit(loop);
            if (thread) around.pop_back();
        }
        void visit(const Provide *p) override {
            IRVisitor::visit(p);
            if (p->name != op->name) return;
            for (const For *t : around) {
                // Read only after T (in a later kernel, or after the barrier that ends T's
                // loop nest), it is complete when read.
                bool read_inside = false;
                visit_each<Call>(t->body, [&](const Call *c) {
                    read_inside =
                        read_inside || (c->call_type == Call::Func && c->name == op->name);
                });
                if (!read_inside) continue;
                visit_each<For>(t->body, [&](const For *inner) {
                    // (A loop along a dimension some loop around the store also runs on
                    // is not one the store is guarded to the first thread of.)
                    if (inner->for_type != ForType::GPUThread || is_const(inner->extent, 1) ||
                        std::any_of(around.begin(), around.end(),
                                    [&](const For *a) { return a->gpu_dim == inner->gpu_dim; }))
                        return;
                    user_error
                        << "Func " << op->name << " is stored "
                        << (block.empty() ? "in device memory"
                                          : "per block in shared memory (at the GPU block loop " +
                                                loop_for_users(block) + ")")
                        << " and computed inside the GPU thread loop " << loop_for_users(t->name)
                        << ", but outside the thread loop " << loop_for_users(inner->name)
                        << " inside it: only the first thread along " << loop_for_users(inner->name)
                        << " would compute it, and the others would read it with no barrier "
                        << "after the stores. Compute " << op->name << " at a block loop "
                        << "(the block's threads compute it together, before a barrier), or store "
                        << "and compute it inside " << loop_for_users(inner->name)
                        << " (each thread its own copy in registers).";
                });
            }
        }
    } check(op, block);
    op->body.accept(&check);
}

} // namespace

void check_inner_block_loops(const For *op) {
    Stmt inner = skip_lets(op->body);
    const For *child = inner.as<For>();
    if ((child && child->for_type == ForType::GPUBlock) ||
        !contains_loop_type(op->body, ForType::GPUBlock))
        return;
    // A stage run by gpu_single_thread() is a kernel of its own (one block of one thread):
    // computed inside another kernel, its block loop is the inner one.
    std::string single;
    visit_each<For>(op->body, [&](const For *f) {
        if (single.empty() && f->for_type == ForType::GPUBlock &&
            parse_loop_name(f->name).var == single_thread_var(true))
            single = f->name;
    });
    user_assert(single.empty())
        << "Func " << func_of_loop(single)
        << " runs as one GPU thread (gpu_single_thread()), a kernel of its own, but "
        << "it is computed inside the kernel of loop " << loop_for_users(op->name)
        << ". Compute it at the root, or leave out gpu_single_thread(): a Func "
        << "computed inside a kernel's thread loops runs in each of those threads, "
        << "and at a block loop its loops may go on the block's threads.";
    // A Func computed inside the kernel whose own loop is on GPU blocks.
    std::string own_block_loop;
    const std::string consumer = func_of_loop(op->name);
    visit_each<For>(op->body, [&](const For *f) {
        if (own_block_loop.empty() && f->for_type == ForType::GPUBlock &&
            func_of_loop(f->name) != consumer)
            own_block_loop = f->name;
    });
    user_assert(own_block_loop.empty())
        << "Func " << func_of_loop(own_block_loop) << " is computed inside the kernel of loop "
        << loop_for_users(op->name) << ", but its own loop " << loop_for_users(own_block_loop)
        << " is on GPU blocks: a Func computed inside a kernel runs on that kernel's blocks. Put "
        << "its loops on the block's threads (gpu_threads), or leave them serial; or compute it "
        << "at the root, a kernel of its own.";
    // What stands between this block loop and an inner one: storage, or another loop.
    std::string what;
    visit_each<Realize>(op->body, [&](const Realize *r) {
        if (what.empty() && contains_loop_type(r->body, ForType::GPUBlock)) what = r->name;
    });
    user_assert(what.empty()) << "Func " << what << " is stored at the GPU block loop "
                              << loop_for_users(op->name)
                              << ", between it and an inner block loop of the same kernel. "
                              << "Store and compute " << what
                              << " at the innermost block loop, or inside the thread loops.";
    const For *between = nullptr;
    visit_each<For>(op->body, [&](const For *f) {
        if (!between && f->for_type != ForType::GPUBlock &&
            contains_loop_type(f->body, ForType::GPUBlock))
            between = f;
    });
    std::string loop;
    if (between) {
        const bool thread = between->for_type == ForType::GPUThread;
        loop = std::string(": the ") + (thread ? "GPU thread" : to_string(between->for_type)) +
               " loop " + loop_for_users(between->name) + " is between them" +
               (thread ? ", and a kernel's thread loops are inside all its block loops" : "");
    }
    user_error << "The GPU block loops inside " << loop_for_users(op->name)
               << " are not perfectly nested in it" << loop
               << ". A kernel's block loops must be directly inside one another: reorder the "
               << "loops so that the block loops are the outermost.";
}

namespace {

class PlaceGPUStorage : public IRMutator {
public:
    PlaceGPUStorage(const Target &target, std::set<std::string> device_names,
                    std::set<std::string> all_block_loops)
        : target(target), device_names(std::move(device_names)),
          all_block_loops(std::move(all_block_loops)) {}

private:
    const Target &target;
    std::set<std::string> device_names;
    std::set<std::string> all_block_loops; // every GPU block loop of the pipeline
    std::string kernel;                    // the outermost block loop of the enclosing kernel
    std::vector<std::string> blocks;       // the enclosing block loops
    std::vector<std::string> threads;      // the enclosing thread loops
    std::vector<const For *> thread_loops;
    std::set<std::string> realized_in_thread; // Funcs realized inside the innermost thread loop
    std::string parallel;                     // an enclosing parallel loop outside kernels

    using IRMutator::visit;

    // The error for a thread loop outside every block loop: where another stage of its Func
    // is on blocks, that each stage is scheduled on its own.
    void thread_loop_outside_blocks(const For *op) const {
        const LoopNameParts loop = parse_loop_name(op->name);
        std::string on_blocks;
        for (const std::string &b : all_block_loops) {
            const LoopNameParts p = parse_loop_name(b);
            if (on_blocks.empty() && p.func == loop.func && p.stage != loop.stage) on_blocks = b;
        }
        if (!on_blocks.empty() && loop.stage >= 0) {
            user_error << "The GPU thread loop " << loop_for_users(op->name)
                       << " is not inside any GPU block loop. " << loop_stage_for_users(on_blocks)
                       << " runs on blocks (loop " << loop_for_users(on_blocks) << "), but "
                       << stage_for_users(loop.func, loop.stage)
                       << " does not: each stage of a Func is scheduled on its own. Map a loop of "
                       << stage_for_users(loop.func, loop.stage)
                       << " onto blocks too (gpu_blocks on its outer dimension, as its other "
                       << "stage does).";
        }
        user_error << "The GPU thread loop " << loop_for_users(op->name)
                   << " is not inside any GPU block loop. Map an outer loop onto blocks "
                   << "(gpu_blocks, gpu_tile), or compute " << loop.func
                   << " inside a block loop of its consumer. (A Func of no dimensions, a total, "
                   << "has no loop of its own to put on blocks: give it one of extent 1, f(i) "
                   << "with f.bound(i, 0, 1), and map i onto blocks in each of its stages, "
                   << "f.gpu_blocks(i) and f.update().gpu_blocks(i).)";
    }

    Stmt visit(const For *op) override {
        if (op->for_type == ForType::GPUBlock || op->for_type == ForType::GPUThread) {
            user_assert(target.has_cuda())
                << "The loop " << loop_for_users(op->name)
                << " is mapped onto the GPU, but the target " << target.to_string()
                << " has no GPU. Compile for a CUDA target, e.g. host-cuda-sm_80 (a realize "
                << "without a target takes AICF_TARGET=host-cuda-sm_80; a generator, "
                << "target=host-cuda-sm_80).";
        }
        if (op->for_type == ForType::GPUBlock) return visit_block_loop(op);
        if (op->for_type == ForType::GPUThread) {
            if (blocks.empty()) thread_loop_outside_blocks(op);
            // A cross-thread reduction may run inside another Func's thread loops, along a
            // dimension they leave free: all its threads end up with the whole result.
            bool free_dim = true;
            for (const For *t : thread_loops)
                free_dim = free_dim && t->gpu_dim != op->gpu_dim;
            bool nested_reduction =
                free_dim && (is_cross_thread_reduction(op) || is_const(op->extent, 1));
            // So may a Func held in registers inside the thread loop, striped across the
            // threads of its own loop (stripe_register_funcs checks every access).
            bool striped = free_dim && !thread_loops.empty() &&
                           realized_in_thread.count(func_of_loop(op->name));
            user_assert(threads.empty() || nested_reduction || striped ||
                        stage_of_loop(threads.back()) == stage_of_loop(op->name))
                << "The loop " << loop_for_users(op->name) << " is mapped "
                << "onto GPU threads, but " << func_of_loop(op->name) << " is computed inside the "
                << "GPU thread loop " << loop_for_users(threads.back())
                << ", where each thread computes its own "
                << "copy of it. Remove gpu_threads from " << func_of_loop(op->name)
                << " (each thread then computes what it needs), or compute it at the block loop "
                << loop_for_users(blocks.back()) << " to share it through shared memory.";
            threads.push_back(op->name);
            thread_loops.push_back(op);
            std::set<std::string> saved;
            std::swap(saved, realized_in_thread);
            Stmt s = IRMutator::visit(op);
            std::swap(saved, realized_in_thread);
            threads.pop_back();
            thread_loops.pop_back();
            return s;
        }
        if (op->for_type == ForType::Parallel && !kernel.empty()) {
            user_error << "The loop " << loop_for_users(op->name)
                       << " is parallel inside the GPU kernel starting at loop "
                       << loop_for_users(kernel)
                       << ". Inside a kernel, map it onto threads with gpu_threads instead.";
        }
        if (op->for_type == ForType::Parallel && kernel.empty()) {
            std::string saved = parallel;
            parallel = op->name;
            Stmt s = IRMutator::visit(op);
            parallel = saved;
            return s;
        }
        return IRMutator::visit(op);
    }

    Stmt visit_block_loop(const For *op) {
        user_assert(threads.empty())
            << "The GPU block loop " << loop_for_users(op->name)
            << " is inside the GPU thread loop " << loop_for_users(threads.back())
            << ". Block loops must enclose thread loops.";
        user_assert(parallel.empty())
            << "The GPU kernel starting at loop " << loop_for_users(op->name)
            << " is inside the parallel loop " << loop_for_users(parallel) << ". Make "
            << loop_for_users(parallel) << " serial or map it onto GPU blocks.";
        bool opens_kernel = kernel.empty();
        if (!opens_kernel) {
            // Inside a kernel, a block loop must sit directly in the previous one.
            user_assert(direct_child_block == op)
                << "The GPU block loop " << loop_for_users(op->name)
                << " is inside the kernel starting at loop " << loop_for_users(kernel)
                << " but not directly inside its "
                << "block loop " << loop_for_users(blocks.back())
                << ". A kernel's block loops must be "
                << "perfectly nested; map the outer stages onto threads instead.";
        }
        Stmt inner = skip_lets(op->body);
        const For *child = inner.as<For>();
        direct_child_block = child && child->for_type == ForType::GPUBlock ? child : nullptr;
        check_inner_block_loops(op);
        if (opens_kernel) kernel = op->name;
        blocks.push_back(op->name);
        user_assert(blocks.size() <= 3)
            << "The kernel starting at loop " << loop_for_users(kernel)
            << " has more than three nested GPU block loops (" << loop_for_users(op->name)
            << " is the fourth). Fuse loops to map them onto three dimensions.";
        Stmt s = IRMutator::visit(op);
        blocks.pop_back();
        if (opens_kernel) kernel.clear();
        return s;
    }
    const For *direct_child_block = nullptr;

    Stmt visit(const Realize *op) override {
        MemoryType mt = op->memory_type;
        const char *type_name = to_string(mt);
        if (!threads.empty()) {
            realized_in_thread.insert(op->name);
            user_assert(mt == MemoryType::Auto || mt == MemoryType::Register ||
                        mt == MemoryType::Stack)
                << "Func " << op->name << " is stored inside the GPU thread loop "
                << loop_for_users(threads.back())
                << ", so each thread keeps its own copy, but it is "
                << "stored in " << type_name << ". Store it in MemoryType::Register (or "
                << "Auto), or store and compute it at the block loop "
                << loop_for_users(blocks.back()) << " to share it through GPUShared memory.";
            mt = MemoryType::Register;
        } else if (!blocks.empty()) {
            // At the block level: shared memory, or a register tile (each thread keeps the
            // part it computes; register_tiles checks and sizes it).
            user_assert(mt == MemoryType::Auto || mt == MemoryType::GPUShared ||
                        mt == MemoryType::Register)
                << "Func " << op->name << " is stored at the GPU block loop "
                << loop_for_users(blocks.back())
                << ", where all threads of a block share it, but it is stored in " << type_name
                << ". Store it in MemoryType::GPUShared (or Auto), or in "
                << "MemoryType::Register to keep each thread's part in its registers.";
            if (mt == MemoryType::Auto) mt = MemoryType::GPUShared;
            if (mt == MemoryType::GPUShared) {
                check_threads_write_apart(op, blocks.back());
                check_tile_computed_before_read(op, blocks.back());
            }
        } else if (device_names.count(op->name)) {
            user_assert(mt == MemoryType::Auto || mt == MemoryType::Heap)
                << "Func " << op->name << " is used by GPU kernels and stored outside them, "
                << "so it lives in device memory, but it is stored in " << type_name
                << ". Store it in MemoryType::Heap (or Auto), or store and compute it inside a "
                << "kernel.";
            mt = MemoryType::Heap;
            check_tile_computed_before_read(op, "");
        } else {
            user_assert(mt != MemoryType::GPUShared && mt != MemoryType::Register)
                << "Func " << op->name << " is stored in " << type_name
                << ", but it is computed outside any GPU kernel. Compute it at a GPU block "
                << "loop (shared memory) or inside thread loops (registers).";
        }
        Stmt body = mutate(op->body);
        return Realize::make(op->name, op->types, mt, op->bounds, body);
    }
};

} // namespace

Stmt place_gpu_storage(const Stmt &s, const Target &target) {
    std::set<std::string> block_loops;
    visit_each<For>(s, [&](const For *f) {
        if (f->for_type == ForType::GPUBlock) block_loops.insert(f->name);
    });
    return PlaceGPUStorage(target, names_used_in_kernels(s), std::move(block_loops)).mutate(s);
}

} // namespace lowering
} // namespace aicf
