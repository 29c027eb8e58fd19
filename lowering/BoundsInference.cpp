#include "lowering/BoundsInference.h"

#include "dsl/Names.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"
#include "lowering/BoxesRequired.h"
#include "lowering/RangesOverIterations.h"

#include <algorithm>
#include <climits>
#include <map>
#include <set>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

Expr var(const std::string &name) {
    return Variable::make(Int(32), name);
}

// The statements of each stage inside `produce f { ... }`.
std::vector<Stmt> stage_stmts(const Stmt &produce) {
    const ProducerConsumer *pc = produce.as<ProducerConsumer>();
    internal_assert(pc && pc->is_producer) << "expected a produce node";
    return Block::parts(pc->body);
}

Expr extent_of(const Interval &i) {
    return simplify(Add::make(Sub::make(i.max, i.min), make_one(Int(32))));
}

// Applies bound() and align_bounds() to the region computed in each dimension. Adds to
// `checks` an assert that a fixed bound covers what was needed (for an output, its buffer).
// A bound_extent() counts from the first point of `reach` where given (what the consumers read
// and the update definitions write and read), of `needed` otherwise.
Box constrain_region(const Function &f, const Box &needed, std::vector<Stmt> &checks,
                     bool output = false, const Box *reach = nullptr) {
    Box box = needed;
    for (const RegionConstraint &c : f.schedule().region_constraints) {
        size_t d = std::find(f.args().begin(), f.args().end(), c.var) - f.args().begin();
        internal_assert(d < f.args().size()) << "constraint on unknown dimension " << c.var;
        if (c.extent.defined()) {
            // bound_extent: from the first point needed.
            Expr mn = c.min.defined() ? c.min : reach ? (*reach)[d].min : needed[d].min;
            Expr mx = Sub::make(Add::make(mn, c.extent), make_one(Int(32)));
            Expr inside = make_and(LE::make(mn, needed[d].min), GE::make(mx, needed[d].max));
            Expr msg = Call::make(
                Int(32), Intrinsic::runtime_error,
                {make_const(Int(32), int64_t(RuntimeErrorKind::FuncBoundTooSmall)),
                 StringImm::make(f.name()), make_const(Int(32), int64_t(d)), needed[d].min,
                 needed[d].max, mn, mx,
                 make_const(Int(32), int64_t((c.min.defined() ? 0 : 2) | (output ? 8 : 0)))},
                Call::Intrinsic);
            checks.push_back(AssertStmt::make(simplify(inside), msg));
            box[d] = Interval(simplify(mn), simplify(mx));
        } else {
            // Round outward: min down and max up to the alignment.
            const Interval before = box[d];
            Expr m = c.modulus, r = c.remainder, one = make_one(Int(32));
            if (!is_const(m)) {
                checks.push_back(assert_positive(m, "modulus that align_bounds(" + c.var +
                                                        ") gives " + f.name()));
            }
            Expr mn = Add::make(Mul::make(Div::make(Sub::make(before.min, r), m), m), r);
            // The last point of the block that holds max (written apart from mn, so that
            // the end does not depend on the start's remainder: bounds of the region, over
            // the run-time values it is made of, stay exact).
            Expr mx = Sub::make(
                Add::make(Add::make(Mul::make(Div::make(Sub::make(before.max, r), m), m), r), m),
                one);
            box[d] = Interval(simplify(mn), simplify(mx));
            // The same arithmetic in 64 bits: a large modulus may round the region past what
            // 32-bit indices address, and the sums above must not have wrapped.
            Expr m64 = widen_int32(m), mn64 = simplify(widen_int32(mn)),
                 mx64 = simplify(widen_int32(mx));
            Expr limit = make_const(Int(64), int64_t(INT32_MAX));
            Expr fits =
                make_and(make_and(GE::make(mn64, make_const(Int(64), int64_t(INT32_MIN))),
                                  LE::make(mx64, limit)),
                         LE::make(Add::make(Sub::make(widen_int32(before.max), mn64), m64), limit));
            Expr msg = Call::make(
                Int(32), Intrinsic::runtime_error,
                {make_const(Int(32), int64_t(RuntimeErrorKind::FuncRegionTooLarge)),
                 StringImm::make(f.name()), make_const(Int(32), int64_t(d)), mn64, mx64, m64},
                Call::Intrinsic);
            checks.push_back(AssertStmt::make(simplify(fits), msg));
        }
    }
    return box;
}

