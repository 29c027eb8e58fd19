#include "dsl/Stage.h"

#include "dsl/Names.h"

#include "dsl/Associative.h"
#include "dsl/Func.h"
#include "dsl/LoopLimits.h"
#include "dsl/Param.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IREquality.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace aicf {

using namespace ir;

namespace {

std::string join_outermost_first(const std::vector<Dim> &dims) {
    std::string s;
    for (auto it = dims.rbegin(); it != dims.rend(); ++it)
        s += (s.empty() ? "" : ", ") + it->var;
    return s;
}

} // namespace

StageSchedule &Stage::schedule() {
    return func.stage(stage).schedule;
}
const Definition &Stage::definition() const {
    return func.stage(stage);
}

std::string Stage::name() const {
    return stage_for_users(func.name(), stage);
}
const std::string &Stage::func_name() const {
    return func.name();
}

std::vector<std::string> Stage::loop_names() const {
    std::vector<std::string> names;
    const auto &dims = definition().schedule.dims;
    for (auto it = dims.rbegin(); it != dims.rend(); ++it)
        names.push_back(it->var);
    return names;
}

size_t Stage::find_dim(const VarOrRVar &v, const char *directive) {
    auto &dims = schedule().dims;
    for (size_t i = 0; i < dims.size(); i++)
        if (dims[i].var == v.name()) return i;
    user_assert(func.has_pure_definition())
        << "In the schedule of " << name() << ", " << directive << " names the loop " << v.name()
        << ", but Func " << func.name() << " has no definition yet, so it has no loops. Define "
        << "it first, e.g. " << func.name() << "(" << v.name() << ") = ...";
    // (An update that names no variable of an RDom does not run over it: a where() on the
    // RDom alone does not make it the update's.)
    user_assert(!(v.is_rvar() && stage > 0 && !func.stage(stage).rdom.defined()))
        << "In the schedule of " << name() << ", " << directive << " names the reduction loop "
        << v.name() << ", but " << name() << " uses no reduction variable, so it runs once at "
        << "each point and has no reduction loops"
        << (dims.empty() ? "" : "; its loops are, outermost first: " + join_outermost_first(dims))
        << ". An update runs over the RDom whose variables its left or right side names (a "
        << "where() on an RDom it does not name adds nothing).";
    user_error << "In the schedule of " << name() << ", " << directive << " names the loop "
               << v.name() << ", but " << name() << " has no such loop. "
               << (dims.empty()
                       ? "It has no loops."
                       : "Its loops are, outermost first: " + join_outermost_first(dims) + ".");
    return 0;
}

void Stage::check_fresh(const VarOrRVar &v, const char *directive) {
    for (const Dim &d : schedule().dims) {
        user_assert(d.var != v.name())
            << "In the schedule of " << name() << ", " << directive << " would create a loop "
            << v.name() << ", but " << name() << " already has a loop of that name. Use a new Var.";
    }
    for (const std::string &a : func.args()) {
        user_assert(a != v.name() || stage != 0)
            << "In the schedule of " << name() << ", " << directive << " would create a loop "
            << v.name() << ", which is already a variable of " << func.name() << ". Use a new Var.";
    }
}

