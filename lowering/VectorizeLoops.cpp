#include "lowering/VectorizeLoops.h"

#include "dsl/Debug.h"
#include "dsl/LoopLimits.h"
#include "dsl/Names.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/Scope.h"
#include "dsl/ir/Simplify.h"

#include <algorithm>
#include <iostream>
#include <set>

namespace aicf {
namespace lowering {

using namespace ir;

namespace {

Expr conjunction(const std::vector<Expr> &terms) {
    Expr r = terms[0];
    for (size_t i = 1; i < terms.size(); i++)
        r = And::make(r, terms[i]);
    return r;
}

Expr widen(const Expr &e, int lanes) {
    return e.type().lanes == lanes ? e : Broadcast::make(e, lanes);
}

// Rewrites the body of one vectorized loop.
class Vectorizer : public IRMutator {
public:
    Vectorizer(const std::string &loop, Expr ramp) : loop(loop), lanes(ramp.type().lanes) {
        vector_vars.push(loop, ramp);
    }

private:
    std::string loop;
    int lanes;
    Scope<Expr> vector_vars; // names whose value became a vector, and that vector's variable
    Expr predicate;          // lanes active here (undefined: all)

    using IRMutator::visit;

    Expr visit(const Variable *op) override {
        if (const Expr *v = vector_vars.find(op->name)) return *v;
        return op;
    }

    template <typename T> Expr binary(const T *op) {
        Expr a = mutate(op->a), b = mutate(op->b);
        if (a.same_as(op->a) && b.same_as(op->b)) return op;
        int n = std::max<int>(a.type().lanes, b.type().lanes);
        return T::make(widen(a, n), widen(b, n));
    }
    Expr visit(const Add *op) override { return binary(op); }
    Expr visit(const Sub *op) override { return binary(op); }
    Expr visit(const Mul *op) override { return binary(op); }
    Expr visit(const Div *op) override { return binary(op); }
    Expr visit(const Mod *op) override { return binary(op); }
    Expr visit(const Min *op) override { return binary(op); }
    Expr visit(const Max *op) override { return binary(op); }
    Expr visit(const EQ *op) override { return binary(op); }
    Expr visit(const NE *op) override { return binary(op); }
    Expr visit(const LT *op) override { return binary(op); }
    Expr visit(const LE *op) override { return binary(op); }
    Expr visit(const GT *op) override { return binary(op); }
    Expr visit(const GE *op) override { return binary(op); }
    Expr visit(const And *op) override { return binary(op); }
    Expr visit(const Or *op) override { return binary(op); }

