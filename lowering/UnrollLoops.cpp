#include "lowering/UnrollLoops.h"

#include "dsl/base/Error.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/Substitute.h"

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

const int64_t max_unroll = 256;

class UnrollLoops : public IRMutator {
    using IRMutator::visit;

    Stmt visit(const For *op) override {
        if (op->for_type != ForType::Unrolled) return IRMutator::visit(op);
        auto extent = as_const_int(op->extent);
        user_assert(extent.has_value())
            << "The loop " << op->name << " is unrolled, but its extent (" << op->extent
            << ") is not a constant. Split it by a constant factor and unroll the inner loop, "
            << "e.g. f.unroll(x, 4).";
        user_assert(*extent <= max_unroll)
            << "The loop " << op->name << " is unrolled, but its extent is " << *extent
            << ": the body would be copied " << *extent << " times. AICF unrolls at most "
            << max_unroll << " iterations; split the loop and unroll the inner part.";
        Stmt body = mutate(op->body);
        std::vector<Stmt> copies;
        for (int64_t i = 0; i < *extent; i++) {
            Expr value = Add::make(op->min, make_const(op->min.type(), i));
            copies.push_back(substitute(op->name, value, body));
        }
        if (copies.empty()) return Evaluate::make(make_zero(Int(32)));
        return Block::make(copies);
    }
};

} // namespace

Stmt unroll_loops(const Stmt &s) {
    return UnrollLoops().mutate(s);
}

} // namespace lowering
} // namespace aicf
