#ifndef AICF_IR_IR_OPERATOR_H
#define AICF_IR_IR_OPERATOR_H

// Small helpers over IR values used throughout lowering: constants, their recognition, and
// node builders that keep vector lanes consistent.

#include "dsl/ir/IR.h"
#include "dsl/ir/Scope.h"

#include <optional>

namespace aicf {
namespace ir {

// A constant of type t (broadcast when t is a vector).
Expr make_const(Type t, int64_t v);
Expr make_const(Type t, double v);
Expr make_zero(Type t);
Expr make_one(Type t);
Expr const_true(int lanes = 1);
Expr const_false(int lanes = 1);

// The value of an integer constant (looking through Broadcast), if it is one.
std::optional<int64_t> as_const_int(const Expr &e);
std::optional<uint64_t> as_const_uint(const Expr &e);
std::optional<double> as_const_float(const Expr &e);
bool is_const(const Expr &e);
bool is_const(const Expr &e, int64_t v);
bool is_const_zero(const Expr &e);
bool is_const_one(const Expr &e);
bool is_true(const Expr &e);
bool is_false(const Expr &e);
bool is_positive_const(const Expr &e);
bool is_negative_const(const Expr &e);

// Converts e to type t, folding constants and doing nothing when the types agree.
Expr cast(Type t, Expr e);
// Broadcasts a scalar to `lanes` lanes (identity when lanes == 1).
Expr broadcast(Expr e, int lanes);
// The vector of scalars of one type (the make_vector intrinsic; the scalar itself for one),
// and lane i of a vector (extract_element; lane i of a make_vector folds to its argument).
Expr make_vector(const std::vector<Expr> &scalars);
Expr extract_element(const Expr &v, int i);

// A scalar int32 expression evaluated in int64: its additions, subtractions, products, mins,
// maxes, divisions and remainders are redone wide, so that a bound such as x + 5 near the top
// of the int32 range does not wrap; anything else of type int32 is computed as it is and then
// widened. Other types are returned unchanged.
Expr widen_int32(const Expr &e);

// An assertion that `value`, a schedule's value known only at run time, is positive; its
// RuntimeError names `what` ("modulus that align_bounds(x) gives f").
Stmt assert_positive(const Expr &value, const std::string &what);

// The number of nodes of e walked as a tree, or limit + 1 when it has more: a node shared n
// times counts n times, as every walk that does not remember the nodes it has seen meets it.
// An expression that uses a value twice per step is exponentially larger as a tree than as a
// graph. A variable named in `lets` counts as the size given there (that of the let's value,
// for the size e would have with the lets substituted). Stops counting at the limit, so it
// costs at most `limit` steps.
int64_t tree_size(const Expr &e, int64_t limit, const Scope<int64_t> &lets = Scope<int64_t>());
// Whether e, walked as a tree, has more than `limit` nodes.
bool tree_larger_than(const Expr &e, int64_t limit);

// The descriptor argument of a buffer: "b.buffer".
std::string buffer_descriptor_name(const std::string &buffer);

// How a statement refers to the storage `name`: its loads, its stores, and every other
// reference (its address or descriptor as a variable, a call or an allocation of that name).
struct StorageReferences {
    int loads = 0, stores = 0, others = 0;
    int total() const { return loads + stores + others; }
};
StorageReferences storage_references(const Stmt &s, const std::string &name);

// Logical helpers that fold constants.
Expr make_and(Expr a, Expr b);
Expr make_or(Expr a, Expr b);
// The terms of a conjunction (a && b && c: a, b, c), in order; e itself when it is no And.
std::vector<Expr> conjuncts(const Expr &e);

// The largest and smallest values of a type, as constants.
Expr type_max(Type t);
Expr type_min(Type t);

// Euclidean integer division and remainder on C++ values: the semantics of Div and Mod on
// integers (0 <= a % b < |b|, and a == (a / b) * b + a % b; both are 0 when b == 0).
int64_t div_euclid(int64_t a, int64_t b);
int64_t mod_euclid(int64_t a, int64_t b);

} // namespace ir
} // namespace aicf

#endif