// Asserts that what f's update definitions write and read, `region`, lies inside each fixed
// bound() of f, and makes the pure definition's region exactly the bound (its storage is the
// bound: see the Realize visitor).
void keep_updates_inside_bounds(const Function &f, Box &region, std::vector<Stmt> &checks) {
    const std::vector<RegionConstraint> &constraints = f.schedule().region_constraints;
    for (size_t i = 0; i < constraints.size(); i++) {
        const RegionConstraint &c = constraints[i];
        if (!c.extent.defined()) continue;
        size_t d = std::find(f.args().begin(), f.args().end(), c.var) - f.args().begin();
        // What may take the region past the bound: the updates, an align_bounds() after it.
        int64_t reached_by = f.stages() > 1 ? 1 : 0;
        for (size_t j = i + 1; j < constraints.size(); j++)
            if (constraints[j].var == c.var && constraints[j].modulus.defined()) reached_by |= 16;
        // bound_extent: from the first point the updates reach.
        Expr mn = c.min.defined() ? c.min : region[d].min;
        Expr mx = Sub::make(Add::make(mn, c.extent), make_one(Int(32)));
        Expr inside = simplify(make_and(LE::make(mn, region[d].min), GE::make(mx, region[d].max)));
        if (!is_true(inside)) {
            Expr msg =
                Call::make(Int(32), Intrinsic::runtime_error,
                           {make_const(Int(32), int64_t(RuntimeErrorKind::FuncBoundTooSmall)),
                            StringImm::make(f.name()), make_const(Int(32), int64_t(d)),
                            region[d].min, region[d].max, mn, mx,
                            make_const(Int(32), reached_by | (c.min.defined() ? 0 : 2))},
                           Call::Intrinsic);
            checks.push_back(AssertStmt::make(inside, msg));
        }
        region[d] = Interval(simplify(mn), simplify(mx));
    }
}

// Asserts that each dimension of `region` spans at most 2^31 - 1 points, in 64 bits: its
// extent is an int32, and a region reaching from 0 to 2^31 - 1 (a bound() that large, or a
// consumer reading one past it) would wrap it to nothing.
void check_spans(const Function &f, const Box &region, std::vector<Stmt> &checks) {
    for (size_t d = 0; d < region.size(); d++) {
        if (!region[d].is_bounded()) continue;
        Expr mn = simplify(widen_int32(region[d].min)), mx = simplify(widen_int32(region[d].max));
        Expr span = Add::make(Sub::make(mx, mn), make_one(Int(64)));
        Expr ok = simplify(LE::make(span, make_const(Int(64), int64_t(INT32_MAX))));
        if (is_true(ok)) continue;
        // The message names an align_bounds() of this dimension, the likeliest cause.
        Expr modulus = make_const(Int(64), int64_t(0));
        for (const RegionConstraint &c : f.schedule().region_constraints)
            if (c.modulus.defined() && c.var == f.args()[d])
                modulus = Cast::make(Int(64), c.modulus);
        Expr msg = Call::make(Int(32), Intrinsic::runtime_error,
                              {make_const(Int(32), int64_t(RuntimeErrorKind::FuncRegionSpan)),
                               StringImm::make(f.name()), make_const(Int(32), int64_t(d)), mn, mx,
                               modulus},
                              Call::Intrinsic);
        checks.push_back(AssertStmt::make(ok, msg));
    }
}

