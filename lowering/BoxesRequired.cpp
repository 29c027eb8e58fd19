#include "lowering/BoxesRequired.h"

#include "dsl/Names.h"
#include "dsl/ir/Bounds.h"
#include "dsl/ir/IREquality.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Monotonic.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"

#include <atomic>
#include <map>
#include <set>
#include <type_traits>
#include <unordered_set>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// The names that can reach the region of `name` a statement reads (or writes): those in the
// indices of its accesses, in the bounds of the loops and the conditions around them, and in
// the values of lets of such names. A let outside this set cannot change the region, so
// FindBox skips its bounds: a stage computed inside another Func's loops brings the lets of
// every region there, and bounding them all is most of the work.
class RelevantNames : public IRVisitor {
public:
    RelevantNames(const std::string &name, bool provides) : name(name), provides(provides) {}

    std::set<std::string> result() {
        std::vector<std::string> work(relevant.begin(), relevant.end());
        while (!work.empty()) {
            std::string n = work.back();
            work.pop_back();
            auto it = let_values.find(n);
            if (it == let_values.end()) continue;
            for (const Expr &v : it->second)
                for (const std::string &m : free_vars(v))
                    if (relevant.insert(m).second) work.push_back(m);
        }
        return relevant;
    }
    // The loops, lets and conditions with an access inside (in their bounds, values or
    // bodies). FindBox passes over the others: in a chain of stages computed at one
    // another's loops, each stage's region is inside the loops of every later one, and
    // bounding their loops and lets for each stage made compiling such a chain cubic in its
    // length.
    std::unordered_set<const IRNode *> reaching;

private:
    const std::string &name;
    bool provides;
    size_t accesses = 0;
    // Records `op` as reaching an access when visiting it finds one.
    struct Reaching {
        RelevantNames &r;
        const IRNode *op;
        size_t before;
        Reaching(RelevantNames &r, const IRNode *op) : r(r), op(op), before(r.accesses) {}
        ~Reaching() {
            if (r.accesses > before) r.reaching.insert(op);
        }
    };
    std::vector<std::set<std::string>> around; // names in the bounds and guards around here
    std::set<std::string> relevant;
    std::map<std::string, std::vector<Expr>> let_values;

    void access(const std::vector<Expr> &args) {
        accesses++;
        for (const Expr &a : args)
            for (const std::string &n : free_vars(a))
                relevant.insert(n);
        for (const auto &names : around)
            relevant.insert(names.begin(), names.end());
    }
    template <typename LetNode> void visit_let(const LetNode *op) {
        Reaching r(*this, op);
        let_values[op->name].push_back(op->value);
        IRVisitor::visit(op);
    }

    using IRVisitor::visit;
    void visit(const Call *op) override {
        IRVisitor::visit(op);
        if (!provides && op->name == name &&
            (op->call_type == Call::Func || op->call_type == Call::Image))
            access(op->args);
    }
    void visit(const Provide *op) override {
        IRVisitor::visit(op);
        if (provides && op->name == name) access(op->args);
    }
    void visit(const Let *op) override { visit_let(op); }
    void visit(const LetStmt *op) override { visit_let(op); }
    void visit(const For *op) override {
        Reaching r(*this, op);
        op->min.accept(this);
        op->extent.accept(this);
        std::set<std::string> names = free_vars(op->min);
        for (const std::string &n : free_vars(op->extent))
            names.insert(n);
        names.insert(op->name);
        around.push_back(names);
        op->body.accept(this);
        around.pop_back();
    }
    void visit(const IfThenElse *op) override {
        Reaching r(*this, op);
        op->condition.accept(this);
        around.push_back(free_vars(op->condition));
        op->then_case.accept(this);
        if (op->else_case.defined()) op->else_case.accept(this);
        around.pop_back();
    }
};

// A loop that fuses two (see FindBox::enter_fused_loop), and the variables that stand for the
// quotient and remainder of its variable by its inner count.
struct FusedLoop {
    std::string name, quotient, remainder;
    Expr inner_count; // simplified, in terms of the lets around the loop
};

class ReplaceFusedParts : public IRMutator {
public:
    explicit ReplaceFusedParts(const std::vector<FusedLoop> &loops) : loops(loops) {}

private:
    const std::vector<FusedLoop> &loops;
    using IRMutator::visit;
    template <typename Node> const FusedLoop *part(const Node *op) const {
        const Variable *v = op->a.template as<Variable>();
        if (!v) return nullptr;
        for (const FusedLoop &f : loops)
            if (f.name == v->name && equal(simplify(op->b), f.inner_count)) return &f;
        return nullptr;
    }
    Expr visit(const Div *op) override {
        const FusedLoop *f = part(op);
        return f ? Variable::make(op->type, f->quotient) : IRMutator::visit(op);
    }
    Expr visit(const Mod *op) override {
        const FusedLoop *f = part(op);
        return f ? Variable::make(op->type, f->remainder) : IRMutator::visit(op);
    }
};

