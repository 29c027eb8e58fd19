// The warpgroup instruction's rewrite of an update (gpu_wgmma), and the kernel passes it needs
// after shared memory is packed (lowering/WarpgroupUpdates.h).

#include "lowering/WarpgroupUpdates.h"

#include "dsl/Names.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IREquality.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"
#include "lowering/KernelAnalysis.h"
#include "lowering/MatrixUpdates.h"
#include "lowering/WarpgroupMMA.h"

#include <algorithm>
#include <optional>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// An operand of the instruction: a Func in shared memory, stored in core matrices
// (core_matrix_storage), read at (m or n, k) of the instruction with each loop moving along one
// of its two innermost stored dimensions. Its first element's load stands for its start until
// resolve_wgmma_operands turns it into a byte offset.
WgmmaOperand wgmma_operand(const MatrixStage &ms, const MatrixUpdate &u, const Expr &e,
                           const For *rows, const char *which, const UpdateContext &context,
                           const std::map<std::string, Function> &env) {
    // In terms of the stage's thread loop rather than the instruction's loop over warps.
    auto for_users = [&](const Expr &x) {
        Expr shown = x;
        if (!context.warp_loop.empty()) {
            const Expr w = Variable::make(Int(32), context.warp_loop);
            shown = simplify(substitute(loop_name(ms.func, ms.stage, "wgmma_warp"),
                                        Mul::make(Sub::make(w, context.warp_min), 4), x));
        }
        return with_user_loop_names(to_string(shown));
    };
    auto refuse = [&](const std::string &why) {
        user_error << ms.user_name << " runs " << ms.call_for_users() << ", whose operand " << which
                   << " is " << for_users(e) << ": " << why;
    };
    const Call *c = e.as<Call>();
    if (!c || c->call_type != Call::Func || !env.count(c->name))
        refuse("wgmma reads its operands from shared memory, so each must be a Func read at the "
               "instruction's point, computed at a loop of the block around it, "
               "store_in(MemoryType::GPUShared) and core_matrix_storage().");
    const Function &f = env.at(c->name);
    const FuncSchedule &sched = f.schedule();
    if (sched.memory_type != MemoryType::GPUShared || !sched.core_matrix_storage)
        refuse("Func " + f.name() +
               " must be stored in shared memory in core matrices, the layout wgmma reads: "
               "give it store_in(MemoryType::GPUShared) and core_matrix_storage().");
    const std::vector<std::string> order =
        sched.storage_order.empty() ? f.args() : sched.storage_order;
    auto index_of = [&](const std::string &v) {
        return size_t(std::find(f.args().begin(), f.args().end(), v) - f.args().begin());
    };
    const size_t inner = index_of(order[0]), row = index_of(order[1]);
    // Which loop moves along which stored dimension.
    const std::string &k = u.k->name, &r = rows->name;
    bool k_inner = false;
    for (size_t d = 0; d < c->args.size(); d++) {
        auto sk = step_along(c->args[d], k), sr = step_along(c->args[d], r);
        const bool ok = sk && sr &&
                        (d == inner ? (*sk == 1 && *sr == 0) || (*sk == 0 && *sr == 1)
                         : d == row ? (*sk == 1 && *sr == 0) || (*sk == 0 && *sr == 1)
                                    : *sk == 0 && *sr == 0);
        if (!ok)
            refuse("each of the loops " + loop_var_for_users(r) + " and " + loop_var_for_users(k) +
                   " must move by one along one of " + f.name() +
                   "'s two innermost stored dimensions (" + order[0] + " and " + order[1] +
                   "), and neither along another, but " + f.name() + "'s dimension " + f.args()[d] +
                   " is read at " + for_users(c->args[d]) + ".");
        if (d == inner) k_inner = *sk == 1;
    }
    if (step_along(c->args[row], k) != std::optional<int64_t>(k_inner ? 0 : 1))
        refuse("the loops " + loop_var_for_users(r) + " and " + loop_var_for_users(k) +
               " must move along different dimensions of " + f.name() + ".");
    auto found = context.realized.find(f.name());
    internal_assert(found != context.realized.end())
        << "wgmma operand " << f.name() << " is not realized around its update";
    auto closed = [&](const Expr &x) { return simplify(substitute_lets(context.lets, x)); };
    const std::vector<Range> &bounds = found->second;
    const int elements = 16 / f.output_types()[0].bytes();
    auto rows_long = as_const_int(closed(bounds[inner].extent));
    if (!rows_long)
        refuse("its storage's rows (dimension " + order[0] +
               ") must have a constant length, which the instruction's descriptor holds, but "
               "their length is known only at run time. Compute " +
               f.name() + " over a region of constant size.");
    const int64_t padded = (*rows_long + elements - 1) / elements * elements;
    const int64_t row_group_bytes = 16 * padded; // 8 rows of `padded` elements
    if (row_group_bytes >= (int64_t(1) << 18))
        refuse("its storage's rows are " + std::to_string(padded) +
               " elements long, too long for the descriptor's byte offsets (below 2^18 bytes "
               "for 8 rows). Stage a narrower tile.");
    // The instruction's first element: on a core matrix.
    std::map<std::string, Expr> at_start = {
        {u.n->name, u.n->min}, {u.m->name, u.m->min}, {u.k->name, u.k->min}};
    std::vector<Expr> first;
    for (const Expr &a : c->args)
        first.push_back(simplify(substitute(at_start, a)));
    for (auto [d, unit] : {std::pair{inner, elements}, std::pair{row, 8}}) {
        const Expr offset = closed(Sub::make(first[d], bounds[d].min));
        if (!can_prove(EQ::make(Mod::make(offset, make_const(Int(32), int64_t(unit))), 0)))
            refuse("the instruction's first element must start a core matrix (8 rows of 16 "
                   "bytes), but it lies " +
                   with_user_loop_names(to_string(offset)) + " into " + f.name() + "'s dimension " +
                   f.args()[d] + ", which is not provably a multiple of " + std::to_string(unit) +
                   ". Compute it at a loop whose tiles start on multiples of 8.");
    }
    WgmmaOperand o;
    o.byte = Cast::make(Int(32), Call::make_func(c->type, c->name, first, c->func, c->value_index));
    o.mn_major = !k_inner;
    // Core matrices 128 bytes apart along the rows' 16-byte pieces, 16 * padded along the rows.
    o.lbo = k_inner ? 128 : row_group_bytes;
    o.sbo = k_inner ? row_group_bytes : 128;
    return o;
}

} // namespace