    Expr visit(const Cast *op) override {
        Expr v = mutate(op->value);
        if (v.same_as(op->value)) return op;
        return Cast::make(op->type.with_lanes(v.type().lanes), v);
    }
    Expr visit(const Reinterpret *op) override {
        Expr v = mutate(op->value);
        if (v.same_as(op->value)) return op;
        user_assert(op->type.lanes == 1) << "Cannot vectorize the loop " << loop_for_users(loop)
                                         << ": it reinterprets a vector value.";
        return Reinterpret::make(op->type.with_lanes(v.type().lanes), v);
    }
    Expr visit(const Select *op) override {
        Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
        if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value))
            return op;
        int n = std::max<int>({c.type().lanes, t.type().lanes, f.type().lanes});
        return Select::make(widen(c, n), widen(t, n), widen(f, n));
    }
    Expr visit(const Load *op) override {
        Expr index = mutate(op->index);
        Expr p = mutate(op->predicate);
        // The same element in every lane: one scalar load, broadcast. A scalar index is in
        // bounds whenever any lane's would be, so no predicate is needed.
        if (!index.type().is_vector() && !p.type().is_vector()) {
            Expr scalar = index.same_as(op->index) && p.same_as(op->predicate)
                              ? Expr(op)
                              : Load::make(op->type, op->name, index, p, op->param);
            return predicate.defined() ? Broadcast::make(scalar, lanes) : scalar;
        }
        bool vector = true;
        if (!vector)
            return index.same_as(op->index) && p.same_as(op->predicate)
                       ? Expr(op)
                       : Load::make(op->type, op->name, index, p, op->param);
        Expr mask = widen(p, lanes);
        if (predicate.defined()) mask = And::make(mask, widen(predicate, lanes));
        return Load::make(op->type.with_lanes(lanes), op->name, widen(index, lanes), mask,
                          op->param);
    }
    Expr visit(const Call *op) override {
        std::vector<Expr> args;
        bool changed = mutate_exprs(op->args, args);
        if (!changed) return op;
        int n = 1;
        for (const Expr &a : args)
            n = std::max<int>(n, a.type().lanes);
        user_assert(op->call_type == Call::PureIntrinsic)
            << "Cannot vectorize the loop " << loop_for_users(loop) << ": it calls " << op->name
            << ", which has side effects.";
        for (Expr &a : args)
            a = widen(a, n);
        auto *c = new Call(*op);
        c->args = args;
        c->type = op->type.with_lanes(n);
        return c;
    }
    Expr visit(const Let *op) override {
        Expr value = mutate(op->value);
        if (!value.type().is_vector()) {
            Expr body = mutate(op->body);
            if (value.same_as(op->value) && body.same_as(op->body)) return op;
            return Let::make(op->name, value, body);
        }
        ScopedBinding<Expr> bind(vector_vars, op->name, Variable::make(value.type(), op->name));
        return Let::make(op->name, value, mutate(op->body));
    }
    Stmt visit(const LetStmt *op) override {
        Expr value = simplify(mutate(op->value));
        if (!value.type().is_vector()) {
            Stmt body = mutate(op->body);
            if (value.same_as(op->value) && body.same_as(op->body)) return op;
            return LetStmt::make(op->name, value, body);
        }
        // A ramp or broadcast stays visible as one (over a scalar let of its base), so the
        // accesses it indexes remain dense vector loads and stores.
        const Ramp *ramp = value.as<Ramp>();
        const Broadcast *bcast = value.as<Broadcast>();
        if (ramp || bcast) {
            std::string base_name = op->name + ".base";
            Expr base = Variable::make(value.type().element_of(), base_name);
            Expr shape = ramp ? Ramp::make(base, ramp->stride, ramp->lanes)
                              : Broadcast::make(base, bcast->lanes);
            ScopedBinding<Expr> bind(vector_vars, op->name, shape);
            return LetStmt::make(base_name, ramp ? ramp->base : bcast->value, mutate(op->body));
        }
        ScopedBinding<Expr> bind(vector_vars, op->name, Variable::make(value.type(), op->name));
        return LetStmt::make(op->name, value, mutate(op->body));
    }
    Stmt visit(const Store *op) override {
        Expr value = mutate(op->value), index = mutate(op->index), p = mutate(op->predicate);
        bool vector = value.type().is_vector() || index.type().is_vector() ||
                      p.type().is_vector() || predicate.defined();
        if (!vector) {
            if (value.same_as(op->value) && index.same_as(op->index) && p.same_as(op->predicate))
                return op;
            return Store::make(op->name, value, index, p, op->param);
        }
        user_assert(index.type().is_vector())
            << "Cannot vectorize the loop " << loop_for_users(loop)
            << ": every lane would store to the same "
            << "element of " << op->name << " (" << op->index << "). A reduction over this "
            << "loop needs rfactor before it can be vectorized.";
        Expr mask = widen(p, lanes);
        if (predicate.defined()) mask = And::make(mask, widen(predicate, lanes));
        return Store::make(op->name, widen(value, lanes), index, mask, op->param);
    }
    Stmt visit(const IfThenElse *op) override {
        Expr c = simplify(mutate(op->condition));
        if (is_true(c)) return mutate(op->then_case);
        if (is_false(c))
            return op->else_case.defined() ? mutate(op->else_case)
                                           : Evaluate::make(make_zero(Int(32)));
        if (!c.type().is_vector()) {
            Stmt t = mutate(op->then_case), e = mutate(op->else_case);
            if (c.same_as(op->condition) && t.same_as(op->then_case) && e.same_as(op->else_case))
                return op;
            return IfThenElse::make(c, t, e);
        }
        // Lanes disagree. Conditions that hold or fail for all lanes together (a row guard
        // around a vector of columns) stay a branch, so that the scalar loads under them
        // (which predicates do not cover) run only where they are valid.
        if (!op->else_case.defined()) {
            std::vector<Expr> uniform, varying;
            for (const Expr &k : conjuncts(op->condition)) {
                Expr m = simplify(mutate(k));
                (m.type().is_vector() ? varying : uniform).push_back(m.type().is_vector() ? k : m);
            }
            if (!uniform.empty() && !varying.empty()) {
                Stmt inner = mutate(IfThenElse::make(conjunction(varying), op->then_case));
                return IfThenElse::make(conjunction(uniform), inner);
            }
        }
        // Run both sides with their lanes as predicates.
        Expr outer = predicate;
        predicate = outer.defined() ? And::make(outer, c) : c;
        Stmt t = mutate(op->then_case);
        Stmt e;
        if (op->else_case.defined()) {
            Expr not_c = Not::make(c);
            predicate = outer.defined() ? And::make(outer, not_c) : not_c;
            e = mutate(op->else_case);
        }
        predicate = outer;
        return Block::make(t, e);
    }
    Stmt visit(const For *op) override {
        Expr min = mutate(op->min), extent = mutate(op->extent);
        user_assert(!min.type().is_vector() && !extent.type().is_vector())
            << "Cannot vectorize the loop " << loop_for_users(loop)
            << ": the bounds of the inner loop " << op->name << " differ between its lanes.";
        user_assert(op->for_type != ForType::Vectorized)
            << "Cannot vectorize the loop " << loop_for_users(loop)
            << ": it contains another vectorized loop, " << op->name
            << ". Vectorize only the innermost of them.";
        Stmt body = mutate(op->body);
        if (min.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body)) return op;
        return For::make(op->name, min, extent, op->for_type, op->gpu_dim, body);
    }
    Stmt visit(const Allocate *op) override {
        user_error << "Cannot vectorize the loop " << loop_for_users(loop) << ": it allocates "
                   << op->name << " in every iteration. Compute " << op->name
                   << " at a loop outside the vectorized one.";
        return op;
    }
    Stmt visit(const AssertStmt *op) override {
        Expr c = mutate(op->condition);
        user_assert(!c.type().is_vector()) << "Cannot vectorize the loop " << loop_for_users(loop)
                                           << ": it holds a check that differs "
                                           << "between lanes.";
        return IRMutator::visit(op);
    }
};