class FindBox : public IRVisitor {
public:
    FindBox(const std::string &name, bool provides, const Scope<Interval> &outer,
            const Scope<Interval> &facts = Scope<Interval>(),
            LetsByName by_name = LetsByName::Never, const std::set<std::string> *relevant = nullptr,
            const std::unordered_set<const IRNode *> *reaching = nullptr)
        : name(name), provides(provides), by_name(by_name), relevant(relevant), reaching(reaching),
          facts(facts) {
        outer.for_each([&](const std::string &n, const Interval &i) { scope.push(n, i); });
        facts.for_each([&](const std::string &n, const Interval &) { loop_names.insert(n); });
    }
    Access result;
    // A let name bound twice to different values that could be named: the region may name
    // either, so the caller computes it again with every let expanded.
    bool ambiguous = false;

    // The lets that result's box and condition name, with those their values name, in the
    // order they were bound.
    std::vector<std::pair<std::string, Expr>> definitions_needed() const {
        std::set<std::string> needed;
        std::vector<std::string> work;
        auto need = [&](const Expr &e) {
            if (!e.defined()) return;
            for (const std::string &n : free_vars(e))
                if (nameable_value.count(n) && needed.insert(n).second) work.push_back(n);
        };
        for (const Interval &i : result.box) {
            need(i.min);
            need(i.max);
        }
        need(result.condition);
        while (!work.empty()) {
            std::string n = work.back();
            work.pop_back();
            need(nameable_value.at(n));
        }
        std::vector<std::pair<std::string, Expr>> defs;
        for (const auto &[n, v] : nameable)
            if (needed.count(n)) defs.emplace_back(n, v);
        return defs;
    }

private:
    const std::string &name;
    bool provides;
    LetsByName by_name;
    const std::set<std::string> *relevant;              // see RelevantNames; null: every name
    const std::unordered_set<const IRNode *> *reaching; // see RelevantNames; null: every node
    // Whether `op` has no access of the region inside, and so nothing to bound.
    bool passes_over(const IRNode *op) const { return reaching && !reaching->count(op); }
    // Lets that may be named in the region: integer values of names from outside the
    // statement and of other such lets, first binding of each, in binding order; and those
    // named rather than expanded (a value whose expansion counts more variables than
    // `name_past`). Named, a let keeps nothing of what its value would tell where it meets
    // other terms (an extent that cancels in a fused tile's index, say), so only values far
    // past a stage region's usual size are: a chain of stages grows past it in a few steps.
    // Lets outside every loop of the statement (the regions of the stages computed at its
    // level, each in terms of the next one's) are named sooner, at `name_past_outside_loops`:
    // expanded, each stage's region nests its consumer's, and a chain of five stages in
    // tiles shifted inwards spent half a second simplifying them (against 0.1 s named). A
    // pyramid's levels are read twice (by the next level down and by their level up), and a
    // vectorized level rounds its region by both ends of its consumer's: named past 16, a
    // pyramid of 8 levels at the root spent 11 s in lowering (0.9 s past 8), each level
    // about 4 times the one before.
    std::vector<std::pair<std::string, Expr>> nameable;
    std::map<std::string, Expr> nameable_value;
    std::set<std::string> named;
    static constexpr double name_past = 64, name_past_outside_loops = 8, name_ends_past = 8;

    // A let whose value changes inside the statement (a region of a stage computed inside a
    // loop of it, in terms of that loop) cannot be named, and its range over the loops is
    // what its uses see. Where each stage of a chain computed at one loop reads the next one's
    // region twice (clamped and not, both ends of a stencil), that range nests the next one's
    // twice, and expanded, the region of the first stage grows geometrically with the chain's
    // length: five steps of a clamped 3-D stencil in overlapped tiles spent 44 s in lowering.
    // So an end of such a range past `name_ends_past` variables is named: a let of its own,
    // before the statement, whose value uses names from outside it only. (Named past 16,
    // eight steps took 2.7 times as long.)
    Interval name_large_ends(const std::string &let, Interval range) {
        if (by_name != LetsByName::WhenLarge) return range;
        for (Expr *end : {&range.min, &range.max}) {
            if (!end->defined() || !end->type().is_int() || !end->type().is_scalar()) continue;
            if (end->as<Variable>() || count_variables(*end) <= name_ends_past) continue;
            bool outside = true;
            for (const std::string &n : free_vars(*end))
                outside = outside && (!bound_inside.count(n) || nameable_value.count(n));
            if (!outside) continue;
            static std::atomic<int> ends{0};
            const std::string n =
                let + (end == &range.min ? ".lowest." : ".highest.") + std::to_string(ends++);
            nameable.emplace_back(n, *end);
            nameable_value.emplace(n, *end);
            *end = Variable::make(end->type(), n);
        }
        return range;
    }
    static double count_variables(const Expr &e) {
        double n = 0;
        visit_each<Variable>(e, [&](const Variable *) { n++; });
        return n;
    }

