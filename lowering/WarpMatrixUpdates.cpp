#include "lowering/WarpMatrixUpdates.h"

#include "dsl/Names.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IREquality.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"
#include "lowering/GPUPlacement.h"
#include "lowering/KernelAnalysis.h"
#include "lowering/MatrixUpdates.h"
#include "lowering/TensorCores.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// A lane's thread loops: t = lane % 4 along x, g = lane / 4 along y.
constexpr int kLaneThreadsX = 4, kLaneThreadsY = 8;

// Where element i of a fragment lies for lane t + 4 g: row and column affine in (g, t), read
// off the PTX ISA's maps and checked against them at every lane.
template <typename Map>
std::pair<Expr, Expr> element_at(const MMAShape &shape, Map map, int i, const Expr &g,
                                 const Expr &t) {
    auto [r0, c0] = map(shape, 0, i);
    auto [r1, c1] = map(shape, 1, i);
    auto [r4, c4] = map(shape, 4, i);
    for (int lane = 0; lane < 32; lane++) {
        auto [r, c] = map(shape, lane, i);
        internal_assert(r == r0 + (r4 - r0) * (lane / 4) + (r1 - r0) * (lane % 4) &&
                        c == c0 + (c4 - c0) * (lane / 4) + (c1 - c0) * (lane % 4))
            << "fragment element " << i << " of " << shape.ptx_name()
            << " is not affine in the lane's (g, t)";
    }
    auto affine = [&](int base, int per_g, int per_t) {
        return simplify(Add::make(make_const(Int(32), int64_t(base)),
                                  Add::make(Mul::make(g, make_const(Int(32), int64_t(per_g))),
                                            Mul::make(t, make_const(Int(32), int64_t(per_t))))));
    };
    return {affine(r0, r4 - r0, r1 - r0), affine(c0, c4 - c0, c1 - c0)};
}

class LowerUpdates : public IRMutator {
public:
    LowerUpdates(std::map<std::string, MatrixStage> stages,
                 const std::map<std::string, Function> &env)
        : stages(std::move(stages)), env(env) {}

private:
    std::map<std::string, MatrixStage> stages; // by stage ("f.s1")
    const std::map<std::string, Function> &env;
    const For *warp = nullptr; // the thread loop of the stage being rewritten
    bool found = false;        // its instruction's loops were met
    bool kernel_has_mma = false;
    int block_loops = 0;
    int results = 0;
    UpdateContext context; // what the warpgroup instruction's operands need

    using IRMutator::visit;

    Stmt visit(const LetStmt *op) override {
        context.lets.emplace_back(op->name, op->value);
        Stmt s = IRMutator::visit(op);
        context.lets.pop_back();
        return s;
    }

    Stmt visit(const Realize *op) override {
        auto saved = context.realized.find(op->name);
        std::optional<std::vector<Range>> outer;
        if (saved != context.realized.end()) outer = saved->second;
        context.realized[op->name] = op->bounds;
        Stmt s = IRMutator::visit(op);
        if (outer)
            context.realized[op->name] = *outer;
        else
            context.realized.erase(op->name);
        return s;
    }

