#include "dsl/ir/Substitute.h"

#include "dsl/ir/IREquality.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IRVisitor.h"

#include <unordered_map>

namespace aicf {
namespace ir {

namespace {

// Each distinct expression node is rewritten once where none of the names being replaced is
// rebound around it, and the result reused wherever the node is shared: an expression that
// uses a value twice per step is exponentially larger as a tree than as a graph.
class Substitute : public IRMutator {
public:
    explicit Substitute(const std::map<std::string, Expr> &r) : replacements(r) {}

    using IRMutator::mutate;
    Expr mutate(const Expr &e) override {
        if (!e.defined() || hiding > 0) return IRMutator::mutate(e);
        auto it = done.find(e.get());
        if (it != done.end()) return it->second;
        Expr result = IRMutator::mutate(e);
        done.emplace(e.get(), result);
        return result;
    }

private:
    const std::map<std::string, Expr> &replacements;
    std::map<std::string, int> hidden; // names rebound by an inner let
    int hiding = 0;                    // binders around this point that rebind a replaced name
    std::unordered_map<const IRNode *, Expr> done; // results where hiding == 0

    using IRMutator::visit;

    Expr visit(const Variable *op) override {
        if (hidden.count(op->name) && hidden[op->name] > 0) return op;
        auto it = replacements.find(op->name);
        return it == replacements.end() ? Expr(op) : it->second;
    }

    void bind(const std::string &name, int delta) {
        hidden[name] += delta;
        if (replacements.count(name)) hiding += delta;
    }

    template <typename LetNode, typename Body> auto visit_let(const LetNode *op) {
        Expr value = mutate(op->value);
        bind(op->name, 1);
        Body body = mutate(op->body);
        bind(op->name, -1);
        if (value.same_as(op->value) && body.same_as(op->body)) return Body(op);
        return LetNode::make(op->name, value, body);
    }
    Expr visit(const Let *op) override { return visit_let<Let, Expr>(op); }
    Stmt visit(const LetStmt *op) override { return visit_let<LetStmt, Stmt>(op); }

    Stmt visit(const For *op) override {
        Expr mn = mutate(op->min), ex = mutate(op->extent);
        bind(op->name, 1);
        Stmt body = mutate(op->body);
        bind(op->name, -1);
        if (mn.same_as(op->min) && ex.same_as(op->extent) && body.same_as(op->body)) return op;
        return For::make(op->name, mn, ex, op->for_type, op->gpu_dim, body);
    }
};

class SubstituteExpr : public IRMutator {
public:
    SubstituteExpr(const Expr &f, const Expr &r) : find(f), replacement(r) {}
    Expr mutate(const Expr &e) override {
        if (equal(e, find)) return replacement;
        return IRMutator::mutate(e);
    }
    using IRMutator::mutate;

private:
    Expr find, replacement;
};

// Walks each distinct expression node once where no name is bound around it (what a node
// uses is then the same wherever it is shared).
class FreeVars : public IRGraphVisitor {
public:
    FreeVars() = default;
    // Looks for `target` alone, and stops (at the next statement) once it is found: a pass
    // that asks of each let whether the rest of a long body uses it would otherwise gather
    // every name of the body each time.
    explicit FreeVars(const std::string &target) : target(&target) {}
    std::set<std::string> names;
    bool found = false;

private:
    const std::string *target = nullptr;
    std::map<std::string, int> bound;
    int binders = 0;
    bool deduplicate() const override { return binders == 0; }

    using IRGraphVisitor::visit;
    void visit(const Variable *op) override { use(op->name); }
    void use(const std::string &name) {
        if (target && name != *target) return;
        auto it = bound.find(name);
        if (it != bound.end() && it->second != 0) return;
        if (target) {
            found = true;
        } else {
            names.insert(name);
        }
    }
    void visit(const Block *op) override {
        if (!found) op->first.accept(this);
        if (!found && op->rest.defined()) op->rest.accept(this);
    }
    void visit(const IfThenElse *op) override {
        if (!found) IRVisitor::visit(op);
    }
    void visit(const ProducerConsumer *op) override {
        if (!found) IRVisitor::visit(op);
    }
    void visit(const Allocate *op) override {
        if (!found) IRVisitor::visit(op);
    }
    void visit(const Realize *op) override {
        if (!found) IRVisitor::visit(op);
    }
    // A Load or Store names the pointer variable of the memory it accesses.
    void visit(const Load *op) override {
        if (!first_visit(op)) return;
        use(op->name);
        IRVisitor::visit(op);
    }
    void visit(const Store *op) override {
        use(op->name);
        IRVisitor::visit(op);
    }
    template <typename Body> void in_scope(const std::string &name, const Body &body) {
        bound[name]++;
        binders++;
        body.accept(this);
        binders--;
        bound[name]--;
    }
    void visit(const Let *op) override {
        if (!first_visit(op)) return;
        op->value.accept(this);
        in_scope(op->name, op->body);
    }
    void visit(const LetStmt *op) override {
        if (found) return;
        op->value.accept(this);
        in_scope(op->name, op->body);
    }
    void visit(const For *op) override {
        if (found) return;
        op->min.accept(this);
        op->extent.accept(this);
        in_scope(op->name, op->body);
    }
};

} // namespace

Expr substitute(const std::string &name, const Expr &replacement, const Expr &e) {
    std::map<std::string, Expr> m{{name, replacement}};
    return Substitute(m).mutate(e);
}

Stmt substitute(const std::string &name, const Expr &replacement, const Stmt &s) {
    std::map<std::string, Expr> m{{name, replacement}};
    return Substitute(m).mutate(s);
}

Expr substitute(const std::map<std::string, Expr> &replacements, const Expr &e) {
    if (replacements.empty()) return e;
    return Substitute(replacements).mutate(e);
}

Stmt substitute(const std::map<std::string, Expr> &replacements, const Stmt &s) {
    if (replacements.empty()) return s;
    return Substitute(replacements).mutate(s);
}

Expr substitute_expr(const Expr &find, const Expr &replacement, const Expr &e) {
    return SubstituteExpr(find, replacement).mutate(e);
}

std::set<std::string> free_vars(const Expr &e) {
    FreeVars v;
    if (e.defined()) e.accept(&v);
    return v.names;
}

Expr substitute_lets(const std::vector<std::pair<std::string, Expr>> &lets, Expr e,
                     const std::set<std::string> &keep) {
    // The free variables of e as it is rewritten, kept up to date rather than recomputed for
    // every let: a region inside a chain of stages computed at one another's loops has
    // hundreds of lets in scope, of which it uses a few.
    std::set<std::string> free = free_vars(e);
    for (auto it = lets.rbegin(); it != lets.rend() && !free.empty(); ++it) {
        if (keep.count(it->first) || !free.erase(it->first)) continue;
        e = substitute(it->first, it->second, e);
        for (const std::string &n : free_vars(it->second))
            free.insert(n);
    }
    return e;
}

std::set<std::string> free_vars(const Stmt &s) {
    FreeVars v;
    if (s.defined()) s.accept(&v);
    return v.names;
}

bool uses_var(const Expr &e, const std::string &name) {
    FreeVars v(name);
    if (e.defined()) e.accept(&v);
    return v.found;
}

bool uses_var(const Stmt &s, const std::string &name) {
    FreeVars v(name);
    if (s.defined()) s.accept(&v);
    return v.found;
}

bool uses_vars(const Expr &e, const std::set<std::string> &names) {
    for (const std::string &n : free_vars(e))
        if (names.count(n)) return true;
    return false;
}

} // namespace ir
} // namespace aicf
