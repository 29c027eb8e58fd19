#ifndef AICF_LOWERING_LOWER_H
#define AICF_LOWERING_LOWER_H

#include "dsl/Pipeline.h"
#include "dsl/Target.h"

#include <string>
#include <vector>

namespace aicf {
namespace lowering {

// A pipeline after lowering: one function body over flat memory, and its arguments.
struct LoweredPipeline {
    std::string name;
    std::vector<Argument> args;
    ir::Stmt body;
    std::string loop_nest; // the loop structure, for Func::print_loop_nest
    Target target;
};

// Runs every lowering pass in order. With AICF_DEBUG=2 the IR is printed after each pass.
LoweredPipeline lower(const std::vector<ir::Function> &outputs, const std::vector<Argument> &args,
                      const Target &target);

} // namespace lowering
} // namespace aicf

#endif
