#ifndef AICF_BACKENDS_SIM_SIMSTMTCODE_H
#define AICF_BACKENDS_SIM_SIMSTMTCODE_H

// The simulator's statement nodes: control flow under the active mask (branches, loops with
// per-thread bounds), stores, private allocations, assertions and barriers. The nodes live
// in SimStmtCode.cpp, made by the factories below.

#include "backends/sim/SimExprCode.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace aicf {
namespace backends {
namespace sim {

class StmtCode {
public:
    virtual ~StmtCode() = default;
    virtual void exec(Machine &m) = 0;
};

using StmtPtr = std::unique_ptr<StmtCode>;

// cp.async (lowering/AsyncCopy.h): `src` and `dst` shape the source buffer's and shared
// memory's accesses (the copy's type and lanes); the commit and the wait.
StmtPtr make_async_copy_code(int threads, AccessShape src, AccessShape dst, ExprPtr dst_index,
                             ExprPtr src_index, ExprPtr valid);
StmtPtr make_async_commit_code();
StmtPtr make_async_wait_code(int groups, const Site *site);
// wgmma.commit_group (Machine::wgmma_commit).
StmtPtr make_wgmma_commit_code();

// The statements of `stmts` in order.
StmtPtr make_block_code(std::vector<StmtPtr> stmts);

// `body` with `value` bound to `slot`.
StmtPtr make_let_stmt_code(int slot, ExprPtr value, StmtPtr body);

// An if with an optional else (null when there is none).
StmtPtr make_if_code(int threads, ExprPtr cond, StmtPtr then_case, StmtPtr else_case);

// A serial loop whose variable, of type t, is bound to `slot`: `extent` iterations from `min`.
StmtPtr make_for_code(int threads, int slot, ir::Type t, ExprPtr min, ExprPtr extent, StmtPtr body);

// A store of `value` at `index` (where `predicate`, if not null, is true).
StmtPtr make_store_code(AccessShape shape, ExprPtr value, ExprPtr index, ExprPtr predicate);

// A store of a value computed from the element it replaces, in device memory: as
// make_store_code, and a RuntimeError when another thread (of this block since the last
// barrier, or of another block) has read-modified-written the same element without atomic().
StmtPtr make_read_modify_write_code(AccessShape shape, ExprPtr value, ExprPtr index,
                                    ExprPtr predicate);

// An atomic read-modify-write (atomic_update): the active threads update the element at their
// index one after another, in thread order, each with op(current, x).
StmtPtr make_atomic_store_code(AccessShape load, AccessShape store, ir::AtomicOp op, ExprPtr x,
                               ExprPtr index);

// `body` with `storage`, private to each thread, allocated.
StmtPtr make_allocate_code(Storage *storage, StmtPtr body);

// A check that `cond` holds in every active thread; `condition` is its IR, for the message.
// What a failed check says: a runtime error's kind (ir::RuntimeErrorKind; -1: none, the
// condition is shown), the buffer or Func it names, and its details, evaluated when it fails.
struct AssertMessage {
    int32_t kind = -1;
    std::string name;
    std::vector<ExprPtr> details;
};
StmtPtr make_assert_code(ExprPtr cond, ir::Expr condition, AssertMessage message);

// A block-wide barrier at `site`.
StmtPtr make_barrier_code(const Site *site);

// An expression evaluated for what it does (its loads), its value unused.
StmtPtr make_evaluate_code(ExprPtr value);

// A statement that does nothing.
StmtPtr make_nop_code();

} // namespace sim
} // namespace backends
} // namespace aicf

#endif