    bool may_be_named(const Expr &value) const {
        if (!value.type().is_int() || !value.type().is_scalar()) return false;
        bool ok = true;
        visit_each<Call>(value, [&](const Call *) { ok = false; });
        visit_each<Load>(value, [&](const Load *) { ok = false; });
        if (!ok) return false;
        for (const std::string &n : free_vars(value))
            if (bound_inside.count(n) && !nameable_value.count(n)) return false;
        return true;
    }
    Scope<Interval> facts;            // a copy: the caller's may be a default argument
    std::set<std::string> loop_names; // the variables `facts` gives ranges of
    bool skips_iterations = false;    // see visit(const IfThenElse *)
    Scope<Interval> scope;

    void add(const std::vector<Expr> &raw_args) {
        const std::vector<Expr> args = fused_parts(raw_args);
        // An access seen before adds nothing. (Expressions are trees that may share
        // subexpressions: an algorithm that uses a value twice per step, for several steps,
        // reads the same point thousands of times, and a condition or union per read would
        // nest that deep.)
        for (const auto &[where, seen] : distinct) {
            if (where != context || seen.size() != args.size()) continue;
            bool same = true;
            for (size_t i = 0; same && i < args.size(); i++)
                same = equal(seen[i], args[i]);
            if (same) return;
        }
        distinct.emplace_back(context, args);
        Box box;
        for (const Expr &a : args)
            box.push_back(guarded(a, bounds_over_loops(a)));
        Expr condition;
        for (const Expr &c : loops_run)
            condition = condition.defined() ? make_and(condition, c) : c;
        if (!result.used) {
            result.box = box;
            result.used = true;
            result.condition = condition;
        } else {
            result.box = box_union(result.box, box);
            result.condition = result.condition.defined() && condition.defined()
                                   ? make_or(result.condition, condition)
                                   : Expr();
        }
    }
    // For each enclosing loop inside the statement whose extent is known in terms of
    // variables outside it: that extent is positive.
    std::vector<Expr> loops_run;
    // The accesses added so far, with the context each was seen in: a region that only the
    // same bindings of every name (lets, loops, narrowing guards) share, so that an access
    // repeated there adds nothing.
    std::vector<std::pair<int, std::vector<Expr>>> distinct;
    int context = 0, contexts = 0;
    struct NewContext {
        FindBox &box;
        int saved;
        explicit NewContext(FindBox &b) : box(b), saved(b.context) { box.context = ++box.contexts; }
        ~NewContext() { box.context = saved; }
    };
    // Names the statement binds (loops and lets) around the current point.
    std::set<std::string> bound_inside;

    using IRVisitor::visit;

    void visit(const Call *op) override {
        // A prefetch is a hint that reads nothing.
        if (op->is_intrinsic(Intrinsic::prefetch)) return;
        IRVisitor::visit(op);
        if (!provides && op->name == name &&
            (op->call_type == Call::Func || op->call_type == Call::Image)) {
            add(op->args);
        }
    }
    void visit(const Provide *op) override {
        IRVisitor::visit(op);
        if (provides && op->name == name) add(op->args);
    }
    // The lets around the current point, outermost first, so a guard that narrows a
    // variable can narrow the variables computed from it too.
    std::vector<std::pair<std::string, Expr>> lets;

    // How many variables `e` has with the enclosing lets expanded (saturating), counted
    // without expanding them: a chain of lets each using the previous one twice would expand
    // to a tree exponential in its length.
    Scope<double> expanded_vars;
    double expanded_var_count(const Expr &e) const {
        double n = 0;
        visit_each<Variable>(e, [&](const Variable *v) {
            const double *inner = expanded_vars.find(v->name);
            n = std::min(n + (inner ? *inner : 1.0), 1e18);
        });
        return n;
    }

