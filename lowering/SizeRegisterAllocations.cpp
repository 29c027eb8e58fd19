#include "lowering/SizeRegisterAllocations.h"

#include "dsl/Names.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"
#include "lowering/KernelAnalysis.h"

#include <map>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// The constant number of elements of each per-thread allocation.
class RegisterSizes : public LetTracker {
public:
    explicit RegisterSizes(const LoweredKernel &k) : kernel(k) {}
    std::map<std::string, int64_t> elements;

private:
    const LoweredKernel &kernel;
    using LetTracker::visit;
    void visit(const Allocate *op) override {
        IRVisitor::visit(op);
        user_assert(op->memory_type == MemoryType::Register || op->memory_type == MemoryType::Stack)
            << "Func " << op->name << " is allocated in " << to_string(op->memory_type)
            << " memory inside the kernel " << kernel.name << ". Inside a kernel, "
            << "Funcs live in shared memory or registers.";
        auto n = element_count_bound(op->extents);
        const std::string size = product_text(op->extents);
        // A dimension of no constant size (its extent "f.x.extent_realized").
        std::string varying;
        for (const Expr &e : op->extents) {
            const Variable *v = e.as<Variable>();
            if (v && varying.empty()) varying = arg_of_realized_extent(op->name, v->name);
        }
        const std::string bound =
            varying.empty() ? std::string()
                            : "; where the region is never more than some n points along " +
                                  varying + ", whatever the loop, say so with " + op->name +
                                  ".bound_extent(" + varying + ", n)";
        user_assert(n.has_value() && *n <= 4096)
            << "Func " << op->name << " is stored in registers in kernel " << kernel.name
            << ", which needs a small constant size, but it has " << size << " elements"
            << symbols_clause(size)
            << ". Compute it over a constant region of at most 4096 elements (split "
            << "the loops it is computed in by constants" << bound
            << "), or compute it at the block level in shared memory.";
        elements[op->name] = *n;
    }
};

// (It tracks the lets around each node to find the constant index of a register access
// written in terms of the thread index: a register tile's parts.)
class SizeRegisters : public LetTrackingMutator {
public:
    explicit SizeRegisters(const std::map<std::string, int64_t> &elements) : elements(elements) {}

private:
    const std::map<std::string, int64_t> &elements;

    using LetTrackingMutator::visit;

    Stmt visit(const Allocate *op) override {
        return Allocate::make(op->name, op->type, MemoryType::Register,
                              {make_const(Int(32), elements.at(op->name))}, mutate(op->body));
    }
    Expr constant_index(const Expr &index) const {
        Expr e = simplify(expand(index));
        return is_const(e) ? e : index;
    }
    Expr visit(const Load *op) override {
        if (!elements.count(op->name) || !op->type.is_scalar()) return IRMutator::visit(op);
        return Load::make(op->type, op->name, constant_index(mutate(op->index)), op->predicate);
    }
    Stmt visit(const Store *op) override {
        if (!elements.count(op->name) || !op->value.type().is_scalar()) return IRMutator::visit(op);
        return Store::make(op->name, mutate(op->value), constant_index(mutate(op->index)),
                           op->predicate);
    }
};

} // namespace

void size_register_allocations(LoweredKernel &kernel) {
    RegisterSizes sizes(kernel);
    kernel.body.accept(&sizes);
    if (sizes.elements.empty()) return;
    kernel.body = SizeRegisters(sizes.elements).mutate(kernel.body);
}

} // namespace lowering
} // namespace aicf