Stmt warpgroup_update(const MatrixStage &ms, const MatrixUpdate &u, const Expr &warp, const Expr &g,
                      const Expr &q, const UpdateContext &context,
                      const std::map<std::string, Function> &env, int site) {
    const Type in = u.a.type();
    auto n_extent = as_const_int(simplify(u.n->extent));
    user_assert(n_extent && wgmma_shape_exists(int(*n_extent), in))
        << ms.user_name << " runs " << ms.call_for_users() << " on " << to_string(in)
        << " inputs, wgmma.mma_async m64nNk16, whose n (columns) loop "
        << loop_var_for_users(u.n->name) << " must have a constant extent N, a multiple of 8 "
        << "from 8 to 256, but it has " << with_user_loop_names(to_string(simplify(u.n->extent)))
        << ".";
    const int N = int(*n_extent);
    const std::string instruction = "wgmma.mma_async m64n" + std::to_string(N) + "k16";
    check_loop_extent(ms, instruction, in, u.m, kWgmmaM, "m (rows)");
    check_loop_extent(ms, instruction, in, u.k, kWgmmaK, "k (the reduction)");
    check_guard_and_point(ms, u, kWgmmaK);
    const WgmmaOperand a = wgmma_operand(ms, u, u.a, u.m, "a", context, env);
    const WgmmaOperand b = wgmma_operand(ms, u, u.b, u.n, "b", context, env);

    // Thread (warp, g, q) holds element 4j + 2h + c of D at row 16 (warp % 4) + g + 8h, column
    // 8j + 2q + c. The row is written 16 warp - 64 (warp / 4) + ..., which cancels the
    // warpgroup's 64 (warp / 4) in the m loop's min: the accumulator's points are then 16 rows
    // a warp, as its other stages' thread loops lay them out.
    const Expr row_of_warp = Sub::make(Mul::make(warp, 16), Mul::make(Div::make(warp, 4), 64));
    std::vector<Expr> c_parts;
    std::vector<std::vector<Expr>> points;
    for (int i = 0; i < N / 2; i++) {
        const int j = i / 4, h = (i / 2) % 2, c = i % 2;
        const Expr row = Add::make(row_of_warp, Add::make(g, Expr(8 * h)));
        const Expr col = Add::make(Mul::make(q, 2), Expr(8 * j + c));
        std::map<std::string, Expr> at = {{u.m->name, simplify(Add::make(u.m->min, row))},
                                          {u.n->name, simplify(Add::make(u.n->min, col))}};
        std::vector<Expr> point;
        for (const Expr &arg : u.args)
            point.push_back(simplify(substitute(at, arg)));
        c_parts.push_back(Call::make_func(Float(32), ms.func, point, u.accumulator->func, 0));
        points.push_back(point);
    }
    const Type acc = Float(32, N / 2);
    const std::string d = loop_name(ms.func, ms.stage, "wgmma_d" + std::to_string(site));
    const Expr fenced = Variable::make(acc, d + ".fenced"),
               product = Variable::make(acc, d + ".product"), done = Variable::make(acc, d);
    std::vector<Stmt> writes;
    for (int i = 0; i < N / 2; i++)
        writes.push_back(Provide::make(ms.func, {extract_element(done, i)}, points[size_t(i)]));
    // Issued, committed and waited for at once: D is read right after.
    Stmt s = LetStmt::make(d, gpu_wgmma_wait(0, product), Block::make(writes));
    s = Block::make({gpu_wgmma_commit(), s});
    s = LetStmt::make(d + ".product", gpu_wgmma(in, N, a, b, fenced), s);
    return LetStmt::make(d + ".fenced", gpu_wgmma_fence(make_vector(c_parts)), s);
}

