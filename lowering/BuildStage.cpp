#include "lowering/BuildStage.h"

#include "dsl/Associative.h"
#include "dsl/Names.h"
#include "dsl/base/Error.h"
#include "dsl/ir/CSE.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"
#include "lowering/Inline.h"

#include <functional>
#include <optional>
#include <set>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// Resolves TailStrategy::Auto: pure stages may recompute points (ShiftInwards), update
// stages may not, and reduction variables must not run past their domain. Nor may two GPU
// threads compute one point: each thread of an outer loop on threads computes a run of
// points, and shifted inwards the last run would overlap its neighbour's (a race in shared
// or device memory; a register tile is each thread's own).
TailStrategy resolve_tail(TailStrategy t, bool is_rvar, int stage, bool runs_of_threads) {
    if (t != TailStrategy::Auto) return t;
    if (is_rvar || stage > 0 || runs_of_threads) return TailStrategy::GuardWithIf;
    return TailStrategy::ShiftInwards;
}

// Whether `var`, or a loop the stage's splits and fuses from index `from` on make of it, is one
// of `loops`.
bool derived_from(const Definition &d, size_t from, const std::string &var,
                  const std::set<std::string> &loops) {
    std::set<std::string> derived{var};
    for (size_t i = from; i < d.schedule.splits.size(); i++) {
        const Split &sp = d.schedule.splits[i];
        if (sp.kind == Split::SplitVar && derived.count(sp.old_var)) {
            derived.insert(sp.outer);
            derived.insert(sp.inner);
        } else if (sp.kind == Split::FuseVars &&
                   (derived.count(sp.inner) || derived.count(sp.outer))) {
            derived.insert(sp.old_var);
        } else if (sp.kind == Split::RenameVar && derived.count(sp.old_var)) {
            derived.insert(sp.outer);
        }
    }
    for (const std::string &n : derived)
        if (loops.count(n)) return true;
    return false;
}

// Names for the variables a stage's splits create. A split may reuse a name
// (split(x, x, xi)), so each binding of a name is a version: the versions that remain loops
// keep the user's names (so loop levels find them), earlier ones get "x.v<k>". Versions are
// numbered in the order the splits bind them, on both passes over the splits.
class VarVersions {
public:
    VarVersions(const Function &f, const Definition &d) {
        std::map<std::string, int> current;
        int next = 0;
        auto bind = [&](const std::string &user) {
            users.push_back(user);
            current[user] = next++;
        };
        for (const std::string &a : f.args())
            bind(a);
        if (d.rdom.defined())
            for (const ReductionVariable &rv : d.rdom.domain())
                bind(rv.var);
        for (const Split &sp : d.schedule.splits) {
            if (sp.kind == Split::FuseVars) {
                bind(sp.old_var);
            } else {
                bind(sp.outer);
                if (sp.kind == Split::SplitVar) bind(sp.inner);
            }
        }
        for (const auto &kv : current)
            final_ids.insert(kv.second);
    }
    std::string name(int id) const {
        return final_ids.count(id) ? users[id] : var_version_name(users[id], id);
    }

private:
    std::vector<std::string> users;
    std::set<int> final_ids;
};

// Whether e (undefined: no) reads the Func `name`. Each shared subexpression once: a
// predicate that uses a step twice is a tree exponentially larger than its graph.
bool reads_func(const Expr &e, const std::string &name) {
    bool found = false;
    if (e.defined()) {
        visit_each_distinct<Call>(e, [&](const Call *c) {
            found = found || (c->call_type == Call::Func && c->name == name);
        });
    }
    return found;
}

void check_self_dependent_update(const Function &f, int stage, const Definition &d);
std::vector<Expr> atomic_values(const Function &f, int stage, const std::vector<Expr> &args,
                                const std::vector<Expr> &values);

// The loops of one stage around its Provide. Each split, fuse or rename defines the
// variables it replaces with a LetStmt inside all the loops, so the Provide is written in the
// original variables.