// Asserts that `region` lies in the coordinates 32-bit loops count: its loops run from the
// min to min + extent, both int32. (In 64 bits: the region's own arithmetic may pass them.)
void check_range(const Function &f, const Box &region, std::vector<Stmt> &checks) {
    for (size_t d = 0; d < region.size(); d++) {
        if (!region[d].is_bounded()) continue;
        Expr mn = simplify(widen_int32(region[d].min)), mx = simplify(widen_int32(region[d].max));
        Expr ok = simplify(make_and(GE::make(mn, make_const(Int(64), int64_t(INT32_MIN))),
                                    LT::make(mx, make_const(Int(64), int64_t(INT32_MAX)))));
        if (is_true(ok)) continue;
        Expr msg = Call::make(Int(32), Intrinsic::runtime_error,
                              {make_const(Int(32), int64_t(RuntimeErrorKind::FuncRegionOutOfRange)),
                               StringImm::make(f.name()), make_const(Int(32), int64_t(d)), mn, mx},
                              Call::Intrinsic);
        checks.push_back(AssertStmt::make(ok, msg));
    }
}

std::string describe_dim(const Function &f, size_t d) {
    return "dimension " + std::to_string(d) + " (" + f.args()[d] + ")";
}

// The splits and alignments of f's schedule large enough to round a region past the range of
// 32-bit indices, as "split of y by 1073741824, ...".
std::string huge_roundings(const Function &f) {
    const int64_t large = int64_t(1) << 20;
    std::string list;
    auto add = [&](const std::string &text) { list += (list.empty() ? "" : ", ") + text; };
    for (int st = 0; st < f.stages(); st++) {
        for (const Split &sp : f.stage(st).schedule.splits) {
            auto c = sp.kind == Split::SplitVar ? as_const_int(sp.factor) : std::nullopt;
            if (c && *c >= large) add("split of " + sp.old_var + " by " + std::to_string(*c));
        }
    }
    for (const RegionConstraint &c : f.schedule().region_constraints) {
        auto m = c.modulus.defined() ? as_const_int(c.modulus) : std::nullopt;
        if (m && *m >= large) add("align_bounds(" + c.var + ", " + std::to_string(*m) + ")");
    }
    return list;
}

void require_bounded(const Function &f, const Box &box, const char *what) {
    for (size_t d = 0; d < box.size(); d++) {
        if (box[d].is_bounded()) continue;
        std::string huge = huge_roundings(f);
        user_assert(huge.empty())
            << "AICF cannot bound the region of Func " << f.name() << " that " << what << " in "
            << describe_dim(f, d) << ": its schedule rounds regions out to multiples so large ("
            << huge << ") that they pass the range 32-bit indices address. Use smaller factors.";
        user_error << "AICF cannot bound the region of Func " << f.name() << " that " << what
                   << " in " << describe_dim(f, d)
                   << ": an index into it is data-dependent or unbounded. Clamp the index to "
                   << "the range that is valid, e.g. " << f.name() << "(clamp(i, 0, n - 1)).";
    }
}

// The loop bounds each stage will be given (the pure stage `pure_region`, updates
// `update_box`), as a scope for analysing the stages' loops.
Scope<Interval> stage_scope(const Function &f, const Box &pure_region, const Box &update_box) {
    Scope<Interval> scope;
    for (int st = 0; st < f.stages(); st++) {
        const Box &b = st == 0 ? pure_region : update_box;
        for (size_t d = 0; d < f.args().size(); d++) {
            scope.push(loop_min_name(f.name(), st, f.args()[d]), Interval::single_point(b[d].min));
            scope.push(loop_max_name(f.name(), st, f.args()[d]), Interval::single_point(b[d].max));
            scope.push(loop_extent_name(f.name(), st, f.args()[d]),
                       Interval::single_point(extent_of(b[d])));
        }
    }
    return scope;
}