namespace {

// The operands' starts: the load of each one's first element, after pack_shared_memory an
// index into the block's shared array in elements, becomes its byte offset.
class ResolveOperands : public IRMutator {
    using IRMutator::visit;

    Expr visit(const Call *op) override {
        if (!op->is_intrinsic(Intrinsic::gpu_wgmma)) return IRMutator::visit(op);
        std::vector<Expr> args = op->args;
        for (size_t i : {size_t(1), size_t(4)}) {
            const Cast *c = args[i].as<Cast>();
            const Load *l = c ? c->value.as<Load>() : nullptr;
            if (!l) continue; // already a byte offset
            internal_assert(l->name == kSharedMemoryName && l->index.type().is_scalar())
                << "wgmma operand read from " << l->name << ", not shared memory";
            args[i] = simplify(Mul::make(l->index, make_const(Int(32), int64_t(l->type.bytes()))));
        }
        args[7] = mutate(args[7]);
        return Call::make(op->type, op->intrinsic, args, op->call_type);
    }
};

// A wgmma's issue as lower_warp_matrix_updates writes it, after unrolling: the accumulator's
// registers fenced, one or more wgmma each adding to the last one's result, the group committed
// and waited for, and the result written back to the registers.
struct WgmmaIssue {
    std::string fenced;
    Expr fence; // gpu_wgmma_fence(make_vector(loads of the accumulator))
    std::vector<std::pair<std::string, Expr>> products;
    std::string done;
    Expr wait;
    std::vector<Stmt> writes; // stores of the result's elements, in order
};

std::optional<WgmmaIssue> parse_issue(const Stmt &s) {
    WgmmaIssue w;
    const LetStmt *f = s.as<LetStmt>();
    const Call *fence = f ? f->value.as<Call>() : nullptr;
    if (!fence || !fence->is_intrinsic(Intrinsic::gpu_wgmma_fence)) return std::nullopt;
    w.fenced = f->name;
    w.fence = f->value;
    Stmt body = f->body;
    while (const LetStmt *p = body.as<LetStmt>()) {
        const Call *c = p->value.as<Call>();
        if (!c || !c->is_intrinsic(Intrinsic::gpu_wgmma)) return std::nullopt;
        w.products.emplace_back(p->name, p->value);
        body = p->body;
    }
    const std::vector<Stmt> parts = Block::parts(body);
    if (w.products.empty() || parts.size() != 2) return std::nullopt;
    const Evaluate *commit = parts[0].as<Evaluate>();
    const Call *cc = commit ? commit->value.as<Call>() : nullptr;
    const LetStmt *d = parts[1].as<LetStmt>();
    const Call *wait = d ? d->value.as<Call>() : nullptr;
    if (!cc || !cc->is_intrinsic(Intrinsic::gpu_wgmma_commit) || !wait ||
        !wait->is_intrinsic(Intrinsic::gpu_wgmma_wait))
        return std::nullopt;
    w.done = d->name;
    w.wait = d->value;
    w.writes = Block::parts(d->body);
    return w;
}

Stmt build_issue(const WgmmaIssue &w) {
    Stmt s = LetStmt::make(w.done, w.wait, Block::make(w.writes));
    s = Block::make({gpu_wgmma_commit(), s});
    for (auto it = w.products.rbegin(); it != w.products.rend(); ++it)
        s = LetStmt::make(it->first, it->second, s);
    return LetStmt::make(w.fenced, w.fence, s);
}

// Whether `next`'s fence reads back, element by element in order, what `first` writes: the
// constant register slots of one accumulator.
bool reads_back(const WgmmaIssue &first, const WgmmaIssue &next) {
    const Call *fence = next.fence.as<Call>();
    const Call *v = fence->args[0].as<Call>();
    if (!v || !v->is_intrinsic(Intrinsic::make_vector) || v->args.size() != first.writes.size())
        return false;
    for (size_t i = 0; i < first.writes.size(); i++) {
        const Store *st = first.writes[i].as<Store>();
        const Load *ld = v->args[i].as<Load>();
        if (!st || !ld || st->name != ld->name || !is_const(st->index) ||
            !equal(st->index, ld->index) || !is_const_one(ld->predicate))
            return false;
        const Call *e = st->value.as<Call>();
        if (!e || !e->is_intrinsic(Intrinsic::extract_element) ||
            !equal(e->args[0], Variable::make(e->args[0].type(), first.done)) ||
            !is_const(e->args[1], int64_t(i)))
            return false;
    }
    return true;
}

// Consecutive issues into one accumulator become one: fenced once, the wgmma chained, one
// commit and one wait (the tensor cores then run them back to back).
class ChainIssues : public IRMutator {
    using IRMutator::visit;

