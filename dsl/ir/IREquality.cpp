#include "dsl/ir/IREquality.h"

#include "dsl/ir/IRVisitor.h"

#include <cstring>
#include <functional>

namespace aicf {
namespace ir {

namespace {

// Compares two trees by walking `a` and keeping the matching node of `b` at hand.
class Comparer {
public:
    // Each use of a concrete Buffer in an algorithm makes its own Parameter; they are the
    // same input when they stand for the same buffer.
    static bool same_param(const Parameter &a, const Parameter &b) {
        if (a.get() == b.get()) return true;
        return a.defined() && b.defined() && a.is_concrete_buffer() && b.is_concrete_buffer() &&
               a.buffer() == b.buffer();
    }

    bool expr(const Expr &a, const Expr &b) {
        if (a.same_as(b)) return true;
        if (!a.defined() || !b.defined()) return false;
        if (a.node_type() != b.node_type() || a.type() != b.type()) return false;
        switch (a.node_type()) {
        case IRNodeType::IntImm:
            return a.as<IntImm>()->value == b.as<IntImm>()->value;
        case IRNodeType::UIntImm:
            return a.as<UIntImm>()->value == b.as<UIntImm>()->value;
        case IRNodeType::FloatImm: {
            double x = a.as<FloatImm>()->value, y = b.as<FloatImm>()->value;
            return std::memcmp(&x, &y, sizeof(double)) == 0;
        }
        case IRNodeType::StringImm:
            return a.as<StringImm>()->value == b.as<StringImm>()->value;
        case IRNodeType::Cast:
            return expr(a.as<Cast>()->value, b.as<Cast>()->value);
        case IRNodeType::Reinterpret:
            return expr(a.as<Reinterpret>()->value, b.as<Reinterpret>()->value);
        case IRNodeType::Variable: {
            const Variable *x = a.as<Variable>(), *y = b.as<Variable>();
            return x->name == y->name && x->param.get() == y->param.get() &&
                   x->rdom.get() == y->rdom.get();
        }
#define AICF_CMP_BINARY(N)                                                                         \
    case IRNodeType::N:                                                                            \
        return expr(a.as<N>()->a, b.as<N>()->a) && expr(a.as<N>()->b, b.as<N>()->b);
            AICF_CMP_BINARY(Add)
            AICF_CMP_BINARY(Sub)
            AICF_CMP_BINARY(Mul)
            AICF_CMP_BINARY(Div)
            AICF_CMP_BINARY(Mod)
            AICF_CMP_BINARY(Min)
            AICF_CMP_BINARY(Max)
            AICF_CMP_BINARY(EQ)
            AICF_CMP_BINARY(NE)
            AICF_CMP_BINARY(LT)
            AICF_CMP_BINARY(LE)
            AICF_CMP_BINARY(GT)
            AICF_CMP_BINARY(GE)
            AICF_CMP_BINARY(And)
            AICF_CMP_BINARY(Or)
#undef AICF_CMP_BINARY
        case IRNodeType::Not:
            return expr(a.as<Not>()->a, b.as<Not>()->a);
        case IRNodeType::Select: {
            const Select *x = a.as<Select>(), *y = b.as<Select>();
            return expr(x->condition, y->condition) && expr(x->true_value, y->true_value) &&
                   expr(x->false_value, y->false_value);
        }
        case IRNodeType::Load: {
            const Load *x = a.as<Load>(), *y = b.as<Load>();
            return x->name == y->name && expr(x->index, y->index) &&
                   expr(x->predicate, y->predicate);
        }
        case IRNodeType::Ramp: {
            const Ramp *x = a.as<Ramp>(), *y = b.as<Ramp>();
            return expr(x->base, y->base) && expr(x->stride, y->stride);
        }
        case IRNodeType::Broadcast:
            return expr(a.as<Broadcast>()->value, b.as<Broadcast>()->value);
        case IRNodeType::Call: {
            const Call *x = a.as<Call>(), *y = b.as<Call>();
            return x->name == y->name && x->call_type == y->call_type &&
                   x->intrinsic == y->intrinsic && x->func.get() == y->func.get() &&
                   x->value_index == y->value_index && same_param(x->param, y->param) &&
                   exprs(x->args, y->args);
        }
        case IRNodeType::Let: {
            const Let *x = a.as<Let>(), *y = b.as<Let>();
            return x->name == y->name && expr(x->value, y->value) && expr(x->body, y->body);
        }
        default:
            return false;
        }
    }