class VectorizeLoops : public IRMutator {
    using IRMutator::visit;
    std::set<std::string> reported;

    Stmt visit(const For *op) override {
        if (op->for_type != ForType::Vectorized) return IRMutator::visit(op);
        auto extent = as_const_int(op->extent);
        user_assert(extent.has_value())
            << "The loop " << loop_for_users(op->name) << " is vectorized, but its extent ("
            << with_user_loop_names(to_string(op->extent))
            << ") is not a constant. Split it by a constant factor and vectorize the inner loop, "
            << "e.g. " << loop_stage_for_users(op->name) << ".vectorize("
            << loop_var_for_users(op->name) << ", 8).";
        user_assert(*extent <= kMaxVectorLanes)
            << "The loop " << loop_for_users(op->name) << " is vectorized with " << *extent
            << " lanes; AICF allows at most " << kMaxVectorLanes
            << ". Split it and vectorize the inner part.";
        if (*extent <= 1)
            return For::make(op->name, op->min, op->extent, ForType::Serial, mutate(op->body));
        Expr ramp = Ramp::make(op->min, make_one(op->min.type()), int(*extent));
        Vectorizer v(op->name, ramp);
        try {
            return v.mutate(op->body);
        } catch (const CompileError &e) {
            // Vectorizing is an optimization: a loop that cannot be vectorized runs its
            // iterations one by one, which computes the same values.
            // Told once per loop, however many copies of it unrolling made.
            if (debug_level() >= 1 && reported.insert(op->name).second) {
                std::cerr << "AICF: " << e.what() << " It runs as a serial loop.\n";
            }
            return For::make(op->name, op->min, op->extent, ForType::Serial, mutate(op->body));
        }
    }
};

} // namespace

Stmt vectorize_loops(const Stmt &s) {
    return VectorizeLoops().mutate(s);
}

} // namespace lowering
} // namespace aicf
