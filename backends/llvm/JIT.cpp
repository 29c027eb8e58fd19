#include "backends/llvm/JIT.h"

#include "dsl/HostMemory.h"

#include "backends/llvm/AOT.h"
#include "backends/llvm/CodeGen_Host.h"
#include "backends/llvm/CodeGen_PTX.h"
#include "backends/llvm/DataflowReport.h"
#include "backends/llvm/LLVMErrors.h"
#include "backends/llvm/Optimize.h"
#include "backends/runtime/Runtime.h"
#include "dsl/Debug.h"
#include "dsl/HostMemory.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IRPrinter.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>

#include <atomic>
#include <cstdlib>
#include <dlfcn.h>
#include <iostream>
#include <mutex>
#include <new>
#include <pthread.h>
#include <sstream>

namespace aicf {
namespace backends {

namespace {

// One JIT per process, created on first use.
class HostJIT {
public:
    // Never destroyed: compiled pipelines may be released during static destruction, in
    // any order, and the JIT must outlive them.
    static HostJIT &get() {
        static HostJIT *jit = new HostJIT;
        return *jit;
    }

    std::mutex lock;
    std::unique_ptr<llvm::orc::LLJIT> jit;
    std::unique_ptr<llvm::TargetMachine> target_machine;

    // The last error materialization reported (cleared when read).
    std::string take_reported() {
        std::lock_guard<std::mutex> guard(reported_lock);
        std::string r = std::move(reported);
        reported.clear();
        return r;
    }

private:
    std::mutex reported_lock;
    std::string reported;

    HostJIT() {
        install_llvm_error_handlers();
        // A process forked while another of its threads compiles would copy the lock held,
        // and its child could never compile: fork waits for the compile to finish instead.
        pthread_atfork([] { get().lock.lock(); }, [] { get().lock.unlock(); },
                       [] { get().lock.unlock(); });
        llvm::InitializeNativeTarget();
        llvm::InitializeNativeTargetAsmPrinter();
        auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
        if (!jtmb) internal_error << "cannot detect the host CPU: " << take_error(jtmb.takeError());
        jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
        auto tm = jtmb->createTargetMachine();
        if (!tm)
            internal_error << "cannot create a host target machine: " << take_error(tm.takeError());
        target_machine = std::move(*tm);
        auto built = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*jtmb).create();
        if (!built) internal_error << "cannot create the JIT: " << take_error(built.takeError());
        jit = std::move(*built);
        // Errors of materialization (mapping the machine code into memory, resolving its
        // symbols) are kept for the lookup that fails because of them, not printed.
        jit->getExecutionSession().setErrorReporter([this](llvm::Error err) {
            std::string text = take_error(std::move(err));
            std::lock_guard<std::mutex> guard(reported_lock);
            reported = std::move(text);
        });

        auto &dylib = jit->getMainJITDylib();
        auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
            jit->getDataLayout().getGlobalPrefix());
        if (!process) internal_error << take_error(process.takeError());
        dylib.addGenerator(std::move(*process));
        // The runtime's own functions, by address, so they resolve even when the library
        // was loaded with local symbol visibility.
        llvm::orc::MangleAndInterner mangle(jit->getExecutionSession(), jit->getDataLayout());
        llvm::orc::SymbolMap runtime;
        auto add = [&](const char *name, void *address) {
            runtime[mangle(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                                     llvm::JITSymbolFlags::Exported};
        };
        add("aicf_runtime_error", reinterpret_cast<void *>(&aicf_runtime_error));
        add("aicf_malloc", reinterpret_cast<void *>(&aicf_malloc));
        add("aicf_free", reinterpret_cast<void *>(&aicf_free));
        add("aicf_parallel_for", reinterpret_cast<void *>(&aicf_parallel_for));
        add("aicf_gpu_launch", reinterpret_cast<void *>(&aicf_gpu_launch));
        add("aicf_device_malloc", reinterpret_cast<void *>(&aicf_device_malloc));
        add("aicf_device_malloc_for_host", reinterpret_cast<void *>(&aicf_device_malloc_for_host));
        add("aicf_device_free", reinterpret_cast<void *>(&aicf_device_free));
        add("aicf_buffer_copy_to_host", reinterpret_cast<void *>(&aicf_buffer_copy_to_host));
        if (auto err = dylib.define(llvm::orc::absoluteSymbols(runtime))) {
            internal_error << take_error(std::move(err));
        }
    }
};

class JITPipeline : public CompiledPipeline {
public:
    using Entry = int32_t (*)(void *, void *const *);
    JITPipeline(Entry e, llvm::orc::ResourceTrackerSP rt, std::vector<runtime::CompiledKernel> k)
        : entry(e), tracker(std::move(rt)), kernels(std::move(k)) {}
    ~JITPipeline() override {
        std::lock_guard<std::mutex> guard(HostJIT::get().lock);
        if (auto err = tracker->remove()) llvm::consumeError(std::move(err));
    }

