#ifndef AICF_BACKENDS_LLVM_INLINEMATH_H
#define AICF_BACKENDS_LLVM_INLINEMATH_H

// float32 exp, log, tanh and erf as inline code (range reduction and polynomials) for scalars and
// vectors of any width. The host code generator uses them instead of calls into the C
// library's vector math unless the target asks for the library (-libm): a call costs a
// spill of every live vector register around it, and cannot be scheduled with its loop.
// Every width gets the same operations, so vectorizing a loop changes no result bit.
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

// Each takes and returns a float or a vector of floats.
llvm::Value *inline_exp_f32(llvm::IRBuilder<> &b, llvm::Value *x);
llvm::Value *inline_log_f32(llvm::IRBuilder<> &b, llvm::Value *x);
llvm::Value *inline_tanh_f32(llvm::IRBuilder<> &b, llvm::Value *x);
llvm::Value *inline_erf_f32(llvm::IRBuilder<> &b, llvm::Value *x);

} // namespace backends
} // namespace aicf

#endif
