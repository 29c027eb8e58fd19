#include "lowering/BoxesRequired.h"

#include "dsl/ir/Bounds.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

class FindBox : public IRVisitor {
public:
    FindBox(const std::string &name, bool provides, const Scope<Interval> &outer)
        : name(name), provides(provides) {
        outer.for_each([&](const std::string &n, const Interval &i) { scope.push(n, i); });
    }
    Access result;

private:
    const std::string &name;
    bool provides;
    Scope<Interval> scope;

    void add(const std::vector<Expr> &args) {
        Box box;
        for (const Expr &a : args) box.push_back(bounds_of_expr_in_scope(a, scope));
        if (!result.used) {
            result.box = box;
            result.used = true;
        } else {
            result.box = box_union(result.box, box);
        }
    }

    using IRVisitor::visit;

    void visit(const Call *op) override {
        IRVisitor::visit(op);
        if (!provides && op->name == name &&
            (op->call_type == Call::Func || op->call_type == Call::Image)) {
            add(op->args);
        }
    }
    void visit(const Provide *op) override {
        IRVisitor::visit(op);
        if (provides && op->name == name) add(op->args);
    }
    void visit(const Let *op) override {
        op->value.accept(this);
        scope.push(op->name, bounds_of_expr_in_scope(op->value, scope));
        op->body.accept(this);
        scope.pop(op->name);
    }
    void visit(const LetStmt *op) override {
        op->value.accept(this);
        scope.push(op->name, bounds_of_expr_in_scope(op->value, scope));
        op->body.accept(this);
        scope.pop(op->name);
    }
    void visit(const For *op) override {
        op->min.accept(this);
        op->extent.accept(this);
        Interval min_b = bounds_of_expr_in_scope(op->min, scope);
        Expr last = simplify(Sub::make(Add::make(op->min, op->extent), make_one(op->min.type())));
        Interval max_b = bounds_of_expr_in_scope(last, scope);
        scope.push(op->name, Interval(min_b.min, max_b.max));
        op->body.accept(this);
        scope.pop(op->name);
    }
};

} // namespace

Access box_required(const Stmt &s, const std::string &name, const Scope<Interval> &scope) {
    FindBox f(name, false, scope);
    if (s.defined()) s.accept(&f);
    return f.result;
}

Access box_required(const Expr &e, const std::string &name, const Scope<Interval> &scope) {
    FindBox f(name, false, scope);
    if (e.defined()) e.accept(&f);
    return f.result;
}

Access box_provided(const Stmt &s, const std::string &name, const Scope<Interval> &scope) {
    FindBox f(name, true, scope);
    if (s.defined()) s.accept(&f);
    return f.result;
}

} // namespace lowering
} // namespace aicf
