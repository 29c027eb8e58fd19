#include "lowering/ScheduleFunctions.h"

#include "dsl/ir/CSE.h"

#include "dsl/Associative.h"
#include "dsl/Names.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"
#include "lowering/BuildStage.h"
#include "lowering/FuncPlacement.h"
#include "lowering/Inline.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <sstream>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

bool is_output(const Function &f, const std::vector<Function> &outputs) {
    for (const Function &o : outputs)
        if (o.same_as(f)) return true;
    return false;
}

} // namespace

bool is_inlined(const Function &f, const std::vector<Function> &outputs) {
    if (is_output(f, outputs)) return false;
    const FuncSchedule &s = f.schedule();
    if (s.compute_level_set) {
        user_assert(!s.compute_level.is_inlined() || !f.has_update_definition())
            << "Func " << f.name() << " has update definitions, so it cannot be computed "
            << "inline. Use " << f.name() << ".compute_root() (or compute_at) instead.";
        return s.compute_level.is_inlined();
    }
    return !f.has_update_definition();
}

namespace {

// Wraps the body of loop `loop` (or the whole statement when `loop` is empty) with `wrap`.
class WrapLoopBody : public IRMutator {
public:
    WrapLoopBody(const std::string &loop, std::function<Stmt(const Stmt &)> wrap)
        : loop(loop), wrap(std::move(wrap)) {}
    bool found = false;
    Stmt run(const Stmt &s) {
        if (loop.empty()) {
            found = true;
            return wrap(s);
        }
        return mutate(s);
    }

private:
    std::string loop;
    std::function<Stmt(const Stmt &)> wrap;
    using IRMutator::visit;
    Stmt visit(const For *op) override {
        if (op->name != loop) return IRMutator::visit(op);
        found = true;
        return For::make(op->name, op->min, op->extent, op->for_type, op->gpu_dim, wrap(op->body));
    }
};

// The parallel loops (CPU threads) around loop `target` in a statement, and `target` itself
// when it is one, outermost first.
class ParallelLoopsAround : public IRVisitor {
public:
    explicit ParallelLoopsAround(const std::string &target) : target(target) {}
    std::vector<std::string> found;
    bool first_on_gpu = false; // whether found's first loop runs on GPU blocks or threads

private:
    const std::string &target;
    std::vector<const For *> path;
    using IRVisitor::visit;
    void visit(const For *op) override {
        path.push_back(op);
        if (op->name == target) {
            for (const For *f : path)
                if ((f->for_type == ForType::Parallel || is_gpu_loop(f->for_type)) &&
                    std::find(found.begin(), found.end(), f->name) == found.end()) {
                    if (found.empty()) first_on_gpu = is_gpu_loop(f->for_type);
                    found.push_back(f->name);
                }
        } else {
            IRVisitor::visit(op);
        }
        path.pop_back();
    }
};

// An inlined Func has no loops and no storage of its own: a directive that would change them
// is refused rather than silently dropped. Splits, reorders and renames are allowed (they name
// loops that do not exist, and change nothing).
void check_inlined_schedule(const Function &f) {
    const std::string &name = f.name();
    const char *how =
        f.schedule().compute_level_set
            ? "is computed inline (compute_inline())"
            : "is computed inline (the default for a Func without update definitions)";
    std::string remedy = "Give it a place first, e.g. " + name + ".compute_root() or " + name +
                         ".compute_at(consumer, var), or remove the directive.";
    const StageSchedule &stage = f.definition().schedule;
    for (const Dim &d : stage.dims) {
        if (d.for_type == ForType::Serial) continue;
        const char *directive = d.for_type == ForType::Parallel     ? "parallel"
                                : d.for_type == ForType::Vectorized ? "vectorize"
                                : d.for_type == ForType::Unrolled   ? "unroll"
                                : d.for_type == ForType::GPUBlock   ? "gpu_blocks"
                                : d.for_type == ForType::GPULane    ? "gpu_lanes"
                                                                    : "gpu_threads";
        // The directive as written: vectorize(x, 4) split off the loop x_vi it acts on, and
        // parallel(y, 2) the loop y_task its tasks run.
        std::string loop = d.var;
        std::ostringstream call;
        call << directive << "(" << d.var << ")";
        for (const Split &sp : stage.splits) {
            const std::string &v = sp.old_var;
            const bool lanes = sp.inner == d.var && (d.var == v + "_vi" || d.var == v + "_ui");
            const bool tasks = sp.outer == d.var && sp.inner.rfind(v + "_task", 0) == 0;
            if (sp.kind != Split::SplitVar || (!lanes && !tasks)) continue;
            loop = v;
            call.str("");
            call << directive << "(" << v << ", " << sp.factor << ")";
        }
        user_error << "Func " << name << " " << how << ", so it has no loop " << loop << " for "
                   << call.str() << " to act on. " << remedy;
    }
    user_assert(stage.prefetches.empty())
        << "Func " << name << " " << how << ", so it has no loop " << stage.prefetches[0].at
        << " to prefetch " << stage.prefetches[0].name << " in. " << remedy;
    user_assert(!stage.single_gpu_thread)
        << "Func " << name << " " << how << ", so gpu_single_thread() has nothing to run. "
        << remedy;
    for (const Dim &d : stage.dims) {
        user_assert(!d.never_partition)
            << "Func " << name << " " << how << ", so it has no loop " << d.var
            << " for never_partition(" << d.var << ") to act on. " << remedy;
    }
    user_assert(!stage.never_partition_all)
        << "Func " << name << " " << how << ", so never_partition_all() has no loops to act on. "
        << remedy;
    const FuncSchedule &sched = f.schedule();
    user_assert(!sched.store_level_set || sched.store_level.is_inlined())
        << "Func " << name << " " << how << ", so it has no storage to place at "
        << sched.store_level.to_string() << ". " << remedy;
    user_assert(sched.memory_type == MemoryType::Auto)
        << "Func " << name << " " << how << ", so it has no storage to keep in "
        << to_string(sched.memory_type) << " memory. " << remedy;
    user_assert(sched.region_constraints.empty())
        << "Func " << name << " " << how << ", so it has no region of its own for "
        << (sched.region_constraints.empty() || sched.region_constraints[0].extent.defined()
                ? (sched.region_constraints.empty() || sched.region_constraints[0].min.defined()
                       ? "bound"
                       : "bound_extent")
                : "align_bounds")
        << "(" << (sched.region_constraints.empty() ? "" : sched.region_constraints[0].var)
        << ", ...) to fix. " << remedy;
    user_assert(sched.storage_order.empty() && sched.storage_alignment.empty())
        << "Func " << name << " " << how << ", so it has no storage for "
        << (sched.storage_order.empty() ? "align_storage" : "reorder_storage") << " to lay out. "
        << remedy;
}

// An output is computed into the buffers realize() is given, at the root: placing it elsewhere
// is refused rather than ignored.
void check_output_schedule(const Function &f) {
    const FuncSchedule &sched = f.schedule();
    std::string placed =
        sched.compute_level_set && !sched.compute_level.is_root()
            ? "computed " + std::string(sched.compute_level.is_inlined()
                                            ? "inline"
                                            : "at " + sched.compute_level.to_string())
        : sched.store_level_set && !sched.store_level.is_root()
            ? "stored " + std::string(sched.store_level.is_inlined()
                                          ? "inline"
                                          : "at " + sched.store_level.to_string())
        : sched.memory_type != MemoryType::Auto
            ? "stored in " + std::string(to_string(sched.memory_type)) + " memory"
        : sched.swizzled_storage
            ? "swizzled (swizzle_storage() lays out tiles in GPU shared memory)"
        : !sched.storage_order.empty() && sched.storage_order != f.args()
            ? "stored in another order (reorder_storage(); the buffer given has its own "
              "strides: make it with the layout wanted, or realize a wrapper such as " +
                  f.name() + ".in() and reorder the storage of " + f.name() + ")"
        : !sched.storage_alignment.empty()
            ? "padded (align_storage(); the buffer given has its own strides)"
            : "";
    user_assert(placed.empty()) << "Func " << f.name()
                                << " is an output of the pipeline, so it is computed at the root "
                                << "into the buffer realize() is given; it cannot be " << placed
                                << ". Schedule its "
                                << "loops (split, tile, parallel, ...) instead.";
}

// RDom extents known only at run time (Params, input buffer sizes: nothing else may appear in
// them) must not be negative; a constant one is checked when the RDom is made. A negative
// extent is a mistake, not an empty reduction. Checked once, before anything runs, so no GPU
// kernel has to.
//
// A bound computed in 32 bits (p * q, or the extents rfactor derives from a fuse of two
// variables) must not pass the int32 range on the way, or the loops run over a wrapped count:
// the check that each of its sums, differences and products fits, with the first that does
// not as the detail.
Stmt no_int32_wrap_check(const std::string &var, const Expr &e) {
    std::vector<Expr> conds, wide;
    // A term computed without wrapping; where it is in a select's branch, only when the
    // branch is taken (`path`: the conditions that lead to it).
    auto term = [&](const Expr &w, const std::vector<Expr> &path) {
        Expr fits = And::make(GE::make(w, make_const(Int(64), int64_t(INT32_MIN))),
                              LE::make(w, make_const(Int(64), int64_t(INT32_MAX))));
        for (const Expr &c : path)
            fits = Or::make(Not::make(c), fits);
        fits = simplify(fits);
        if (is_true(fits)) return;
        conds.push_back(fits);
        wide.push_back(w);
    };
    // Inner terms first, so that the detail is where the bound first wraps.
    struct Terms : IRVisitor {
        std::function<void(const Expr &, const std::vector<Expr> &)> term;
        std::vector<Expr> path;
        using IRVisitor::visit;
        void visit(const Add *op) override { IRVisitor::visit(op), wide(op); }
        void visit(const Sub *op) override { IRVisitor::visit(op), wide(op); }
        void visit(const Mul *op) override { IRVisitor::visit(op), wide(op); }
        void wide(const Expr &t) {
            if (t.type() == Int(32)) term(widen_int32(t), path);
        }
        // a << k, a product by 2^k.
        void visit(const Call *op) override {
            IRVisitor::visit(op);
            auto k = op->is_intrinsic(Intrinsic::shift_left) && op->type == Int(32)
                         ? as_const_int(op->args[1])
                         : std::nullopt;
            if (k && *k >= 0 && *k < 32)
                term(Mul::make(widen_int32(op->args[0]), make_const(Int(64), int64_t(1) << *k)),
                     path);
        }
        void visit(const Select *op) override {
            op->condition.accept(this);
            path.push_back(op->condition);
            op->true_value.accept(this);
            path.back() = Not::make(op->condition);
            op->false_value.accept(this);
            path.pop_back();
        }
    } terms;
    terms.term = term;
    e.accept(&terms);
    if (conds.empty()) return Stmt();
    Expr all = conds[0], first_past = make_zero(Int(64));
    for (size_t i = conds.size(); i-- > 0;) {
        if (i > 0) all = And::make(all, conds[i]);
        first_past = Select::make(conds[i], first_past, wide[i]);
    }
    std::ostringstream text;
    text << var << '\x1f' << e;
    return AssertStmt::make(
        all, Call::make(Int(32), Intrinsic::runtime_error,
                        {make_const(Int(32), int64_t(RuntimeErrorKind::RDomBoundWraps)),
                         StringImm::make(text.str()), first_past},
                        Call::Intrinsic));
}

std::vector<Stmt> rdom_extent_checks(const std::vector<std::string> &order,
                                     const std::map<std::string, Function> &env) {
    std::vector<Stmt> checks;
    std::set<std::string> seen;
    for (const std::string &name : order) {
        const Function &f = env.at(name);
        for (int st = 1; st < f.stages(); st++) {
            const ReductionDomain &rdom = f.stage(st).rdom;
            if (!rdom.defined()) continue;
            for (const ReductionVariable &rv : rdom.domain()) {
                if ((is_const(rv.extent) && is_const(rv.min)) || !seen.insert(rv.var).second)
                    continue;
                for (const Expr &bound : {rv.min, rv.extent}) {
                    Stmt c = no_int32_wrap_check(rv.var, bound);
                    if (c.defined()) checks.push_back(c);
                }
                const Expr min = widen_int32(rv.min), extent = widen_int32(rv.extent);
                // Named with the stage that first uses it and the extent as written.
                std::ostringstream where;
                where << rv.var << '\x1f' << stage_for_users(name, st) << '\x1f' << rv.extent;
                Expr msg =
                    Call::make(Int(32), Intrinsic::runtime_error,
                               {make_const(Int(32), int64_t(RuntimeErrorKind::RDomExtentNegative)),
                                StringImm::make(where.str()), cast(Int(64), extent)},
                               Call::Intrinsic);
                checks.push_back(AssertStmt::make(GE::make(extent, make_zero(extent.type())), msg));
                // Its loop runs to min + extent, an int32.
                Expr end = Add::make(cast(Int(64), min), cast(Int(64), extent));
                checks.push_back(AssertStmt::make(
                    LE::make(end, make_const(Int(64), int64_t(INT32_MAX))),
                    Call::make(Int(32), Intrinsic::runtime_error,
                               {make_const(Int(32), int64_t(RuntimeErrorKind::RDomEndTooLarge)),
                                StringImm::make(rv.var), cast(Int(64), min), cast(Int(64), extent)},
                               Call::Intrinsic)));
            }
        }
    }
    return checks;
}

} // namespace