    Stmt visit(const For *op) override {
        if (op->for_type == ForType::GPUBlock) check_inner_block_loops(op);
        if (op->for_type == ForType::GPUBlock && block_loops == 0) {
            kernel_has_mma = false;
            block_loops++;
            Stmt s = IRMutator::visit(op);
            block_loops--;
            if (kernel_has_mma) check_warps_whole(s);
            return s;
        }
        if (op->for_type == ForType::GPUBlock) {
            block_loops++;
            Stmt s = IRMutator::visit(op);
            block_loops--;
            return s;
        }
        auto it = stages.find(stage_of_loop(op->name));
        if (it == stages.end()) return IRMutator::visit(op);
        const MatrixStage &ms = it->second;
        const char *unit = ms.warpgroup() ? "warpgroups" : "warps";
        if (op->for_type == ForType::GPUThread) {
            user_assert(!warp) << ms.user_name << " runs " << ms.call_for_users()
                               << ", which takes the x and y threads of the block for the lanes "
                               << "of each warp, but it has two thread loops, "
                               << loop_var_for_users(warp->name) << " and "
                               << loop_var_for_users(op->name) << ". Give it one thread loop, "
                               << "over its " << unit
                               << " (it runs along z); fuse the others into it.";
            warp = op;
            found = false;
            // The warpgroup instruction's thread loop runs over the warps, 4 a warpgroup.
            const std::string z =
                ms.warpgroup() ? loop_name(ms.func, ms.stage, "wgmma_warp") : op->name;
            Stmt body = op->body;
            if (ms.warpgroup())
                body = substitute(
                    op->name, Add::make(op->min, Div::make(Variable::make(Int(32), z), 4)), body);
            context.warp_loop = op->name;
            context.warp_min = op->min;
            body = mutate(body);
            context.warp_loop.clear();
            context.warp_min = Expr();
            user_assert(found) << ms.user_name << " runs " << ms.call_for_users()
                               << ", but those loops lie outside its thread loop "
                               << loop_var_for_users(op->name) << ". Order them innermost, "
                               << "inside the thread loop over " << unit << ".";
            warp = nullptr;
            kernel_has_mma = true;
            const std::string t = loop_name(ms.func, ms.stage, "mma_t"),
                              g = loop_name(ms.func, ms.stage, "mma_g");
            body = For::make(t, 0, kLaneThreadsX, ForType::GPUThread, GPUDim::X, body);
            body = For::make(g, 0, kLaneThreadsY, ForType::GPUThread, GPUDim::Y, body);
            if (!ms.warpgroup())
                return For::make(op->name, op->min, op->extent, op->for_type, GPUDim::Z, body);
            return For::make(z, 0, simplify(Mul::make(op->extent, 4)), op->for_type, GPUDim::Z,
                             body);
        }
        if (op->name != ms.n && op->name != ms.m && op->name != ms.k) return IRMutator::visit(op);
        if (block_loops > 0 && !warp) {
            // The stage's thread loop lies inside one of the instruction's loops.
            const For *inner = nullptr;
            visit_each<For>(op->body, [&](const For *f) {
                if (!inner && f->for_type == ForType::GPUThread &&
                    stage_of_loop(f->name) == stage_of_loop(op->name))
                    inner = f;
            });
            user_assert(!inner) << ms.user_name << " runs " << ms.call_for_users()
                                << ", which must be its innermost three loops, inside its thread "
                                << "loop over " << unit << ", but the loop "
                                << loop_var_for_users(op->name) << " lies outside the thread loop "
                                << loop_var_for_users(inner->name) << ". Reorder the stage.";
        }
        user_assert(block_loops > 0 && warp)
            << ms.user_name << " runs " << ms.call_for_users() << ", which one "
            << (ms.warpgroup() ? "warpgroup" : "warp") << " of a GPU block executes, but "
            << (block_loops ? "no GPU thread loop of the stage " : "no GPU block loop ")
            << "encloses those loops. Map a loop outside them onto "
            << (block_loops ? std::string("gpu_threads (the block's ") + unit + ")"
                            : std::string("gpu_blocks"))
            << ".";
        found = true;
        const MatrixUpdate u = match_matrix_update(ms, op);
        if (!ms.warpgroup()) return rewrite(ms, u);
        const std::string lane = loop_name(ms.func, ms.stage, "mma_g");
        return warpgroup_update(ms, u,
                                Variable::make(Int(32), loop_name(ms.func, ms.stage, "wgmma_warp")),
                                Variable::make(Int(32), lane),
                                Variable::make(Int(32), loop_name(ms.func, ms.stage, "mma_t")),
                                context, env, results++);
    }