// `box` joined with what the update stages write and read of the Func itself when their
// pure variables run over `box`; and, where asked, with what they write only.
Box update_region(const Function &f, const std::vector<Stmt> &stages, const Box &box,
                  Box *written_only = nullptr) {
    Box region = box;
    if (written_only) *written_only = box;
    Scope<Interval> scope = stage_scope(f, box, box);
    for (int s = 1; s < f.stages() && s < static_cast<int>(stages.size()); s++) {
        Access written = box_provided(stages[s], f.name(), scope);
        Access read = box_required(stages[s], f.name(), scope);
        if (written.used) {
            require_bounded(f, written.box, "its update definitions write");
            region = box_union(region, written.box);
            if (written_only) *written_only = box_union(*written_only, written.box);
        }
        if (read.used) {
            require_bounded(f, read.box, "its update definitions read");
            region = box_union(region, read.box);
        }
    }
    return region;
}

// Everything the stages write: with splits that round up or shift inwards, this can exceed
// the region they were asked to compute.
Box written_region(const Function &f, const Stmt &produce, const Box &pure_region,
                   const Box &update_box) {
    Access written = box_provided(produce, f.name(), stage_scope(f, pure_region, update_box));
    if (!written.used) return pure_region;
    require_bounded(f, written.box, "its own loops write");
    return written.box;
}

// Asserts that the points f's own loops write lie inside each fixed bound() of f, its storage:
// the whole tiles of a split that shifts its tail inwards by more than the bound's extent, or
// that rounds it up past it, would write outside (an output's are checked against its buffer).
void keep_tiles_inside_bounds(const Function &f, const Stmt &produce, const Box &pure_region,
                              const Box &update_box, std::vector<Stmt> &checks) {
    bool bounded = false;
    for (const RegionConstraint &c : f.schedule().region_constraints)
        bounded = bounded || c.extent.defined();
    if (!bounded) return;
    // (A dimension whose points come from data has no interval to check here.)
    const Access written = box_provided(produce, f.name(), stage_scope(f, pure_region, update_box));
    if (!written.used) return;
    for (const RegionConstraint &c : f.schedule().region_constraints) {
        if (!c.extent.defined()) continue;
        size_t d = std::find(f.args().begin(), f.args().end(), c.var) - f.args().begin();
        const Interval &b = pure_region[d], &w = written.box[d];
        if (!w.is_bounded()) continue;
        // (An empty bound computes nothing.)
        Expr inside = simplify(Or::make(
            LT::make(b.max, b.min), make_and(LE::make(widen_int32(b.min), widen_int32(w.min)),
                                             GE::make(widen_int32(b.max), widen_int32(w.max)))));
        if (is_true(inside)) continue;
        Expr msg =
            Call::make(Int(32), Intrinsic::runtime_error,
                       {make_const(Int(32), int64_t(RuntimeErrorKind::FuncBoundTooSmall)),
                        StringImm::make(f.name()), make_const(Int(32), int64_t(d)), w.min, w.max,
                        b.min, b.max, make_const(Int(32), int64_t(c.min.defined() ? 4 : 6))},
                       Call::Intrinsic);
        checks.push_back(AssertStmt::make(inside, msg));
    }
}

Stmt wrap_stage_lets(const Function &f, const Box &pure_region, const Box &update_box, Stmt s) {
    for (int st = f.stages() - 1; st >= 0; st--) {
        const Box &b = st == 0 ? pure_region : update_box;
        for (size_t d = f.args().size(); d-- > 0;) {
            // The extent from the expanded bounds, so it folds to a constant when the region's
            // size is one (as loops that are unrolled or vectorized need).
            s = LetStmt::make(loop_extent_name(f.name(), st, f.args()[d]), extent_of(b[d]), s);
            s = LetStmt::make(loop_max_name(f.name(), st, f.args()[d]), simplify(b[d].max), s);
            s = LetStmt::make(loop_min_name(f.name(), st, f.args()[d]), simplify(b[d].min), s);
        }
    }
    return s;
}