    Stmt visit(const Block *op) override {
        std::vector<Stmt> out;
        for (const Stmt &part : Block::parts(op)) {
            const Stmt s = mutate(part);
            std::optional<WgmmaIssue> next = parse_issue(s);
            std::optional<WgmmaIssue> last = out.empty() ? std::nullopt : parse_issue(out.back());
            if (next && last && reads_back(*last, *next)) {
                WgmmaIssue merged = *last;
                for (size_t i = 0; i < next->products.size(); i++) {
                    Expr value = next->products[i].second;
                    if (i == 0) {
                        // Its accumulator: the last wgmma's result.
                        const Call *c = value.as<Call>();
                        std::vector<Expr> args = c->args;
                        args[7] = Variable::make(c->type, last->products.back().first);
                        value = Call::make(c->type, c->intrinsic, args, c->call_type);
                    }
                    merged.products.emplace_back(next->products[i].first, value);
                }
                merged.done = next->done;
                merged.wait = next->wait;
                merged.writes = next->writes;
                out.back() = build_issue(merged);
            } else {
                out.push_back(s);
            }
        }
        return Block::make(out);
    }
};

class FenceBarriers : public IRMutator {
    using IRMutator::visit;

    Stmt visit(const Evaluate *op) override {
        const Call *c = op->value.as<Call>();
        if (!c || !c->is_intrinsic(Intrinsic::gpu_barrier)) return op;
        return Block::make({gpu_async_proxy_fence(), op});
    }
};

} // namespace

void resolve_wgmma_operands(LoweredKernel &kernel) {
    if (!contains_intrinsic(kernel.body, Intrinsic::gpu_wgmma)) return;
    kernel.body = ChainIssues().mutate(ResolveOperands().mutate(kernel.body));
}

void fence_wgmma_operands(LoweredKernel &kernel) {
    if (contains_intrinsic(kernel.body, Intrinsic::gpu_wgmma))
        kernel.body = FenceBarriers().mutate(kernel.body);
}

} // namespace lowering
} // namespace aicf
