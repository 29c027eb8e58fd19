// Min and max rules of the simplifier: decided from bounds, chains of them pruned and
// factored (arithmetic: Simplify_Arith.cpp).

#include "dsl/ir/IREquality.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/SimplifyInternal.h"

#include <functional>
#include <vector>

namespace aicf {
namespace ir {
namespace simplify_detail {

Expr Simplify::build_min(const Expr &a, const Expr &b) {
    return min_or_max(a, b, true);
}
Expr Simplify::build_max(const Expr &a, const Expr &b) {
    return min_or_max(a, b, false);
}

Expr Simplify::min_or_max(const Expr &a, const Expr &b, bool is_min) {
    IRNodeType op = is_min ? IRNodeType::Min : IRNodeType::Max;
    if (Expr f = fold_binary(op, a, b); f.defined()) return f;
    Type t = a.type();
    auto make = [&](const Expr &x, const Expr &y) {
        return is_min ? Min::make(x, y) : Max::make(x, y);
    };
    if (!t.is_int_or_uint()) {
        // Float min/max are not reordered: the NaN behaviour may depend on operand order.
        if (equal(a, b)) return a;
        const Broadcast *ba = a.as<Broadcast>(), *bb = b.as<Broadcast>();
        if (ba && bb) return Broadcast::make(min_or_max(ba->value, bb->value, is_min), t.lanes);
        return make(a, b);
    }
    if (is_const(a) && !is_const(b)) return min_or_max(b, a, is_min);
    if (equal(a, b)) return a;
    const Broadcast *ba = a.as<Broadcast>(), *bb = b.as<Broadcast>();
    if (ba && bb) return Broadcast::make(min_or_max(ba->value, bb->value, is_min), t.lanes);

    // The type's own limits: min(x, type_max) == x, min(x, type_min) == type_min.
    if (auto c = const_bits(b)) {
        Type et = t.element_of();
        bool at_max =
            et.is_uint() ? static_cast<uint64_t>(*c) == et.max_uint() : *c == et.max_int();
        bool at_min = et.is_uint() ? *c == 0 : *c == et.min_int();
        if (at_max) return is_min ? a : b;
        if (at_min) return is_min ? b : a;
    }

    // Decide from bounds: a <= b everywhere makes min(a, b) == a.
    ConstBounds ia = bounds_of(a), ib = bounds_of(b);
    if (ia.has_max && ib.has_min && ia.max <= ib.min) return is_min ? a : b;
    if (ib.has_max && ia.has_min && ib.max <= ia.min) return is_min ? b : a;
    if (no_overflow(t) && t.is_scalar()) {
        LinearForm diff = linear_combine(linear_form(a), linear_form(b), -1);
        ConstBounds d = bounds_of_linear(diff);
        bool decided = (d.has_max && d.max <= 0) || (d.has_min && d.min >= 0);
        if (!decided && !diff.terms.empty()) {
            d = symbolic_bounds(linear_rebuild(diff));
            decided = (d.has_max && d.max <= 0) || (d.has_min && d.min >= 0);
        }
        if (!decided && !diff.terms.empty()) d = relaxed_bounds(diff);
        if (d.has_max && d.max <= 0) return is_min ? a : b;
        if (d.has_min && d.min >= 0) return is_min ? b : a;
        // Quotients by the same constant, compared through their numerators.
        if (provably_le(diff)) return is_min ? a : b;
        if (provably_le(linear_scale(diff, -1))) return is_min ? b : a;
    }

    auto operands = [&](const Expr &e, bool want_min, Expr &x, Expr &y) {
        if (want_min) {
            if (const Min *m = e.as<Min>()) {
                x = m->a;
                y = m->b;
                return true;
            }
        } else if (const Max *m = e.as<Max>()) {
            x = m->a;
            y = m->b;
            return true;
        }
        return false;
    };
    Expr x, y;
    // min(min(x, c1), c2) == min(x, min(c1, c2))
    if (is_const(b) && operands(a, is_min, x, y) && is_const(y)) {
        return min_or_max(x, min_or_max(y, b, is_min), is_min);
    }
    // min(min(x, y) * c, z) == min(x * c, z) for a constant c > 0 where y * c >= z (a clamped
    // tile index times the tile size, clamped again to the last tile's start: the first clamp
    // is then idle), and max alike; where the products cannot wrap.
    if (no_overflow(t) && t.is_scalar()) {
        for (int order = 0; order < 2; order++) {
            const Expr &p = order == 0 ? a : b, &z = order == 0 ? b : a;
            const Mul *m = p.as<Mul>();
            const auto c = m ? const_bits(m->b) : std::nullopt;
            if (!c || *c <= 0 || !operands(m->a, is_min, x, y)) continue;
            for (int side = 0; side < 2; side++) {
                const Expr &kept = side == 0 ? x : y, &clamp = side == 0 ? y : x;
                const ConstBounds d = bounds_of(build_sub(build_mul(clamp, m->b), z));
                if (is_min ? (d.has_min && d.min >= 0) : (d.has_max && d.max <= 0))
                    return min_or_max(build_mul(kept, m->b), z, is_min);
            }
        }
    }
    // min(a, min(a, y)) == min(a, y), and min(a, max(a, y)) == a.
    if (operands(b, is_min, x, y) && (equal(x, a) || equal(y, a))) return b;
    if (operands(a, is_min, x, y) && (equal(x, b) || equal(y, b))) return a;
    if (operands(b, !is_min, x, y) && (equal(x, a) || equal(y, a))) return a;
    if (operands(a, !is_min, x, y) && (equal(x, b) || equal(y, b))) return b;

    if (Expr factored = factor_min_max_chain(a, b, is_min); factored.defined()) return factored;
    if (no_overflow(t) && t.is_scalar()) {
        if (Expr pruned = prune_min_max_chain(a, b, is_min); pruned.defined()) return pruned;
    }
    if (!is_const(b) && compare_exprs(a, b) > 0) return make(b, a);
    return make(a, b);
}

bool Simplify::provably_le(const LinearForm &difference) {
    const ConstBounds d = upper_bound_pairing_divisions(difference, 3);
    return d.has_max && d.max <= 0;
}

ConstBounds Simplify::upper_bound_pairing_divisions(const LinearForm &l, int depth) {
    ConstBounds r = ConstBounds::point(l.constant);
    std::vector<bool> paired(l.terms.size(), false);
    for (size_t i = 0; i < l.terms.size() && r.has_max; i++) {
        if (paired[i]) continue;
        const Term &ti = l.terms[i];
        const Div *di = ti.e.as<Div>();
        const auto c = di && depth > 0 ? positive_const(di->b) : std::nullopt;
        for (size_t j = i + 1; c && j < l.terms.size(); j++) {
            const Div *dj = l.terms[j].e.as<Div>();
            if (paired[j] || !dj || l.terms[j].coeff != -ti.coeff || !equal(dj->b, di->b)) continue;
            // k * (floor(A / c) - floor(B / c)) is at most k * ceil(max(A - B) / c) for k > 0,
            // k * floor(min(A - B) / c) for k < 0.
            const Expr &A = ti.coeff > 0 ? di->a : dj->a, &B = ti.coeff > 0 ? dj->a : di->a;
            const ConstBounds m = upper_bound_pairing_divisions(
                linear_combine(linear_form(A), linear_form(B), -1), depth - 1);
            if (!m.has_max) continue;
            const ConstBounds divisor = ConstBounds::point(*c);
            const ConstBounds ceil =
                bounds_negate(bounds_div(bounds_negate(ConstBounds::point(m.max)), divisor));
            const int64_t k = ti.coeff > 0 ? ti.coeff : -ti.coeff;
            r = bounds_add(r, bounds_mul(ceil, ConstBounds::point(k)));
            paired[i] = paired[j] = true;
            break;
        }
        if (!paired[i])
            r = bounds_add(r, bounds_mul(bounds_of(ti.e), ConstBounds::point(ti.coeff)));
    }
    return r;
}

Expr Simplify::factor_min_max_chain(const Expr &a, const Expr &b, bool is_min) {
    // The region a clamped stencil reads is such a chain, one clamped point per operand
    // (max(x, max(min(x + 1, 36), 0), max(min(x - 1, 36), 0), ...)), and each stage of a chain
    // of them computed at one loop nests the next one's region in every operand: factored,
    // the region of five stages of a 3-D stencil keeps two copies of the next one's, not four.
    const size_t most = 16;
    std::vector<Expr> operands;
    bool opposite = false; // whether some operand is a max (min)
    bool dropped = false;  // whether an operand equal to another one was left out
    std::function<bool(const Expr &)> flatten = [&](const Expr &e) {
        const Min *mn = e.as<Min>();
        const Max *mx = e.as<Max>();
        if (is_min ? mn != nullptr : mx != nullptr)
            return flatten(is_min ? mn->a : mx->a) && flatten(is_min ? mn->b : mx->b);
        for (const Expr &o : operands)
            if (equal(o, e)) return dropped = true;
        opposite = opposite || (is_min ? mx != nullptr : mn != nullptr);
        operands.push_back(e);
        return operands.size() <= most;
    };
    if (!flatten(a) || !flatten(b)) return Expr();
    auto sides = [&](const Expr &e, Expr &x, Expr &y) {
        if (const Min *m = e.as<Min>(); m && !is_min) {
            x = m->a;
            y = m->b;
            return true;
        }
        if (const Max *m = e.as<Max>(); m && is_min) {
            x = m->a;
            y = m->b;
            return true;
        }
        return false;
    };
    bool merged = false;
    for (size_t i = 0; opposite && i < operands.size(); i++) {
        Expr xi, yi;
        if (!sides(operands[i], xi, yi)) continue;
        for (size_t j = i + 1; j < operands.size(); j++) {
            Expr xj, yj;
            if (!sides(operands[j], xj, yj)) continue;
            const Expr *shared = nullptr, *ri = nullptr, *rj = nullptr;
            for (int k = 0; k < 4 && !shared; k++) {
                const Expr &si = k & 1 ? yi : xi, &sj = k & 2 ? yj : xj;
                if (!equal(si, sj)) continue;
                shared = &si;
                ri = k & 1 ? &xi : &yi;
                rj = k & 2 ? &xj : &yj;
            }
            if (!shared) continue;
            operands[i] = min_or_max(min_or_max(*ri, *rj, is_min), *shared, !is_min);
            operands.erase(operands.begin() + j);
            merged = true;
            break;
        }
        if (merged) break;
    }
    if (!merged && !dropped) return Expr();
    Expr r;
    for (size_t i = operands.size(); i-- > 0;)
        r = r.defined() ? min_or_max(operands[i], r, is_min) : operands[i];
    return r;
}

Expr Simplify::prune_min_max_chain(const Expr &a, const Expr &b, bool is_min) {
    // Bounds of a region read at many points are such chains: one operand per point.
    const size_t most = 16;
    std::vector<Expr> operands;
    bool chained = false;
    std::function<bool(const Expr &)> flatten = [&](const Expr &e) {
        const Min *mn = e.as<Min>();
        const Max *mx = e.as<Max>();
        if (is_min ? mn != nullptr : mx != nullptr) {
            chained = true;
            return flatten(is_min ? mn->a : mx->a) && flatten(is_min ? mn->b : mx->b);
        }
        operands.push_back(e);
        return operands.size() <= most;
    };
    if (!flatten(a) || !flatten(b) || !chained) return Expr();
    // An operand is idle where another one is at least as small (large), the first of equals
    // kept.
    std::vector<bool> idle(operands.size(), false);
    bool any = false;
    for (size_t i = 0; i < operands.size(); i++) {
        for (size_t j = 0; j < operands.size() && !idle[i]; j++) {
            if (i == j || idle[j]) continue;
            const Expr &lo = is_min ? operands[j] : operands[i];
            const Expr &hi = is_min ? operands[i] : operands[j];
            // Orders plain bounds decide are left to the rules that match chains.
            const LinearForm diff = linear_combine(linear_form(lo), linear_form(hi), -1);
            const ConstBounds plain = bounds_of_linear(diff);
            if ((plain.has_max && plain.max <= 0) || !provably_le(diff)) continue;
            if (j > i && provably_le(linear_scale(diff, -1))) continue; // equal: the later goes
            idle[i] = any = true;
        }
    }
    if (!any) return Expr();
    // Built again operand by operand, into the form simplifying it again would give.
    Expr r;
    for (size_t i = operands.size(); i-- > 0;) {
        if (!idle[i]) r = r.defined() ? min_or_max(operands[i], r, is_min) : operands[i];
    }
    return r;
}

Expr Simplify::visit(const Min *op) {
    return build_min(mutate(op->a), mutate(op->b));
}
Expr Simplify::visit(const Max *op) {
    return build_max(mutate(op->a), mutate(op->b));
}

} // namespace simplify_detail
} // namespace ir
} // namespace aicf