Stage &Stage::split(const VarOrRVar &old, const VarOrRVar &outer, const VarOrRVar &inner,
                    const Expr &factor, TailStrategy tail) {
    size_t i = find_dim(old, "split");
    if (outer.name() != old.name()) check_fresh(outer, "split");
    if (inner.name() != old.name()) check_fresh(inner, "split");
    user_assert(outer.name() != inner.name())
        << "In the schedule of " << name() << ", split of " << old.name()
        << " gives the outer and the inner loop the same name " << inner.name() << ".";
    user_assert(factor.defined() && factor.type().is_int_or_uint() && factor.type().is_scalar())
        << "In the schedule of " << name() << ", the split factor of " << old.name()
        << " must be an integer.";
    if (auto c = as_const_int(simplify(factor))) {
        user_assert(*c > 0) << "In the schedule of " << name() << ", " << old.name()
                            << " is split by " << *c << "; a split factor must be positive.";
    }
    detail::check_schedule_size(factor, "In the schedule of " + name() + ", the split factor of " +
                                            old.name());
    Dim d = schedule().dims[i];
    if (d.is_rvar) {
        user_assert(tail == TailStrategy::Auto || tail == TailStrategy::GuardWithIf)
            << "In the schedule of " << name() << ", the reduction variable " << old.name()
            << " is split with a tail strategy that would compute some points twice or past "
            << "the end of the RDom. Reduction variables need TailStrategy::GuardWithIf.";
    }
    if (stage > 0) {
        user_assert(tail != TailStrategy::ShiftInwards)
            << "In the schedule of " << name() << ", ShiftInwards on " << old.name()
            << " would apply some updates twice. Use GuardWithIf (or RoundUp on a loop that "
            << "is not the inner loop of another split).";
        // Rounding up the inner loop of a split, or a fused loop, runs into the points of the
        // next iteration outside it. Outer loops and renamed ones span to the end.
        std::map<std::string, bool> spans_to_end;
        for (const std::string &a : func.args())
            spans_to_end[a] = true;
        for (const Split &sp : schedule().splits) {
            if (sp.kind == Split::SplitVar) {
                spans_to_end[sp.outer] = spans_to_end[sp.old_var];
                spans_to_end[sp.inner] = false;
            } else if (sp.kind == Split::FuseVars) {
                spans_to_end[sp.old_var] = false;
            } else {
                spans_to_end[sp.outer] = spans_to_end[sp.old_var];
            }
        }
        bool original = spans_to_end[old.name()];
        user_assert(tail != TailStrategy::RoundUp || original)
            << "In the schedule of " << name() << ", RoundUp on " << old.name()
            << " would apply some updates twice: " << old.name() << " is the inner loop of an "
            << "earlier split (or a fused loop), so rounding it up overlaps the next iteration "
            << "of the loop around it. Use GuardWithIf.";
    }
    Dim in = d, out = d;
    in.var = inner.name();
    out.var = outer.name();
    out.for_type = ForType::Serial;
    // A loop on GPU blocks or threads keeps its mapping on the outer loop: each block or
    // thread then runs the inner loop (to vectorize or unroll).
    if (is_gpu_loop(d.for_type)) std::swap(in.for_type, out.for_type);
    auto &dims = schedule().dims;
    dims[i] = in;
    dims.insert(dims.begin() + i + 1, out);
    Split s;
    s.kind = Split::SplitVar;
    s.old_var = old.name();
    s.outer = outer.name();
    s.inner = inner.name();
    // Simplified: a constant written as an expression (Expr(4) * 2) is a constant factor.
    s.factor = simplify(ir::cast(Int(32), factor));
    s.tail = tail;
    schedule().splits.push_back(s);
    return *this;
}

Stage &Stage::fuse(const VarOrRVar &inner, const VarOrRVar &outer, const VarOrRVar &fused) {
    size_t i = find_dim(inner, "fuse"), o = find_dim(outer, "fuse");
    auto &dims = schedule().dims;
    user_assert(o == i + 1) << "In the schedule of " << name() << ", fuse(" << inner.name() << ", "
                            << outer.name() << ") needs " << inner.name() << " directly inside "
                            << outer.name()
                            << ". The loops are, outermost first: " << join_outermost_first(dims)
                            << ". Reorder them first.";
    user_assert(dims[i].is_rvar == dims[o].is_rvar)
        << "In the schedule of " << name() << ", fuse(" << inner.name() << ", " << outer.name()
        << ") mixes a reduction loop (" << (dims[i].is_rvar ? inner.name() : outer.name())
        << ") with a pure one (" << (dims[i].is_rvar ? outer.name() : inner.name())
        << "). Fuse two pure loops or two reduction loops.";
    if (fused.name() != inner.name() && fused.name() != outer.name()) check_fresh(fused, "fuse");
    Dim f = dims[i];
    f.var = fused.name();
    f.never_partition = dims[i].never_partition || dims[o].never_partition;
    dims[i] = f;
    dims.erase(dims.begin() + o);
    Split s;
    s.kind = Split::FuseVars;
    s.old_var = fused.name();
    s.outer = outer.name();
    s.inner = inner.name();
    schedule().splits.push_back(s);
    return *this;
}

