#include "dsl/InlineReductions.h"

#include "dsl/Func.h"
#include "dsl/Operators.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Substitute.h"

#include <algorithm>
#include <set>

namespace aicf {

using namespace ir;

namespace {

// The RDom an inline reduction reduces over, its argument, and the free variables of the
// argument: the new Func's pure Vars (`vars`), and what a call to it passes for them (`args`):
// the Vars themselves, or the variables of another RDom (an update's, around the reduction),
// which stand in the argument as pure Vars of their own.
struct ReductionParts {
    ReductionDomain rdom;
    Expr value;
    std::vector<Expr> vars, args;
};

ReductionParts analyze(const Expr &e, const char *what, const ReductionDomain *over = nullptr) {
    user_assert(e.defined()) << what << "() of an undefined Expr.";
    ReductionParts parts;
    if (over) {
        user_assert(over->defined()) << what << "(r, " << e << ") with an undefined RDom r.";
        parts.rdom = *over;
    }
    parts.value = e;
    std::set<std::string> seen;
    visit_each<Variable>(e, [&](const Variable *v) {
        if (v->param.defined()) return;
        if (v->rdom.defined() && (!over || v->rdom.same_as(parts.rdom))) {
            user_assert(!parts.rdom.defined() || parts.rdom.same_as(v->rdom))
                << what << "(" << e << ") uses reduction variables of two different RDoms; "
                << "use one RDom with several dimensions, or name the RDom to reduce over, " << what
                << "(r, e): the other RDom's variables are then arguments of the "
                << "reduction (each value of them a reduction of its own).";
            parts.rdom = v->rdom;
            return;
        }
        if (!seen.insert(v->name).second) return;
        if (v->rdom.defined()) {
            // A variable of another RDom: a pure Var of the reduction, called at it.
            std::string var = v->name;
            std::replace(var.begin(), var.end(), '.', '_');
            Expr pure = Variable::make(Int(32), var + "_of_" + what);
            parts.value = substitute(v->name, pure, parts.value);
            parts.vars.push_back(pure);
            parts.args.push_back(Expr(v));
            return;
        }
        parts.vars.push_back(Variable::make(Int(32), v->name));
        parts.args.push_back(parts.vars.back());
    });
    user_assert(parts.rdom.defined())
        << what << "(" << e << ") has no reduction variable to reduce over. Use an RDom in "
        << "its argument, e.g. " << what << "(f(r.x, y)) with RDom r(0, n).";
    // A `where` predicate may use pure Vars too; they become arguments as well.
    std::set<std::string> domain_vars;
    for (const ReductionVariable &rv : parts.rdom.domain())
        domain_vars.insert(rv.var);
    visit_each<Variable>(parts.rdom.predicate(), [&](const Variable *v) {
        if (v->param.defined() || domain_vars.count(v->name)) return;
        user_assert(!v->rdom.defined())
            << what << " over an RDom whose where() predicate uses " << v->name
            << ", a variable of another RDom: write the condition into the reduced value "
            << "instead (select(condition, value, identity)).";
        if (seen.insert(v->name).second) {
            parts.vars.push_back(Variable::make(Int(32), v->name));
            parts.args.push_back(parts.vars.back());
        }
    });
    return parts;
}

Expr reduce(const ReductionParts &parts, const std::string &name, const Expr &identity,
            Expr (*combine)(Expr, Expr)) {
    Func f(name);
    ir::Function(f.function()).schedule().innermost_by_default = true;
    f(parts.vars) = identity;
    f(parts.vars) = combine(f(parts.vars), parts.value);
    return f(parts.args);
}

Tuple arg_reduce(const ReductionParts &parts, const std::string &name, bool is_max) {
    const Expr &e = parts.value;
    Func f(name);
    ir::Function(f.function()).schedule().innermost_by_default = true;
    const auto &domain = parts.rdom.domain();
    std::vector<Expr> init, update;
    for (const ReductionVariable &rv : domain)
        init.push_back(rv.min);
    init.push_back(is_max ? type_min(e.type()) : type_max(e.type()));
    f(parts.vars) = Tuple(init);
    // Strict comparison keeps the first point on ties (the domain runs innermost first).
    Expr current = f(parts.vars)[static_cast<int>(domain.size())];
    Expr better = is_max ? e > current : e < current;
    // A NaN beats every number and no later NaN beats it: the first NaN is the result, with
    // its point (as NumPy's and PyTorch's argmax and argmin).
    if (e.type().is_float()) better = better || (is_nan(e) && !is_nan(current));
    for (size_t i = 0; i < domain.size(); i++) {
        Expr rv = Variable::make(Int(32), domain[i].var, parts.rdom);
        update.push_back(select(better, rv, Expr(f(parts.vars)[static_cast<int>(i)])));
    }
    update.push_back(select(better, e, current));
    f(parts.vars) = Tuple(update);
    std::vector<Expr> result;
    for (int i = 0; i <= static_cast<int>(domain.size()); i++)
        result.push_back(f(parts.args)[i]);
    return Tuple(result);
}

} // namespace

#define AICF_DEFINE_INLINE_REDUCTION(NAME, IDENTITY, COMBINE)                                      \
    Expr NAME(const Expr &e, const std::string &name) {                                            \
        ReductionParts parts = analyze(e, #NAME);                                                  \
        return reduce(parts, name, IDENTITY, COMBINE);                                             \
    }                                                                                              \
    Expr NAME(const RDom &r, const Expr &e, const std::string &name) {                             \
        ReductionParts parts = analyze(e, #NAME, &r.domain());                                     \
        return reduce(parts, name, IDENTITY, COMBINE);                                             \
    }                                                                                              \
    Expr NAME(const Expr &e) {                                                                     \
        return NAME(e, detail::unique_name(#NAME));                                                \
    }                                                                                              \
    Expr NAME(const RDom &r, const Expr &e) {                                                      \
        return NAME(r, e, detail::unique_name(#NAME));                                             \
    }
AICF_DEFINE_INLINE_REDUCTION(sum, make_zero(e.type()), [](Expr a, Expr b) { return a + b; })
AICF_DEFINE_INLINE_REDUCTION(product, make_one(e.type()), [](Expr a, Expr b) { return a * b; })
AICF_DEFINE_INLINE_REDUCTION(maximum, type_min(e.type()), [](Expr a, Expr b) { return max(a, b); })
AICF_DEFINE_INLINE_REDUCTION(minimum, type_max(e.type()), [](Expr a, Expr b) { return min(a, b); })
#undef AICF_DEFINE_INLINE_REDUCTION

#define AICF_DEFINE_ARG_REDUCTION(NAME, IS_MAX)                                                    \
    Tuple NAME(const Expr &e, const std::string &name) {                                           \
        return arg_reduce(analyze(e, #NAME), name, IS_MAX);                                        \
    }                                                                                              \
    Tuple NAME(const RDom &r, const Expr &e, const std::string &name) {                            \
        return arg_reduce(analyze(e, #NAME, &r.domain()), name, IS_MAX);                           \
    }                                                                                              \
    Tuple NAME(const Expr &e) {                                                                    \
        return NAME(e, detail::unique_name(#NAME));                                                \
    }                                                                                              \
    Tuple NAME(const RDom &r, const Expr &e) {                                                     \
        return NAME(r, e, detail::unique_name(#NAME));                                             \
    }
AICF_DEFINE_ARG_REDUCTION(argmax, true)
AICF_DEFINE_ARG_REDUCTION(argmin, false)
#undef AICF_DEFINE_ARG_REDUCTION

} // namespace aicf
