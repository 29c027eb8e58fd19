#include "lowering/FuseGPUThreadLoops.h"

#include "dsl/Names.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IREquality.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"
#include "lowering/KernelAnalysis.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

class FuseThreadLoops : public IRMutator {
public:
    explicit FuseThreadLoops(LoweredKernel &k) : kernel(k) {}

private:
    LoweredKernel &kernel;
    int depth = 0;
    std::set<std::string> registers;               // the register allocations around
    std::map<std::string, Stmt> allocation_bodies; // and what each holds
    std::set<int> nest_dims;                       // the dimensions of the current thread loop nest
    // Whether the current nest runs on every thread of the block: it stores only to registers
    // (each thread's own copy of a Func held in registers, along the dimensions the nest has
    // no loops of too).
    bool nest_on_all_threads = false;
    std::vector<int> enclosing_dims; // those of the thread loops around the node

    using IRMutator::visit;

    Stmt visit(const For *op) override {
        if (op->for_type != ForType::GPUThread) return IRMutator::visit(op);
        int d = int(op->gpu_dim);
        kernel.loop_vars.push_back(op->name);
        if (depth == 0) {
            nest_dims.clear();
            visit_each<For>(Stmt(op), [&](const For *f) {
                if (f->for_type == ForType::GPUThread) nest_dims.insert(int(f->gpu_dim));
            });
            // (Only a nest that stores nothing else: one that also stores to shared memory
            // would have its threads read what its thread 0 stores, with no barrier.)
            bool to_registers = false, elsewhere = false;
            std::set<std::string> kept;
            std::set<std::string> inner; // register allocations inside the nest
            visit_each<Allocate>(op->body, [&](const Allocate *a) {
                if (a->memory_type == MemoryType::Register) {
                    inner.insert(a->name);
                } else {
                    elsewhere = true;
                }
            });
            visit_each<Store>(op->body, [&](const Store *st) {
                if (registers.count(st->name)) {
                    to_registers = true;
                    kept.insert(st->name);
                } else if (!inner.count(st->name)) {
                    elsewhere = true;
                }
            });
            nest_on_all_threads = to_registers && !elsewhere;
            if (to_registers && elsewhere) check_registers_read_elsewhere(op, kept);
        }
        depth++;
        enclosing_dims.push_back(d);
        Stmt body = mutate(op->body);
        enclosing_dims.pop_back();
        depth--;
        auto extent = as_const_int(simplify(op->extent));
        if (!extent || *extent != kernel.threads[d]) {
            body = guarded(LT::make(gpu_thread_index(op->gpu_dim), op->extent), body, op);
        }
        body = LetStmt::make(op->name, Add::make(op->min, gpu_thread_index(op->gpu_dim)), body);
        if (depth == 0 && !nest_on_all_threads)
            body = on_thread_zero_of_unused(nest_dims, body, op);
        return body;
    }

    // A test inside a nest around a barrier (a cross-thread reduction's, inside the rows of
    // the block): the barrier stays outside it, for every thread to reach.
    Stmt visit(const IfThenElse *op) override {
        if (depth == 0 || !contains_intrinsic(Stmt(op), Intrinsic::gpu_barrier))
            return IRMutator::visit(op);
        Stmt then_case = mutate(op->then_case);
        Stmt s = guarded(op->condition, then_case, nullptr);
        if (!op->else_case.defined()) return s;
        return Block::make(s, guarded(Not::make(op->condition), mutate(op->else_case), nullptr));
    }

    // `if (cond) s`, with the barriers in s outside the test: the parts between them each
    // under it. What binds names around a barrier (lets, loops, allocations) is kept around
    // it, so every thread must be able to compute it. `nest`: the thread loop whose threads
    // past its extent (or past the first along a dimension it lacks) the test excludes.
    Stmt guarded(const Expr &cond, const Stmt &s, const For *nest) const {
        if (!s.defined()) return s;
        if (!contains_intrinsic(s, Intrinsic::gpu_barrier)) return IfThenElse::make(cond, s);
        if (is_gpu_barrier(s)) return s;
        auto loads = [](const Expr &e) {
            bool found = false;
            visit_each<Load>(e, [&](const Load *) { found = true; });
            return found;
        };
        auto refuse = [&](const std::string &what) {
            user_error << "A cross-thread reduction inside the GPU thread loop "
                       << (nest ? loop_for_users(nest->name) : std::string("of this kernel"))
                       << " synchronizes the whole block, but " << what
                       << ", which the threads that skip the loop's body cannot do. Give the "
                       << "loop a constant extent that fills its dimension of the block, or "
                       << "map at most 32 iterations of the reduction onto lanes (gpu_lanes).";
            return Stmt();
        };
        if (const Block *b = s.as<Block>())
            return Block::make(guarded(cond, b->first, nest), guarded(cond, b->rest, nest));
        if (const LetStmt *l = s.as<LetStmt>()) {
            if (loads(l->value)) return refuse("it reads memory to compute " + l->name);
            return LetStmt::make(l->name, l->value, guarded(cond, l->body, nest));
        }
        if (const Allocate *a = s.as<Allocate>()) {
            return Allocate::make(a->name, a->type, a->memory_type, a->extents,
                                  guarded(cond, a->body, nest));
        }
        if (const ProducerConsumer *pc = s.as<ProducerConsumer>())
            return ProducerConsumer::make(pc->name, pc->is_producer, guarded(cond, pc->body, nest));
        if (const IfThenElse *i = s.as<IfThenElse>()) {
            if (loads(i->condition)) return refuse("a test around it reads memory");
            Stmt t = guarded(And::make(cond, i->condition), i->then_case, nest);
            if (!i->else_case.defined()) return t;
            return Block::make(
                t, guarded(And::make(cond, Not::make(i->condition)), i->else_case, nest));
        }
        if (const For *f = s.as<For>()) {
            if (f->for_type != ForType::Serial || loads(f->min) || loads(f->extent))
                return refuse("the loop " + loop_for_users(f->name) + " runs around it");
            return For::make(f->name, f->min, f->extent, f->for_type, f->gpu_dim,
                             guarded(cond, f->body, nest));
        }
        return refuse("it lies in a statement that cannot be split around it");
    }

