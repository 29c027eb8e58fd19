#include "dsl/ir/IRMutator.h"

namespace aicf {
namespace ir {

Expr IRMutator::mutate(const Expr &e) {
    return e.defined() ? e.get()->mutate_expr(this) : Expr();
}
Stmt IRMutator::mutate(const Stmt &s) {
    return s.defined() ? s.get()->mutate_stmt(this) : Stmt();
}

bool IRMutator::mutate_exprs(const std::vector<Expr> &in, std::vector<Expr> &out) {
    bool changed = false;
    out.resize(in.size());
    for (size_t i = 0; i < in.size(); i++) {
        out[i] = mutate(in[i]);
        changed = changed || !out[i].same_as(in[i]);
    }
    return changed;
}

Expr IRMutator::visit(const IntImm *op) {
    return op;
}
Expr IRMutator::visit(const UIntImm *op) {
    return op;
}
Expr IRMutator::visit(const FloatImm *op) {
    return op;
}
Expr IRMutator::visit(const StringImm *op) {
    return op;
}
Expr IRMutator::visit(const Variable *op) {
    return op;
}

Expr IRMutator::visit(const Cast *op) {
    Expr v = mutate(op->value);
    return v.same_as(op->value) ? Expr(op) : Cast::make(op->type, v);
}
Expr IRMutator::visit(const Reinterpret *op) {
    Expr v = mutate(op->value);
    return v.same_as(op->value) ? Expr(op) : Reinterpret::make(op->type, v);
}

#define AICF_MUTATE_BINARY(N)                                                                      \
    Expr IRMutator::visit(const N *op) {                                                           \
        Expr a = mutate(op->a), b = mutate(op->b);                                                 \
        if (a.same_as(op->a) && b.same_as(op->b)) return op;                                       \
        return N::make(a, b);                                                                      \
    }
AICF_MUTATE_BINARY(Add)
AICF_MUTATE_BINARY(Sub)
AICF_MUTATE_BINARY(Mul)
AICF_MUTATE_BINARY(Div)
AICF_MUTATE_BINARY(Mod)
AICF_MUTATE_BINARY(Min)
AICF_MUTATE_BINARY(Max)
AICF_MUTATE_BINARY(EQ)
AICF_MUTATE_BINARY(NE)
AICF_MUTATE_BINARY(LT)
AICF_MUTATE_BINARY(LE)
AICF_MUTATE_BINARY(GT)
AICF_MUTATE_BINARY(GE)
AICF_MUTATE_BINARY(And)
AICF_MUTATE_BINARY(Or)
#undef AICF_MUTATE_BINARY

Expr IRMutator::visit(const Not *op) {
    Expr a = mutate(op->a);
    return a.same_as(op->a) ? Expr(op) : Not::make(a);
}
Expr IRMutator::visit(const Select *op) {
    Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
    if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value))
        return op;
    return Select::make(c, t, f);
}
Expr IRMutator::visit(const Load *op) {
    Expr i = mutate(op->index), p = mutate(op->predicate);
    if (i.same_as(op->index) && p.same_as(op->predicate)) return op;
    return Load::make(op->type, op->name, i, p, op->param);
}
Expr IRMutator::visit(const Ramp *op) {
    Expr b = mutate(op->base), s = mutate(op->stride);
    if (b.same_as(op->base) && s.same_as(op->stride)) return op;
    return Ramp::make(b, s, op->lanes);
}
Expr IRMutator::visit(const Broadcast *op) {
    Expr v = mutate(op->value);
    return v.same_as(op->value) ? Expr(op) : Broadcast::make(v, op->lanes);
}
Expr IRMutator::visit(const Call *op) {
    std::vector<Expr> args;
    if (!mutate_exprs(op->args, args)) return op;
    auto *n = new Call(*op);
    n->args = std::move(args);
    return n;
}
Expr IRMutator::visit(const Let *op) {
    Expr v = mutate(op->value), b = mutate(op->body);
    if (v.same_as(op->value) && b.same_as(op->body)) return op;
    return Let::make(op->name, v, b);
}
Stmt IRMutator::visit(const LetStmt *op) {
    Expr v = mutate(op->value);
    Stmt b = mutate(op->body);
    if (v.same_as(op->value) && b.same_as(op->body)) return op;
    return LetStmt::make(op->name, v, b);
}
Stmt IRMutator::visit(const AssertStmt *op) {
    Expr c = mutate(op->condition), m = mutate(op->message);
    if (c.same_as(op->condition) && m.same_as(op->message)) return op;
    return AssertStmt::make(c, m);
}
Stmt IRMutator::visit(const ProducerConsumer *op) {
    Stmt b = mutate(op->body);
    return b.same_as(op->body) ? Stmt(op) : ProducerConsumer::make(op->name, op->is_producer, b);
}
Stmt IRMutator::visit(const For *op) {
    Expr mn = mutate(op->min), ex = mutate(op->extent);
    Stmt b = mutate(op->body);
    if (mn.same_as(op->min) && ex.same_as(op->extent) && b.same_as(op->body)) return op;
    return For::make(op->name, mn, ex, op->for_type, op->gpu_dim, b);
}
Stmt IRMutator::visit(const Store *op) {
    Expr v = mutate(op->value), i = mutate(op->index), p = mutate(op->predicate);
    if (v.same_as(op->value) && i.same_as(op->index) && p.same_as(op->predicate)) return op;
    return Store::make(op->name, v, i, p, op->param);
}
Stmt IRMutator::visit(const Provide *op) {
    std::vector<Expr> values, args;
    bool changed = mutate_exprs(op->values, values);
    changed = mutate_exprs(op->args, args) || changed;
    return changed ? Provide::make(op->name, values, args) : Stmt(op);
}
Stmt IRMutator::visit(const Allocate *op) {
    std::vector<Expr> extents;
    bool changed = mutate_exprs(op->extents, extents);
    Stmt b = mutate(op->body);
    if (!changed && b.same_as(op->body)) return op;
    return Allocate::make(op->name, op->type, op->memory_type, extents, b);
}
Stmt IRMutator::visit(const Free *op) {
    return op;
}
Stmt IRMutator::visit(const Realize *op) {
    Region bounds(op->bounds.size());
    bool changed = false;
    for (size_t i = 0; i < bounds.size(); i++) {
        bounds[i].min = mutate(op->bounds[i].min);
        bounds[i].extent = mutate(op->bounds[i].extent);
        changed = changed || !bounds[i].min.same_as(op->bounds[i].min) ||
                  !bounds[i].extent.same_as(op->bounds[i].extent);
    }
    Stmt b = mutate(op->body);
    if (!changed && b.same_as(op->body)) return op;
    return Realize::make(op->name, op->types, op->memory_type, bounds, b);
}
Stmt IRMutator::visit(const Block *op) {
    Stmt f = mutate(op->first), r = mutate(op->rest);
    if (f.same_as(op->first) && r.same_as(op->rest)) return op;
    return Block::make(f, r);
}
Stmt IRMutator::visit(const IfThenElse *op) {
    Expr c = mutate(op->condition);
    Stmt t = mutate(op->then_case), e = mutate(op->else_case);
    if (c.same_as(op->condition) && t.same_as(op->then_case) && e.same_as(op->else_case)) return op;
    if (!t.defined() && !e.defined()) return Stmt();
    if (!t.defined()) return IfThenElse::make(Not::make(c), e);
    return IfThenElse::make(c, t, e);
}
Stmt IRMutator::visit(const Evaluate *op) {
    Expr v = mutate(op->value);
    return v.same_as(op->value) ? Stmt(op) : Evaluate::make(v);
}

Expr IRGraphMutator::mutate(const Expr &e) {
    if (!e.defined()) return e;
    auto it = done.find(e.get());
    if (it != done.end()) return it->second;
    Expr result = IRMutator::mutate(e);
    done.emplace(e.get(), result);
    return result;
}

} // namespace ir
} // namespace aicf
