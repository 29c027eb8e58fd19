#include "lowering/PrintLoopNest.h"

#include "dsl/Names.h"

#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"

#include <sstream>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

class LoopNestPrinter : public IRVisitor {
public:
    std::ostringstream out;

private:
    int depth = 0;
    void indent() {
        for (int i = 0; i < depth; i++)
            out << "  ";
    }
    using IRVisitor::visit;

    void visit(const ProducerConsumer *op) override {
        indent();
        out << (op->is_producer ? "produce " : "consume ") << op->name << ":\n";
        depth++;
        op->body.accept(this);
        depth--;
    }
    void visit(const Realize *op) override {
        indent();
        out << "store " << op->name << ":\n";
        depth++;
        op->body.accept(this);
        depth--;
    }
    void visit(const Allocate *op) override {
        indent();
        out << "allocate " << op->name << " in " << to_string(op->memory_type) << ":\n";
        depth++;
        op->body.accept(this);
        depth--;
    }
    void visit(const For *op) override {
        // The loops over the lines a prefetch fetches ("in.prefetch.0.line") are one line here.
        if (std::string prefetched; is_prefetch_loop(op->name, &prefetched)) {
            indent();
            out << "prefetch " << prefetched << "\n";
            return;
        }
        indent();
        if (op->for_type != ForType::Serial) out << to_string(op->for_type);
        if (op->gpu_dim != GPUDim::None)
            out << "." << to_string(op->gpu_dim); // its hardware dimension
        if (op->for_type != ForType::Serial) out << " ";
        out << "for " << op->name;
        auto mn = as_const_int(op->min), ex = as_const_int(op->extent);
        if (mn && ex) out << " in [" << *mn << ", " << *mn + *ex << ")";
        out << ":\n";
        depth++;
        op->body.accept(this);
        depth--;
    }
    void visit(const Provide *op) override {
        indent();
        out << op->name << "(...) = ...\n";
    }
    void visit(const Store *op) override {
        indent();
        out << op->name << "[...] = ...\n";
    }
    // Lets, asserts and conditions are bookkeeping here: walk through them.
    void visit(const IfThenElse *op) override {
        op->then_case.accept(this);
        if (op->else_case.defined()) op->else_case.accept(this);
    }
    void visit(const AssertStmt *) override {}
    void visit(const Evaluate *op) override {
        const Call *c = op->value.as<Call>();
        if (!c || !c->is_intrinsic(Intrinsic::prefetch) || c->args.empty()) return;
        if (const Call *read = c->args[0].as<Call>()) {
            indent();
            out << "prefetch " << read->name << "\n";
        }
    }
};

} // namespace

std::string print_loop_nest(const Stmt &s) {
    LoopNestPrinter p;
    if (s.defined()) s.accept(&p);
    return p.out.str();
}

} // namespace lowering
} // namespace aicf
