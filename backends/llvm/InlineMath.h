#ifndef AICF_BACKENDS_LLVM_INLINEMATH_H
#define AICF_BACKENDS_LLVM_INLINEMATH_H

// float32 exp, log, tanh, erf and pow as inline code (range reduction and polynomials) for scalars
// and vectors of any width. The host code generator uses them instead of calls into the C library's
// vector math unless the target asks for the library (-libm): a call costs a spill of every live
// vector register around it, and cannot be scheduled with its loop. Every width gets the same
// result bits (the same operations, but for one exactly rounded product that AVX-512 does in one
// instruction), so vectorizing a loop changes no bit.
//
// Errors against the correctly rounded result, as tests/correctness/test_inline_math.cpp
// measures them (every 4099th float32 bit pattern and the special values in CI; every 7th,
// 613 million inputs, by hand: exp 0.95 ulp, log 0.80, tanh 1.32, erf 1.32): the test holds
// them to exp 1 ulp, log 1 ulp, tanh 2 ulp and erf 2 ulp, with subnormal inputs and results,
// infinities and NaN handled as the C library handles them. With fused multiply-adds (-fma)
// the polynomials fuse too; the bounds hold either way.

#include <llvm/IR/IRBuilder.h>

namespace aicf {
namespace backends {

// Each takes and returns a float or a vector of floats. With `avx512`, for a CPU that has
// AVX-512, exp's (and so tanh's and erf's) scaling by 2^n of vectors of 16 lanes or a multiple
// is AVX-512's one instruction for it (vscalefps) instead of nine integer and float
// operations; both round the product once, so the result bits are the same.
llvm::Value *inline_exp_f32(llvm::IRBuilder<> &b, llvm::Value *x, bool avx512 = false);
llvm::Value *inline_log_f32(llvm::IRBuilder<> &b, llvm::Value *x);
llvm::Value *inline_tanh_f32(llvm::IRBuilder<> &b, llvm::Value *x, bool avx512 = false);
llvm::Value *inline_erf_f32(llvm::IRBuilder<> &b, llvm::Value *x, bool avx512 = false);
// x^y, computed in float64 (log2 |x| by atanh's series, 2^t by exp's) and rounded once to
// float32; the special cases as C's powf.
llvm::Value *inline_pow_f32(llvm::IRBuilder<> &b, llvm::Value *x, llvm::Value *y);

} // namespace backends
} // namespace aicf

#endif
