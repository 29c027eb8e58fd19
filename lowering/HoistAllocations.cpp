#include "lowering/HoistAllocations.h"

#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// The heap allocations of a loop's body that may move out of it, outermost first.
class FindHoistable : public IRVisitor {
public:
    explicit FindHoistable(const std::string &loop) { bound.insert(loop); }

    std::vector<const Allocate *> found;
    std::set<std::string> bound;          // names bound in the body, and the loop's
    std::map<std::string, int> allocated; // how often each name is allocated in the body

private:
    // Conditions, and loops other than serial ones (parallel, vectorized, GPU), between the
    // loop and the current point: storage under them stays where it is.
    int conditional = 0, not_serial = 0;

    using IRVisitor::visit;

    void visit(const Allocate *op) override {
        allocated[op->name]++;
        if (op->memory_type == MemoryType::Heap && conditional == 0 && not_serial == 0)
            found.push_back(op);
        IRVisitor::visit(op);
    }
    void visit(const IfThenElse *op) override {
        op->condition.accept(this);
        conditional++;
        op->then_case.accept(this);
        if (op->else_case.defined()) op->else_case.accept(this);
        conditional--;
    }
    void visit(const For *op) override {
        bound.insert(op->name);
        not_serial += op->for_type != ForType::Serial;
        IRVisitor::visit(op);
        not_serial -= op->for_type != ForType::Serial;
    }
    void visit(const LetStmt *op) override {
        bound.insert(op->name);
        IRVisitor::visit(op);
    }
    void visit(const Let *op) override {
        bound.insert(op->name);
        IRVisitor::visit(op);
    }
};

// Replaces the given allocations by their bodies.
class RemoveAllocations : public IRMutator {
public:
    explicit RemoveAllocations(const std::set<const Allocate *> &which) : which(which) {}

private:
    const std::set<const Allocate *> &which;
    using IRMutator::visit;
    Stmt visit(const Allocate *op) override {
        if (which.count(op)) return mutate(op->body);
        return IRMutator::visit(op);
    }
};

class Hoist : public IRMutator {
    using IRMutator::visit;

    Stmt visit(const For *op) override {
        Stmt inner = IRMutator::visit(op); // loops inside first: they pass theirs out to this one
        const For *loop = inner.as<For>();
        if (!loop || loop->for_type != ForType::Serial) return inner;
        FindHoistable find(loop->name);
        loop->body.accept(&find);
        std::vector<const Allocate *> moving;
        for (const Allocate *a : find.found) {
            bool invariant = true;
            for (const Expr &e : a->extents) {
                invariant = invariant && !uses_vars(e, find.bound);
                // A size read from memory may be written in the loop.
                visit_each<Load>(e, [&](const Load *) { invariant = false; });
            }
            if (!invariant || find.allocated[a->name] != 1) continue;
            // Referred to in the loop only inside the allocation (which counts itself once).
            if (storage_references(loop->body, a->name).total() !=
                storage_references(a->body, a->name).total() + 1)
                continue;
            moving.push_back(a);
        }
        if (moving.empty()) return inner;
        std::set<const Allocate *> which(moving.begin(), moving.end());
        Stmt result = For::make(loop->name, loop->min, loop->extent, loop->for_type, loop->gpu_dim,
                                RemoveAllocations(which).mutate(loop->body));
        // A loop that runs no iteration allocated nothing: then the storage is empty (a
        // condition around it would keep it from moving out of the loops further out).
        Expr runs = GT::make(loop->extent, make_zero(loop->extent.type()));
        bool always = can_prove(runs);
        for (auto it = moving.rbegin(); it != moving.rend(); ++it) {
            const Allocate *a = *it;
            std::vector<Expr> extents = a->extents;
            if (!always && !extents.empty())
                extents[0] = Select::make(runs, extents[0], make_zero(extents[0].type()));
            result = Allocate::make(a->name, a->type, a->memory_type, extents, result);
        }
        return result;
    }
};

} // namespace

Stmt hoist_allocations(const Stmt &s) {
    return Hoist().mutate(s);
}

} // namespace lowering
} // namespace aicf
