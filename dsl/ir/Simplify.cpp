#include "dsl/ir/Simplify.h"

#include "dsl/ir/Bounds.h"
#include "dsl/ir/IREquality.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/SimplifyInternal.h"
#include "dsl/ir/Substitute.h"

#include <algorithm>
#include <cstring>
#include <functional>

namespace aicf {
namespace ir {
namespace simplify_detail {

// ---------------------------------------------------------------------------------------------
// The simplifier's state.

namespace {

std::optional<int64_t> constant_end(const Expr &e) {
    if (!e.defined() || !e.type().is_int_or_uint()) return std::nullopt;
    if (auto c = as_const_int(e)) return c;
    Expr s = simplify(e);
    return as_const_int(s);
}

} // namespace

Simplify::Simplify(const Scope<Interval> &bounds) {
    bounds.for_each([&](const std::string &name, const Interval &iv) {
        ConstBounds b;
        auto lo = constant_end(iv.min), hi = constant_end(iv.max);
        b.has_min = lo.has_value();
        b.min = lo.value_or(0);
        b.has_max = hi.has_value();
        b.max = hi.value_or(0);
        var_bounds.push(name, b);
        if ((iv.min.defined() && !lo) || (iv.max.defined() && !hi)) {
            std::set<std::string> vars;
            if (iv.min.defined()) vars = free_vars(iv.min);
            if (iv.max.defined()) {
                for (const std::string &v : free_vars(iv.max))
                    vars.insert(v);
            }
            sym_bounds.push(name, SymEntry{iv, vars});
        }
    });
}

Binding::Binding(Simplify &s, const std::string &name, const ConstBounds &bounds,
                 const Expr &replacement, const Interval &symbolic)
    : s(s), name(name) {
    s.binding_ids[name].push_back(s.next_binding_id++);
    s.var_bounds.push(name, bounds);
    s.known_bounds.clear();
    if (replacement.defined() || s.replacements.contains(name)) {
        s.replacements.push(name, replacement);
        pushed_replacement = true;
    }
    if (s.sym_bounds.empty() && !symbolic.min.defined() && !symbolic.max.defined()) return;
    s.sym_bounds.for_each([&](const std::string &other, const Simplify::SymEntry &entry) {
        if (other != name && entry.vars.count(name)) pushed_sym.push_back(other);
    });
    for (const std::string &other : pushed_sym)
        s.sym_bounds.push(other, Simplify::SymEntry());
    Simplify::SymEntry own{symbolic, {}};
    if (symbolic.min.defined()) own.vars = free_vars(symbolic.min);
    if (symbolic.max.defined()) {
        for (const std::string &v : free_vars(symbolic.max))
            own.vars.insert(v);
    }
    s.sym_bounds.push(name, own);
    pushed_sym.push_back(name);
}

Binding::~Binding() {
    s.binding_ids[name].pop_back();
    s.var_bounds.pop(name);
    s.known_bounds.clear();
    if (pushed_replacement) s.replacements.pop(name);
    for (const std::string &n : pushed_sym)
        s.sym_bounds.pop(n);
}

int Simplify::current_binding(const std::string &name) const {
    auto it = binding_ids.find(name);
    return it == binding_ids.end() || it->second.empty() ? -1 : it->second.back();
}

Expr Simplify::enclosing_let_with_value(const Expr &value) const {
    for (auto it = let_values.rbegin(); it != let_values.rend(); ++it) {
        if (it->value.type() != value.type() || !equal(it->value, value)) continue;
        bool valid = true;
        for (const auto &dep : it->deps)
            valid = valid && current_binding(dep.first) == dep.second;
        if (valid) return Variable::make(value.type(), it->name);
    }
    return Expr();
}

Expr Simplify::let_value_of(const std::string &name) const {
    for (auto it = let_values.rbegin(); it != let_values.rend(); ++it) {
        if (it->name != name) continue;
        bool valid = true;
        for (const auto &dep : it->deps)
            valid = valid && current_binding(dep.first) == dep.second;
        return valid ? it->value : Expr();
    }
    return Expr();
}

LinearForm Simplify::expand_let_terms(const LinearForm &l) const {
    const int max_levels = 4, max_terms = 16;
    LinearForm result = l;
    for (int level = 0; level < max_levels; level++) {
        LinearForm next;
        next.type = result.type;
        next.constant = result.constant;
        bool changed = false;
        for (const Term &term : result.terms) {
            const Variable *v = term.e.as<Variable>();
            Expr value = v ? let_value_of(v->name) : Expr();
            if (value.defined() && value.type() == result.type && !has_side_effects(value)) {
                next = linear_combine(next, linear_form(value), term.coeff);
                changed = true;
            } else {
                next.terms.push_back(term);
            }
        }
        if (!changed || next.terms.size() > size_t(max_terms)) break;
        result = linear_combine(next, LinearForm{next.type, {}, 0}, 1); // normalized
    }
    return result;
}

ConstBounds Simplify::bounds_of(const Expr &e) {
    const Type t = e.type();
    if (!t.is_int_or_uint()) return ConstBounds();
    if (e.as<IntImm>() || e.as<UIntImm>()) return bounds_of_node(e);
    auto it = known_bounds.find(e.get());
    if (it != known_bounds.end()) return it->second.bounds;
    const ConstBounds r = bounds_of_node(e);
    known_bounds[e.get()] = KnownBounds{e, r};
    return r;
}

namespace {

// Whether e reads memory: a load, or a call to a Func or an input.
bool reads_memory(const Expr &e) {
    bool found = false;
    visit_each_distinct<Load>(e, [&](const Load *) { found = true; });
    visit_each_distinct<Call>(e, [&](const Call *c) {
        found = found || c->call_type == Call::Func || c->call_type == Call::Image;
    });
    return found;
}

} // namespace

ConstBounds Simplify::bounds_of_node(const Expr &e) {
    Type t = e.type();
    ConstBounds r;
    switch (e.node_type()) {
    case IRNodeType::IntImm:
    case IRNodeType::UIntImm: {
        auto v = const_bits(e);
        if (t.is_uint() && *v < 0) return type_bounds(t);
        return ConstBounds::point(*v);
    }
    case IRNodeType::Variable: {
        if (const ConstBounds *b = var_bounds.find(e.as<Variable>()->name)) {
            r = *b;
        } else {
            r = type_bounds(t);
        }
        break;
    }
#define AICF_BOUNDS_BINARY(N, combine)                                                             \
    case IRNodeType::N:                                                                            \
        r = combine(bounds_of(e.as<N>()->a), bounds_of(e.as<N>()->b));                             \
        break;
        AICF_BOUNDS_BINARY(Add, bounds_add)
        AICF_BOUNDS_BINARY(Mul, bounds_mul)
        AICF_BOUNDS_BINARY(Div, bounds_div)
        AICF_BOUNDS_BINARY(Mod, bounds_mod)
        AICF_BOUNDS_BINARY(Min, bounds_min)
        AICF_BOUNDS_BINARY(Max, bounds_max)
#undef AICF_BOUNDS_BINARY
    case IRNodeType::Sub:
        r = bounds_add(bounds_of(e.as<Sub>()->a), bounds_negate(bounds_of(e.as<Sub>()->b)));
        break;
    case IRNodeType::Select: {
        const Select *s = e.as<Select>();
        r = bounds_union(bounds_of(s->true_value), bounds_of(s->false_value));
        break;
    }
    case IRNodeType::Cast: {
        const Cast *c = e.as<Cast>();
        r = c->value.type().is_int_or_uint() ? bounds_of(c->value) : type_bounds(t);
        // A narrowing cast wraps, so only a range that fits survives it. (A uint64 past
        // int64's range, which these int64 bounds cannot hold, wraps to a negative int64.)
        ConstBounds range = type_bounds(t);
        const Type from = c->value.type();
        const bool from_uint64 = from.is_uint() && from.bits >= 64;
        bool inside = (!range.has_min || (r.has_min && r.min >= range.min)) &&
                      (!range.has_max || (r.has_max && r.max <= range.max)) &&
                      (!from_uint64 || !t.is_int() || r.has_max);
        if (!inside) r = range;
        return r;
    }
    case IRNodeType::Broadcast:
        r = bounds_of(e.as<Broadcast>()->value);
        break;
    case IRNodeType::Ramp: {
        const Ramp *ramp = e.as<Ramp>();
        ConstBounds last =
            bounds_mul(bounds_of(ramp->stride), ConstBounds::point(int64_t(ramp->lanes) - 1));
        r = bounds_add(bounds_of(ramp->base), bounds_union(ConstBounds::point(0), last));
        break;
    }
    case IRNodeType::Let: {
        const Let *let = e.as<Let>();
        Binding bind(*this, let->name, bounds_of(let->value));
        r = bounds_of(let->body);
        break;
    }
    case IRNodeType::Call: {
        const Call *call = e.as<Call>();
        if (call->is_intrinsic(Intrinsic::abs) && call->args.size() == 1) {
            ConstBounds a = bounds_of(call->args[0]);
            const Type at = call->args[0].type().element_of();
            r.has_min = true;
            r.min = 0;
            // abs of a signed type's most negative value is that value (int8 -128, int32
            // -2^31), not a positive one: in a type that wraps, or of data (a value read from
            // memory may be anything), so that clamp(abs(in(x)), 0, n) keeps its lower end.
            // Symbols of a type taken not to overflow (loops, sizes) stay above it.
            const bool may_be_min = !a.has_min || a.min <= at.min_int();
            if (at.is_int() && may_be_min && (!no_overflow(at) || reads_memory(call->args[0]))) {
                r = type_bounds(at);
            } else if (a.bounded()) {
                r = make_bounds(true, 0, true, std::max(-i128(a.min), i128(a.max)));
                if (a.min >= 0) r = a;
                if (a.max <= 0) r = bounds_negate(a);
            }
        } else if (call->is_intrinsic(Intrinsic::likely) && call->args.size() == 1) {
            r = bounds_of(call->args[0]);
        } else if (call->is_intrinsic(Intrinsic::bitwise_and) && call->args.size() == 2) {
            // x & m lies in [0, m] when m >= 0 (two's complement), whatever x is.
            r = type_bounds(t);
            for (const Expr &arg : call->args) {
                ConstBounds b = bounds_of(arg);
                bool tighter = !r.bounded() || r.min < 0 || b.max < r.max;
                if (b.bounded() && b.min >= 0 && tighter) r = ConstBounds::range(0, b.max);
            }
        } else {
            r = type_bounds(t);
        }
        break;
    }
    default:
        return type_bounds(t);
    }
    return fit_to_type(r, t);
}

ConstBounds Simplify::bounds_of_linear(const LinearForm &l) {
    ConstBounds r = ConstBounds::point(l.constant);
    for (const Term &t : l.terms) {
        r = bounds_add(r, bounds_mul(bounds_of(t.e), ConstBounds::point(t.coeff)));
        if (!r.has_min && !r.has_max) break;
    }
    return r;
}

void Simplify::relax_terms(const LinearForm &l, bool upper, int depth,
                           std::vector<LinearForm> &out) {
    const size_t max_forms = 8;
    if (out.size() >= max_forms) return;
    for (size_t i = 0; depth > 0 && i < l.terms.size(); i++) {
        const Term &term = l.terms[i];
        // coeff * e <= coeff * g where g bounds e from above for a positive coeff (from below
        // for a negative one); and alike for a lower bound of l.
        const bool above = (term.coeff > 0) == upper;
        std::vector<LinearForm> bounds; // of coeff * e, on l's side
        const Min *mn = term.e.as<Min>();
        const Max *mx = term.e.as<Max>();
        if ((above && mn) || (!above && mx)) {
            for (const Expr &side : {mn ? mn->a : mx->a, mn ? mn->b : mx->b})
                bounds.push_back(linear_scale(linear_form(side), term.coeff));
        } else if (const Div *dv = term.e.as<Div>()) {
            // d * (y / d) is in [y - d + 1, y]; coeff * e is (coeff / d) times that.
            const auto d = const_bits(dv->b);
            if (!d || *d <= 0 || term.coeff % *d != 0) continue;
            const int64_t m = term.coeff / *d;
            LinearForm y = linear_form(dv->a);
            if ((m > 0) != upper)
                y.wrapped |= __builtin_sub_overflow(y.constant, *d - 1, &y.constant);
            bounds.push_back(linear_scale(y, m));
        }
        if (bounds.empty()) continue;
        LinearForm rest = l;
        rest.terms.erase(rest.terms.begin() + i);
        for (const LinearForm &b : bounds)
            relax_terms(linear_combine(rest, b, 1), upper, depth - 1, out);
        return;
    }
    out.push_back(l);
}

ConstBounds Simplify::relaxed_bounds(const LinearForm &l) {
    bool any = false;
    for (const Term &t : l.terms)
        any = any || t.e.as<Min>() || t.e.as<Max>() || t.e.as<Div>();
    if (!any) return ConstBounds();
    const int depth = 4;
    ConstBounds r;
    for (bool upper : {false, true}) {
        std::vector<LinearForm> forms;
        relax_terms(l, upper, depth, forms);
        for (const LinearForm &f : forms) {
            // A bound whose constant wrapped (max(x, -INT_MAX) >= -INT_MAX, less INT_MAX)
            // bounds nothing.
            if (f.wrapped) continue;
            const ConstBounds b = bounds_of_linear(f);
            if (upper && b.has_max && (!r.has_max || b.max < r.max))
                r.has_max = true, r.max = b.max;
            if (!upper && b.has_min && (!r.has_min || b.min > r.min))
                r.has_min = true, r.min = b.min;
        }
    }
    return r;
}

ConstBounds Simplify::symbolic_bounds(const Expr &e) {
    if (sym_bounds.empty()) return ConstBounds();
    // Symbolic interval arithmetic simplifies every intermediate bound; keep it to small
    // expressions so it never dominates the cost of simplification.
    const size_t max_nodes = 40;
    if (count_nodes(e, max_nodes) > max_nodes) return ConstBounds();
    Scope<Interval> local;
    bool any_symbolic = false;
    for (const std::string &v : free_vars(e)) {
        const SymEntry *entry = sym_bounds.find(v);
        if (entry && (entry->interval.min.defined() || entry->interval.max.defined())) {
            local.push(v, entry->interval);
            any_symbolic = true;
            continue;
        }
        const ConstBounds *b = var_bounds.find(v);
        if (!b || (!b->has_min && !b->has_max)) continue;
        Type t = Int(64);
        visit_each<Variable>(e, [&](const Variable *var) {
            if (var->name == v) t = var->type;
        });
        // An end at the type's limit says nothing, and symbolic arithmetic on it could wrap.
        ConstBounds range = type_bounds(t);
        bool has_min = b->has_min && !(range.has_min && b->min <= range.min);
        bool has_max = b->has_max && !(range.has_max && b->max >= range.max);
        if (!has_min && !has_max) continue;
        local.push(v, Interval(has_min ? make_const(t, b->min) : Expr(),
                               has_max ? make_const(t, b->max) : Expr()));
    }
    if (!any_symbolic) return ConstBounds();
    Interval iv = bounds_of_expr_in_scope(e, local);
    ConstBounds r;
    if (auto lo = as_const_int(iv.min)) {
        r.has_min = true;
        r.min = *lo;
    }
    if (auto hi = as_const_int(iv.max)) {
        r.has_max = true;
        r.max = *hi;
    }
    return r;
}

Expr Simplify::visit(const IntImm *op) {
    return op;
}
Expr Simplify::visit(const UIntImm *op) {
    return op;
}
Expr Simplify::visit(const FloatImm *op) {
    return op;
}
Expr Simplify::visit(const StringImm *op) {
    return op;
}

Expr Simplify::visit(const Variable *op) {
    if (const Expr *r = replacements.find(op->name)) {
        if (r->defined()) {
            visit_each<Variable>(*r, [&](const Variable *v) { use_count[v->name]++; });
            return *r;
        }
    }
    use_count[op->name]++;
    return op;
}

} // namespace simplify_detail

using simplify_detail::Simplify;

Expr simplify(const Expr &e, const Scope<Interval> &bounds) {
    if (!e.defined()) return e;
    Simplify s(bounds);
    return s.mutate(e);
}

Stmt simplify(const Stmt &s, const Scope<Interval> &bounds) {
    if (!s.defined()) return s;
    Simplify simplifier(bounds);
    return simplifier.mutate(s);
}

Stmt simplify_for_codegen(const Stmt &s) {
    if (!s.defined()) return s;
    Simplify simplifier{Scope<Interval>()};
    simplifier.substitute_linear_lets = true;
    return simplifier.mutate(s);
}

bool can_prove(const Expr &condition, const Scope<Interval> &bounds) {
    if (!condition.defined() || !condition.type().is_bool()) return false;
    return is_true(simplify(condition, bounds));
}

} // namespace ir
} // namespace aicf
