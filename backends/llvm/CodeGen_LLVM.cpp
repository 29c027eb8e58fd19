#include "backends/llvm/CodeGen_LLVM.h"

#include "dsl/base/Error.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/Substitute.h"

#include <cmath>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>

#include "dsl/BufferABI.h"
#include "dsl/Target.h"

namespace aicf {
namespace backends {

using namespace ir;

CodeGen_LLVM::CodeGen_LLVM(llvm::LLVMContext &c, llvm::Module &m)
    : context(c), module(m), builder(c) {}

llvm::FastMathFlags float_freedom(const Target &target) {
    llvm::FastMathFlags flags;
    flags.setAllowContract(target.has_feature(Target::FMA));
    flags.setAllowReassoc(target.has_feature(Target::Reassociate));
    return flags;
}

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
    case TypeCode::UInt:
        scalar = llvm::Type::getIntNTy(context, t.bits);
        break;
    case TypeCode::Float:
        scalar = t.bits == 16   ? llvm::Type::getInt16Ty(context)
                 : t.bits == 32 ? llvm::Type::getFloatTy(context)
                                : llvm::Type::getDoubleTy(context);
        break;
    case TypeCode::BFloat:
        scalar = llvm::Type::getInt16Ty(context);
        break;
    case TypeCode::Handle:
        scalar = llvm::PointerType::get(context, 0);
        break;
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
    int lanes =
        i16->isVectorTy() ? int(llvm::cast<llvm::FixedVectorType>(i16)->getNumElements()) : 1;
    Type u32 = UInt(32, lanes);
    llvm::Type *f32 = llvm_type_of(Float(32, lanes));
    llvm::Value *w = builder.CreateZExt(bits, llvm_type_of(u32));
    if (is_bfloat) return builder.CreateBitCast(builder.CreateShl(w, const_int(u32, 16)), f32);
    // float16: shift exponent and mantissa into place, rescale by 2^112 (which also handles
    // subnormals), then restore infinity/NaN exponents and the sign.
    llvm::Value *magnitude =
        builder.CreateShl(builder.CreateAnd(w, const_int(u32, 0x7fff)), const_int(u32, 13));
    llvm::Value *scaled = builder.CreateFMul(builder.CreateBitCast(magnitude, f32),
                                             llvm::ConstantFP::get(f32, 0x1p112));
    llvm::Value *is_special = builder.CreateFCmpOGE(scaled, llvm::ConstantFP::get(f32, 65536.0));
    llvm::Value *sbits = builder.CreateBitCast(scaled, llvm_type_of(u32));
    sbits = builder.CreateSelect(is_special, builder.CreateOr(sbits, const_int(u32, 0x7f800000)),
                                 sbits);
    llvm::Value *sign =
        builder.CreateShl(builder.CreateAnd(w, const_int(u32, 0x8000)), const_int(u32, 16));
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
        llvm::Value *lsb =
            builder.CreateAnd(builder.CreateLShr(u, const_int(u32, 16)), const_int(u32, 1));
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
    llvm::Value *odd =
        builder.CreateAnd(builder.CreateLShr(a, const_int(u32, 13)), const_int(u32, 1));
    llvm::Value *norm =
        builder.CreateAdd(a, const_int(u32, int64_t(uint32_t(uint32_t(15 - 127) << 23) + 0xfff)));
    norm = builder.CreateLShr(builder.CreateAdd(norm, odd), const_int(u32, 13));
    llvm::Value *is_sub = builder.CreateICmpULT(a, const_int(u32, 113 << 23));
    llvm::Value *r = builder.CreateSelect(big, special, builder.CreateSelect(is_sub, sub, norm));
    r = builder.CreateOr(r, builder.CreateLShr(sign, const_int(u32, 16)));
    return builder.CreateTrunc(r, i16t);
}

llvm::Value *CodeGen_LLVM::to_float_round_to_odd(llvm::Value *v, Type from) {
    Type u32 = UInt(32, from.lanes);
    llvm::Type *f32 = llvm_type_of(Float(32, from.lanes));
    if (from.is_float()) {
        llvm::Value *r = builder.CreateFPTrunc(v, f32);
        llvm::Value *back = builder.CreateFPExt(r, v->getType());
        llvm::Value *inexact = builder.CreateFCmpONE(back, v); // false for NaN
        llvm::Value *away =
            builder.CreateFCmpOGT(builder.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, back),
                                  builder.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v));
        // Float bit patterns order by magnitude: one less is the next value toward zero.
        llvm::Value *bits = builder.CreateBitCast(r, llvm_type_of(u32));
        bits = builder.CreateSub(bits, builder.CreateZExt(away, llvm_type_of(u32)));
        bits = builder.CreateOr(bits, builder.CreateZExt(inexact, llvm_type_of(u32)));
        return builder.CreateBitCast(bits, f32);
    }
    // An integer: its magnitude's top 24 significant bits, the rest folded into the last one.
    Type ut = UInt(from.bits, from.lanes);
    llvm::Type *it = llvm_type_of(ut);
    llvm::Value *negative = nullptr, *a = v;
    if (from.is_int()) {
        negative = builder.CreateICmpSLT(v, llvm::Constant::getNullValue(it));
        a = builder.CreateSelect(negative, builder.CreateNeg(v), v); // MIN stays 2^(bits-1)
    }
    if (from.bits <= 24) {
        llvm::Value *r = builder.CreateUIToFP(a, f32);
        return negative ? builder.CreateSelect(negative, builder.CreateFNeg(r), r) : r;
    }
    llvm::Value *leading =
        builder.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, a, builder.getFalse());
    llvm::Value *length = builder.CreateSub(const_int(ut, from.bits), leading);
    llvm::Value *over = builder.CreateSub(length, const_int(ut, 24));
    llvm::Value *shift =
        builder.CreateSelect(builder.CreateICmpSGT(over, llvm::Constant::getNullValue(it)), over,
                             llvm::Constant::getNullValue(it));
    llvm::Value *kept = builder.CreateLShr(a, shift);
    llvm::Value *lost_mask =
        builder.CreateSub(builder.CreateShl(const_int(ut, 1), shift), const_int(ut, 1));
    llvm::Value *lost =
        builder.CreateICmpNE(builder.CreateAnd(a, lost_mask), llvm::Constant::getNullValue(it));
    kept = builder.CreateOr(kept, builder.CreateZExt(lost, it));
    llvm::Value *r = builder.CreateUIToFP(kept, f32); // exact: fewer than 2^24
    // Times 2^shift, built as a float's exponent field.
    llvm::Value *exponent = builder.CreateShl(
        builder.CreateAdd(builder.CreateZExtOrTrunc(shift, llvm_type_of(u32)), const_int(u32, 127)),
        const_int(u32, 23));
    r = builder.CreateFMul(r, builder.CreateBitCast(exponent, f32));
    return negative ? builder.CreateSelect(negative, builder.CreateFNeg(r), r) : r;
}

