#include "lowering/Inline.h"

#include "dsl/ir/CSE.h"

#include "dsl/base/Error.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"

#include <map>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// The inlined Funcs' definitions, by name: their values (one per Tuple element) with the
// inlined Funcs they call already replaced, and their argument names.
struct InlinedDefinition {
    std::vector<std::string> args;
    std::vector<Expr> values;
};

class Inliner : public IRMutator {
public:
    explicit Inliner(const std::map<std::string, InlinedDefinition> &defs) : defs(defs) {}

private:
    const std::map<std::string, InlinedDefinition> &defs;
    using IRMutator::visit;

    Expr visit(const Call *op) override {
        Expr e = IRMutator::visit(op);
        op = e.as<Call>();
        if (op->call_type != Call::Func) return e;
        auto it = defs.find(op->name);
        if (it == defs.end()) return e;
        std::map<std::string, Expr> args;
        for (size_t i = 0; i < op->args.size(); i++)
            args[it->second.args.at(i)] = op->args[i];
        return substitute(args, it->second.values.at(op->value_index));
    }
};

} // namespace

Stmt inline_functions(const Stmt &s, const std::vector<Function> &funcs) {
    std::map<std::string, InlinedDefinition> defs;
    for (const Function &f : funcs) {
        internal_assert(!f.has_update_definition())
            << "inline_functions of " << f.name() << ", which has update definitions";
        InlinedDefinition d{f.args(), {}};
        for (const Expr &v : f.definition().values) {
            Expr value = Inliner(defs).mutate(share_repeated_subexpressions(v));
            // A float sum is not regrouped (its rounding depends on the grouping), so the
            // simplifier would not shrink it: simplifying it here would only add walks of
            // the tree the loop nest's passes walk again.
            if (!value.type().is_float() && !value.type().is_bfloat())
                value =
                    share_repeated_subexpressions(simplify(share_repeated_subexpressions(value)));
            d.values.push_back(value);
        }
        defs.emplace(f.name(), std::move(d));
    }
    return defs.empty() ? s : Inliner(defs).mutate(s);
}

} // namespace lowering
} // namespace aicf