Stmt schedule_functions(const std::vector<Function> &outputs, const std::vector<std::string> &order,
                        const std::map<std::string, Function> &env) {
    for (const std::string &name : order) {
        const Function &f = env.at(name);
        if (is_inlined(f, outputs)) check_inlined_schedule(f);
        if (is_output(f, outputs)) check_output_schedule(f);
    }
    // From the last Func to the first: each is placed around or inside what reads it, and the
    // outputs (each at the root, into its own buffer) go in the same order, so an output that
    // another output (or a Func an output reads) reads is computed before it, whatever the
    // order in which the pipeline lists them.
    Stmt s;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const Function &f = env.at(*it);
        if (is_output(f, outputs)) {
            s = Block::make(build_produce(f), s);
            continue;
        }
        if (is_inlined(f, outputs)) continue;
        const std::set<std::string> uses_of_f = names_that_use(f, outputs, env);
        const FuncSchedule &sched = f.schedule();
        LoopLevel compute = sched.compute_level_set ? sched.compute_level : LoopLevel::root();
        LoopLevel store = sched.store_level_set ? sched.store_level : compute;
        user_assert(!store.is_inlined())
            << "Func " << f.name() << " is stored inline but computed at " << compute.to_string()
            << "; store it at the root or at an enclosing loop.";

        std::string compute_loop, store_loop;
        const bool innermost = !sched.compute_level_set && sched.innermost_by_default;
        if (innermost) compute_loop = store_loop = innermost_loop_around_uses(s, uses_of_f);
        for (const auto &[level, loop] :
             {std::pair<const LoopLevel *, std::string *>{&compute, &compute_loop},
              {&store, &store_loop}}) {
            if (level->is_root() || (innermost && !sched.store_level_set)) continue;
            user_assert(level->defined())
                << "Func " << f.name() << " is " << (level == &compute ? "computed" : "stored")
                << " at a LoopLevel that was never set: a LoopLevel made with LoopLevel() "
                << "names no loop until LoopLevel::set gives it one (as a generator's schedule() "
                << "does). Set it before realizing, or schedule " << f.name()
                << " at a loop, at the root or inline.";
            *loop = find_level_loop(s, *level);
            user_assert(!loop->empty())
                << "Func " << f.name() << " is scheduled at " << level->to_string()
                << ", but there is no such loop where " << f.name()
                << " is used. The loops that could hold it are:\n"
                << describe_valid_levels(uses_of_f, s);
        }

        Region region;
        for (const std::string &a : f.args()) {
            region.emplace_back(Variable::make(Int(32), realized_min_name(f.name(), a)),
                                Variable::make(Int(32), realized_extent_name(f.name(), a)));
        }
        Stmt produce = build_produce(f);
        auto produce_consume = [&](const Stmt &body) {
            return Block::make(produce, ProducerConsumer::make_consume(f.name(), body));
        };
        auto realize = [&](const Stmt &body) {
            return Realize::make(f.name(), f.output_types(), sched.memory_type, region, body);
        };
        if (compute_loop == store_loop) {
            s = WrapLoopBody(compute_loop, [&](const Stmt &b) {
                    return realize(produce_consume(b));
                }).run(s);
        } else {
            // Storage outside, computation inside: the compute loop must be within the store loop.
            bool nested = false;
            std::vector<std::string> parallel;
            bool on_gpu = false;
            WrapLoopBody outer(store_loop, [&](const Stmt &b) {
                ParallelLoopsAround around(compute_loop);
                b.accept(&around);
                parallel = around.found;
                on_gpu = around.first_on_gpu;
                WrapLoopBody inner(compute_loop, produce_consume);
                Stmt r = inner.run(b);
                nested = inner.found;
                return realize(r);
            });
            s = outer.run(s);
            user_assert(nested) << "Func " << f.name() << " is stored at " << store.to_string()
                                << " and computed at " << compute.to_string()
                                << ", but the store level must enclose the compute level.";
            // The iterations of a parallel loop (or GPU blocks or threads) between the two
            // run at once, each computing its region into the one allocation. Where the
            // regions meet, a pure definition writes the same values twice; updates would be
            // applied twice.
            user_assert(parallel.empty() || !f.has_update_definition())
                << "Func " << f.name() << " is stored at " << store.to_string()
                << " and computed at " << compute.to_string() << ", inside the "
                << (on_gpu ? "GPU" : "parallel") << " loop " << loop_for_users(parallel.front())
                << ": its " << (on_gpu ? "blocks or threads" : "threads")
                << " would compute into one allocation at once, and where their "
                << "regions meet, each would apply " << f.name()
                << "'s updates to the same points. Store it at that loop or inside it "
                << "(store_at), "
                << (on_gpu ? "or compute it outside the kernel."
                           : "compute it outside it, or make the loop serial.");
        }
        check_uses_enclosed(f, uses_of_f, s, compute_loop.empty() ? "root" : compute_loop, env);
    }

    std::vector<Function> inlined;
    for (const std::string &name : order)
        if (is_inlined(env.at(name), outputs)) inlined.push_back(env.at(name));
    s = inline_functions(s, inlined);
    return Block::make(Block::make(rdom_extent_checks(order, env)), s);
}

} // namespace lowering
} // namespace aicf