// Whether every update of f writes at the point of its pure variables, f(x, y) = ...: then
// every stage runs inside loops over the pure variables, and an empty output computes nothing.
// Whether every update of f writes its own point in dimension `d` (in every dimension when d
// is -1): f(x, ...) there, not a shifted or data-dependent one.
bool updates_write_their_own_point(const Function &f, int only = -1) {
    for (int st = 1; st < f.stages(); st++) {
        const std::vector<Expr> &args = f.stage(st).args;
        for (size_t d = 0; d < args.size(); d++) {
            if (only >= 0 && int(d) != only) continue;
            const Variable *v = args[d].as<Variable>();
            if (!v || v->name != f.args()[d]) return false;
        }
    }
    return true;
}

// `s` with the produce node of Func `name` left out: what the rest of the pipeline does.
class WithoutProduce : public IRMutator {
public:
    explicit WithoutProduce(const std::string &name) : name(name) {}

private:
    const std::string &name;
    using IRMutator::visit;
    Stmt visit(const ProducerConsumer *op) override {
        if (op->is_producer && op->name == name) return Evaluate::make(make_zero(Int(32)));
        return IRMutator::visit(op);
    }
};

// An output that other Funcs of the pipeline read (a layernorm's output and the statistics it
// also returns) is read from its buffer: checks, before anything runs, that the buffer covers
// what they read, as an input's covers what its readers read.
Stmt check_outputs_read(Stmt s, const std::vector<Function> &outputs,
                        const std::map<std::string, Function> &env) {
    std::vector<Stmt> all_checks;
    Access all_reads; // only its definitions: the lets every region names
    for (const Function &o : outputs) {
        // Most outputs no other Func reads: nothing to bound.
        std::string readers;
        for (const auto &[name, f] : env) {
            if (name == o.name()) continue;
            for (const Function &g : direct_callees(f)) {
                if (g.name() != o.name()) continue;
                readers += (readers.empty() ? "" : ", ") + name;
                break;
            }
        }
        if (readers.empty()) continue;
        Access read = box_required(WithoutProduce(o.name()).mutate(s), o.name(), Scope<Interval>(),
                                   Scope<Interval>(), LetsByName::WhenLarge);
        if (!read.used) continue;
        require_bounded(o, read.box, "the pipeline's other Funcs read");
        for (int v = 0; v < o.outputs(); v++) {
            const std::string buffer = storage_name(o.name(), v, o.outputs());
            for (Stmt &c : checks_buffer_covers(buffer, read, buffer + "\x1f" + readers))
                all_checks.push_back(std::move(c));
        }
        merge_definitions(all_reads, read);
    }
    if (all_checks.empty()) return s;
    return with_definitions(all_reads, Block::make(Block::make(all_checks), s));
}

// For a Func computed once, before its consumers, the condition under which it must run:
// that its consumers' loops run (`consumed.condition`). Undefined where its region is empty
// anyway when they do not, as usual (no guard is added then); needed where its consumers work
// in whole tiles (a tile shifted inwards covers [-8, -1] at an extent of 0), which would
// otherwise compute it, and read its inputs, before their start for an empty output.
Expr guard_for_consumers(const Access &consumed) {
    if (!consumed.condition.defined()) return Expr();
    const Expr runs = simplify(consumed.condition);
    if (is_true(runs) || count_nodes(runs, 256) >= 256) return Expr();
    // Each conjunct that fails where one variable is 0 (an extent): the region is empty there.
    for (const Expr &c : conjuncts(runs)) {
        const std::set<std::string> vars = free_vars(c);
        if (vars.size() != 1) return runs;
        const std::string &v = *vars.begin();
        const Expr zero = make_zero(Int(32));
        if (!is_false(simplify(substitute(v, zero, c)))) return runs;
        bool empty = false;
        for (const Interval &i : consumed.box) {
            Expr none = simplify(substitute(v, zero, LT::make(i.max, i.min)));
            empty = empty || is_true(none);
        }
        if (!empty) return runs;
    }
    return Expr();
}