Stage &Stage::reorder(const std::vector<VarOrRVar> &vars) {
    auto &dims = schedule().dims;
    std::vector<size_t> slots;
    for (const VarOrRVar &v : vars) {
        size_t i = find_dim(v, "reorder");
        user_assert(std::find(slots.begin(), slots.end(), i) == slots.end())
            << "In the schedule of " << name() << ", reorder names " << v.name() << " twice.";
        slots.push_back(i);
    }
    std::vector<Dim> picked;
    for (size_t i : slots)
        picked.push_back(dims[i]);
    std::vector<size_t> sorted = slots;
    std::sort(sorted.begin(), sorted.end());
    std::vector<Dim> result = dims;
    for (size_t k = 0; k < sorted.size(); k++)
        result[sorted[k]] = picked[k];
    // Reduction loops keep their relative order: changing it changes the order in which the
    // reduction combines values, which only a cross-thread reduction may (lowering checks).
    std::vector<std::string> before, after;
    for (const Dim &d : dims)
        if (d.is_rvar) before.push_back(d.var);
    for (const Dim &d : result)
        if (d.is_rvar) after.push_back(d.var);
    if (before != after && schedule().rvars_before_reorder.empty())
        schedule().rvars_before_reorder = before;
    dims = result;
    return *this;
}

Stage &Stage::tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &xo, const VarOrRVar &yo,
                   const VarOrRVar &xi, const VarOrRVar &yi, const Expr &xfactor,
                   const Expr &yfactor, TailStrategy tail) {
    return all_or_nothing([&] {
        split(x, xo, xi, xfactor, tail);
        split(y, yo, yi, yfactor, tail);
        reorder({xi, yi, xo, yo});
    });
}

Stage &Stage::tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &xi, const VarOrRVar &yi,
                   const Expr &xfactor, const Expr &yfactor, TailStrategy tail) {
    return tile(x, y, x, y, xi, yi, xfactor, yfactor, tail);
}

Stage &Stage::rename(const VarOrRVar &old, const VarOrRVar &new_name) {
    size_t i = find_dim(old, "rename");
    check_fresh(new_name, "rename");
    schedule().dims[i].var = new_name.name();
    Split s;
    s.kind = Split::RenameVar;
    s.old_var = old.name();
    s.outer = new_name.name();
    schedule().splits.push_back(s);
    return *this;
}

Stage &Stage::all_or_nothing(const std::function<void()> &steps) {
    StageSchedule saved = schedule();
    try {
        steps();
    } catch (...) {
        schedule() = saved;
        throw;
    }
    return *this;
}

namespace {

// The variables a merge rfactor wrote iterates over, outermost first: "u, v".
std::string merged_over(const Definition &d) {
    std::string names;
    for (const std::string &n : domain_outermost_first(d.rdom))
        names += (names.empty() ? "" : ", ") + n;
    return names;
}

} // namespace

