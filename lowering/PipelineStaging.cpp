#include "lowering/PipelineStaging.h"

#include "dsl/Names.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"
#include "lowering/KernelAnalysis.h"

#include <map>
#include <set>
#include <vector>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

const int kMaxUnrolled = 16;

std::string register_name(const std::string &func) {
    return func + ".pipelined";
}

// The staging's loops, unrolled to their constant bounds, each copy guarded where the
// loop may run fewer iterations.
class UnrollStaging : public IRMutator {
public:
    explicit UnrollStaging(const std::string &func) : func(func) {}

private:
    const std::string &func;
    using IRMutator::visit;

    Stmt visit(const For *op) override {
        Stmt body = mutate(op->body);
        auto bound = constant_upper_bound(op->extent);
        user_assert(bound && *bound <= kMaxUnrolled)
            << "gpu_pipeline on Func " << func << ": its loop " << loop_for_users(op->name)
            << " inside the loop it is staged at has "
            << (bound ? std::to_string(*bound) + " iterations" : "no constant bound")
            << ", but a pipelined staging keeps every value it loads in registers, so its loops "
            << "are unrolled: at most " << kMaxUnrolled << " iterations each.";
        std::vector<Stmt> copies;
        const bool exact = is_const(simplify(op->extent));
        for (int64_t i = 0; i < *bound; i++) {
            Expr at = simplify(Add::make(op->min, make_const(Int(32), i)));
            Stmt copy = substitute(op->name, at, body);
            if (!exact)
                copy = IfThenElse::make(LT::make(make_const(Int(32), i), op->extent), copy, Stmt());
            copies.push_back(copy);
        }
        if (copies.empty()) return Evaluate::make(make_zero(Int(32)));
        return Block::make(copies);
    }
};

// The two halves of a staging: `prefetch` stores what each of its stores would write into
// the register array instead (and drops its barriers); otherwise each store writes shared
// memory from the register array. Both walk the stores in the same order, so each store
// has the same slots in both.
class SplitStaging : public IRMutator {
public:
    SplitStaging(const std::string &func, bool prefetch) : func(func), prefetch(prefetch) {}
    int64_t slots = 0; // elements of the register array
    Type type;         // their type: the Func's

private:
    const std::string &func;
    bool prefetch;
    using IRMutator::visit;

    Stmt visit(const Store *op) override {
        user_assert(op->name == kSharedMemoryName)
            << "gpu_pipeline on Func " << func << ": " << func << " is not stored in GPU shared "
            << "memory (it writes " << op->name << "). Pipelining refills a tile staged in "
            << "shared memory: store_in(MemoryType::GPUShared), or compute it at the block's "
            << "loops.";
        const Type t = op->value.type();
        type = t.element_of();
        Expr slot = t.lanes == 1
                        ? make_const(Int(32), slots)
                        : Ramp::make(make_const(Int(32), slots), make_one(Int(32)), t.lanes);
        slots += t.lanes;
        if (prefetch) return Store::make(register_name(func), op->value, slot, Expr());
        return Store::make(op->name, Load::make(t, register_name(func), slot, Expr()), op->index,
                           op->predicate);
    }

    Stmt visit(const Evaluate *op) override {
        const Call *c = op->value.as<Call>();
        if (prefetch && c && c->is_intrinsic(Intrinsic::gpu_barrier))
            return Evaluate::make(make_zero(Int(32)));
        return IRMutator::visit(op);
    }
};

class Pipeline : public IRMutator {
public:
    // `after_writes`: Funcs whose first loads wait for what the block wrote before the loop.
    Pipeline(const std::set<std::string> &funcs, const std::set<std::string> &after_writes)
        : funcs(funcs), after_writes(after_writes) {}
    std::set<std::string> done;

private:
    const std::set<std::string> &funcs, &after_writes;
    using IRMutator::visit;

    // The pipelined Funcs produced in s outside any loop, in program order.
    std::vector<std::string> staged_here(const Stmt &s) const {
        std::vector<std::string> found;
        struct Find : IRVisitor {
            const std::set<std::string> &funcs;
            std::vector<std::string> &found;
            Find(const std::set<std::string> &f, std::vector<std::string> &o)
                : funcs(f), found(o) {}
            using IRVisitor::visit;
            void visit(const For *) override {}
            void visit(const ProducerConsumer *op) override {
                if (op->is_producer && funcs.count(op->name)) found.push_back(op->name);
                IRVisitor::visit(op);
            }
        } find(funcs, found);
        s.accept(&find);
        return found;
    }

