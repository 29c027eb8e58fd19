#include "lowering/KernelAnalysis.h"

#include "dsl/Names.h"
#include "dsl/OperatorChains.h"

#include "dsl/ir/Bounds.h"
#include "dsl/ir/DifferenceOfChains.h"
#include "dsl/ir/IREquality.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"

#include <algorithm>
#include <sstream>

namespace aicf {
namespace lowering {

using namespace ir;

Expr gpu_thread_index(GPUDim d) {
    return Call::make(Int(32), Intrinsic::gpu_thread_index, {make_const(Int(32), int64_t(d))});
}

Expr gpu_block_index(GPUDim d) {
    return Call::make(Int(32), Intrinsic::gpu_block_index, {make_const(Int(32), int64_t(d))});
}

Stmt gpu_barrier() {
    return Evaluate::make(Call::make(Int(32), Intrinsic::gpu_barrier, {}, Call::Intrinsic));
}

bool is_gpu_barrier(const Stmt &s) {
    const Evaluate *e = s.as<Evaluate>();
    const Call *c = e ? e->value.as<Call>() : nullptr;
    return c && c->is_intrinsic(Intrinsic::gpu_barrier);
}

namespace {

// Moves sums into min and max: min(a, b) + c becomes min(a + c, b + c), so that a size
// written as min(i * 16 + 15, n - 1) - i * 16 + 1 shows its constant bound (16).
class DistributeIntoMinMax : public IRMutator {
    using IRMutator::visit;
    // m (a Min or Max) plus b, or minus b when `negate`, with the sum moved inside.
    template <typename Op> static Expr distribute(const Op *m, const Expr &b, bool negate) {
        auto combine = [&](const Expr &x) {
            return simplify(negate ? Expr(Sub::make(x, b)) : Expr(Add::make(x, b)));
        };
        return Op::make(combine(m->a), combine(m->b));
    }
    Expr visit(const Add *op) override {
        Expr a = mutate(op->a), b = mutate(op->b);
        if (const Min *m = a.as<Min>()) return distribute(m, b, false);
        if (const Max *m = a.as<Max>()) return distribute(m, b, false);
        if (const Min *m = b.as<Min>()) return distribute(m, a, false);
        if (const Max *m = b.as<Max>()) return distribute(m, a, false);
        return Add::make(a, b);
    }
    Expr visit(const Sub *op) override {
        Expr a = mutate(op->a), b = mutate(op->b);
        if (const Min *m = a.as<Min>()) return distribute(m, b, true);
        if (const Max *m = a.as<Max>()) return distribute(m, b, true);
        return Sub::make(a, b);
    }
    // min(a, b) * c is min(a * c, b * c) for a positive constant c (a max for a negative one):
    // a fused loop's extent, min(n - i * 8, 7) * 2 + 2, then shows its bound (16).
    Expr visit(const Mul *op) override {
        Expr a = mutate(op->a), b = mutate(op->b);
        if (is_const(a) && !is_const(b)) std::swap(a, b);
        auto c = as_const_int(b);
        const Min *mn = a.as<Min>();
        const Max *mx = a.as<Max>();
        if (!c || *c == 0 || (!mn && !mx)) return Mul::make(a, b);
        Expr x = simplify(Mul::make(mn ? mn->a : mx->a, b)),
             y = simplify(Mul::make(mn ? mn->b : mx->b, b));
        bool min_after = (mn != nullptr) == (*c > 0);
        return min_after ? Expr(Min::make(x, y)) : Expr(Max::make(x, y));
    }
    // min(a, b) / c is min(a / c, b / c) for a positive constant c (rounding down keeps the
    // order): a region rounded out to multiples of 8, (min(i * 16 + 16, n) / 8 - i * 16 / 8)
    // * 8 + 8, then shows its bound (24).
    Expr visit(const Div *op) override {
        Expr a = mutate(op->a), b = mutate(op->b);
        auto c = as_const_int(b);
        const Min *mn = a.as<Min>();
        const Max *mx = a.as<Max>();
        if (!c || *c <= 0 || (!mn && !mx)) return Div::make(a, b);
        Expr x = simplify(Div::make(mn ? mn->a : mx->a, b)),
             y = simplify(Div::make(mn ? mn->b : mx->b, b));
        return mn ? Expr(Min::make(x, y)) : Expr(Max::make(x, y));
    }
};

// A constant upper bound of e: the smaller side of a min suffices.
std::optional<int64_t> upper_bound_of(const Expr &e) {
    if (auto c = as_const_int(e)) return *c;
    if (const Min *m = e.as<Min>()) {
        auto a = upper_bound_of(m->a), b = upper_bound_of(m->b);
        if (a && b) return std::min(*a, *b);
        return a ? a : b;
    }
    if (const Max *m = e.as<Max>()) {
        auto a = upper_bound_of(m->a), b = upper_bound_of(m->b);
        if (a && b) return std::max(*a, *b);
        return std::nullopt;
    }
    // A bounded term plus one, or less a constant: max(min(n - k * 8 - 1, 7), 0) + 1, the
    // extent of the last step of a reduction over a size known only at run time, is at most 8.
    if (const Add *a = e.as<Add>()) {
        auto x = upper_bound_of(a->a), y = upper_bound_of(a->b);
        if (x && y) return *x + *y;
    }
    if (const Sub *s = e.as<Sub>()) {
        auto x = upper_bound_of(s->a), c = as_const_int(s->b);
        if (x && c) return *x - *c;
        // A clamped window's end less its start: min(t + 31, e) - min(t, t + 1, e) <= 31.
        if (auto d = difference_of_chains(s->a, s->b).hi) return *d;
    }
    // A bounded term divided or multiplied by a positive constant: min(n - k * 8, 7) / 2.
    if (const Div *d = e.as<Div>()) {
        auto x = upper_bound_of(d->a), c = as_const_int(d->b);
        if (x && c && *c > 0) return div_euclid(*x, *c);
    }
    if (const Mul *m = e.as<Mul>()) {
        auto x = upper_bound_of(m->a), c = as_const_int(m->b);
        if (x && c && *c > 0) return *x * *c;
    }
    Interval i = bounds_of_expr_in_scope(e, Scope<Interval>());
    if (i.has_upper_bound()) {
        if (auto c = as_const_int(simplify(i.max))) return *c;
    }
    return std::nullopt;
}

// Writes x rounded down to a multiple of a positive constant, (x / c) * c, as x - x % c: the
// size of a region aligned outward (align_bounds), ((t + 7) / 4) * 4 + 4 - (t / 4) * 4, then
// shows its bound once t cancels (at most 14).
class RoundDownAsRemainder : public IRMutator {
    using IRMutator::visit;
    Expr visit(const Mul *op) override {
        Expr a = mutate(op->a), b = mutate(op->b);
        const Div *d = a.as<Div>();
        auto c = as_const_int(b);
        if (d && c && *c > 0 && equal(d->b, b)) return Sub::make(d->a, Mod::make(d->a, b));
        return Mul::make(a, b);
    }
};

// Folds a quotient of a sum holding one quotient into one quotient: (t * 2 + (x - 1) / 2) / 3
// is (t * 4 + x - 1) / 6 (rounding down, for whole t), so that the points a thread reads of
// f(((x - 3) / 2) / 3) and f(x / 6) are differences of quotients of one value. For bounds
// only: the terms multiplied by the inner divisor could overflow where the original did not.
class MergeNestedQuotients : public IRMutator {
    using IRMutator::visit;
    Expr visit(const Div *op) override {
        Expr a = mutate(op->a), b = mutate(op->b);
        auto c = as_const_int(b);
        if (!c || *c <= 0 || !a.type().is_int() || !a.type().is_scalar()) return Div::make(a, b);
        // The terms of a sum, each with whether it is subtracted.
        std::optional<OperatorChain> chain = operator_chain(a);
        const std::vector<std::pair<Expr, bool>> terms =
            chain && chain->op == Combiner::Add ? chain->operands
                                                : std::vector<std::pair<Expr, bool>>{{a, false}};
        const Div *inner = nullptr;
        std::optional<int64_t> c1;
        for (const auto &[t, negative] : terms) {
            const Div *d = t.as<Div>();
            auto k = d ? as_const_int(d->b) : std::nullopt;
            if (!negative && k && *k > 0) {
                if (inner) return Div::make(a, b); // two quotients
                inner = d;
                c1 = k;
            }
        }
        if (!inner || *c1 > (int64_t(1) << 20) || *c > (int64_t(1) << 20)) return Div::make(a, b);
        const Type t = a.type();
        Expr numerator = inner->a;
        for (const auto &[term, negative] : terms) {
            if (term.as<Div>() == inner) continue;
            Expr scaled = Mul::make(term, make_const(t, *c1));
            numerator =
                negative ? Expr(Sub::make(numerator, scaled)) : Expr(Add::make(numerator, scaled));
        }
        return simplify(Div::make(numerator, make_const(t, *c1 * *c)));
    }
};

// Writes a difference of mins and maxes as maxes and mins of differences, subtrahend first:
// min(p1, p2) - min(r1, r2) is max(min(p1 - r1, p2 - r1), min(p1 - r2, p2 - r2)), exactly, so
// that each difference can pair quotients of one value (the window of a thread between two
// clamped reads). At most `budget` differences, since each level doubles them.
class PairDifferences : public IRMutator {
    using IRMutator::visit;
    int budget = 64;
    Expr visit(const Sub *op) override {
        Expr a = mutate(op->a), b = mutate(op->b);
        return pair(a, b);
    }
    Expr pair(const Expr &a, const Expr &b) {
        if (budget > 0) {
            if (const Min *m = b.as<Min>())
                return (--budget, Max::make(pair(a, m->a), pair(a, m->b)));
            if (const Max *m = b.as<Max>())
                return (--budget, Min::make(pair(a, m->a), pair(a, m->b)));
            if (const Min *m = a.as<Min>())
                return (--budget, Min::make(pair(m->a, b), pair(m->b, b)));
            if (const Max *m = a.as<Max>())
                return (--budget, Max::make(pair(m->a, b), pair(m->b, b)));
        }
        return simplify(Sub::make(a, b));
    }
};

} // namespace

namespace {

class SimplifyUnder : public IRMutator {
public:
    explicit SimplifyUnder(const std::vector<Expr> &facts) {
        // Each fact as a difference known to be at least zero.
        for (const Expr &f : facts) {
            if (!f.type().is_bool() || !f.type().is_scalar()) continue;
            if (const LT *lt = f.as<LT>()) {
                if (lt->a.type().is_int())
                    slacks.push_back(
                        simplify(Sub::make(Sub::make(lt->b, lt->a), make_one(lt->a.type()))));
            } else if (const LE *le = f.as<LE>()) {
                if (le->a.type().is_int()) slacks.push_back(simplify(Sub::make(le->b, le->a)));
            }
        }
    }
    bool any() const { return !slacks.empty(); }

private:
    std::vector<Expr> slacks;
    using IRMutator::visit;

