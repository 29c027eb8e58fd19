#include "lowering/MatrixUpdates.h"

#include "dsl/Names.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IREquality.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"
#include "lowering/KernelAnalysis.h"

#include <optional>
#include <tuple>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

// A statement as text inside a sentence: without the printer's closing newline.
std::string inline_text(const Stmt &s) {
    std::string text = to_string(s);
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
        text.pop_back();
    return text;
}

} // namespace

std::string MatrixStage::call_for_users() const {
    return directive + "(" + loop_var_for_users(n) + ", " + loop_var_for_users(m) + ", " +
           loop_var_for_users(k) + ")";
}

std::map<std::string, MatrixStage> matrix_stages(const std::map<std::string, Function> &env,
                                                 const std::string &directive) {
    std::map<std::string, MatrixStage> stages;
    for (const auto &[name, f] : env) {
        for (int i = 1; i < f.stages(); i++) {
            const StageSchedule &s = f.stage(i).schedule;
            const std::vector<std::string> &loops =
                directive == "gpu_wgmma" ? s.wgmma_loops : s.mma_loops;
            if (loops.empty()) continue;
            MatrixStage ms;
            ms.directive = directive;
            ms.func = name;
            ms.stage = i;
            ms.n = loop_name(name, i, loops[0]);
            ms.m = loop_name(name, i, loops[1]);
            ms.k = loop_name(name, i, loops[2]);
            ms.user_name = stage_for_users(name, i);
            stages[stage_of_loop(ms.n)] = ms;
        }
    }
    return stages;
}

void refuse_update(const MatrixStage &ms, const Provide *p, const std::string &why) {
    user_error << ms.user_name << " runs " << ms.call_for_users() << ", but its update "
               << with_user_loop_names(inline_text(Stmt(p))) << " " << why << ": it must be "
               << ms.func << "(.., n, .., m, ..) = " << ms.func
               << "(same point) + a(m, k) * b(k, n), with a and b both "
               << (ms.warpgroup() ? "bfloat16 or float16 (converted to float32)"
                                  : "bfloat16, float16 (converted to float32) or float32")
               << ".";
    internal_error << "unreachable";
    __builtin_unreachable(); // (each error above throws)
}

MatrixUpdate match_matrix_update(const MatrixStage &ms, const For *outer) {
    MatrixUpdate u;
    std::map<std::string, const For *> nest;
    std::vector<std::pair<std::string, Expr>> lets;
    Stmt body = outer;
    while (true) {
        if (const For *f = body.as<For>()) {
            const bool ours = f->name == ms.n || f->name == ms.m || f->name == ms.k;
            user_assert(ours && nest.size() < 3)
                << ms.user_name << " runs " << ms.call_for_users()
                << ", which must be its innermost three loops, but the loop "
                << loop_var_for_users(f->name) << " lies inside them. Reorder the stage.";
            nest[f->name] = f;
            body = f->body;
        } else if (const LetStmt *l = body.as<LetStmt>()) {
            lets.emplace_back(l->name, l->value);
            body = l->body;
        } else {
            break;
        }
    }
    u.guard = body.as<IfThenElse>();
    if (u.guard && !u.guard->else_case.defined())
        body = u.guard->then_case;
    else
        u.guard = nullptr;
    user_assert(nest.size() == 3 && !body.as<IfThenElse>())
        << ms.user_name << " runs " << ms.call_for_users()
        << ", which must be its innermost three loops, nested directly around the update, "
        << "but other statements lie between them.";
    const Provide *p = body.as<Provide>();
    user_assert(p && p->values.size() == 1 && p->values[0].type() == Float(32))
        << ms.user_name << " runs " << ms.call_for_users()
        << ": the update must write one float32 value (the accumulator), but it is "
        << with_user_loop_names(inline_text(body)) << ".";
    u.provide = p;
    u.n = nest.at(ms.n);
    u.m = nest.at(ms.m);
    u.k = nest.at(ms.k);
    for (const Expr &a : p->args)
        u.args.push_back(simplify(substitute_lets(lets, a)));
    u.value = substitute_lets(lets, p->values[0]);
    const Expr &value = u.value;
    auto refuse = [&](const std::string &why) { refuse_update(ms, p, why); };
    // The accumulator read and the product.
    Expr product;
    if (const Add *add = value.as<Add>()) {
        for (auto [acc, other] : {std::pair{add->a, add->b}, std::pair{add->b, add->a}}) {
            const Call *c = acc.as<Call>();
            if (!c || c->call_type != Call::Func || c->name != ms.func || product.defined())
                continue;
            bool same = c->args.size() == u.args.size();
            for (size_t i = 0; same && i < u.args.size(); i++)
                same = equal(simplify(c->args[i]), u.args[i]);
            if (same) product = other;
        }
    }
    if (!product.defined()) refuse("does not add to the point it writes");
    const Mul *mul = product.as<Mul>();
    if (!mul) refuse("does not add a product");
    auto operand = [&](const Expr &e) -> Expr {
        if (const Cast *c = e.as<Cast>()) {
            const Type from = c->value.type();
            if (from.is_float() && from.bits == 16) return c->value;
        }
        return e;
    };
    Expr x = operand(mul->a), y = operand(mul->b);
    const std::string &n = u.n->name, &m = u.m->name;
    if (!uses_var(x, n) && !uses_var(y, m)) {
        u.a = x;
        u.b = y;
    } else if (!uses_var(y, n) && !uses_var(x, m)) {
        u.a = y;
        u.b = x;
    } else {
        // a * b * 2: one factor is neither operand.
        for (const Expr &f : {x, y}) {
            if (!uses_var(f, n) && !uses_var(f, m))
                refuse("multiplies the operands' product by a third factor, " +
                       with_user_loop_names(to_string(f)) +
                       " (scale an operand's definition, or the result in a later stage)");
        }
        refuse("multiplies factors that depend on both " + loop_var_for_users(n) + " and " +
               loop_var_for_users(m));
    }
    const Type t = u.a.type();
    if (t != u.b.type() || !t.is_float() || !(t.bits == 16 || (t == Float(32) && !ms.warpgroup())))
        refuse("multiplies a " + to_string(u.a.type()) + " by a " + to_string(u.b.type()));
    visit_each<Call>(value, [&](const Call *c) {
        if (c->name == ms.func && !u.accumulator) u.accumulator = c;
    });
    return u;
}

