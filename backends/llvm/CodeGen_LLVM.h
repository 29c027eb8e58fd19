#ifndef AICF_BACKENDS_LLVM_CODEGEN_LLVM_H
#define AICF_BACKENDS_LLVM_CODEGEN_LLVM_H

// Translates lowered IR (flat storage) into LLVM IR. One translator for every LLVM target;
// the host and NVPTX code generators derive from it and add what differs:
// how a function receives its arguments and which runtime it calls.

#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Scope.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace aicf {

class Target;

namespace backends {

// The freedoms a target's features give float arithmetic: contraction into fused
// multiply-adds (-fma) and reassociation (-reassoc).
llvm::FastMathFlags float_freedom(const Target &target);

class CodeGen_LLVM : public ir::IRVisitor {
public:
    CodeGen_LLVM(llvm::LLVMContext &context, llvm::Module &module);

protected:
    llvm::LLVMContext &context;
    llvm::Module &module;
    llvm::IRBuilder<> builder;
    llvm::Function *function = nullptr;
    ir::Scope<llvm::Value *> symbols;
    llvm::Value *value = nullptr; // the result of the last Expr visited

    llvm::Value *codegen(const ir::Expr &e);
    void codegen(const ir::Stmt &s);

    // The LLVM type that holds a value of type t. float16 and bfloat16 are held as i16 bits;
    // arithmetic on them is done in float32 and rounded back.
    llvm::Type *llvm_type_of(ir::Type t) const;

    // How a target reports a runtime error (ir::RuntimeErrorKind) about `name`: emit the
    // report and leave the function. The insert block is finished afterwards.
    virtual void emit_runtime_error(ir::RuntimeErrorKind kind, const std::string &name,
                                    const std::vector<llvm::Value *> &values) = 0;
    // Heap allocation and release for Allocate nodes.
    virtual llvm::Value *emit_heap_allocation(const std::string &name, llvm::Value *bytes) = 0;
    virtual void emit_heap_free(llvm::Value *ptr) = 0;
    // Intrinsics only some targets have (GPU launches and indices, device memory). Returns
    // null for intrinsics the shared translator handles.
    virtual llvm::Value *emit_target_intrinsic(const ir::Call *op) { return nullptr; }
    // Calls of math functions on scalars of type f32 or f64.
    virtual llvm::Value *emit_math_call(ir::Intrinsic op, ir::Type t,
                                        const std::vector<llvm::Value *> &args);
    // The same on vectors of type t, where the target has a vector math library; null
    // otherwise (the function is then applied lane by lane).
    virtual llvm::Value *emit_vector_math_call(ir::Intrinsic op, ir::Type t,
                                               const std::vector<llvm::Value *> &args) {
        return nullptr;
    }

    // Conversions between the 16-bit float encodings (i16) and float32: plain integer and
    // float32 operations unless the target has an instruction that rounds the same way.
    llvm::Value *half_to_float(llvm::Value *bits, bool is_bfloat);
    virtual llvm::Value *float_to_half(llvm::Value *f, bool is_bfloat);
    // A float (float32 or float64, scalar or vector) converted to the integer type `to`
    // towards zero, saturating at the type's ends, NaN to zero (as CUDA's cvt.rzi). The
    // generic form clamps in the float type and converts with the plain instruction, which
    // vectorizes (LLVM expands its saturating intrinsics lane by lane on x86).
    virtual llvm::Value *float_to_int(llvm::Value *f, ir::Type to);
    // A float64 or an integer (of type `from`) as the float32 rounded to odd: truncated to
    // float32's precision, with the last bit set when anything was lost. Rounding that to a
    // 16-bit float then rounds the original value once.
    llvm::Value *to_float_round_to_odd(llvm::Value *v, ir::Type from);
    // The value of e converted to float32 when e is a 16-bit float, as is otherwise.
    llvm::Value *codegen_widened(const ir::Expr &e);
    llvm::Value *narrow_if_half(llvm::Value *v, ir::Type t);

    llvm::Value *const_int(ir::Type t, int64_t v);
    llvm::Value *splat_if_vector(llvm::Value *v, int lanes);
    llvm::Value *create_alloca_at_entry(llvm::Type *t, llvm::Value *count, const std::string &name);
    // The address of element `index` of the storage `name`. `inbounds` says it lies within the
    // storage; the first lane of a masked vector access may not (its lanes there are off).
    llvm::Value *address_of(const std::string &name, llvm::Value *index, ir::Type elem,
                            bool inbounds = true);
    // The same for an index expression: its summands are added to the base pointer one at a
    // time in 64 bits, those of outer loops first, so the part that does not change in a loop
    // is computed once outside it and the loop's own index steps a pointer.
    llvm::Value *address_of(const std::string &name, const ir::Expr &index, ir::Type elem,
                            bool inbounds = true);
    // How many loops enclose the definition of each variable (0 outside all loops), and the
    // number of loops open now.
    ir::Scope<int> definition_depth;
    int loop_depth = 0;
    int depth_of(const ir::Expr &e) const;
    // The values of the enclosing lets, and the summands of an index through them.
    ir::Scope<ir::Expr> let_values;
    void collect_summands(const ir::Expr &e, bool negate,
                          std::vector<std::pair<ir::Expr, bool>> &out, int depth = 0) const;
    bool expandable(const std::string &name) const;