llvm::Value *CodeGen_LLVM::float_to_int(llvm::Value *f, Type to) {
    llvm::Type *ft = f->getType();
    const llvm::fltSemantics &sem = ft->getScalarType()->getFltSemantics();
    const int digits = int(llvm::APFloat::semanticsPrecision(sem));
    // The type's ends: -2^k (or 0) and 2^k - 1, with k its value bits. The upper end is a
    // float only when k fits the significand; otherwise the clamp stops at the largest float
    // below 2^k, and anything from 2^k up is the upper end.
    const int k = to.is_int() ? to.bits - 1 : to.bits;
    auto power = [&](int e, int64_t sign) {
        return llvm::ConstantFP::get(ft, std::ldexp(double(sign), e));
    };
    llvm::Value *lo = to.is_int() ? power(k, -1) : llvm::ConstantFP::get(ft, 0.0);
    llvm::Value *hi =
        k <= digits ? llvm::ConstantFP::get(ft, std::ldexp(1.0, k) - 1.0)
                    : llvm::ConstantFP::get(ft, std::ldexp(1.0, k) - std::ldexp(1.0, k - digits));
    llvm::Value *zero = llvm::ConstantFP::get(ft, 0.0);
    llvm::Value *c = builder.CreateSelect(builder.CreateFCmpOLT(f, lo), lo, f);
    c = builder.CreateSelect(builder.CreateFCmpOGT(c, hi), hi, c);
    c = builder.CreateSelect(builder.CreateFCmpUNO(f, f), zero, c);
    // Conversions into types narrower than 32 bits go through 32 bits (the value fits).
    Type via = to.bits < 32 ? (to.is_int() ? Int(32, to.lanes) : UInt(32, to.lanes)) : to;
    llvm::Value *r = to.is_int() ? builder.CreateFPToSI(c, llvm_type_of(via))
                                 : builder.CreateFPToUI(c, llvm_type_of(via));
    if (k > digits) {
        llvm::Value *top = llvm::ConstantInt::get(
            llvm_type_of(via),
            to.is_int() ? llvm::APInt::getSignedMaxValue(unsigned(to.bits)).zext(unsigned(via.bits))
                        : llvm::APInt::getMaxValue(unsigned(to.bits)));
        r = builder.CreateSelect(builder.CreateFCmpOGE(f, power(k, 1)), top, r);
    }
    return builder.CreateTrunc(r, llvm_type_of(to));
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

void CodeGen_LLVM::visit(const IntImm *op) {
    value = const_int(op->type, op->value);
}
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
    // Into a 16-bit float from a wider float or an integer: through float32 rounded to odd, so
    // that the value is rounded once (not to float32 first, then again).
    if (to.is_float() && to.bits == 16 && (from.bits > 32 || !from.is_float()) && !from.is_bool()) {
        return float_to_half(to_float_round_to_odd(codegen(from_e), from), to.is_bfloat());
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
        r = from.is_int() && !from.is_bool() ? builder.CreateSIToFP(v, tt)
                                             : builder.CreateUIToFP(v, tt);
    } else if (from.is_float() && target.is_int_or_uint()) {
        r = float_to_int(v, target);
    } else if (from.is_float() && target.is_float()) {
        r = builder.CreateFPCast(v, tt);
    } else {
        internal_error << "codegen: cast from " << to_string(from) << " to " << to_string(to);
    }
    return narrow_if_half(r, to);
}