    template <typename LetNode> void visit_let(const LetNode *op) {
        if (passes_over(op)) return;
        op->value.accept(this);
        if (relevant && !relevant->count(op->name)) {
            // Nothing that bounds the region uses it.
            bool fresh = bound_inside.insert(op->name).second;
            {
                NewContext inner(*this);
                op->body.accept(this);
            }
            if (fresh) bound_inside.erase(op->name);
            return;
        }
        bool nameable_here = by_name == LetsByName::WhenLarge && std::is_same_v<LetNode, LetStmt> &&
                             may_be_named(op->value);
        if (nameable_here) {
            auto it = nameable_value.find(op->name);
            if (it == nameable_value.end()) {
                nameable.emplace_back(op->name, op->value);
                nameable_value.emplace(op->name, op->value);
            } else if (!equal(it->second, op->value)) {
                ambiguous = true;
                nameable_here = false;
            }
        }
        const Expr value = fused_parts(op->value);
        double count = expanded_var_count(value);
        const double past = loop_ranges.empty() ? name_past_outside_loops : name_past;
        if (nameable_here && (count > past || named.count(op->name))) {
            // Named: the region refers to the let, which stands for one value.
            Expr self = Variable::make(op->value.type(), op->name);
            named.insert(op->name);
            // A loop's extent of at least one as its value says (max(n, 0) + 1): the
            // simplifier, knowing the value, drops the clamps of the quotients it divides
            // (a fused loop's parts, see build_stage), so the quotients' bounds need it too.
            if (is_extent_name(op->name) && op->value.type() == Int(32)) {
                Interval v = bounds_of_expr_in_scope(op->value, Scope<Interval>());
                if (v.has_lower_bound() && can_prove(GE::make(v.min, make_one(Int(32)))))
                    positive_names.insert(op->name);
            }
            scope.push(op->name, Interval::single_point(self));
            expanded_vars.push(op->name, 1.0);
            lets.emplace_back(op->name, self);
        } else {
            // Through the enclosing lets' values when that stays small, so that parts of the
            // value that move together (a min and an extent) keep moving together.
            scope.push(op->name, name_large_ends(op->name, bounds_over_loops(
                                                               value_for_bounds(value, narrowed))));
            expanded_vars.push(op->name, count);
            lets.emplace_back(op->name, value);
        }
        bool fresh = bound_inside.insert(op->name).second;
        {
            NewContext inner(*this);
            op->body.accept(this);
        }
        if (fresh) bound_inside.erase(op->name);
        lets.pop_back();
        expanded_vars.pop(op->name);
        scope.pop(op->name);
    }
    void visit(const Let *op) override { visit_let(op); }

    // The loops of the statement that fuse two (see build_stage): a loop over
    // max(n, 0) * max(c, 0) points whose variable t is divided by n for the outer part and
    // taken modulo n for the inner. Such a loop runs only when both counts are at least 1, so
    // t / n runs over [0, c - 1] and t % n over [0, n - 1]. Interval arithmetic on t / n
    // cannot see that without knowing that n >= 1: through t's last value it bounds each part
    // by an expression of both counts, and a region computed at the root over the tiles of a
    // fused loop then mixes the extents of its dimensions, growing with every stage. So each
    // quotient and remainder of such a loop's variable by its inner count becomes a variable
    // of its own, with that range, where expressions are read from the statement (before
    // their lets are expanded).
    // Returns whether `op` is such a loop (and was entered).
    std::vector<FusedLoop> fused_loops;
    bool enter_fused_loop(const For *op) {
        const Mul *points = op->extent.as<Mul>();
        auto count = [](const Expr &e) {
            const Max *m = e.as<Max>();
            return m && is_const_zero(m->b) ? m->a : Expr();
        };
        if (!points || !is_const_zero(op->min)) return false;
        Expr n = count(points->a), c = count(points->b);
        if (!n.defined() || !c.defined()) return false;
        FusedLoop f{op->name, op->name + ".quotient", op->name + ".remainder", simplify(n)};
        Type t = op->extent.type();
        auto upto = [&](const Expr &count) {
            Expr last =
                bounds_over_loops(value_for_bounds(Sub::make(count, make_one(t)), narrowed)).max;
            return Interval(make_zero(t), last);
        };
        scope.push(f.quotient, upto(c));
        scope.push(f.remainder, upto(n));
        for (const std::string *name : {&f.quotient, &f.remainder}) {
            bound_inside.insert(*name);
            expanded_vars.push(*name, 1.0);
        }
        fused_loops.push_back(f);
        return true;
    }
    void leave_fused_loop() {
        for (const std::string *n : {&fused_loops.back().quotient, &fused_loops.back().remainder}) {
            bound_inside.erase(*n);
            expanded_vars.pop(*n);
            scope.pop(*n);
        }
        fused_loops.pop_back();
    }

    // e with the quotients and remainders of the fused loops' variables by their inner counts
    // replaced by their variables.
    Expr fused_parts(const Expr &e) const {
        if (fused_loops.empty() || !e.defined()) return e;
        return ReplaceFusedParts(fused_loops).mutate(e);
    }
    std::vector<Expr> fused_parts(const std::vector<Expr> &es) const {
        std::vector<Expr> out;
        for (const Expr &e : es)
            out.push_back(fused_parts(e));
        return out;
    }

    // The first and last iteration of each loop inside the statement around the current
    // point, innermost last, in terms of what the lets around the loop stand for.
    struct LoopRange {
        std::string name;
        Expr first, last;
    };
    std::vector<LoopRange> loop_ranges;

