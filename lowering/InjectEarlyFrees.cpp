#include "lowering/InjectEarlyFrees.h"

#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IRVisitor.h"

#include <string>
#include <vector>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// Whether `s` loads, stores or names the storage `name` (or its device buffer). One walk
// that stops at the first use: the bodies of nested allocations (a chain of stages computed
// at one another's loops) are walked once for each allocation around them.
class Touches : public IRVisitor {
public:
    explicit Touches(const std::string &name) : name(name), device(name + ".buffer") {}
    bool found = false;

private:
    const std::string &name;
    const std::string device;
    using IRVisitor::visit;
    void visit(const Load *op) override {
        found = found || op->name == name;
        if (!found) IRVisitor::visit(op);
    }
    void visit(const Store *op) override {
        found = found || op->name == name;
        if (!found) IRVisitor::visit(op);
    }
    void visit(const Variable *op) override {
        found = found || op->name == name || op->name == device;
    }
    void visit(const Block *op) override {
        if (!found) op->first.accept(this);
        if (!found && op->rest.defined()) op->rest.accept(this);
    }
};

template <typename IRHandle> bool touches(const IRHandle &s, const std::string &name) {
    Touches t(name);
    if (s.defined()) s.accept(&t);
    return t.found;
}

// `s` with a Free of `name` right after the last statement that touches it, looking into the
// statements that run once where they stand. `s` touches it.
Stmt free_after_last_use(const Stmt &s, const std::string &name) {
    std::vector<Stmt> parts = Block::parts(s);
    size_t last = parts.size();
    for (size_t i = parts.size(); i-- > 0;) {
        if (touches(parts[i], name)) {
            last = i;
            break;
        }
    }
    const Stmt &use = parts[last];
    Stmt inside;
    if (const LetStmt *l = use.as<LetStmt>(); l && !touches(l->value, name)) {
        inside = LetStmt::make(l->name, l->value, free_after_last_use(l->body, name));
    } else if (const ProducerConsumer *pc = use.as<ProducerConsumer>()) {
        inside =
            ProducerConsumer::make(pc->name, pc->is_producer, free_after_last_use(pc->body, name));
    } else if (const Allocate *a = use.as<Allocate>(); a && a->name != name) {
        bool in_extents = false;
        for (const Expr &e : a->extents)
            in_extents = in_extents || touches(e, name);
        if (!in_extents) {
            inside = Allocate::make(a->name, a->type, a->memory_type, a->extents,
                                    free_after_last_use(a->body, name));
        }
    }
    if (inside.defined()) {
        parts[last] = inside;
    } else {
        parts.insert(parts.begin() + last + 1, Free::make(name));
    }
    return Block::make(parts);
}

class InjectEarlyFrees : public IRMutator {
    using IRMutator::visit;
    Stmt visit(const Allocate *op) override {
        Stmt body = mutate(op->body);
        if (touches(body, op->name + ".buffer") || !touches(body, op->name))
            return Allocate::make(op->name, op->type, op->memory_type, op->extents, body);
        return Allocate::make(op->name, op->type, op->memory_type, op->extents,
                              free_after_last_use(body, op->name));
    }
};

} // namespace

Stmt inject_early_frees(const Stmt &s) {
    return InjectEarlyFrees().mutate(s);
}

} // namespace lowering
} // namespace aicf
