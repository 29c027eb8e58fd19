#include "dsl/ir/IRVisitor.h"

namespace aicf {
namespace ir {

void IRVisitor::visit(const IntImm *) {}
void IRVisitor::visit(const UIntImm *) {}
void IRVisitor::visit(const FloatImm *) {}
void IRVisitor::visit(const StringImm *) {}
void IRVisitor::visit(const Cast *op) {
    op->value.accept(this);
}
void IRVisitor::visit(const Reinterpret *op) {
    op->value.accept(this);
}
void IRVisitor::visit(const Variable *) {}

#define AICF_VISIT_BINARY(N)                                                                       \
    void IRVisitor::visit(const N *op) {                                                           \
        op->a.accept(this);                                                                        \
        op->b.accept(this);                                                                        \
    }
AICF_VISIT_BINARY(Add)
AICF_VISIT_BINARY(Sub)
AICF_VISIT_BINARY(Mul)
AICF_VISIT_BINARY(Div)
AICF_VISIT_BINARY(Mod)
AICF_VISIT_BINARY(Min)
AICF_VISIT_BINARY(Max)
AICF_VISIT_BINARY(EQ)
AICF_VISIT_BINARY(NE)
AICF_VISIT_BINARY(LT)
AICF_VISIT_BINARY(LE)
AICF_VISIT_BINARY(GT)
AICF_VISIT_BINARY(GE)
AICF_VISIT_BINARY(And)
AICF_VISIT_BINARY(Or)
#undef AICF_VISIT_BINARY

void IRVisitor::visit(const Not *op) {
    op->a.accept(this);
}
void IRVisitor::visit(const Select *op) {
    op->condition.accept(this);
    op->true_value.accept(this);
    op->false_value.accept(this);
}
void IRVisitor::visit(const Load *op) {
    op->index.accept(this);
    op->predicate.accept(this);
}
void IRVisitor::visit(const Ramp *op) {
    op->base.accept(this);
    op->stride.accept(this);
}
void IRVisitor::visit(const Broadcast *op) {
    op->value.accept(this);
}
void IRVisitor::visit(const Call *op) {
    for (const Expr &a : op->args)
        a.accept(this);
}
void IRVisitor::visit(const Let *op) {
    op->value.accept(this);
    op->body.accept(this);
}
void IRVisitor::visit(const LetStmt *op) {
    op->value.accept(this);
    op->body.accept(this);
}
void IRVisitor::visit(const AssertStmt *op) {
    op->condition.accept(this);
    op->message.accept(this);
}
void IRVisitor::visit(const ProducerConsumer *op) {
    op->body.accept(this);
}
void IRVisitor::visit(const For *op) {
    op->min.accept(this);
    op->extent.accept(this);
    op->body.accept(this);
}
void IRVisitor::visit(const Store *op) {
    op->value.accept(this);
    op->index.accept(this);
    op->predicate.accept(this);
}
void IRVisitor::visit(const Provide *op) {
    for (const Expr &v : op->values)
        v.accept(this);
    for (const Expr &a : op->args)
        a.accept(this);
}
void IRVisitor::visit(const Allocate *op) {
    for (const Expr &e : op->extents)
        e.accept(this);
    op->body.accept(this);
}
void IRVisitor::visit(const Free *) {}
void IRVisitor::visit(const Realize *op) {
    for (const Range &r : op->bounds) {
        r.min.accept(this);
        r.extent.accept(this);
    }
    op->body.accept(this);
}
void IRVisitor::visit(const Block *op) {
    op->first.accept(this);
    op->rest.accept(this);
}
void IRVisitor::visit(const IfThenElse *op) {
    op->condition.accept(this);
    op->then_case.accept(this);
    if (op->else_case.defined()) op->else_case.accept(this);
}
void IRVisitor::visit(const Evaluate *op) {
    op->value.accept(this);
}

#define AICF_GRAPH_VISIT_DEF(N)                                                                    \
    void IRGraphVisitor::visit(const N *op) {                                                      \
        if (first_visit(op)) IRVisitor::visit(op);                                                 \
    }
AICF_FOR_EACH_EXPR(AICF_GRAPH_VISIT_DEF)
#undef AICF_GRAPH_VISIT_DEF

namespace {

template <typename Base> class NodeCounter : public Base {
public:
    explicit NodeCounter(size_t limit) : limit(limit) {}
    size_t count = 0;
    using Base::visit;
#define AICF_COUNT_NODE(N)                                                                         \
    void visit(const N *op) override {                                                             \
        if constexpr (std::is_base_of_v<IRGraphVisitor, Base>) {                                   \
            if (!this->first_visit(op)) return;                                                    \
        }                                                                                          \
        if (++count <= limit) IRVisitor::visit(op);                                                \
    }
    AICF_FOR_EACH_EXPR(AICF_COUNT_NODE)
#undef AICF_COUNT_NODE

private:
    size_t limit;
};

template <typename Base> size_t count_with(const Expr &e, size_t limit) {
    NodeCounter<Base> counter(limit);
    if (e.defined()) e.accept(&counter);
    return counter.count;
}

} // namespace

size_t count_nodes(const Expr &e, size_t limit) {
    return count_with<IRVisitor>(e, limit);
}
size_t count_distinct_nodes(const Expr &e, size_t limit) {
    return count_with<IRGraphVisitor>(e, limit);
}

namespace {

class Children : public IRVisitor {
public:
    explicit Children(std::vector<Expr> &found) : found(found) {}

private:
    bool top = true;
    std::vector<Expr> &found;

#define AICF_CHILD_VISIT(N)                                                                        \
    void visit(const N *op) override {                                                             \
        if (!top) {                                                                                \
            found.emplace_back(op);                                                                \
            return;                                                                                \
        }                                                                                          \
        top = false;                                                                               \
        IRVisitor::visit(op);                                                                      \
    }
    AICF_FOR_EACH_EXPR(AICF_CHILD_VISIT)
#undef AICF_CHILD_VISIT
};

} // namespace

std::vector<Expr> children_of(const Expr &e) {
    std::vector<Expr> found;
    Children c(found);
    if (e.defined()) e.accept(&c);
    return found;
}

} // namespace ir
} // namespace aicf