    // A nest that stores both to registers and to other memory runs on the first thread of the
    // dimensions it has no loops along (its other stores must not race): the registers of the
    // other threads along them are never computed, so no other nest may read them.
    void check_registers_read_elsewhere(const For *nest, const std::set<std::string> &kept) const {
        std::string missing;
        for (int d = 0; d < 3; d++)
            if (!nest_dims.count(d) && kernel.threads[d] > 1)
                missing += std::string(missing.empty() ? "" : " and ") + "xyz"[d];
        if (missing.empty()) return;
        for (const std::string &r : kept) {
            auto it = allocation_bodies.find(r);
            if (it == allocation_bodies.end()) continue;
            int all = 0, inside = 0;
            visit_each<Load>(it->second, [&](const Load *l) { all += l->name == r; });
            visit_each<Load>(Stmt(nest), [&](const Load *l) { inside += l->name == r; });
            const std::string f = parse_storage_name(r).func;
            user_assert(all == inside)
                << "Func " << f << " is stored in registers and computed in GPU thread loops ("
                << loop_for_users(nest->name) << ") that also store to shared or device memory "
                << "(a Func computed inside them), with no thread loop along " << missing
                << ": so that those stores do not race, the loops run on the first thread along "
                << missing << " only, and the other threads never compute their copy of " << f
                << ", which is read elsewhere in the kernel. Compute what the thread loops of " << f
                << " store outside them (at the block loop), map the loops of " << f << " along "
                << missing << " too, or store " << f << " in GPUShared.";
        }
    }

    Stmt visit(const Allocate *op) override {
        if (op->memory_type != MemoryType::Register) return IRMutator::visit(op);
        registers.insert(op->name);
        allocation_bodies[op->name] = op->body;
        Stmt s = IRMutator::visit(op);
        allocation_bodies.erase(op->name);
        registers.erase(op->name);
        return s;
    }

    // A store outside thread loops runs on one thread, unless it is to registers: each thread
    // keeps its own copy of a Func held whole in registers. So does a store inside some of
    // a nest's thread loops but outside its loops along other dimensions (a row's result
    // stored after its lanes reduced it): those threads would all store the same value.
    Stmt visit(const Store *op) override {
        if (registers.count(op->name)) return IRMutator::visit(op);
        if (depth == 0) return on_thread_zero_of_unused({}, Stmt(op));
        // Inside a nest: the nest's dimensions with no loop around the store run it on their
        // thread 0 (dimensions outside the nest already do, around the whole nest).
        std::set<int> used(enclosing_dims.begin(), enclosing_dims.end());
        for (int d = 0; d < 3; d++)
            if (!nest_dims.count(d) && !nest_on_all_threads) used.insert(d);
        return on_thread_zero_of_unused(used, Stmt(op));
    }

    // A value loaded for stores that now run on thread 0 only (a Tuple's values, loaded from
    // shared memory where a reduction left them) is loaded there too: loaded by every thread,
    // it would race with the thread that wrote it before the block's next barrier. (Not when
    // the test reads the value: a where() test bound before the stores it guards.)
    Stmt visit(const LetStmt *op) override {
        Stmt body = mutate(op->body);
        Expr cond;
        std::vector<Stmt> guarded;
        bool loads = false;
        visit_each<Load>(op->value, [&](const Load *) { loads = true; });
        if (loads && only_under_one_test(body, cond, guarded) && !uses_var(cond, op->name))
            return IfThenElse::make(cond, LetStmt::make(op->name, op->value, Block::make(guarded)));
        if (body.same_as(op->body)) return op;
        return LetStmt::make(op->name, op->value, body);
    }

    // Whether s is one or more tests of the same condition without else branches (what
    // on_thread_zero_of_unused makes around consecutive stores), and their bodies.
    static bool only_under_one_test(const Stmt &s, Expr &cond, std::vector<Stmt> &bodies) {
        if (const Block *b = s.as<Block>())
            return only_under_one_test(b->first, cond, bodies) &&
                   only_under_one_test(b->rest, cond, bodies);
        const IfThenElse *test = s.as<IfThenElse>();
        if (!test || test->else_case.defined()) return false;
        if (cond.defined() && !equal(cond, test->condition)) return false;
        cond = test->condition;
        bodies.push_back(test->then_case);
        return true;
    }

    Stmt on_thread_zero_of_unused(const std::set<int> &used, const Stmt &body,
                                  const For *nest = nullptr) const {
        Expr cond;
        for (int d = 0; d < 3; d++) {
            if (used.count(d) || kernel.threads[d] == 1) continue;
            Expr c = EQ::make(gpu_thread_index(GPUDim(d)), make_zero(Int(32)));
            cond = cond.defined() ? And::make(cond, c) : c;
        }
        return cond.defined() ? guarded(cond, body, nest) : body;
    }
};

} // namespace

void fuse_gpu_thread_loops(LoweredKernel &kernel) {
    kernel.body = FuseThreadLoops(kernel).mutate(kernel.body);
}

} // namespace lowering
} // namespace aicf