Stage &Stage::set_loop_type(const VarOrRVar &v, ForType t, const char *directive) {
    size_t i = find_dim(v, directive);
    Dim &d = schedule().dims[i];
    const char *mapped = d.for_type == ForType::GPUBlock  ? "GPU blocks (gpu_blocks)"
                         : d.for_type == ForType::GPULane ? "the lanes of a warp (gpu_lanes)"
                                                          : "GPU threads (gpu_threads)";
    // From blocks to threads, say: the first mapping was most likely meant for another loop.
    user_assert(!(is_gpu_loop(d.for_type) && is_gpu_loop(t) && d.for_type != t))
        << "In the schedule of " << name() << ", " << directive << "(" << v.name()
        << ") names a loop already mapped to " << mapped << ": a loop runs on one of them. "
        << "Split " << v.name() << " to map an outer and an inner loop (gpu_tile does both), or "
        << "serial(" << v.name() << ") first undoes the mapping.";
    if (is_gpu_loop(d.for_type) && !is_gpu_loop(t) && t != ForType::Serial) {
        // The CPU's threads cannot run inside a kernel, whatever loop they take.
        const std::string advice =
            t == ForType::Parallel
                ? "A kernel's loops cannot run on the CPU's threads: give the parallelism to GPU "
                  "blocks and threads, or serial(" +
                      v.name() + ") undoes the mapping and the loop runs on the host."
                : std::string("Give each of them an inner loop instead: ") + directive + "(" +
                      v.name() + ", 4) splits " + v.name() + ", keeps the outer loop mapped and " +
                      (t == ForType::Vectorized ? "vectorizes" : "applies it to") +
                      " the inner one; or serial(" + v.name() + ") undoes the mapping.";
        user_error << "In the schedule of " << name() << ", " << directive << "(" << v.name()
                   << ") names a loop already mapped to " << mapped << ": a loop runs on one "
                   << "of them or "
                   << (t == ForType::Vectorized ? "as vector lanes"
                       : t == ForType::Unrolled ? "unrolled"
                                                : "as a parallel CPU loop")
                   << ", not both. " << advice;
    }
    const bool atomic_allows = schedule().atomic && t != ForType::Vectorized;
    // On a block's threads or a warp's lanes, iterations that update the same point make a
    // reduction across them (CrossThreadReductions); those that update different points must
    // not touch each other's.
    const bool across_threads = t == ForType::GPUThread || t == ForType::GPULane;
    if (d.is_rvar && !atomic_allows &&
        (t == ForType::Parallel || t == ForType::Vectorized || t == ForType::GPUBlock ||
         (across_threads && writes_points_along(definition(), v.name()))) &&
        !iterations_touch_disjoint_points(definition(), v.name(), func.name(), func.args())) {
        // rfactor and atomic() need an associative update; for another (a scatter whose last
        // write wins) only the serial loop is left to suggest.
        const Definition &def = definition();
        const bool associative =
            update_form(def, func.name(), def.args, def.values, domain_outermost_first(def.rdom))
                .has_value();
        user_error << "In the schedule of " << name() << ", " << directive << "(" << v.name()
                   << ") could race: " << v.name() << " is a reduction variable, and its "
                   << "iterations may update the same points of " << func.name()
                   << " (they do not when an argument on the left is a constant times the "
                   << "reduction variable plus terms free of the update's variables, e.g. "
                   << func.name() << "(" << v.name() << ", ...), and the update reads "
                   << func.name()
                   << " only at the point it writes, or at others with that argument as it "
                   << "writes it"
                   << (across_threads ? "; nor when no argument on the left uses it, a reduction "
                                        "across the threads"
                                      : "")
                   << ")."
                   << (def.merges && !def.merges->partials.empty()
                           ? " This update merges the partial results rfactor computed in " +
                                 def.merges->partials + ": " + directive + " the variables of " +
                                 def.merges->partials + " it merges over (" + merged_over(def) +
                                 ") instead, and keep the merge serial or map it onto "
                                 "gpu_lanes or gpu_threads (a reduction across the threads)."
                       : !associative
                           ? " Nor is the update a reduction that rfactor or atomic() could "
                             "split (such as " +
                                 func.name() + "(p) = " + func.name() +
                                 "(p) + x): the order of its steps decides its result, so keep " +
                                 v.name() + " serial."
                           : std::string(" Reduce with rfactor first, then ") + directive +
                                 " the new pure variable" +
                                 (t != ForType::Vectorized ? ", or make the update atomic() first."
                                  : schedule().atomic
                                      ? " (atomic() covers parallel loops and GPU blocks and "
                                        "threads, not vector lanes)."
                                      : "."));
    }
    d.for_type = t;
    return *this;
}

Stage &Stage::serial(const VarOrRVar &v) {
    return set_loop_type(v, ForType::Serial, "serial");
}
Stage &Stage::never_partition(const VarOrRVar &v) {
    schedule().dims[find_dim(v, "never_partition")].never_partition = true;
    return *this;
}
Stage &Stage::never_partition_all() {
    schedule().never_partition_all = true;
    return *this;
}
Stage &Stage::parallel(const VarOrRVar &v) {
    return set_loop_type(v, ForType::Parallel, "parallel");
}
Stage &Stage::vectorize(const VarOrRVar &v) {
    return set_loop_type(v, ForType::Vectorized, "vectorize");
}
Stage &Stage::unroll(const VarOrRVar &v) {
    return set_loop_type(v, ForType::Unrolled, "unroll");
}

