#include "dsl/InlineReductions.h"

#include "dsl/Func.h"
#include "dsl/Operators.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"

#include <set>

namespace aicf {

using namespace ir;

namespace {

// The RDom and the free pure Vars of an inline reduction's argument.
struct ReductionParts {
    ReductionDomain rdom;
    std::vector<Expr> vars;
};

ReductionParts analyze(const Expr &e, const char *what) {
    user_assert(e.defined()) << what << "() of an undefined Expr.";
    ReductionParts parts;
    std::set<std::string> seen;
    visit_each<Variable>(e, [&](const Variable *v) {
        if (v->param.defined()) return;
        if (v->rdom.defined()) {
            user_assert(!parts.rdom.defined() || parts.rdom.same_as(v->rdom))
                << what << "(" << e << ") uses reduction variables of two different RDoms; "
                << "use one RDom with several dimensions.";
            parts.rdom = v->rdom;
            return;
        }
        if (seen.insert(v->name).second) parts.vars.push_back(Variable::make(Int(32), v->name));
    });
    user_assert(parts.rdom.defined())
        << what << "(" << e << ") has no reduction variable to reduce over. Use an RDom in "
        << "its argument, e.g. " << what << "(f(r.x, y)) with RDom r(0, n).";
    // A `where` predicate may use pure Vars too; they become arguments as well.
    std::set<std::string> domain_vars;
    for (const ReductionVariable &rv : parts.rdom.domain())
        domain_vars.insert(rv.var);
    visit_each<Variable>(parts.rdom.predicate(), [&](const Variable *v) {
        if (v->param.defined() || v->rdom.defined() || domain_vars.count(v->name)) return;
        if (seen.insert(v->name).second) parts.vars.push_back(Variable::make(Int(32), v->name));
    });
    return parts;
}

Expr reduce(const Expr &e, const std::string &name, const char *what, const Expr &identity,
            Expr (*combine)(Expr, Expr)) {
    ReductionParts parts = analyze(e, what);
    Func f(name);
    ir::Function(f.function()).schedule().innermost_by_default = true;
    f(parts.vars) = identity;
    f(parts.vars) = combine(f(parts.vars), e);
    return f(parts.vars);
}

Tuple arg_reduce(const Expr &e, const std::string &name, const char *what, bool is_max) {
    ReductionParts parts = analyze(e, what);
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
        result.push_back(f(parts.vars)[i]);
    return Tuple(result);
}

} // namespace

Expr sum(const Expr &e, const std::string &name) {
    return reduce(e, name, "sum", make_zero(e.type()), [](Expr a, Expr b) { return a + b; });
}

Expr product(const Expr &e, const std::string &name) {
    return reduce(e, name, "product", make_one(e.type()), [](Expr a, Expr b) { return a * b; });
}

Expr maximum(const Expr &e, const std::string &name) {
    return reduce(e, name, "maximum", type_min(e.type()), [](Expr a, Expr b) { return max(a, b); });
}

Expr minimum(const Expr &e, const std::string &name) {
    return reduce(e, name, "minimum", type_max(e.type()), [](Expr a, Expr b) { return min(a, b); });
}

Tuple argmax(const Expr &e, const std::string &name) {
    return arg_reduce(e, name, "argmax", true);
}
Tuple argmin(const Expr &e, const std::string &name) {
    return arg_reduce(e, name, "argmin", false);
}

Expr sum(const Expr &e) {
    return sum(e, detail::unique_name("sum"));
}
Expr product(const Expr &e) {
    return product(e, detail::unique_name("product"));
}
Expr maximum(const Expr &e) {
    return maximum(e, detail::unique_name("maximum"));
}
Expr minimum(const Expr &e) {
    return minimum(e, detail::unique_name("minimum"));
}
Tuple argmax(const Expr &e) {
    return argmax(e, detail::unique_name("argmax"));
}
Tuple argmin(const Expr &e) {
    return argmin(e, detail::unique_name("argmin"));
}

} // namespace aicf
