#include "backends/llvm/InlineMath.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/Module.h>

#include <cmath>
#include <initializer_list>
#include <vector>

namespace aicf {
namespace backends {

namespace {

// c[0] + x * (c[1] + x * (c[2] + ...)), by Horner's rule, in x's type (a float, a double or
// a vector of either).
llvm::Value *horner(llvm::IRBuilder<> &b, llvm::Value *x, std::initializer_list<double> c) {
    const double *first = c.begin(), *last = c.end() - 1;
    llvm::Value *acc = llvm::ConstantFP::get(x->getType(), *last);
    for (const double *p = last; p != first;) {
        --p;
        acc = b.CreateFAdd(b.CreateFMul(acc, x), llvm::ConstantFP::get(x->getType(), *p));
    }
    return acc;
}

// Constants of x's type: a float or a splat of one.
struct Consts {
    llvm::IRBuilder<> &b;
    llvm::Type *ft, *it;
    Consts(llvm::IRBuilder<> &b, llvm::Value *x) : b(b), ft(x->getType()) {
        it = b.getInt32Ty();
        if (auto *v = llvm::dyn_cast<llvm::VectorType>(ft))
            it = llvm::VectorType::get(it, v->getElementCount());
    }
    llvm::Value *f(double v) const { return llvm::ConstantFP::get(ft, v); }
    llvm::Value *i(int32_t v) const { return llvm::ConstantInt::get(it, uint64_t(uint32_t(v))); }
    llvm::Value *bits(llvm::Value *x) const { return b.CreateBitCast(x, it); }
    llvm::Value *from_bits(llvm::Value *x) const { return b.CreateBitCast(x, ft); }
    llvm::Value *poly(llvm::Value *x, std::initializer_list<double> c) const {
        return horner(b, x, c);
    }
};

// ln 2 split in two: the high part has few enough bits that n * ln2_hi is exact for every
// exponent n a float32 needs.
constexpr double ln2_hi = 0.693359375;
constexpr double ln2_lo = -2.12194440054690583e-4;

// er * 2^n, n integral in [-151, 128], er in [0.7, 1.5]: as two factors 2^(n/2) and
// 2^(n - n/2), each a normal float, so that the first product is exact and the second rounds
// once (into the subnormals, or to infinity).
llvm::Value *times_two_to(const Consts &c, llvm::Value *er, llvm::Value *n) {
    llvm::IRBuilder<> &b = c.b;
    llvm::Value *ni = b.CreateFPToSI(n, c.it);
    llvm::Value *n1 = b.CreateAShr(ni, c.i(1));
    llvm::Value *n2 = b.CreateSub(ni, n1);
    auto two_to = [&](llvm::Value *k) {
        return c.from_bits(b.CreateShl(b.CreateAdd(k, c.i(127)), c.i(23)));
    };
    return b.CreateFMul(b.CreateFMul(er, two_to(n1)), two_to(n2));
}

// The same product by AVX-512's vscalefps (x * 2^floor(y), rounded once), for vectors of 16
// lanes times a power of two; nullptr for other types.
llvm::Value *times_two_to_avx512(llvm::IRBuilder<> &b, llvm::Value *er, llvm::Value *n) {
    auto *vt = llvm::dyn_cast<llvm::FixedVectorType>(er->getType());
    if (!vt) return nullptr;
    const unsigned lanes = vt->getNumElements();
    if (lanes % 16 != 0 || ((lanes / 16) & (lanes / 16 - 1)) != 0) return nullptr;
    llvm::Type *v16 = llvm::FixedVectorType::get(b.getFloatTy(), 16);
    llvm::Function *scalef = llvm::Intrinsic::getDeclaration(
        b.GetInsertBlock()->getModule(), llvm::Intrinsic::x86_avx512_mask_scalef_ps_512);
    std::vector<llvm::Value *> parts;
    for (unsigned start = 0; start < lanes; start += 16) {
        llvm::SmallVector<int, 16> pick;
        for (unsigned i = 0; i < 16; i++)
            pick.push_back(int(start + i));
        llvm::Value *e16 = lanes == 16 ? er : b.CreateShuffleVector(er, pick);
        llvm::Value *n16 = lanes == 16 ? n : b.CreateShuffleVector(n, pick);
        // Every lane (no mask), in the current rounding mode (4).
        parts.push_back(b.CreateCall(
            scalef, {e16, n16, llvm::UndefValue::get(v16), b.getInt16(0xffff), b.getInt32(4)}));
    }
    // Joined back pairwise: 16-lane parts into 32, those into 64, ...
    while (parts.size() > 1) {
        std::vector<llvm::Value *> joined;
        for (size_t i = 0; i < parts.size(); i += 2) {
            unsigned width =
                llvm::cast<llvm::FixedVectorType>(parts[i]->getType())->getNumElements();
            llvm::SmallVector<int, 64> all;
            for (unsigned k = 0; k < 2 * width; k++)
                all.push_back(int(k));
            joined.push_back(b.CreateShuffleVector(parts[i], parts[i + 1], all));
        }
        parts = joined;
    }
    return parts[0];
}

} // namespace

llvm::Value *inline_exp_f32(llvm::IRBuilder<> &b, llvm::Value *x, bool avx512) {
    Consts c(b, x);
    // exp(x) = 2^n * exp(r), n = round(x / ln 2), |r| <= ln 2 / 2. Past [-104, 89] the
    // result is 0 or infinity whatever x is, so x is clamped there first (infinities too).
    llvm::Value *clamped = b.CreateSelect(b.CreateFCmpOLT(x, c.f(-104.0)), c.f(-104.0), x);
    clamped = b.CreateSelect(b.CreateFCmpOGT(clamped, c.f(89.0)), c.f(89.0), clamped);
    llvm::Value *n = b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven,
                                            b.CreateFMul(clamped, c.f(1.44269504088896341)));
    llvm::Value *r = b.CreateFSub(clamped, b.CreateFMul(n, c.f(ln2_hi)));
    r = b.CreateFSub(r, b.CreateFMul(n, c.f(ln2_lo)));
    // exp(r) = 1 + r + r^2 P(r), P fitted on [-0.35, 0.35] (relative error 2.4e-10).
    llvm::Value *p =
        c.poly(r, {0.500000001427659, 0.16666666682523656, 0.04166645690406264,
                   0.008333310034706868, 0.001393453165508802, 0.00019891969905683137});
    llvm::Value *er = b.CreateFAdd(b.CreateFAdd(b.CreateFMul(b.CreateFMul(r, r), p), r), c.f(1.0));
    llvm::Value *result = avx512 ? times_two_to_avx512(b, er, n) : nullptr;
    if (!result) result = times_two_to(c, er, n);
    return b.CreateSelect(b.CreateFCmpUNO(x, x), x, result);
}

llvm::Value *inline_log_f32(llvm::IRBuilder<> &b, llvm::Value *x) {
    Consts c(b, x);
    // Subnormal inputs are scaled by 2^23 into the normal range first.
    llvm::Value *subnormal = b.CreateFCmpOLT(x, c.f(0x1p-126));
    llvm::Value *scaled = b.CreateSelect(subnormal, b.CreateFMul(x, c.f(0x1p23)), x);
    llvm::Value *bits = c.bits(scaled);
    // x = m * 2^e with m in [sqrt(1/2), sqrt(2)).
    llvm::Value *e = b.CreateSub(b.CreateAnd(b.CreateLShr(bits, c.i(23)), c.i(0xff)),
                                 b.CreateSelect(subnormal, c.i(127 + 23), c.i(127)));
    llvm::Value *m = c.from_bits(b.CreateOr(b.CreateAnd(bits, c.i(0x7fffff)), c.i(0x3f800000)));
    llvm::Value *above = b.CreateFCmpOGT(m, c.f(1.41421356237309505));
    m = b.CreateSelect(above, b.CreateFMul(m, c.f(0.5)), m);
    e = b.CreateAdd(e, b.CreateZExt(above, c.it));
    // log(1 + f) = f - f^2 / 2 + f^3 Q(f), Q fitted on [sqrt(1/2) - 1, sqrt(2) - 1].
    llvm::Value *f = b.CreateFSub(m, c.f(1.0)); // exact
    llvm::Value *f2 = b.CreateFMul(f, f);
    llvm::Value *q = c.poly(f, {0.33333331180030046, -0.24999996957950882, 0.200007157488921,
                                -0.16667802319501254, 0.1424905764569748, -0.12425687331451106,
                                0.1168541992348674, -0.11479733846637635, 0.06971611471451178});
    llvm::Value *ef = b.CreateSIToFP(e, c.ft);
    llvm::Value *low =
        b.CreateFAdd(b.CreateFMul(b.CreateFMul(f2, f), q), b.CreateFMul(ef, c.f(ln2_lo)));
    low = b.CreateFSub(low, b.CreateFMul(f2, c.f(0.5)));
    llvm::Value *result = b.CreateFAdd(b.CreateFAdd(low, f), b.CreateFMul(ef, c.f(ln2_hi)));
    // log(+-0) = -inf, log(inf) = inf, log of a negative number is NaN, and of NaN NaN.
    result = b.CreateSelect(b.CreateFCmpOEQ(x, c.f(0.0)), c.f(-INFINITY), result);
    result = b.CreateSelect(b.CreateFCmpOEQ(x, c.f(INFINITY)), x, result);
    result = b.CreateSelect(b.CreateFCmpOLT(x, c.f(0.0)), c.f(NAN), result);
    return b.CreateSelect(b.CreateFCmpUNO(x, x), x, result);
}

llvm::Value *inline_tanh_f32(llvm::IRBuilder<> &b, llvm::Value *x, bool avx512) {
    Consts c(b, x);
    llvm::Value *a = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    // Near 0: tanh(x) = x + x^3 T(x^2), T fitted on [0, 0.625^2].
    llvm::Value *y = b.CreateFMul(x, x);
    llvm::Value *t = c.poly(y, {-0.3333333317214036, 0.1333330355691574, -0.053959259577204544,
                                0.02176891865102821, -0.008343945515839153, 0.002292744816178142});
    // With the sign of x: at x = -0 the sum is +0 (-0 + +0).
    llvm::Value *small = b.CreateBinaryIntrinsic(
        llvm::Intrinsic::copysign, b.CreateFAdd(x, b.CreateFMul(b.CreateFMul(x, y), t)), x);
    // Elsewhere: 1 - 2 / (exp(2|x|) + 1), which is 1 once exp overflows; the sign of x.
    llvm::Value *e = inline_exp_f32(b, b.CreateFMul(a, c.f(2.0)), avx512);
    llvm::Value *large = b.CreateFSub(c.f(1.0), b.CreateFDiv(c.f(2.0), b.CreateFAdd(e, c.f(1.0))));
    large = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, large, x);
    return b.CreateSelect(b.CreateFCmpOLT(a, c.f(0.625)), small, large);
}

