#include "lowering/HoistKernelChecks.h"

#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"

#include <set>
#include <string>
#include <vector>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// Takes the checks that may move out of one kernel (its outermost block loop), each under the
// conditions that lead to it.
class TakeChecks : public IRMutator {
public:
    std::vector<Stmt> hoisted;

private:
    std::set<std::string> inner; // names bound inside the kernel so far
    std::vector<Expr> path;      // the conditions on the way here, each invariant
    int variant_path = 0;        // conditions and loops on the way that are not invariant

    using IRMutator::visit;

    // Whether e has one value throughout the kernel, which the host can compute.
    bool invariant(const Expr &e) const { return !uses_vars(e, inner) && !reads_memory(e); }

    Stmt visit(const For *op) override {
        const bool on_path = invariant(op->min) && invariant(op->extent);
        if (on_path) {
            path.push_back(GT::make(op->extent, make_zero(op->extent.type())));
        } else {
            variant_path++;
        }
        inner.insert(op->name);
        Stmt s = IRMutator::visit(op);
        if (on_path) {
            path.pop_back();
        } else {
            variant_path--;
        }
        return s;
    }

    Stmt visit(const LetStmt *op) override {
        inner.insert(op->name);
        return IRMutator::visit(op);
    }

    Stmt visit(const IfThenElse *op) override {
        if (!invariant(op->condition)) {
            variant_path++;
            Stmt s = IRMutator::visit(op);
            variant_path--;
            return s;
        }
        path.push_back(op->condition);
        Stmt then_case = mutate(op->then_case);
        path.back() = Not::make(op->condition);
        Stmt else_case = op->else_case.defined() ? mutate(op->else_case) : op->else_case;
        path.pop_back();
        if (then_case.same_as(op->then_case) && else_case.same_as(op->else_case)) return op;
        return IfThenElse::make(op->condition, then_case, else_case);
    }

    // Whether e reads memory: the device copy a kernel reads may be newer than the host's.
    static bool reads_memory(const Expr &e) {
        bool found = false;
        visit_each<Load>(e, [&](const Load *) { found = true; });
        visit_each<Call>(e, [&](const Call *c) {
            found = found || c->call_type == Call::Func || c->call_type == Call::Image;
        });
        return found;
    }

    Stmt visit(const AssertStmt *op) override {
        if (variant_path > 0 || !invariant(op->condition) || !invariant(op->message)) return op;
        Stmt check = op;
        for (auto it = path.rbegin(); it != path.rend(); ++it) {
            const Expr c = simplify(*it);
            if (!is_true(c)) check = IfThenElse::make(c, check);
        }
        hoisted.push_back(check);
        return Evaluate::make(make_zero(Int(32)));
    }
};

class Hoist : public IRMutator {
    using IRMutator::visit;

    Stmt visit(const For *op) override {
        if (op->for_type != ForType::GPUBlock) return IRMutator::visit(op);
        TakeChecks take;
        Stmt kernel = take.mutate(Stmt(op));
        if (take.hoisted.empty()) return op;
        take.hoisted.push_back(kernel);
        return Block::make(take.hoisted);
    }
};

} // namespace

Stmt hoist_kernel_checks(const Stmt &s) {
    return Hoist().mutate(s);
}

} // namespace lowering
} // namespace aicf