    // Whether a <= b follows from a fact: b - a is the fact's slack plus a constant >= 0.
    bool at_most(const Expr &a, const Expr &b) const {
        if (!a.type().is_int() || !a.type().is_scalar()) return false;
        Expr gap = Sub::make(b, a);
        for (const Expr &slack : slacks) {
            if (slack.type() != a.type()) continue;
            auto c = as_const_int(simplify(Sub::make(gap, slack)));
            if (c && *c >= 0) return true;
        }
        return false;
    }
    Expr visit(const Min *op) override {
        Expr a = mutate(op->a), b = mutate(op->b);
        if (at_most(a, b)) return a;
        if (at_most(b, a)) return b;
        return Min::make(a, b);
    }
    Expr visit(const Max *op) override {
        Expr a = mutate(op->a), b = mutate(op->b);
        if (at_most(b, a)) return a;
        if (at_most(a, b)) return b;
        return Max::make(a, b);
    }
};

} // namespace

Expr simplify_under(const Expr &e, const std::vector<Expr> &facts) {
    SimplifyUnder s(facts);
    return s.any() ? simplify(s.mutate(e)) : e;
}

std::optional<int64_t> constant_upper_bound(const Expr &e) {
    // The smallest of the bounds each form of e shows, trying the next form only while the
    // bound is large (one from the range of a type: x / 8 is below 2^28).
    const int64_t small = int64_t(1) << 20;
    std::optional<int64_t> best;
    auto found = [&](std::optional<int64_t> c) {
        if (c && (!best || *c < *best)) best = c;
        return best && *best <= small;
    };
    Expr s = simplify(e);
    if (found(upper_bound_of(s))) return best;
    if (found(upper_bound_of(simplify(DistributeIntoMinMax().mutate(s))))) return best;
    if (found(upper_bound_of(simplify(RoundDownAsRemainder().mutate(s))))) return best;
    const Expr merged = simplify(DistributeIntoMinMax().mutate(MergeNestedQuotients().mutate(s)));
    if (found(upper_bound_of(merged))) return best;
    // Whatever the values of its symbols: the difference of two quotients of one value,
    // x / 2 - (x - 3) / 2 + 1 (the points a thread reads of f(x / 2) and f((x - 3) / 2)).
    // Only a small bound counts here: one from the range of the symbols' type bounds nothing
    // a kernel holds.
    Scope<Interval> anything;
    for (const std::string &v : free_vars(s))
        anything.push(v, Interval::everything());
    // Pairing before distributing also keeps the two ends of a clamped window apart:
    // min(t + 3, e) - min(t - 2, min(t, e) - 1) is at most 5 (t - 2 against t + 3, e - 1
    // against e), where min(t + 3 - m, e - m) of the distributed form bounds neither side.
    for (const Expr &form : {s, PairDifferences().mutate(merged),
                             PairDifferences().mutate(MergeNestedQuotients().mutate(s))}) {
        const Interval i = bounds_of_expr_in_scope(form, anything);
        const auto c = i.has_upper_bound() ? as_const_int(simplify(i.max)) : std::nullopt;
        if (c && *c <= small && found(c)) return best;
    }
    return best;
}

bool contains_intrinsic(const Stmt &s, Intrinsic op) {
    bool found = false;
    visit_each<Call>(s, [&](const Call *c) { found = found || c->is_intrinsic(op); });
    return found;
}

std::optional<int64_t> step_along(const Expr &e, const std::string &var) {
    Expr next = substitute(var, Add::make(Variable::make(Int(32), var), make_one(Int(32))), e);
    return as_const_int(simplify(Sub::make(next, e)));
}

void LetTracker::visit(const LetStmt *op) {
    op->value.accept(this);
    lets.emplace_back(op->name, op->value);
    op->body.accept(this);
    lets.pop_back();
}

Expr LetTracker::expand(const Expr &e) const {
    return substitute_lets(lets, e);
}

Stmt LetTrackingMutator::visit(const LetStmt *op) {
    Expr value = mutate(op->value);
    lets.emplace_back(op->name, value);
    Stmt body = mutate(op->body);
    lets.pop_back();
    return LetStmt::make(op->name, value, body);
}

Expr LetTrackingMutator::expand(const Expr &e) const {
    return substitute_lets(lets, e);
}

std::optional<int64_t> LetTracker::element_count_bound(const std::vector<Expr> &extents) const {
    int64_t n = 1;
    for (const Expr &e : extents) {
        auto c = constant_upper_bound(expand(e));
        if (!c) return std::nullopt;
        n *= std::max<int64_t>(*c, 0);
        if (n > (int64_t(1) << 40)) return n;
    }
    return n;
}

namespace {

class ThreadLoopBounds : public LetTracker {
public:
    std::array<int64_t, 3> bounds{1, 1, 1};

private:
    using LetTracker::visit;
    void visit(const For *op) override {
        if (op->for_type == ForType::GPUThread) {
            if (auto e = constant_upper_bound(expand(op->extent))) {
                int64_t &b = bounds[size_t(op->gpu_dim)];
                b = std::max(b, *e);
            }
        }
        IRVisitor::visit(op);
    }
};

} // namespace

std::array<int64_t, 3> thread_loop_bounds(const Stmt &s,
                                          const std::vector<std::pair<std::string, Expr>> &lets) {
    ThreadLoopBounds v;
    v.lets = lets;
    s.accept(&v);
    return v.bounds;
}

std::string product_text(const std::vector<Expr> &extents) {
    std::ostringstream s;
    for (size_t i = 0; i < extents.size(); i++)
        s << (i ? " * " : "") << extents[i];
    return extents.empty() ? "1" : with_user_loop_names(s.str());
}

std::string symbols_clause(const std::string &text) {
    const std::string symbols = symbols_for_users(text);
    return symbols.empty() ? "" : " (" + symbols + ")";
}

bool contains_loop_type(const Stmt &s, ForType t) {
    bool found = false;
    visit_each<For>(s, [&](const For *op) { found = found || op->for_type == t; });
    return found;
}

std::vector<const For *> block_loop_nest(const For *outer, std::set<std::string> *bound) {
    std::vector<const For *> nest;
    Stmt s = outer;
    while (true) {
        if (const LetStmt *l = s.as<LetStmt>()) {
            if (bound) bound->insert(l->name);
            s = l->body;
            continue;
        }
        const For *f = s.as<For>();
        if (!f || f->for_type != ForType::GPUBlock) break;
        if (bound) bound->insert(f->name);
        nest.push_back(f);
        s = f->body;
    }
    return nest;
}

} // namespace lowering
} // namespace aicf
