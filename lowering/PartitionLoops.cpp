#include "lowering/PartitionLoops.h"
#include "lowering/LinearTests.h"

#include "dsl/Names.h"

#include "dsl/ir/Bounds.h"
#include "dsl/ir/IREquality.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Scope.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// Whether running s changes nothing: constants evaluated, tests that fail without an else,
// loops and lets around nothing.
bool does_nothing(const Stmt &s) {
    if (!s.defined()) return true;
    if (const Evaluate *e = s.as<Evaluate>()) return is_const(e->value);
    if (const Block *b = s.as<Block>()) return does_nothing(b->first) && does_nothing(b->rest);
    if (const IfThenElse *i = s.as<IfThenElse>()) {
        if (is_false(i->condition)) return does_nothing(i->else_case);
        return does_nothing(i->then_case) && does_nothing(i->else_case);
    }
    if (const LetStmt *l = s.as<LetStmt>()) return does_nothing(l->body);
    if (const For *f = s.as<For>()) return does_nothing(f->body);
    return false;
}

// Loops partitioned inside one another at most this deep: each partition copies the body
// at most three times (prologue, steady state, epilogue), so the code grows at most 27-fold.
const int max_partition_depth = 3;
// Sides of a test larger than this (as trees), once the lets inside the loop are substituted,
// are not analysed (the bound would cost more to compute than the test it removes).
const int max_condition_nodes = 512;

bool is_likely(const Expr &e) {
    const Call *c = e.as<Call>();
    return c && c->is_intrinsic(Intrinsic::likely) && c->args.size() == 1;
}

Expr strip_likely(const Expr &e) {
    return is_likely(e) ? strip_likely(e.as<Call>()->args[0]) : e;
}

// The conjuncts of a condition, a likely() conjunction split too. `likely` says, per conjunct,
// whether it was marked likely.
std::vector<Expr> conjuncts_of(const Expr &c, std::vector<bool> *likely = nullptr,
                               bool marked = false) {
    if (is_likely(c)) return conjuncts_of(strip_likely(c), likely, true);
    if (const And *a = c.as<And>()) {
        std::vector<Expr> l = conjuncts_of(a->a, likely, marked),
                          r = conjuncts_of(a->b, likely, marked);
        l.insert(l.end(), r.begin(), r.end());
        return l;
    }
    if (likely) likely->push_back(marked);
    return {c};
}

// Whether a bound can be computed once before the loop: no reads of memory, no calls with
// effects, and none of the names bound inside the loop.
bool computable_before(const Expr &e, const std::set<std::string> &inside) {
    bool ok = true;
    visit_each<Load>(e, [&](const Load *) { ok = false; });
    visit_each<Call>(e, [&](const Call *c) { ok = ok && c->call_type == Call::PureIntrinsic; });
    if (!ok) return false;
    for (const std::string &n : free_vars(e))
        if (inside.count(n)) return false;
    return true;
}

// What one test says about the loop variable v wherever it passes for every value of the
// names inside the loop: v < upper (exclusive) or v >= lower.
struct Constraint {
    Expr lower, upper; // 64-bit; one of them defined
    Expr no_wrap;      // true when the test's int32 arithmetic cannot wrap anywhere in the loop
    const IRNode *node = nullptr; // the IfThenElse, Select, Min or Max the test is of
    // The bound is exact: the test depends on no name bound inside the loop but v, and the
    // rest of it is its own bound. It then fails wherever v is past its bound, not only
    // passes wherever v is within it.
    bool exact = false;
};

// Walks a loop's body and finds the tests that constrain its variable.
class FindTests : public IRVisitor {
public:
    explicit FindTests(const For *loop) : v(loop->name) {
        inside.insert(v);
        Expr last = Sub::make(Add::make(loop->min, loop->extent), make_one(loop->min.type()));
        scope.push(v, Interval(loop->min, last));
        innermost = true;
        visit_each<For>(loop->body, [&](const For *f) {
            innermost =
                innermost && f->for_type != ForType::Serial && f->for_type != ForType::Parallel;
        });
    }

