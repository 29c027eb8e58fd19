#include "backends/llvm/CodeGen_LLVM.h"

#include "dsl/base/Error.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>

#include "dsl/BufferABI.h"

namespace aicf {
namespace backends {

using namespace ir;

CodeGen_LLVM::CodeGen_LLVM(llvm::LLVMContext &c, llvm::Module &m)
    : context(c), module(m), builder(c) {}

llvm::Value *CodeGen_LLVM::codegen(const Expr &e) {
    internal_assert(e.defined()) << "codegen of an undefined Expr";
    value = nullptr;
    e.accept(this);
    internal_assert(value) << "codegen produced no value for " << e;
    return value;
}

void CodeGen_LLVM::codegen(const Stmt &s) {
    if (s.defined()) s.accept(this);
}

llvm::Type *CodeGen_LLVM::llvm_type_of(Type t) const {
    llvm::Type *scalar = nullptr;
    switch (t.code) {
    case TypeCode::Int:
    case TypeCode::UInt: scalar = llvm::Type::getIntNTy(context, t.bits); break;
    case TypeCode::Float:
        scalar = t.bits == 16   ? llvm::Type::getInt16Ty(context)
                 : t.bits == 32 ? llvm::Type::getFloatTy(context)
                                : llvm::Type::getDoubleTy(context);
        break;
    case TypeCode::BFloat: scalar = llvm::Type::getInt16Ty(context); break;
    case TypeCode::Handle: scalar = llvm::PointerType::get(context, 0); break;
    }
    if (t.lanes == 1) return scalar;
    return llvm::FixedVectorType::get(scalar, t.lanes);
}

llvm::Value *CodeGen_LLVM::const_int(Type t, int64_t v) {
    return llvm::ConstantInt::get(llvm_type_of(t), static_cast<uint64_t>(v), t.is_int());
}

llvm::Value *CodeGen_LLVM::splat_if_vector(llvm::Value *v, int lanes) {
    if (lanes == 1) return v;
    return builder.CreateVectorSplat(lanes, v);
}

llvm::Value *CodeGen_LLVM::create_alloca_at_entry(llvm::Type *t, llvm::Value *count,
                                                  const std::string &name) {
    llvm::IRBuilderBase::InsertPointGuard guard(builder);
    llvm::BasicBlock &entry = function->getEntryBlock();
    builder.SetInsertPoint(&entry, entry.getFirstInsertionPt());
    return builder.CreateAlloca(t, count, name);
}

// Bit-exact conversions of the 16-bit float encodings. They are plain integer and float32
// operations, so they vectorize and need no runtime library.
llvm::Value *CodeGen_LLVM::half_to_float(llvm::Value *bits, bool is_bfloat) {
    llvm::Type *i16 = bits->getType();
    int lanes = i16->isVectorTy() ? int(llvm::cast<llvm::FixedVectorType>(i16)->getNumElements()) : 1;
    Type u32 = UInt(32, lanes);
    llvm::Type *f32 = llvm_type_of(Float(32, lanes));
    llvm::Value *w = builder.CreateZExt(bits, llvm_type_of(u32));
    if (is_bfloat) return builder.CreateBitCast(builder.CreateShl(w, const_int(u32, 16)), f32);
    // float16: shift exponent and mantissa into place, rescale by 2^112 (which also handles
    // subnormals), then restore infinity/NaN exponents and the sign.
    llvm::Value *magnitude = builder.CreateShl(builder.CreateAnd(w, const_int(u32, 0x7fff)),
                                               const_int(u32, 13));
    llvm::Value *scaled = builder.CreateFMul(builder.CreateBitCast(magnitude, f32),
                                             llvm::ConstantFP::get(f32, 0x1p112));
    llvm::Value *is_special = builder.CreateFCmpOGE(scaled, llvm::ConstantFP::get(f32, 65536.0));
    llvm::Value *sbits = builder.CreateBitCast(scaled, llvm_type_of(u32));
    sbits = builder.CreateSelect(is_special, builder.CreateOr(sbits, const_int(u32, 0x7f800000)), sbits);
    llvm::Value *sign = builder.CreateShl(builder.CreateAnd(w, const_int(u32, 0x8000)), const_int(u32, 16));
    return builder.CreateBitCast(builder.CreateOr(sbits, sign), f32);
}

llvm::Value *CodeGen_LLVM::float_to_half(llvm::Value *f, bool is_bfloat) {
    llvm::Type *ft = f->getType();
    int lanes = ft->isVectorTy() ? int(llvm::cast<llvm::FixedVectorType>(ft)->getNumElements()) : 1;
    Type u32 = UInt(32, lanes);
    llvm::Type *i32t = llvm_type_of(u32);
    llvm::Type *i16t = llvm_type_of(UInt(16, lanes));
    llvm::Value *u = builder.CreateBitCast(f, i32t);
    if (is_bfloat) {
        // Round to nearest even on the upper 16 bits; NaNs stay (quiet) NaNs.
        llvm::Value *lsb = builder.CreateAnd(builder.CreateLShr(u, const_int(u32, 16)), const_int(u32, 1));
        llvm::Value *rounded = builder.CreateAdd(u, builder.CreateAdd(lsb, const_int(u32, 0x7fff)));
        llvm::Value *nan = builder.CreateOr(u, const_int(u32, 0x00400000));
        llvm::Value *is_nan = builder.CreateFCmpUNO(f, f);
        llvm::Value *r = builder.CreateSelect(is_nan, nan, rounded);
        return builder.CreateTrunc(builder.CreateLShr(r, const_int(u32, 16)), i16t);
    }
    llvm::Value *sign = builder.CreateAnd(u, const_int(u32, 0x80000000));
    llvm::Value *a = builder.CreateXor(u, sign);
    // Overflow and infinity -> inf, NaN -> quiet NaN.
    llvm::Value *big = builder.CreateICmpUGE(a, const_int(u32, (127 + 16) << 23));
    llvm::Value *special = builder.CreateSelect(builder.CreateICmpUGT(a, const_int(u32, 255 << 23)),
                                                const_int(u32, 0x7e00), const_int(u32, 0x7c00));
    // Subnormal results: let the float adder round, using a magic constant.
    llvm::Value *denorm_magic = const_int(u32, ((127 - 15) + (23 - 10) + 1) << 23);
    llvm::Value *sum = builder.CreateFAdd(builder.CreateBitCast(a, f->getType()),
                                          builder.CreateBitCast(denorm_magic, f->getType()));
    llvm::Value *sub = builder.CreateSub(builder.CreateBitCast(sum, i32t), denorm_magic);
    // Normal results: rebias the exponent and round the mantissa to nearest even.
    llvm::Value *odd = builder.CreateAnd(builder.CreateLShr(a, const_int(u32, 13)), const_int(u32, 1));
    llvm::Value *norm = builder.CreateAdd(a, const_int(u32, int64_t(uint32_t(uint32_t(15 - 127) << 23) + 0xfff)));
    norm = builder.CreateLShr(builder.CreateAdd(norm, odd), const_int(u32, 13));
    llvm::Value *is_sub = builder.CreateICmpULT(a, const_int(u32, 113 << 23));
    llvm::Value *r = builder.CreateSelect(big, special, builder.CreateSelect(is_sub, sub, norm));
    r = builder.CreateOr(r, builder.CreateLShr(sign, const_int(u32, 16)));
    return builder.CreateTrunc(r, i16t);
}

llvm::Value *CodeGen_LLVM::codegen_widened(const Expr &e) {
    llvm::Value *v = codegen(e);
    Type t = e.type();
    if (t.is_float() && t.bits == 16) return half_to_float(v, t.is_bfloat());
    return v;
}

llvm::Value *CodeGen_LLVM::narrow_if_half(llvm::Value *v, Type t) {
    if (t.is_float() && t.bits == 16) return float_to_half(v, t.is_bfloat());
    return v;
}

void CodeGen_LLVM::visit(const IntImm *op) { value = const_int(op->type, op->value); }
void CodeGen_LLVM::visit(const UIntImm *op) {
    value = llvm::ConstantInt::get(llvm_type_of(op->type), op->value, false);
}
void CodeGen_LLVM::visit(const FloatImm *op) {
    if (op->type.bits == 16) {
        value = float_to_half(llvm::ConstantFP::get(llvm::Type::getFloatTy(context), op->value),
                              op->type.is_bfloat());
        return;
    }
    value = llvm::ConstantFP::get(llvm_type_of(op->type), op->value);
}
void CodeGen_LLVM::visit(const StringImm *op) {
    value = builder.CreateGlobalStringPtr(op->value);
}

void CodeGen_LLVM::visit(const Variable *op) {
    const llvm::Value *const *v = symbols.find(op->name);
    internal_assert(v) << "codegen: variable " << op->name << " is not defined";
    value = const_cast<llvm::Value *>(*v);
}

llvm::Value *CodeGen_LLVM::codegen_cast(Type to, const Expr &from_e) {
    Type from = from_e.type();
    if (from.is_float() && from.bits == 16 && to.is_float() && to.bits == 16) {
        llvm::Value *f = half_to_float(codegen(from_e), from.is_bfloat());
        return float_to_half(f, to.is_bfloat());
    }
    llvm::Value *v = codegen_widened(from_e);
    if (from.is_float() && from.bits == 16) from = Float(32, from.lanes);
    Type target = to;
    if (to.is_float() && to.bits == 16) target = Float(32, to.lanes);
    llvm::Type *tt = llvm_type_of(target);
    llvm::Value *r = nullptr;
    if (target.is_bool()) {
        r = from.is_float() ? builder.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0))
                            : builder.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
    } else if (from.is_int_or_uint() && target.is_int_or_uint()) {
        r = from.is_int() && !from.is_bool() ? builder.CreateSExtOrTrunc(v, tt)
                                             : builder.CreateZExtOrTrunc(v, tt);
    } else if (from.is_int_or_uint() && target.is_float()) {
        r = from.is_int() && !from.is_bool() ? builder.CreateSIToFP(v, tt) : builder.CreateUIToFP(v, tt);
    } else if (from.is_float() && target.is_int_or_uint()) {
        // Saturating, NaN -> 0: defined for every input (as CUDA's cvt.rzi).
        llvm::Intrinsic::ID id = target.is_int() ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
        r = builder.CreateIntrinsic(id, {tt, v->getType()}, {v});
    } else if (from.is_float() && target.is_float()) {
        r = builder.CreateFPCast(v, tt);
    } else {
        internal_error << "codegen: cast from " << to_string(from) << " to " << to_string(to);
    }
    return narrow_if_half(r, to);
}

