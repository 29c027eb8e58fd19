#ifndef AICF_LOWERING_FUNC_PLACEMENT_H
#define AICF_LOWERING_FUNC_PLACEMENT_H

#include "dsl/Function.h"
#include "dsl/ir/IR.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace aicf {
namespace lowering {

// Where schedule_functions places a Func that is not inlined: the loop its LoopLevel names, or
// for an inline reduction the innermost loop around its uses; and the checks that the place
// encloses every use.

// The name of the loop a LoopLevel refers to: the loop over its variable in the last stage
// of its Func that has one. Empty if there is none.
std::string find_level_loop(const ir::Stmt &s, const LoopLevel &level);

// f and the inlined Funcs that call it, directly or through other inlined Funcs: until they
// are inlined (last), a call to any of them is a use of f.
std::set<std::string> names_that_use(const ir::Function &f,
                                     const std::vector<ir::Function> &outputs,
                                     const std::map<std::string, ir::Function> &env);

// Where an inline reduction's Func goes: inside the loops around all its uses, down to the
// innermost one its points depend on (a row's sum used at every point of the row goes in the
// loop over rows, not in the loop over the row's points, where each point would recompute
// it), and not into a vectorized or unrolled loop, whose body is one iteration of many in
// lockstep or copied. Uses inside a GPU kernel put it inside their thread loops (each thread
// reduces what it reads). "" for the root.
std::string innermost_loop_around_uses(const ir::Stmt &s, const std::set<std::string> &uses);

// The loops of `s` that contain a use (a call to one of `uses_of_f`), as a user names them,
// one per line, for a message listing where a Func could be computed.
std::string describe_valid_levels(const std::set<std::string> &uses_of_f, const ir::Stmt &s);

// Checks that every use of f (a call to f or to an inlined Func that calls it) is inside the
// produce or consume blocks of f, at the loop `site` where f is computed ("root" for the
// root). Inside its storage is not enough: a Func stored outside the loop it is computed in
// has storage around uses that run before it is computed. A CompileError names the stray
// call and how to fix it.
void check_uses_enclosed(const ir::Function &f, const std::set<std::string> &uses_of_f,
                         const ir::Stmt &s, const std::string &site,
                         const std::map<std::string, ir::Function> &env);

} // namespace lowering
} // namespace aicf

#endif
