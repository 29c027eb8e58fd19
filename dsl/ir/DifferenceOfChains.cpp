#include "dsl/ir/DifferenceOfChains.h"

#include "dsl/ir/IREquality.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/SimplifyInternal.h"

#include <algorithm>
#include <climits>
#include <vector>

namespace aicf {
namespace ir {

// Constant ends of a - b where a and b are chains of min (or max) over values a constant
// apart: min(max(y + 8, 0), 29) - min(max(y - 1, 0), 29) lies in [0, 9], and
// min(t + 31, e) - min(t, t + 1, e) in [0, 31] (clamped windows of one size, wherever they
// lie). For min chains A and B: min(A) - min(B) is at most a - b* for b* the smallest of B
// and any a of A, and at least a* - b for a* the smallest of A and any b; max alike. A value
// that is no chain is a chain of one. Quotients by one positive constant d differ by the
// difference of their dividends over d, rounded outwards: (e + 1) / 2 - e / 2 lies in [0, 1]
// (a region read through x / 2, at either parity of its start). For types that do not wrap.
DifferenceRange difference_of_chains(const Expr &a, const Expr &b, int &budget) {
    // A budget of steps: region bounds nest min and max deeply, and every pair of operands
    // is compared.
    if (--budget < 0) return {};
    if (equal(a, b)) return {0, 0};
    const Div *qa = a.as<Div>(), *qb = b.as<Div>();
    if (qa && qb) {
        const auto d = as_const_int(qa->b);
        if (!d || *d <= 0 || !equal(qa->b, qb->b)) return {};
        const DifferenceRange n = difference_of_chains(qa->a, qb->a, budget);
        DifferenceRange q;
        // floor(x / d) - floor(y / d) lies in [floor((x - y) / d), ceil((x - y) / d)].
        if (n.lo) q.lo = div_euclid(*n.lo, *d);
        if (n.hi && *n.hi > INT64_MIN) q.hi = -div_euclid(-*n.hi, *d);
        return q;
    }
    const bool is_min = a.as<Min>() || b.as<Min>();
    const bool is_max = a.as<Max>() || b.as<Max>();
    if (!is_min && !is_max) {
        // As linear forms, which say when a constant wrapped (max(x, INT64_MIN + 1) against
        // INT64_MAX differs by no int64).
        const simplify_detail::LinearForm l = simplify_detail::linear_combine(
            simplify_detail::linear_form(a), simplify_detail::linear_form(b), -1);
        if (l.wrapped || !l.terms.empty()) return {};
        return {l.constant, l.constant};
    }
    // Min chains first (a clamp's outer operation when both kinds are there).
    auto operands = [&](const Expr &e, bool min_chain) {
        std::vector<Expr> out, pending{e};
        while (!pending.empty() && out.size() <= 8) {
            Expr x = pending.back();
            pending.pop_back();
            const Min *mn = x.as<Min>();
            const Max *mx = x.as<Max>();
            if (min_chain && mn) {
                pending.push_back(mn->b), pending.push_back(mn->a);
            } else if (!min_chain && mx) {
                pending.push_back(mx->b), pending.push_back(mx->a);
            } else {
                out.push_back(x);
            }
        }
        return pending.empty() ? out : std::vector<Expr>();
    };
    const bool min_chain = is_min;
    const std::vector<Expr> as = operands(a, min_chain), bs = operands(b, min_chain);
    if (as.empty() || bs.empty() || (as.size() == 1 && bs.size() == 1)) return {};
    std::vector<std::vector<DifferenceRange>> d(as.size(), std::vector<DifferenceRange>(bs.size()));
    for (size_t i = 0; i < as.size(); i++)
        for (size_t j = 0; j < bs.size(); j++)
            d[i][j] = difference_of_chains(as[i], bs[j], budget);
    // For min chains: hi = max over b of (min over a of hi), lo = min over a of (max over b
    // of lo). For max chains the roles of a and b swap.
    auto reduce = [&](bool outer_over_b, bool want_hi) -> std::optional<int64_t> {
        const size_t outer_n = outer_over_b ? bs.size() : as.size();
        const size_t inner_n = outer_over_b ? as.size() : bs.size();
        std::optional<int64_t> result;
        for (size_t o = 0; o < outer_n; o++) {
            std::optional<int64_t> best;
            for (size_t k = 0; k < inner_n; k++) {
                const DifferenceRange &r = outer_over_b ? d[k][o] : d[o][k];
                const std::optional<int64_t> &v = want_hi ? r.hi : r.lo;
                if (v) best = best ? (want_hi ? std::min(*best, *v) : std::max(*best, *v)) : v;
            }
            if (!best) return std::nullopt;
            result =
                result ? (want_hi ? std::max(*result, *best) : std::min(*result, *best)) : best;
        }
        return result;
    };
    DifferenceRange r;
    r.hi = reduce(min_chain, true);
    r.lo = reduce(!min_chain, false);
    return r;
}

DifferenceRange difference_of_chains(const Expr &a, const Expr &b) {
    // Types whose arithmetic wraps have no such ranges.
    const Type t = a.type();
    if (!t.is_int() || !simplify_detail::no_overflow(t) || t != b.type()) return {};
    int budget = 64;
    return difference_of_chains(a, b, budget);
}

} // namespace ir
} // namespace aicf