    void run(void *const *args) const override {
        runtime::RunContext ctx;
        ctx.kernels = &kernels;
        ctx.pool = &pool;
        int32_t code = entry(&ctx, args);
        using Type = runtime::RunContext::ErrorType;
        if (code != 0 && ctx.error_type == Type::KernelFault) throw KernelFault(ctx.error);
        if (code != 0 && ctx.error_type == Type::Internal) throw InternalError(ctx.error);
        if (code != 0) {
            runtime_error_report << (ctx.error.empty() ? "The pipeline failed with code " +
                                                             std::to_string(code) + "."
                                                       : ctx.error);
        }
    }

private:
    Entry entry;
    llvm::orc::ResourceTrackerSP tracker;
    std::vector<runtime::CompiledKernel> kernels;
    // The intermediates' large blocks, kept from one run to the next.
    mutable HostMemoryPool pool;
};

} // namespace

namespace {

// The host module of a pipeline, optimized for this CPU as the JIT compiles it. The caller
// holds the JIT's lock.
std::unique_ptr<llvm::Module> optimized_host_module(HostJIT &host,
                                                    const lowering::LoweredPipeline &p,
                                                    const std::string &name,
                                                    llvm::LLVMContext &context, PhaseTimer &timer) {
    std::unique_ptr<llvm::Module> module = compile_host_module(p, name, context);
    module->setDataLayout(host.jit->getDataLayout());
    module->setTargetTriple(host.target_machine->getTargetTriple().str());
    timer.phase("LLVM IR");
    optimize_module(*module, *host.target_machine);
    timer.phase("LLVM optimization");
    return module;
}

std::string host_assembly(const lowering::LoweredPipeline &p) {
    HostJIT &host = HostJIT::get();
    llvm::LLVMContext context;
    std::lock_guard<std::mutex> guard(host.lock);
    LLVMErrorScope scope("the host code of pipeline " + p.name);
    PhaseTimer timer("host assembly of " + p.name);
    std::unique_ptr<llvm::Module> module =
        optimized_host_module(host, p, "aicf_" + p.name, context, timer);
    llvm::SmallString<0> text;
    llvm::raw_svector_ostream out(text);
    llvm::legacy::PassManager passes;
    bool unsupported = host.target_machine->addPassesToEmitFile(
        passes, out, nullptr, llvm::CodeGenFileType::AssemblyFile);
    internal_assert(!unsupported) << "the host target machine cannot emit assembly";
    passes.run(*module);
    timer.phase("assembly");
    return std::string(text.str());
}

} // namespace

bool vector_math_library_loaded() {
    // Loaded globally, so the JIT finds its functions among the process's symbols.
    static const bool loaded = dlopen("libmvec.so.1", RTLD_NOW | RTLD_GLOBAL) != nullptr;
    return loaded;
}

namespace {

// The pipeline's kernels as devices run them. Their PTX is compiled when a GPU first runs
// them, for the pipeline's target.
std::vector<runtime::CompiledKernel> compiled_kernels(const lowering::LoweredPipeline &p) {
    std::vector<runtime::CompiledKernel> kernels;
    for (const lowering::LoweredKernel &k : p.kernels) {
        auto ir = std::make_shared<const lowering::LoweredKernel>(k);
        Target target = p.target;
        runtime::CompiledKernel c(ir,
                                  [ir, target] { return compile_kernels_to_ptx({*ir}, target); });
        c.name = k.name;
        c.id = k.id;
        c.funcs = k.funcs;
        c.threads = k.threads;
        c.shared_bytes = k.shared_bytes;
        c.min_compute_capability = target.cuda_capability();
        c.check_names = lowering::kernel_check_names(k.body);
        for (const lowering::KernelArgument &a : k.args) {
            runtime::KernelParameter param;
            param.name = a.name;
            param.is_buffer = a.is_buffer;
            param.scalar_bytes = a.is_buffer ? 0 : a.type.is_bool() ? 1 : a.type.bytes();
            param.written = a.written;
            c.params.push_back(param);
        }
        kernels.push_back(std::move(c));
    }
    return kernels;
}

} // namespace

std::shared_ptr<CompiledPipeline> jit_compile(const lowering::LoweredPipeline &p) {
    static std::atomic<int> counter{0};
    std::string name = "aicf_" + p.name + "_" + std::to_string(counter++);

    HostJIT &host = HostJIT::get();
    auto context = std::make_unique<llvm::LLVMContext>();
    std::lock_guard<std::mutex> guard(host.lock);
    LLVMErrorScope scope("the host code of pipeline " + p.name);
    PhaseTimer timer("host code of " + p.name);
    std::unique_ptr<llvm::Module> module = optimized_host_module(host, p, name, *context, timer);

    if (debug_level() >= 3) module->print(llvm::errs(), nullptr);
    timer.skip();

    auto &dylib = host.jit->getMainJITDylib();
    llvm::orc::ResourceTrackerSP tracker = dylib.createResourceTracker();
    if (auto err = host.jit->addIRModule(
            tracker, llvm::orc::ThreadSafeModule(std::move(module), std::move(context)))) {
        internal_error << "JIT: " << take_error(std::move(err));
    }
    host.take_reported();
    auto symbol = host.jit->lookup(name);
    if (!symbol) {
        std::string why = take_error(symbol.takeError());
        const std::string cause = host.take_reported();
        if (!cause.empty()) why += " (" + cause + ")";
        // Mapping the code into memory is what fails when the process has no memory left.
        if (why.find("allocate") != std::string::npos || why.find("memory") != std::string::npos ||
            why.find("mmap") != std::string::npos)
            throw std::bad_alloc();
        user_error << "The machine code of pipeline " << p.name
                   << " could not be loaded into this process: " << why;
    }
    auto entry = symbol->toPtr<JITPipeline::Entry>();
    timer.phase("machine code");
    return std::make_shared<JITPipeline>(entry, tracker, compiled_kernels(p));
}

namespace {

// The target for another GPU architecture ("sm_90a"), with the same features.
Target with_gpu_arch(const Target &t, const std::string &arch) {
    std::string base = t.to_string();
    size_t at = base.find("-cuda-sm_");
    size_t end = base.find('-', at + 1 + 5);
    std::string rest = end == std::string::npos ? "" : base.substr(end);
    return Target(base.substr(0, at) + "-cuda-" + arch + rest);
}

// With AICF_PTXAS_CHECK=sm_80,sm_90 (the test suite's `ptx` label), every pipeline with
// kernels is also compiled to PTX for each architecture listed and assembled with ptxas;
// a kernel ptxas rejects, or one that spills registers, keeps a stack frame or has its wgmma
// waits changed by ptxas, is an error.
// A pipeline for an architecture-specific target (sm_90a: wgmma), whose kernels no other
// architecture runs, is assembled for its own.
void check_with_ptxas(const lowering::LoweredPipeline &p) {
    const char *env = std::getenv("AICF_PTXAS_CHECK");
    if (!env || !*env || p.kernels.empty()) return;
    std::stringstream archs(p.target.is_arch_specific()
                                ? "sm_" + std::to_string(p.target.cuda_capability()) + "a"
                                : std::string(env));
    std::string arch;
    while (std::getline(archs, arch, ',')) {
        Target t;
        try {
            t = with_gpu_arch(p.target, arch);
        } catch (const CompileError &) {
            user_error << "AICF_PTXAS_CHECK=" << env << " names \"" << arch
                       << "\", which is not a GPU architecture: list sm_80, sm_86, sm_89 or "
                       << "sm_90, separated by commas (sm_80,sm_90).";
        }
        for (const KernelResources &r : assemble_ptx(compile_kernels_to_ptx(p.kernels, t), arch)) {
            user_assert(r.spill_store_bytes == 0 && r.spill_load_bytes == 0)
                << "Kernel " << r.to_string() << ": it spills registers.";
            user_assert(r.wgmma_changes.empty())
                << "Kernel " << r.to_string() << ": ptxas changed how its warpgroup products "
                << "(wgmma) run, so they no longer overlap as written.";
            user_assert(r.stack_frame_bytes == 0)
                << "Kernel " << r.to_string() << ": it keeps " << r.stack_frame_bytes
                << " bytes per thread in local memory (a stack frame), as for a Func stored in "
                << "registers whose loops are not unrolled (registers cannot be indexed by a "
                << "loop's variable).";
        }
    }
}

std::string resource_report(const lowering::LoweredPipeline &p) {
    user_assert(p.target.has_cuda())
        << "kernel_resources needs a target with a GPU, not " << p.target.to_string() << ".";
    std::string arch = "sm_" + std::to_string(p.target.cuda_capability()) +
                       (p.target.is_arch_specific() ? "a" : "");
    std::string text;
    for (const KernelResources &r : assemble_ptx(compile_kernels_to_ptx(p.kernels, p.target), arch))
        text += r.to_string() + "\n";
    return text;
}

class LLVMPipelineCompiler : public detail::PipelineCompiler {
public:
    std::shared_ptr<CompiledPipeline> compile(const std::vector<ir::Function> &outputs,
                                              const std::vector<Argument> &args,
                                              const Target &target) override {
        const std::string missing = target.missing_cpu_features();
        user_assert(missing.empty())
            << "Cannot compile " << (outputs.empty() ? "the pipeline" : outputs[0].name())
            << " for " << target.to_string() << " here: this CPU lacks " << missing
            << ", so it cannot run that code. Compile it ahead of time (Pipeline::"
            << "compile_to_files) for machines that have them, or name a lower level ("
            << target.with_arch(Target::Arch(target.arch() - 1)).to_string() << ") or host.";
        lowering::LoweredPipeline p = lowering::lower(outputs, args, target);
        check_with_ptxas(p);
        return jit_compile(p);
    }
    std::string lower_to_text(const std::vector<ir::Function> &outputs,
                              const std::vector<Argument> &args, const Target &target,
                              detail::LoweredText what) override {
        lowering::LoweredPipeline p = lowering::lower(outputs, args, target);
        if (what == detail::LoweredText::PTX) return compile_kernels_to_ptx(p.kernels, target);
        if (what == detail::LoweredText::KernelResources) return resource_report(p);
        if (what == detail::LoweredText::HostAssembly) return host_assembly(p);
        if (what == detail::LoweredText::LoopNest) {
            std::string text = p.loop_nest;
            for (const lowering::LoweredKernel &k : p.kernels)
                text += lowering::kernel_launch_shape(k);
            return text;
        }
        std::string text = ir::to_string(p.body);
        for (const lowering::LoweredKernel &k : p.kernels)
            text += "\n" + lowering::describe_kernel(k);
        return text;
    }
    void compile_to_files(const std::vector<Build> &builds, const std::string &function_name,
                          const OutputFiles &files) override {
        std::vector<lowering::LoweredPipeline> lowered;
        for (const Build &b : builds) {
            // Code that ships takes any strides its callers pass.
            std::vector<Argument> args = b.args;
            for (Argument &a : args)
                a.known_strides.clear();
            lowered.push_back(lowering::lower(b.outputs, args, b.target));
            check_with_ptxas(lowered.back());
        }
        backends::compile_to_files(lowered, function_name, files);
    }
    DataflowReport report(const std::vector<ir::Function> &outputs,
                          const std::vector<Argument> &args, const Target &target,
                          const std::vector<int> &sizes, const ReportArguments &given,
                          bool baseline) override {
        return dataflow_report(outputs, args, target, sizes, given, baseline);
    }
};

// Registers the compiler when the library loads: the one link from dsl/ to the backends.
struct Registration {
    LLVMPipelineCompiler compiler;
    Registration() { detail::register_pipeline_compiler(&compiler); }
} registration;

} // namespace

} // namespace backends
} // namespace aicf