    bool exprs(const std::vector<Expr> &a, const std::vector<Expr> &b) {
        if (a.size() != b.size()) return false;
        for (size_t i = 0; i < a.size(); i++)
            if (!expr(a[i], b[i])) return false;
        return true;
    }

    bool stmt(const Stmt &a, const Stmt &b) {
        if (a.same_as(b)) return true;
        if (!a.defined() || !b.defined()) return false;
        if (a.node_type() != b.node_type()) return false;
        switch (a.node_type()) {
        case IRNodeType::LetStmt: {
            const LetStmt *x = a.as<LetStmt>(), *y = b.as<LetStmt>();
            return x->name == y->name && expr(x->value, y->value) && stmt(x->body, y->body);
        }
        case IRNodeType::AssertStmt: {
            const AssertStmt *x = a.as<AssertStmt>(), *y = b.as<AssertStmt>();
            return expr(x->condition, y->condition) && expr(x->message, y->message);
        }
        case IRNodeType::ProducerConsumer: {
            const ProducerConsumer *x = a.as<ProducerConsumer>(), *y = b.as<ProducerConsumer>();
            return x->name == y->name && x->is_producer == y->is_producer && stmt(x->body, y->body);
        }
        case IRNodeType::For: {
            const For *x = a.as<For>(), *y = b.as<For>();
            return x->name == y->name && x->for_type == y->for_type && x->gpu_dim == y->gpu_dim &&
                   expr(x->min, y->min) && expr(x->extent, y->extent) && stmt(x->body, y->body);
        }
        case IRNodeType::Store: {
            const Store *x = a.as<Store>(), *y = b.as<Store>();
            return x->name == y->name && expr(x->value, y->value) && expr(x->index, y->index) &&
                   expr(x->predicate, y->predicate);
        }
        case IRNodeType::Provide: {
            const Provide *x = a.as<Provide>(), *y = b.as<Provide>();
            return x->name == y->name && exprs(x->values, y->values) && exprs(x->args, y->args);
        }
        case IRNodeType::Allocate: {
            const Allocate *x = a.as<Allocate>(), *y = b.as<Allocate>();
            return x->name == y->name && x->type == y->type && x->memory_type == y->memory_type &&
                   exprs(x->extents, y->extents) && stmt(x->body, y->body);
        }
        case IRNodeType::Free:
            return a.as<Free>()->name == b.as<Free>()->name;
        case IRNodeType::Realize: {
            const Realize *x = a.as<Realize>(), *y = b.as<Realize>();
            if (x->name != y->name || x->types != y->types || x->memory_type != y->memory_type ||
                x->bounds.size() != y->bounds.size())
                return false;
            for (size_t i = 0; i < x->bounds.size(); i++) {
                if (!expr(x->bounds[i].min, y->bounds[i].min) ||
                    !expr(x->bounds[i].extent, y->bounds[i].extent))
                    return false;
            }
            return stmt(x->body, y->body);
        }
        case IRNodeType::Block: {
            const Block *x = a.as<Block>(), *y = b.as<Block>();
            return stmt(x->first, y->first) && stmt(x->rest, y->rest);
        }
        case IRNodeType::IfThenElse: {
            const IfThenElse *x = a.as<IfThenElse>(), *y = b.as<IfThenElse>();
            return expr(x->condition, y->condition) && stmt(x->then_case, y->then_case) &&
                   stmt(x->else_case, y->else_case);
        }
        case IRNodeType::Evaluate:
            return expr(a.as<Evaluate>()->value, b.as<Evaluate>()->value);
        default:
            return false;
        }
    }
};

inline void mix(size_t &h, size_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
}

class Hasher : public IRVisitor {
public:
    size_t h = 0;

private:
    void node(const IRNode *n) { mix(h, static_cast<size_t>(n->node_type) + 1); }
    void type(Type t) { mix(h, (size_t(t.code) << 24) | (size_t(t.bits) << 16) | t.lanes); }
    void str(const std::string &s) { mix(h, std::hash<std::string>()(s)); }

#define AICF_HASH_EXPR(N)                                                                          \
    void visit(const N *op) override {                                                             \
        node(op);                                                                                  \
        type(op->type);                                                                            \
        IRVisitor::visit(op);                                                                      \
    }
    AICF_HASH_EXPR(Cast)
    AICF_HASH_EXPR(Reinterpret)
    AICF_HASH_EXPR(Add)
    AICF_HASH_EXPR(Sub)
    AICF_HASH_EXPR(Mul)
    AICF_HASH_EXPR(Div)
    AICF_HASH_EXPR(Mod)
    AICF_HASH_EXPR(Min)
    AICF_HASH_EXPR(Max)
    AICF_HASH_EXPR(EQ)
    AICF_HASH_EXPR(NE)
    AICF_HASH_EXPR(LT)
    AICF_HASH_EXPR(LE)
    AICF_HASH_EXPR(GT)
    AICF_HASH_EXPR(GE)
    AICF_HASH_EXPR(And)
    AICF_HASH_EXPR(Or)
    AICF_HASH_EXPR(Not)
    AICF_HASH_EXPR(Select)
    AICF_HASH_EXPR(Ramp)
    AICF_HASH_EXPR(Broadcast)
#undef AICF_HASH_EXPR

