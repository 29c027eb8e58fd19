#ifndef AICF_BACKENDS_SIM_SIMCOMPILER_H
#define AICF_BACKENDS_SIM_SIMCOMPILER_H

// The simulator compiles the kernel body once per launch into a tree of nodes (SimExprCode.h,
// SimStmtCode.h) with variables resolved to slots and storage resolved to Storage objects,
// then runs that tree for every block. Each expression node evaluates for all threads of the
// block at once into a column it owns (see Col in SimMachine.h), or into one uniform value
// when its operands are uniform. The compiler also records where each memory instruction and
// barrier stands (the Func being computed, the innermost loop) for messages and profiles,
// and what each node costs (its instruction class and flops).

#include "backends/sim/SimStmtCode.h"
#include "backends/sim/Simulator.h"

#include <vector>

namespace aicf {
namespace backends {
namespace sim {

// A kernel body compiled into simulator nodes for one launch.
struct LaunchCode {
    StmtPtr body;
    int slots = 0;          // the variables' slots it uses (Machine::slots)
    int shared_granule = 4; // the shadow's granule: the smallest element any shared access
                            // uses, at most a word
};

// Compiles the body of `m`'s kernel with the values of its arguments. The buffers and the
// kernel's allocations become `m`'s storages, its memory instructions and barriers `m`'s
// sites.
LaunchCode compile(Machine &m, const std::vector<LaunchArgument> &args);

} // namespace sim
} // namespace backends
} // namespace aicf

#endif