class BoundsInference : public IRMutator {
public:
    BoundsInference(const std::map<std::string, Function> &env) : env(env) {}

private:
    const std::map<std::string, Function> &env;
    // The ranges of the loops around the current point.
    Scope<Interval> loops;
    using IRMutator::visit;

    Stmt visit(const For *op) override {
        Expr last = Sub::make(Add::make(op->min, op->extent), make_one(op->min.type()));
        ScopedBinding<Interval> bind(loops, op->name, Interval(op->min, simplify(last)));
        loop_depth++;
        Stmt s = IRMutator::visit(op);
        loop_depth--;
        if (loop_depth > 0) return s;
        // The Funcs computed inside an outermost loop (per tile, per row, in a kernel's
        // threads): their regions over all of its iterations are in range, checked once
        // before it (not in every iteration, nor in every GPU thread).
        const RangesOverIterations over_loop = ranges_over_iterations(s, realized_regions);
        std::vector<Stmt> checks;
        for (const auto &[name, box] : over_loop.realized) {
            auto it = env.find(name);
            if (it != env.end()) check_range(it->second, box, checks);
        }
        if (checks.empty()) return s;
        return with_used_definitions(over_loop.read, Block::make(Block::make(checks), s));
    }
    int loop_depth = 0; // loops around the statement being visited
    // The region each Func is realized over, where it is (in terms of the lets there).
    std::map<std::string, Box> realized_regions;

    // What `body` writes and reads of Func `name`, over the loops around it: the box, and
    // the lets the box names (those of the writes first: the reads' add to them).
    struct Footprint {
        bool written = false;
        Box box;
        Access definitions;
    };
    Footprint footprint(const Stmt &body, const std::string &name) const {
        Access written = box_provided(body, name, Scope<Interval>(), loops, LetsByName::WhenLarge);
        Access read = box_required(body, name, Scope<Interval>(), loops, LetsByName::WhenLarge);
        Footprint fp;
        fp.written = written.used;
        fp.box = read.used ? box_union(written.box, read.box) : written.box;
        fp.definitions = written;
        merge_definitions(fp.definitions, read);
        return fp;
    }

    const Function *func_of_produce(const Stmt &s) const {
        const ProducerConsumer *pc = s.as<ProducerConsumer>();
        if (!pc || !pc->is_producer) return nullptr;
        auto it = env.find(pc->name);
        return it == env.end() ? nullptr : &it->second;
    }

