#ifndef AICF_IR_SIMPLIFY_INTERNAL_H
#define AICF_IR_SIMPLIFY_INTERNAL_H

// The simplifier's mutator, shared by its files: Simplify.cpp (entry points, scopes, constant
// bounds, linear forms), Simplify_Arith.cpp (arithmetic, min/max), Simplify_Calls.cpp (casts,
// vector constructors, loads, calls), Simplify_Logic.cpp (comparisons, logic, select) and
// Simplify_Stmts.cpp (statements, lets).
//
// Every `build_*` function takes operands that are already simplified and returns a simplified
// result without walking the operands again, so rules can combine pieces cheaply and no rule
// re-simplifies a whole subtree.

#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/Interval.h"
#include "dsl/ir/Scope.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace aicf {
namespace ir {
namespace simplify_detail {

// A range of integer values with constant ends; a missing end is unbounded.
struct ConstBounds {
    bool has_min = false, has_max = false;
    int64_t min = 0, max = 0;

    static ConstBounds point(int64_t v) { return range(v, v); }
    static ConstBounds range(int64_t lo, int64_t hi) {
        ConstBounds b;
        b.has_min = b.has_max = true;
        b.min = lo;
        b.max = hi;
        return b;
    }
    bool bounded() const { return has_min && has_max; }
    bool is_point() const { return bounded() && min == max; }
};

// Ends are combined in 128 bits; an end that leaves int64 becomes unbounded.
using i128 = __int128;
ConstBounds make_bounds(bool has_lo, i128 lo, bool has_hi, i128 hi);
ConstBounds bounds_add(const ConstBounds &a, const ConstBounds &b);
ConstBounds bounds_negate(const ConstBounds &a);
ConstBounds bounds_mul(const ConstBounds &a, const ConstBounds &b);
ConstBounds bounds_div(const ConstBounds &a, const ConstBounds &b);
ConstBounds bounds_mod(const ConstBounds &a, const ConstBounds &b);
ConstBounds bounds_min(const ConstBounds &a, const ConstBounds &b);
ConstBounds bounds_max(const ConstBounds &a, const ConstBounds &b);
ConstBounds bounds_union(const ConstBounds &a, const ConstBounds &b);
// The values of an integer type that fit in int64 (uint64 has no upper end here).
ConstBounds type_bounds(Type t);
// Bounds of a value computed in type t: types assumed not to overflow keep what fits; types
// that wrap fall back to their whole range when the computed range does not fit.
ConstBounds fit_to_type(const ConstBounds &b, Type t);

// Integer types whose arithmetic is assumed not to overflow (as in Halide): signed 32 and 64
// bits. Rules that are only true without wrap-around are limited to these.
inline bool no_overflow(Type t) {
    return t.is_int() && t.bits >= 32;
}
// Integer types whose sums are put into canonical linear form.
inline bool is_linear_type(Type t) {
    return t.is_int_or_uint() && t.bits > 1 && t.is_scalar();
}

// The value of an integer or unsigned constant (looking through Broadcast), as the int64 with
// the same bits.
std::optional<int64_t> const_bits(const Expr &e);
// The constant value of a scalar integer expression when it is a positive constant that fits
// in int64.
std::optional<int64_t> positive_const(const Expr &e);
// op (an arithmetic operation, min or max) of two constants of one type, folded as generated
// code computes it; undefined where either is not a constant, or the result is left to the
// target (a float min or max of a NaN).
Expr fold_binary(IRNodeType op, const Expr &a, const Expr &b);
// base, base + stride, ...; a broadcast where the stride is zero.
inline Expr make_ramp(const Expr &base, const Expr &stride, int lanes) {
    if (is_const_zero(stride)) return Broadcast::make(base, lanes);
    return Ramp::make(base, stride, lanes);
}
// The int64 with the bits of v (two's complement wrap-around).
inline int64_t wrapping(uint64_t v) {
    return static_cast<int64_t>(v);
}
// v reduced to t's width and sign-extended: the representative used for coefficients.
int64_t wrap_to_type(Type t, int64_t v);
int64_t gcd64(int64_t a, int64_t b);

// A total order on expressions that agrees with `equal`; it sorts the terms of sums.
int compare_exprs(const Expr &a, const Expr &b);

// sum(coeff * term) + constant over an integer type; terms are sorted by compare_exprs,
// distinct, non-constant and never Add/Sub/Mul-by-constant; coefficients are non-zero.
struct Term {
    Expr e;
    int64_t coeff;
};
struct LinearForm {
    Type type;
    std::vector<Term> terms;
    int64_t constant = 0;
    // A coefficient or the constant left the type's range (or int64) on the way and was
    // reduced modulo 2^bits: exact where arithmetic wraps, but for the types assumed not to
    // overflow the rebuilt sum can overflow where the original does not (x * 2 - INT_MIN
    // would become x * 2 + INT_MIN).
    bool wrapped = false;
};

LinearForm linear_form(const Expr &e);
// a + scale * b
LinearForm linear_combine(const LinearForm &a, const LinearForm &b, int64_t scale);
LinearForm linear_scale(const LinearForm &a, int64_t scale);
// Readable form: positive terms first, then the subtracted ones, the constant last.
Expr linear_rebuild(const LinearForm &l);

// Whether e contains a call with side effects (such an expression may not be dropped).
bool has_side_effects(const Expr &e);

class Simplify : public IRMutator {
public:
    explicit Simplify(const Scope<Interval> &bounds);
    // Copy short linear let values into their uses (simplify_for_codegen).
    bool substitute_linear_lets = false;