    // The warp instruction: each lane gathers its elements of the A and B fragments, reads
    // its four points of the accumulator, and writes back the instruction's result there.
    Stmt rewrite(const MatrixStage &ms, const MatrixUpdate &u) {
        const Expr &a = u.a, &b = u.b;
        const For *n = u.n, *m = u.m, *k = u.k;
        const bool tf32 = a.type() == Float(32);
        std::optional<MMAShape> shape = mma_shape(a.type().with_lanes(tf32 ? 4 : 8),
                                                  b.type().with_lanes(tf32 ? 2 : 4), Float(32, 4));
        internal_assert(shape) << "no mma for " << to_string(a.type());
        // The loops' extents are the instruction's; the columns' and the rows' swapped are
        // likelier the call's arguments in the wrong order than splits of the wrong size.
        const auto n_extent = as_const_int(simplify(n->extent)),
                   m_extent = as_const_int(simplify(m->extent));
        user_assert(shape->n == shape->m || n_extent != shape->m || m_extent != shape->n)
            << ms.user_name << " runs " << ms.call_for_users() << " on " << to_string(a.type())
            << " inputs, " << shape->ptx_name() << ", whose n (columns) loop must have extent "
            << shape->n << " and m (rows) loop extent " << shape->m << ", but its n loop "
            << loop_var_for_users(n->name) << " has " << *n_extent << " and its m loop "
            << loop_var_for_users(m->name) << " has " << *m_extent
            << ": the arguments look swapped. gpu_mma takes the columns' loop first: gpu_mma("
            << loop_var_for_users(m->name) << ", " << loop_var_for_users(n->name) << ", "
            << loop_var_for_users(k->name) << ").";
        for (auto [loop, want, what] :
             {std::tuple{n, shape->n, "n (columns)"}, std::tuple{m, shape->m, "m (rows)"},
              std::tuple{k, shape->k, "k (the reduction)"}})
            check_loop_extent(ms, shape->ptx_name(), a.type(), loop, want, what);
        check_guard_and_point(ms, u, shape->k);

        const Expr g = Variable::make(Int(32), loop_name(ms.func, ms.stage, "mma_g"));
        const Expr t = Variable::make(Int(32), loop_name(ms.func, ms.stage, "mma_t"));
        auto at = [&](const Expr &e, const For *rows, const Expr &row, const For *cols,
                      const Expr &col) {
            std::map<std::string, Expr> values = {
                {rows->name, simplify(Add::make(rows->min, row))},
                {cols->name, simplify(Add::make(cols->min, col))}};
            return substitute(values, e);
        };
        std::vector<Expr> a_parts, b_parts, c_parts;
        std::vector<std::vector<Expr>> points;
        const int a_count = shape->a.lanes, b_count = shape->b.lanes;
        for (int i = 0; i < a_count; i++) {
            auto [row, col] = element_at(*shape, mma_a_element, i, g, t);
            a_parts.push_back(at(a, m, row, k, col));
        }
        for (int i = 0; i < b_count; i++) {
            auto [row, col] = element_at(*shape, mma_b_element, i, g, t);
            b_parts.push_back(at(b, k, row, n, col));
        }
        const Call *acc = u.accumulator;
        for (int i = 0; i < 4; i++) {
            auto [row, col] = element_at(*shape, mma_c_element, i, g, t);
            std::vector<Expr> point;
            for (const Expr &arg : u.args)
                point.push_back(simplify(at(arg, m, row, n, col)));
            points.push_back(point);
            c_parts.push_back(Call::make_func(Float(32), ms.func, point, acc->func, 0));
        }
        const std::string d = loop_name(ms.func, ms.stage, "mma_d" + std::to_string(results++));
        const Expr dv = Variable::make(Float(32, 4), d);
        std::vector<Stmt> writes;
        for (int i = 0; i < 4; i++)
            writes.push_back(Provide::make(ms.func, {extract_element(dv, i)}, points[size_t(i)]));
        return LetStmt::make(
            d, gpu_mma(make_vector(a_parts), make_vector(b_parts), make_vector(c_parts)),
            Block::make(writes));
    }

    // The lanes of a warp must be one instruction's: no thread loop of the kernel may widen
    // the block past 4 along x or 8 along y.
    void check_warps_whole(const Stmt &kernel) {
        visit_each<For>(kernel, [&](const For *f) {
            if (f->for_type != ForType::GPUThread || f->gpu_dim == GPUDim::Z) return;
            const int64_t limit = f->gpu_dim == GPUDim::X ? kLaneThreadsX : kLaneThreadsY;
            std::optional<int64_t> e = constant_upper_bound(f->extent);
            user_assert(e && *e <= limit)
                << "A GPU kernel runs gpu_mma, whose warps are the block's x and y threads (4 x "
                << "8), but the loop " << loop_for_users(f->name) << " runs "
                << (e ? std::to_string(*e) : "a variable number of") << " threads along "
                << to_string(f->gpu_dim) << " (at most " << limit << " fit). Split its threads "
                << "as 4 along x, 8 along y and the rest along z.";
        });
    }
};

// Replaces gathered mma operands by ldmatrix where the proof holds.
class UseLdmatrix : public IRMutator {
    Expr g, t; // the lane loops around

    using IRMutator::visit;

    Stmt visit(const For *op) override {
        const std::string var = parse_loop_name(op->name).var;
        if (op->for_type != ForType::GPUThread || (var != "mma_g" && var != "mma_t"))
            return IRMutator::visit(op);
        Expr &lane = var == "mma_g" ? g : t;
        Expr saved = lane;
        lane = Variable::make(Int(32), op->name);
        Stmt s = IRMutator::visit(op);
        lane = saved;
        return s;
    }