namespace {

bool converts_from_float(const Cast *op) {
    return op->value.type().is_float() && !op->type.is_float();
}

// Float operations generated as written: no contraction, no reassociation.
struct StrictFloats {
    llvm::IRBuilderBase::FastMathFlagGuard keep;
    explicit StrictFloats(llvm::IRBuilderBase &b) : keep(b) {
        b.setFastMathFlags(llvm::FastMathFlags());
    }
};

} // namespace

void CodeGen_LLVM::find_strict_float_lets(const Stmt &body) {
    std::map<std::string, std::set<std::string>> reads; // float let -> what its value reads
    auto float_let = [&](const auto *op) {
        if (!op->value.type().is_float()) return;
        std::set<std::string> vars = free_vars(op->value);
        reads[op->name].insert(vars.begin(), vars.end());
    };
    visit_each_distinct<Let>(body, float_let);
    visit_each<LetStmt>(body, float_let);
    std::vector<std::string> work;
    visit_each_distinct<Cast>(body, [&](const Cast *op) {
        if (!converts_from_float(op)) return;
        for (const std::string &v : free_vars(op->value))
            work.push_back(v);
    });
    strict_float_lets.clear();
    while (!work.empty()) {
        std::string name = std::move(work.back());
        work.pop_back();
        auto it = reads.find(name);
        if (it == reads.end() || !strict_float_lets.insert(name).second) continue;
        work.insert(work.end(), it->second.begin(), it->second.end());
    }
}

void CodeGen_LLVM::visit(const Cast *op) {
    std::optional<StrictFloats> strict;
    if (converts_from_float(op)) strict.emplace(builder);
    value = codegen_cast(op->type, op->value);
}

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

