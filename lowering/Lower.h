#ifndef AICF_LOWERING_LOWER_H
#define AICF_LOWERING_LOWER_H

#include "dsl/Pipeline.h"
#include "dsl/Target.h"
#include "lowering/Kernel.h"

#include <string>
#include <vector>

namespace aicf {
namespace lowering {

// A pipeline after lowering: the host function body over flat memory, its arguments, and
// the GPU kernels the body launches (gpu_launch calls name them by index).
struct LoweredPipeline {
    std::string name;
    std::vector<Argument> args;
    ir::Stmt body;
    std::vector<LoweredKernel> kernels;
    std::string loop_nest; // the loop structure, for Func::print_loop_nest
    Target target;
};

// Runs every lowering pass in order. With AICF_DEBUG=2 the IR is printed after each pass.
LoweredPipeline lower(const std::vector<ir::Function> &outputs, const std::vector<Argument> &args,
                      const Target &target);

} // namespace lowering
} // namespace aicf

#endif
