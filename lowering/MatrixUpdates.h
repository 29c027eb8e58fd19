#ifndef AICF_LOWERING_MATRIX_UPDATES_H
#define AICF_LOWERING_MATRIX_UPDATES_H

// What the two tensor-core directives share (lower_warp_matrix_updates): the update whose three
// innermost loops gpu_mma(n, m, k) or gpu_wgmma(n, m, k) names, f(.., n, .., m, ..) +=
// a(m, k) * b(k, n), found and checked with messages that name the directive; and the warpgroup
// instruction's own rewrite.

#include "dsl/Function.h"
#include "dsl/Target.h"
#include "dsl/ir/IR.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace aicf {
namespace lowering {

struct MatrixStage {
    std::string directive; // "gpu_mma" or "gpu_wgmma"
    std::string func;
    int stage = 0;
    std::string n, m, k; // loop names
    std::string user_name;

    bool warpgroup() const { return directive == "gpu_wgmma"; }
    // "gpu_mma(xm, ym, ki)", as the user wrote it.
    std::string call_for_users() const;
};

// The update inside the stage's three loops, with its parts.
struct MatrixUpdate {
    const ir::For *n = nullptr, *m = nullptr, *k = nullptr;
    // A test around the update (a split's tail guard, an RDom's where()): refused by
    // refuse_guard once the caller has checked the loops' extents, whose message is the more
    // useful.
    const ir::IfThenElse *guard = nullptr;
    const ir::Provide *provide = nullptr;
    std::vector<ir::Expr> args; // the point written, the lets between the loops substituted
    ir::Expr a, b;              // the operands, a 16-bit one without its conversion to float
    ir::Expr value;             // the value written, the lets substituted
    const ir::Call *accumulator = nullptr; // the update's read of the point it writes, in value
};

// The stages that name `directive` in their schedule.
std::map<std::string, MatrixStage> matrix_stages(const std::map<std::string, ir::Function> &env,
                                                 const std::string &directive);

// The update nested in `outer`, the outermost of the stage's three loops: exactly those loops
// around one float32 accumulation of a product of two operands of one type (bfloat16, float16
// or float32), a distinct point for each n and m, none depending on k. A CompileError names
// what differs.
MatrixUpdate match_matrix_update(const MatrixStage &ms, const ir::For *outer);

// The CompileError for an update that is not the instruction's: "<stage> runs <call>, but its
// update <update> <why>: it must be ...".
[[noreturn]] void refuse_update(const MatrixStage &ms, const ir::Provide *p,
                                const std::string &why);

// CompileErrors for a loop whose extent is not the instruction's (`instruction`: its PTX name);
// for a guard around the update (k_step: the instruction's k), which the caller checks after
// the extents, whose messages are the more useful; and for a point written that does not move
// along one dimension with n and another with m.
void check_loop_extent(const MatrixStage &ms, const std::string &instruction, ir::Type input,
                       const ir::For *loop, int want, const std::string &what);
void check_guard_and_point(const MatrixStage &ms, const MatrixUpdate &u, int k_step);

// Where the warpgroup instruction is lowered: the Funcs realized around it (their bounds) and
// the lets around it, outermost first.
struct UpdateContext {
    std::map<std::string, std::vector<ir::Range>> realized;
    std::vector<std::pair<std::string, ir::Expr>> lets;
    // The warpgroup instruction's thread loop over warps stands for the stage's own thread
    // loop (its variable = min + warp / 4): that loop, for messages in the user's terms.
    std::string warp_loop;
    ir::Expr warp_min;
};

// The warpgroup instruction (gpu_wgmma): the update of `u` as one wgmma.mma_async m64nNk16 of
// the warpgroup of thread (warp, g, q) (g and q the lane's / 4 and % 4), its operands read from
// shared memory where their storage (core_matrix_storage) puts them. `site` numbers the
// instruction's results in the kernel.
ir::Stmt warpgroup_update(const MatrixStage &ms, const MatrixUpdate &u, const ir::Expr &warp,
                          const ir::Expr &g, const ir::Expr &q, const UpdateContext &context,
                          const std::map<std::string, ir::Function> &env, int site);

} // namespace lowering
} // namespace aicf

#endif
