#ifndef AICF_IR_IR_VISITOR_H
#define AICF_IR_IR_VISITOR_H

// A read-only walk over the IR. The default visit of each node visits its children.

#include "dsl/ir/IR.h"

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

// Calls `f` on every node of `ir` of type T (in any order), then keeps walking.
template <typename T, typename IRHandle, typename F>
void visit_each(const IRHandle &ir, F &&f) {
    struct Walker : IRVisitor {
        F &fn;
        explicit Walker(F &fn) : fn(fn) {}
        using IRVisitor::visit;
        void visit(const T *op) override {
            fn(op);
            IRVisitor::visit(op);
        }
    } walker(f);
    if (ir.defined()) ir.accept(&walker);
}

} // namespace ir
} // namespace aicf

#endif