void CodeGen_LLVM::visit(const Cast *op) { value = codegen_cast(op->type, op->value); }

void CodeGen_LLVM::visit(const Reinterpret *op) {
    value = builder.CreateBitCast(codegen(op->value), llvm_type_of(op->type));
}

// Signed 32- and 64-bit arithmetic does not overflow (the simplifier relies on it too), which
// LLVM is told with `nsw`: it lets alias analysis see through the sign extension of an index,
// so accesses at different offsets of one buffer are known to be distinct.
#define AICF_FLOAT_OR_INT_BINARY(N, FOP, IOP)                                                      \
    void CodeGen_LLVM::visit(const N *op) {                                                        \
        Type t = op->type;                                                                         \
        if (t.is_float()) {                                                                        \
            llvm::Value *a = codegen_widened(op->a), *b = codegen_widened(op->b);                  \
            value = narrow_if_half(builder.FOP(a, b), t);                                          \
        } else {                                                                                   \
            llvm::Value *a = codegen(op->a), *b = codegen(op->b);                                  \
            bool nsw = t.is_int() && t.bits >= 32;                                                 \
            value = builder.IOP(a, b, "", /*HasNUW=*/false, /*HasNSW=*/nsw);                       \
        }                                                                                          \
    }
AICF_FLOAT_OR_INT_BINARY(Add, CreateFAdd, CreateAdd)
AICF_FLOAT_OR_INT_BINARY(Sub, CreateFSub, CreateSub)
AICF_FLOAT_OR_INT_BINARY(Mul, CreateFMul, CreateMul)
#undef AICF_FLOAT_OR_INT_BINARY