    std::vector<Constraint> constraints;
    // For each statement or select with tests: which of its conjuncts hold in the steady
    // state (every occurrence of the node gave a constraint for them).
    std::map<const IRNode *, std::vector<bool>> holds;
    // How many times each IfThenElse or Select with tests occurs in the body.
    std::map<const IRNode *, int> occurrences;
    // For each Min or Max with a test: whether the steady state keeps its first operand (else
    // its second).
    std::map<const IRNode *, bool> keeps_first;
    // A GPU barrier, GPU loop or shared allocation inside: threads must reach barriers
    // together, which they would not if the split point differed between them.
    bool unsafe = false;

private:
    std::string v;
    Scope<Interval> scope;                          // v and the loops inside, and their ranges
    std::vector<std::pair<std::string, Expr>> lets; // lets inside, outermost first
    std::vector<bool> let_uses_v;                   // whether each let's value depends on v
    // Whether each node seen under the current lets depends on v (cleared when they change).
    std::unordered_map<const IRNode *, bool> uses_v;
    Scope<int64_t> let_sizes;     // their values' sizes with lets substituted
    std::set<std::string> inside; // every name bound inside the loop, and v
    // The serial and parallel loops inside that may be partitioned themselves. A test that
    // depends on one of them is left to the innermost such loop: partitioning the outer loop
    // too would copy code without removing the test.
    std::set<std::string> partitionable;
    int vectorized = 0;
    // No serial or parallel loop inside: a min or max of the variable is a test only here,
    // where it is on the path of every iteration (a ShiftInwards tail's min(v * 16, n - 16),
    // a clamp at an edge). Further out, the mins of the regions computed per iteration
    // would copy whole loop nests to save a comparison each.
    bool innermost = false;

    using IRVisitor::visit;

