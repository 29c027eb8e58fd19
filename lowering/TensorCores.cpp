#include "lowering/TensorCores.h"

#include "dsl/base/Error.h"
#include "dsl/ir/IROperator.h"

namespace aicf {
namespace lowering {

using namespace ir;

std::string MMAShape::ptx_name() const {
    const std::string in = tf32 ? "tf32" : a.is_bfloat() ? "bf16" : "f16";
    return "mma.sync.aligned.m" + std::to_string(m) + "n" + std::to_string(n) + "k" +
           std::to_string(k) + ".row.col.f32." + in + "." + in + ".f32";
}

std::optional<MMAShape> mma_shape(Type a, Type b, Type c) {
    if (c != Float(32, 4)) return std::nullopt;
    MMAShape s;
    s.m = 16;
    s.n = 8;
    s.a = a;
    s.b = b;
    s.c = c;
    const bool half = (a.is_bfloat() || a.is_float()) && a.bits == 16;
    if (half && a.lanes == 8 && b == a.with_lanes(4)) {
        s.k = 16;
        return s;
    }
    if (a == Float(32, 4) && b == Float(32, 2)) {
        s.k = 8;
        s.tf32 = true;
        return s;
    }
    return std::nullopt;
}

std::pair<int, int> mma_a_element(const MMAShape &s, int lane, int i) {
    const int g = lane >> 2, t = lane & 3;
    if (s.tf32) return {g + 8 * (i & 1), t + 4 * (i >> 1)};
    // Pairs consecutive in K: i = 0,1 row g; 2,3 row g+8; 4..7 the same at columns + 8.
    return {g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)};
}

std::pair<int, int> mma_b_element(const MMAShape &s, int lane, int i) {
    const int g = lane >> 2, t = lane & 3;
    if (s.tf32) return {t + 4 * i, g};
    return {2 * t + (i & 1) + 8 * (i >> 1), g};
}

std::pair<int, int> mma_c_element(const MMAShape &, int lane, int i) {
    const int g = lane >> 2, t = lane & 3;
    return {g + 8 * (i >> 1), 2 * t + (i & 1)};
}

std::pair<int, int> ldmatrix_element(int lane, int e, bool transpose) {
    if (transpose) return {2 * (lane & 3) + e, lane >> 2};
    return {lane >> 2, 2 * (lane & 3) + e};
}

Expr gpu_mma(const Expr &a, const Expr &b, const Expr &c) {
    internal_assert(mma_shape(a.type(), b.type(), c.type()))
        << "gpu_mma of " << to_string(a.type()) << ", " << to_string(b.type()) << " and "
        << to_string(c.type()) << ": no tensor-core instruction takes these";
    return Call::make(Float(32, 4), Intrinsic::gpu_mma, {a, b, c}, Call::Intrinsic);
}

Expr gpu_ldmatrix(Type element, const std::string &buffer, const Expr &index, int matrices,
                  bool transpose) {
    internal_assert(element.bits == 16 && element.is_scalar())
        << "ldmatrix of " << to_string(element) << " elements";
    internal_assert(matrices == 1 || matrices == 2 || matrices == 4)
        << "ldmatrix of " << matrices << " matrices";
    internal_assert(index.type() == Int(32))
        << "ldmatrix index of type " << to_string(index.type());
    return Call::make(
        element.with_lanes(2 * matrices), Intrinsic::gpu_ldmatrix,
        {StringImm::make(buffer), index, Expr(matrices), transpose ? const_true() : const_false()},
        Call::Intrinsic);
}

LdmatrixCall ldmatrix_parts(const Call *op) {
    internal_assert(op->is_intrinsic(Intrinsic::gpu_ldmatrix) && op->args.size() == 4)
        << "malformed ldmatrix";
    const StringImm *buffer = op->args[0].as<StringImm>();
    auto matrices = as_const_int(op->args[2]);
    auto transpose = as_const_int(op->args[3]);
    internal_assert(buffer && matrices && transpose) << "malformed ldmatrix";
    return {buffer->value, op->args[1], int(*matrices), *transpose != 0};
}

} // namespace lowering
} // namespace aicf