llvm::Value *CodeGen_LLVM::codegen_int_div_mod(llvm::Value *a, llvm::Value *b, Type t, bool is_div) {
    llvm::Value *zero = llvm::Constant::getNullValue(a->getType());
    llvm::Value *one = const_int(t, 1);
    llvm::Value *b_is_zero = builder.CreateICmpEQ(b, zero);
    if (t.is_uint()) {
        llvm::Value *safe_b = builder.CreateSelect(b_is_zero, one, b);
        llvm::Value *r = is_div ? builder.CreateUDiv(a, safe_b) : builder.CreateURem(a, safe_b);
        return builder.CreateSelect(b_is_zero, zero, r);
    }
    // Signed: avoid the two inputs LLVM leaves undefined (b == 0, and MIN / -1), then
    // move truncating division's results to Euclidean ones.
    llvm::Value *minus_one = const_int(t, -1);
    llvm::Value *b_is_minus_one = builder.CreateICmpEQ(b, minus_one);
    llvm::Value *unsafe = builder.CreateOr(b_is_zero, b_is_minus_one);
    llvm::Value *safe_b = builder.CreateSelect(unsafe, one, b);
    llvm::Value *q = builder.CreateSDiv(a, safe_b);
    llvm::Value *r = builder.CreateSRem(a, safe_b);
    llvm::Value *r_neg = builder.CreateICmpSLT(r, zero);
    llvm::Value *b_pos = builder.CreateICmpSGT(b, zero);
    llvm::Value *result;
    if (is_div) {
        llvm::Value *adj = builder.CreateSelect(b_pos, builder.CreateSub(q, one), builder.CreateAdd(q, one));
        result = builder.CreateSelect(r_neg, adj, q);
        result = builder.CreateSelect(b_is_minus_one, builder.CreateNeg(a), result);
    } else {
        llvm::Value *adj = builder.CreateSelect(b_pos, builder.CreateAdd(r, b), builder.CreateSub(r, b));
        result = builder.CreateSelect(r_neg, adj, r);
        result = builder.CreateSelect(b_is_minus_one, zero, result);
    }
    return builder.CreateSelect(b_is_zero, zero, result);
}

void CodeGen_LLVM::visit(const Div *op) {
    if (op->type.is_float()) {
        llvm::Value *a = codegen_widened(op->a), *b = codegen_widened(op->b);
        value = narrow_if_half(builder.CreateFDiv(a, b), op->type);
        return;
    }
    value = codegen_int_div_mod(codegen(op->a), codegen(op->b), op->type, true);
}

void CodeGen_LLVM::visit(const Mod *op) {
    if (op->type.is_float()) {
        llvm::Value *a = codegen_widened(op->a), *b = codegen_widened(op->b);
        llvm::Value *q = builder.CreateUnaryIntrinsic(llvm::Intrinsic::floor, builder.CreateFDiv(a, b));
        value = narrow_if_half(builder.CreateFSub(a, builder.CreateFMul(b, q)), op->type);
        return;
    }
    value = codegen_int_div_mod(codegen(op->a), codegen(op->b), op->type, false);
}

void CodeGen_LLVM::visit(const Min *op) {
    Type t = op->type;
    llvm::Value *a = codegen_widened(op->a), *b = codegen_widened(op->b);
    llvm::Value *lt = t.is_float() ? builder.CreateFCmpOLT(a, b)
                      : t.is_int() ? builder.CreateICmpSLT(a, b)
                                   : builder.CreateICmpULT(a, b);
    value = narrow_if_half(builder.CreateSelect(lt, a, b), t);
}