    Expr visit(const Call *op) override {
        if (!op->is_intrinsic(Intrinsic::gpu_mma) || !g.defined() || !t.defined())
            return IRMutator::visit(op);
        std::vector<Expr> args = {mutate(op->args[0]), mutate(op->args[1]), mutate(op->args[2])};
        std::optional<MMAShape> shape = mma_shape(args[0].type(), args[1].type(), args[2].type());
        if (!shape || shape->tf32) return gpu_mma(args[0], args[1], args[2]);
        // A is read as stored (rows m, consecutive k) or transposed (rows k); B transposed
        // (rows k, consecutive n) or as stored (rows n).
        for (int operand = 0; operand < 2; operand++) {
            const bool b = operand == 1;
            Expr l = by_ldmatrix(args[size_t(operand)], b, b);
            if (!l.defined()) l = by_ldmatrix(args[size_t(operand)], b, !b);
            if (l.defined()) args[size_t(operand)] = l;
        }
        return gpu_mma(args[0], args[1], args[2]);
    }

    // The operand as one ldmatrix, if its elements lie as one: A as four 8 x 8 matrices (rows
    // m, 8 consecutive k each; lane 8j + r supplies row r of matrix j, matrices j = (rows
    // 0-7, k 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15)); B as two stored with rows k (8
    // consecutive n each), read transposed.
    Expr by_ldmatrix(const Expr &operand, bool b_operand, bool transpose) const {
        const Call *v = operand.as<Call>();
        if (!v || !v->is_intrinsic(Intrinsic::make_vector)) return Expr();
        std::vector<Expr> index;
        for (const Expr &e : v->args) {
            const Load *l = e.as<Load>();
            if (!l || l->name != kSharedMemoryName || !is_const_one(l->predicate) ||
                !l->index.type().is_scalar())
                return Expr();
            index.push_back(l->index);
        }
        const Type element = v->args[0].type();
        const int matrices = int(index.size()) / 2;
        Expr supplied = transpose == b_operand ? affine_rows(index, transpose) : Expr();
        if (!supplied.defined()) supplied = permuted_rows(index, transpose);
        if (!supplied.defined()) return Expr();
        return gpu_ldmatrix(element, kSharedMemoryName, simplify(supplied), matrices, transpose);
    }

    Expr at(const Expr &e, const Expr &g_value, const Expr &t_value) const {
        std::map<std::string, Expr> lane = {{var_name(g), g_value}, {var_name(t), t_value}};
        return simplify(substitute(lane, e));
    }

    // Rows at a constant stride (the tile as its loops lay it out, padded or not): the row
    // address lane l supplies is affine in l.
    Expr affine_rows(const std::vector<Expr> &index, bool transpose) const {
        // Element 0 is (row 0, column 0) at lane 0; the next stored row is element 0 at g = 1
        // for A (rows g), element 1 at lane 0 for B (rows 2t + 1).
        const Expr base = at(index[0], Expr(0), Expr(0));
        const Expr next_row =
            transpose ? at(index[1], Expr(0), Expr(0)) : at(index[0], Expr(1), Expr(0));
        std::optional<int64_t> stride = as_const_int(simplify(Sub::make(next_row, base)));
        if (!stride || *stride % 8 != 0 || !can_prove(EQ::make(Mod::make(base, 8), 0)))
            return Expr();
        const Expr rs = make_const(Int(32), *stride);
        // Where register j, element e of this lane's ldmatrix result lies, against the load
        // it replaces.
        for (size_t i = 0; i < index.size(); i++) {
            const int j = int(i) / 2, e = int(i) % 2;
            Expr row, column;
            if (transpose) {
                row = Add::make(Expr(8 * j + e), Mul::make(t, 2));
                column = g;
            } else {
                row = Add::make(g, Expr(8 * (j & 1)));
                column = Add::make(Mul::make(t, 2), Expr(8 * (j >> 1) + e));
            }
            Expr at = Add::make(base, Add::make(Mul::make(row, rs), column));
            if (!can_prove(EQ::make(simplify(Sub::make(index[i], at)), 0))) return Expr();
        }
        // Lane l = t + 4 g supplies row l % 16 (and for A, columns 8 (l / 16)).
        Expr supplied_row = Add::make(t, Mul::make(Mod::make(g, 4), 4));
        Expr supplied = Add::make(base, Mul::make(supplied_row, rs));
        if (!transpose) supplied = Add::make(supplied, Mul::make(Div::make(g, 4), 8));
        return supplied;
    }

