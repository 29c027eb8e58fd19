#include "dsl/ir/Interval.h"

#include "dsl/ir/IREquality.h"

#include "dsl/base/Error.h"
#include "dsl/ir/Simplify.h"

#include <algorithm>
#include <vector>

namespace aicf {
namespace ir {

namespace {

// The terms of a chain of mins (or maxes): min(min(a, b), c) has a, b and c.
void chain_terms(const Expr &e, bool is_min, std::vector<Expr> &terms) {
    if (const Min *m = is_min ? e.as<Min>() : nullptr) {
        chain_terms(m->a, is_min, terms);
        chain_terms(m->b, is_min, terms);
    } else if (const Max *m = is_min ? nullptr : e.as<Max>()) {
        chain_terms(m->a, is_min, terms);
        chain_terms(m->b, is_min, terms);
    } else {
        terms.push_back(e);
    }
}

// Both ends must exist for a union end to exist: an unbounded side stays unbounded.
Expr union_end(const Expr &a, const Expr &b, bool is_min) {
    if (!a.defined() || !b.defined()) return Expr();
    if (a.same_as(b)) return a;
    // Terms `a` has already add nothing. (The region of a chain of inlined stages unions
    // thousands of reads with a few distinct ends; simplifying each union anew compared every
    // new term with the whole chain.)
    std::vector<Expr> have, add;
    chain_terms(a, is_min, have);
    chain_terms(b, is_min, add);
    if (std::all_of(add.begin(), add.end(), [&](const Expr &t) {
            return std::any_of(have.begin(), have.end(),
                               [&](const Expr &h) { return h.same_as(t) || equal(h, t); });
        }))
        return a;
    return simplify(is_min ? Min::make(a, b) : Max::make(a, b));
}

// One missing end means no constraint from that side.
Expr intersection_end(const Expr &a, const Expr &b, bool is_min) {
    if (!a.defined()) return b;
    if (!b.defined()) return a;
    if (a.same_as(b)) return a;
    return simplify(is_min ? Max::make(a, b) : Min::make(a, b));
}

} // namespace

bool Interval::is_single_point() const {
    return min.defined() && max.defined() && equal(min, max);
}

Interval interval_union(const Interval &a, const Interval &b) {
    return Interval(union_end(a.min, b.min, true), union_end(a.max, b.max, false));
}

Interval interval_intersection(const Interval &a, const Interval &b) {
    return Interval(intersection_end(a.min, b.min, true), intersection_end(a.max, b.max, false));
}

Box box_union(const Box &a, const Box &b) {
    if (a.empty()) return b;
    if (b.empty()) return a;
    internal_assert(a.size() == b.size())
        << "box_union of boxes with " << a.size() << " and " << b.size() << " dimensions";
    Box result(a.size());
    for (size_t i = 0; i < a.size(); i++)
        result[i] = interval_union(a[i], b[i]);
    return result;
}

} // namespace ir
} // namespace aicf