llvm::Value *inline_erf_f32(llvm::IRBuilder<> &b, llvm::Value *x, bool avx512) {
    Consts c(b, x);
    llvm::Value *a = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    // |x| < 1: erf(x) = x P(x^2), P fitted on [0, 1] (relative error 1.3e-9), computed as
    // x + x (P - 1) so that the last rounding is of the result, not of P near 1.
    llvm::Value *p1 =
        c.poly(b.CreateFMul(x, x), {0.1283791658483509, -0.37612626666720334, 0.11283594715160218,
                                    -0.026854212010626412, 0.005189087423433974,
                                    -0.000801686428716587, 7.875875062685488e-05});
    llvm::Value *small = b.CreateFAdd(x, b.CreateFMul(x, p1));
    // 1 <= |x| < 4: erf(x) = 1 - exp(-x^2) R(|x|) with R(a) = erfc(a) exp(a^2), fitted on
    // [1, 2] and [2, 4] in z = (a - middle) / half-width (relative errors 2e-9 and 3.2e-8).
    llvm::Value *low_half = b.CreateFCmpOLT(a, c.f(2.0));
    const double r12[] = {0.3215854164543175,    -0.0818114535989387,    0.019037759137726196,
                          -0.004116433268003488, 0.0008360948062360633,  -0.00016056001378013873,
                          2.943144984303648e-05, -5.502442403275622e-06, 9.242911338435261e-07};
    const double r24[] = {0.17900115118138996,   -0.05437221097160281,   0.015884359715075888,
                          -0.004480082207895328, 0.0012231910620997975,  -0.00032180661537294255,
                          8.301259540876768e-05, -2.400379347830881e-05, 5.8510736220249926e-06};
    llvm::Value *z = b.CreateSelect(low_half, b.CreateFMul(b.CreateFSub(a, c.f(1.5)), c.f(2.0)),
                                    b.CreateFSub(a, c.f(3.0)));
    llvm::Value *r = nullptr;
    for (int i = 8; i >= 0; i--) {
        llvm::Value *coefficient = b.CreateSelect(low_half, c.f(r12[i]), c.f(r24[i]));
        r = r ? b.CreateFAdd(b.CreateFMul(r, z), coefficient) : coefficient;
    }
    // exp(-a^2) without the rounding of a^2 (which would cost up to 16 ulp of it): a = hi + lo
    // with hi of 12 significant bits, so a^2 = hi^2 (exact) + t, t = lo (2 hi + lo) small:
    // exp(-a^2) = exp(-hi^2) (1 - t + t^2 / 2 - t^3 / 6).
    llvm::Value *hi = c.from_bits(b.CreateAnd(c.bits(a), c.i(int32_t(0xfffff000u))));
    llvm::Value *lo = b.CreateFSub(a, hi);
    llvm::Value *t = b.CreateFMul(lo, b.CreateFAdd(b.CreateFMul(hi, c.f(2.0)), lo));
    llvm::Value *e = inline_exp_f32(b, b.CreateFNeg(b.CreateFMul(hi, hi)), avx512);
    e = b.CreateFMul(e, c.poly(t, {1.0, -1.0, 0.5, -1.0 / 6}));
    llvm::Value *large = b.CreateFSub(c.f(1.0), b.CreateFMul(e, r));
    large = b.CreateSelect(b.CreateFCmpOGE(a, c.f(4.0)), c.f(1.0), large);
    large = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, large, x);
    // NaN takes the small branch, whose NaNs all carry x's bits: the large branch's come from
    // operations whose operand order the code generator may swap (masked and negated ones).
    return b.CreateSelect(b.CreateFCmpOGE(a, c.f(1.0)), large, small);
}

