#ifndef AICF_VAR_H
#define AICF_VAR_H

// Var: a pure variable, the argument of a Func (an int32 index over an infinite domain).

#include "dsl/ir/IR.h"

#include <string>

namespace aicf {

class Var {
public:
    // A Var with a fresh unique name.
    Var();
    explicit Var(const std::string &name);

    const std::string &name() const { return name_; }
    operator ir::Expr() const;

    bool same_as(const Var &o) const { return name_ == o.name_; }

private:
    std::string name_;
};

namespace detail {
// A fresh name with the given prefix ("f" -> "f0", "f1", ...), none that a user chose.
std::string unique_name(const std::string &prefix);
// Whether a user chose `name` after unique_name had handed it out: for the messages about
// two things of one name, one of them unnamed.
bool is_generated_name(const std::string &name);
// Checks that a user-chosen name is usable (non-empty, no '.' or '$', which AICF reserves
// for the names it derives), and records it for unique_name.
void check_user_name(const std::string &name, const char *what);
// Checks that a size a schedule is given (a split factor, a bound, an alignment) is known
// before any loop runs: built from constants, Params and input shapes, reading no Func and
// no loop variable. `what` names it in the message ("In the schedule of f, the split factor
// of x").
void check_schedule_size(const ir::Expr &e, const std::string &what);
} // namespace detail

} // namespace aicf

#endif