    void visit(const For *op) override {
        if (is_gpu_loop(op->for_type)) unsafe = true;
        if ((op->for_type == ForType::Serial || op->for_type == ForType::Parallel) &&
            vectorized == 0)
            partitionable.insert(op->name);
        if (op->for_type == ForType::Vectorized) vectorized++;
        op->min.accept(this);
        op->extent.accept(this);
        Interval range;
        Expr last = Sub::make(Add::make(op->min, op->extent), make_one(op->min.type()));
        Interval lo = bounds_of_expr_in_scope(op->min, scope),
                 hi = bounds_of_expr_in_scope(last, scope);
        if (lo.has_lower_bound() && hi.has_upper_bound()) range = Interval(lo.min, hi.max);
        // Bounds that change with v (or with names bound inside) cannot bound the tests.
        if (range.is_bounded() &&
            (!computable_before(range.min, inside) || !computable_before(range.max, inside)))
            range = Interval::everything();
        inside.insert(op->name);
        scope.push(op->name, range);
        op->body.accept(this);
        scope.pop(op->name);
        if (op->for_type == ForType::Vectorized) vectorized--;
    }
    template <typename LetOrLetStmt> void visit_let(const LetOrLetStmt *op) {
        op->value.accept(this);
        let_uses_v.push_back(depends_on_v(op->value));
        lets.emplace_back(op->name, op->value);
        uses_v.clear();
        let_sizes.push(op->name, tree_size(op->value, max_condition_nodes, let_sizes));
        inside.insert(op->name);
        op->body.accept(this);
        let_sizes.pop(op->name);
        lets.pop_back();
        let_uses_v.pop_back();
        uses_v.clear();
    }
    // Whether e, its lets substituted, uses v: each node's answer remembered, so that asking
    // of every min and max of a chain of them costs the chain's length, not its square.
    bool depends_on_v(const Expr &e) {
        if (const Variable *var = e.as<Variable>()) {
            for (size_t i = lets.size(); i-- > 0;)
                if (lets[i].first == var->name) return let_uses_v[i];
            return var->name == v;
        }
        auto it = uses_v.find(e.get());
        if (it != uses_v.end()) return it->second;
        bool uses = false;
        if (const Let *let = e.as<Let>()) {
            // Its name hides v's or an outer let's in its body.
            const bool value = depends_on_v(let->value);
            lets.emplace_back(let->name, let->value);
            let_uses_v.push_back(value);
            std::unordered_map<const IRNode *, bool> outer;
            outer.swap(uses_v);
            const bool body = depends_on_v(let->body);
            uses_v.swap(outer);
            lets.pop_back();
            let_uses_v.pop_back();
            uses = value || body;
        } else {
            for (const Expr &child : children_of(e))
                uses = depends_on_v(child) || uses;
        }
        uses_v.emplace(e.get(), uses);
        return uses;
    }
    void visit(const LetStmt *op) override { visit_let(op); }
    void visit(const Let *op) override { visit_let(op); }
    void visit(const Call *op) override {
        if (op->is_intrinsic(Intrinsic::gpu_barrier)) unsafe = true;
        IRVisitor::visit(op);
    }
    void visit(const Allocate *op) override {
        // Shared memory is laid out per kernel: its allocations are not copied.
        if (op->memory_type == MemoryType::GPUShared) unsafe = true;
        IRVisitor::visit(op);
    }
    void visit(const IfThenElse *op) override {
        record(op, op->condition, false);
        IRVisitor::visit(op);
    }
    void visit(const Select *op) override {
        record(op, op->condition, true);
        IRVisitor::visit(op);
    }
    // min(a, b) with v on one side only is a test: a <= b (then it is a), where a has v.
    void visit(const Min *op) override {
        record_choice(op, op->a, op->b, true);
        IRVisitor::visit(op);
    }
    void visit(const Max *op) override {
        record_choice(op, op->a, op->b, false);
        IRVisitor::visit(op);
    }
    // A node met more than once (a shared subexpression) is a test only if every occurrence,
    // under the lets around it, is one with v on the same side.
    void record_choice(const IRNode *node, const Expr &a, const Expr &b, bool is_min) {
        if (!innermost || a.type() != Int(32)) return;
        bool in_a = depends_on_v(a), in_b = depends_on_v(b);
        auto it = keeps_first.emplace(node, in_a).first;
        if (in_a == in_b || it->second != in_a) {
            // Never dropped: this occurrence does not hold as the others might.
            occurrences[node]++;
            auto [h, fresh] = holds.emplace(node, std::vector<bool>{false});
            if (!fresh) std::fill(h->second.begin(), h->second.end(), false);
            return;
        }
        const Expr &with = in_a ? a : b, &without = in_a ? b : a;
        // A clamp, max(min(e, hi), lo): the max is a test of min(e, hi), which the steady
        // state computes as e wherever the min's own test holds. So the max's test is read
        // as e >= lo, and the max is dropped only where the min is. SteadyForm walks trees
        // (lets substituted), so a side too large to be a test is not walked.
        std::vector<const IRNode *> nested;
        SteadyForm steady_form(v, lets, nested);
        bool small = tree_size(with, max_condition_nodes, let_sizes) <= max_condition_nodes;
        Expr steady = small ? steady_form.mutate(with) : with;
        if (nested.empty() || steady_form.met_let) {
            record(node, is_min ? LE::make(with, without) : GE::make(with, without), false, false);
            return;
        }
        size_t first = constraints.size();
        record(node, is_min ? LE::make(steady, without) : GE::make(steady, without), false, false);
        // Past its bound, e fails the test but min(e, hi) need not (in max(max(e, a), 0),
        // max(e, a) >= 0 may hold where e < 0): the test is not known to fail there.
        for (size_t i = first; i < constraints.size(); i++)
            constraints[i].exact = false;
        auto &deps = depends_on[{node, 0}];
        deps.insert(deps.end(), nested.begin(), nested.end());
    }

    // An expression as the steady state computes it, where the tests of the mins and maxes in
    // it hold: each min or max with v on one side only is that side. `nested` gets those
    // nodes.
    class SteadyForm : public IRMutator {
    public:
        SteadyForm(const std::string &v, const std::vector<std::pair<std::string, Expr>> &lets,
                   std::vector<const IRNode *> &nested)
            : v(v), lets(lets), nested(nested), visible(lets.size()) {}
        // A Let inside: its names would hide those of `lets`, which this does not follow.
        bool met_let = false;