    // The named lets known to be at least 1 (loop extents).
    std::set<std::string> positive_names;
    // e with each division by such a let d written as a division by max(d, 1), which is
    // the same, for interval arithmetic to see the divisor's sign.
    Expr with_positive_divisors(const Expr &e) const {
        if (positive_names.empty()) return e;
        class Rewrite : public IRMutator {
        public:
            explicit Rewrite(const std::set<std::string> &names) : names(names) {}

        private:
            const std::set<std::string> &names;
            using IRMutator::visit;
            Expr visit(const Div *op) override {
                Expr a = mutate(op->a);
                const Variable *d = op->b.as<Variable>();
                if (!d || !names.count(d->name)) return Div::make(a, mutate(op->b));
                return Div::make(a, Max::make(op->b, make_one(op->b.type())));
            }
        };
        return Rewrite(positive_names).mutate(e);
    }

    // The bounds of `e` (its lets expanded or not), where e moves one way in loops inside the
    // statement (is_monotonic, or linear after simplification): each such loop's variable is
    // replaced by its first or last iteration (by that direction) before the bounds are
    // taken, innermost loop first. So what
    // the loops' ranges share with the rest of e cancels: the last point of a tile rounded up
    // to a multiple of 4, min + ((extent - 1) / 4) * 4 + 3, is bounded by the tile's max + 3,
    // where bounding the loop apart would add the largest extent to the largest min. Rounded
    // quotients are bounded also as remainders (see bounds_of_expr_in_scope_with_remainders).
    Interval bounds_over_loops(const Expr &value) {
        const Expr e = with_positive_divisors(value);
        if (loop_ranges.empty() || !e.type().is_int() || expanded_var_count(e) > 64)
            return bounds_of_expr_in_scope_with_remainders(e, scope);
        Expr lo = e, hi = e;
        // The variables of each side, kept up to date: there may be hundreds of loops around
        // (a chain of stages computed at one another's loops), and e uses few of them.
        std::set<std::string> lo_vars = free_vars(e), hi_vars = lo_vars;
        bool replaced = false;
        for (auto it = loop_ranges.rbegin(); it != loop_ranges.rend(); ++it) {
            if (narrowed.count(it->name) || !it->first.defined() || !it->last.defined()) continue;
            if (it->first.type() != e.type()) continue;
            for (Expr *side : {&lo, &hi}) {
                std::set<std::string> &vars = side == &lo ? lo_vars : hi_vars;
                if (!vars.count(it->name)) continue;
                Monotonic m = is_monotonic(*side, it->name);
                if (m == Monotonic::Unknown) {
                    // Linear after simplification, though not term by term.
                    Expr v = Variable::make(e.type(), it->name);
                    auto step = as_const_int(simplify(Sub::make(
                        substitute(it->name, Add::make(v, make_one(e.type())), *side), *side)));
                    if (!step) continue;
                    m = *step >= 0 ? Monotonic::Increasing : Monotonic::Decreasing;
                }
                if (m == Monotonic::Constant) continue;
                bool take_last = (m == Monotonic::Increasing) == (side == &hi);
                *side = simplify(substitute(it->name, take_last ? it->last : it->first, *side));
                vars = free_vars(*side);
                replaced = true;
            }
        }
        if (!replaced) return bounds_of_expr_in_scope_with_remainders(e, scope);
        Interval b_lo = bounds_of_expr_in_scope_with_remainders(lo, scope);
        Interval b_hi = bounds_of_expr_in_scope_with_remainders(hi, scope);
        // An end the substituted form leaves unbounded comes from e as it is.
        if (!b_lo.has_lower_bound() || !b_hi.has_upper_bound()) {
            Interval plain = bounds_of_expr_in_scope_with_remainders(e, scope);
            if (!b_lo.has_lower_bound()) b_lo.min = plain.min;
            if (!b_hi.has_upper_bound()) b_hi.max = plain.max;
        }
        return Interval(b_lo.min, b_hi.max);
    }

    // e with the lets in scope replaced by their values (innermost first, so a let's value
    // may use outer ones), then simplified.
    Expr expand_lets(const Expr &e) const { return simplify(substitute_lets(lets, e)); }
    // The same where that has at most 64 variables; otherwise e itself, whose lets the scope
    // bounds. A loop over a Func's region computed at the root has ends whose lets expand to
    // the union of every consumer's tiles (fused, clamped, shifted inwards): simplifying
    // those, once for each access inside the loop, took most of the 1.7 s that bounds
    // inference took for an MLP of two tiled matrix products.
    Expr expand_lets_if_small(const Expr &e) const {
        return expanded_var_count(e) <= 64 ? expand_lets(e) : e;
    }

