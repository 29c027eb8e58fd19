#ifndef AICF_TESTS_UNIT_RANDOM_EXPR_H
#define AICF_TESTS_UNIT_RANDOM_EXPR_H

// Random int32 expressions and a reference evaluator with the IR's semantics (Euclidean
// division and remainder, x / 0 == 0), for checking the simplifier and the bounds analysis.

#include "dsl/ir/IR.h"
#include "dsl/ir/IRMutator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace aicf {
namespace test {

inline int64_t ref_mod(int64_t a, int64_t b) {
    if (b == 0) return 0;
    int64_t r = a % b;
    return r < 0 ? r + (b < 0 ? -b : b) : r;
}

inline int64_t ref_div(int64_t a, int64_t b) {
    if (b == 0) return 0;
    return (a - ref_mod(a, b)) / b;
}

// Evaluates int32 and bool expressions in 64-bit arithmetic, one lane of a vector at a time.
// `overflow` is set when an intermediate int32 value leaves the int32 range (the simplifier
// assumes that never happens).
class Evaluator {
public:
    std::map<std::string, int64_t> vars;
    bool overflow = false;
    int lane = 0;

    int64_t operator()(const ir::Expr &e) {
        using namespace ir;
        if (const IntImm *i = e.as<IntImm>()) return i->value;
        if (const UIntImm *u = e.as<UIntImm>()) return static_cast<int64_t>(u->value);
        if (const Variable *v = e.as<Variable>()) return vars.at(v->name);
        if (const Add *op = e.as<Add>()) return check(e, (*this)(op->a) + (*this)(op->b));
        if (const Sub *op = e.as<Sub>()) return check(e, (*this)(op->a) - (*this)(op->b));
        if (const Mul *op = e.as<Mul>()) {
            int64_t a = (*this)(op->a), b = (*this)(op->b), r;
            if (__builtin_mul_overflow(a, b, &r)) {
                overflow = true;
                return 0;
            }
            return check(e, r);
        }
        if (const Div *op = e.as<Div>()) return check(e, ref_div((*this)(op->a), (*this)(op->b)));
        if (const Mod *op = e.as<Mod>()) return ref_mod((*this)(op->a), (*this)(op->b));
        if (const Min *op = e.as<Min>()) return std::min((*this)(op->a), (*this)(op->b));
        if (const Max *op = e.as<Max>()) return std::max((*this)(op->a), (*this)(op->b));
        if (const EQ *op = e.as<EQ>()) return (*this)(op->a) == (*this)(op->b);
        if (const NE *op = e.as<NE>()) return (*this)(op->a) != (*this)(op->b);
        if (const LT *op = e.as<LT>()) return (*this)(op->a) < (*this)(op->b);
        if (const LE *op = e.as<LE>()) return (*this)(op->a) <= (*this)(op->b);
        if (const GT *op = e.as<GT>()) return (*this)(op->a) > (*this)(op->b);
        if (const GE *op = e.as<GE>()) return (*this)(op->a) >= (*this)(op->b);
        if (const And *op = e.as<And>()) {
            int64_t a = (*this)(op->a), b = (*this)(op->b);
            return a && b;
        }
        if (const Or *op = e.as<Or>()) {
            int64_t a = (*this)(op->a), b = (*this)(op->b);
            return a || b;
        }
        if (const Not *op = e.as<Not>()) return !(*this)(op->a);
        if (const Select *op = e.as<Select>()) {
            int64_t c = (*this)(op->condition);
            int64_t t = (*this)(op->true_value), f = (*this)(op->false_value);
            return c ? t : f;
        }
        if (const Broadcast *op = e.as<Broadcast>()) return (*this)(op->value);
        if (const Ramp *op = e.as<Ramp>()) {
            return check(op->base, (*this)(op->base) + lane * (*this)(op->stride));
        }
        if (const Let *op = e.as<Let>()) {
            int64_t value = (*this)(op->value);
            auto saved = vars.find(op->name) == vars.end() ? std::optional<int64_t>()
                                                           : std::optional<int64_t>(vars[op->name]);
            vars[op->name] = value;
            int64_t r = (*this)(op->body);
            if (saved) {
                vars[op->name] = *saved;
            } else {
                vars.erase(op->name);
            }
            return r;
        }
        ADD_FAILURE() << "evaluator cannot handle " << static_cast<int>(e.node_type());
        return 0;
    }

private:
    int64_t check(const ir::Expr &e, int64_t v) {
        if (e.type().element_of() == ir::Int(32) && (v < INT32_MIN || v > INT32_MAX)) {
            overflow = true;
        }
        return v;
    }
};

// Turns a scalar int32 expression into one of `lanes` lanes: the variable `ramp_var` becomes
// ramp(v, stride, lanes), other variables and constants are broadcast.
class Vectorizer : public ir::IRMutator {
public:
    Vectorizer(std::string ramp_var, int stride, int lanes)
        : ramp_var(std::move(ramp_var)), stride(stride), lanes(lanes) {}
    using ir::IRMutator::mutate;
    using ir::IRMutator::visit;

private:
    std::string ramp_var;
    int stride, lanes;
    std::vector<std::string> let_names;

