#include "lowering/AsyncCopy.h"

#include "dsl/base/Error.h"
#include "dsl/ir/IROperator.h"

namespace aicf {
namespace lowering {

using namespace ir;

Stmt gpu_cp_async(Type element, int lanes, const std::string &dst, const Expr &dst_index,
                  const std::string &src, const Expr &src_index, const Expr &valid) {
    const int bytes = element.bytes() * lanes;
    internal_assert(element.is_scalar() && (bytes == 4 || bytes == 8 || bytes == 16))
        << "cp.async of " << lanes << " x " << to_string(element) << ": 4, 8 or 16 bytes only";
    internal_assert(dst_index.type() == Int(32) && src_index.type() == Int(32) &&
                    valid.type() == Int(32))
        << "cp.async indices must be int32";
    return Evaluate::make(
        Call::make(element.with_lanes(lanes), Intrinsic::gpu_cp_async,
                   {StringImm::make(dst), dst_index, StringImm::make(src), src_index, valid},
                   Call::Intrinsic));
}

Stmt gpu_cp_async_commit() {
    return Evaluate::make(Call::make(Int(32), Intrinsic::gpu_cp_async_commit, {}, Call::Intrinsic));
}

Stmt gpu_cp_async_wait(int pending_groups) {
    internal_assert(pending_groups >= 0) << "cp.async.wait_group " << pending_groups;
    return Evaluate::make(
        Call::make(Int(32), Intrinsic::gpu_cp_async_wait, {Expr(pending_groups)}, Call::Intrinsic));
}

AsyncCopyCall async_copy_parts(const Call *op) {
    internal_assert(op->is_intrinsic(Intrinsic::gpu_cp_async) && op->args.size() == 5)
        << "malformed cp.async";
    const StringImm *dst = op->args[0].as<StringImm>();
    const StringImm *src = op->args[2].as<StringImm>();
    internal_assert(dst && src) << "malformed cp.async";
    return {op->type, dst->value, src->value, op->args[1], op->args[3], op->args[4]};
}

int async_wait_groups(const Call *op) {
    internal_assert(op->is_intrinsic(Intrinsic::gpu_cp_async_wait) && op->args.size() == 1)
        << "malformed cp.async.wait_group";
    auto n = as_const_int(op->args[0]);
    internal_assert(n && *n >= 0) << "cp.async.wait_group without a constant count";
    return int(*n);
}

} // namespace lowering
} // namespace aicf
