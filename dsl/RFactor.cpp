// Stage::rfactor: splitting an associative reduction into a partial reduction over new
// pure variables and a merge of the partial results.

#include "dsl/Func.h"
#include "dsl/Stage.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IREquality.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Substitute.h"

#include <map>
#include <set>

namespace aicf {

using namespace ir;

namespace {

// How the update combines the Func's current value (self) with a new one.
struct Reduction {
    enum Kind { Binary, Replace, RescaledSum } kind;
    // Binary: values[i] = op_i(self_i, x[i]).
    std::vector<IRNodeType> ops;
    std::vector<Expr> x;
    // Replace: values[i] = select(condition, x[i], self_i); the condition compares a
    // candidate with self and is true when the candidate should win.
    Expr condition;
    // RescaledSum (a running max and a sum of exponentials relative to it, the state of a
    // streaming softmax): values = {m' = max(m, x), s * exp(m - m') + exp(x - m')}.
};

// a + b or b + a (and the same for *), compared structurally.
bool matches_commutative(const Expr &e, IRNodeType op, const Expr &a, const Expr &b) {
    Expr l, r;
    if (op == IRNodeType::Add && e.as<Add>())
        l = e.as<Add>()->a, r = e.as<Add>()->b;
    else if (op == IRNodeType::Mul && e.as<Mul>())
        l = e.as<Mul>()->a, r = e.as<Mul>()->b;
    else
        return false;
    return (equal(l, a) && equal(r, b)) || (equal(l, b) && equal(r, a));
}

bool is_exp_of(const Expr &e, const Expr &arg) {
    const Call *c = e.as<Call>();
    return c && c->is_intrinsic(Intrinsic::exp) && c->args.size() == 1 && equal(c->args[0], arg);
}

// Whether `s` is self1 * exp(self0 - m') + exp(x - m'), in either operand order.
bool is_rescaled_sum(const Expr &s, const Expr &self0, const Expr &self1, const Expr &x,
                     const Expr &new_max) {
    const Add *add = s.as<Add>();
    if (!add) return false;
    for (int flip = 0; flip < 2; flip++) {
        const Expr &scaled = flip ? add->b : add->a, &fresh = flip ? add->a : add->b;
        const Mul *mul = scaled.as<Mul>();
        if (!mul || !is_exp_of(fresh, Sub::make(x, new_max))) continue;
        Expr e = Call::make(self0.type(), Intrinsic::exp, {Sub::make(self0, new_max)});
        if (matches_commutative(scaled, IRNodeType::Mul, self1, e)) return true;
    }
    return false;
}

bool is_self(const Expr &e, const Function &f, const std::vector<Expr> &args, int index) {
    const Call *c = e.as<Call>();
    if (!c || c->call_type != Call::Func || c->name != f.name() || c->value_index != index)
        return false;
    for (size_t i = 0; i < args.size(); i++)
        if (!equal(c->args[i], args[i])) return false;
    return true;
}

bool mentions(const Expr &e, const Function &f) {
    bool found = false;
    visit_each_distinct<Call>(e, [&](const Call *c) { found = found || c->name == f.name(); });
    return found;
}

// The element-wise pattern op(self_i, x) or op(x, self_i).
bool match_binary(const Expr &v, const Function &f, const std::vector<Expr> &args, int i,
                  IRNodeType &op, Expr &x) {
    Expr a, b;
    op = v.node_type();
    switch (op) {
    case IRNodeType::Add:
        a = v.as<Add>()->a, b = v.as<Add>()->b;
        break;
    case IRNodeType::Mul:
        a = v.as<Mul>()->a, b = v.as<Mul>()->b;
        break;
    case IRNodeType::Min:
        a = v.as<Min>()->a, b = v.as<Min>()->b;
        break;
    case IRNodeType::Max:
        a = v.as<Max>()->a, b = v.as<Max>()->b;
        break;
    default:
        return false;
    }
    if (is_self(a, f, args, i) && !mentions(b, f))
        x = b;
    else if (is_self(b, f, args, i) && !mentions(a, f))
        x = a;
    else
        return false;
    return true;
}

Expr combine(IRNodeType op, const Expr &a, const Expr &b) {
    switch (op) {
    case IRNodeType::Add:
        return Add::make(a, b);
    case IRNodeType::Mul:
        return Mul::make(a, b);
    case IRNodeType::Min:
        return Min::make(a, b);
    default:
        return Max::make(a, b);
    }
}

Expr identity(IRNodeType op, Type t) {
    switch (op) {
    case IRNodeType::Add:
        return make_zero(t);
    case IRNodeType::Mul:
        return make_one(t);
    case IRNodeType::Min:
        return type_max(t);
    default:
        return type_min(t);
    }
}

bool analyze(const Definition &d, const Function &f, Reduction &r) {
    const std::vector<Expr> &v = d.values;
    r.kind = Reduction::Binary;
    bool binary = true;
    for (size_t i = 0; i < v.size() && binary; i++) {
        IRNodeType op;
        Expr x;
        binary = match_binary(v[i], f, d.args, int(i), op, x);
        r.ops.push_back(op);
        r.x.push_back(x);
    }
    if (binary) return true;
    // The streaming softmax pair.
    if (v.size() == 2 && v[0].type().is_float() && v[0].type() == v[1].type()) {
        IRNodeType op;
        Expr x;
        Expr self0 = f.call(d.args, 0), self1 = f.call(d.args, 1);
        if (match_binary(v[0], f, d.args, 0, op, x) && op == IRNodeType::Max) {
            // (Calls compare equal whether they hold the Func weakly or strongly.)
            if (is_rescaled_sum(v[1], self0, self1, x, v[0])) {
                r = Reduction();
                r.kind = Reduction::RescaledSum;
                r.x = {x};
                return true;
            }
        }
    }
    // Replacement: every value is select(c, x_i, self_i) with one condition c that compares
    // some candidate x_j strictly with self_j.
    r = Reduction();
    r.kind = Reduction::Replace;
    for (size_t i = 0; i < v.size(); i++) {
        const Select *s = v[i].as<Select>();
        if (!s || !is_self(s->false_value, f, d.args, int(i)) || mentions(s->true_value, f))
            return false;
        if (i == 0) r.condition = s->condition;
        if (!equal(s->condition, r.condition)) return false;
        r.x.push_back(s->true_value);
    }
    const Expr &c = r.condition;
    Expr lhs, rhs;
    if (const LT *lt = c.as<LT>())
        lhs = lt->a, rhs = lt->b;
    else if (const GT *gt = c.as<GT>())
        lhs = gt->a, rhs = gt->b;
    else
        return false;
    for (size_t j = 0; j < v.size(); j++) {
        bool forward = equal(lhs, r.x[j]) && is_self(rhs, f, d.args, int(j));
        bool backward = equal(rhs, r.x[j]) && is_self(lhs, f, d.args, int(j));
        if (forward || backward) return true;
    }
    return false;
}

// Replaces calls to the Func itself (element i at `args`) with `replacement[i]`.
Expr replace_self(const Expr &e, const Function &f, const std::vector<Expr> &args,
                  const std::vector<Expr> &replacement) {
    struct Replace : IRGraphMutator {
        const Function &f;
        const std::vector<Expr> &args, &replacement;
        Replace(const Function &f, const std::vector<Expr> &a, const std::vector<Expr> &r)
            : f(f), args(a), replacement(r) {}
        using IRMutator::visit;
        Expr visit(const Call *op) override {
            if (op->call_type == Call::Func && op->name == f.name()) {
                bool same = true;
                for (size_t i = 0; i < args.size(); i++)
                    same = same && equal(op->args[i], args[i]);
                if (same) return replacement.at(op->value_index);
            }
            return IRMutator::visit(op);
        }
    } m(f, args, replacement);
    return m.mutate(e);
}

// Makes the loops a schedule's split of a reduction variable created (split(k, ko, ki, 16))
// variables of the reduction domain itself: k becomes k.min + ko * 16 + ki over ko and ki, with
// a predicate where 16 does not divide k's extent, and the split leaves the schedule. The
// loops keep their names and places, so rfactor can preserve either of them.
void split_into_domain(Definition &d, size_t split_index, const std::string &where) {
    const Split sp = d.schedule.splits[split_index];
    auto factor = as_const_int(sp.factor);
    user_assert(factor && *factor > 0)
        << where << ": " << sp.inner << " comes from a split of " << sp.old_var << " by "
        << sp.factor << "; rfactor can use it only when the factor is a positive constant.";
    std::vector<ReductionVariable> vars;
    Expr extent;
    for (const ReductionVariable &rv : d.rdom.domain()) {
        if (rv.var != sp.old_var) {
            vars.push_back(rv);
            continue;
        }
        extent = rv.extent;
        Expr f = make_const(Int(32), *factor);
        vars.push_back({sp.inner, make_zero(Int(32)), f});
        vars.push_back({sp.outer, make_zero(Int(32)),
                        Div::make(Sub::make(Add::make(rv.extent, f), make_one(Int(32))), f)});
    }
    ReductionDomain dom(vars);
    std::map<std::string, Expr> subs;
    for (const ReductionVariable &rv : vars)
        subs[rv.var] = Variable::make(Int(32), rv.var, dom);
    Expr old_min;
    for (const ReductionVariable &rv : d.rdom.domain())
        if (rv.var == sp.old_var) old_min = rv.min;
    subs[sp.old_var] =
        Add::make(old_min, Add::make(Mul::make(subs[sp.outer], make_const(Int(32), *factor)),
                                     subs[sp.inner]));
    // The predicate refers to the domain's variables by name (see ReductionDomain::predicate).
    std::map<std::string, Expr> by_name;
    for (const ReductionVariable &rv : vars)
        by_name[rv.var] = Variable::make(Int(32), rv.var);
    by_name[sp.old_var] =
        Add::make(old_min, Add::make(Mul::make(by_name[sp.outer], make_const(Int(32), *factor)),
                                     by_name[sp.inner]));
    if (d.rdom.predicate().defined()) dom.where(substitute(by_name, d.rdom.predicate()));
    auto exact = as_const_int(extent);
    if (!exact || *exact % *factor != 0) {
        dom.where(LT::make(Add::make(Mul::make(by_name[sp.outer], make_const(Int(32), *factor)),
                                     by_name[sp.inner]),
                           extent));
    }
    for (Expr &a : d.args)
        a = substitute(subs, a);
    for (Expr &v : d.values)
        v = substitute(subs, v);
    d.rdom = dom;
    d.schedule.splits.erase(d.schedule.splits.begin() + long(split_index));
}

} // namespace

Func Stage::rfactor(const RVar &r, const Var &v) {
    return rfactor({{r, v}});
}

Func Stage::rfactor(const std::vector<std::pair<RVar, Var>> &preserved) {
    const std::string where = "rfactor of " + name();
    user_assert(stage > 0) << where << ": only update definitions reduce; " << name()
                           << " is the pure definition.";
    Definition &d = func.stage(stage);
    user_assert(d.rdom.defined()) << where << ": this update has no reduction variables.";
    for (size_t i = 0; i < d.args.size(); i++) {
        const Variable *a = d.args[i].as<Variable>();
        user_assert(a && a->name == func.args()[i])
            << where << ": the update writes " << func.name() << " at " << d.args[i]
            << " in dimension " << i << ". rfactor needs an update that writes each point at "
            << "its pure variables, such as " << func.name() << "(x) = " << func.name()
            << "(x) + g(r, x).";
    }
    Reduction red;
    user_assert(analyze(d, func, red))
        << where << ": AICF cannot tell that this update is associative. rfactor recognizes "
        << func.name() << " = " << func.name() << " op x for op in +, *, min, max (element-wise "
        << "on Tuples), Tuples updated by select(better, candidate, current) such as argmax, "
        << "and the streaming softmax pair {m' = max(m, x), s * exp(m - m') + exp(x - m')}.";

    // The reduction variables that stay reductions in the intermediate, and those that
    // become pure variables there.
    std::map<std::string, std::string> to_pure;
    for (const auto &p : preserved) {
        auto in_domain = [&] {
            for (const ReductionVariable &rv : d.rdom.domain())
                if (rv.var == p.first.name()) return true;
            return false;
        };
        if (!in_domain()) {
            // A loop made by splitting a reduction variable: make it one of the domain.
            for (size_t i = 0; i < d.schedule.splits.size(); i++) {
                const Split &sp = d.schedule.splits[i];
                bool of_domain = false;
                for (const ReductionVariable &rv : d.rdom.domain())
                    of_domain = of_domain || rv.var == sp.old_var;
                if (sp.kind == Split::SplitVar && of_domain &&
                    (sp.inner == p.first.name() || sp.outer == p.first.name())) {
                    split_into_domain(d, i, where);
                    break;
                }
            }
        }
        user_assert(in_domain()) << where << ": " << p.first.name()
                                 << " is not a reduction variable of "
                                 << "this update, nor a loop made by splitting one.";
        for (const std::string &a : func.args()) {
            user_assert(a != p.second.name())
                << where << ": the new variable " << p.second.name() << " is already a variable of "
                << func.name() << ". Use a new Var.";
        }
        to_pure[p.first.name()] = p.second.name();
    }
    user_assert(!to_pure.empty()) << where << ": name at least one reduction variable to preserve.";

    // The reduction variables keep their names in the intermediate (so the user's RVars
    // schedule its update), and the merge iterates over the preserved Vars' names.
    std::string intm_name = func.name() + "_intm";
    std::vector<ReductionVariable> kept, merged;
    std::map<std::string, Expr> intm_subs, merge_subs;
    for (const ReductionVariable &rv : d.rdom.domain()) {
        if (to_pure.count(rv.var)) {
            merged.push_back({to_pure[rv.var], rv.min, rv.extent});
        } else {
            kept.push_back(rv);
        }
    }
    ReductionDomain kept_dom, merged_dom(merged);
    if (!kept.empty()) kept_dom = ReductionDomain(kept);
    for (const ReductionVariable &rv : d.rdom.domain()) {
        intm_subs[rv.var] = to_pure.count(rv.var) ? Variable::make(Int(32), to_pure[rv.var])
                                                  : Variable::make(Int(32), rv.var, kept_dom);
    }
    if (kept_dom.defined() && d.rdom.predicate().defined()) {
        kept_dom.where(substitute(intm_subs, d.rdom.predicate()));
    }

    // The intermediate: over the pure variables and the new ones, starting from the identity.
    std::vector<std::string> intm_args = func.args();
    for (const auto &p : preserved)
        intm_args.push_back(p.second.name());
    std::vector<Expr> intm_arg_exprs;
    for (const std::string &a : intm_args)
        intm_arg_exprs.push_back(Variable::make(Int(32), a));
    Function intm(intm_name);
    std::vector<Expr> init;
    for (size_t i = 0; i < d.values.size(); i++) {
        Type t = d.values[i].type();
        if (red.kind == Reduction::Binary) {
            init.push_back(identity(red.ops[i], t));
        } else if (red.kind == Reduction::RescaledSum) {
            // No elements yet: the max of nothing, and an empty sum.
            init.push_back(i == 0 ? type_min(t) : make_zero(t));
        } else {
            // The candidate that loses every comparison: the worst value where the condition
            // compares, anything elsewhere.
            bool greater = red.condition.as<GT>() != nullptr;
            init.push_back(greater ? type_min(t) : type_max(t));
        }
    }
    intm.define(intm_args, init);
    std::vector<Expr> intm_self;
    for (size_t i = 0; i < d.values.size(); i++)
        intm_self.push_back(intm.call(intm_arg_exprs, int(i)));
    std::vector<Expr> intm_values;
    for (size_t i = 0; i < d.values.size(); i++) {
        Expr v = replace_self(d.values[i], func, d.args, intm_self);
        intm_values.push_back(substitute(intm_subs, v));
    }
    // A predicate on the preserved variables alone applies per point of the intermediate.
    if (!kept_dom.defined() && d.rdom.predicate().defined()) {
        Expr p = substitute(intm_subs, d.rdom.predicate());
        for (size_t i = 0; i < intm_values.size(); i++)
            intm_values[i] = Select::make(p, intm_values[i], intm_self[i]);
    }
    intm.define_update(intm_arg_exprs, intm_values);

    // This stage now merges the partial results over the preserved variables.
    std::vector<Expr> at_partial = d.args;
    for (const ReductionVariable &m : merged)
        at_partial.push_back(Variable::make(Int(32), m.var, merged_dom));
    std::vector<Expr> partial, self, values;
    for (size_t i = 0; i < d.values.size(); i++) {
        partial.push_back(intm.call(at_partial, int(i)));
        self.push_back(func.call(d.args, int(i)));
    }
    if (red.kind == Reduction::Binary) {
        for (size_t i = 0; i < d.values.size(); i++)
            values.push_back(combine(red.ops[i], self[i], partial[i]));
    } else if (red.kind == Reduction::RescaledSum) {
        // Both sums rescaled to the larger of the two maxima.
        Type t = self[0].type();
        Expr m = Max::make(self[0], partial[0]);
        auto rescale = [&](const Expr &sum, const Expr &max) {
            return Mul::make(sum, Call::make(t, Intrinsic::exp, {Sub::make(max, m)}));
        };
        values.push_back(m);
        values.push_back(Add::make(rescale(self[1], self[0]), rescale(partial[1], partial[0])));
    } else {
        // The same comparison, of the partial result's element against the current one.
        Expr cond;
        const LT *lt = red.condition.as<LT>();
        const GT *gt = red.condition.as<GT>();
        Expr lhs = lt ? lt->a : gt->a, rhs = lt ? lt->b : gt->b;
        for (size_t j = 0; j < red.x.size() && !cond.defined(); j++) {
            Expr a, b;
            if (equal(lhs, red.x[j]) && is_self(rhs, func, d.args, int(j)))
                a = partial[j], b = self[j];
            else if (equal(rhs, red.x[j]) && is_self(lhs, func, d.args, int(j)))
                a = self[j], b = partial[j];
            else
                continue;
            cond = lt ? LT::make(a, b) : GT::make(a, b);
        }
        internal_assert(cond.defined()) << "rfactor: no compared element";
        for (size_t i = 0; i < d.values.size(); i++)
            values.push_back(Select::make(cond, partial[i], self[i]));
    }
    Definition merge;
    merge.args = d.args;
    merge.rdom = merged_dom;
    for (const Expr &v : values)
        merge.values.push_back(weaken_calls_to(v, func.get()));
    for (const ReductionVariable &m : merged)
        merge.schedule.dims.push_back(Dim{m.var, ForType::Serial, true});
    for (const std::string &a : func.args())
        merge.schedule.dims.push_back(Dim{a});
    d = merge;
    return Func(intm);
}

} // namespace aicf