Stmt build_stage(const Function &f, int stage) {
    const Definition &d = f.stage(stage);
    VarVersions versions(f, d);
    std::map<std::string, int> current; // user name -> version it refers to now
    int next = 0;
    auto bind = [&](const std::string &user) { return current[user] = next++; };
    auto var_of = [&](int id) {
        return Variable::make(Int(32), loop_name(f.name(), stage, versions.name(id)));
    };
    struct LoopBounds {
        Expr min, extent;
        bool is_rvar = false;
    };
    std::map<int, LoopBounds> bounds;
    for (const std::string &a : f.args()) {
        bounds[bind(a)] = {Variable::make(Int(32), loop_min_name(f.name(), stage, a)),
                           Variable::make(Int(32), loop_extent_name(f.name(), stage, a))};
    }
    if (d.rdom.defined()) {
        for (const ReductionVariable &rv : d.rdom.domain())
            bounds[bind(rv.var)] = {rv.min, rv.extent, true};
    }
    std::set<std::string> thread_loops;       // the stage's loops on GPU threads or lanes
    std::set<std::string> plain_thread_loops; // on threads, not lanes (which need constants)
    std::set<std::string> gpu_loops;          // and on any GPU dimension, blocks included
    for (const Dim &dim : d.schedule.dims) {
        if (dim.for_type == ForType::GPUThread) plain_thread_loops.insert(dim.var);
        if (dim.for_type == ForType::GPUThread || dim.for_type == ForType::GPULane)
            thread_loops.insert(dim.var);
        if (is_gpu_loop(dim.for_type)) gpu_loops.insert(dim.var);
    }
    std::map<std::string, Expr> loop_vars; // the original variables, for the Provide
    for (const auto &kv : current)
        loop_vars[kv.first] = var_of(kv.second);

    std::vector<std::pair<int, Expr>> lets; // in split order
    std::vector<Expr> guards;
    std::vector<Stmt> checks; // split factors known only at run time must be positive
    for (const Split &sp : d.schedule.splits) {
        if (sp.kind == Split::SplitVar) {
            int old_id = current.at(sp.old_var);
            LoopBounds old = bounds.at(old_id);
            int outer_id = bind(sp.outer), inner_id = bind(sp.inner);
            Expr factor = sp.factor;
            if (!is_const(factor)) {
                Expr msg = Call::make(
                    Int(32), Intrinsic::runtime_error,
                    {make_const(Int(32), int64_t(RuntimeErrorKind::SplitFactorNotPositive)),
                     StringImm::make(loop_for_users(loop_name(f.name(), stage, sp.old_var))),
                     cast(Int(64), factor)},
                    Call::Intrinsic);
                checks.push_back(AssertStmt::make(GT::make(factor, make_zero(Int(32))), msg));
            }
            // ceil(extent / factor), without the overflow of (extent + factor - 1) / factor when
            // the factor is near the int32 limit (division is Euclidean: an empty loop gets 0).
            Expr outer_extent = Add::make(
                Div::make(Sub::make(old.extent, make_one(Int(32))), factor), make_one(Int(32)));
            bounds[outer_id] = {make_zero(Int(32)), outer_extent, old.is_rvar};
            Expr base = Mul::make(var_of(outer_id), factor);
            const MemoryType mt = f.schedule().memory_type;
            // (Each thread keeps its own copy of a Func in registers or on its stack.)
            const bool shared_by_threads = mt != MemoryType::Register && mt != MemoryType::Stack;
            // The outer loop on threads: the last thread's run shifted inwards would overlap
            // its neighbour's. So too where the outer loop reaches the threads through later
            // splits, fuses or renames, for a Func computed at a loop (inside a kernel: in the
            // block's shared memory, where two threads storing one point race); a Func
            // computed at the root (in device memory, an output) keeps its last run shifted
            // inwards, the same values stored again.
            const size_t later = size_t(&sp - d.schedule.splits.data()) + 1;
            const bool runs_of_threads =
                shared_by_threads &&
                (thread_loops.count(sp.outer) || (!f.schedule().compute_level.is_root() &&
                                                  !f.schedule().compute_level.is_inlined() &&
                                                  derived_from(d, later, sp.outer, thread_loops)));
            // The inner loop (or loops split from it) on threads and the outer one serial: a
            // tile shifted inwards would have other threads of the block store points the
            // tile before stored, with no barrier between (a race in shared memory).
            const bool tiles_of_threads = shared_by_threads &&
                                          derived_from(d, later, sp.inner, thread_loops) &&
                                          !derived_from(d, later, sp.outer, gpu_loops);
            const TailStrategy tail =
                resolve_tail(sp.tail, old.is_rvar, stage, runs_of_threads || tiles_of_threads);
            user_assert(!(tiles_of_threads && tail == TailStrategy::ShiftInwards) ||
                        is_const_zero(simplify(Mod::make(old.extent, factor))))
                << "In the schedule of " << stage_for_users(f.name(), stage) << ", the split of "
                << sp.old_var << " shifts its tail inwards (ShiftInwards), its inner loop "
                << sp.inner << " runs on GPU threads and its outer loop " << sp.outer
                << " runs serially: the last tile, shifted back over the one before, would have "
                << "other threads store points of " << f.name() << " already stored, with no "
                << "barrier between them. Split with TailStrategy::GuardWithIf (what Auto does "
                << "here), or by a factor that divides the extent.";
            user_assert(!(runs_of_threads && tail == TailStrategy::ShiftInwards) ||
                        is_const_zero(simplify(Mod::make(old.extent, factor))))
                << "In the schedule of " << stage_for_users(f.name(), stage) << ", the split of "
                << sp.old_var << " shifts its tail inwards (ShiftInwards), and its outer loop "
                << sp.outer
                << " runs on GPU threads (or loops split, fused or renamed from it do): the last "
                << "thread's run would be shifted back over its "
                << "neighbour's, and two threads would write the same points of " << f.name()
                << ". Split with TailStrategy::GuardWithIf (what Auto does here), or by a "
                << "factor that divides the extent.";
            // A fused loop rounded up: the points past its end are clamped onto its last row
            // (see the fuse below), so on threads two of them would store one point in the same
            // round, a race in shared memory.
            bool fused = false;
            for (size_t i = 0; i + 1 < later; i++) {
                const Split &before = d.schedule.splits[i];
                fused = fused || (before.kind == Split::FuseVars && before.old_var == sp.old_var);
            }
            user_assert(!(fused && tail == TailStrategy::RoundUp && shared_by_threads &&
                          (derived_from(d, later, sp.inner, thread_loops) ||
                           derived_from(d, later, sp.outer, thread_loops))) ||
                        is_const_zero(simplify(Mod::make(old.extent, factor))))
                << "In the schedule of " << stage_for_users(f.name(), stage) << ", the split of "
                << sp.old_var << " (a fused loop) rounds up its tail (RoundUp), and a loop split "
                << "from it runs on GPU threads: the points past the fused loop's end would be "
                << "clamped onto its last row, and two threads would store the same points of "
                << f.name() << " in one round. Split with TailStrategy::GuardWithIf, or by a "
                << "factor that divides the fused extent.";
            Expr inner_extent = factor;
            // The outer loop's variable is defined around the inner loop where both stay loops
            // (no later split, fuse or rename turns either into a let inside every loop) and
            // the outer one is outside the inner one.
            auto stays_loop = [&](const std::string &v) {
                for (size_t i = later; i < d.schedule.splits.size(); i++) {
                    const Split &next = d.schedule.splits[i];
                    if (next.kind == Split::FuseVars ? (next.inner == v || next.outer == v)
                                                     : next.old_var == v)
                        return false;
                }
                return true;
            };
            auto loop_at = [&](const std::string &v) {
                for (size_t i = 0; i < d.schedule.dims.size(); i++)
                    if (d.schedule.dims[i].var == v) return int(i);
                return -1;
            };
            if (tail == TailStrategy::GuardWithIf && !is_const(factor) && stays_loop(sp.outer) &&
                stays_loop(sp.inner) && loop_at(sp.outer) > loop_at(sp.inner) &&
                loop_at(sp.inner) >= 0) {
                // A factor known only at run time cannot make a constant-extent loop, so the
                // last tile may as well stop at the end: a factor far beyond the extent then
                // costs nothing, and no index runs past the end. (Elsewhere the guard alone
                // keeps the tile's points in the extent.)
                inner_extent = Min::make(factor, Sub::make(old.extent, base));
            }
            bounds[inner_id] = {make_zero(Int(32)), inner_extent, old.is_rvar};
            if (tail == TailStrategy::ShiftInwards)
                base = Min::make(base, Sub::make(old.extent, factor));
            // A factor that provably divides the extent (an RDom over steps * 16 split by 16)
            // leaves no tail to guard.
            const bool divides =
                is_const_zero(simplify(Mod::make(old.extent, factor))) && !is_const_zero(factor);
            if (tail == TailStrategy::GuardWithIf && !divides) {
                // In terms of the old variable, so analyses see which range it guards.
                guards.push_back(LT::make(var_of(old_id), Add::make(old.min, old.extent)));
                // The guarded tile's points past the end must still be int32s, or the guard
                // compares wrapped values (an RDom of 2^31 - 1 points split by 1000).
                if (old.is_rvar && is_const(factor)) {
                    Expr i64_factor = cast(Int(64), factor);
                    Expr last =
                        Add::make(cast(Int(64), old.min),
                                  Sub::make(Mul::make(cast(Int(64), outer_extent), i64_factor),
                                            make_one(Int(64))));
                    Expr fits = simplify(LE::make(last, make_const(Int(64), int64_t(INT32_MAX))));
                    if (!is_true(fits)) {
                        checks.push_back(AssertStmt::make(
                            fits,
                            Call::make(
                                Int(32), Intrinsic::runtime_error,
                                {make_const(Int(32), int64_t(RuntimeErrorKind::RDomEndTooLarge)),
                                 StringImm::make(
                                     loop_for_users(loop_name(f.name(), stage, sp.old_var))),
                                 cast(Int(64), old.min), cast(Int(64), old.extent), i64_factor},
                                Call::Intrinsic)));
                    }
                }
            }
            lets.emplace_back(old_id, Add::make(Add::make(old.min, base), var_of(inner_id)));
        } else if (sp.kind == Split::FuseVars) {
            int inner_id = current.at(sp.inner), outer_id = current.at(sp.outer);
            LoopBounds in = bounds.at(inner_id), out = bounds.at(outer_id);
            int fused_id = bind(sp.old_var);
            // On GPU threads, the fused index is divided by the inner extent in every thread:
            // where that extent varies (a reduction's last, shorter step), it is a division at
            // run time, and the index of each thread is not a known function of the thread
            // (the rounds of a staged tile then need a barrier each). Such a loop fuses over
            // the extent's constant bound instead, once bounds inference knows it (see
            // bound_fused_thread_loops), the points past the extent guarded.
            const size_t later = size_t(&sp - d.schedule.splits.data()) + 1;
            Expr divisor = in.extent;
            if (!is_const(in.extent) && derived_from(d, later, sp.old_var, plain_thread_loops)) {
                divisor = Call::make(Int(32), Intrinsic::fused_extent_bound, {in.extent},
                                     Call::PureIntrinsic);
                guards.push_back(LT::make(Mod::make(var_of(fused_id), divisor), in.extent));
            }
            // The loop runs only when both counts are positive: two negative counts (the
            // splits of empty regions) would otherwise multiply into iterations. Bounds
            // inference relies on it to bound the quotient and remainder below (see
            // FindBox::enter_fused_loop).
            Expr zero = make_zero(Int(32));
            // The fused loop counts the product of the extents in 32 bits: two loops of more
            // than 46,340 iterations each would wrap it (and run nothing, or a wrong count).
            Expr wide = Mul::make(widen_int32(Max::make(divisor, zero)),
                                  widen_int32(Max::make(out.extent, zero)));
            Expr fits = simplify(LE::make(wide, make_const(Int(64), int64_t(INT32_MAX))));
            const std::optional<int64_t> iterations = as_const_int(simplify(wide));
            if (iterations && *iterations > INT32_MAX) {
                user_error << "In the schedule of " << stage_for_users(f.name(), stage) << ", fuse("
                           << sp.inner << ", " << sp.outer << ", " << sp.old_var
                           << ") makes a loop of " << *iterations
                           << " iterations, more than the 2^31 - 1 a 32-bit loop counts. Fuse "
                           << "loops whose extents multiply to less (split one first and fuse "
                           << "a part of it), or keep them apart.";
            } else if (!is_true(fits)) {
                checks.push_back(AssertStmt::make(
                    fits,
                    Call::make(
                        Int(32), Intrinsic::runtime_error,
                        {make_const(Int(32), int64_t(RuntimeErrorKind::FusedLoopTooLong)),
                         StringImm::make(loop_for_users(loop_name(f.name(), stage, sp.old_var))),
                         cast(Int(64), divisor), cast(Int(64), out.extent)},
                        Call::Intrinsic)));
            }
            bounds[fused_id] = {
                zero, Mul::make(Max::make(divisor, zero), Max::make(out.extent, zero)), in.is_rvar};
            // The clamps change no value (the fused index stays below the product of the
            // extents); they tell interval analysis the range of each part, which it could
            // not otherwise derive from a division by a symbolic extent (bounds inference
            // also replaces the quotient and remainder themselves). The clamp to the
            // first value is outermost: interval analysis bounds the extent apart from the
            // min it moves with, and may find the last value below the first (an extent
            // that is a difference of a region's ends, at its uncorrelated worst); the part
            // still starts at its first value.
            Expr one = make_one(Int(32));
            Expr fused = var_of(fused_id);
            auto clamp_to = [&](const Expr &offset, const LoopBounds &b) {
                Expr last = Sub::make(Add::make(b.min, b.extent), one);
                return Max::make(Min::make(Add::make(b.min, offset), last), b.min);
            };
            lets.emplace_back(inner_id, clamp_to(Mod::make(fused, divisor), in));
            lets.emplace_back(outer_id, clamp_to(Div::make(fused, divisor), out));
        } else {
            int old_id = current.at(sp.old_var);
            int new_id = bind(sp.outer);
            bounds[new_id] = bounds.at(old_id);
            lets.emplace_back(old_id, var_of(new_id));
        }
    }

    std::vector<Expr> values, args;
    for (const Expr &v : d.values)
        values.push_back(substitute(loop_vars, share_repeated_subexpressions(v)));
    for (const Expr &a : d.args)
        args.push_back(substitute(loop_vars, share_repeated_subexpressions(a)));
    if (d.schedule.atomic) values = atomic_values(f, stage, args, values);
    Stmt body = Provide::make(f.name(), values, args);
    if (d.rdom.defined() && d.rdom.predicate().defined()) {
        // With repeated subexpressions let-bound, as the values are: a predicate that uses a
        // value twice per step is a tree exponentially larger than its graph.
        // Each where() (each operand of an &&) tests inside the ones before it, so that one
        // may read what only the points an earlier one lets through may (rfactor puts its
        // split's tail guard first).
        const std::vector<Expr> terms = conjuncts(d.rdom.predicate());
        for (size_t i = terms.size(); i-- > 0;) {
            Expr c = substitute(loop_vars, share_repeated_subexpressions(terms[i]));
            if (!reads_func(c, f.name())) {
                body = IfThenElse::make(c, body);
                continue;
            }
            // A test that reads the Func itself is taken once, before any element is written:
            // vectorized, the guard becomes a predicate on each store, and element 1's would
            // otherwise see element 0 already updated.
            const std::string name = loop_name(f.name(), stage, "where" + std::to_string(i));
            body = LetStmt::make(name, c, IfThenElse::make(Variable::make(c.type(), name), body));
        }
    }
    // The guards of the splits around the predicate: it may read what exists only for the
    // points they let through (where(in(r.x) > 0) with r.x split GuardWithIf).
    Expr condition;
    for (const Expr &g : guards)
        condition = condition.defined() ? And::make(condition, g) : g;
    if (condition.defined()) body = IfThenElse::make(condition, body);
    for (const auto &let : lets) {
        body =
            LetStmt::make(loop_name(f.name(), stage, versions.name(let.first)), let.second, body);
    }

    // Each prefetch() starts as a request at the top of its loop's body; inject_prefetches
    // replaces it once bounds are known.
    auto dim_index = [&](const std::string &var) {
        for (size_t i = 0; i < d.schedule.dims.size(); i++)
            if (d.schedule.dims[i].var == var) return int(i);
        return -1;
    };
    for (const Prefetch &p : d.schedule.prefetches) {
        for (const std::string &v : {p.at, p.from}) {
            if (dim_index(v) >= 0) continue;
            std::string loops;
            for (auto it = d.schedule.dims.rbegin(); it != d.schedule.dims.rend(); ++it)
                loops += (loops.empty() ? "" : ", ") + it->var;
            user_error << "In the schedule of " << stage_for_users(f.name(), stage)
                       << ", the prefetch of " << p.name << " names the loop " << v
                       << ", which a later directive replaced. The loops are, "
                       << "outermost first: " << loops << ".";
        }
        user_assert(dim_index(p.from) >= dim_index(p.at))
            << "In the schedule of " << stage_for_users(f.name(), stage) << ", the prefetch of "
            << p.name << " at " << p.at << " looks ahead in " << p.from
            << ", which a later reorder put inside " << p.at << ". It must be " << p.at
            << " or a loop around it.";
    }
    check_self_dependent_update(f, stage, d);
    // Each GPU loop's hardware dimension: within a stage, the innermost block loop runs along
    // x of the grid, the next along y, then z; the same for thread loops in the block.
    int gpu_dims_used[2] = {0, 0}; // block loops, thread loops
    // Reduction loops whose iterations touch disjoint points (the rows of a scan along r.x)
    // may move anywhere: each point still meets the iterations of the other loops in their
    // order. The others, innermost first.
    auto meeting = [&](const std::vector<std::string> &loops) {
        std::vector<std::string> kept;
        for (const std::string &l : loops)
            if (!iterations_touch_disjoint_points(d, l, f.name(), f.args())) kept.push_back(l);
        return kept;
    };
    std::vector<std::string> rvars_now;
    for (const Dim &dim : d.schedule.dims)
        if (dim.is_rvar) rvars_now.push_back(dim.var);
    if (!d.schedule.rvars_before_reorder.empty() &&
        meeting(d.schedule.rvars_before_reorder) != meeting(rvars_now)) {
        // "r.y, r.x to r.x, r.y": the reduction loops, outermost first, before and now.
        const std::vector<std::string> &before = d.schedule.rvars_before_reorder;
        std::string reorder;
        for (auto it = before.rbegin(); it != before.rend(); ++it)
            reorder += (it == before.rbegin() ? "" : ", ") + *it;
        reorder += " to ";
        bool first_now = true;
        for (auto it = d.schedule.dims.rbegin(); it != d.schedule.dims.rend(); ++it) {
            if (!it->is_rvar) continue;
            reorder += (first_now ? "" : ", ") + it->var;
            first_now = false;
        }
        bool across_threads = false;
        for (const Dim &dim : d.schedule.dims)
            across_threads =
                across_threads || (dim.is_rvar && (dim.for_type == ForType::GPUThread ||
                                                   dim.for_type == ForType::GPULane));
        std::optional<AssociativeUpdate> red =
            update_form(d, f.name(), d.args, d.values, domain_outermost_first(d.rdom));
        // An argmax that keeps the index merges the threads' partials by position, so the
        // threads may take any points; but each thread's own serial loops still meet equal
        // candidates in their order, which must be the definition's (the order before the
        // reorder, outermost first).
        bool serial_in_order = true;
        if (red && red->compares()) {
            size_t last = 0;
            bool first = true;
            for (auto it = d.schedule.dims.rbegin(); it != d.schedule.dims.rend(); ++it) {
                if (!it->is_rvar || it->for_type == ForType::GPUThread ||
                    it->for_type == ForType::GPULane)
                    continue;
                // Outermost first, each serial reduction loop must come after the last.
                size_t at = std::find(before.rbegin(), before.rend(), it->var) - before.rbegin();
                serial_in_order = serial_in_order && at < before.size() && (first || at > last);
                last = at, first = false;
            }
        }
        user_assert(!red || (!red->order_dependent() && serial_in_order))
            << "In the schedule of " << stage_for_users(f.name(), stage)
            << ", the order of its loops (set by reorder, or by tile, which puts the tiles "
            << "outside the points within them) changes the order of the reduction loops "
            << "(outermost first) from " << reorder
            << ". The update keeps one candidate by comparison "
            << "(argmax-style), and which of equal candidates it keeps depends on the order it "
            << "meets them in. The loops a thread runs serially must stay in their order; "
            << "threads and lanes may take any points only when the update keeps each "
            << "candidate's position in its Tuple (select(better, r.x, index) for every "
            << "variable of the domain). Otherwise each thread must reduce a consecutive run: "
            << "gpu_lanes on the outer loop of split(r, lane, ri, n), or lanes inside a serial "
            << "loop (and for parallel parts, split(r, ro, ri, n) then rfactor(ro, u)).";
        // Integer sums, products, minima and maxima, and bitwise and logical combinations,
        // give the same bits in any order (wrapping arithmetic is associative and
        // commutative).
        bool exact_in_any_order = red && red->kind == AssociativeUpdate::Binary;
        for (const Expr &v : d.values)
            exact_in_any_order = exact_in_any_order && (v.type().is_int() || v.type().is_uint());
        user_assert(across_threads || exact_in_any_order)
            << "In the schedule of " << stage_for_users(f.name(), stage)
            << ", the order of its loops (set by reorder, or by tile, which puts the tiles "
            << "outside the points within them) changes the order of the reduction loops "
            << "(outermost first) from " << reorder
            << ", which changes the order the reduction combines values in (only integer "
            << "sums, products, minima, maxima and bitwise operations may be reordered "
            << "freely). Keep reduction "
            << "variables in their order, use rfactor to reassociate the reduction, or map a "
            << "reduction loop onto gpu_threads or gpu_lanes (a cross-thread reduction, which "
            << "reassociates it).";
    }
    // A lane loop is the x thread loop of its warp: the innermost of the stage's thread loops,
    // over a constant number of lanes.
    std::string inner_thread_loop; // the innermost thread loop of the stage met so far
    auto gpu_dim_of = [&](const Dim &dim, const Expr &extent) {
        if (!is_gpu_loop(dim.for_type)) return GPUDim::None;
        const bool threads = dim.for_type != ForType::GPUBlock;
        int &used = gpu_dims_used[threads];
        const char *kind = threads ? "thread" : "block";
        if (dim.for_type == ForType::GPULane) {
            user_assert(used == 0)
                << "In the schedule of " << stage_for_users(f.name(), stage) << ", the GPU thread "
                << "loop " << inner_thread_loop << " is inside gpu_lanes(" << dim.var
                << "). The lanes of a warp are the innermost threads: make " << dim.var
                << " the innermost GPU loop (reorder), or map it with gpu_threads.";
            // A pure loop's extent is the Func's region, fixed by a bound() or bound_extent()
            // of a constant extent.
            std::map<std::string, Expr> fixed;
            for (const RegionConstraint &c : f.schedule().region_constraints) {
                if (c.extent.defined() && is_const(c.extent))
                    fixed[loop_extent_name(f.name(), stage, c.var)] = c.extent;
            }
            auto lanes = as_const_int(simplify(substitute(fixed, extent)));
            user_assert(lanes && *lanes >= 1 && *lanes <= 32)
                << "In the schedule of " << stage_for_users(f.name(), stage) << ", gpu_lanes("
                << dim.var << ") needs a constant extent from 1 to 32 (the lanes of one warp), "
                << "but the loop runs over " << with_user_loop_names(to_string(simplify(extent)))
                << " iterations. Split it first, e.g. split(" << dim.var << ", " << dim.var << "o, "
                << dim.var << "i, 32) and gpu_lanes(" << dim.var << "i), or fix the extent of "
                << f.name() << " in that dimension with bound().";
        }
        if (threads && inner_thread_loop.empty()) inner_thread_loop = dim.var;
        user_assert(used < 3)
            << "In the schedule of " << stage_for_users(f.name(), stage) << ", the loop " << dim.var
            << " is the fourth loop mapped onto GPU " << kind << "s; a GPU " << kind
            << " index has three dimensions (x, y, z). Fuse loops to map them onto three.";
        return GPUDim(used++);
    };
    for (const Dim &dim : d.schedule.dims) {
        int id = current.at(dim.var);
        std::vector<Stmt> requests;
        for (const Prefetch &p : d.schedule.prefetches) {
            if (p.at != dim.var) continue;
            std::string at = loop_name(f.name(), stage, versions.name(id));
            std::string from = loop_name(f.name(), stage, versions.name(current.at(p.from)));
            requests.push_back(Evaluate::make(
                Call::make(Int(32), Intrinsic::prefetch_request,
                           {StringImm::make(p.name), StringImm::make(at), StringImm::make(from),
                            p.offset, make_const(Int(32), int64_t(p.strategy)),
                            StringImm::make(stage_for_users(f.name(), stage))},
                           Call::Intrinsic)));
        }
        if (!requests.empty()) {
            requests.push_back(body);
            body = Block::make(requests);
        }
        // The lanes of an atomic update's pure loop each make one atomic operation: the loop
        // is unrolled into them.
        ForType for_type = dim.for_type == ForType::GPULane ? ForType::GPUThread : dim.for_type;
        if (for_type == ForType::Vectorized && d.schedule.atomic) for_type = ForType::Unrolled;
        body =
            For::make(loop_name(f.name(), stage, versions.name(id)), bounds.at(id).min,
                      bounds.at(id).extent, for_type, gpu_dim_of(dim, bounds.at(id).extent), body);
    }
    if (d.schedule.single_gpu_thread) {
        for (const Dim &dim : d.schedule.dims) {
            user_assert(!is_gpu_loop(dim.for_type))
                << "In the schedule of " << stage_for_users(f.name(), stage)
                << ", gpu_single_thread() runs the stage as one GPU thread, but its loop "
                << dim.var << " is also mapped onto the GPU (" << to_string(dim.for_type)
                << "). Use one or the other.";
        }
        Expr zero = make_zero(Int(32)), one = make_one(Int(32));
        body = For::make(loop_name(f.name(), stage, single_thread_var(false)), zero, one,
                         ForType::GPUThread, GPUDim::X, body);
        body = For::make(loop_name(f.name(), stage, single_thread_var(true)), zero, one,
                         ForType::GPUBlock, GPUDim::X, body);
    }
    return Block::make(Block::make(checks), body);
}

