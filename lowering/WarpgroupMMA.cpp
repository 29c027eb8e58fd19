#include "lowering/WarpgroupMMA.h"

#include "dsl/base/Error.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"

namespace aicf {
namespace lowering {

using namespace ir;

bool wgmma_shape_exists(int n, Type element) {
    return n >= 8 && n <= 256 && n % 8 == 0 && element.is_scalar() && element.bits == 16 &&
           (element.is_bfloat() || element.is_float());
}

int64_t wgmma_operand_byte(int row, int k, int element_bytes, int64_t lbo, int64_t sbo,
                           bool mn_major) {
    if (mn_major) {
        const int64_t byte_in_mn = int64_t(row) * element_bytes;
        return (byte_in_mn / 16) * sbo + (k / 8) * lbo + (k % 8) * 16 + byte_in_mn % 16;
    }
    const int64_t byte_in_row = int64_t(k) * element_bytes;
    return (row / 8) * sbo + (byte_in_row / 16) * lbo + (row % 8) * 16 + byte_in_row % 16;
}

std::pair<int, int> wgmma_d_element(int thread, int i) {
    const int warp = thread / 32, lane = thread % 32;
    const int g = lane / 4, q = lane % 4;
    const int j = i / 4, h = (i / 2) % 2, c = i % 2;
    return {16 * warp + g + 8 * h, 8 * j + 2 * q + c};
}

namespace {

void check_operand(const WgmmaOperand &o) {
    internal_assert(o.byte.defined() && o.byte.type() == Int(32))
        << "wgmma operand offset of type " << (o.byte.defined() ? to_string(o.byte.type()) : "?");
    for (int64_t v : {o.lbo, o.sbo}) {
        internal_assert(v >= 0 && v % 16 == 0 && v < (int64_t(1) << 18))
            << "wgmma byte offset " << v << ": descriptors hold multiples of 16 below 2^18";
    }
}

Type accumulator_type(int n) {
    return Float(32, n / 2);
}

} // namespace

Expr gpu_wgmma(Type element, int n, const WgmmaOperand &a, const WgmmaOperand &b, const Expr &d) {
    internal_assert(wgmma_shape_exists(n, element))
        << "wgmma m64n" << n << "k16 of " << to_string(element) << ": no such instruction";
    check_operand(a);
    check_operand(b);
    internal_assert(d.defined() && d.type() == accumulator_type(n))
        << "wgmma m64n" << n << "k16 accumulates in float32 x " << n / 2;
    return Call::make(accumulator_type(n), Intrinsic::gpu_wgmma,
                      {make_zero(element), a.byte, Expr(int32_t(a.lbo)), Expr(int32_t(a.sbo)),
                       b.byte, Expr(int32_t(b.lbo)), Expr(int32_t(b.sbo)), d,
                       Expr(int32_t(a.mn_major)), Expr(int32_t(b.mn_major))},
                      Call::Intrinsic);
}

Expr gpu_wgmma_fence(const Expr &d) {
    return Call::make(d.type(), Intrinsic::gpu_wgmma_fence, {d}, Call::Intrinsic);
}

Stmt gpu_wgmma_commit() {
    return Evaluate::make(Call::make(Int(32), Intrinsic::gpu_wgmma_commit, {}, Call::Intrinsic));
}

Expr gpu_wgmma_wait(int pending, const Expr &d) {
    internal_assert(pending >= 0 && pending <= 7) << "wgmma.wait_group " << pending;
    return Call::make(d.type(), Intrinsic::gpu_wgmma_wait, {Expr(pending), d}, Call::Intrinsic);
}

Stmt gpu_async_proxy_fence() {
    return Evaluate::make(
        Call::make(Int(32), Intrinsic::gpu_async_proxy_fence, {}, Call::Intrinsic));
}

WgmmaCall wgmma_parts(const Call *op) {
    internal_assert(op->is_intrinsic(Intrinsic::gpu_wgmma) && op->args.size() == 10)
        << "malformed wgmma";
    auto constant = [&](int i) {
        auto v = as_const_int(op->args[size_t(i)]);
        internal_assert(v) << "wgmma with a byte offset that is not a constant";
        return *v;
    };
    WgmmaCall c;
    c.element = op->args[0].type();
    c.n = op->type.lanes * 2;
    c.a = {op->args[1], constant(2), constant(3), constant(8) != 0};
    c.b = {op->args[4], constant(5), constant(6), constant(9) != 0};
    c.d = op->args[7];
    return c;
}

int wgmma_wait_pending(const Call *op) {
    internal_assert(op->is_intrinsic(Intrinsic::gpu_wgmma_wait) && op->args.size() == 2)
        << "malformed wgmma.wait_group";
    auto n = as_const_int(op->args[0]);
    internal_assert(n && *n >= 0) << "wgmma.wait_group without a constant count";
    return int(*n);
}

} // namespace lowering
} // namespace aicf