    // A let's value to take bounds of: with the enclosing lets expanded, except those in
    // `keep` (variables a guard has narrowed, whose narrowed range must be used), when that
    // stays small to build and simplifies to a small expression; otherwise the value itself.
    // A min or max too large to expand whole has its operands expanded one by one (two levels
    // down): one of them may still be bounded tightly, as the end of a region written as its
    // start plus its extent is once both are expanded and cancel.
    Expr value_for_bounds(const Expr &value, const std::set<std::string> &keep,
                          int depth = 2) const {
        if (expanded_var_count(value) <= 1024) {
            Expr expanded = simplify(substitute_lets(lets, value, keep));
            int nodes = 0;
            visit_each<Variable>(expanded, [&](const Variable *) { nodes++; });
            if (nodes <= 64) return expanded;
        }
        if (depth > 0) {
            if (const Min *m = value.as<Min>())
                return Min::make(value_for_bounds(m->a, keep, depth - 1),
                                 value_for_bounds(m->b, keep, depth - 1));
            if (const Max *m = value.as<Max>())
                return Max::make(value_for_bounds(m->a, keep, depth - 1),
                                 value_for_bounds(m->b, keep, depth - 1));
        }
        return value;
    }
    void visit(const LetStmt *op) override { visit_let(op); }
    // The variables (loops and lets) that the guards around the current point narrowed.
    std::set<std::string> narrowed;
    // Inside `if (v < e)` (and <=, >, >=, conjunctions of them) v's range is narrower:
    // guarded tails of split loops write only up to the guard.
    void visit(const IfThenElse *op) override {
        if (passes_over(op)) return;
        op->condition.accept(this);
        std::vector<std::string> pushed;
        // Whether some conjunct of the guard depends only on the loops around the statement:
        // then whole iterations of those loops may run nothing here.
        bool saved_skips = skips_iterations;
        skips_iterations = false;
        // A guard in terms of names outside the statement only (not of its loops, nor of
        // those around it) makes the accesses inside conditional, as a loop that may not run
        // does (a Func computed before consumers that may not run is guarded so); it narrows
        // no range. The other conjuncts narrow the ranges of the variables they test.
        size_t guards = 0;
        Expr condition;
        for (const Expr &c : conjuncts(fused_parts(op->condition))) {
            bool outside = count_nodes(c, 64) < 64;
            for (const std::string &n : free_vars(c))
                outside = outside && !bound_inside.count(n) && !loop_names.count(n);
            if (outside) {
                loops_run.push_back(c);
                guards++;
            } else {
                condition = condition.defined() ? make_and(condition, c) : c;
            }
        }
        if (!condition.defined()) condition = const_true();
        for (Expr c : conjuncts(condition)) {
            if (expanded_var_count(c) > 256) continue;
            c = expand_lets(c); // in terms of loops and of names outside the statement
            bool outer = uses_vars(c, loop_names);
            for (const std::string &n : free_vars(c))
                outer = outer && !bound_inside.count(n);
            skips_iterations = skips_iterations || outer;
        }
        narrow(condition, pushed);
        skips_iterations = saved_skips;
        std::set<std::string> saved_narrowed = narrowed;
        if (!pushed.empty()) {
            std::set<std::string> now(pushed.begin(), pushed.end());
            now.erase("");
            narrowed.insert(now.begin(), now.end());
            for (const auto &let : lets) {
                if (narrowed.count(let.first) || named.count(let.first) ||
                    !uses_vars(let.second, now))
                    continue;
                scope.push(let.first, bounds_over_loops(value_for_bounds(let.second, narrowed)));
                pushed.push_back(let.first);
                narrowed.insert(let.first);
                now.insert(let.first);
            }
        }
        {
            NewContext inner(*this);
            op->then_case.accept(this);
        }
        loops_run.resize(loops_run.size() - guards);
        narrowed = saved_narrowed;
        for (const std::string &n : pushed) {
            if (n.empty()) {
                expr_guards.pop_back();
            } else {
                scope.pop(n);
            }
        }
        if (op->else_case.defined()) op->else_case.accept(this);
    }
    // Guards on expressions that are not a single variable (`ko * 16 + ki < 203`, a split
    // reduction's predicate): an index equal to the guarded expression plus an offset that
    // none of its variables change (a constant, or the RDom's min, `in.min.0 + ko * 16 + ki`)
    // is bounded by the guard plus that offset too.
    struct ExprGuard {
        Expr e; // with the enclosing lets expanded
        Expr bound;
        bool upper;
    };
    std::vector<ExprGuard> expr_guards;

