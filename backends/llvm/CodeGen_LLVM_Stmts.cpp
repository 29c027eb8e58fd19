// The control flow of the LLVM translator: lets, assertions, loops, blocks and conditions.

#include "backends/llvm/CodeGen_LLVM.h"

#include "dsl/base/Error.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"

#include <llvm/IR/MDBuilder.h>

namespace aicf {
namespace backends {

using namespace ir;

void CodeGen_LLVM::visit(const LetStmt *op) {
    llvm::Value *v = codegen_let_value(op->name, op->value);
    ScopedBinding<llvm::Value *> bind(symbols, op->name, v);
    ScopedBinding<Expr> let_value(let_values, op->name, op->value);
    ScopedBinding<int> depth(definition_depth, op->name, depth_of(op->value));
    codegen(op->body);
}

void CodeGen_LLVM::visit(const AssertStmt *op) {
    llvm::Value *c = codegen(op->condition);
    llvm::BasicBlock *fail = llvm::BasicBlock::Create(context, "assert_failed", function);
    llvm::BasicBlock *ok = llvm::BasicBlock::Create(context, "assert_ok", function);
    builder.CreateCondBr(c, ok, fail, llvm::MDBuilder(context).createBranchWeights(1 << 20, 1));
    builder.SetInsertPoint(fail);
    const Call *msg = op->message.as<Call>();
    internal_assert(msg && msg->intrinsic == Intrinsic::runtime_error && msg->args.size() >= 2)
        << "codegen: assert without a runtime_error message";
    auto kind = static_cast<RuntimeErrorKind>(*as_const_int(msg->args[0]));
    const StringImm *name = msg->args[1].as<StringImm>();
    internal_assert(name) << "codegen: runtime_error without a name";
    std::vector<llvm::Value *> values;
    for (size_t i = 2; i < msg->args.size(); i++) {
        values.push_back(
            builder.CreateSExt(codegen(msg->args[i]), llvm::Type::getInt64Ty(context)));
    }
    emit_runtime_error(kind, name->value, values);
    builder.SetInsertPoint(ok);
}

void CodeGen_LLVM::visit(const ProducerConsumer *op) {
    codegen(op->body);
}

void CodeGen_LLVM::visit(const For *op) {
    llvm::Value *min = codegen(op->min), *extent = codegen(op->extent);
    llvm::Value *end = builder.CreateAdd(min, extent);
    llvm::BasicBlock *preheader = builder.GetInsertBlock();
    llvm::BasicBlock *loop = llvm::BasicBlock::Create(context, op->name + "_loop", function);
    llvm::BasicBlock *after = llvm::BasicBlock::Create(context, op->name + "_end", function);
    builder.CreateCondBr(builder.CreateICmpSLT(min, end), loop, after);
    builder.SetInsertPoint(loop);
    llvm::PHINode *phi = builder.CreatePHI(min->getType(), 2, op->name);
    phi->addIncoming(min, preheader);
    {
        ScopedBinding<llvm::Value *> bind(symbols, op->name, phi);
        ScopedBinding<int> depth(definition_depth, op->name, ++loop_depth);
        codegen(op->body);
        loop_depth--;
    }
    llvm::Value *next = builder.CreateNSWAdd(phi, llvm::ConstantInt::get(min->getType(), 1));
    phi->addIncoming(next, builder.GetInsertBlock());
    llvm::BranchInst *latch = builder.CreateCondBr(builder.CreateICmpNE(next, end), loop, after);
    const LoopUnrolling unrolling = loop_unrolling(op);
    if (unrolling.kind != LoopUnrolling::LLVMDecides) {
        llvm::MDNode *property;
        if (unrolling.kind == LoopUnrolling::Rolled) {
            property = llvm::MDNode::get(context,
                                         llvm::MDString::get(context, "llvm.loop.unroll.disable"));
        } else {
            property = llvm::MDNode::get(
                context, {llvm::MDString::get(context, "llvm.loop.unroll.count"),
                          llvm::ConstantAsMetadata::get(builder.getInt32(unrolling.count))});
        }
        // A distinct loop ID (its first operand is itself), then the property.
        llvm::MDNode *id = llvm::MDNode::getDistinct(context, {nullptr, property});
        id->replaceOperandWith(0, id);
        latch->setMetadata(llvm::LLVMContext::MD_loop, id);
    }
    builder.SetInsertPoint(after);
}

void CodeGen_LLVM::visit(const Block *op) {
    codegen(op->first);
    codegen(op->rest);
}

void CodeGen_LLVM::visit(const IfThenElse *op) {
    llvm::Value *c = codegen(op->condition);
    llvm::BasicBlock *then_bb = llvm::BasicBlock::Create(context, "then", function);
    llvm::BasicBlock *else_bb = llvm::BasicBlock::Create(context, "else", function);
    llvm::BasicBlock *after = llvm::BasicBlock::Create(context, "endif", function);
    builder.CreateCondBr(c, then_bb, else_bb);
    builder.SetInsertPoint(then_bb);
    codegen(op->then_case);
    builder.CreateBr(after);
    builder.SetInsertPoint(else_bb);
    codegen(op->else_case);
    builder.CreateBr(after);
    builder.SetInsertPoint(after);
}

void CodeGen_LLVM::visit(const Evaluate *op) {
    codegen(op->value);
}

} // namespace backends
} // namespace aicf