namespace {

// A constant divisor (a scalar, or a vector of one value) that is neither 0 nor -1 as t reads
// it: none of the checks for those is needed.
const llvm::ConstantInt *plain_constant_divisor(llvm::Value *b, Type t) {
    const llvm::Constant *c = llvm::dyn_cast<llvm::Constant>(b);
    if (c && c->getType()->isVectorTy()) c = c->getSplatValue();
    const llvm::ConstantInt *ci = llvm::dyn_cast_or_null<llvm::ConstantInt>(c);
    if (!ci || ci->isZero() || (t.is_int() && ci->isMinusOne())) return nullptr;
    return ci;
}

} // namespace

llvm::Value *CodeGen_LLVM::codegen_int_div_mod(llvm::Value *a, llvm::Value *b, Type t,
                                               bool is_div) {
    llvm::Value *zero = llvm::Constant::getNullValue(a->getType());
    llvm::Value *one = const_int(t, 1);
    // A constant divisor, as most are (tile sizes, vector widths): a shift and a mask for a
    // positive power of two, else the truncating operation and one correction of its sign.
    if (const llvm::ConstantInt *c = plain_constant_divisor(b, t)) {
        const llvm::APInt &v = c->getValue();
        const bool positive = t.is_uint() || v.isStrictlyPositive();
        if (positive && v.isPowerOf2()) {
            if (is_div) {
                llvm::Value *k = llvm::ConstantInt::get(a->getType(), v.logBase2());
                return t.is_uint() ? builder.CreateLShr(a, k) : builder.CreateAShr(a, k);
            }
            return builder.CreateAnd(a, llvm::ConstantInt::get(a->getType(), v - 1));
        }
        if (t.is_uint()) return is_div ? builder.CreateUDiv(a, b) : builder.CreateURem(a, b);
        llvm::Value *q = builder.CreateSDiv(a, b), *r = builder.CreateSRem(a, b);
        llvm::Value *r_neg = builder.CreateICmpSLT(r, zero);
        // a = q * b + r with r < 0: one more (or one less) b, and r + |b|.
        if (is_div)
            return builder.CreateSelect(
                r_neg, positive ? builder.CreateSub(q, one) : builder.CreateAdd(q, one), q);
        return builder.CreateSelect(
            r_neg, positive ? builder.CreateAdd(r, b) : builder.CreateSub(r, b), r);
    }
    // The divisor frozen where division traps: one computed with arithmetic taken not to
    // overflow (`mul nsw`) is poison where it does, and LLVM may then drop the tests below
    // (b * b == 0 becomes b == 0) and divide by zero. Frozen, it is one value the tests see.
    if (division_traps()) b = builder.CreateFreeze(b);
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
        llvm::Value *adj =
            builder.CreateSelect(b_pos, builder.CreateSub(q, one), builder.CreateAdd(q, one));
        result = builder.CreateSelect(r_neg, adj, q);
        result = builder.CreateSelect(b_is_minus_one, builder.CreateNeg(a), result);
    } else {
        llvm::Value *adj =
            builder.CreateSelect(b_pos, builder.CreateAdd(r, b), builder.CreateSub(r, b));
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
        // a - b * floor(a / b), each operation rounded as written: the multiply fused into
        // the subtraction (-fma) gives results outside [0, b).
        StrictFloats strict(builder);
        llvm::Value *q =
            builder.CreateUnaryIntrinsic(llvm::Intrinsic::floor, builder.CreateFDiv(a, b));
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
    value = codegen_compare(op->a, op->b, llvm::CmpInst::ICMP_EQ, llvm::CmpInst::ICMP_EQ,
                            llvm::CmpInst::FCMP_OEQ);
}
void CodeGen_LLVM::visit(const NE *op) {
    value = codegen_compare(op->a, op->b, llvm::CmpInst::ICMP_NE, llvm::CmpInst::ICMP_NE,
                            llvm::CmpInst::FCMP_UNE);
}
void CodeGen_LLVM::visit(const LT *op) {
    value = codegen_compare(op->a, op->b, llvm::CmpInst::ICMP_SLT, llvm::CmpInst::ICMP_ULT,
                            llvm::CmpInst::FCMP_OLT);
}
void CodeGen_LLVM::visit(const LE *op) {
    value = codegen_compare(op->a, op->b, llvm::CmpInst::ICMP_SLE, llvm::CmpInst::ICMP_ULE,
                            llvm::CmpInst::FCMP_OLE);
}
void CodeGen_LLVM::visit(const GT *op) {
    value = codegen_compare(op->a, op->b, llvm::CmpInst::ICMP_SGT, llvm::CmpInst::ICMP_UGT,
                            llvm::CmpInst::FCMP_OGT);
}
void CodeGen_LLVM::visit(const GE *op) {
    value = codegen_compare(op->a, op->b, llvm::CmpInst::ICMP_SGE, llvm::CmpInst::ICMP_UGE,
                            llvm::CmpInst::FCMP_OGE);
}
void CodeGen_LLVM::visit(const And *op) {
    value = builder.CreateAnd(codegen(op->a), codegen(op->b));
}
void CodeGen_LLVM::visit(const Or *op) {
    value = builder.CreateOr(codegen(op->a), codegen(op->b));
}
void CodeGen_LLVM::visit(const Not *op) {
    value = builder.CreateNot(codegen(op->a));
}