    private:
        const std::string &v;
        const std::vector<std::pair<std::string, Expr>> &lets; // outermost first
        std::vector<const IRNode *> &nested;
        size_t visible; // the lets a name here may refer to: lets[0, visible)
        using IRMutator::visit;
        // A let's value, as the nodes the visitor met (so that `nested` names them).
        Expr visit(const Variable *op) override {
            for (size_t i = visible; i-- > 0;) {
                if (lets[i].first != op->name) continue;
                size_t outer = visible;
                visible = i;
                Expr e = mutate(lets[i].second);
                visible = outer;
                return e;
            }
            return op;
        }
        template <typename MinOrMax> Expr choose(const MinOrMax *op) {
            Expr a = mutate(op->a), b = mutate(op->b);
            bool in_a = uses_var(a, v), in_b = uses_var(b, v);
            if (op->type == Int(32) && in_a != in_b) {
                nested.push_back(op);
                return in_a ? a : b;
            }
            if (a.same_as(op->a) && b.same_as(op->b)) return op;
            return MinOrMax::make(a, b);
        }
        Expr visit(const Min *op) override { return choose(op); }
        Expr visit(const Max *op) override { return choose(op); }
        Expr visit(const Let *op) override {
            met_let = true;
            return op;
        }
    };

public:
    // Clears the steady-state test of each min or max that was read through nested ones
    // (see record_choice) unless all of those hold too.
    void settle() {
        for (bool changed = true; changed;) {
            changed = false;
            for (const auto &[test, deps] : depends_on) {
                auto h = holds.find(test.first);
                if (h == holds.end() || test.second >= h->second.size() || !h->second[test.second])
                    continue;
                for (const IRNode *d : deps) {
                    auto hd = holds.find(d);
                    if (hd == holds.end() || hd->second.empty() || !hd->second[0]) {
                        h->second[test.second] = false;
                        changed = true;
                        break;
                    }
                }
            }
        }
    }

private:
    // For each test (a node and its conjunct) that was read through nested mins and maxes:
    // those.
    std::map<std::pair<const IRNode *, size_t>, std::vector<const IRNode *>> depends_on;

    // `nested`: whether a conjunct of an IfThenElse's or a Select's condition may be read as
    // the steady state computes it (each min and max of v in it the side with v, see
    // record_choice), when those mins and maxes are tests that hold too: the index of a
    // vector in a tail shifted inwards, min(v * 16, n - 16), in a test of the point it reads.
    void record(const IRNode *node, const Expr &condition, bool likely_only, bool nested = true) {
        std::vector<bool> marked;
        std::vector<Expr> parts = conjuncts_of(condition, &marked);
        std::vector<bool> ok(parts.size(), false);
        occurrences[node]++;
        for (size_t i = 0; i < parts.size(); i++) {
            if (likely_only && !marked[i]) continue;
            std::optional<Constraint> c = constraint_of(parts[i]);
            if (!c && nested && innermost &&
                tree_size(parts[i], max_condition_nodes, let_sizes) <= max_condition_nodes) {
                std::vector<const IRNode *> inner;
                SteadyForm steady_form(v, lets, inner);
                Expr steady = steady_form.mutate(parts[i]);
                if (!inner.empty() && !steady_form.met_let) {
                    c = constraint_of(steady);
                    if (c) {
                        c->exact = false;
                        auto &deps = depends_on[{node, i}];
                        deps.insert(deps.end(), inner.begin(), inner.end());
                    }
                }
            }
            if (!c) continue;
            c->node = node;
            constraints.push_back(*c);
            ok[i] = true;
        }
        auto [it, first] = holds.emplace(node, ok);
        if (!first) {
            for (size_t i = 0; i < ok.size(); i++)
                it->second[i] = it->second[i] && ok[i];
        }
    }