void CodeGen_LLVM::visit(const Max *op) {
    Type t = op->type;
    llvm::Value *a = codegen_widened(op->a), *b = codegen_widened(op->b);
    llvm::Value *gt = t.is_float() ? builder.CreateFCmpOGT(a, b)
                      : t.is_int() ? builder.CreateICmpSGT(a, b)
                                   : builder.CreateICmpUGT(a, b);
    value = narrow_if_half(builder.CreateSelect(gt, a, b), t);
}

llvm::Value *CodeGen_LLVM::codegen_compare(const Expr &ea, const Expr &eb,
                                           llvm::CmpInst::Predicate s, llvm::CmpInst::Predicate u,
                                           llvm::CmpInst::Predicate f) {
    Type t = ea.type();
    llvm::Value *a = codegen_widened(ea), *b = codegen_widened(eb);
    if (t.is_float()) return builder.CreateFCmp(f, a, b);
    return builder.CreateICmp(t.is_int() ? s : u, a, b);
}

void CodeGen_LLVM::visit(const EQ *op) {
    value = codegen_compare(op->a, op->b, llvm::CmpInst::ICMP_EQ, llvm::CmpInst::ICMP_EQ, llvm::CmpInst::FCMP_OEQ);
}
void CodeGen_LLVM::visit(const NE *op) {
    value = codegen_compare(op->a, op->b, llvm::CmpInst::ICMP_NE, llvm::CmpInst::ICMP_NE, llvm::CmpInst::FCMP_UNE);
}
void CodeGen_LLVM::visit(const LT *op) {
    value = codegen_compare(op->a, op->b, llvm::CmpInst::ICMP_SLT, llvm::CmpInst::ICMP_ULT, llvm::CmpInst::FCMP_OLT);
}
void CodeGen_LLVM::visit(const LE *op) {
    value = codegen_compare(op->a, op->b, llvm::CmpInst::ICMP_SLE, llvm::CmpInst::ICMP_ULE, llvm::CmpInst::FCMP_OLE);
}
void CodeGen_LLVM::visit(const GT *op) {
    value = codegen_compare(op->a, op->b, llvm::CmpInst::ICMP_SGT, llvm::CmpInst::ICMP_UGT, llvm::CmpInst::FCMP_OGT);
}
void CodeGen_LLVM::visit(const GE *op) {
    value = codegen_compare(op->a, op->b, llvm::CmpInst::ICMP_SGE, llvm::CmpInst::ICMP_UGE, llvm::CmpInst::FCMP_OGE);
}
void CodeGen_LLVM::visit(const And *op) { value = builder.CreateAnd(codegen(op->a), codegen(op->b)); }
void CodeGen_LLVM::visit(const Or *op) { value = builder.CreateOr(codegen(op->a), codegen(op->b)); }
void CodeGen_LLVM::visit(const Not *op) { value = builder.CreateNot(codegen(op->a)); }

void CodeGen_LLVM::visit(const Select *op) {
    llvm::Value *c = codegen(op->condition);
    llvm::Value *t = codegen(op->true_value), *f = codegen(op->false_value);
    if (op->type.lanes > 1 && op->condition.type().lanes == 1) c = splat_if_vector(c, op->type.lanes);
    value = builder.CreateSelect(c, t, f);
}

llvm::MDNode *CodeGen_LLVM::storage_tbaa_tag(const std::string &name) {
    llvm::MDNode *&tag = tbaa_tags[name];
    if (!tag) {
        llvm::MDBuilder md(context);
        if (!tbaa_root) tbaa_root = md.createTBAARoot("aicf storage");
        llvm::MDNode *type = md.createTBAAScalarTypeNode(name, tbaa_root);
        tag = md.createTBAAStructTagNode(type, type, 0);
    }
    return tag;
}

llvm::Value *CodeGen_LLVM::address_of(const std::string &name, llvm::Value *index, Type elem, bool inbounds) {
    const llvm::Value *const *base = symbols.find(name);
    internal_assert(base) << "codegen: no storage named " << name;
    llvm::Value *idx = builder.CreateSExt(index, llvm::Type::getInt64Ty(context));
    llvm::Type *t = llvm_type_of(elem.element_of());
    llvm::Value *ptr = const_cast<llvm::Value *>(*base);
    return inbounds ? builder.CreateInBoundsGEP(t, ptr, idx) : builder.CreateGEP(t, ptr, idx);
}

int CodeGen_LLVM::depth_of(const Expr &e) const {
    int depth = 0;
    visit_each<Variable>(e, [&](const Variable *v) {
        if (const int *d = definition_depth.find(v->name)) depth = std::max(depth, *d);
    });
    return depth;
}

// Whether the let `name` binds a sum whose variables can all be used here (a parallel loop's
// body sees only the values its closure carries).
bool CodeGen_LLVM::expandable(const std::string &name) const {
    if (!let_values.contains(name)) return false;
    const Expr &value = let_values.get(name);
    if (!value.as<Add>() && !value.as<Sub>()) return false;
    bool ok = true;
    visit_each<Variable>(value, [&](const Variable *v) { ok = ok && symbols.contains(v->name); });
    return ok;
}