    Interval guarded(const Expr &index, Interval i) {
        if (expr_guards.empty() || !index.type().is_int() || expanded_var_count(index) > 256)
            return i;
        Expr expanded = expand_lets(index);
        for (const ExprGuard &g : expr_guards) {
            if (g.e.type() != expanded.type()) continue; // an int8 value's guard, an int32 index
            Expr offset = simplify(Sub::make(expanded, g.e));
            if (!is_const(offset) && uses_vars(offset, free_vars(g.e))) continue;
            Interval b = bounds_of_expr_in_scope(Add::make(g.bound, offset), scope);
            if (g.upper && b.has_upper_bound()) {
                i.max = i.has_upper_bound() ? simplify(Min::make(i.max, b.max)) : b.max;
            } else if (!g.upper && b.has_lower_bound()) {
                i.min = i.has_lower_bound() ? simplify(Max::make(i.min, b.min)) : b.min;
            }
        }
        return i;
    }

    void narrow(const Expr &c, std::vector<std::string> &pushed) {
        if (const And *a = c.as<And>()) {
            narrow(a->a, pushed);
            narrow(a->b, pushed);
            return;
        }
        const Variable *v = nullptr;
        Expr bound;
        bool upper = true;
        Expr guarded_expr;
        if (const LT *lt = c.as<LT>()) {
            v = lt->a.as<Variable>();
            guarded_expr = lt->a;
            bound = Sub::make(lt->b, make_one(lt->b.type()));
        } else if (const LE *le = c.as<LE>()) {
            v = le->a.as<Variable>();
            guarded_expr = le->a;
            bound = le->b;
        } else if (const GT *gt = c.as<GT>()) {
            v = gt->a.as<Variable>();
            guarded_expr = gt->a;
            bound = Add::make(gt->b, make_one(gt->b.type()));
            upper = false;
        } else if (const GE *ge = c.as<GE>()) {
            v = ge->a.as<Variable>();
            guarded_expr = ge->a;
            bound = ge->b;
            upper = false;
        }
        // (Only of types that do not wrap: the offset arithmetic below assumes it.)
        if (!v && guarded_expr.defined() && guarded_expr.type().is_int() &&
            guarded_expr.type().bits >= 32) {
            expr_guards.push_back({expand_lets(guarded_expr), expand_lets(bound), upper});
            pushed.push_back(""); // popped with the variables: "" marks an expression guard
            return;
        }
        if (!v || !v->type.is_int() || !scope.contains(v->name) || named.count(v->name)) return;
        Interval b = bounds_of_expr_in_scope(expand_lets(bound), scope);
        Interval i = scope.get(v->name);
        // A variable that is one point here (an outer loop's variable) is clamped at both
        // ends alike: inside the guard that changes no value it takes, and it stays one point,
        // so a region's min and max keep moving together.
        // (A loop of the statement that runs once is no such point: it runs over the region
        // of a stage, and where the guard fails, the points it leaves out are in the region
        // anyway. Clamped, they would widen it.)
        bool point = !bound_inside.count(v->name) && i.has_lower_bound() && i.has_upper_bound() &&
                     equal(i.min, i.max);
        // Where the guard may hold for no value of the range (tail iterations of an outer
        // loop past the end), the range there becomes the guard's bound alone rather than
        // empty: a region with a negative extent would stretch the bounds of everything
        // computed over the enclosing loops, and one point the consumer reads elsewhere costs
        // nothing. Only where the guard can skip whole iterations of the loops around the
        // statement (a conjunct depends on those loops alone: the outer loop of a guarded
        // split), for ranges that move with those loops, and that they may leave empty: a
        // range that stays non-empty keeps its simpler form, which gives tighter bounds
        // further on.
        auto may_be_empty = [&] {
            if (!skips_iterations || !i.has_lower_bound() || !i.has_upper_bound() ||
                !uses_vars(i.min, loop_names))
                return false;
            Interval d = bounds_of_expr_in_scope(simplify(Sub::make(i.max, i.min)), facts);
            return !(d.has_lower_bound() && can_prove(GE::make(d.min, make_zero(d.min.type()))));
        };
        if (upper && b.has_upper_bound()) {
            i.max = i.has_upper_bound() ? simplify(Min::make(i.max, b.max)) : b.max;
            if (point)
                i.min = i.max;
            else if (may_be_empty())
                i.min = simplify(Min::make(i.min, i.max));
        } else if (!upper && b.has_lower_bound()) {
            i.min = i.has_lower_bound() ? simplify(Max::make(i.min, b.min)) : b.min;
            if (point)
                i.max = i.min;
            else if (may_be_empty())
                i.max = simplify(Max::make(i.max, i.min));
        } else {
            return;
        }
        scope.push(v->name, i);
        pushed.push_back(v->name);
    }