    // Reads `a < b` (and <=, >, >=) as e < 0 with e linear in v.
    std::optional<Constraint> constraint_of(const Expr &test) {
        Expr a, b;
        int64_t adjust = 0; // e = a - b + adjust
        if (const LT *op = test.as<LT>()) {
            a = op->a, b = op->b;
        } else if (const LE *op = test.as<LE>()) {
            a = op->a, b = op->b, adjust = -1;
        } else if (const GT *op = test.as<GT>()) {
            a = op->b, b = op->a;
        } else if (const GE *op = test.as<GE>()) {
            a = op->b, b = op->a, adjust = -1;
        } else {
            return std::nullopt;
        }
        if (a.type() != Int(32)) return std::nullopt;
        // As trees with the lets substituted: the walks below do not remember the nodes they
        // have seen, and substituting a let used twice doubles the tree.
        if (tree_size(a, max_condition_nodes, let_sizes) +
                tree_size(b, max_condition_nodes, let_sizes) >
            max_condition_nodes)
            return std::nullopt;
        a = substitute_lets(lets, a);
        b = substitute_lets(lets, b);
        if (uses_vars(a, partitionable) || uses_vars(b, partitionable)) return std::nullopt;
        std::vector<Linear> partials;
        std::vector<Expr> values; // other int32 values of the test (64-bit, in terms of v)
        const Type i64 = Int(64);
        std::optional<Linear> la = linear_in(a, v, partials), lb = linear_in(b, v, partials);
        int64_t coef = 0;
        Expr rest;
        if (la && lb) {
            if (__builtin_sub_overflow(la->coef, lb->coef, &coef)) return std::nullopt;
            rest = Add::make(Sub::make(la->rest, lb->rest), make_const(i64, adjust));
        } else {
            partials.clear();
            std::optional<Linear> q = quotient_test(a, b, v, adjust, partials, values);
            if (!q) return std::nullopt;
            coef = q->coef;
            rest = q->rest;
        }
        if (coef == 0 || coef == INT64_MIN) return std::nullopt;
        // coef * v + rest < 0 must hold for every value rest takes in the loop.
        Interval r = bounds_of_expr_in_scope(rest, scope);
        if (!r.has_upper_bound()) return std::nullopt;
        Expr most = simplify(r.max);
        if (!computable_before(most, inside)) return std::nullopt;
        Constraint c;
        // Exact where the bound is the rest itself: it uses no name bound inside the loop,
        // and interval arithmetic did not loosen it (t % 3 of an outer t is bounded by 2).
        c.exact = equal(simplify(rest), most);
        c.no_wrap = const_true();
        for (const Linear &p : partials)
            values.push_back(Add::make(
                Mul::make(cast(i64, Variable::make(Int(32), v)), make_const(i64, p.coef)), p.rest));
        for (const Expr &value : values) {
            Interval range = bounds_of_expr_in_scope(value, scope);
            if (!range.is_bounded()) return std::nullopt;
            Expr fits = And::make(GE::make(range.min, make_const(i64, int64_t(INT32_MIN))),
                                  LE::make(range.max, make_const(i64, int64_t(INT32_MAX))));
            fits = simplify(fits);
            if (!computable_before(fits, inside)) return std::nullopt;
            c.no_wrap = make_and(c.no_wrap, fits);
        }
        c.no_wrap = simplify(c.no_wrap);
        if (is_false(c.no_wrap)) return std::nullopt;
        if (coef > 0) {
            // v < -most / coef: v <= floor((-most - 1) / coef). Division is Euclidean, which
            // for a positive divisor is floor division.
            Expr k = make_const(i64, coef);
            c.upper = Add::make(
                Div::make(Sub::make(Sub::make(make_zero(i64), most), make_const(i64, int64_t(1))),
                          k),
                make_const(i64, int64_t(1)));
        } else {
            // -coef * v > most: v >= floor(most / -coef) + 1.
            c.lower =
                Add::make(Div::make(most, make_const(i64, -coef)), make_const(i64, int64_t(1)));
        }
        return c;
    }
};

// Removes the conjuncts that hold throughout the steady state.
class DropTests : public IRMutator {
public:
    DropTests(const std::map<const IRNode *, std::vector<bool>> &holds,
              const std::map<const IRNode *, bool> &keeps_first)
        : holds(holds), keeps_first(keeps_first) {}

private:
    const std::map<const IRNode *, std::vector<bool>> &holds;
    const std::map<const IRNode *, bool> &keeps_first;

    using IRMutator::visit;

    // The condition without its conjuncts that hold; undefined when none is left.
    Expr remaining(const IRNode *node, const Expr &condition) {
        auto it = holds.find(node);
        std::vector<bool> marked;
        std::vector<Expr> parts = conjuncts_of(condition, &marked);
        Expr left;
        for (size_t i = 0; i < parts.size(); i++) {
            if (it != holds.end() && i < it->second.size() && it->second[i]) continue;
            Expr p = mutate(parts[i]);
            if (marked[i]) p = Call::make(p.type(), Intrinsic::likely, {p});
            left = left.defined() ? And::make(left, p) : p;
        }
        return left;
    }

