// Lets and statements in the simplifier, and the indices of accesses to allocated storage.
// A statement that does nothing simplifies to an undefined Stmt; parents drop such children
// (Block::make skips them) or vanish themselves.

#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/SimplifyInternal.h"
#include "dsl/ir/Substitute.h"

#include <type_traits>

namespace aicf {
namespace ir {
namespace simplify_detail {

namespace {

// Values cheap enough to copy into every use. Constants, variables, and a variable plus or
// minus a constant cost nothing and let comparisons and bounds see how values relate.
bool is_var_plus_const(const Expr &e) {
    if (is_const(e) || e.as<Variable>()) return true;
    if (const Add *a = e.as<Add>()) return a->a.as<Variable>() && is_const(a->b);
    if (const Sub *s = e.as<Sub>()) return s->a.as<Variable>() && is_const(s->b);
    return false;
}

// A short sum of variables times constants (a split's `yo * 8 + y.min + 3`): copied into its
// uses, terms that cancel there do (the min of a realization against the min subtracted by
// its storage index), which address arithmetic and alias analysis need.
// A sum of at most three terms, each a variable or (depth allowing) a min or max of two such
// sums of variables: a tile's start clamped at the end of the data, `min(e - 32, bx * 32)`.
// Copied into its uses, it lets an index and the start of the storage it indexes cancel.
bool is_short_linear(const Expr &e, int depth = 1) {
    const int max_terms = 3;
    if (!is_linear_type(e.type()) || !no_overflow(e.type())) return false;
    LinearForm l = linear_form(e);
    if (l.terms.size() > size_t(max_terms)) return false;
    for (const Term &t : l.terms) {
        if (t.e.as<Variable>()) continue;
        const Min *mn = t.e.as<Min>();
        const Max *mx = t.e.as<Max>();
        if (depth == 0 || (!mn && !mx)) return false;
        if (!is_short_linear(mn ? mn->a : mx->a, depth - 1) ||
            !is_short_linear(mn ? mn->b : mx->b, depth - 1))
            return false;
    }
    return true;
}

bool is_substitutable(const Expr &e) {
    if (is_var_plus_const(e)) return true;
    if (const Broadcast *b = e.as<Broadcast>()) return is_substitutable(b->value);
    if (const Ramp *r = e.as<Ramp>())
        return is_var_plus_const(r->base) && is_var_plus_const(r->stride);
    return false;
}

// Whether ir binds (with a Let, LetStmt or For) any of the names.
template <typename IRHandle>
bool binds_any(const IRHandle &ir, const std::set<std::string> &names) {
    struct Finder : IRVisitor {
        const std::set<std::string> &names;
        bool found = false;
        explicit Finder(const std::set<std::string> &n) : names(n) {}
        using IRVisitor::visit;
        void visit(const Let *op) override {
            found = found || names.count(op->name);
            IRVisitor::visit(op);
        }
        void visit(const LetStmt *op) override {
            found = found || names.count(op->name);
            IRVisitor::visit(op);
        }
        void visit(const For *op) override {
            found = found || names.count(op->name);
            IRVisitor::visit(op);
        }
    } finder(names);
    if (ir.defined()) ir.accept(&finder);
    return finder.found;
}

// Whether e is built of integer constants and variables by arithmetic, min, max, select and
// comparisons alone.
bool is_integer_arithmetic(const Expr &e) {
    struct Check : IRVisitor {
        bool ok = true;
        using IRVisitor::visit;
        void visit(const Variable *op) override { ok = ok && op->type.is_int_or_uint(); }
        void visit(const Call *) override { ok = false; }
        void visit(const Load *) override { ok = false; }
        void visit(const Let *) override { ok = false; }
        void visit(const Cast *op) override {
            ok = ok && op->type.is_int_or_uint() && op->value.type().is_int_or_uint();
            IRVisitor::visit(op);
        }
        void visit(const Reinterpret *) override { ok = false; }
        void visit(const FloatImm *) override { ok = false; }
    } check;
    e.accept(&check);
    return check.ok;
}

} // namespace

template <typename LetNode, typename Body> Body Simplify::simplify_let(const LetNode *op) {
    Expr value = mutate(op->value);
    Expr replacement;
    if (is_substitutable(value) || (substitute_linear_lets && is_short_linear(value))) {
        // Substituting a variable must not let an inner binding of its name capture it.
        std::set<std::string> names = free_vars(value);
        if (names.empty() || !binds_any(op->body, names)) replacement = value;
    }
    // The same value as an enclosing let: use that let's variable.
    if (!replacement.defined() && !has_side_effects(value)) {
        Expr same = enclosing_let_with_value(value);
        if (same.defined() && !binds_any(op->body, {same.as<Variable>()->name})) replacement = same;
    }
    ConstBounds bounds = bounds_of(value);
    int uses_before = use_count[op->name];
    Body body;
    {
        std::vector<std::pair<std::string, int>> deps;
        for (const std::string &n : free_vars(value))
            deps.emplace_back(n, current_binding(n));
        Binding bind(*this, op->name, bounds, replacement);
        bool remember = !replacement.defined() && !has_side_effects(value);
        if (remember) {
            deps.emplace_back(op->name, current_binding(op->name));
            let_values.push_back({value, op->name, deps});
        }
        body = mutate(op->body);
        if (remember) let_values.pop_back();
    }
    if (replacement.defined()) return body;
    bool side_effects = has_side_effects(value);
    if constexpr (std::is_same_v<Body, Stmt>) {
        if (!body.defined()) return side_effects ? Evaluate::make(value) : Stmt();
    }
    bool used = use_count[op->name] != uses_before && uses_var(body, op->name);
    if (!used && !side_effects) return body;
    if (value.same_as(op->value) && body.same_as(op->body)) return op;
    return LetNode::make(op->name, value, body);
}

Expr Simplify::visit(const Let *op) {
    return simplify_let<Let, Expr>(op);
}
Stmt Simplify::visit(const LetStmt *op) {
    return simplify_let<LetStmt, Stmt>(op);
}

Stmt Simplify::visit(const AssertStmt *op) {
    Expr condition = mutate(op->condition);
    // A provably false assert stays: it is the program's way to fail at run time.
    if (is_true(condition)) return Stmt();
    Expr message = mutate(op->message);
    if (condition.same_as(op->condition) && message.same_as(op->message)) return op;
    return AssertStmt::make(condition, message);
}

Stmt Simplify::visit(const ProducerConsumer *op) {
    Stmt body = mutate(op->body);
    if (!body.defined()) return Stmt();
    if (body.same_as(op->body)) return op;
    return ProducerConsumer::make(op->name, op->is_producer, body);
}

Stmt Simplify::visit(const For *op) {
    Expr min = mutate(op->min), extent = mutate(op->extent);
    ConstBounds extent_bounds = bounds_of(extent);
    if (extent_bounds.has_max && extent_bounds.max <= 0) return Stmt();
    // GPU loops define the launch shape, so they stay even with one iteration.
    if (is_const_one(extent) && !is_gpu_loop(op->for_type)) {
        // One iteration: the loop variable is just a name for min.
        return mutate(LetStmt::make(op->name, min, op->body));
    }
    ConstBounds min_bounds = bounds_of(min);
    // The loop variable lies in [min, min + extent - 1].
    ConstBounds last = bounds_add(extent_bounds, ConstBounds::point(-1));
    ConstBounds var_bounds = bounds_add(min_bounds, last);
    var_bounds.has_min = min_bounds.has_min;
    var_bounds.min = min_bounds.min;
    Interval symbolic;
    if (!is_const(min) || !is_const(extent)) {
        symbolic = Interval(min, build_sub(build_add(min, extent), make_one(min.type())));
    }
    Stmt body;
    {
        Binding bind(*this, op->name, fit_to_type(var_bounds, min.type()), Expr(), symbolic);
        body = mutate(op->body);
    }
    if (!body.defined()) return Stmt();
    if (min.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body)) return op;
    return For::make(op->name, min, extent, op->for_type, op->gpu_dim, body);
}

Expr Simplify::index_through_lets(const Expr &index) const {
    const Ramp *ramp = index.as<Ramp>();
    const Expr &base = ramp ? ramp->base : index;
    if (!base.type().is_int() || !base.type().is_scalar() || is_const(base)) return index;
    // Every let variable replaced by its value, to a bounded number of replacements. Only
    // integer arithmetic goes in: a value that calls or loads (a buffer's field, read on the
    // host and passed to a kernel as a variable) stays a variable, and a Let inside the
    // expression (which could shadow a name) stops the attempt.
    struct Expand : IRMutator {
        const Simplify &s;
        int budget = 64;
        bool failed = false;
        explicit Expand(const Simplify &s) : s(s) {}
        using IRMutator::visit;
        Expr visit(const Variable *v) override {
            Expr value = failed ? Expr() : s.let_value_of(v->name);
            if (!value.defined() || value.type() != v->type || !is_integer_arithmetic(value))
                return v;
            if (--budget < 0) {
                failed = true;
                return v;
            }
            return mutate(value);
        }
        Expr visit(const Let *op) override {
            failed = true;
            return op;
        }
    } expand(*this);
    Expr expanded = expand.mutate(base);
    if (expand.failed || expanded.same_as(base)) return index;
    const size_t limit = 2048; // past this, simplifying the values costs more than it could save
    if (count_nodes(expanded, limit) > limit) return index;
    Expr simpler = simplify(expanded);
    if (!is_const(simpler) && count_nodes(simpler, limit) >= count_nodes(base, limit)) return index;
    return ramp ? Ramp::make(simpler, ramp->stride, ramp->lanes) : simpler;
}

Stmt Simplify::visit(const Store *op) {
    use_count[op->name]++; // the Store uses the pointer variable it names
    Expr predicate = mutate(op->predicate);
    if (is_false(predicate)) return Stmt();
    Expr value = mutate(op->value), index = mutate(op->index);
    if (substitute_linear_lets && allocations.count(op->name)) index = index_through_lets(index);
    if (value.same_as(op->value) && index.same_as(op->index) && predicate.same_as(op->predicate)) {
        return op;
    }
    return Store::make(op->name, value, index, predicate, op->param);
}

Stmt Simplify::visit(const Provide *op) {
    std::vector<Expr> values, args;
    bool changed = mutate_exprs(op->values, values);
    changed = mutate_exprs(op->args, args) || changed;
    return changed ? Provide::make(op->name, values, args) : Stmt(op);
}

Stmt Simplify::visit(const Allocate *op) {
    std::vector<Expr> extents;
    bool changed = mutate_exprs(op->extents, extents);
    allocations[op->name]++;
    Stmt body = mutate(op->body);
    if (--allocations[op->name] == 0) allocations.erase(op->name);
    if (!body.defined()) return Stmt();
    // Storage that nothing reads: its stores go, and so does the storage (and then the loops
    // that computed only it). The tail of a split whose guard fails throughout still computes
    // the producers inside it, into storage no guarded consumer reads.
    StorageReferences refs = storage_references(body, op->name);
    if (refs.loads == 0 && refs.others == 0) {
        struct DropStores : IRMutator {
            const std::string &name;
            explicit DropStores(const std::string &n) : name(n) {}
            using IRMutator::visit;
            Stmt visit(const Store *s) override {
                return s->name == name ? Evaluate::make(make_zero(Int(32))) : Stmt(s);
            }
        } drop(op->name);
        return mutate(drop.mutate(body));
    }
    if (!changed && body.same_as(op->body)) return op;
    return Allocate::make(op->name, op->type, op->memory_type, extents, body);
}

Stmt Simplify::visit(const Free *op) {
    return op;
}

Stmt Simplify::visit(const Realize *op) {
    Region bounds(op->bounds.size());
    bool changed = false;
    for (size_t i = 0; i < bounds.size(); i++) {
        bounds[i].min = mutate(op->bounds[i].min);
        bounds[i].extent = mutate(op->bounds[i].extent);
        changed = changed || !bounds[i].min.same_as(op->bounds[i].min) ||
                  !bounds[i].extent.same_as(op->bounds[i].extent);
    }
    Stmt body = mutate(op->body);
    if (!body.defined()) return Stmt();
    if (!changed && body.same_as(op->body)) return op;
    return Realize::make(op->name, op->types, op->memory_type, bounds, body);
}

Stmt Simplify::visit(const Block *op) {
    Stmt first = mutate(op->first), rest = mutate(op->rest);
    if (first.same_as(op->first) && rest.same_as(op->rest)) return op;
    return Block::make(first, rest);
}

Stmt Simplify::visit(const IfThenElse *op) {
    Expr condition = mutate(op->condition);
    if (is_true(condition)) return mutate(op->then_case);
    if (is_false(condition)) return mutate(op->else_case);
    Stmt then_case = mutate(op->then_case), else_case = mutate(op->else_case);
    if (!then_case.defined() && !else_case.defined()) {
        return has_side_effects(condition) ? Evaluate::make(condition) : Stmt();
    }
    if (!then_case.defined()) return IfThenElse::make(build_not(condition), else_case);
    if (condition.same_as(op->condition) && then_case.same_as(op->then_case) &&
        else_case.same_as(op->else_case)) {
        return op;
    }
    return IfThenElse::make(condition, then_case, else_case);
}

Stmt Simplify::visit(const Evaluate *op) {
    Expr value = mutate(op->value);
    // Evaluating something without side effects does nothing.
    if (!has_side_effects(value)) return Stmt();
    if (value.same_as(op->value)) return op;
    return Evaluate::make(value);
}

} // namespace simplify_detail
} // namespace ir
} // namespace aicf