    // `produce f {...} consume f {...}`: the stages compute what the consumers read.
    Stmt visit(const Block *op) override {
        const Function *f = func_of_produce(op->first);
        const ProducerConsumer *consume = op->rest.as<ProducerConsumer>();
        if (!f || !consume || consume->is_producer || consume->name != f->name()) {
            return IRMutator::visit(op);
        }
        Stmt consume_body = mutate(consume->body);
        Stmt produce = mutate(op->first);
        Access consumed =
            box_required(consume_body, f->name(), Scope<Interval>(), loops, LetsByName::WhenLarge);
        Box box;
        if (consumed.used) {
            require_bounded(*f, consumed.box, "its consumers read");
            box = consumed.box;
        } else {
            // Nothing reads it: an empty region.
            for (size_t d = 0; d < f->args().size(); d++)
                box.push_back(Interval(make_zero(Int(32)), make_const(Int(32), int64_t(-1))));
        }
        std::vector<Stmt> checks;
        // A histogram's bins, or any point an update reaches beyond the consumers' region, are
        // needed too: a bound_extent() counts from the first of them.
        bool from_first = false; // a bound_extent() of f counting from its first point
        for (const RegionConstraint &c : f->schedule().region_constraints)
            from_first = from_first || (c.extent.defined() && !c.min.defined());
        const Box reach =
            from_first && f->stages() > 1 ? update_region(*f, stage_stmts(produce), box) : box;
        box = constrain_region(*f, box, checks, false, &reach);
        Box region = update_region(*f, stage_stmts(produce), box);
        keep_updates_inside_bounds(*f, region, checks);
        keep_tiles_inside_bounds(*f, produce, box, region, checks);
        check_spans(*f, region, checks);
        if (loop_depth == 0) check_range(*f, region, checks);
        if (loop_depth == 0) {
            if (Expr runs = guard_for_consumers(consumed); runs.defined()) {
                const ProducerConsumer *pc = produce.as<ProducerConsumer>();
                produce =
                    ProducerConsumer::make_produce(f->name(), IfThenElse::make(runs, pc->body));
            }
        }
        Stmt s = Block::make(produce, ProducerConsumer::make_consume(f->name(), consume_body));
        s = Block::make(Block::make(checks), s);
        return with_definitions(consumed, wrap_stage_lets(*f, region, box, s));
    }

    // The storage holds everything computed and read inside it.
    Stmt visit(const Realize *op) override {
        Stmt body = mutate(op->body);
        auto it = env.find(op->name);
        internal_assert(it != env.end()) << "Realize of unknown Func " << op->name;
        const Function &f = it->second;
        Footprint fp = footprint(body, f.name());
        internal_assert(fp.written) << "Realize of " << f.name() << " that nothing writes";
        Box realized = fp.box;
        // A bound() fixes the region: anything outside it is a run-time error already, so
        // the storage is exactly the bound (a constant size when the bound is constant).
        for (const RegionConstraint &c : f.schedule().region_constraints) {
            if (!c.extent.defined()) continue;
            size_t d = std::find(f.args().begin(), f.args().end(), c.var) - f.args().begin();
            Expr mn = c.min.defined() ? c.min : realized[d].min; // bound_extent: the first
            realized[d] = Interval(mn, Sub::make(Add::make(mn, c.extent), make_one(Int(32))));
        }
        require_bounded(f, realized, "its stages write and its consumers read");
        realized_regions[f.name()] = realized;
        Stmt s = Realize::make(op->name, op->types, op->memory_type, op->bounds, body);
        std::vector<Stmt> span_checks;
        check_spans(f, realized, span_checks);
        if (loop_depth == 0) check_range(f, realized, span_checks);
        if (!span_checks.empty()) s = Block::make(Block::make(span_checks), s);
        for (size_t d = f.args().size(); d-- > 0;) {
            const std::string &a = f.args()[d];
            Expr mn = simplify(realized[d].min), mx = simplify(realized[d].max);
            Expr extent = simplify(
                Max::make(Add::make(Sub::make(mx, mn), make_one(Int(32))), make_zero(Int(32))));
            s = LetStmt::make(realized_extent_name(f.name(), a), extent, s);
            s = LetStmt::make(realized_min_name(f.name(), a), mn, s);
        }
        return with_definitions(fp.definitions, s);
    }
};

} // namespace