    ir::Expr visit(const ir::IntImm *op) override { return ir::Broadcast::make(op, lanes); }
    ir::Expr visit(const ir::Variable *op) override {
        for (const std::string &n : let_names) {
            if (n == op->name) return ir::Variable::make(op->type.with_lanes(lanes), op->name);
        }
        if (op->name == ramp_var) return ir::Ramp::make(op, ir::Expr(int32_t(stride)), lanes);
        return ir::Broadcast::make(op, lanes);
    }
    ir::Expr visit(const ir::Let *op) override {
        ir::Expr value = mutate(op->value);
        let_names.push_back(op->name);
        ir::Expr body = mutate(op->body);
        let_names.pop_back();
        return ir::Let::make(op->name, value, body);
    }
};

// Random int32 expressions over a few variables, with small constants, Div and Mod by nonzero
// constants, Min/Max, Select and Let.
class ExprGenerator {
public:
    explicit ExprGenerator(uint32_t seed, std::vector<std::string> names)
        : rng(seed), vars(std::move(names)) {}

    ir::Expr int_expr(int depth) {
        using namespace ir;
        if (depth <= 0 || pick(0, 9) < 2) return leaf();
        switch (pick(0, 11)) {
        case 0:
        case 1:
            return Add::make(int_expr(depth - 1), int_expr(depth - 1));
        case 2:
            return Sub::make(int_expr(depth - 1), int_expr(depth - 1));
        case 3:
            return Mul::make(int_expr(depth - 1), small_const(-4, 4));
        case 4:
            return Mul::make(int_expr(depth - 1), int_expr(depth - 2));
        case 5:
            return Div::make(int_expr(depth - 1), nonzero_divisor());
        case 6:
            return Mod::make(int_expr(depth - 1), nonzero_divisor());
        case 7:
            return Min::make(int_expr(depth - 1), int_expr(depth - 1));
        case 8:
            return Max::make(int_expr(depth - 1), int_expr(depth - 1));
        case 9:
            return Select::make(bool_expr(depth - 1), int_expr(depth - 1), int_expr(depth - 1));
        case 10: {
            std::string name = "t" + std::to_string(let_counter++);
            Expr value = int_expr(depth - 1);
            vars.push_back(name);
            Expr body = int_expr(depth - 1);
            vars.pop_back();
            return Let::make(name, value, body);
        }
        default:
            return Add::make(int_expr(depth - 1), small_const(-6, 6));
        }
    }

    ir::Expr bool_expr(int depth) {
        using namespace ir;
        if (depth > 1 && pick(0, 4) == 0) {
            switch (pick(0, 2)) {
            case 0:
                return And::make(bool_expr(depth - 1), bool_expr(depth - 1));
            case 1:
                return Or::make(bool_expr(depth - 1), bool_expr(depth - 1));
            default:
                return Not::make(bool_expr(depth - 1));
            }
        }
        Expr a = int_expr(depth - 1), b = int_expr(depth - 1);
        switch (pick(0, 5)) {
        case 0:
            return LT::make(a, b);
        case 1:
            return LE::make(a, b);
        case 2:
            return GT::make(a, b);
        case 3:
            return GE::make(a, b);
        case 4:
            return EQ::make(a, b);
        default:
            return NE::make(a, b);
        }
    }

    int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

private:
    std::mt19937 rng;
    std::vector<std::string> vars;
    int let_counter = 0;

    ir::Expr leaf() {
        if (pick(0, 9) < 6) {
            return ir::Variable::make(ir::Int(32), vars[pick(0, int(vars.size()) - 1)]);
        }
        return small_const(-6, 6);
    }
    ir::Expr small_const(int lo, int hi) { return ir::Expr(int32_t(pick(lo, hi))); }
    ir::Expr nonzero_divisor() {
        int d = pick(1, 6);
        if (pick(0, 5) == 0) d = -d;
        return ir::Expr(int32_t(d));
    }
};

} // namespace test
} // namespace aicf

#endif
