#ifndef AICF_IR_IR_VISITOR_H
#define AICF_IR_IR_VISITOR_H

// A read-only walk over the IR. The default visit of each node visits its children.

#include "dsl/ir/IR.h"

#include <type_traits>
#include <unordered_set>
#include <vector>

namespace aicf {
namespace ir {

class IRVisitor {
public:
    virtual ~IRVisitor() = default;
#define AICF_VISIT_DECL(N) virtual void visit(const N *);
    AICF_FOR_EACH_EXPR(AICF_VISIT_DECL)
    AICF_FOR_EACH_STMT(AICF_VISIT_DECL)
#undef AICF_VISIT_DECL
};

// A visitor that walks each distinct expression node once. Expressions are trees that share
// nodes (an algorithm that uses a value twice per step, over many steps, is exponentially
// larger as a tree than as a graph); a walk that only collects facts needs each node once.
// A subclass that overrides a visit method starts it with `if (!first_visit(op)) return;`.
class IRGraphVisitor : public IRVisitor {
public:
#define AICF_GRAPH_VISIT_DECL(N) void visit(const N *op) override;
    AICF_FOR_EACH_EXPR(AICF_GRAPH_VISIT_DECL)
#undef AICF_GRAPH_VISIT_DECL
    using IRVisitor::visit;

protected:
    bool first_visit(const IRNode *node) {
        return !deduplicate() || visited.insert(node).second;
    }
    // Whether a node seen before may be skipped now (a visitor that tracks scopes may say no
    // inside a scope where the same node means something else).
    virtual bool deduplicate() const {
        return true;
    }

private:
    std::unordered_set<const IRNode *> visited;
};

namespace walk_detail {

// Calls `f` on the nodes of `ir` of type T, walking with Base (an IRVisitor, or an
// IRGraphVisitor to see each distinct node once).
template <typename T, typename Base, typename IRHandle, typename F>
void visit_each_with(const IRHandle &ir, F &&f) {
    struct Walker : Base {
        F &fn;
        explicit Walker(F &fn) : fn(fn) {}
        using Base::visit;
        void visit(const T *op) override {
            if constexpr (std::is_base_of_v<IRGraphVisitor, Base>) {
                if (!this->first_visit(op)) return;
            }
            fn(op);
            IRVisitor::visit(op);
        }
    } walker(f);
    if (ir.defined()) ir.accept(&walker);
}

} // namespace walk_detail

// Calls `f` on every node of `ir` of type T (in any order), then keeps walking.
template <typename T, typename IRHandle, typename F> void visit_each(const IRHandle &ir, F &&f) {
    walk_detail::visit_each_with<T, IRVisitor>(ir, f);
}

// Calls `f` once on each distinct node of `ir` of type T (in any order).
template <typename T, typename IRHandle, typename F>
void visit_each_distinct(const IRHandle &ir, F &&f) {
    walk_detail::visit_each_with<T, IRGraphVisitor>(ir, f);
}

// The number of expression nodes in `e`: walked as a tree (each path through a shared node
// counts), or each distinct node once. The walk stops soon after `limit`, so the count is
// exact up to `limit` and only says "more" beyond it.
size_t count_nodes(const Expr &e, size_t limit);
size_t count_distinct_nodes(const Expr &e, size_t limit);

// The expressions directly under `e` (its operands, a call's arguments, a let's value and
// body), in the order the default visit walks them. For walks that remember each node's
// result, and so take time in proportion to the graph rather than the tree.
std::vector<Expr> children_of(const Expr &e);

} // namespace ir
} // namespace aicf

#endif
