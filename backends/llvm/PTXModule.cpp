#include "backends/llvm/PTXModule.h"
#include "backends/llvm/CodeGen_PTX.h"

#include "backends/llvm/CudaToolkit.h"
#include "backends/llvm/LLVMErrors.h"
#include "backends/llvm/Optimize.h"
#include "dsl/Debug.h"
#include "dsl/base/Error.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include <memory>
#include <mutex>

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace aicf {
namespace backends {

namespace {

std::once_flag nvptx_initialized;

std::unique_ptr<llvm::TargetMachine> make_target_machine(const Target &t) {
    install_llvm_error_handlers();
    std::call_once(nvptx_initialized, [] {
        LLVMInitializeNVPTXTargetInfo();
        LLVMInitializeNVPTXTarget();
        LLVMInitializeNVPTXTargetMC();
        LLVMInitializeNVPTXAsmPrinter();
    });
    std::string error;
    const llvm::Target *target = llvm::TargetRegistry::lookupTarget(ptx_triple, error);
    internal_assert(target) << "LLVM has no NVPTX backend: " << error;
    llvm::TargetOptions options;
    // PTX ISA 7.8 covers sm_80 to sm_90; sm_90a needs 8.0.
    std::string features = t.is_arch_specific() ? "+ptx80" : "+ptx78";
    return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
        ptx_triple, ptx_arch_name(t), features, options, llvm::Reloc::Static, std::nullopt,
        llvm::CodeGenOptLevel::Aggressive));
}

void link_libdevice(llvm::Module &module) {
    bool needs = false;
    for (const llvm::Function &f : module)
        needs = needs || (f.isDeclaration() && f.getName().starts_with("__nv_"));
    if (!needs) return;
    std::string path = libdevice_path();
    user_assert(!path.empty())
        << "The kernels call math functions (exp, log, tanh, erf, sin, cos, pow) that come from "
           "the CUDA "
        << "toolkit's libdevice, which was not found. Install the CUDA toolkit, or set "
        << "AICF_LIBDEVICE to the path of libdevice.10.bc.";
    auto buffer = llvm::MemoryBuffer::getFile(path);
    user_assert(bool(buffer)) << "Cannot read libdevice at " << path << ".";
    auto lib = llvm::parseBitcodeFile((*buffer)->getMemBufferRef(), module.getContext());
    if (!lib) {
        std::string message;
        llvm::handleAllErrors(lib.takeError(),
                              [&](const llvm::ErrorInfoBase &e) { message = e.message(); });
        user_error << "Cannot parse libdevice at " << path << ": " << message;
    }
    (*lib)->setTargetTriple(module.getTargetTriple());
    (*lib)->setDataLayout(module.getDataLayout());
    bool failed =
        llvm::Linker::linkModules(module, std::move(*lib), llvm::Linker::Flags::LinkOnlyNeeded);
    internal_assert(!failed) << "linking libdevice failed";
    // What came from libdevice is private to this module, so it can be inlined and dropped.
    for (llvm::Function &f : module) {
        if (!f.isDeclaration() && f.getCallingConv() != llvm::CallingConv::PTX_Kernel)
            f.setLinkage(llvm::GlobalValue::InternalLinkage);
    }
}

} // namespace

std::string compile_kernels_to_ptx(const std::vector<lowering::LoweredKernel> &kernels,
                                   const Target &target) {
    user_assert(target.has_cuda())
        << "compile_to_ptx needs a target with a GPU (e.g. host-cuda-sm_80), not "
        << target.to_string() << ".";
    PhaseTimer timer(
        "PTX of " + (kernels.empty() ? std::string("no kernels") : kernels[0].name) +
        (kernels.size() > 1 ? " and " + std::to_string(kernels.size() - 1) + " more kernels" : ""));
    std::string names;
    for (const lowering::LoweredKernel &k : kernels)
        names += (names.empty() ? "" : ", ") + k.name;
    LLVMErrorScope scope("the kernels " + names + " for " + ptx_arch_name(target));
    llvm::LLVMContext context;
    auto module = std::make_unique<llvm::Module>("aicf_kernels", context);
    std::unique_ptr<llvm::TargetMachine> tm = make_target_machine(target);
    module->setTargetTriple(ptx_triple);
    module->setDataLayout(tm->createDataLayout());
    // libdevice's functions ask __nvvm_reflect whether to flush denormals: they must not.
    module->addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t(0));
    for (const lowering::LoweredKernel &k : kernels) {
        LLVMErrorScope kernel_scope("kernel " + k.name + " for " + ptx_arch_name(target));
        emit_ptx_kernel(context, *module, target, k);
    }
    std::string errors;
    llvm::raw_string_ostream os(errors);
    if (llvm::verifyModule(*module, &os))
        internal_error << "generated kernels do not verify:\n" << os.str();
    timer.phase("LLVM IR");
    link_libdevice(*module);
    timer.phase("libdevice");
    optimize_module(*module, *tm);
    timer.phase("LLVM optimization");
    if (debug_level() >= 3) module->print(llvm::errs(), nullptr);
    timer.skip();

    llvm::SmallString<0> ptx;
    llvm::raw_svector_ostream out(ptx);
    llvm::legacy::PassManager pm;
    bool cannot = tm->addPassesToEmitFile(pm, out, nullptr, llvm::CodeGenFileType::AssemblyFile);
    internal_assert(!cannot) << "the NVPTX backend cannot emit PTX";
    pm.run(*module);
    timer.phase("PTX");
    return std::string(ptx.str());
}

} // namespace backends
} // namespace aicf
