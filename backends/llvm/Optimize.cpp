#include "backends/llvm/Optimize.h"

#include <llvm/Config/llvm-config.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Target/TargetMachine.h>

#include <mutex>

namespace aicf {
namespace backends {

namespace {

// Options of LLVM's code generators, set once for the process (they are global).
void set_code_generation_options() {
    static std::once_flag set;
    std::call_once(set, [] {
        auto &options = llvm::cl::getRegisteredOptions();
        auto enable = [&](const char *name) {
            auto it = options.find(name);
            if (it != options.end()) it->second->addOccurrence(0, name, "true");
        };
#if LLVM_VERSION_MAJOR < 20
        // LLVM 19's X86 domain reassignment (moving integer mask arithmetic into AVX-512's
        // mask registers) builds the whole closure of every general-purpose register before it
        // asks whether the closure may move, which grows with the function's size: on a chain
        // of 20 clamped stencils in tiles it took 1.6 of the 3.6 s of machine code (LLVM 20
        // stops at the first instruction that cannot move, llvm-project pull request 108108).
        // It only moves scalar mask arithmetic; bench_cpu's rows stay within their run-to-run
        // spread without it.
        enable("disable-x86-domain-reassignment");
#endif
        // The greedy register allocator spills a live range as soon as it fails to assign it;
        // deferred, the spill waits until the end of allocation, where later evictions may
        // have freed a register for it. Without it a register block one size too large for
        // the registers (Halide's sgemm schedule of 4 x 32 floats with AVX2: 16 accumulators,
        // 4 vectors of B and a broadcast for 16 registers) kept every accumulator in memory,
        // loaded and stored at each step of the reduction, where 5 must be: 40 stack accesses
        // per 32 fused multiply-adds, 26 with it; 1.28x Halide's time before, 1.03x after, on
        // an AMD EPYC (bench_cpu). The allocator's choice there depended only on the order of
        // its virtual registers (the same loop with renumbered registers took 20 or 40). Code
        // that spills nothing is unchanged; bench_cpu's other rows stay within their spread.
        enable("enable-deferred-spilling");
    });
}

} // namespace

void optimize_module(llvm::Module &module, llvm::TargetMachine &tm) {
    set_code_generation_options();
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PipelineTuningOptions options;
    options.LoopVectorization = true;
    options.SLPVectorization = true;
    llvm::PassBuilder pb(&tm, options);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    mpm.run(module, mam);
}

} // namespace backends
} // namespace aicf