void CodeGen_LLVM::visit(const Select *op) {
    llvm::Value *c = codegen(op->condition);
    llvm::Value *t = codegen(op->true_value), *f = codegen(op->false_value);
    if (op->type.lanes > 1 && op->condition.type().lanes == 1)
        c = splat_if_vector(c, op->type.lanes);
    value = builder.CreateSelect(c, t, f);
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

llvm::Value *CodeGen_LLVM::emit_math_call(Intrinsic op, Type t,
                                          const std::vector<llvm::Value *> &args) {
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
    case Intrinsic::buffer_get_host:
        return builder.CreateLoad(ptr_t, field(AICF_BUFFER_OFFSET_HOST));
    case Intrinsic::buffer_get_dimensions:
        return builder.CreateLoad(i32, field(AICF_BUFFER_OFFSET_DIMENSIONS));
    case Intrinsic::buffer_get_type_code:
        return builder.CreateZExt(builder.CreateLoad(i8, field(AICF_BUFFER_OFFSET_TYPE)), i32);
    case Intrinsic::buffer_get_type_bits:
        return builder.CreateZExt(builder.CreateLoad(i8, field(AICF_BUFFER_OFFSET_TYPE + 1)), i32);
    default:
        break;
    }
    // min, extent and stride of dimension d: the fields of dim[d] (16 bytes each).
    llvm::Value *dims = builder.CreateLoad(ptr_t, field(AICF_BUFFER_OFFSET_DIM));
    llvm::Value *d = builder.CreateSExt(codegen(op->args[1]), llvm::Type::getInt64Ty(context));
    llvm::Value *entry =
        builder.CreateInBoundsGEP(i8, dims, builder.CreateMul(d, builder.getInt64(16)));
    int offset = op->intrinsic == Intrinsic::buffer_get_min      ? 0
                 : op->intrinsic == Intrinsic::buffer_get_extent ? 4
                                                                 : 8;
    return builder.CreateLoad(i32, builder.CreateConstInBoundsGEP1_64(i8, entry, offset));
}

