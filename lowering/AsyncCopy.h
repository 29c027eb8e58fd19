#ifndef AICF_LOWERING_ASYNC_COPY_H
#define AICF_LOWERING_ASYNC_COPY_H

// Asynchronous copies from device memory to shared memory (cp.async, sm_80 and later) as
// kernel IR writes them: gpu_cp_async, gpu_cp_async_commit and gpu_cp_async_wait statements
// (dsl/ir/IR.h). A thread's copies complete in the groups it commits, in order; it may read a
// copy's destination once a wait covers its group, and other threads once a barrier follows
// that wait. The simulator reports a read or write of a destination still pending.

#include "dsl/ir/IR.h"

#include <string>

namespace aicf {
namespace lowering {

// Evaluate(gpu_cp_async(...)): `lanes` elements of `element` (4, 8 or 16 bytes in all) from
// src[src_index] to dst[dst_index], the first `valid` of them copied and the rest zeroed.
ir::Stmt gpu_cp_async(ir::Type element, int lanes, const std::string &dst,
                      const ir::Expr &dst_index, const std::string &src, const ir::Expr &src_index,
                      const ir::Expr &valid);
ir::Stmt gpu_cp_async_commit();
ir::Stmt gpu_cp_async_wait(int pending_groups);

// The parts of a gpu_cp_async call.
struct AsyncCopyCall {
    ir::Type type; // element x lanes
    std::string dst, src;
    ir::Expr dst_index, src_index, valid;
    int bytes() const { return type.bytes() * type.lanes; }
};
AsyncCopyCall async_copy_parts(const ir::Call *op);

// The n of a gpu_cp_async_wait call.
int async_wait_groups(const ir::Call *op);

} // namespace lowering
} // namespace aicf

#endif