    using IRMutator::mutate;

    Expr build_add(const Expr &a, const Expr &b);
    // A sum in linear form as an expression, with the rest of the sum moved into a min or max
    // term where terms cancel there.
    Expr rebuild_sum(const LinearForm &l);
    static bool cancels(const LinearForm &side, const Expr &e, int64_t coeff, int depth);
    Expr build_sub(const Expr &a, const Expr &b);
    Expr build_mul(const Expr &a, const Expr &b);
    Expr build_div(const Expr &a, const Expr &b);
    Expr build_mod(const Expr &a, const Expr &b);
    Expr build_min(const Expr &a, const Expr &b);
    Expr build_max(const Expr &a, const Expr &b);
    Expr build_cast(Type t, const Expr &v);
    Expr build_lt(const Expr &a, const Expr &b);
    Expr build_le(const Expr &a, const Expr &b);
    Expr build_eq(const Expr &a, const Expr &b);
    Expr build_and(const Expr &a, const Expr &b);
    Expr build_or(const Expr &a, const Expr &b);
    Expr build_not(const Expr &a);
    Expr build_select(const Expr &c, const Expr &t, const Expr &f);

    // Constant bounds of a simplified integer expression, over all its lanes.
    ConstBounds bounds_of(const Expr &e);

private:
    ConstBounds bounds_of_node(const Expr &e);
    // The bounds found of each node since var_bounds last changed (a Binding made or ended
    // clears it), with the node kept alive so that its address is not reused. The simplifier
    // asks for the bounds of every node it builds, whose children it asked about before:
    // without it, a chain of n nodes would cost n^2.
    struct KnownBounds {
        Expr node;
        ConstBounds bounds;
    };
    std::unordered_map<const IRNode *, KnownBounds> known_bounds;
    // Known constant ranges of variables (user bounds, lets, loops).
    Scope<ConstBounds> var_bounds;
    // Symbolic ranges (user bounds and loop variables), used only when the constant bounds
    // cannot decide a comparison. `vars` are the names the interval mentions; an entry with an
    // undefined interval hides an outer one whose names were rebound.
    struct SymEntry {
        Interval interval;
        std::set<std::string> vars;
    };
    Scope<SymEntry> sym_bounds;
    // Let variables replaced by their values (constants, variables, and broadcasts and ramps of
    // those); undefined hides an outer replacement of the same name.
    Scope<Expr> replacements;
    // How many times each variable name was put in the output; an unchanged count tells an
    // unused let without walking its body.
    std::map<std::string, int> use_count;

    // The values of enclosing lets, so a let of the same value becomes a use of the
    // variable already holding it. An entry stays valid while every name it depends on (its
    // own, and its value's free variables) still refers to the same binding.
    struct LetValue {
        Expr value;
        std::string name;
        std::vector<std::pair<std::string, int>> deps; // name -> binding id
    };
    std::vector<LetValue> let_values;
    std::map<std::string, std::vector<int>> binding_ids; // innermost binding of each name
    int next_binding_id = 0;
    int current_binding(const std::string &name) const;
    // The variable of an enclosing let whose value equals `value`, if any.
    Expr enclosing_let_with_value(const Expr &value) const;
    // The value of the let that binds `name` now, if it is remembered (undefined otherwise).
    Expr let_value_of(const std::string &name) const;
    // l with each term that is a let variable of a linear value replaced by that value, to a
    // few levels: `let y = yo * 8 + m + 3 in y < m + 256` is decided by yo's range.
    LinearForm expand_let_terms(const LinearForm &l) const;
    // Storage allocated in the statement (by name, how many bindings deep), whose accesses'
    // indices simplify_for_codegen tries through the lets' values.
    std::map<std::string, int> allocations;
    // An access's index into such storage, with every enclosing let replaced by its value and
    // simplified again, when that is constant or smaller: a consumer's coordinates minus the
    // producer's `min_realized`, both lets of the same loop variables, cancel only through
    // their values. A constant index lets LLVM keep a small array in registers.
    Expr index_through_lets(const Expr &index) const;