    Stmt visit(const For *op) override {
        std::vector<std::string> staged = staged_here(op->body);
        if (op->for_type != ForType::Serial || staged.empty()) return IRMutator::visit(op);
        struct Halves {
            Stmt consume, prefetch;
            int64_t slots = 0;
            Type type;
        };
        std::map<std::string, Halves> halves;
        // Each staging split in two, and its producer given the half that stores.
        class Rewrite : public IRMutator {
        public:
            Rewrite(Pipeline &p, std::map<std::string, Halves> &h) : p(p), h(h) {}
            std::string last;

        private:
            Pipeline &p;
            std::map<std::string, Halves> &h;
            // The lets between the loop's body and the staging, outermost first: the loads
            // run before the loop and at another point of its body, outside them.
            std::vector<std::pair<std::string, Expr>> lets;
            using IRMutator::visit;
            Stmt visit(const For *op) override { return op; }
            Stmt visit(const LetStmt *op) override {
                lets.emplace_back(op->name, op->value);
                Stmt body = mutate(op->body);
                lets.pop_back();
                return LetStmt::make(op->name, op->value, body);
            }
            Stmt visit(const ProducerConsumer *op) override {
                if (!p.funcs.count(op->name)) return IRMutator::visit(op);
                if (!op->is_producer) return IRMutator::visit(op);
                Stmt unrolled = UnrollStaging(op->name).mutate(op->body);
                SplitStaging store(op->name, false), load(op->name, true);
                Halves &halves = h[op->name];
                halves.consume = store.mutate(unrolled);
                halves.prefetch = load.mutate(unrolled);
                // (Their values written in: an iteration's, where the loop variable moves.)
                for (auto let = lets.rbegin(); let != lets.rend(); ++let)
                    halves.prefetch = substitute(let->first, let->second, halves.prefetch);
                halves.slots = load.slots;
                halves.type = load.type;
                last = op->name;
                return ProducerConsumer::make(op->name, true, halves.consume);
            }
        } rewrite(*this, halves);
        Stmt body = rewrite.mutate(op->body);
        std::vector<Stmt> prefetches;
        for (const std::string &f : staged)
            prefetches.push_back(halves[f].prefetch);
        Stmt prefetch = Block::make(prefetches);
        const Expr var = Variable::make(op->min.type(), op->name);
        const Expr end = Add::make(op->min, op->extent);
        // The next iteration's loads, at the start of the last staged Func's consumers.
        Stmt next = IfThenElse::make(
            LT::make(Add::make(var, make_one(var.type())), end),
            substitute(op->name, Add::make(var, make_one(var.type())), prefetch), Stmt());
        class Prepend : public IRMutator {
        public:
            Prepend(const std::string &f, const Stmt &s) : f(f), s(s) {}

        private:
            const std::string &f;
            const Stmt &s;
            using IRMutator::visit;
            Stmt visit(const For *op) override { return op; }
            Stmt visit(const ProducerConsumer *op) override {
                if (op->is_producer || op->name != f) return IRMutator::visit(op);
                return ProducerConsumer::make(op->name, false, Block::make(s, op->body));
            }
        } prepend(rewrite.last, next);
        body = prepend.mutate(body);
        // The first iteration's loads, before the loop.
        Stmt first = IfThenElse::make(GT::make(op->extent, make_zero(op->extent.type())),
                                      substitute(op->name, op->min, prefetch), Stmt());
        // What other threads wrote before the loop (a row's statistics in shared memory) is
        // read here, ahead of the barriers the loop's body begins with.
        bool wait = false;
        for (const std::string &f : staged)
            wait = wait || after_writes.count(f);
        if (wait) first = Block::make(gpu_barrier(), first);
        Stmt result = Block::make(
            first, For::make(op->name, op->min, op->extent, op->for_type, op->gpu_dim, body));
        for (const std::string &f : staged) {
            const Halves &h = halves[f];
            done.insert(f);
            if (h.slots == 0) continue; // a staging that stores nothing
            result = Allocate::make(register_name(f), h.type, MemoryType::Register,
                                    {make_const(Int(32), h.slots)}, result);
        }
        return result;
    }
};

