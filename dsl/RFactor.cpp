// Stage::rfactor: splitting an associative reduction into a partial reduction over new
// pure variables and a merge of the partial results.

#include "dsl/Associative.h"
#include "dsl/Func.h"
#include "dsl/Stage.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IREquality.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace aicf {

using namespace ir;

namespace {

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

// Replaces the domain's variables `from` with the variables `to` (which take the place of the
// first of `from`, in their order), where the old variables are `values` of the new ones
// (given the new variables as expressions), and the schedule's step `step`, which made the new
// loops, leaves it. The predicate refers to the domain's variables by name (see
// ReductionDomain::predicate); `guard` (undefined: none), by the new names, comes before it.
void replace_in_domain(Definition &d, size_t step, const std::vector<std::string> &from,
                       const std::vector<ReductionVariable> &to,
                       const std::function<std::vector<Expr>(const std::vector<Expr> &)> &values,
                       const Expr &guard = Expr()) {
    std::vector<ReductionVariable> vars;
    for (const ReductionVariable &rv : d.rdom.domain()) {
        if (rv.var == from[0]) {
            vars.insert(vars.end(), to.begin(), to.end());
        } else if (std::find(from.begin(), from.end(), rv.var) == from.end()) {
            vars.push_back(rv);
        }
    }
    ReductionDomain dom(vars);
    std::map<std::string, Expr> subs, by_name;
    std::vector<Expr> new_in_domain, new_by_name;
    for (const ReductionVariable &rv : vars) {
        subs[rv.var] = Variable::make(Int(32), rv.var, dom);
        by_name[rv.var] = Variable::make(Int(32), rv.var);
    }
    for (const ReductionVariable &rv : to) {
        new_in_domain.push_back(subs[rv.var]);
        new_by_name.push_back(by_name[rv.var]);
    }
    const std::vector<Expr> old_in_domain = values(new_in_domain),
                            old_by_name = values(new_by_name);
    for (size_t i = 0; i < from.size(); i++) {
        subs[from[i]] = old_in_domain[i];
        by_name[from[i]] = old_by_name[i];
    }
    // The guard first: the user's predicate may read what only the domain's points may (an
    // input at r), and is tested inside the guard.
    if (guard.defined()) dom.where(guard);
    if (d.rdom.predicate().defined()) dom.where(substitute(by_name, d.rdom.predicate()));
    for (Expr &a : d.args)
        a = substitute(subs, a);
    for (Expr &v : d.values)
        v = substitute(subs, v);
    d.rdom = dom;
    d.schedule.splits.erase(d.schedule.splits.begin() + long(step));
}

ReductionVariable domain_variable(const Definition &d, const std::string &name) {
    for (const ReductionVariable &rv : d.rdom.domain())
        if (rv.var == name) return rv;
    internal_error << "no reduction variable " << name;
    return {};
}

// Makes the loops a schedule's split of a reduction variable created (split(k, ko, ki, 16))
// variables of the reduction domain itself: k becomes k.min + ko * 16 + ki over ko and ki, with
// a predicate where 16 does not divide k's extent, and the split leaves the schedule. The
// loops keep their names and places, so rfactor can preserve either of them.
void split_into_domain(Definition &d, size_t split_index, const std::string &where) {
    const Split sp = d.schedule.splits[split_index];
    auto factor = as_const_int(sp.factor);
    user_assert(factor && *factor > 0)
        << where << ": " << sp.outer << " and " << sp.inner << " come from a split of "
        << sp.old_var << " by " << sp.factor
        << "; rfactor makes them variables of the reduction domain, which it can do only when "
        << "the factor is a positive constant.";
    const ReductionVariable old = domain_variable(d, sp.old_var);
    Expr f = make_const(Int(32), *factor);
    auto offset = [&](const Expr &outer, const Expr &inner) {
        return Add::make(Mul::make(outer, f), inner);
    };
    // The points past the old extent, where the factor does not divide it. (By the new
    // loops' names: the outer loop may reuse the old one's.)
    Expr guard;
    auto exact = as_const_int(old.extent);
    if (!exact || *exact % *factor != 0) {
        guard =
            LT::make(offset(Variable::make(Int(32), sp.outer), Variable::make(Int(32), sp.inner)),
                     old.extent);
    }
    Expr zero = make_zero(Int(32));
    replace_in_domain(
        d, split_index, {old.var},
        {{sp.inner, zero, f},
         {sp.outer, zero, Div::make(Sub::make(Add::make(old.extent, f), make_one(Int(32))), f)}},
        [&](const std::vector<Expr> &io) {
            return std::vector<Expr>{Add::make(old.min, offset(io[1], io[0]))};
        },
        guard);
}

// Makes the loop a schedule's fuse of two reduction variables created (fuse(r.x, r.y, f)) a
// variable of the reduction domain: f runs over the product of their extents, r.x is
// r.x.min + f % (r.x's extent) and r.y is r.y.min + f / (r.x's extent); the fuse leaves the
// schedule.
void fuse_into_domain(Definition &d, size_t fuse_index, const std::string &where) {
    const Split sp = d.schedule.splits[fuse_index];
    const ReductionVariable in = domain_variable(d, sp.inner), out = domain_variable(d, sp.outer);
    Expr zero = make_zero(Int(32)), one = make_one(Int(32));
    Expr extent = Mul::make(Max::make(in.extent, zero), Max::make(out.extent, zero));
    // An extent known only at run time is checked where the RDom's are (its product computed
    // without wrapping).
    const std::optional<int64_t> points = as_const_int(simplify(widen_int32(extent)));
    user_assert(!points || *points <= INT32_MAX)
        << where << ": fuse(" << sp.inner << ", " << sp.outer << ", " << sp.old_var
        << ") makes a reduction variable of " << *points
        << " points, more than the 2^31 - 1 a 32-bit loop counts. Fuse variables whose extents "
        << "multiply to less (split one first and fuse a part of it).";
    replace_in_domain(d, fuse_index, {in.var, out.var}, {{sp.old_var, zero, extent}},
                      [&](const std::vector<Expr> &f) {
                          // (The clamps change no value, f being below the product of the
                          // extents; they bound each part for bounds inference where an
                          // extent is symbolic, as the loops' do.)
                          auto part = [&](const Expr &offset, const ReductionVariable &rv) {
                              Expr last = Sub::make(Add::make(rv.min, rv.extent), one);
                              return Max::make(Min::make(Add::make(rv.min, offset), last), rv.min);
                          };
                          return std::vector<Expr>{part(Mod::make(f[0], in.extent), in),
                                                   part(Div::make(f[0], in.extent), out)};
                      });
}

// An update that keeps one candidate by comparison (argmax-style) keeps the first of equal
// ones in the domain's order, so its partials must each reduce a run that is consecutive in
// that order: a fuse rfactor preserves must iterate its inner variable fastest as the domain
// does, the inner one directly inside the outer one.
void check_fuse_keeps_order(const Definition &d, const Split &sp, const AssociativeUpdate &red,
                            const std::string &where) {
    if (!red.order_dependent()) return;
    const std::vector<ReductionVariable> &dom = d.rdom.domain();
    size_t in = dom.size(), out = dom.size();
    for (size_t i = 0; i < dom.size(); i++) {
        if (dom[i].var == sp.inner) in = i;
        if (dom[i].var == sp.outer) out = i;
    }
    std::string outermost_first;
    for (size_t i = dom.size(); i-- > 0;)
        outermost_first += (outermost_first.empty() ? "" : ", ") + dom[i].var;
    user_assert(out == in + 1)
        << where << ": the update keeps one candidate by comparison (argmax-style), and which of "
        << "equal candidates it keeps depends on their order; fuse(" << sp.inner << ", " << sp.outer
        << ", " << sp.old_var << ") does not run the domain in its order, so partials "
        << "of " << sp.old_var << " would not reduce consecutive runs of it. The domain's "
        << "variables are, outermost first, " << outermost_first << ": fuse a variable with the "
        << "one directly outside it, the inner one first.";
}

// Makes a renamed reduction variable (rename(r.x, k)) the domain's variable of the new name.
void rename_into_domain(Definition &d, size_t rename_index) {
    const Split sp = d.schedule.splits[rename_index];
    const ReductionVariable old = domain_variable(d, sp.old_var);
    replace_in_domain(
        d, rename_index, {old.var}, {{sp.outer, make_zero(Int(32)), old.extent}},
        [&](const std::vector<Expr> &k) { return std::vector<Expr>{Add::make(old.min, k[0])}; });
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
    // A refused rfactor changes nothing: the update as it was comes back on any error (the
    // checks below come after splits have been made domains).
    struct Restore {
        Definition &d;
        const Definition saved;
        bool done = false;
        ~Restore() {
            if (!done) d = saved;
        }
    } restore{d, d};
    // The update as the algorithm wrote it, before its splits become domains.
    std::shared_ptr<const Definition> as_written = d.as_written;
    if (!as_written) {
        auto written = std::make_shared<Definition>(d);
        written->schedule = StageSchedule();
        as_written = written;
    }
    user_assert(d.rdom.defined()) << where << ": this update has no reduction variables.";
    // (An update rfactor wrote, a merge or an intermediate's, has its form recorded.)
    std::optional<AssociativeUpdate> red =
        update_form(d, func.name(), d.args, d.values, domain_outermost_first(d.rdom));
    user_assert(red.has_value()) << where << ": AICF cannot tell that this update is associative. "
                                 << "rfactor recognizes " << associative_forms(func.name()) << ".";
    user_assert(!d.merges || (d.merges->had_point < 0 &&
                              !(red->order_dependent() && d.rdom.predicate().defined())))
        << where << ": this update is one an earlier rfactor wrote, over partial results that "
        << "carry whether they had any point (the update keeps one candidate by comparison, "
        << "with ties that depend on order, and a where() or a split whose factor does not "
        << "divide the extent leaves some partials without a point), so rfactor cannot split "
        << "it again. Preserve several variables in the first rfactor instead "
        << "(rfactor({{ri, u}, {ro, v}})), or keep the candidate's position in the Tuple "
        << "(select(better, r.x, index)).";

    // A where() test that reads the Func ("add while the sum is below 50") depends on every
    // step before it, so the steps cannot be split into partials.
    bool test_reads_func = false;
    if (d.rdom.predicate().defined()) {
        visit_each_distinct<Call>(d.rdom.predicate(), [&](const Call *c) {
            test_reads_func = test_reads_func || c->name == func.name();
        });
    }
    user_assert(!test_reads_func)
        << where << ": the update's where() test reads " << func.name()
        << " itself, so each step depends on every step before it and the reduction cannot be "
        << "split into partials. rfactor needs a where() that does not read " << func.name()
        << "; without rfactor the update runs serially, in order.";

    // The reduction variables that stay reductions in the intermediate, and those that
    // become pure variables there.
    std::map<std::string, std::string> to_pure;
    for (const auto &p : preserved) {
        auto in_domain = [&] {
            // (A split or fuse that makes a loop of the domain variable's name: the name is
            // that loop's, not the domain's.)
            for (const Split &sp : d.schedule.splits) {
                const bool makes = sp.kind == Split::FuseVars ? sp.old_var == p.first.name()
                                                              : sp.outer == p.first.name() ||
                                                                    (sp.kind == Split::SplitVar &&
                                                                     sp.inner == p.first.name());
                if (makes) return false;
            }
            for (const ReductionVariable &rv : d.rdom.domain())
                if (rv.var == p.first.name()) return true;
            return false;
        };
        // A loop made from reduction variables by splits, fuses and renames (and from such
        // loops again): make the steps that lead to it, first to last, variables of the
        // domain. A name is the loop the last step that made it made (split(r, r, ri) reuses
        // r for the outer loop; unroll and vectorize by a factor do so too): each step is
        // followed by the steps after it.
        std::function<bool(const std::string &, size_t)> leads_to = [&](const std::string &var,
                                                                        size_t from) {
            for (size_t i = from; i < d.schedule.splits.size(); i++) {
                const Split &sp = d.schedule.splits[i];
                if (sp.kind == Split::SplitVar && sp.old_var == var)
                    return leads_to(sp.inner, i + 1) || leads_to(sp.outer, i + 1);
                if (sp.kind == Split::FuseVars && (sp.inner == var || sp.outer == var))
                    return leads_to(sp.old_var, i + 1);
                if (sp.kind == Split::RenameVar && sp.old_var == var)
                    return leads_to(sp.outer, i + 1);
            }
            return var == p.first.name();
        };
        auto of_domain = [&](const std::string &var) {
            for (const ReductionVariable &rv : d.rdom.domain())
                if (rv.var == var) return true;
            return false;
        };
        bool progressed = true;
        while (!in_domain() && progressed) {
            progressed = false;
            for (size_t i = 0; i < d.schedule.splits.size() && !progressed; i++) {
                const Split &sp = d.schedule.splits[i];
                if (sp.kind == Split::FuseVars) {
                    if (of_domain(sp.inner) && of_domain(sp.outer) && leads_to(sp.inner, i)) {
                        check_fuse_keeps_order(d, sp, *red, where);
                        fuse_into_domain(d, i, where);
                        progressed = true;
                    }
                } else if (of_domain(sp.old_var) && leads_to(sp.old_var, i)) {
                    if (sp.kind == Split::SplitVar) {
                        split_into_domain(d, i, where);
                    } else {
                        rename_into_domain(d, i);
                    }
                    progressed = true;
                }
            }
        }
        user_assert(in_domain()) << where << ": " << p.first.name()
                                 << " is not a reduction variable of this update, nor a loop "
                                 << "made from them by splits, fuses and renames.";
        user_assert(!to_pure.count(p.first.name()))
            << where << ": " << p.first.name() << " is named twice. Preserve each reduction "
            << "variable once, with one new Var.";
        for (const std::string &a : func.args()) {
            user_assert(a != p.second.name())
                << where << ": the new variable " << p.second.name() << " is already a variable of "
                << func.name() << ". Use a new Var.";
        }
        // (A histogram's bin read from data at it, h(in(r)), is fine: partial histograms.)
        bool on_left = false;
        for (const Expr &a : d.args) {
            bool uses = false, reads = false;
            visit_each_distinct<Variable>(
                a, [&](const Variable *v) { uses = uses || v->name == p.first.name(); });
            visit_each_distinct<Call>(a, [&](const Call *) { reads = true; });
            on_left = on_left || (uses && !reads);
        }
        user_assert(!on_left)
            << where << ": " << p.first.name() << " chooses the point the update writes (it is "
            << "on the left side), so the update writes a different point for each of its "
            << "values and has nothing to reduce along it. rfactor preserves reduction "
            << "variables that the left side does not use.";
        // Nor may it name another loop of the update (or one a split replaced): the
        // intermediate would have two loops of one name.
        std::set<std::string> loops, new_vars;
        for (const Dim &dim : d.schedule.dims)
            loops.insert(dim.var);
        for (const Split &sp : d.schedule.splits)
            loops.insert({sp.old_var, sp.outer, sp.inner});
        loops.erase(p.first.name());
        for (const auto &q : to_pure)
            new_vars.insert(q.second);
        user_assert(!loops.count(p.second.name()) && !new_vars.count(p.second.name()))
            << where << ": the new variable " << p.second.name() << " has the name of "
            << (new_vars.count(p.second.name()) ? "another new variable of this rfactor"
                                                : "a loop of " + name())
            << ". Use a new Var.";
        to_pure[p.first.name()] = p.second.name();
    }
    user_assert(!to_pure.empty()) << where << ": name at least one reduction variable to preserve.";
    if (red->order_dependent()) {
        // Which of equal candidates the update keeps depends on their order: each partial
        // must reduce a consecutive run of the domain, and the partials merge in order. So the
        // preserved variables must be the outer ones (the domain lists the innermost first).
        const std::vector<ReductionVariable> &dom = d.rdom.domain();
        size_t last_kept = 0, first_preserved = dom.size();
        bool any_kept = false;
        std::string outermost_first;
        for (size_t i = dom.size(); i-- > 0;) {
            outermost_first += (outermost_first.empty() ? "" : ", ") + dom[i].var;
            if (to_pure.count(dom[i].var)) {
                first_preserved = std::min(first_preserved, i);
            } else if (!any_kept) {
                last_kept = i, any_kept = true;
            }
        }
        user_assert(!any_kept || last_kept < first_preserved)
            << where << ": the update keeps one candidate by comparison (argmax-style), and "
            << "which of equal candidates it keeps depends on their order, so each partial must "
            << "reduce a consecutive run of the domain. Preserve only reduction variables outside "
            << "every one kept in the intermediate: the domain's variables are, outermost first, "
            << outermost_first << " (split the reduction with the partials' variable outside, "
            << "e.g. split(r, ro, ri, n).rfactor(ro, u)). Partials may cover any points when the "
            << "update keeps each candidate's position in its Tuple (select(better, r.x, index) "
            << "for every variable of the domain).";
    }

    // The reduction variables keep their names in the intermediate (so the user's RVars
    // schedule its update), and the merge iterates over the preserved Vars' names.
    // The first intermediate of f is f_intm; another one (of a second update, or of this
    // update again) f_intm2, and so on: names the Func's definitions do not call yet.
    std::set<std::string> called;
    for (int i = 0; i < func.stages(); i++) {
        for (const Expr &v : func.stage(i).values)
            visit_each_distinct<Call>(v, [&](const Call *c) { called.insert(c->name); });
    }
    std::string intm_name = func.name() + "_intm";
    for (int n = 2; called.count(intm_name); n++)
        intm_name = func.name() + "_intm" + std::to_string(n);
    std::vector<ReductionVariable> kept, merged;
    std::map<std::string, Expr> intm_subs, merge_subs;
    for (const ReductionVariable &rv : d.rdom.domain()) {
        if (to_pure.count(rv.var)) {
            merged.push_back({to_pure[rv.var], rv.min, rv.extent});
        } else {
            kept.push_back(rv);
        }
    }
    // Every reduction variable preserved, with a predicate left (the guard of a split whose
    // factor does not divide the extent): the predicate stays a guard around the
    // intermediate's update, on a domain of one point, so what it protects (a read past the
    // input) is not evaluated where it fails.
    const bool guard_only = kept.empty() && d.rdom.predicate().defined();
    if (guard_only)
        kept.push_back({intm_name + "_guard", make_const(Int(32), int64_t(0)),
                        make_const(Int(32), int64_t(1))});
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
    std::vector<Type> types;
    for (const Expr &v : d.values)
        types.push_back(v.type());
    std::vector<Expr> init = red->identity(types);
    // A form whose ties depend on order cannot tell the identity from a candidate equal to it
    // (-inf): a partial that a where() leaves with no point would win a tie with one that has
    // points. Its partials then carry one more element, whether they have had a point, and the
    // merge passes over those that have not.
    const bool flagged = red->order_dependent() && d.rdom.predicate().defined();
    if (flagged) init.push_back(make_zero(Int(32)));
    intm.define(intm_args, init);
    // Where the update writes: its own point (the pure variables, or a point computed from
    // the data, as a histogram's bin is), in the partial of its preserved variables.
    std::vector<Expr> intm_update_args;
    for (const Expr &a : d.args)
        intm_update_args.push_back(substitute(intm_subs, a));
    for (const auto &p : preserved)
        intm_update_args.push_back(Variable::make(Int(32), p.second.name()));
    std::vector<Expr> intm_self;
    for (size_t i = 0; i < d.values.size(); i++)
        intm_self.push_back(intm.call(intm_update_args, int(i)));
    std::vector<Expr> intm_values;
    // (The form as the domain now spells it: the splits and fuses made into domain variables
    // above rewrote the update's values.)
    // (An update rfactor wrote already takes each element in as a step of its form.)
    const std::optional<AssociativeUpdate> now =
        d.merges ? std::nullopt
                 : find_associative_update(func.name(), d.args, d.values,
                                           domain_outermost_first(d.rdom));
    const std::vector<Expr> step = now ? now->partial_step(intm_self, d.values) : d.values;
    for (size_t i = 0; i < d.values.size(); i++) {
        Expr v = replace_self(step[i], func, d.args, intm_self);
        intm_values.push_back(substitute(intm_subs, v));
    }
    if (flagged) intm_values.push_back(make_one(Int(32)));
    intm.define_update(intm_update_args, intm_values);
    // The one-point domain that only holds the predicate has no loop; the update still needs
    // its predicate.
    if (guard_only) intm.update(int(intm.updates().size()) - 1).rdom = kept_dom;
    // Both stages written here record the form they take their values in: the
    // intermediate's update steps of it (the streaming softmax pair's through its merge), the
    // merge below its merge() of the partials. Cross-thread reductions of their loops take it
    // from there. (The element past the form's, where there is one, says whether a partial
    // has had a point.)
    auto form_of = [&](const std::string &partials) {
        auto m = std::make_shared<Definition::Merge>();
        m->form = std::make_shared<const AssociativeUpdate>(*red);
        m->partials = partials;
        if (flagged) m->had_point = int(types.size());
        return m;
    };
    intm.update(int(intm.updates().size()) - 1).merges = form_of("");

    // This stage now merges the partial results over the preserved variables, at every
    // point of the Func.
    std::vector<Expr> pure_args;
    for (const std::string &a : func.args())
        pure_args.push_back(Variable::make(Int(32), a));
    std::vector<Expr> at_partial = pure_args; // the intermediate's arguments, in its order
    for (const auto &p : preserved)
        at_partial.push_back(Variable::make(Int(32), p.second.name(), merged_dom));
    std::vector<Expr> partial, self, values;
    for (size_t i = 0; i < d.values.size(); i++) {
        partial.push_back(intm.call(at_partial, int(i)));
        self.push_back(func.call(pure_args, int(i)));
    }
    values = red->merge(self, partial);
    if (flagged) {
        Expr has_points = NE::make(intm.call(at_partial, int(types.size())), make_zero(Int(32)));
        for (size_t i = 0; i < values.size(); i++)
            values[i] = Select::make(has_points, values[i], self[i]);
    }
    Definition merge;
    merge.args = pure_args;
    merge.rdom = merged_dom;
    for (const Expr &v : values)
        merge.values.push_back(weaken_calls_to(v, func.get()));
    for (const ReductionVariable &m : merged)
        merge.schedule.dims.push_back(Dim{m.var, ForType::Serial, true});
    // The loops of the pure variables keep what the update's schedule made of them (splits,
    // order, GPU threads), outside the merge's loops.
    // (A pure loop fused with a reduction loop starts again from the pure variables.)
    std::set<std::string> pure(func.args().begin(), func.args().end());
    bool mixed = false;
    for (const Split &sp : d.schedule.splits) {
        if (sp.kind == Split::FuseVars) {
            if (pure.count(sp.inner) && pure.count(sp.outer)) {
                merge.schedule.splits.push_back(sp);
                pure.insert(sp.old_var);
            } else {
                mixed = mixed || pure.count(sp.inner) || pure.count(sp.outer);
            }
            continue;
        }
        if (!pure.count(sp.old_var)) continue;
        merge.schedule.splits.push_back(sp);
        pure.insert(sp.outer);
        if (sp.kind == Split::SplitVar) pure.insert(sp.inner);
    }
    const size_t merged_dims = merge.schedule.dims.size();
    for (const Dim &dim : d.schedule.dims)
        if (!dim.is_rvar && pure.count(dim.var)) merge.schedule.dims.push_back(dim);
    if (mixed) {
        merge.schedule.splits.clear();
        merge.schedule.dims.resize(merged_dims);
    }
    // The merge runs at every point of the Func: a pure variable the update had no loop for
    // (a histogram's bin, written at a point computed from the data) gets a plain loop.
    for (const std::string &a : func.args()) {
        bool looped = false;
        for (const Split &sp : merge.schedule.splits)
            looped = looped || sp.old_var == a ||
                     (sp.kind == Split::FuseVars && (sp.inner == a || sp.outer == a));
        for (const Dim &dim : merge.schedule.dims)
            looped = looped || dim.var == a;
        if (!looped) merge.schedule.dims.push_back(Dim{a});
    }
    merge.as_written = as_written;
    merge.merges = form_of(intm.name());
    d = merge;
    restore.done = true;
    return Func(intm);
}

} // namespace aicf