// An update whose where() reads its own Func (add while the running sum is below 50), or
// whose written point does (f(f(0)) += 1), is no reduction: each step depends on the steps
// before it. Its reduction loops run serially, in the order written; no schedule may combine
// partial results.
void check_self_dependent_update(const Function &f, int stage, const Definition &d) {
    if (!d.rdom.defined()) return;
    std::string what;
    if (reads_func(d.rdom.predicate(), f.name()))
        what = "the where() predicate of its RDom reads " + f.name();
    for (size_t i = 0; i < d.args.size() && what.empty(); i++) {
        if (reads_func(d.args[i], f.name()))
            what = "the point it writes depends on " + f.name() + " (argument " +
                   std::to_string(i) + ", " + to_string(d.args[i]) + ")";
    }
    if (what.empty()) return;
    const std::string where = "In the schedule of " + stage_for_users(f.name(), stage) + ", " +
                              what + ", so each step depends on the steps before it";
    const std::string advice = ": keep its reduction loops serial and in their order (rfactor "
                               "and cross-thread reductions do not apply either).";
    user_assert(!d.schedule.atomic)
        << where << ", and atomic() would let the steps run at once" << advice;
    for (const Dim &dim : d.schedule.dims) {
        user_assert(!dim.is_rvar ||
                    (dim.for_type != ForType::GPUThread && dim.for_type != ForType::GPULane))
            << where << ", but the reduction loop " << dim.var << " runs on GPU "
            << (dim.for_type == ForType::GPULane ? "lanes" : "threads")
            << ", which would combine partial results" << advice;
    }
    // (Set only by a reorder that changed their order.)
    user_assert(d.schedule.rvars_before_reorder.empty())
        << where << ", but a reorder changes the order of its reduction loops" << advice;
}