// The summands of an index, with their signs: a + b - c is {a, +}, {b, +}, {c, -}. A variable
// bound to a sum (by common subexpression elimination, say) counts as that sum, so that the
// same element reached through the variable and through the sum gets the same address
// computation, which alias analysis then recognizes.
void CodeGen_LLVM::collect_summands(const Expr &e, bool negate, std::vector<std::pair<Expr, bool>> &out,
                                    int depth) const {
    if (const Add *a = e.as<Add>()) {
        collect_summands(a->a, negate, out, depth);
        collect_summands(a->b, negate, out, depth);
    } else if (const Sub *s = e.as<Sub>()) {
        collect_summands(s->a, negate, out, depth);
        collect_summands(s->b, !negate, out, depth);
    } else if (const Variable *v = e.as<Variable>(); v && depth < 4 && expandable(v->name)) {
        collect_summands(let_values.get(v->name), negate, out, depth + 1);
    } else {
        out.emplace_back(e, negate);
    }
}

llvm::Value *CodeGen_LLVM::address_of(const std::string &name, const Expr &index, Type elem, bool inbounds) {
    std::vector<std::pair<Expr, bool>> summands;
    // Signed 32-bit index arithmetic does not overflow, so the sum may be taken in 64 bits.
    if (index.type() == Int(32)) collect_summands(index, false, summands);
    if (summands.size() < 2) return address_of(name, codegen(index), elem, inbounds);
    const llvm::Value *const *base = symbols.find(name);
    internal_assert(base) << "codegen: no storage named " << name;
    std::vector<std::pair<int, size_t>> order;
    for (size_t i = 0; i < summands.size(); i++) order.emplace_back(depth_of(summands[i].first), i);
    std::stable_sort(order.begin(), order.end());
    llvm::Type *i64 = llvm::Type::getInt64Ty(context), *elem_type = llvm_type_of(elem.element_of());
    llvm::Value *ptr = const_cast<llvm::Value *>(*base);
    for (const auto &o : order) {
        const auto &[term, negative] = summands[o.second];
        llvm::Value *v = builder.CreateSExt(codegen(term), i64);
        if (negative) v = builder.CreateNSWNeg(v);
        // Not inbounds: a partial sum may point outside the storage (below its min).
        ptr = builder.CreateGEP(elem_type, ptr, v);
    }
    return ptr;
}

void CodeGen_LLVM::visit(const Load *op) {
    Type t = op->type;
    llvm::Type *elem = llvm_type_of(t.element_of());
    llvm::Align align(t.element_of().bytes());
    if (t.lanes == 1) {
        llvm::Value *ptr = address_of(op->name, op->index, t);
        if (is_true(op->predicate)) {
            value = tag_access(builder.CreateAlignedLoad(elem, ptr, align), op->name);
            return;
        }
        internal_error << "codegen: predicated scalar load of " << op->name;
    }
    const Ramp *ramp = op->index.as<Ramp>();
    if (ramp && is_const_one(ramp->stride)) {
        llvm::Value *ptr = address_of(op->name, ramp->base, t, is_true(op->predicate));
        if (is_true(op->predicate)) {
            value = tag_access(builder.CreateAlignedLoad(llvm_type_of(t), ptr, align), op->name);
        } else {
            value = tag_access(builder.CreateMaskedLoad(llvm_type_of(t), ptr, align, codegen(op->predicate),
                                                        llvm::UndefValue::get(llvm_type_of(t))),
                               op->name);
        }
        return;
    }
    if (const Broadcast *b = op->index.as<Broadcast>(); b && is_true(op->predicate)) {
        llvm::Value *ptr = address_of(op->name, b->value, t);
        value = splat_if_vector(tag_access(builder.CreateAlignedLoad(elem, ptr, align), op->name), t.lanes);
        return;
    }
    // A gather, one lane at a time; masked-off lanes are not read.
    llvm::Value *indices = codegen(op->index);
    llvm::Value *pred = codegen(op->predicate);
    llvm::Value *result = llvm::UndefValue::get(llvm_type_of(t));
    for (int i = 0; i < t.lanes; i++) {
        llvm::Value *idx = builder.CreateExtractElement(indices, uint64_t(i));
        llvm::Value *lane_on = builder.CreateExtractElement(pred, uint64_t(i));
        llvm::Value *ptr = address_of(op->name, idx, t);
        llvm::BasicBlock *before = builder.GetInsertBlock();
        llvm::BasicBlock *load_bb = llvm::BasicBlock::Create(context, "gather_lane", function);
        llvm::BasicBlock *after = llvm::BasicBlock::Create(context, "gather_next", function);
        builder.CreateCondBr(lane_on, load_bb, after);
        builder.SetInsertPoint(load_bb);
        llvm::Value *x = tag_access(builder.CreateAlignedLoad(elem, ptr, align), op->name);
        llvm::Value *with = builder.CreateInsertElement(result, x, uint64_t(i));
        builder.CreateBr(after);
        builder.SetInsertPoint(after);
        llvm::PHINode *phi = builder.CreatePHI(result->getType(), 2);
        phi->addIncoming(result, before);
        phi->addIncoming(with, load_bb);
        result = phi;
    }
    value = result;
}

