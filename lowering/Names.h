#ifndef AICF_LOWERING_NAMES_H
#define AICF_LOWERING_NAMES_H

// The names lowering gives loops and bounds. Every pass builds them through these functions,
// so a name is spelled in one place.

#include "dsl/ir/IROperator.h"

#include <string>

namespace aicf {
namespace lowering {

// The loop over variable `var` of stage `stage` of Func `func`: "f.s0.x".
std::string loop_name(const std::string &func, int stage, const std::string &var);
// The first and last value that loop takes: "f.s0.x.min", "f.s0.x.max".
std::string loop_min_name(const std::string &func, int stage, const std::string &var);
std::string loop_max_name(const std::string &func, int stage, const std::string &var);
// Its number of iterations, max - min + 1: "f.s0.x.extent".
std::string loop_extent_name(const std::string &func, int stage, const std::string &var);
// The region a Func is stored over, per pure argument: "f.x.min_realized", "f.x.extent_realized".
std::string realized_min_name(const std::string &func, const std::string &arg);
std::string realized_extent_name(const std::string &func, const std::string &arg);
// The flat storage of element `value_index` of a Func with `outputs` elements: "f" or "f.1".
std::string storage_name(const std::string &func, int value_index, int outputs);
// A loop name taken apart: "f.s1.x.v2" is Func "f", stage 1, variable "x.v2". Only names that
// loop_name built parse; for any other name `func` is empty.
struct LoopNameParts {
    std::string func;
    int stage = -1;
    std::string var;
};
LoopNameParts parse_loop_name(const std::string &loop);
// The Func a loop belongs to: "f" for "f.s0.x" (the whole name when it is not a loop's).
std::string func_of_loop(const std::string &loop);
// The stage a loop belongs to: "f.s1" for "f.s1.x".
std::string stage_of_loop(const std::string &loop);
// The name of stage `stage` of Func `func`: "f.s1".
std::string stage_name(const std::string &func, int stage);
// The descriptor argument of a buffer: "b.buffer" (spelled in the IR layer, whose
// simplifier needs it too).
using ir::buffer_descriptor_name;

} // namespace lowering
} // namespace aicf

#endif
