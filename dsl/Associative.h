#ifndef AICF_DSL_ASSOCIATIVE_H
#define AICF_DSL_ASSOCIATIVE_H

// Recognizing updates that combine a Func's current value with new ones associatively, so
// that the new values may be reduced in pieces and the pieces merged: rfactor and the
// cross-thread reductions of GPU schedules rest on it.

#include "dsl/Function.h"
#include "dsl/ir/Expr.h"
#include "dsl/ir/IR.h"
#include "dsl/ir/Reduction.h"

#include <optional>
#include <string>
#include <vector>

namespace aicf {

// The operations a Binary update combines values with: the arithmetic ones, && and || of
// bools, and the bitwise ones of integers (or bools).
enum class Combiner { Add, Mul, Min, Max, And, Or, BitAnd, BitOr, BitXor };

struct AssociativeUpdate {
    enum Kind {
        Binary,      // values[i] = op_i(self_i, x[i]), op_i a Combiner
        Replace,     // the candidate x replaces every value where it compares better with
                     // element `compared` (argmax, argmin): values[i] = select(c, x[i], self_i)
                     // or select(c, self_i, x[i]) with one comparison c of x_j and self_j;
                     // element j may also be max(self_j, x_j) or min(self_j, x_j)
        RescaledSum, // {m' = max(m, x), s * exp(m - m') + exp(x - m')}: a streaming softmax,
                     // with more sums beside s, each a * exp(m - m') + exp(x - m') * w (the
                     // running output of flash attention)
        Welford,     // {n' = n + 1, m' = m + (x - m) / n', M' = M + (x - m) * (x - m')}: the
                     // count, mean and sum of squared deviations (Welford's algorithm)
        Grouped,     // groups of elements that read only each other's values, each group one
                     // of the forms above (`parts`): an argmax pair beside a count
        Kept,        // values[i] = self_i: elements the update leaves as they are (beside an
                     // argmax, in a group of their own). Their partial results stay at the
                     // identity and every merge keeps the earlier side, so that merging into
                     // the Func keeps its value.
    } kind = Binary;
    std::vector<Combiner> ops; // Binary
    // the new values (RescaledSum: x, then each sum's weight w, 1 where it has none)
    std::vector<ir::Expr> x;
    int compared = 0;               // Replace: the element compared,
    bool larger_wins = true;        // whether the larger candidate wins,
    bool ties_to_candidate = false; // and whether it wins a tie (the later one wins);
    // whether a NaN candidate beats every number, the first NaN staying (NumPy's argmax and
    // argmin: `c || (is_nan(x_j) && !is_nan(self_j))`, with ties to the earlier candidate)
    bool nan_wins = false;
    // Replace: the elements that hold the candidate's position, one per variable of the
    // reduction domain, outermost first (an argmax that keeps the index: select(c, r.x, i)).
    // With them, equal candidates are told apart by position, not by the order the merges
    // meet them in, so partial results may cover any points (every 32nd, across lanes) and
    // merge in any order. Empty when the update keeps no position.
    std::vector<int> positions;
    // Grouped: each group's elements (in order) and its form over them, renumbered from 0.
    struct Part;
    std::vector<Part> parts;

    // The value of each element before any new value arrives.
    std::vector<ir::Expr> identity(const std::vector<ir::Type> &types) const;

    // The result of reducing the values `current` summarizes and then those `incoming` does.
    std::vector<ir::Expr> merge(const std::vector<ir::Expr> &current,
                                const std::vector<ir::Expr> &incoming) const;

    // The same where `current` is not a partial result but what the Func held before the
    // update (its pure definition's value, or an earlier update's): it comes before every
    // point of the domain, so an argmax that keeps positions does not compare its position,
    // which may be anything (a label, an index of another domain), with theirs; a tie goes
    // to it unless the later candidate wins ties, and then only to a partial that has had a
    // point.
    std::vector<ir::Expr> merge_after(const std::vector<ir::Expr> &current,
                                      const std::vector<ir::Expr> &incoming) const;

    // The values with which a partial result that starts at the identity takes in one more
    // element: `values`, the update as written (in terms of the current values it reads),
    // except for the streaming softmax pair, which takes its element through merge(): {x, 1},
    // or {-inf, 0} for x = -inf (a masked point, which adds exp(-inf - m') = 0 to any sum).
    // Written s * exp(m - m') + exp(x - m'), a partial still at the identity (m = -inf) that
    // takes x = -inf computes exp(-inf + inf), NaN, where the serial loop, whose first point
    // sets m, may never meet it; through merge() a partial of only such points stays empty
    // ({-inf, 0}). Equal bit for bit where the update as written gives a number.
    std::vector<ir::Expr> partial_step(const std::vector<ir::Expr> &current,
                                       const std::vector<ir::Expr> &values) const;

    // Whether merge(a, b) equals merge(b, a) bit for bit. Replace chooses between equal
    // candidates by their order, unless it compares their positions.
    bool commutative() const;
    // Whether which of equal candidates the update keeps depends on the order it meets them
    // in: then each partial result must cover a consecutive run of the domain, merged in order.
    bool order_dependent() const;
    // Whether some elements keep one candidate by comparison (Replace, alone or in a group).
    bool compares() const;
    // Whether some elements keep the candidate's position (Replace, alone or in a group).
    bool keeps_positions() const;
};

struct AssociativeUpdate::Part {
    std::vector<int> elements;
    AssociativeUpdate form;
};

// The update `func(args) = values`, where calls to `func` at `args` read the current value,
// as an associative combination, or nothing when it is not one of the forms above.
// `domain` names the variables of the update's reduction domain as `values` spells them,
// outermost first: an argmax-style update keeps the candidate's position when an element's
// candidate is each of them.
std::optional<AssociativeUpdate>
find_associative_update(const std::string &func, const std::vector<ir::Expr> &args,
                        const std::vector<ir::Expr> &values,
                        const std::vector<std::string> &domain = {});

// The form of the update `d` of `func`, whose values (as written, or as lowered) are
// `values`: find_associative_update's, or for a merge of the partials rfactor made, the form
// of the update it replaced.
std::optional<AssociativeUpdate> update_form(const ir::Definition &d, const std::string &func,
                                             const std::vector<ir::Expr> &args,
                                             const std::vector<ir::Expr> &values,
                                             const std::vector<std::string> &domain = {});

// The names of the variables of `rdom` (none when undefined), outermost first: the `domain`
// of find_associative_update for a definition as the user wrote it.
std::vector<std::string> domain_outermost_first(const ir::ReductionDomain &rdom);

// Whether the point update `d` writes depends on a reduction variable that loop `loop` comes
// from: where none, the loop's iterations reduce into the same points (on GPU threads or
// lanes, a reduction across them).
bool writes_points_along(const ir::Definition &d, const std::string &loop);

// Whether the iterations of loop `loop` of update `d` of Func `func` (args `pure`) touch
// disjoint points of it, so that they may run at once or in any order: the loop comes from
// one reduction variable r alone (r, or loops split from it: a fused loop mixes another
// variable in), some argument on the left is c * r + e with c a nonzero constant and e free
// of the update's variables (each r writes its own points: its slice along that argument),
// and the update reads the Func only in the slice it writes (a scan along r.x in rows r.y
// reads f(r.x - 1, r.y), also in its where() predicate).
bool iterations_touch_disjoint_points(const ir::Definition &d, const std::string &loop,
                                      const std::string &func,
                                      const std::vector<std::string> &pure);

// The forms find_associative_update recognizes, for error messages about `func`.
std::string associative_forms(const std::string &func);

} // namespace aicf

#endif