    // Rows whose 16-byte pieces are permuted (swizzle_storage): each 8-element row of each
    // matrix is still one aligned piece, but where it starts is not affine in the lane, so each
    // lane selects its row's start among the loads' own addresses.
    Expr permuted_rows(const std::vector<Expr> &index, bool transpose) const {
        const int matrices = int(index.size()) / 2;
        Scope<Interval> lanes;
        lanes.push(var_name(g), Interval(Expr(0), Expr(7)));
        lanes.push(var_name(t), Interval(Expr(0), Expr(3)));
        auto proved = [&](const Expr &e) { return can_prove(simplify(e, lanes), lanes); };
        auto aligned = [&](const Expr &e) { return proved(EQ::make(Mod::make(e, 8), 0)); };
        const Expr zero(0);
        // Lane l = t + 4 g supplies row r = l % 8 of matrix l / 8.
        const Expr r = Add::make(Mul::make(Mod::make(g, 2), 4), t);
        if (!transpose) {
            // Register j, element e of lane (g, t) is row g, column 2t + e of matrix j: the
            // load of element 2j + e must be 2t + e past the start of that row, which the
            // load of element 2j makes at t = 0.
            for (size_t i = 0; i < index.size(); i++) {
                const Expr start = at(index[i & ~size_t(1)], g, zero);
                if (!aligned(start) ||
                    !proved(EQ::make(
                        index[i], Add::make(start, Add::make(Mul::make(t, 2), Expr(int(i) % 2))))))
                    return Expr();
            }
            // Row r of matrix j starts where element 2j's load is at lane (r, 0).
            return select_matrix([&](int j) { return at(index[size_t(2 * j)], r, zero); },
                                 matrices);
        }
        // Transposed: register j, element e of lane (g, t) is stored row 2t + e, column g of
        // matrix j: the load of element 2j + e must be g past where it is at g = 0.
        for (size_t i = 0; i < index.size(); i++) {
            const Expr start = at(index[i], zero, t);
            if (!aligned(start) || !proved(EQ::make(index[i], Add::make(start, g)))) return Expr();
        }
        // Stored row r of matrix j is element 2j + r % 2 at lane (0, r / 2).
        auto row_start = [&](int j) {
            const Expr half = Div::make(r, 2);
            return Select::make(EQ::make(Mod::make(r, 2), zero),
                                at(index[size_t(2 * j)], zero, half),
                                at(index[size_t(2 * j + 1)], zero, half));
        };
        return select_matrix(row_start, matrices);
    }

    // The row address lane t + 4 g supplies: that of matrix (g / 2) % matrices (lanes past the
    // last matrix, whose addresses ldmatrix ignores, repeat the first ones).
    template <typename F> Expr select_matrix(F &&row_of_matrix, int matrices) const {
        const Expr j = Mod::make(Div::make(g, 2), matrices);
        Expr supplied = row_of_matrix(matrices - 1);
        for (int m = matrices - 2; m >= 0; m--)
            supplied = Select::make(EQ::make(j, Expr(m)), row_of_matrix(m), supplied);
        return supplied;
    }

    static std::string var_name(const Expr &e) { return e.as<Variable>()->name; }
};

} // namespace

void load_mma_operands_with_ldmatrix(LoweredKernel &kernel) {
    kernel.body = UseLdmatrix().mutate(kernel.body);
}

Stmt lower_warp_matrix_updates(const Stmt &s, const std::map<std::string, Function> &env,
                               const Target &target) {
    std::map<std::string, MatrixStage> stages = matrix_stages(env, "gpu_mma");
    for (const auto &[name, ms] : stages) {
        user_assert(target.cuda_capability() >= 80)
            << ms.user_name << " runs " << ms.call_for_users()
            << " on tensor cores, which need a CUDA target of sm_80 or later, but the target "
            << "is " << target.to_string() << ". Add cuda-sm_80 (or later) to the target.";
    }
    for (const auto &[name, ms] : matrix_stages(env, "gpu_wgmma")) {
        user_assert(!stages.count(name))
            << ms.user_name << " runs both gpu_mma and gpu_wgmma; give it one of the two.";
        user_assert(target.cuda_capability() == 90 && target.is_arch_specific())
            << ms.user_name << " runs " << ms.call_for_users()
            << " on Hopper's warpgroup tensor cores (wgmma), which need the target cuda-sm_90a, "
            << "but the target is " << target.to_string()
            << ". Add cuda-sm_90a to the target, or use gpu_mma (sm_80 and later).";
        stages[name] = ms;
    }
    if (stages.empty()) return s;
    return LowerUpdates(std::move(stages), env).mutate(s);
}

} // namespace lowering
} // namespace aicf