Stage &Stage::parallel(const VarOrRVar &v, const Expr &task_size, TailStrategy tail) {
    find_dim(v, "parallel");
    const std::optional<int64_t> n = as_const_int(simplify(task_size));
    user_assert(!n || *n > 0) << "In the schedule of " << name() << ", parallel(" << v.name()
                              << ", " << *n << "): the task size (iterations per task) must be "
                              << "positive.";
    // The inner loop gets a name of its own: a second parallel(v, n), as Halide allows,
    // splits v again (tasks of n times as many iterations).
    std::string inner = v.name() + "_task";
    for (int k = 2; std::any_of(schedule().dims.begin(), schedule().dims.end(),
                                [&](const Dim &d) { return d.var == inner; });
         k++)
        inner = v.name() + "_task" + std::to_string(k);
    return all_or_nothing([&] {
        split(v, v, VarOrRVar(inner, v.is_rvar()), task_size, tail);
        parallel(v);
        // Each task runs its iterations in order (v may have been parallel already).
        serial(VarOrRVar(inner, v.is_rvar()));
    });
}

namespace {

// The checks of vectorize(v, factor) and unroll(v, factor), which split v into v and `inner`:
// the factor becomes the extent of a loop compiled as straight code, so it must be a positive
// constant of at most `most`, and the inner loop's name must be free (a second vectorize of v
// would split v into a second v_vi). Those of the factor's sign and the name come before the
// split (whose own message would be about a split the user did not write); the others after
// it and the loop type, which first refuse factors no loop takes (a loop variable, beyond 32
// bits) and loops that may not be vectorized (a reduction that could race).
void check_split_for(const std::string &stage, const std::vector<Dim> &dims, const VarOrRVar &v,
                     const Expr &factor, const VarOrRVar &inner, const char *directive,
                     int64_t most, bool split_done) {
    const std::optional<int64_t> n = as_const_int(simplify(factor));
    const std::string call = std::string(directive) + "(" + v.name() + ", " +
                             (n ? std::to_string(*n) : to_string(factor)) + ")";
    const bool vectorize = std::string(directive) == "vectorize";
    if (!split_done) {
        user_assert(!n || *n > 0) << "In the schedule of " << stage << ", " << call
                                  << ": the factor must be positive.";
        for (const Dim &d : dims) {
            user_assert(d.var != inner.name())
                << "In the schedule of " << stage << ", " << call << " would split " << v.name()
                << " into " << v.name() << " and " << inner.name() << ", but " << v.name()
                << " was already split that way (by an earlier " << directive << " of it). "
                << directive << " " << inner.name() << " itself, or split " << v.name()
                << " with Vars of your own.";
        }
        return;
    }
    user_assert(n.has_value()) << "In the schedule of " << stage << ", " << call
                               << ": the factor is not a constant, and it becomes the extent of a "
                               << "loop " << directive << "d into straight code. Give a "
                               << "constant, e.g. " << stage << "." << directive << "(" << v.name()
                               << ", " << (vectorize ? "8" : "4") << "), or split " << v.name()
                               << " by " << factor << " and leave the inner loop serial.";
    user_assert(*n <= most) << "In the schedule of " << stage << ", " << call << ": " << directive
                            << " takes at most " << most << " "
                            << (vectorize ? "lanes" : "iterations") << ". Give a factor of at most "
                            << most << ".";
}

} // namespace

namespace {

// A refusal of the inner loop that vectorize(v, n) or unroll(v, n) split off, said of the
// directive as the user wrote it: "vectorize(r.x, 8)", and "r.x's inner loop" for r.x_vi.
[[noreturn]] void rethrow_for_split(const CompileError &e, const std::string &directive,
                                    const VarOrRVar &v, const Expr &factor,
                                    const VarOrRVar &inner) {
    std::string msg = e.what();
    const std::string call = directive + "(" + inner.name() + ")";
    std::ostringstream as_written;
    as_written << directive << "(" << v.name() << ", " << factor << ")";
    for (size_t at = msg.find(call); at != std::string::npos; at = msg.find(call, at + 1))
        msg.replace(at, call.size(), as_written.str());
    const std::string loop = v.name() + "'s inner loop";
    for (size_t at = msg.find(inner.name()); at != std::string::npos;
         at = msg.find(inner.name(), at + loop.size()))
        msg.replace(at, inner.name().size(), loop);
    throw CompileError(msg);
}

} // namespace

Stage &Stage::vectorize(const VarOrRVar &v, const Expr &factor, TailStrategy tail) {
    VarOrRVar inner(v.name() + "_vi", v.is_rvar());
    find_dim(v, "vectorize");
    check_split_for(name(), schedule().dims, v, factor, inner, "vectorize", kMaxVectorLanes, false);
    return all_or_nothing([&] {
        split(v, v, inner, factor, tail);
        try {
            vectorize(inner);
        } catch (const CompileError &e) {
            rethrow_for_split(e, "vectorize", v, factor, inner);
        }
        check_split_for(name(), schedule().dims, v, factor, inner, "vectorize", kMaxVectorLanes,
                        true);
    });
}

