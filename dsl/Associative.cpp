#include "dsl/Associative.h"
#include "dsl/OperatorChains.h"

#include "dsl/base/Error.h"
#include "dsl/ir/IREquality.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRVisitor.h"
#include "dsl/ir/Simplify.h"
#include "dsl/ir/Substitute.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

namespace aicf {

using namespace ir;

namespace {

// a + b or b + a (and the same for *), compared structurally.
bool matches_commutative(const Expr &e, IRNodeType op, const Expr &a, const Expr &b) {
    Expr l, r;
    if (op == IRNodeType::Add && e.as<Add>())
        l = e.as<Add>()->a, r = e.as<Add>()->b;
    else if (op == IRNodeType::Mul && e.as<Mul>())
        l = e.as<Mul>()->a, r = e.as<Mul>()->b;
    else
        return false;
    return (equal(l, a) && equal(r, b)) || (equal(l, b) && equal(r, a));
}

bool is_exp_of(const Expr &e, const Expr &arg) {
    const Call *c = e.as<Call>();
    return c && c->is_intrinsic(Intrinsic::exp) && c->args.size() == 1 && equal(c->args[0], arg);
}

struct Self {
    const std::string &func;
    const std::vector<Expr> &args;

    bool is(const Expr &e, int index) const {
        const Call *c = e.as<Call>();
        if (!c || c->call_type != Call::Func || c->name != func || c->value_index != index)
            return false;
        for (size_t i = 0; i < args.size(); i++)
            if (!equal(c->args[i], args[i])) return false;
        return true;
    }

    bool mentioned_in(const Expr &e) const {
        bool found = false;
        visit_each_distinct<Call>(e, [&](const Call *c) {
            found = found || (c->call_type == Call::Func && c->name == func);
        });
        return found;
    }

    // The element-wise pattern op(self_i, x) or op(x, self_i); for integers and bools also a
    // chain of op holding self_i once, as the simplifier regroups it: (self + a) + 5.
    bool match_binary(const Expr &v, int i, Combiner &op, Expr &x) const {
        if (const Sub *sub = v.as<Sub>(); sub && is(sub->a, i) && !mentioned_in(sub->b)) {
            // self - b is self + (-b) (f -= e): a sum of the negated values. For floats
            // -0.0 - b negates b exactly, zeros included.
            const Type t = sub->b.type();
            op = Combiner::Add;
            x = Sub::make(t.is_float() ? make_const(t, -0.0) : make_zero(t), sub->b);
            return true;
        }
        Expr a, b;
        if (std::optional<Combiner> found = binary_operation(v, a, b)) {
            op = *found;
            if (is(a, i) && !mentioned_in(b)) return x = b, true;
            if (is(b, i) && !mentioned_in(a)) return x = a, true;
        }
        std::optional<OperatorChain> chain = operator_chain(v);
        if (!chain) return false;
        std::vector<std::pair<Expr, bool>> rest;
        int selves = 0;
        for (const auto &operand : chain->operands) {
            if (is(operand.first, i) && !operand.second)
                selves++;
            else if (mentioned_in(operand.first))
                return false;
            else
                rest.push_back(operand);
        }
        if (selves != 1 || rest.empty()) return false;
        op = chain->op;
        x = combine_chain(op, rest);
        return true;
    }