void CodeGen_LLVM::visit(const Ramp *op) {
    llvm::Value *base = codegen(op->base), *stride = codegen(op->stride);
    Type t = op->type;
    llvm::Value *b = splat_if_vector(base, t.lanes);
    std::vector<llvm::Constant *> steps;
    for (int i = 0; i < t.lanes; i++) {
        steps.push_back(llvm::ConstantInt::get(llvm_type_of(t.element_of()), i));
    }
    llvm::Value *iota = llvm::ConstantVector::get(steps);
    value = builder.CreateAdd(b, builder.CreateMul(splat_if_vector(stride, t.lanes), iota));
}

void CodeGen_LLVM::visit(const Broadcast *op) {
    value = splat_if_vector(codegen(op->value), op->lanes);
}

llvm::Value *CodeGen_LLVM::emit_math_call(Intrinsic op, Type t, const std::vector<llvm::Value *> &args) {
    internal_error << "codegen: no math function " << to_string(op) << " for " << to_string(t);
    return nullptr;
}

llvm::Value *CodeGen_LLVM::codegen_buffer_field(const Call *op) {
    llvm::Value *desc = codegen(op->args[0]);
    llvm::Type *i8 = llvm::Type::getInt8Ty(context);
    llvm::Type *i32 = llvm::Type::getInt32Ty(context);
    llvm::Type *ptr_t = llvm::PointerType::get(context, 0);
    auto field = [&](int offset) { return builder.CreateConstInBoundsGEP1_64(i8, desc, offset); };
    switch (op->intrinsic) {
    case Intrinsic::buffer_get_host: return builder.CreateLoad(ptr_t, field(AICF_BUFFER_OFFSET_HOST));
    case Intrinsic::buffer_get_dimensions: return builder.CreateLoad(i32, field(AICF_BUFFER_OFFSET_DIMENSIONS));
    case Intrinsic::buffer_get_type_code:
        return builder.CreateZExt(builder.CreateLoad(i8, field(AICF_BUFFER_OFFSET_TYPE)), i32);
    case Intrinsic::buffer_get_type_bits:
        return builder.CreateZExt(builder.CreateLoad(i8, field(AICF_BUFFER_OFFSET_TYPE + 1)), i32);
    default: break;
    }
    // min, extent and stride of dimension d: the fields of dim[d] (16 bytes each).
    llvm::Value *dims = builder.CreateLoad(ptr_t, field(AICF_BUFFER_OFFSET_DIM));
    llvm::Value *d = builder.CreateSExt(codegen(op->args[1]), llvm::Type::getInt64Ty(context));
    llvm::Value *entry = builder.CreateInBoundsGEP(i8, dims, builder.CreateMul(d, builder.getInt64(16)));
    int offset = op->intrinsic == Intrinsic::buffer_get_min ? 0 : op->intrinsic == Intrinsic::buffer_get_extent ? 4 : 8;
    return builder.CreateLoad(i32, builder.CreateConstInBoundsGEP1_64(i8, entry, offset));
}