// The values of an atomic() update: op(current, x) as one atomic_update.
std::vector<Expr> atomic_values(const Function &f, int stage, const std::vector<Expr> &args,
                                const std::vector<Expr> &values) {
    const std::string where = "In the schedule of " + stage_for_users(f.name(), stage);
    std::optional<AssociativeUpdate> red = find_associative_update(f.name(), args, values);
    user_assert(red && red->kind == AssociativeUpdate::Binary && values.size() == 1)
        << where << ", atomic() makes each read-modify-write of " << f.name()
        << " one atomic operation, which exists for " << f.name() << "(p) = " << f.name()
        << "(p) op x with op in +, *, min, max, & | ^ on a single value"
        << (red && values.size() > 1 ? "; a Tuple has no atomic form. " : ". ")
        << "This update is not of that form: keep its reduction loops serial, or use rfactor.";
    Type t = values[0].type();
    user_assert(t.is_scalar() && (((t.is_int() || t.is_uint()) && t.bits >= 8) || t.is_float()))
        << where << ", atomic() updates " << f.name() << " of type " << to_string(t)
        << ", but atomic operations exist for integers of 8 to 64 bits and for floats. "
        << "Accumulate in an integer or float type.";
    for (const Dim &dim : f.stage(stage).schedule.dims) {
        // (A pure loop's lanes update points of their own, one atomic operation each.)
        user_assert(dim.for_type != ForType::Vectorized || !dim.is_rvar)
            << where << ", atomic() updates one point at a time, but the reduction loop " << dim.var
            << " is vectorized, so that its lanes may update one point together. "
            << "Vectorize a pure loop of the update, or rfactor the reduction into vector "
            << "partials first.";
    }
    Expr self;
    visit_each_distinct<Call>(values[0], [&](const Call *c) {
        if (!self.defined() && c->call_type == Call::Func && c->name == f.name()) self = Expr(c);
    });
    AtomicOp op = AtomicOp::Add;
    switch (red->ops[0]) {
    case Combiner::Add:
        op = AtomicOp::Add;
        break;
    case Combiner::Mul:
        op = AtomicOp::Mul;
        break;
    case Combiner::Min:
        op = AtomicOp::Min;
        break;
    case Combiner::Max:
        op = AtomicOp::Max;
        break;
    case Combiner::BitAnd:
        op = AtomicOp::And;
        break;
    case Combiner::BitOr:
        op = AtomicOp::Or;
        break;
    case Combiner::BitXor:
        op = AtomicOp::Xor;
        break;
    case Combiner::And:
    case Combiner::Or:
        internal_error << "atomic && or || of bools"; // refused above: bools are no integers
    }
    return {Call::make(t, Intrinsic::atomic_update,
                       {make_const(Int(32), int64_t(op)), red->x[0], self}, Call::Intrinsic)};
}

} // namespace

Stmt build_produce(const Function &f) {
    std::vector<Stmt> stages;
    for (int s = 0; s < f.stages(); s++)
        stages.push_back(build_stage(f, s));
    return ProducerConsumer::make_produce(f.name(), Block::make(stages));
}

} // namespace lowering
} // namespace aicf