void check_loop_extent(const MatrixStage &ms, const std::string &instruction, Type input,
                       const For *loop, int want, const std::string &what) {
    auto e = as_const_int(simplify(loop->extent));
    user_assert(e && *e == want) << ms.user_name << " runs " << ms.call_for_users() << " on "
                                 << to_string(input) << " inputs, " << instruction << ", whose "
                                 << what << " loop " << loop_var_for_users(loop->name)
                                 << " must have extent " << want << ", but it has "
                                 << with_user_loop_names(to_string(simplify(loop->extent)))
                                 << ". Split it by " << want << ".";
}

void check_guard_and_point(const MatrixStage &ms, const MatrixUpdate &u, int k_step) {
    user_assert(!u.guard)
        << ms.user_name << " runs " << ms.call_for_users()
        << ", which must be its innermost three loops, nested directly around the update, "
        << "but a test guards the update: if ("
        << with_user_loop_names(to_string(simplify(u.guard->condition)))
        << "). A split whose factor does not divide the extent guards its tail, as does an "
        << "RDom's where(). For n and m: compute " << ms.func << " at a tile of its consumer "
        << "that the splits divide (a region its consumers ask beyond whole tiles is "
        << "guarded too), give " << ms.func << " a bound_extent of whole tiles where its "
        << "consumer's tail is guarded (GuardWithIf), or split them with "
        << "TailStrategy::RoundUp (both whole tiles, the operands read through a clamp). "
        << "For k: give the reduction an extent that is a "
        << "multiple of the instruction's k (" << k_step
        << "), the inputs read past their end as zeros (a(k, y) = select(k < K, A(min(k, K - "
        << "1), y), 0)).";
    // The update's point moves along one dimension with n and another with m, not with k.
    int n_dim = -1, m_dim = -1;
    for (size_t d = 0; d < u.args.size(); d++) {
        if (uses_var(u.args[d], u.k->name))
            refuse_update(ms, u.provide,
                          "writes a point that depends on the reduction loop " +
                              loop_var_for_users(u.k->name));
        auto sn = step_along(u.args[d], u.n->name), sm = step_along(u.args[d], u.m->name);
        if (!sn || !sm)
            refuse_update(ms, u.provide, "writes at a point that is not affine in n and m");
        if (*sn != 0 && *sm != 0)
            refuse_update(ms, u.provide, "moves along one dimension with both n and m");
        if (*sn != 0) n_dim = n_dim < 0 ? int(d) : -2;
        if (*sm != 0) m_dim = m_dim < 0 ? int(d) : -2;
    }
    if (n_dim < 0 || m_dim < 0)
        refuse_update(ms, u.provide, "does not write a distinct point for each n and m");
}

} // namespace lowering
} // namespace aicf
