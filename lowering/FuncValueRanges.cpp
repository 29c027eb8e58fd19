#include "lowering/FuncValueRanges.h"

#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"

#include <functional>
#include <set>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// Whether an end of a range holds nothing but constants and Params (no loop or argument).
bool only_params(const Expr &e) {
    bool ok = true;
    visit_each<Variable>(e, [&](const Variable *v) { ok = ok && v->param.defined(); });
    return ok;
}

} // namespace

FuncValueRanges::Ranges func_value_ranges(const std::map<std::string, Function> &env) {
    FuncValueRanges::Ranges ranges;
    // Each Func once, after the Funcs its values call; one in a cycle (through another's
    // update) stays unbounded.
    std::set<std::string> started;
    std::function<void(const std::string &)> visit = [&](const std::string &name) {
        if (!started.insert(name).second) return;
        auto it = env.find(name);
        if (it == env.end()) return;
        const Function &f = it->second;
        if (!f.has_pure_definition() || f.has_update_definition()) return;
        const Definition &d = f.definition();
        auto bounded = [](const Expr &v) {
            return v.type().is_int_or_uint() || v.type().is_bool();
        };
        // (Each distinct node once: a value may be a graph of many shared steps.)
        for (const Expr &v : d.values) {
            if (!bounded(v)) continue;
            visit_each_distinct<Call>(v, [&](const Call *c) {
                if (c->call_type == Call::Func) visit(c->name);
            });
        }
        Scope<Interval> anywhere;
        for (const std::string &a : f.args())
            anywhere.push(a, Interval::everything());
        FuncValueRanges known(ranges);
        for (size_t i = 0; i < d.values.size(); i++) {
            if (!bounded(d.values[i])) continue;
            Interval r = bounds_of_expr_in_scope(d.values[i], anywhere);
            if (r.min.defined()) r.min = simplify(r.min);
            if (r.max.defined()) r.max = simplify(r.max);
            if (r.min.defined() && !only_params(r.min)) r.min = Expr();
            if (r.max.defined() && !only_params(r.max)) r.max = Expr();
            if (r.min.defined() || r.max.defined()) ranges[{name, int(i)}] = r;
        }
    };
    for (const auto &[name, f] : env)
        visit(name);
    return ranges;
}

} // namespace lowering
} // namespace aicf