llvm::Value *CodeGen_LLVM::codegen_intrinsic(const Call *op) {
    Type t = op->type;
    switch (op->intrinsic) {
    case Intrinsic::make_vector: {
        llvm::Value *v = llvm::PoisonValue::get(llvm_type_of(t));
        for (size_t i = 0; i < op->args.size(); i++)
            v = builder.CreateInsertElement(v, codegen(op->args[i]), builder.getInt32(i));
        return v;
    }
    case Intrinsic::extract_element: {
        auto lane = as_const_int(op->args[1]);
        internal_assert(lane) << "extract_element of a lane that is not a constant";
        return builder.CreateExtractElement(codegen(op->args[0]), builder.getInt32(*lane));
    }
    case Intrinsic::buffer_get_host:
    case Intrinsic::buffer_get_min:
    case Intrinsic::buffer_get_extent:
    case Intrinsic::buffer_get_stride:
    case Intrinsic::buffer_get_dimensions:
    case Intrinsic::buffer_get_type_code:
    case Intrinsic::buffer_get_type_bits:
        return codegen_buffer_field(op);
    case Intrinsic::likely:
    case Intrinsic::alignment_hint:
        return codegen(op->args[0]);
    case Intrinsic::bitwise_and:
        return builder.CreateAnd(codegen(op->args[0]), codegen(op->args[1]));
    case Intrinsic::bitwise_or:
        return builder.CreateOr(codegen(op->args[0]), codegen(op->args[1]));
    case Intrinsic::bitwise_xor:
        return builder.CreateXor(codegen(op->args[0]), codegen(op->args[1]));
    case Intrinsic::bitwise_not:
        return builder.CreateNot(codegen(op->args[0]));
    case Intrinsic::shift_left:
    case Intrinsic::shift_right: {
        // Shifting by the width or more gives 0 (or the sign, for signed right shifts). The
        // LLVM shift itself never sees such an amount: past the width it is poison, and LLVM
        // may then drop the select around it (`250 >> s` became a divisor known to be
        // nonzero, and a division by the lane that was 0 trapped).
        llvm::Value *a = codegen(op->args[0]), *b = codegen(op->args[1]);
        llvm::Value *too_far = builder.CreateICmpUGE(b, const_int(t, t.bits));
        if (t.is_int() && op->intrinsic == Intrinsic::shift_right) {
            llvm::Value *clamped = builder.CreateSelect(too_far, const_int(t, t.bits - 1), b);
            return builder.CreateAShr(a, clamped);
        }
        llvm::Value *inside = builder.CreateAnd(b, const_int(t, t.bits - 1));
        llvm::Value *shifted = op->intrinsic == Intrinsic::shift_left
                                   ? builder.CreateShl(a, inside)
                                   : builder.CreateLShr(a, inside);
        return builder.CreateSelect(too_far, llvm::Constant::getNullValue(a->getType()), shifted);
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
    default:
        break;
    }

    // Float math: computed in float32 for 16-bit floats.
    std::vector<llvm::Value *> args;
    for (const Expr &a : op->args)
        args.push_back(codegen_widened(a));
    Type ct = t.is_float() && t.bits == 16 ? Float(32, t.lanes) : t;
    llvm::Value *r = nullptr;
    auto unary = [&](llvm::Intrinsic::ID id) { return builder.CreateUnaryIntrinsic(id, args[0]); };
    switch (op->intrinsic) {
    case Intrinsic::sqrt:
        r = unary(llvm::Intrinsic::sqrt);
        break;
    case Intrinsic::rsqrt:
        r = builder.CreateFDiv(llvm::ConstantFP::get(args[0]->getType(), 1.0),
                               unary(llvm::Intrinsic::sqrt));
        break;
    case Intrinsic::floor:
        r = unary(llvm::Intrinsic::floor);
        break;
    case Intrinsic::ceil:
        r = unary(llvm::Intrinsic::ceil);
        break;
    case Intrinsic::round:
        r = unary(llvm::Intrinsic::roundeven);
        break;
    case Intrinsic::trunc:
        r = unary(llvm::Intrinsic::trunc);
        break;
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
            for (llvm::Value *a : args)
                lane.push_back(builder.CreateExtractElement(a, uint64_t(i)));
            r = builder.CreateInsertElement(r, emit_math_call(op->intrinsic, ct.element_of(), lane),
                                            uint64_t(i));
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

llvm::Value *CodeGen_LLVM::codegen_let_value(const std::string &name, const Expr &value) {
    std::optional<StrictFloats> strict;
    if (value.type().is_float() && strict_float_lets.count(name)) strict.emplace(builder);
    return codegen(value);
}

void CodeGen_LLVM::visit(const Let *op) {
    llvm::Value *v = codegen_let_value(op->name, op->value);
    ScopedBinding<llvm::Value *> bind(symbols, op->name, v);
    ScopedBinding<Expr> let_value(let_values, op->name, op->value);
    ScopedBinding<int> depth(definition_depth, op->name, depth_of(op->value));
    value = codegen(op->body);
}

} // namespace backends
} // namespace aicf