    friend class Binding;

    // Constant bounds of a linear form, from the bounds of its terms.
    ConstBounds bounds_of_linear(const LinearForm &l);
    // Constant bounds of e through the symbolic ranges; the fallback when constant bounds do
    // not decide a comparison or a min/max.
    ConstBounds symbolic_bounds(const Expr &e);
    // Constant bounds of a linear form whose terms cancel only through bounds of its min, max
    // and division terms that are themselves linear: min(a, b) <= a, max(a, b) >= a, and
    // y - d + 1 <= (y / d) * d <= y for a constant d > 0. So min(e - 128,
    // max((e + 127) / 128 - 1, 0) * 128), the start of a region's last shifted tile, is e - 128
    // for every e.
    ConstBounds relaxed_bounds(const LinearForm &l);
    // Appends to `out` linear forms bounding l from above (or below), each l with some of its
    // min, max and division terms replaced by such bounds, `depth` replacements at most.
    void relax_terms(const LinearForm &l, bool upper, int depth, std::vector<LinearForm> &out);

    // The residue r of a ramp's base modulo c when every lane stays in [r, c) (Simplify_Arith).
    std::optional<int64_t> ramp_residue_within(const Ramp *ra, int64_t c) const;
    // Division and remainder of a scalar integer by a positive constant.
    Expr div_by_const(const Expr &a, int64_t c);
    Expr mod_by_const(const Expr &a, int64_t c);
    // `rest` has no term whose coefficient is a multiple of c, and 0 <= constant < c.
    Expr div_rest(const LinearForm &rest, int64_t c);
    Expr mod_rest(const Expr &rest, int64_t c);
    Expr min_or_max(const Expr &a, const Expr &b, bool is_min);
    // Whether a difference p - q is at most 0 wherever defined (so p <= q), through the upper
    // bound below.
    bool provably_le(const LinearForm &difference);
    // An upper bound of a linear form from the bounds of its terms, where a pair of terms
    // k * (A / c) - k * (B / c) with the same constant c > 0 is bounded through A - B
    // (floor(A / c) - floor(B / c) lies in [floor((A - B) / c), ceil((A - B) / c)]), `depth`
    // divisions deep: so (x + 13) / 16 + 1 >= (x + 15) / 16 for every x.
    ConstBounds upper_bound_pairing_divisions(const LinearForm &l, int depth);
    // min(a, b) (or max) where a or b is itself a chain of mins (maxes): the operands of both
    // with those another operand makes idle through pairs of divisions left out
    // (min(x/16, min(y, (x + 8)/16)) is min(x/16, y)); undefined when none is. Orders that
    // plain bounds decide stay for the rules that match chains (a clamp's
    // min(y, min(y + 11, 36)) keeps its inner min).
    Expr prune_min_max_chain(const Expr &a, const Expr &b, bool is_min);
    // min(a, b) (or max) where the chain of mins (maxes) of a and b has two operands that are
    // maxes (mins) sharing an operand: max(min(u, c), min(v, c)) == min(max(u, v), c), and
    // the chain with them merged; equal operands of the chain kept once. Undefined when there
    // are none.
    Expr factor_min_max_chain(const Expr &a, const Expr &b, bool is_min);
    // LT, LE or EQ of scalar integers that do not overflow, through a - b.
    Expr compare_linear(IRNodeType op, const Expr &a, const Expr &b);
    Expr fold_call(const Call *op, const std::vector<Expr> &args);

    template <typename LetNode, typename Body> Body simplify_let(const LetNode *op);

#define AICF_SIMPLIFY_EXPR_DECL(N) Expr visit(const N *op) override;
#define AICF_SIMPLIFY_STMT_DECL(N) Stmt visit(const N *op) override;
    AICF_FOR_EACH_EXPR(AICF_SIMPLIFY_EXPR_DECL)
    AICF_FOR_EACH_STMT(AICF_SIMPLIFY_STMT_DECL)
#undef AICF_SIMPLIFY_EXPR_DECL
#undef AICF_SIMPLIFY_STMT_DECL
};

// Binds a name for the lifetime of this object in all of the simplifier's scopes: its constant
// bounds, an optional replacement, and an optional symbolic interval. Symbolic intervals that
// mention the name are hidden, as the name now means something else.
class Binding {
public:
    Binding(Simplify &s, const std::string &name, const ConstBounds &bounds,
            const Expr &replacement = Expr(), const Interval &symbolic = Interval());
    ~Binding();
    Binding(const Binding &) = delete;
    Binding &operator=(const Binding &) = delete;

private:
    Simplify &s;
    std::string name;
    bool pushed_replacement = false;
    std::vector<std::string> pushed_sym;
};

} // namespace simplify_detail
} // namespace ir
} // namespace aicf

#endif