// Checks the reads of the stagings of `funcs` inside each serial loop of a kernel.
class CheckReads : public IRVisitor {
public:
    CheckReads(const std::set<std::string> &funcs, LoweredKernel &kernel)
        : funcs(funcs), kernel(kernel) {
        // What the kernel writes or allocates: anything else it loads is a device buffer it
        // only reads, whose values do not change while it runs.
        visit_each<Store>(kernel.body, [&](const Store *s) { on_chip.insert(s->name); });
        visit_each<Allocate>(kernel.body, [&](const Allocate *a) {
            on_chip.insert(a->name);
            if (a->memory_type == MemoryType::Register) per_thread.insert(a->name);
        });
    }

private:
    const std::set<std::string> &funcs;
    LoweredKernel &kernel;
    std::set<std::string> on_chip, per_thread;
    std::vector<const For *> serial; // the serial loops around, innermost last
    using IRVisitor::visit;

    void visit(const For *op) override {
        if (op->for_type == ForType::Serial) serial.push_back(op);
        IRVisitor::visit(op);
        if (op->for_type == ForType::Serial) serial.pop_back();
    }

    void visit(const ProducerConsumer *op) override {
        IRVisitor::visit(op);
        if (!op->is_producer || !funcs.count(op->name) || serial.empty()) return;
        const For *loop = serial.back();
        std::set<std::string> written;
        visit_each<Store>(loop->body, [&](const Store *s) { written.insert(s->name); });
        visit_each<Load>(op->body, [&](const Load *l) {
            if (!on_chip.count(l->name)) return;
            user_assert(!written.count(l->name))
                << "gpu_pipeline on Func " << op->name << ": its definition reads " << l->name
                << ", which the kernel writes inside the loop " << loop_for_users(loop->name)
                << " that " << op->name << " is staged at, so its next values cannot be loaded "
                << "an iteration ahead. Compute " << l->name << " outside that loop (at a loop "
                << "around it), or do not pipeline " << op->name << ".";
            if (!per_thread.count(l->name)) kernel.pipelined_after_writes.insert(op->name);
        });
    }
};

void pipeline_kernel(LoweredKernel &kernel, const std::map<std::string, LoopLevel> &funcs) {
    std::set<std::string> here;
    for (const std::string &f : kernel.funcs)
        if (funcs.count(f)) here.insert(f);
    if (here.empty()) return;
    Pipeline p(here, kernel.pipelined_after_writes);
    kernel.body = p.mutate(kernel.body);
    for (const std::string &f : here) {
        if (p.done.count(f)) continue;
        // Computed at a serial loop that runs once (and is gone): nothing to load ahead.
        const LoopLevel &at = funcs.at(f);
        bool at_gpu_loop = at.is_root() || at.is_inlined();
        for (const std::string &v : kernel.loop_vars) {
            const LoopNameParts parts = parse_loop_name(v);
            at_gpu_loop = at_gpu_loop || (parts.func == at.func() && parts.var == at.var());
        }
        user_assert(!at_gpu_loop)
            << "gpu_pipeline on Func " << f << ": " << f << " is not staged at a serial loop "
            << "of kernel " << kernel.name << ", so there is no next iteration to load ahead. "
            << "compute_at it inside the block's loops, at a serial loop of its consumer (the "
            << "reduction loop of a matrix product).";
    }
}

std::map<std::string, LoopLevel> register_pipelines(const std::map<std::string, Function> &env) {
    std::map<std::string, LoopLevel> pipelined; // and where each is computed
    for (const auto &[name, f] : env)
        if (f.schedule().gpu_pipeline.stages >= 2 &&
            f.schedule().gpu_pipeline.copy == PipelineCopy::Registers)
            pipelined.emplace(name, f.schedule().compute_level);
    return pipelined;
}

} // namespace

void check_pipelined_reads(std::vector<LoweredKernel> &kernels,
                           const std::map<std::string, Function> &env) {
    std::set<std::string> funcs;
    for (const auto &[name, at] : register_pipelines(env))
        funcs.insert(name);
    if (funcs.empty()) return;
    for (LoweredKernel &k : kernels) {
        CheckReads check(funcs, k);
        k.body.accept(&check);
    }
}

void pipeline_staged_loads(std::vector<LoweredKernel> &kernels,
                           const std::map<std::string, Function> &env) {
    const std::map<std::string, LoopLevel> pipelined = register_pipelines(env);
    if (pipelined.empty()) return;
    std::set<std::string> in_kernels;
    for (LoweredKernel &k : kernels) {
        pipeline_kernel(k, pipelined);
        in_kernels.insert(k.funcs.begin(), k.funcs.end());
    }
    for (const auto &[f, at] : pipelined) {
        user_assert(in_kernels.count(f))
            << "gpu_pipeline on Func " << f << ": " << f << " is not computed in a GPU kernel. "
            << "Pipelining refills a tile staged in shared memory at a serial loop inside a "
            << "kernel's block loops.";
    }
}

} // namespace lowering
} // namespace aicf