    // The self call at element i, as it appears in `v` (a Call node that compares equal).
    Expr call(const std::vector<Expr> &values, int i) const {
        Expr found;
        for (const Expr &v : values) {
            visit_each_distinct<Call>(v, [&](const Call *c) {
                if (!found.defined() && is(Expr(c), i)) found = Expr(c);
            });
        }
        return found;
    }
};

// Whether `s` is self_i * exp(self0 - m') + exp(x - m'), or that with the last term times a
// weight w that reads no current value (exp(x - m') * w), in either operand order: `weight`
// is then w (undefined for none). m' (`new_max`, a max) may be spelled max(m, x) or max(x, m)
// in either term.
bool is_rescaled_sum(const Expr &s, const Expr &self0, const Expr &self_i, const Expr &x,
                     const Expr &new_max, const Self &self, Expr &weight) {
    const Add *add = s.as<Add>();
    if (!add) return false;
    std::vector<Expr> maxes = {new_max};
    if (const Max *m = new_max.as<Max>()) maxes.push_back(Max::make(m->b, m->a));
    auto exp_less_max = [&](const Expr &e, const Expr &a) {
        for (const Expr &m : maxes)
            if (is_exp_of(e, Sub::make(a, m))) return true;
        return false;
    };
    for (int flip = 0; flip < 2; flip++) {
        const Expr &scaled = flip ? add->b : add->a, &fresh = flip ? add->a : add->b;
        const Mul *mul = scaled.as<Mul>();
        if (!mul) continue;
        Expr w;
        if (!exp_less_max(fresh, x)) {
            const Mul *weighted = fresh.as<Mul>();
            if (!weighted) continue;
            if (exp_less_max(weighted->a, x))
                w = weighted->b;
            else if (exp_less_max(weighted->b, x))
                w = weighted->a;
            else
                continue;
            if (self.mentioned_in(w)) continue;
        }
        const bool rescaled = (equal(mul->a, self_i) && exp_less_max(mul->b, self0)) ||
                              (equal(mul->b, self_i) && exp_less_max(mul->a, self0));
        if (rescaled) {
            weight = w;
            return true;
        }
    }
    return false;
}

Expr identity_of(Combiner op, Type t) {
    switch (op) {
    case Combiner::Add:
    case Combiner::Or:
    case Combiner::BitOr:
    case Combiner::BitXor:
        return make_zero(t); // false for bools
    case Combiner::Mul:
        return make_one(t);
    case Combiner::Min:
        return type_max(t);
    case Combiner::Max:
        return type_min(t);
    case Combiner::And:
        return make_one(t); // true
    case Combiner::BitAnd:
        // Every bit set: -1 of a signed type, the largest value of an unsigned one (true).
        return t.is_int() ? make_const(t, int64_t(-1)) : type_max(t);
    }
    internal_error << "identity of an unknown Combiner";
    return Expr();
}

} // namespace

bool AssociativeUpdate::commutative() const {
    if (kind == Grouped) {
        for (const Part &p : parts)
            if (!p.form.commutative()) return false;
        return true;
    }
    // (Kept: every partial holds the identity, so the order of merges changes nothing.)
    return kind == Replace ? !positions.empty() : kind != Welford;
}

bool AssociativeUpdate::order_dependent() const {
    if (kind == Grouped) {
        for (const Part &p : parts)
            if (p.form.order_dependent()) return true;
        return false;
    }
    return kind == Replace && positions.empty();
}

bool AssociativeUpdate::compares() const {
    if (kind == Grouped) {
        for (const Part &p : parts)
            if (p.form.compares()) return true;
        return false;
    }
    return kind == Replace;
}

bool AssociativeUpdate::keeps_positions() const {
    if (kind == Grouped) {
        for (const Part &p : parts)
            if (p.form.keeps_positions()) return true;
        return false;
    }
    return kind == Replace && !positions.empty();
}

std::vector<Expr> AssociativeUpdate::identity(const std::vector<Type> &types) const {
    if (kind == Grouped) {
        std::vector<Expr> init(types.size());
        for (const Part &p : parts) {
            std::vector<Type> sub;
            for (int i : p.elements)
                sub.push_back(types[size_t(i)]);
            std::vector<Expr> part_init = p.form.identity(sub);
            for (size_t k = 0; k < p.elements.size(); k++)
                init[size_t(p.elements[k])] = part_init[k];
        }
        return init;
    }
    std::vector<Expr> init;
    for (size_t i = 0; i < types.size(); i++) {
        Type t = types[i];
        if (kind == Binary) {
            init.push_back(identity_of(ops[i], t));
        } else if (kind == Welford || kind == Kept) {
            init.push_back(make_zero(t)); // no elements: count, mean and squares all 0
        } else if (kind == RescaledSum) {
            // No elements yet: the max of nothing, and an empty sum.
            init.push_back(i == 0 ? type_min(t) : make_zero(t));
        } else if (std::find(positions.begin(), positions.end(), int(i)) != positions.end()) {
            // A position that loses every tie: before all points when the later candidate
            // wins, after all when the earlier one does.
            init.push_back(ties_to_candidate ? type_min(t) : type_max(t));
        } else {
            // The candidate that loses every comparison (or ties, where the later candidate
            // wins a tie): the worst value where the condition compares, anything elsewhere.
            init.push_back(larger_wins ? type_min(t) : type_max(t));
        }
    }
    return init;
}

namespace {

// A Grouped form's `each(part's form, a's elements of the part, b's)` for every part, its
// results put back in the part's elements.
template <typename F>
std::vector<Expr> per_group(const std::vector<AssociativeUpdate::Part> &parts,
                            const std::vector<Expr> &a, const std::vector<Expr> &b, F each) {
    std::vector<Expr> values(a.size());
    for (const AssociativeUpdate::Part &p : parts) {
        std::vector<Expr> pa, pb;
        for (int i : p.elements)
            pa.push_back(a[size_t(i)]), pb.push_back(b[size_t(i)]);
        std::vector<Expr> out = each(p.form, pa, pb);
        for (size_t k = 0; k < p.elements.size(); k++)
            values[size_t(p.elements[k])] = out[k];
    }
    return values;
}

} // namespace

std::vector<Expr> AssociativeUpdate::merge(const std::vector<Expr> &current,
                                           const std::vector<Expr> &incoming) const {
    internal_assert(current.size() == incoming.size()) << "merge of Tuples of different sizes";
    if (kind == Grouped) {
        return per_group(parts, current, incoming,
                         [](const AssociativeUpdate &form, const std::vector<Expr> &a,
                            const std::vector<Expr> &b) { return form.merge(a, b); });
    }
    if (kind == Kept) return current;
    std::vector<Expr> values;
    if (kind == Binary) {
        for (size_t i = 0; i < current.size(); i++)
            values.push_back(combine(ops[i], current[i], incoming[i]));
    } else if (kind == Welford) {
        // Chan et al.'s merge of two summaries; an empty side leaves the other as it is (no
        // 0 / 0).
        // (The count may be an integer: it takes part in the rest as a float.)
        const Expr &na = current[0], &ma = current[1], &sa = current[2];
        const Expr &nb = incoming[0], &mb = incoming[1], &sb = incoming[2];
        const Type t = ma.type();
        auto real = [&](const Expr &e) { return e.type() == t ? e : Cast::make(t, e); };
        Expr n = Add::make(na, nb), d = Sub::make(mb, ma);
        Expr m = Add::make(ma, Div::make(Mul::make(d, real(nb)), real(n)));
        Expr s = Add::make(
            Add::make(sa, sb),
            Div::make(Mul::make(Mul::make(d, d), Mul::make(real(na), real(nb))), real(n)));
        Expr a_empty = EQ::make(na, make_zero(na.type())),
             b_empty = EQ::make(nb, make_zero(nb.type()));
        std::vector<Expr> merged = {n, m, s};
        for (size_t i = 0; i < 3; i++)
            values.push_back(
                Select::make(b_empty, current[i], Select::make(a_empty, incoming[i], merged[i])));
    } else if (kind == RescaledSum) {
        // Both sums rescaled to the larger of the two maxima.
        Type t = current[0].type();
        Expr m = Max::make(current[0], incoming[0]);
        // (A sum already at the larger maximum stays as it is: two empty states, whose
        // maxima are both -inf, merge to an empty state rather than to exp(-inf + inf).)
        auto rescale = [&](const Expr &sum, const Expr &max) {
            return Select::make(EQ::make(max, m), sum,
                                Mul::make(sum, Call::make(t, Intrinsic::exp, {Sub::make(max, m)})));
        };
        values.push_back(m);
        for (size_t i = 1; i < current.size(); i++)
            values.push_back(
                Add::make(rescale(current[i], current[0]), rescale(incoming[i], incoming[0])));
    } else {
        // The same comparison, of the incoming element against the current one.
        const Expr &c = incoming[size_t(compared)], &s = current[size_t(compared)];
        Expr cond = larger_wins ? (ties_to_candidate ? GE::make(c, s) : GT::make(c, s))
                                : (ties_to_candidate ? LE::make(c, s) : LT::make(c, s));
        // A NaN beats a number; of two NaNs the earlier stays (a tie, ties_to_candidate false).
        const Expr c_nan =
            nan_wins ? Call::make(Bool(c.type().lanes), Intrinsic::is_nan, {c}) : Expr();
        const Expr s_nan =
            nan_wins ? Call::make(Bool(s.type().lanes), Intrinsic::is_nan, {s}) : Expr();
        if (nan_wins) cond = Or::make(cond, And::make(c_nan, Not::make(s_nan)));
        if (!positions.empty()) {
            // Better, or equal and later (earlier) by position, compared outermost first.
            Expr by_position;
            for (auto it = positions.rbegin(); it != positions.rend(); ++it) {
                const Expr &pi = incoming[size_t(*it)], &pc = current[size_t(*it)];
                Expr wins = ties_to_candidate ? GT::make(pi, pc) : LT::make(pi, pc);
                by_position = by_position.defined()
                                  ? Or::make(wins, And::make(EQ::make(pi, pc), by_position))
                                  : wins;
            }
            Expr better = larger_wins ? GT::make(c, s) : LT::make(c, s);
            Expr same = EQ::make(c, s);
            if (nan_wins) {
                better = Or::make(better, And::make(c_nan, Not::make(s_nan)));
                same = Or::make(same, And::make(c_nan, s_nan));
            }
            cond = Or::make(better, And::make(same, by_position));
        }
        for (size_t i = 0; i < current.size(); i++)
            values.push_back(Select::make(cond, incoming[i], current[i]));
    }
    return values;
}

std::vector<Expr> AssociativeUpdate::merge_after(const std::vector<Expr> &current,
                                                 const std::vector<Expr> &incoming) const {
    internal_assert(current.size() == incoming.size()) << "merge of Tuples of different sizes";
    if (kind == Grouped) {
        return per_group(parts, current, incoming,
                         [](const AssociativeUpdate &form, const std::vector<Expr> &a,
                            const std::vector<Expr> &b) { return form.merge_after(a, b); });
    }
    if (kind != Replace || positions.empty()) return merge(current, incoming);
    const Expr &c = incoming[size_t(compared)], &s = current[size_t(compared)];
    Expr better = larger_wins ? GT::make(c, s) : LT::make(c, s);
    if (nan_wins) {
        Expr c_nan = Call::make(Bool(c.type().lanes), Intrinsic::is_nan, {c});
        Expr s_nan = Call::make(Bool(s.type().lanes), Intrinsic::is_nan, {s});
        better = Or::make(better, And::make(c_nan, Not::make(s_nan)));
    }
    Expr cond = better;
    if (ties_to_candidate) {
        // (A partial with no point holds the identity's position, before every point.)
        const Expr &p = incoming[size_t(positions[0])];
        Expr had_point = NE::make(p, type_min(p.type()));
        cond = Or::make(better, And::make(EQ::make(c, s), had_point));
    }
    std::vector<Expr> values;
    for (size_t i = 0; i < current.size(); i++)
        values.push_back(Select::make(cond, incoming[i], current[i]));
    return values;
}

std::vector<Expr> AssociativeUpdate::partial_step(const std::vector<Expr> &current,
                                                  const std::vector<Expr> &values) const {
    internal_assert(current.size() == values.size()) << "partial step of Tuples of different sizes";
    if (kind == Grouped) {
        std::vector<Expr> step = values;
        for (const Part &p : parts) {
            std::vector<Expr> c, v;
            for (int i : p.elements)
                c.push_back(current[size_t(i)]), v.push_back(values[size_t(i)]);
            std::vector<Expr> part = p.form.partial_step(c, v);
            for (size_t k = 0; k < p.elements.size(); k++)
                step[size_t(p.elements[k])] = part[k];
        }
        return step;
    }
    if (kind != RescaledSum) return values;
    // A point of -inf adds exp(-inf - m') = 0 to any sum whose maximum is a number, and is
    // an empty state of its own: a partial of such points only stays empty (as written, the
    // first would give exp(-inf + inf), NaN).
    // With a weight w (exp(x - m') * w), the point's sum is w.
    Type t = values[1].type();
    const Expr masked = EQ::make(x[0], type_min(x[0].type()));
    std::vector<Expr> point = {x[0]};
    for (size_t i = 1; i < x.size(); i++)
        point.push_back(Select::make(masked, make_zero(t), x[i]));
    return merge(current, point);
}

namespace {

// One of the forms above for the whole Tuple.
std::optional<AssociativeUpdate> find_one_form(const std::string &func,
                                               const std::vector<Expr> &args,
                                               const std::vector<Expr> &v,
                                               const std::vector<std::string> &domain) {
    const Self self{func, args};
    AssociativeUpdate r;
    // Elements left as they are.
    bool kept = true;
    for (size_t i = 0; i < v.size() && kept; i++)
        kept = self.is(v[i], int(i));
    if (kept) {
        r.kind = AssociativeUpdate::Kept;
        return r;
    }
    r.kind = AssociativeUpdate::Binary;
    bool binary = true;
    for (size_t i = 0; i < v.size() && binary; i++) {
        Combiner op;
        Expr x;
        binary = self.match_binary(v[i], int(i), op, x);
        r.ops.push_back(op);
        r.x.push_back(x);
    }
    if (binary) return r;
    // The streaming softmax pair, and its sums beside: {m' = max(m, x), s * exp(m - m') +
    // exp(x - m'), a * exp(m - m') + exp(x - m') * w, ...} (flash attention's running output).
    bool rescaled = v.size() >= 2 && v[0].type().is_float();
    for (size_t i = 1; i < v.size(); i++)
        rescaled = rescaled && v[i].type() == v[0].type();
    if (rescaled) {
        Combiner op;
        Expr x;
        Expr self0 = self.call(v, 0);
        rescaled = self0.defined() && self.match_binary(v[0], 0, op, x) && op == Combiner::Max;
        std::vector<Expr> weights = {x};
        for (size_t i = 1; rescaled && i < v.size(); i++) {
            Expr self_i = self.call(v, int(i)), w;
            rescaled = self_i.defined() && is_rescaled_sum(v[i], self0, self_i, x, v[0], self, w);
            weights.push_back(w.defined() ? w : make_one(v[0].type()));
        }
        if (rescaled) {
            r = AssociativeUpdate();
            r.kind = AssociativeUpdate::RescaledSum;
            r.x = weights;
            return r;
        }
    }
    // Welford's step, in either operand order: n' = n + 1, m' = m + (x - m) / n',
    // M' = M + (x - m) * (x - m'). The count n is of the mean's type, or an integer that the
    // step converts to it.
    if (v.size() == 3 && v[1].type().is_float() && v[1].type().is_scalar() &&
        v[2].type() == v[1].type() &&
        (v[0].type() == v[1].type() ||
         (v[0].type().is_int_or_uint() && !v[0].type().is_bool() && v[0].type().is_scalar()))) {
        Expr n = self.call(v, 0), m = self.call(v, 1), s = self.call(v, 2);
        auto sides = [](const Expr &e, const Expr &known, Expr &other) {
            const Add *a = e.as<Add>();
            if (!a) return false;
            if (equal(a->a, known))
                other = a->b;
            else if (equal(a->b, known))
                other = a->a;
            else
                return false;
            return true;
        };
        Expr one, step, product;
        if (n.defined() && m.defined() && s.defined() && sides(v[0], n, one) && is_const(one, 1) &&
            sides(v[1], m, step) && sides(v[2], s, product)) {
            const Div *div = step.as<Div>();
            const Sub *dx = div ? div->a.as<Sub>() : nullptr;
            const Mul *mul = product.as<Mul>();
            const Cast *count = div ? div->b.as<Cast>() : nullptr;
            const bool by_count =
                div && (equal(div->b, v[0]) ||
                        (count && count->type == v[1].type() && equal(count->value, v[0])));
            if (dx && equal(dx->b, m) && by_count && !self.mentioned_in(dx->a) && mul) {
                const Expr &x = dx->a;
                Expr before = Sub::make(x, m), after = Sub::make(x, v[1]);
                if (matches_commutative(product, IRNodeType::Mul, before, after)) {
                    r = AssociativeUpdate();
                    r.kind = AssociativeUpdate::Welford;
                    r.x = {x};
                    return r;
                }
            }
        }
    }
    // Replacement: the candidate x replaces the current value where it compares better with
    // element j (argmax, argmin): every other value is select(c, x_i, self_i) or
    // select(c, self_i, x_i) with one comparison c of x_j and self_j, and element j is that
    // select too, or max(self_j, x_j) / min(self_j, x_j).
    r = AssociativeUpdate();
    r.kind = AssociativeUpdate::Replace;
    r.x.resize(v.size());
    Expr c;               // the comparison
    bool c_keeps = false; // whether c true keeps the current values
    int extreme = -1;     // the element that is max(self, x) or min(self, x), if any
    Combiner extreme_op = Combiner::Max;
    for (size_t i = 0; i < v.size(); i++) {
        if (const Select *sel = v[i].as<Select>()) {
            bool keeps = self.is(sel->true_value, int(i));
            const Expr &other = keeps ? sel->false_value : sel->true_value;
            if (!(keeps ? true : self.is(sel->false_value, int(i))) || self.mentioned_in(other))
                return std::nullopt;
            if (!c.defined()) {
                c = sel->condition;
                c_keeps = keeps;
            } else if (!equal(c, sel->condition) || keeps != c_keeps) {
                return std::nullopt;
            }
            r.x[i] = other;
            continue;
        }
        Combiner op;
        Expr x;
        if (extreme >= 0 || !self.match_binary(v[i], int(i), op, x) ||
            (op != Combiner::Max && op != Combiner::Min))
            return std::nullopt;
        extreme = int(i);
        extreme_op = op;
        r.x[i] = x;
    }
    if (!c.defined()) return std::nullopt;
    // `c || (is_nan(x) && !is_nan(current))`: a NaN candidate wins over a number (argmax).
    Expr nan_candidate, nan_current;
    if (const Or *o = c.as<Or>()) {
        for (const auto &[cmp, clause] : {std::pair(o->a, o->b), std::pair(o->b, o->a)}) {
            const And *both = clause.as<And>();
            const Not *n = both ? both->b.as<Not>() : nullptr;
            const Call *x_nan = both ? both->a.as<Call>() : nullptr;
            const Call *cur_nan = n ? n->a.as<Call>() : nullptr;
            if (x_nan && cur_nan && x_nan->is_intrinsic(Intrinsic::is_nan) &&
                cur_nan->is_intrinsic(Intrinsic::is_nan)) {
                nan_candidate = x_nan->args[0];
                nan_current = cur_nan->args[0];
                c = cmp;
                break;
            }
        }
        if (!nan_candidate.defined() || c_keeps) return std::nullopt;
    }
    // c as a comparison of the candidate with the current value of some element j.
    Expr lhs, rhs;
    bool less = false, strict = false;
    if (const LT *o = c.as<LT>())
        lhs = o->a, rhs = o->b, less = true, strict = true;
    else if (const LE *o = c.as<LE>())
        lhs = o->a, rhs = o->b, less = true;
    else if (const GT *o = c.as<GT>())
        lhs = o->a, rhs = o->b, strict = true;
    else if (const GE *o = c.as<GE>())
        lhs = o->a, rhs = o->b;
    else
        return std::nullopt;
    for (size_t j = 0; j < v.size(); j++) {
        if (!r.x[j].defined()) continue;
        bool forward = equal(lhs, r.x[j]) && self.is(rhs, int(j));
        bool backward = equal(rhs, r.x[j]) && self.is(lhs, int(j));
        if (!forward && !backward) continue;
        // "candidate < current" etc., with the candidate on the left.
        bool cand_less = forward ? less : !less;
        // The relation under which the candidate replaces the current values.
        bool wins_less = c_keeps ? !cand_less : cand_less;
        bool wins_strict = c_keeps ? !strict : strict;
        if (extreme >= 0 && (extreme != int(j) || (extreme_op == Combiner::Max) == wins_less))
            return std::nullopt; // max(self, x) with a candidate that wins by being smaller
        if (nan_candidate.defined()) {
            // The NaN clause about the same candidate and element, the first NaN kept.
            if (!equal(nan_candidate, r.x[j]) || !self.is(nan_current, int(j)) || !wins_strict ||
                extreme >= 0)
                return std::nullopt;
            r.nan_wins = true;
        }
        r.compared = int(j);
        r.larger_wins = !wins_less;
        r.ties_to_candidate = !wins_strict;
        // The elements whose candidate is each variable of the domain, outermost first.
        for (const std::string &name : domain) {
            int found = -1;
            for (size_t i = 0; i < v.size() && found < 0; i++) {
                const Variable *var = r.x[i].defined() ? r.x[i].as<Variable>() : nullptr;
                if (var && var->name == name && int(i) != r.compared && var->type.is_int())
                    found = int(i);
            }
            if (found < 0) {
                r.positions.clear();
                break;
            }
            r.positions.push_back(found);
        }
        return r;
    }
    return std::nullopt;
}

// Calls to `func` with their element renumbered by `index` (old element -> new).
class RenumberElements : public IRMutator {
public:
    RenumberElements(const std::string &func, const std::map<int, int> &index)
        : func(func), index(index) {}

private:
    const std::string &func;
    const std::map<int, int> &index;
    using IRMutator::visit;
    Expr visit(const Call *op) override {
        Expr e = IRMutator::visit(op);
        const Call *c = e.as<Call>();
        if (c->call_type != Call::Func || c->name != func) return e;
        auto it = index.find(c->value_index);
        internal_assert(it != index.end()) << "element outside its group";
        return Call::make_func(c->type, c->name, c->args, c->func, it->second);
    }
};

// The groups of elements that read only each other's current values (an argmax pair beside
// a count): smallest element first in each, groups in order of their first element.
std::vector<std::vector<int>> independent_groups(const std::string &func,
                                                 const std::vector<Expr> &v) {
    std::vector<int> group(v.size());
    for (size_t i = 0; i < v.size(); i++)
        group[i] = int(i);
    std::function<int(int)> root = [&](int i) {
        return group[i] == i ? i : group[i] = root(group[i]);
    };
    for (size_t i = 0; i < v.size(); i++) {
        visit_each_distinct<Call>(v[i], [&](const Call *c) {
            if (c->call_type != Call::Func || c->name != func) return;
            if (c->value_index < 0 || size_t(c->value_index) >= v.size()) return;
            int a = root(int(i)), b = root(c->value_index);
            group[std::max(a, b)] = std::min(a, b);
        });
    }
    std::map<int, std::vector<int>> by_root;
    for (size_t i = 0; i < v.size(); i++)
        by_root[root(int(i))].push_back(int(i));
    std::vector<std::vector<int>> groups;
    for (auto &g : by_root)
        groups.push_back(g.second);
    return groups;
}

} // namespace

std::optional<AssociativeUpdate> find_associative_update(const std::string &func,
                                                         const std::vector<Expr> &args,
                                                         const std::vector<Expr> &v,
                                                         const std::vector<std::string> &domain) {
    std::optional<AssociativeUpdate> whole = find_one_form(func, args, v, domain);
    if (whole || v.size() < 2) return whole;
    // Elements that do not read each other reduce independently: each group may have a form
    // of its own (an argmax pair and a count), recognized with its elements renumbered.
    std::vector<std::vector<int>> groups = independent_groups(func, v);
    if (groups.size() < 2) return std::nullopt;
    AssociativeUpdate r;
    r.kind = AssociativeUpdate::Grouped;
    for (const std::vector<int> &g : groups) {
        std::map<int, int> index;
        for (size_t k = 0; k < g.size(); k++)
            index[g[k]] = int(k);
        RenumberElements renumber(func, index);
        std::vector<Expr> values;
        for (int i : g)
            values.push_back(renumber.mutate(v[size_t(i)]));
        std::optional<AssociativeUpdate> part = find_one_form(func, args, values, domain);
        if (!part) return std::nullopt;
        r.parts.push_back({g, *part});
    }
    return r;
}

std::optional<AssociativeUpdate> update_form(const Definition &d, const std::string &func,
                                             const std::vector<Expr> &args,
                                             const std::vector<Expr> &values,
                                             const std::vector<std::string> &domain) {
    if (d.merges) return *d.merges->form;
    return find_associative_update(func, args, values, domain);
}

std::vector<std::string> domain_outermost_first(const ReductionDomain &rdom) {
    std::vector<std::string> names;
    if (!rdom.defined()) return names;
    for (auto it = rdom.domain().rbegin(); it != rdom.domain().rend(); ++it)
        names.push_back(it->var);
    return names;
}

std::string associative_forms(const std::string &func) {
    return func + " = " + func +
           " op x for op in +, *, min, max, && and || of bools, & | ^ of integers "
           "(element-wise on Tuples), Tuples updated by "
           "select(better, candidate, current) such as argmax (or {max(a, v), select(v < a, i, "
           "k)}), the streaming softmax pair {m' = max(m, x), s * exp(m - m') + exp(x - m')} "
           "(with more elements after s such as a * exp(m - m') + exp(x - m') * v, flash "
           "attention's running output), "
           "Welford's {n + 1, m + (x - m) / (n + 1), M + (x - m) * (x - m')} (its count n a "
           "float, or an integer divided as cast<float>(n + 1)), and Tuples whose elements "
           "form groups that read only each other, each group one of these (an argmax pair and "
           "a count) or elements left as they are";
}

namespace {

// The loops `loop` comes from, back through the splits and fuses that made it (a split may
// reuse its old name); `fused` tells whether a fuse is among them.
std::set<std::string> loops_behind(const Definition &d, const std::string &loop, bool &fused) {
    std::set<std::string> behind = {loop};
    fused = false;
    for (auto sp = d.schedule.splits.rbegin(); sp != d.schedule.splits.rend(); ++sp) {
        if (sp->kind == Split::FuseVars) {
            if (!behind.count(sp->old_var)) continue;
            fused = true;
            behind.insert({sp->inner, sp->outer});
        } else if (behind.count(sp->outer) ||
                   (sp->kind == Split::SplitVar && behind.count(sp->inner))) {
            behind.insert(sp->old_var);
        }
    }
    return behind;
}

// The reduction variable of d's RDom that `loop` comes from; none for a fused loop or a pure
// variable's.
std::optional<std::string> reduction_variable_of(const Definition &d, const std::string &loop) {
    if (!d.rdom.defined()) return std::nullopt;
    bool fused = false;
    const std::set<std::string> behind = loops_behind(d, loop, fused);
    if (fused) return std::nullopt;
    for (const ReductionVariable &rv : d.rdom.domain())
        if (behind.count(rv.var)) return rv.var;
    return std::nullopt;
}

} // namespace

bool writes_points_along(const Definition &d, const std::string &loop) {
    if (!d.rdom.defined()) return false;
    bool fused = false;
    const std::set<std::string> behind = loops_behind(d, loop, fused);
    for (const ReductionVariable &rv : d.rdom.domain()) {
        if (!behind.count(rv.var)) continue;
        for (const Expr &a : d.args)
            if (uses_var(a, rv.var)) return true;
    }
    return false;
}

bool iterations_touch_disjoint_points(const Definition &d, const std::string &loop,
                                      const std::string &func,
                                      const std::vector<std::string> &pure) {
    const std::optional<std::string> found = reduction_variable_of(d, loop);
    if (!found) return false;
    const std::string &r = *found;
    std::set<std::string> vars(pure.begin(), pure.end());
    for (const ReductionVariable &rv : d.rdom.domain())
        vars.insert(rv.var);
    // The arguments on the left that give each iteration points of its own: a constant
    // times the loop's variable plus terms free of the update's variables.
    std::vector<size_t> own;
    const Expr rv = Variable::make(Int(32), r);
    for (size_t i = 0; i < d.args.size(); i++) {
        // The same variable without its domain, which rv lacks.
        const Expr a = substitute(r, rv, d.args[i]);
        const Expr step =
            simplify(Sub::make(substitute(r, Add::make(rv, make_one(Int(32))), a), a));
        auto c = as_const_int(step);
        if (c && *c != 0 && !uses_vars(simplify(Sub::make(a, Mul::make(rv, step))), vars))
            own.push_back(i);
    }
    // Reads of the Func at the point written, or elsewhere in the slice of points the
    // iteration owns (a scan along r.x in rows r.y reads f(r.x - 1, r.y)), see only what the
    // iteration itself writes.
    bool reads_elsewhere = false;
    // Compared by the variables' names: the predicate's may come from the domain before
    // where() gave it the predicate.
    auto plain = [&](Expr e) {
        for (const ReductionVariable &v : d.rdom.domain())
            e = substitute(v.var, Variable::make(Int(32), v.var), e);
        return e;
    };
    auto look = [&](const Expr &e, bool in_predicate) {
        visit_each<Call>(e, [&](const Call *c) {
            if (c->call_type != Call::Func || c->name != func) return;
            const bool mine = c->args.size() == d.args.size();
            bool same = mine && !in_predicate;
            for (size_t i = 0; same && i < c->args.size(); i++)
                same = equal(c->args[i], d.args[i]);
            // (In the where() predicate too: it is decided before the iteration writes.)
            bool in_slice = false;
            for (size_t i : own)
                in_slice = in_slice || (mine && equal(plain(c->args[i]), plain(d.args[i])));
            reads_elsewhere = reads_elsewhere || !(same || in_slice);
        });
    };
    for (const Expr &v : d.values)
        look(v, false);
    for (const Expr &a : d.args)
        look(a, false);
    if (d.rdom.predicate().defined()) look(d.rdom.predicate(), true);
    return !own.empty() && !reads_elsewhere;
}

} // namespace aicf