    Stmt visit(const IfThenElse *op) override {
        if (!holds.count(op)) return IRMutator::visit(op);
        Expr c = remaining(op, op->condition);
        Stmt then_case = mutate(op->then_case);
        if (!c.defined()) return then_case;
        Stmt else_case = op->else_case.defined() ? mutate(op->else_case) : Stmt();
        return IfThenElse::make(c, then_case, else_case);
    }
    Expr visit(const Select *op) override {
        if (!holds.count(op)) return IRMutator::visit(op);
        Expr c = remaining(op, op->condition);
        Expr t = mutate(op->true_value);
        if (!c.defined()) return t;
        return Select::make(c, t, mutate(op->false_value));
    }
    // A min or max whose test holds is the operand that test chose.
    template <typename MinOrMax> Expr choose(const MinOrMax *op) {
        auto it = holds.find(op);
        if (it == holds.end() || it->second.empty() || !it->second[0]) return IRMutator::visit(op);
        return mutate(keeps_first.at(op) ? op->a : op->b);
    }
    Expr visit(const Min *op) override { return choose(op); }
    Expr visit(const Max *op) override { return choose(op); }
};

// Takes the branch a condition chooses where it fails: an IfThenElse becomes its else case,
// a Select its false value, a Min or Max the operand its test did not choose.
class FailTest : public IRMutator {
public:
    FailTest(const IRNode *node, const std::map<const IRNode *, bool> &keeps_first)
        : node(node), keeps_first(keeps_first) {}

private:
    const IRNode *node;
    const std::map<const IRNode *, bool> &keeps_first;

    using IRMutator::visit;

    Stmt visit(const IfThenElse *op) override {
        if (op != node) return IRMutator::visit(op);
        return op->else_case.defined() ? mutate(op->else_case) : Evaluate::make(make_zero(Int(32)));
    }
    Expr visit(const Select *op) override {
        if (op != node) return IRMutator::visit(op);
        return mutate(op->false_value);
    }
    template <typename MinOrMax> Expr fail(const MinOrMax *op) {
        if (op != node) return IRMutator::visit(op);
        return mutate(keeps_first.at(op) ? op->b : op->a);
    }
    Expr visit(const Min *op) override { return fail(op); }
    Expr visit(const Max *op) override { return fail(op); }
};

class Partitioner : public IRMutator {
public:
    explicit Partitioner(const std::set<std::string> &never) : never(never) {}

private:
    const std::set<std::string> &never;
    int depth = 0;
    int vectorized = 0; // vectorized loops around: a split point must be the same in every lane

    using IRMutator::visit;