    void visit(const For *op) override {
        if (passes_over(op)) return;
        op->min.accept(this);
        op->extent.accept(this);
        // The first and last iteration, written in terms of what the lets around the loop
        // stand for, so that a min and an extent that move together (min = x, extent = 1)
        // give a last iteration that moves with them instead of two separate ranges.
        const Expr min = fused_parts(op->min), extent = fused_parts(op->extent);
        Expr first = expand_lets_if_small(min);
        Expr last = expand_lets_if_small(Sub::make(Add::make(min, extent), make_one(min.type())));
        Interval min_b = bounds_of_expr_in_scope(first, scope);
        Interval max_b = bounds_of_expr_in_scope(last, scope);
        scope.push(op->name, Interval(min_b.min, max_b.max));
        Expr runs = simplify(GT::make(expand_lets(extent), make_zero(extent.type())));
        bool known = !is_true(runs);
        for (const std::string &n : free_vars(runs))
            known = known && !bound_inside.count(n);
        if (known) loops_run.push_back(runs);
        bool fresh = bound_inside.insert(op->name).second;
        loop_ranges.push_back({op->name, first, last});
        const bool fused = enter_fused_loop(op);
        {
            NewContext inner(*this);
            op->body.accept(this);
        }
        if (fused) leave_fused_loop();
        loop_ranges.pop_back();
        if (fresh) bound_inside.erase(op->name);
        if (known) loops_run.pop_back();
        scope.pop(op->name);
    }
};

} // namespace

namespace {

Access find_box(const Stmt &s, const std::string &name, bool provides, const Scope<Interval> &scope,
                const Scope<Interval> &facts, LetsByName by_name) {
    RelevantNames r(name, provides);
    if (s.defined()) s.accept(&r);
    std::set<std::string> relevant = r.result();
    FindBox f(name, provides, scope, facts, by_name, &relevant, &r.reaching);
    if (s.defined()) s.accept(&f);
    if (f.ambiguous) return find_box(s, name, provides, scope, facts, LetsByName::Never);
    Access a = f.result;
    if (by_name != LetsByName::Never) a.definitions = f.definitions_needed();
    return a;
}

} // namespace

std::vector<Stmt> checks_buffer_covers(const std::string &buffer, const Access &read,
                                       const std::string &described) {
    std::vector<Stmt> checks;
    auto i64 = [](Expr e) { return cast(Int(64), std::move(e)); };
    for (int d = 0; d < int(read.box.size()); d++) {
        auto field = [&](BufferField f) {
            return i64(Variable::make(Int(32), buffer_field_name(buffer, f, d)));
        };
        Expr mn = field(BufferField::Min);
        Expr mx = Sub::make(Add::make(mn, field(BufferField::Extent)), make_one(Int(64)));
        Expr need_min = simplify(widen_int32(read.box[size_t(d)].min)),
             need_max = simplify(widen_int32(read.box[size_t(d)].max));
        // An empty region needs nothing, nor does a read in loops that do not run (an empty
        // output's producers).
        Expr ok = make_or(LT::make(need_max, need_min),
                          make_and(LE::make(mn, need_min), GE::make(mx, need_max)));
        if (read.condition.defined()) ok = make_or(Not::make(read.condition), ok);
        Expr msg = Call::make(Int(32), Intrinsic::runtime_error,
                              {make_const(Int(32), int64_t(RuntimeErrorKind::InputTooSmall)),
                               StringImm::make(described), make_const(Int(64), int64_t(d)),
                               i64(need_min), i64(need_max), mn, mx},
                              Call::Intrinsic);
        checks.push_back(AssertStmt::make(simplify(ok), msg));
    }
    return checks;
}

Stmt with_definitions(const Access &a, Stmt s) {
    for (auto it = a.definitions.rbegin(); it != a.definitions.rend(); ++it)
        s = LetStmt::make(it->first, it->second, s);
    return s;
}

Stmt with_used_definitions(const Access &a, Stmt s) {
    std::set<std::string> used = free_vars(s);
    for (auto it = a.definitions.rbegin(); it != a.definitions.rend(); ++it) {
        if (!used.count(it->first)) continue;
        for (const std::string &n : free_vars(it->second))
            used.insert(n);
        s = LetStmt::make(it->first, it->second, s);
    }
    return s;
}

void merge_definitions(Access &into, const Access &from) {
    for (const auto &d : from.definitions) {
        bool have = false;
        for (const auto &h : into.definitions)
            have = have || h.first == d.first;
        if (!have) into.definitions.push_back(d);
    }
}

Access box_required(const Stmt &s, const std::string &name, const Scope<Interval> &scope,
                    const Scope<Interval> &facts, LetsByName by_name) {
    return find_box(s, name, false, scope, facts, by_name);
}

Access box_required(const Expr &e, const std::string &name, const Scope<Interval> &scope) {
    FindBox f(name, false, scope);
    if (e.defined()) e.accept(&f);
    return f.result;
}

Access box_provided(const Stmt &s, const std::string &name, const Scope<Interval> &scope,
                    const Scope<Interval> &facts, LetsByName by_name) {
    return find_box(s, name, true, scope, facts, by_name);
}

} // namespace lowering
} // namespace aicf