    // Type-based alias metadata that tells LLVM that accesses of differently named storage
    // never alias, so values can stay in registers across stores to other buffers (an
    // accumulator across a loop that reads its operands). Valid where distinct names are
    // distinct memory: on the host (the runtime refuses outputs that overlap inputs); not for
    // GPU shared memory, whose allocations share one array by lifetime.
    // All stack storage shares one tag: LLVM may merge two stack arrays (a Func computed as a
    // copy of another becomes a memcpy, then one array), and with a tag each it would then
    // drop the stores of one as never read by the other. Distinct stack arrays need no tag to
    // tell them apart; the shared tag still tells them from buffers and heap storage.
    bool tag_accesses_by_storage = false;
    // Whether a vector load whose lanes lie at constant distances from its first (a strided
    // ramp, an index halved for an upsample) reads the span they cover with dense loads and
    // shuffles it, instead of gathering lane by lane. The loads reach past none of the lanes
    // at either end, so they read only the storage the access spans.
    bool loads_by_shuffle = false;
    // Float arithmetic whose value becomes an integer (an index, a clamp's bound) is generated
    // as written, neither contracted into multiply-adds nor reassociated, so that it rounds as
    // the ends that bounds inference computed for it (dsl/ir/FloatValues.h): the operands of
    // conversions from float, and the float lets that flow into them, found by
    // find_strict_float_lets before a body is generated.
    std::set<std::string> strict_float_lets;
    void find_strict_float_lets(const ir::Stmt &body);
    llvm::Value *codegen_let_value(const std::string &name, const ir::Expr &value);
    // How LLVM's unroller may treat a serial loop (the schedule's `unroll` is done before code
    // generation either way): as it decides, or as a loop (llvm.loop.unroll.disable), or
    // unrolled by a given count (llvm.loop.unroll.count).
    struct LoopUnrolling {
        enum Kind { LLVMDecides, Rolled, ByCount } kind = LLVMDecides;
        int count = 0;
    };
    virtual LoopUnrolling loop_unrolling(const ir::For *) { return {}; }
    // Whether the target's integer division traps on a zero divisor (x86 does; PTX gives an
    // unspecified value): there a divisor is frozen before it is tested (codegen_int_div_mod).
    virtual bool division_traps() const { return true; }
    ir::Scope<int> stack_storage;
    // The heap storage whose allocation encloses the current point, innermost last, and
    // whether a Free (inject_early_frees) has freed it already.
    std::vector<std::pair<std::string, bool>> heap_storage;
    // Tags a load, store or masked access of `name` (when tagging is on); returns it.
    template <typename I> I *tag_access(I *inst, const std::string &name) {
        if (tag_accesses_by_storage)
            inst->setMetadata(
                llvm::LLVMContext::MD_tbaa,
                storage_tbaa_tag(stack_storage.contains(name) ? std::string(" stack") : name));
        return inst;
    }

    using ir::IRVisitor::visit;
#define AICF_CODEGEN_VISIT(N) void visit(const ir::N *op) override;
    AICF_FOR_EACH_EXPR(AICF_CODEGEN_VISIT)
    AICF_FOR_EACH_STMT(AICF_CODEGEN_VISIT)
#undef AICF_CODEGEN_VISIT

private:
    llvm::Value *codegen_int_div_mod(llvm::Value *a, llvm::Value *b, ir::Type t, bool is_div);
    llvm::Value *codegen_compare(const ir::Expr &a, const ir::Expr &b,
                                 llvm::CmpInst::Predicate int_signed,
                                 llvm::CmpInst::Predicate int_unsigned,
                                 llvm::CmpInst::Predicate fp);
    llvm::Value *codegen_cast(ir::Type to, const ir::Expr &from);
    llvm::Value *codegen_intrinsic(const ir::Call *op);
    void store_atomic(const ir::Store *op, const ir::Call *update);
    // The load as dense loads and a shuffle (see loads_by_shuffle); nullptr where it is not
    // one.
    llvm::Value *load_by_shuffle(const ir::Load *op);
    // The elements at `offsets` (none negative, all below `span`) from element `start` of
    // storage `name`, shuffled from dense loads laid over [start, start + span): vectors of
    // the access's length end to end, the last ending at the span's end; those no offset
    // falls in are not loaded. Accesses that share a span load the same vectors.
    llvm::Value *shuffled_dense_loads(const std::string &name, const ir::Expr &start,
                                      const std::vector<int64_t> &offsets, int64_t span,
                                      ir::Type t);
    // Strided vector loads of one storage whose first lanes lie a constant apart, less than
    // the stride from the next (a 2x downsample's in(2x) and in(2x + 1)) interleave: together
    // they read every element of the span from the lowest one's first lane to the highest
    // one's last, so each loads its lanes from dense vectors laid over that shared span, and
    // LLVM loads each vector once. Keyed by the storage and the access's ramp (accesses of
    // two storages may share one index): its offset in the span, and the span's length. Set
    // for the value of each vector store (every load in it runs).
    struct SharedSpan {
        int64_t offset, span;
    };
    std::map<std::pair<std::string, const ir::Ramp *>, SharedSpan> shared_spans;
    void find_shared_spans(const ir::Expr &value);
    // Vectors of one element type end to end (unused lanes after them where lengths differ).
    llvm::Value *join_vectors(std::vector<llvm::Value *> parts);
    llvm::Value *codegen_buffer_field(const ir::Call *op);
    std::map<std::string, llvm::Value *> allocation_types; // name -> element type marker
    llvm::MDNode *storage_tbaa_tag(const std::string &name);
    llvm::MDNode *tbaa_root = nullptr;
    std::map<std::string, llvm::MDNode *> tbaa_tags;
};

} // namespace backends
} // namespace aicf

#endif