llvm::Value *inline_pow_f32(llvm::IRBuilder<> &b, llvm::Value *x, llvm::Value *y) {
    Consts c(b, x);
    // In float64, whose 52 bits leave 28 for the error of y log2|x| and of 2^t: the float32
    // result is then rounded once from a value within 1e-14 of the exact one.
    llvm::Type *dt = b.getDoubleTy(), *lt = b.getInt64Ty();
    if (auto *v = llvm::dyn_cast<llvm::VectorType>(c.ft)) {
        dt = llvm::VectorType::get(dt, v->getElementCount());
        lt = llvm::VectorType::get(lt, v->getElementCount());
    }
    auto d = [&](double v) { return llvm::ConstantFP::get(dt, v); };
    auto l = [&](int64_t v) { return llvm::ConstantInt::get(lt, uint64_t(v)); };
    llvm::Value *ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, b.CreateFPExt(x, dt));
    llvm::Value *yd = b.CreateFPExt(y, dt);
    // |x| = m 2^e, m in [sqrt(1/2), sqrt(2)) (float32 subnormals are normal float64s).
    llvm::Value *bits = b.CreateBitCast(ax, lt);
    llvm::Value *e = b.CreateSub(b.CreateLShr(bits, l(52)), l(1023));
    llvm::Value *m = b.CreateBitCast(
        b.CreateOr(b.CreateAnd(bits, l((int64_t(1) << 52) - 1)), l(int64_t(1023) << 52)), dt);
    llvm::Value *above = b.CreateFCmpOGT(m, d(1.41421356237309505));
    m = b.CreateSelect(above, b.CreateFMul(m, d(0.5)), m);
    e = b.CreateAdd(e, b.CreateZExt(above, lt));
    // log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716: 2 s (1 + s^2 / 3 + ... +
    // s^16 / 17), truncated 1e-15 below it.
    llvm::Value *s = b.CreateFDiv(b.CreateFSub(m, d(1.0)), b.CreateFAdd(m, d(1.0)));
    llvm::Value *s2 = b.CreateFMul(s, s);
    llvm::Value *series = horner(
        b, s2, {1.0, 1.0 / 3, 1.0 / 5, 1.0 / 7, 1.0 / 9, 1.0 / 11, 1.0 / 13, 1.0 / 15, 1.0 / 17});
    llvm::Value *log2m = b.CreateFMul(b.CreateFMul(s, series), d(2.0 * 1.44269504088896340736));
    llvm::Value *log2x = b.CreateFAdd(b.CreateSIToFP(e, dt), log2m);
    // log2 0 = -inf and log2 inf = inf, so that t is an infinity of the right sign.
    log2x = b.CreateSelect(b.CreateFCmpOEQ(ax, d(0.0)), d(-INFINITY), log2x);
    log2x = b.CreateSelect(b.CreateFCmpOEQ(ax, d(INFINITY)), d(INFINITY), log2x);
    llvm::Value *t = b.CreateFMul(yd, log2x);
    // 2^t = 2^n 2^f, n = round(t), |f| <= 1/2. Past [-200, 200] a float32 result is 0 or
    // infinity whatever t is.
    t = b.CreateSelect(b.CreateFCmpOLT(t, d(-200.0)), d(-200.0), t);
    t = b.CreateSelect(b.CreateFCmpOGT(t, d(200.0)), d(200.0), t);
    llvm::Value *n = b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, t);
    llvm::Value *g = b.CreateFMul(b.CreateFSub(t, n), d(0.69314718055994530942));
    // e^g by its Taylor series to g^11 / 11!, 7e-15 below it for |g| <= ln 2 / 2.
    llvm::Value *eg =
        horner(b, g,
               {1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320,
                1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800});
    llvm::Value *two_n =
        b.CreateBitCast(b.CreateShl(b.CreateAdd(b.CreateFPToSI(n, lt), l(1023)), l(52)), dt);
    llvm::Value *result = b.CreateFPTrunc(b.CreateFMul(eg, two_n), c.ft);
    // The sign and the special cases, as C's powf: a negative x (or -0) to an odd integer
    // power is negative; a finite negative x to a finite non-integer power is NaN; x^0 = 1 and 1^y
    // = 1 even for NaN; (-1)^(+-inf) = 1; otherwise NaN gives NaN. Every float at or above 2^24 is
    // an even integer, and so, here, are the infinities.
    llvm::Value *ay = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, y);
    llvm::Value *integer = b.CreateFCmpOEQ(b.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, y), y);
    llvm::Value *small = b.CreateFCmpOLT(ay, c.f(0x1p24));
    llvm::Value *as_int = b.CreateFPToSI(b.CreateSelect(small, y, c.f(0.0)), c.it);
    llvm::Value *odd = b.CreateAnd(b.CreateICmpNE(b.CreateAnd(as_int, c.i(1)), c.i(0)),
                                   b.CreateAnd(small, integer));
    llvm::Value *negative = b.CreateICmpSLT(c.bits(x), c.i(0));
    result = b.CreateSelect(b.CreateAnd(odd, negative), b.CreateFNeg(result), result);
    llvm::Value *finite_y = b.CreateFCmpOLT(ay, c.f(INFINITY));
    llvm::Value *finite_negative =
        b.CreateAnd(b.CreateFCmpOLT(x, c.f(0.0)), b.CreateFCmpOGT(x, c.f(-INFINITY)));
    llvm::Value *bad = b.CreateAnd(finite_negative, b.CreateAnd(finite_y, b.CreateNot(integer)));
    result = b.CreateSelect(bad, c.f(NAN), result);
    result = b.CreateSelect(b.CreateFCmpUNO(x, y), b.CreateFAdd(x, y), result);
    llvm::Value *one = b.CreateOr(b.CreateFCmpOEQ(y, c.f(0.0)), b.CreateFCmpOEQ(x, c.f(1.0)));
    one = b.CreateOr(
        one, b.CreateAnd(b.CreateFCmpOEQ(x, c.f(-1.0)), b.CreateFCmpOEQ(ay, c.f(INFINITY))));
    return b.CreateSelect(one, c.f(1.0), result);
}

} // namespace backends
} // namespace aicf