Stage &Stage::unroll(const VarOrRVar &v, const Expr &factor, TailStrategy tail) {
    VarOrRVar inner(v.name() + "_ui", v.is_rvar());
    find_dim(v, "unroll");
    check_split_for(name(), schedule().dims, v, factor, inner, "unroll", kMaxUnroll, false);
    return all_or_nothing([&] {
        split(v, v, inner, factor, tail);
        try {
            unroll(inner);
        } catch (const CompileError &e) {
            rethrow_for_split(e, "unroll", v, factor, inner);
        }
        check_split_for(name(), schedule().dims, v, factor, inner, "unroll", kMaxUnroll, true);
    });
}

Stage &Stage::gpu_blocks(const VarOrRVar &x) {
    return set_loop_type(x, ForType::GPUBlock, "gpu_blocks");
}
Stage &Stage::gpu_blocks(const VarOrRVar &x, const VarOrRVar &y) {
    return all_or_nothing([&] { gpu_blocks(x).gpu_blocks(y); });
}
Stage &Stage::gpu_blocks(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z) {
    return all_or_nothing([&] { gpu_blocks(x).gpu_blocks(y).gpu_blocks(z); });
}
Stage &Stage::gpu_threads(const VarOrRVar &x) {
    return set_loop_type(x, ForType::GPUThread, "gpu_threads");
}
Stage &Stage::atomic() {
    user_assert(stage > 0) << "In the schedule of " << name() << ", atomic() applies to updates; "
                           << name() << " is the pure definition, which writes each point once.";
    schedule().atomic = true;
    return *this;
}
std::vector<std::string> Stage::matrix_loops(const VarOrRVar &n, const VarOrRVar &m,
                                             const VarOrRVar &k, const char *directive) {
    user_assert(stage > 0) << "In the schedule of " << name() << ", " << directive
                           << "() applies to an update that accumulates products; " << name()
                           << " is the pure definition.";
    user_assert(n.name() != m.name() && n.name() != k.name() && m.name() != k.name())
        << "In the schedule of " << name() << ", " << directive << "(" << n.name() << ", "
        << m.name() << ", " << k.name() << ") names a loop twice; give the loops over the "
        << "columns, the rows and the reduction.";
    for (const VarOrRVar *v : {&n, &m})
        find_dim(*v, directive);
    user_assert(schedule().dims[find_dim(k, directive)].is_rvar)
        << "In the schedule of " << name() << ", " << directive << "'s third loop " << k.name()
        << " must be a reduction variable (an RVar or a split of one): the instruction sums "
        << "over it.";
    return {n.name(), m.name(), k.name()};
}
Stage &Stage::gpu_mma(const VarOrRVar &n, const VarOrRVar &m, const VarOrRVar &k) {
    schedule().mma_loops = matrix_loops(n, m, k, "gpu_mma");
    return *this;
}
Stage &Stage::gpu_wgmma(const VarOrRVar &n, const VarOrRVar &m, const VarOrRVar &k) {
    schedule().wgmma_loops = matrix_loops(n, m, k, "gpu_wgmma");
    return *this;
}
Stage &Stage::gpu_lanes(const VarOrRVar &x) {
    return set_loop_type(x, ForType::GPULane, "gpu_lanes");
}
Stage &Stage::gpu_threads(const VarOrRVar &x, const VarOrRVar &y) {
    return all_or_nothing([&] { gpu_threads(x).gpu_threads(y); });
}
Stage &Stage::gpu_threads(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z) {
    return all_or_nothing([&] { gpu_threads(x).gpu_threads(y).gpu_threads(z); });
}

Stage &Stage::gpu_tile(const VarOrRVar &x, const VarOrRVar &tx, const Expr &x_size,
                       TailStrategy tail) {
    return gpu_tile(x, x, tx, x_size, tail);
}
Stage &Stage::gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &tx,
                       const VarOrRVar &ty, const Expr &x_size, const Expr &y_size,
                       TailStrategy tail) {
    return gpu_tile(x, y, x, y, tx, ty, x_size, y_size, tail);
}
Stage &Stage::gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z,
                       const VarOrRVar &tx, const VarOrRVar &ty, const VarOrRVar &tz,
                       const Expr &x_size, const Expr &y_size, const Expr &z_size,
                       TailStrategy tail) {
    return gpu_tile(x, y, z, x, y, z, tx, ty, tz, x_size, y_size, z_size, tail);
}