llvm::Value *CodeGen_LLVM::codegen_intrinsic(const Call *op) {
    Type t = op->type;
    switch (op->intrinsic) {
    case Intrinsic::buffer_get_host:
    case Intrinsic::buffer_get_min:
    case Intrinsic::buffer_get_extent:
    case Intrinsic::buffer_get_stride:
    case Intrinsic::buffer_get_dimensions:
    case Intrinsic::buffer_get_type_code:
    case Intrinsic::buffer_get_type_bits: return codegen_buffer_field(op);
    case Intrinsic::likely: return codegen(op->args[0]);
    case Intrinsic::bitwise_and: return builder.CreateAnd(codegen(op->args[0]), codegen(op->args[1]));
    case Intrinsic::bitwise_or: return builder.CreateOr(codegen(op->args[0]), codegen(op->args[1]));
    case Intrinsic::bitwise_xor: return builder.CreateXor(codegen(op->args[0]), codegen(op->args[1]));
    case Intrinsic::bitwise_not: return builder.CreateNot(codegen(op->args[0]));
    case Intrinsic::shift_left:
    case Intrinsic::shift_right: {
        // Shifting by the width or more gives 0 (or the sign, for signed right shifts).
        llvm::Value *a = codegen(op->args[0]), *b = codegen(op->args[1]);
        llvm::Value *too_far = builder.CreateICmpUGE(b, const_int(t, t.bits));
        if (op->intrinsic == Intrinsic::shift_left) {
            return builder.CreateSelect(too_far, llvm::Constant::getNullValue(a->getType()), builder.CreateShl(a, b));
        }
        if (t.is_int()) {
            llvm::Value *clamped = builder.CreateSelect(too_far, const_int(t, t.bits - 1), b);
            return builder.CreateAShr(a, clamped);
        }
        return builder.CreateSelect(too_far, llvm::Constant::getNullValue(a->getType()), builder.CreateLShr(a, b));
    }
    case Intrinsic::abs: {
        if (t.is_float()) {
            llvm::Value *a = codegen_widened(op->args[0]);
            return narrow_if_half(builder.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a), t);
        }
        llvm::Value *a = codegen(op->args[0]);
        if (t.is_uint()) return a;
        llvm::Value *neg = builder.CreateICmpSLT(a, llvm::Constant::getNullValue(a->getType()));
        return builder.CreateSelect(neg, builder.CreateNeg(a), a);
    }
    case Intrinsic::is_nan: {
        llvm::Value *a = codegen_widened(op->args[0]);
        return builder.CreateFCmpUNO(a, a);
    }
    case Intrinsic::is_inf: {
        llvm::Value *a = codegen_widened(op->args[0]);
        llvm::Value *m = builder.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a);
        return builder.CreateFCmpOEQ(m, llvm::ConstantFP::getInfinity(a->getType()));
    }
    default: break;
    }

    // Float math: computed in float32 for 16-bit floats.
    std::vector<llvm::Value *> args;
    for (const Expr &a : op->args) args.push_back(codegen_widened(a));
    Type ct = t.is_float() && t.bits == 16 ? Float(32, t.lanes) : t;
    llvm::Value *r = nullptr;
    auto unary = [&](llvm::Intrinsic::ID id) { return builder.CreateUnaryIntrinsic(id, args[0]); };
    switch (op->intrinsic) {
    case Intrinsic::sqrt: r = unary(llvm::Intrinsic::sqrt); break;
    case Intrinsic::rsqrt:
        r = builder.CreateFDiv(llvm::ConstantFP::get(args[0]->getType(), 1.0), unary(llvm::Intrinsic::sqrt));
        break;
    case Intrinsic::floor: r = unary(llvm::Intrinsic::floor); break;
    case Intrinsic::ceil: r = unary(llvm::Intrinsic::ceil); break;
    case Intrinsic::round: r = unary(llvm::Intrinsic::roundeven); break;
    case Intrinsic::trunc: r = unary(llvm::Intrinsic::trunc); break;
    case Intrinsic::fma:
        r = builder.CreateIntrinsic(llvm::Intrinsic::fma, {args[0]->getType()}, args);
        break;
    default: {
        // Library functions work on scalars: apply them lane by lane, unless the target
        // has them on vectors.
        if (ct.lanes == 1) {
            r = emit_math_call(op->intrinsic, ct, args);
            break;
        }
        if ((r = emit_vector_math_call(op->intrinsic, ct, args))) break;
        r = llvm::UndefValue::get(llvm_type_of(ct));
        for (int i = 0; i < ct.lanes; i++) {
            std::vector<llvm::Value *> lane;
            for (llvm::Value *a : args) lane.push_back(builder.CreateExtractElement(a, uint64_t(i)));
            r = builder.CreateInsertElement(r, emit_math_call(op->intrinsic, ct.element_of(), lane), uint64_t(i));
        }
    }
    }
    return narrow_if_half(r, t);
}

void CodeGen_LLVM::visit(const Call *op) {
    internal_assert(op->call_type == Call::Intrinsic || op->call_type == Call::PureIntrinsic)
        << "codegen: call to " << op->name << " survived storage flattening";
    internal_assert(op->intrinsic != Intrinsic::runtime_error)
        << "codegen: runtime_error outside an assert";
    if (llvm::Value *v = emit_target_intrinsic(op)) {
        value = v;
        return;
    }
    value = codegen_intrinsic(op);
}

void CodeGen_LLVM::visit(const Let *op) {
    llvm::Value *v = codegen(op->value);
    ScopedBinding<llvm::Value *> bind(symbols, op->name, v);
    ScopedBinding<Expr> let_value(let_values, op->name, op->value);
    ScopedBinding<int> depth(definition_depth, op->name, depth_of(op->value));
    value = codegen(op->body);
}

void CodeGen_LLVM::visit(const LetStmt *op) {
    llvm::Value *v = codegen(op->value);
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
        values.push_back(builder.CreateSExt(codegen(msg->args[i]), llvm::Type::getInt64Ty(context)));
    }
    emit_runtime_error(kind, name->value, values);
    builder.SetInsertPoint(ok);
}

void CodeGen_LLVM::visit(const ProducerConsumer *op) { codegen(op->body); }

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
    if (outer_loops_stay_rolled) {
        bool contains_loop = false;
        visit_each<For>(op->body, [&](const For *) { contains_loop = true; });
        if (contains_loop) {
            // A distinct loop ID (its first operand is itself), then the property.
            llvm::MDNode *disable = llvm::MDNode::get(context, llvm::MDString::get(context, "llvm.loop.unroll.disable"));
            llvm::MDNode *id = llvm::MDNode::getDistinct(context, {nullptr, disable});
            id->replaceOperandWith(0, id);
            latch->setMetadata(llvm::LLVMContext::MD_loop, id);
        }
    }
    builder.SetInsertPoint(after);
}