    Stmt visit(const For *op) override {
        if (op->for_type == ForType::Vectorized) {
            vectorized++;
            Stmt s = IRMutator::visit(op);
            vectorized--;
            return s;
        }
        bool parallel = op->for_type == ForType::Parallel;
        if ((op->for_type != ForType::Serial && !parallel) || vectorized > 0 ||
            depth >= max_partition_depth || never.count(op->name))
            return IRMutator::visit(op);
        FindTests tests(op);
        op->body.accept(&tests);
        tests.settle();
        bool lower = false, upper = false;
        for (const Constraint &c : tests.constraints) {
            lower = lower || c.lower.defined();
            upper = upper || c.upper.defined();
        }
        bool removes = false;
        for (const auto &node : tests.holds)
            for (bool h : node.second)
                removes = removes || h;
        if (tests.unsafe || !removes || (!lower && !upper)) return IRMutator::visit(op);

        const Type i64 = Int(64), i32 = op->min.type();
        Expr min = cast(i64, op->min), end = Add::make(min, cast(i64, op->extent));
        Expr lo = min, hi = end, no_wrap = const_true();
        for (const Constraint &c : tests.constraints) {
            if (c.lower.defined()) lo = Max::make(lo, c.lower);
            if (c.upper.defined()) hi = Min::make(hi, c.upper);
            no_wrap = make_and(no_wrap, c.no_wrap);
        }
        no_wrap = simplify(no_wrap);
        // Where the tests' arithmetic could wrap, every iteration keeps its tests: the steady
        // state is empty, and the prologue (or else the epilogue) runs the whole loop.
        if (!is_true(no_wrap)) {
            if (lower)
                lo = Select::make(no_wrap, lo, end);
            else
                hi = Select::make(no_wrap, hi, min);
        }
        // min <= lo <= hi <= end; the three loops cover [min, lo), [lo, hi) and [hi, end).
        lo = simplify(Min::make(lo, end));
        hi = simplify(Max::make(Min::make(hi, end), lo));
        std::string lo_name = steady_min_name(op->name), hi_name = steady_end_name(op->name);
        Expr lo_var = Variable::make(i64, lo_name), hi_var = Variable::make(i64, hi_name);

        // Where one test alone bounds the loop from above (below), it fails throughout the
        // epilogue (prologue): v >= hi >= its bound. Those iterations then run only what the
        // test's failing branch runs (a guarded tail past the end of a split runs nothing, and
        // the producers computed for its consumer go with it). Only where the tests'
        // arithmetic cannot wrap: otherwise the epilogue may run the whole loop, and the
        // test may pass there.
        auto sole_test = [&](bool upper_side, bool wraps_or_not) -> const IRNode * {
            const IRNode *node = nullptr;
            int count = 0;
            for (const Constraint &c : tests.constraints) {
                if ((upper_side ? c.upper : c.lower).defined()) {
                    node = c.exact ? c.node : nullptr;
                    count++;
                }
            }
            if (count != 1 || !node || tests.occurrences[node] != 1 ||
                !(wraps_or_not || is_true(no_wrap)))
                return nullptr;
            return node;
        };
        const IRNode *fails_before = sole_test(false, false), *fails_after = sole_test(true, false);
        // Whether the prologue (epilogue) runs nothing wherever the arithmetic does not wrap:
        // its sole test fails there, and failing leaves nothing to run (a guarded tail past
        // the end of a split). It then runs no iterations there, however large the factor.
        auto idle_without_wrap = [&](bool upper_side) {
            const IRNode *test = sole_test(upper_side, true);
            return test &&
                   does_nothing(simplify(FailTest(test, tests.keeps_first).mutate(op->body)));
        };
        // (The prologue only where nothing can wrap: where its test's arithmetic might, its
        // extent would tell LLVM which way, and a test kept for wrapping values may fold.)
        const bool idle_before = lower && is_true(no_wrap) && idle_without_wrap(false),
                   idle_after = upper && idle_without_wrap(true);

        depth++;
        Stmt body = mutate(op->body);
        Stmt before = fails_before
                          ? mutate(FailTest(fails_before, tests.keeps_first).mutate(op->body))
                          : body;
        Stmt after =
            fails_after ? mutate(FailTest(fails_after, tests.keeps_first).mutate(op->body)) : body;
        Stmt steady = mutate(DropTests(tests.holds, tests.keeps_first).mutate(op->body));
        depth--;

        Stmt result;
        if (parallel) {
            // A parallel loop stays one loop (one fork and join); each iteration picks its
            // version of the body.
            Expr v = cast(i64, Variable::make(i32, op->name));
            Expr steady_here = And::make(LE::make(lo_var, v), LT::make(v, hi_var));
            // Outside the steady state: the epilogue's body when there is no prologue, the
            // prologue's when there is no epilogue.
            Stmt outside = !lower ? after : !upper ? before : body;
            result = For::make(op->name, op->min, op->extent, op->for_type, op->gpu_dim,
                               IfThenElse::make(steady_here, steady, outside));
            result = LetStmt::make(hi_name, hi, result);
            return LetStmt::make(lo_name, lo, result);
        }
        // Each extent is at most the loop's, so it fits its type; so does each min of a loop
        // that runs at least once.
        std::vector<Stmt> loops;
        // A prologue or epilogue idle where nothing wraps is not looped over there (and is
        // dropped where nothing can wrap).
        auto extent_of = [&](const Expr &count, bool idle) -> Expr {
            if (!idle) return count;
            if (is_true(no_wrap)) return Expr();
            return Select::make(no_wrap, make_zero(count.type()), count);
        };
        if (lower) {
            Expr count = extent_of(Sub::make(lo_var, min), idle_before);
            if (count.defined())
                loops.push_back(For::make(op->name, op->min, simplify(cast(i32, count)),
                                          op->for_type, op->gpu_dim, before));
        }
        loops.push_back(For::make(op->name, cast(i32, lo_var), cast(i32, Sub::make(hi_var, lo_var)),
                                  op->for_type, op->gpu_dim, steady));
        if (upper) {
            Expr count = extent_of(Sub::make(end, hi_var), idle_after);
            if (count.defined())
                loops.push_back(For::make(op->name, cast(i32, hi_var), simplify(cast(i32, count)),
                                          op->for_type, op->gpu_dim, after));
        }
        result = Block::make(loops);
        result = LetStmt::make(hi_name, hi, result);
        return LetStmt::make(lo_name, lo, result);
    }
};

} // namespace

Stmt partition_loops(const Stmt &s, const std::set<std::string> &never) {
    return Partitioner(never).mutate(s);
}

} // namespace lowering
} // namespace aicf
