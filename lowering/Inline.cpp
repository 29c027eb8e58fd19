#include "lowering/Inline.h"

#include "dsl/ir/CSE.h"

#include "dsl/base/Error.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/Substitute.h"

#include <map>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

class Inliner : public IRMutator {
public:
    explicit Inliner(const Function &f) : func(f) {
        internal_assert(!f.has_update_definition())
            << "inline_function of " << f.name() << ", which has update definitions";
    }

private:
    const Function &func;
    using IRMutator::visit;

    Expr visit(const Call *op) override {
        Expr e = IRMutator::visit(op);
        op = e.as<Call>();
        if (op->call_type != Call::Func || op->name != func.name()) return e;
        std::map<std::string, Expr> args;
        for (size_t i = 0; i < op->args.size(); i++)
            args[func.args()[i]] = op->args[i];
        return substitute(
            args, share_repeated_subexpressions(func.definition().values.at(op->value_index)));
    }
};

} // namespace

Stmt inline_function(const Stmt &s, const Function &f) {
    return Inliner(f).mutate(s);
}
Expr inline_function(const Expr &e, const Function &f) {
    return Inliner(f).mutate(e);
}

} // namespace lowering
} // namespace aicf