void CodeGen_LLVM::visit(const Store *op) {
    Type t = op->value.type();
    llvm::Value *v = codegen(op->value);
    llvm::Align align(t.element_of().bytes());
    if (t.lanes == 1) {
        internal_assert(is_true(op->predicate)) << "codegen: predicated scalar store to " << op->name;
        tag_access(builder.CreateAlignedStore(v, address_of(op->name, op->index, t), align), op->name);
        return;
    }
    const Ramp *ramp = op->index.as<Ramp>();
    if (ramp && is_const_one(ramp->stride)) {
        llvm::Value *ptr = address_of(op->name, ramp->base, t, is_true(op->predicate));
        if (is_true(op->predicate)) {
            tag_access(builder.CreateAlignedStore(v, ptr, align), op->name);
        } else {
            tag_access(builder.CreateMaskedStore(v, ptr, align, codegen(op->predicate)), op->name);
        }
        return;
    }
    llvm::Value *indices = codegen(op->index);
    llvm::Value *pred = codegen(op->predicate);
    for (int i = 0; i < t.lanes; i++) {
        llvm::Value *lane_on = builder.CreateExtractElement(pred, uint64_t(i));
        llvm::BasicBlock *store_bb = llvm::BasicBlock::Create(context, "scatter_lane", function);
        llvm::BasicBlock *after = llvm::BasicBlock::Create(context, "scatter_next", function);
        builder.CreateCondBr(lane_on, store_bb, after);
        builder.SetInsertPoint(store_bb);
        llvm::Value *idx = builder.CreateExtractElement(indices, uint64_t(i));
        tag_access(builder.CreateAlignedStore(builder.CreateExtractElement(v, uint64_t(i)), address_of(op->name, idx, t), align), op->name);
        builder.CreateBr(after);
        builder.SetInsertPoint(after);
    }
}

void CodeGen_LLVM::visit(const Provide *op) {
    internal_error << "codegen: Provide to " << op->name << " survived storage flattening";
}

void CodeGen_LLVM::visit(const Allocate *op) {
    // The element count in 64 bits, checked: no overflow and at most 2^31 - 1 elements.
    llvm::Type *i64 = llvm::Type::getInt64Ty(context);
    llvm::Value *count = llvm::ConstantInt::get(i64, 1);
    for (const Expr &e : op->extents) {
        llvm::Value *ex = builder.CreateSExt(codegen(e), i64);
        ex = builder.CreateSelect(builder.CreateICmpSLT(ex, builder.getInt64(0)), builder.getInt64(0), ex);
        // Saturate instead of wrapping, so an absurd size is caught below.
        llvm::Value *limit = builder.getInt64(int64_t(1) << 40);
        count = builder.CreateMul(builder.CreateSelect(builder.CreateICmpUGT(count, limit), limit, count),
                                  builder.CreateSelect(builder.CreateICmpUGT(ex, limit), limit, ex));
    }
    // Flat indices are int32: an allocation holds at most 2^31 - 1 elements.
    llvm::BasicBlock *too_big = llvm::BasicBlock::Create(context, "allocation_too_large", function);
    llvm::BasicBlock *fits = llvm::BasicBlock::Create(context, "allocation_fits", function);
    builder.CreateCondBr(builder.CreateICmpSLE(count, builder.getInt64(0x7fffffff)), fits, too_big);
    builder.SetInsertPoint(too_big);
    emit_runtime_error(RuntimeErrorKind::FuncStorageTooLarge, op->name, {count});
    builder.SetInsertPoint(fits);
    // Room for a whole vector after the last element: a masked access whose first lane is the
    // last element spans the full vector width, and LLVM's alias analysis takes an access
    // wider than its object to be elsewhere (and so moved a load past a masked store to it).
    int lanes = 1;
    visit_each<Load>(op->body, [&](const Load *l) {
        if (l->name == op->name) lanes = std::max(lanes, int(l->type.lanes));
    });
    visit_each<Store>(op->body, [&](const Store *s) {
        if (s->name == op->name) lanes = std::max(lanes, int(s->value.type().lanes));
    });
    if (lanes > 1) count = builder.CreateAdd(count, builder.getInt64(lanes - 1));
    llvm::Value *bytes = builder.CreateMul(count, builder.getInt64(op->type.bytes()));
    llvm::Value *ptr = nullptr;
    // Stack storage is one alloca in the entry block, so it needs a size known there.
    bool on_heap = op->memory_type == MemoryType::Heap || op->memory_type == MemoryType::Auto ||
                   !llvm::isa<llvm::Constant>(count);
    if (on_heap) {
        ptr = emit_heap_allocation(op->name, bytes);
    } else {
        ptr = create_alloca_at_entry(llvm_type_of(op->type.element_of()),
                                     builder.CreateTrunc(count, builder.getInt32Ty()), op->name);
        // Aligned to the widest vector that accesses it (at most a cache line), as heap storage
        // is: a vector at a multiple of its width then never straddles two cache lines.
        uint64_t widest = uint64_t(lanes) * uint64_t(op->type.bytes());
        uint64_t align = std::max<uint64_t>(op->type.bytes(), std::min<uint64_t>(64, llvm::PowerOf2Ceil(widest)));
        llvm::cast<llvm::AllocaInst>(ptr)->setAlignment(llvm::Align(align));
    }
    {
        ScopedBinding<llvm::Value *> bind(symbols, op->name, ptr);
        if (on_heap) {
            codegen(op->body);
        } else {
            ScopedBinding<int> stack(stack_storage, op->name, 1);
            codegen(op->body);
        }
    }
    if (on_heap) emit_heap_free(ptr);
}

void CodeGen_LLVM::visit(const Free *) {}

void CodeGen_LLVM::visit(const Realize *op) {
    internal_error << "codegen: Realize of " << op->name << " survived storage flattening";
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

void CodeGen_LLVM::visit(const Evaluate *op) { codegen(op->value); }

} // namespace backends
} // namespace aicf