Stage &Stage::gpu_tile(const VarOrRVar &x, const VarOrRVar &bx, const VarOrRVar &tx,
                       const Expr &x_size, TailStrategy tail) {
    return all_or_nothing([&] {
        split(x, bx, tx, x_size, tail);
        gpu_blocks(bx).gpu_threads(tx);
    });
}

Stage &Stage::gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &bx,
                       const VarOrRVar &by, const VarOrRVar &tx, const VarOrRVar &ty,
                       const Expr &x_size, const Expr &y_size, TailStrategy tail) {
    return all_or_nothing([&] {
        tile(x, y, bx, by, tx, ty, x_size, y_size, tail);
        gpu_blocks(bx, by).gpu_threads(tx, ty);
    });
}

Stage &Stage::gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z,
                       const VarOrRVar &bx, const VarOrRVar &by, const VarOrRVar &bz,
                       const VarOrRVar &tx, const VarOrRVar &ty, const VarOrRVar &tz,
                       const Expr &x_size, const Expr &y_size, const Expr &z_size,
                       TailStrategy tail) {
    return all_or_nothing([&] {
        split(x, bx, tx, x_size, tail);
        split(y, by, ty, y_size, tail);
        split(z, bz, tz, z_size, tail);
        reorder({tx, ty, tz, bx, by, bz});
        gpu_blocks(bx, by, bz).gpu_threads(tx, ty, tz);
    });
}

Stage &Stage::gpu_single_thread() {
    schedule().single_gpu_thread = true;
    return *this;
}

Stage &Stage::prefetch_named(const std::string &what, const VarOrRVar &at, const VarOrRVar &from,
                             const Expr &offset, PrefetchBoundStrategy strategy) {
    user_assert(!what.empty()) << "In the schedule of " << name()
                               << ", prefetch names an undefined Func or buffer.";
    size_t at_dim = find_dim(at, "prefetch");
    size_t from_dim = find_dim(from, "prefetch");
    // dims are innermost first: `from` must be `at` or a loop around it.
    user_assert(from_dim >= at_dim)
        << "In the schedule of " << name() << ", prefetch of " << what << " at loop " << at.name()
        << " from loop " << from.name() << ": " << from.name() << " is inside " << at.name()
        << ". The loop whose iterations are looked ahead must be " << at.name() << " itself or a "
        << "loop around it (outermost first, the loops are: "
        << join_outermost_first(schedule().dims) << ").";
    user_assert(offset.defined() && offset.type().is_int_or_uint() && offset.type().is_scalar())
        << "In the schedule of " << name() << ", the offset of the prefetch of " << what
        << " must be an integer number of iterations of " << from.name() << ".";
    if (auto c = as_const_int(offset)) {
        user_assert(*c >= 0) << "In the schedule of " << name() << ", the prefetch of " << what
                             << " looks " << *c << " iterations of " << from.name()
                             << " ahead; a prefetch looks ahead (offset 0 or more).";
    }
    schedule().prefetches.push_back(
        {what, at.name(), from.name(), cast(Int(32), offset), strategy});
    return *this;
}

Stage &Stage::prefetch(const Func &f, const VarOrRVar &at, const VarOrRVar &from,
                       const Expr &offset, PrefetchBoundStrategy strategy) {
    return prefetch_named(f.defined() ? f.name() : std::string(), at, from, offset, strategy);
}

Stage &Stage::prefetch(const BufferBase &b, const VarOrRVar &at, const VarOrRVar &from,
                       const Expr &offset, PrefetchBoundStrategy strategy) {
    return prefetch_named(b.defined() ? b.name() : std::string(), at, from, offset, strategy);
}

Stage &Stage::prefetch(const ImageParam &p, const VarOrRVar &at, const VarOrRVar &from,
                       const Expr &offset, PrefetchBoundStrategy strategy) {
    return prefetch_named(p.name(), at, from, offset, strategy);
}

} // namespace aicf