    void visit(const IntImm *op) override {
        node(op);
        type(op->type);
        mix(h, static_cast<size_t>(op->value));
    }
    void visit(const UIntImm *op) override {
        node(op);
        type(op->type);
        mix(h, static_cast<size_t>(op->value));
    }
    void visit(const FloatImm *op) override {
        node(op);
        type(op->type);
        mix(h, std::hash<double>()(op->value));
    }
    void visit(const StringImm *op) override {
        node(op);
        str(op->value);
    }
    void visit(const Variable *op) override {
        node(op);
        type(op->type);
        str(op->name);
    }
    void visit(const Load *op) override {
        node(op);
        type(op->type);
        str(op->name);
        IRVisitor::visit(op);
    }
    void visit(const Call *op) override {
        node(op);
        type(op->type);
        str(op->name);
        mix(h, size_t(op->value_index));
        IRVisitor::visit(op);
    }
    void visit(const Let *op) override {
        node(op);
        str(op->name);
        IRVisitor::visit(op);
    }
    void visit(const LetStmt *op) override {
        node(op);
        str(op->name);
        IRVisitor::visit(op);
    }
    void visit(const For *op) override {
        node(op);
        str(op->name);
        mix(h, size_t(op->for_type));
        mix(h, size_t(int(op->gpu_dim) + 1));
        IRVisitor::visit(op);
    }
    void visit(const Store *op) override {
        node(op);
        str(op->name);
        IRVisitor::visit(op);
    }
    void visit(const Provide *op) override {
        node(op);
        str(op->name);
        IRVisitor::visit(op);
    }
    void visit(const Allocate *op) override {
        node(op);
        str(op->name);
        type(op->type);
        IRVisitor::visit(op);
    }
    void visit(const Realize *op) override {
        node(op);
        str(op->name);
        IRVisitor::visit(op);
    }
    void visit(const ProducerConsumer *op) override {
        node(op);
        str(op->name);
        mix(h, op->is_producer);
        IRVisitor::visit(op);
    }
    void visit(const Free *op) override {
        node(op);
        str(op->name);
    }
#define AICF_HASH_STMT(N)                                                                          \
    void visit(const N *op) override {                                                             \
        node(op);                                                                                  \
        IRVisitor::visit(op);                                                                      \
    }
    AICF_HASH_STMT(AssertStmt)
    AICF_HASH_STMT(Block)
    AICF_HASH_STMT(IfThenElse)
    AICF_HASH_STMT(Evaluate)
#undef AICF_HASH_STMT
};

} // namespace

bool equal(const Expr &a, const Expr &b) {
    return Comparer().expr(a, b);
}
bool equal(const Stmt &a, const Stmt &b) {
    return Comparer().stmt(a, b);
}

size_t structural_hash(const Expr &e) {
    Hasher h;
    if (e.defined()) e.accept(&h);
    return h.h;
}

size_t structural_hash(const Stmt &s) {
    Hasher h;
    if (s.defined()) s.accept(&h);
    return h.h;
}

} // namespace ir
} // namespace aicf