Stmt bounds_inference(const Stmt &s, const std::vector<Function> &outputs,
                      const std::map<std::string, Function> &env) {
    Stmt result = BoundsInference(env).mutate(s);

    // Outputs iterate over their buffers; their updates must stay inside them.
    for (const Function &o : outputs) {
        std::string buffer = storage_name(o.name(), 0, o.outputs());
        Box box;
        for (int d = 0; d < o.dimensions(); d++) {
            Expr mn = var(buffer_field_name(buffer, BufferField::Min, d));
            Expr ex = var(buffer_field_name(buffer, BufferField::Extent, d));
            box.emplace_back(mn, Sub::make(Add::make(mn, ex), make_one(Int(32))));
        }
        // Find this output's produce node to check what its updates write.
        Stmt produce;
        visit_each<ProducerConsumer>(result, [&](const ProducerConsumer *pc) {
            if (pc->is_producer && pc->name == o.name()) produce = pc;
        });
        internal_assert(produce.defined()) << "no produce node for output " << o.name();
        std::vector<Stmt> checks;
        Box computed = constrain_region(o, box, checks, true);
        const std::vector<Stmt> stages = stage_stmts(produce);
        Box update_writes;
        const Box updated = update_region(o, stages, computed, &update_writes);
        Box region = box_union(updated, written_region(o, produce, computed, computed));
        // What the pure definition's own loops write (whole tiles), for the message.
        const Box tiles = written_region(o, stages[0], computed, computed);
        // An empty output computes nothing when the Func has no updates (a tile shifted
        // inwards over it would otherwise seem to write before its start).
        Expr empty;
        for (int d = 0; d < o.dimensions(); d++) {
            Expr e = LT::make(box[d].max, box[d].min);
            empty = empty.defined() ? Or::make(empty, e) : e;
        }
        for (int d = 0; d < o.dimensions(); d++) {
            // In 64 bits, so that whole tiles rounded past the top of the int32 range are seen.
            Expr rmin = simplify(widen_int32(region[d].min)),
                 rmax = simplify(widen_int32(region[d].max));
            Expr inside = make_and(LE::make(widen_int32(box[d].min), rmin),
                                   GE::make(widen_int32(box[d].max), rmax));
            if (empty.defined() && updates_write_their_own_point(o))
                inside = Or::make(empty, inside);
            // Why the output writes past its buffer, for the message: a bound() or an
            // align_bounds() of this dimension (1, 4), updates whose points come from data
            // and lie outside (2), the pure definition's whole tiles (8), or updates that read
            // the Func outside what they write (16: a scan's f(r - 1) at its first r).
            int64_t causes = 0;
            for (const RegionConstraint &c : o.schedule().region_constraints) {
                if (c.var != o.args()[size_t(d)]) continue;
                causes |= c.extent.defined() ? 1 : 4;
            }
            auto outside = [&](const Interval &i) {
                return Or::make(GT::make(widen_int32(box[d].min), widen_int32(i.min)),
                                LT::make(widen_int32(box[d].max), widen_int32(i.max)));
            };
            Expr flags = make_const(Int(64), causes);
            auto flag_if = [&](const Expr &c, int64_t bit) {
                flags = Add::make(
                    flags, Mul::make(Cast::make(Int(64), simplify(c)), make_const(Int(64), bit)));
            };
            // (Updates that write their own point in this dimension reach past it only by
            // whole tiles of their own loops. A bound() or align_bounds() makes the pure
            // loops write past it too.)
            const bool own_point = updates_write_their_own_point(o, d);
            if (!own_point) flag_if(outside(update_writes[d]), 2);
            flag_if(And::make(Not::make(outside(update_writes[d])), outside(updated[d])), 16);
            if (!causes) {
                flag_if(own_point ? Or::make(outside(tiles[d]), outside(update_writes[d]))
                                  : outside(tiles[d]),
                        8);
            }
            Expr msg = Call::make(Int(32), Intrinsic::runtime_error,
                                  {make_const(Int(32), int64_t(RuntimeErrorKind::OutputTooSmall)),
                                   StringImm::make(buffer), make_const(Int(32), int64_t(d)), rmin,
                                   rmax, box[d].min, box[d].max, flags},
                                  Call::Intrinsic);
            checks.push_back(AssertStmt::make(simplify(inside), msg));
        }
        result = Block::make(Block::make(checks), result);
        result = wrap_stage_lets(o, computed, computed, result);
    }
    return check_outputs_read(result, outputs, env);
}

} // namespace lowering
} // namespace aicf
