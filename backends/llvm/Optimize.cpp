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

// LLVM 19's X86 domain reassignment (moving integer mask arithmetic into AVX-512's mask
// registers) builds the whole closure of every general-purpose register before it asks whether
// the closure may move, which grows with the function's size: on a chain of 20 clamped
// stencils in tiles it took 1.6 of the 3.6 s of machine code (LLVM 20 stops at the first
// instruction that cannot move, llvm-project pull request 108108). It only moves scalar
// mask arithmetic; bench_cpu's rows stay within their run-to-run spread without it.
void set_code_generation_options() {
#if LLVM_VERSION_MAJOR < 20
    static std::once_flag set;
    std::call_once(set, [] {
        auto &options = llvm::cl::getRegisteredOptions();
        auto it = options.find("disable-x86-domain-reassignment");
        if (it != options.end())
            it->second->addOccurrence(0, "disable-x86-domain-reassignment", "true");
    });
#endif
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
