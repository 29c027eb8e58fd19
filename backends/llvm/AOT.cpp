#include "backends/llvm/AOT.h"

#include "backends/llvm/CodeGen_Host.h"
#include "backends/llvm/CodeGen_PTX.h"
#include "backends/llvm/LLVMErrors.h"
#include "backends/llvm/Optimize.h"
#include "backends/runtime/AOTABI.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IRPrinter.h"
#include "lowering/KernelSerialization.h"

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Object/ArchiveWriter.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>

namespace aicf {
namespace backends {

using namespace ir;

namespace {

// Why `s` is a name that the headers the generated header includes (stdint.h, stddef.h,
// stdbool.h, DLPack's and AICF's ABI) declare or may declare, or a word that some C or C++
// compilers take as their own ("is declared by DLPack's header", ...), or "" when none does.
std::string why_the_headers_declare(const std::string &s) {
    auto starts = [&](const char *p) { return s.rfind(p, 0) == 0; };
    auto ends = [&](const char *p) {
        const size_t n = std::strlen(p);
        return s.size() >= n && s.compare(s.size() - n, n, p) == 0;
    };
    // Words of C23 (typeof), GNU C (asm forms aside) and C++ (std) that the keyword list of C
    // and C++ together leaves out.
    static const std::string words = " typeof typeof_unqual std ";
    if (words.find(" " + s + " ") != std::string::npos)
        return "is a keyword or namespace of some C or C++ compilers";
    // stddef.h and stdint.h: their names, and those C reserves for stdint.h's future types
    // (int..._t, uint..._t) and limits (INT..._MAX, _MIN, _C).
    static const std::string standard =
        " NULL offsetof unreachable size_t ptrdiff_t max_align_t nullptr_t SIZE_MAX PTRDIFF_MIN "
        "PTRDIFF_MAX SIG_ATOMIC_MIN SIG_ATOMIC_MAX WCHAR_MIN WCHAR_MAX WINT_MIN WINT_MAX ";
    if (standard.find(" " + s + " ") != std::string::npos ||
        ((starts("int") || starts("uint")) && ends("_t")) ||
        ((starts("INT") || starts("UINT")) && (ends("_MAX") || ends("_MIN") || ends("_C"))))
        return "is a name of stdint.h or stddef.h, or reserved to them by C";
    if (starts("kDL") || starts("DLPACK") ||
        (starts("DL") && s.size() > 2 && std::isupper(static_cast<unsigned char>(s[2]))))
        return "is a name of DLPack's header (DL..., kDL..., DLPACK...)";
    if (starts("AICF_") || starts("aicf_")) return "is a name of AICF's ABI (aicf_..., AICF_...)";
    return "";
}

// Why `s` cannot be a name in the generated header, which C and C++ programs include (as
// "is not a C identifier", ...), or "" when it can.
std::string why_not_a_header_name(const std::string &s) {
    // The keywords of C and C++, one string (a set of a hundred strings is a hundred lines).
    static const std::string keywords =
        " alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t "
        "char16_t char32_t class compl concept const consteval constexpr constinit const_cast "
        "continue co_await co_return co_yield decltype default delete do double dynamic_cast "
        "else enum explicit export extern false float for friend goto if inline int long "
        "mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected "
        "public register reinterpret_cast requires restrict return short signed sizeof static "
        "static_assert static_cast struct switch template this thread_local throw true try "
        "typedef typeid typename union unsigned using virtual void volatile wchar_t while xor "
        "xor_eq ";
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return "is not a C identifier";
    for (char c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
            return "is not a C identifier";
    if (keywords.find(" " + s + " ") != std::string::npos) return "is a keyword of C or C++";
    if (s[0] == '_' &&
        (s.size() == 1 || s[1] == '_' || std::isupper(static_cast<unsigned char>(s[1]))))
        return "is reserved to the C implementation (it starts with __ or _ and a capital letter)";
    return why_the_headers_declare(s);
}

// Why the generated functions (name, name_argv, name_metadata) would replace functions of
// the C or math library in a program that links them ("is a function of the C library"), or
// "" (also where those libraries cannot be looked at).
std::string why_a_c_library_name(const std::string &name) {
    for (const char *library : {"libc.so.6", "libm.so.6"}) {
        void *handle = dlopen(library, RTLD_LAZY | RTLD_NOLOAD);
        if (!handle) continue;
        std::string found;
        for (const std::string &symbol : {name, name + "_argv", name + "_metadata"})
            if (found.empty() && dlsym(handle, symbol.c_str())) found = symbol;
        dlclose(handle);
        if (!found.empty())
            return "would replace " + found + ", a name " + library +
                   " defines, in every program that links it";
    }
    return "";
}

// The name an argument has in the generated header and metadata: a Tuple's output buffers,
// named after their Func and element ("minmax.0"), become "minmax_0".
std::string header_name(const Argument &a) {
    const size_t dot = a.name.rfind('.');
    if (!a.is_output || dot == std::string::npos || dot == 0 || dot + 1 == a.name.size())
        return a.name;
    for (size_t i = dot + 1; i < a.name.size(); i++)
        if (!std::isdigit(static_cast<unsigned char>(a.name[i]))) return a.name;
    return a.name.substr(0, dot) + "_" + a.name.substr(dot + 1);
}

void write_file(const std::string &path, const std::string &bytes) {
    errno = 0;
    std::ofstream out(path, std::ios::binary);
    const int opened = errno;
    out.write(bytes.data(), std::streamsize(bytes.size()));
    out.close();
    if (!out.good()) {
        const int why = opened ? opened : errno;
        runtime_error_report << "Cannot write " << path
                             << (why ? std::string(": ") + std::strerror(why) : std::string())
                             << (why == ENOENT ? " (the folder it goes in must exist)" : "") << ".";
    }
}

// Code that becomes part of programs and shared libraries (position-independent), for the
// baseline of this machine's architecture: each build's functions name their own CPU.
std::unique_ptr<llvm::TargetMachine> aot_target_machine() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!builder)
        internal_error << "cannot detect the host CPU: " << take_error(builder.takeError());
    builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
    builder->setRelocationModel(llvm::Reloc::PIC_);
    if (builder->getTargetTriple().getArch() == llvm::Triple::x86_64) {
        builder->setCPU("x86-64");
        builder->getFeatures() = llvm::SubtargetFeatures();
    }
    auto tm = builder->createTargetMachine();
    if (!tm)
        internal_error << "cannot create a host target machine: " << take_error(tm.takeError());
    return std::move(*tm);
}

int32_t argument_kind(const Argument &a) {
    return !a.is_buffer  ? AICF_ARGUMENT_SCALAR
           : a.is_output ? AICF_ARGUMENT_OUTPUT
                         : AICF_ARGUMENT_INPUT;
}

// The constant tables of AOTABI.h, as LLVM globals of the same layout.
class Tables {
public:
    Tables(llvm::Module &m, const std::string &prefix)
        : m(m), c(m.getContext()), prefix(prefix), ptr(llvm::PointerType::get(c, 0)),
          i8(llvm::Type::getInt8Ty(c)), i16(llvm::Type::getInt16Ty(c)),
          i32(llvm::Type::getInt32Ty(c)), i64(llvm::Type::getInt64Ty(c)) {
        type_t = llvm::StructType::get(c, {i8, i8, i16});
        argument_t = llvm::StructType::get(c, {ptr, i32, type_t, i32});
        parameter_t = llvm::StructType::get(c, {ptr, i32, i32, i32});
        kernel_t = llvm::StructType::get(
            c, {ptr, llvm::ArrayType::get(i32, 3), i64, i32, i32, ptr, ptr, ptr, i64, i32, ptr});
        cubin_t = llvm::StructType::get(c, {i32, i64, ptr});
        pipeline_t = llvm::StructType::get(c, {ptr, ptr, i32, ptr, i32, ptr, ptr});
    }

    llvm::Constant *string(const std::string &s) {
        return global(llvm::ConstantDataArray::getString(c, s, true));
    }
    llvm::Constant *bytes(const std::vector<uint8_t> &data) {
        return global(llvm::ConstantDataArray::get(c, llvm::ArrayRef<uint8_t>(data)));
    }
    llvm::Constant *type(Type t) {
        return llvm::ConstantStruct::get(type_t, {llvm::ConstantInt::get(i8, uint64_t(t.code)),
                                                  llvm::ConstantInt::get(i8, uint64_t(t.bits)),
                                                  llvm::ConstantInt::get(i16, uint64_t(t.lanes))});
    }
    llvm::Constant *array(llvm::StructType *elem, const std::vector<llvm::Constant *> &items) {
        if (items.empty()) return llvm::ConstantPointerNull::get(ptr);
        return global(llvm::ConstantArray::get(llvm::ArrayType::get(elem, items.size()), items));
    }

    llvm::Constant *arguments(const std::vector<Argument> &args) {
        std::vector<llvm::Constant *> items;
        for (const Argument &a : args) {
            items.push_back(llvm::ConstantStruct::get(
                argument_t, {string(header_name(a)), llvm::ConstantInt::get(i32, argument_kind(a)),
                             type(a.type), llvm::ConstantInt::get(i32, a.dimensions)}));
        }
        return array(argument_t, items);
    }

    llvm::Constant *kernels(const lowering::LoweredPipeline &p,
                            const std::vector<std::string> &cubin_archs) {
        std::vector<llvm::Constant *> items;
        for (const lowering::LoweredKernel &k : p.kernels) {
            std::optional<std::string> ptx = ptx_of(k, p.target);
            std::vector<llvm::Constant *> cubins;
            for (const std::string &arch : cubin_archs) {
                user_assert(ptx) << "Kernel " << k.name << " cannot be assembled for " << arch
                                 << ": its PTX needs libdevice (the CUDA toolkit's math), which "
                                 << "was not found.";
                std::string cubin = ptx_to_cubin(*ptx, arch);
                std::vector<uint8_t> bytes_of(cubin.begin(), cubin.end());
                cubins.push_back(llvm::ConstantStruct::get(
                    cubin_t, {llvm::ConstantInt::get(i32, std::stoi(arch.substr(3, 3))),
                              llvm::ConstantInt::get(i64, bytes_of.size()), bytes(bytes_of)}));
            }
            std::vector<llvm::Constant *> params;
            for (const lowering::KernelArgument &a : k.args) {
                const int bytes = a.is_buffer ? 0 : a.type.is_bool() ? 1 : a.type.bytes();
                params.push_back(llvm::ConstantStruct::get(
                    parameter_t,
                    {string(a.name), llvm::ConstantInt::get(i32, a.is_buffer),
                     llvm::ConstantInt::get(i32, bytes), llvm::ConstantInt::get(i32, a.written)}));
            }
            std::vector<llvm::Constant *> threads;
            for (int t : k.threads)
                threads.push_back(llvm::ConstantInt::get(i32, t));
            std::vector<uint8_t> ir = lowering::serialize_kernel(k);
            items.push_back(llvm::ConstantStruct::get(
                kernel_t,
                {string(k.name), llvm::ConstantArray::get(llvm::ArrayType::get(i32, 3), threads),
                 llvm::ConstantInt::get(i64, uint64_t(k.shared_bytes)),
                 llvm::ConstantInt::get(i32, p.target.cuda_capability()),
                 llvm::ConstantInt::get(i32, k.args.size()), array(parameter_t, params),
                 ptx ? string(*ptx) : llvm::ConstantPointerNull::get(ptr), bytes(ir),
                 llvm::ConstantInt::get(i64, ir.size()), llvm::ConstantInt::get(i32, cubins.size()),
                 array(cubin_t, cubins)}));
        }
        return array(kernel_t, items);
    }

    llvm::GlobalVariable *pipeline(const lowering::LoweredPipeline &p, const std::string &name,
                                   const std::vector<std::string> &cubin_archs,
                                   llvm::Function *entry) {
        llvm::Constant *value = llvm::ConstantStruct::get(
            pipeline_t,
            {string(name), string(p.target.to_string()), llvm::ConstantInt::get(i32, p.args.size()),
             arguments(p.args), llvm::ConstantInt::get(i32, p.kernels.size()),
             kernels(p, cubin_archs), entry});
        return new llvm::GlobalVariable(m, pipeline_t, true, llvm::GlobalValue::InternalLinkage,
                                        value, prefix + ".pipeline");
    }

private:
    llvm::Module &m;
    llvm::LLVMContext &c;
    std::string prefix;
    int count = 0;

public:
    llvm::PointerType *ptr;
    llvm::Type *i8, *i16, *i32, *i64;
    llvm::StructType *type_t, *argument_t, *parameter_t, *kernel_t, *pipeline_t, *cubin_t;

private:
    llvm::Constant *global(llvm::Constant *init) {
        auto *g =
            new llvm::GlobalVariable(m, init->getType(), true, llvm::GlobalValue::PrivateLinkage,
                                     init, prefix + ".data." + std::to_string(count++));
        g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
        return g;
    }
    // The kernel's PTX; none where it cannot be made here (no libdevice for its math): a GPU
    // then refuses it, the simulator runs it all the same.
    static std::optional<std::string> ptx_of(const lowering::LoweredKernel &k,
                                             const Target &target) {
        try {
            return compile_kernels_to_ptx({k}, target);
        } catch (const CompileError &) {
            return std::nullopt;
        }
    }
};

// The LLVM type a scalar argument has in the C functions (bool: i1, passed zero-extended).
llvm::Type *c_scalar_type(llvm::LLVMContext &c, Type t) {
    if (t.is_bool()) return llvm::Type::getInt1Ty(c);
    if (t.is_float() && t.bits == 32) return llvm::Type::getFloatTy(c);
    if (t.is_float() && t.bits == 64) return llvm::Type::getDoubleTy(c);
    return llvm::Type::getIntNTy(c, unsigned(t.bits)); // integers; 16-bit floats as their bits
}

// How the C functions reach the pipeline: its one build, or the build the runtime chooses.
struct Dispatch {
    llvm::GlobalVariable *pipeline = nullptr; // one build
    llvm::GlobalVariable *builds = nullptr;   // several: the array of their tables,
    llvm::GlobalVariable *chosen = nullptr;   // and where the runtime keeps its choice
    int count = 0;
};

// name(DLTensor *..., scalars..., DLTensor *...), name_argv(void **), name_metadata().
void add_c_functions(llvm::Module &m, const std::vector<Argument> &args, const std::string &name,
                     const Dispatch &d) {
    llvm::LLVMContext &c = m.getContext();
    llvm::IRBuilder<> b(c);
    llvm::Type *i32 = b.getInt32Ty();
    llvm::PointerType *ptr = b.getPtrTy();
    auto run = [&](llvm::Value *slots) -> llvm::Value * {
        if (d.pipeline) {
            llvm::FunctionCallee f = m.getOrInsertFunction(
                "aicf_run_pipeline", llvm::FunctionType::get(i32, {ptr, ptr}, false));
            return b.CreateCall(f, {d.pipeline, slots});
        }
        llvm::FunctionCallee f = m.getOrInsertFunction(
            "aicf_run_chosen_pipeline", llvm::FunctionType::get(i32, {ptr, i32, ptr, ptr}, false));
        return b.CreateCall(f, {d.builds, b.getInt32(d.count), d.chosen, slots});
    };

    std::vector<llvm::Type *> params;
    for (const Argument &a : args)
        params.push_back(a.is_buffer ? ptr : c_scalar_type(c, a.type));
    llvm::Function *f = llvm::Function::Create(llvm::FunctionType::get(i32, params, false),
                                               llvm::GlobalValue::ExternalLinkage, name, m);
    b.SetInsertPoint(llvm::BasicBlock::Create(c, "entry", f));
    llvm::Value *slots = b.CreateAlloca(ptr, b.getInt32(int(args.size())), "args");
    for (size_t i = 0; i < args.size(); i++) {
        const Argument &a = args[i];
        llvm::Argument *arg = f->getArg(unsigned(i));
        arg->setName(a.name);
        llvm::Value *value = arg;
        if (!a.is_buffer) {
            if (a.type.is_bool() || (a.type.bits < 32 && !a.type.is_float())) {
                f->addParamAttr(unsigned(i),
                                a.type.is_int() ? llvm::Attribute::SExt : llvm::Attribute::ZExt);
            }
            llvm::Value *stored = a.type.is_bool() ? b.CreateZExt(arg, b.getInt8Ty()) : arg;
            value = b.CreateAlloca(stored->getType(), nullptr, a.name + ".value");
            b.CreateStore(stored, value);
        }
        b.CreateStore(value, b.CreateConstInBoundsGEP1_64(ptr, slots, i));
    }
    b.CreateRet(run(slots));

    llvm::Function *argv =
        llvm::Function::Create(llvm::FunctionType::get(i32, {ptr}, false),
                               llvm::GlobalValue::ExternalLinkage, name + "_argv", m);
    b.SetInsertPoint(llvm::BasicBlock::Create(c, "entry", argv));
    b.CreateRet(run(argv->getArg(0)));

    llvm::Function *meta =
        llvm::Function::Create(llvm::FunctionType::get(ptr, {}, false),
                               llvm::GlobalValue::ExternalLinkage, name + "_metadata", m);
    b.SetInsertPoint(llvm::BasicBlock::Create(c, "entry", meta));
    if (d.pipeline) {
        b.CreateRet(d.pipeline);
    } else {
        llvm::FunctionCallee choose = m.getOrInsertFunction(
            "aicf_choose_pipeline", llvm::FunctionType::get(ptr, {ptr, i32, ptr}, false));
        // Where no build runs here, the first: every build takes the same arguments.
        llvm::Value *chosen = b.CreateCall(choose, {d.builds, b.getInt32(d.count), d.chosen});
        llvm::Value *first = b.CreateLoad(ptr, d.builds);
        b.CreateRet(b.CreateSelect(b.CreateIsNull(chosen), first, chosen));
    }
}

std::string c_header(const std::vector<lowering::LoweredPipeline> &builds,
                     const std::string &name) {
    const std::vector<Argument> &args = builds[0].args;
    std::ostringstream h;
    // The name as it is: two functions whose names differ only in case have two guards.
    const std::string guard = "AICF_GENERATED_" + name + "_H";
    h << "/* " << name << ": compiled ahead of time by AICF for ";
    for (size_t i = 0; i < builds.size(); i++)
        h << (i == 0                   ? ""
              : i + 1 == builds.size() ? " and "
                                       : ", ")
          << builds[i].target.to_string();
    if (builds.size() > 1) h << "\n * (the first of these targets that this machine runs)";
    h << ".\n * Link it with libaicf_runtime. See backends/runtime/AOTABI.h for the calling "
      << "convention. */\n"
      << "#ifndef " << guard << "\n#define " << guard << "\n\n"
      << "#include <stdbool.h>\n#include <stdint.h>\n\n"
      << "#include \"backends/runtime/AOTABI.h\"\n\n"
      << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
    h << "/* Arguments, in order:\n";
    for (const Argument &a : args) {
        h << " *   " << header_name(a) << ": ";
        if (!a.is_buffer) {
            h << "scalar " << (a.type.is_bool() ? "bool" : to_string(a.type));
            if (a.type.is_float() && a.type.bits == 16) h << " (its bits)";
        } else {
            h << (a.is_output ? "output" : "input") << " buffer of "
              << (a.type.is_bool() ? "bool" : to_string(a.type)) << ", " << a.dimensions
              << " dimension" << (a.dimensions == 1 ? "" : "s");
        }
        h << "\n";
    }
    h << " * Returns 0, or a nonzero code with the message in aicf_last_error(). */\n";
    h << "int " << name << "(";
    for (size_t i = 0; i < args.size(); i++) {
        const Argument &a = args[i];
        h << (i ? ", " : "") << (a.is_buffer ? "DLTensor *" : c_type_of(a.type) + " ")
          << header_name(a);
    }
    if (args.empty()) h << "void";
    h << ");\n"
      << "int " << name << "_argv(void **args);\n"
      << "const aicf_pipeline_metadata_t *" << name << "_metadata(void);\n\n"
      << "#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
    return h.str();
}

std::string emit(llvm::TargetMachine &tm, llvm::Module &m, llvm::CodeGenFileType kind) {
    llvm::SmallString<0> bytes;
    llvm::raw_svector_ostream out(bytes);
    llvm::legacy::PassManager passes;
    bool unsupported = tm.addPassesToEmitFile(passes, out, nullptr, kind);
    internal_assert(!unsupported) << "the host target machine cannot emit this file type";
    passes.run(m);
    return std::string(bytes.str());
}

} // namespace

std::string c_type_of(Type t) {
    if (t.is_bool()) return "bool";
    if (t.is_float() && t.bits == 32) return "float";
    if (t.is_float() && t.bits == 64) return "double";
    if (t.is_float()) return "uint16_t";
    return std::string(t.is_int() ? "int" : "uint") + std::to_string(t.bits) + "_t";
}

namespace {

// `path` with ".tag" before its extension: one file per build ("f.s" -> "f.x86-64-v3.s").
std::string with_tag(const std::string &path, const std::string &tag) {
    const size_t slash = path.find_last_of('/');
    const size_t dot = path.find_last_of('.');
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash))
        return path + "." + tag;
    return path.substr(0, dot) + "." + tag + path.substr(dot);
}

bool same_argument(const Argument &a, const Argument &b) {
    return a.name == b.name && a.is_buffer == b.is_buffer && a.is_output == b.is_output &&
           a.type == b.type && a.dimensions == b.dimensions;
}

std::string describe_argument(const Argument &a) {
    if (!a.is_buffer) return "scalar " + a.name + " of " + to_string(a.type);
    return std::string(a.is_output ? "output " : "input ") + a.name + " (" + to_string(a.type) +
           ", " + std::to_string(a.dimensions) + " dimensions)";
}

// The builds as one library: the same arguments, distinct targets; "host" in code compiled
// ahead of time is the highest x86-64 level this machine runs.
std::vector<lowering::LoweredPipeline> checked_builds(std::vector<lowering::LoweredPipeline> builds,
                                                      const std::string &name) {
    internal_assert(!builds.empty()) << "AOT: no builds of " << name;
    const bool x86 = llvm::Triple(llvm::sys::getProcessTriple()).getArch() == llvm::Triple::x86_64;
    for (lowering::LoweredPipeline &p : builds) {
        if (p.target.arch() == Target::Host && x86)
            p.target = p.target.with_arch(Target::highest_level_here());
        user_assert(x86 || p.target.arch() == Target::Host)
            << name << ": the target " << p.target.to_string() << " names an x86-64 CPU, but this "
            << "machine compiles for another architecture. Use host.";
    }
    const lowering::LoweredPipeline &first = builds[0];
    for (size_t i = 1; i < builds.size(); i++) {
        const lowering::LoweredPipeline &p = builds[i];
        for (size_t j = 0; j < i; j++) {
            user_assert(!(builds[j].target == p.target))
                << name << " is built twice for " << p.target.to_string()
                << " (host is the highest x86-64 level of this machine). Give each target once.";
        }
        const size_t n = std::max(first.args.size(), p.args.size());
        for (size_t k = 0; k < n; k++) {
            const bool both = k < first.args.size() && k < p.args.size();
            if (both && same_argument(first.args[k], p.args[k])) continue;
            user_error << "The builds of " << name << " for " << first.target.to_string() << " and "
                       << p.target.to_string() << " take different arguments: "
                       << "argument " << k << " is "
                       << (k < first.args.size() ? describe_argument(first.args[k]) : "missing")
                       << " in one and "
                       << (k < p.args.size() ? describe_argument(p.args[k]) : "missing")
                       << " in the other. One library calls every build with the same arguments.";
        }
    }
    return builds;
}

// The architectures each build's kernels are also assembled for.
std::vector<std::vector<std::string>>
cubins_of(const std::vector<lowering::LoweredPipeline> &builds, const std::string &name,
          const std::vector<std::string> &archs) {
    std::vector<std::vector<std::string>> cubins(builds.size());
    for (const std::string &arch : archs) {
        user_assert(std::regex_match(arch, std::regex("sm_[0-9]{2,3}a?")))
            << "\"" << arch << "\" is not a GPU architecture to assemble kernels for (sm_80, "
            << "sm_90, sm_90a, ...).";
        const int capability = std::stoi(arch.substr(3, 3));
        std::string gpus;
        for (size_t i = 0; i < builds.size(); i++) {
            const Target &t = builds[i].target;
            if (!t.has_cuda()) continue;
            gpus +=
                std::string(gpus.empty() ? "" : ", ") + "sm_" + std::to_string(t.cuda_capability());
            if (capability >= t.cuda_capability()) cubins[i].push_back(arch);
        }
        user_assert(!gpus.empty())
            << name << " is compiled for " << builds[0].target.to_string()
            << (builds.size() > 1 ? " and others" : "") << ", which "
            << (builds.size() > 1 ? "have" : "has") << " no GPU kernels to assemble for " << arch
            << ". Give a target with a GPU (host-cuda-sm_80).";
        bool used = false;
        for (const std::vector<std::string> &c : cubins)
            used = used || std::find(c.begin(), c.end(), arch) != c.end();
        user_assert(used) << "The kernels of " << name << " are compiled for " << gpus
                          << " and cannot be assembled for " << arch << ", an older GPU.";
    }
    return cubins;
}

} // namespace

void compile_to_files(const std::vector<lowering::LoweredPipeline> &given, const std::string &name,
                      const OutputFiles &files) {
    std::string why = why_not_a_header_name(name);
    if (why.empty() && name == "main") why = "would clash with a program's main";
    // C reserves every name that starts with _ at file scope, where the functions are.
    if (why.empty() && name[0] == '_')
        why = "starts with _, which C reserves for its implementation's names at file scope";
    if (why.empty()) why = why_a_c_library_name(name);
    user_assert(why.empty()) << "The function name \"" << name << "\" " << why
                             << ": name the pipeline's function like a C function that no other "
                             << "library defines (letters, digits and _, not starting with a "
                             << "digit, not a keyword).";
    if (!files.c_header.empty()) {
        // A header named as one of C's would stand in for it wherever its folder is searched
        // for includes (the generated header's own #include <stdint.h> among them).
        static const std::string c_headers =
            " assert.h complex.h ctype.h errno.h fenv.h float.h inttypes.h iso646.h limits.h "
            "locale.h math.h setjmp.h signal.h stdalign.h stdarg.h stdatomic.h stdbit.h "
            "stdbool.h stdckdint.h stddef.h stdint.h stdio.h stdlib.h stdnoreturn.h string.h "
            "tgmath.h threads.h time.h uchar.h wchar.h wctype.h ";
        const std::string file = files.c_header.substr(files.c_header.find_last_of('/') + 1);
        user_assert(c_headers.find(" " + file + " ") == std::string::npos)
            << "The header of " << name << " would be " << files.c_header << ", named as C's "
            << file << ", which it would hide from every file compiled with its folder on the "
            << "include path. Give the function (or its header) another name.";
    }
    internal_assert(!given.empty()) << "AOT: no builds of " << name;
    std::map<std::string, std::string> header_names;
    for (const Argument &a : given[0].args) {
        const std::string c_name = header_name(a);
        const std::string why_arg = why_not_a_header_name(c_name);
        user_assert(why_arg.empty())
            << "The argument \"" << a.name << "\" of " << name << " " << why_arg << ", so "
            << "the generated header cannot name it. Name its "
            << (a.is_output ? "Func" : "Param or ImageParam") << " like a C variable.";
        auto [it, fresh] = header_names.emplace(c_name, a.name);
        user_assert(fresh) << "The arguments \"" << it->second << "\" and \"" << a.name << "\" of "
                           << name << " are both named " << c_name
                           << " in the generated header. Rename one of them.";
    }
    const std::vector<std::vector<std::string>> cubins = cubins_of(given, name, files.cubins);
    const std::vector<lowering::LoweredPipeline> builds = checked_builds(given, name);
    const bool several = builds.size() > 1;
    auto file_of = [&](const std::string &path, const lowering::LoweredPipeline &p) {
        return several ? with_tag(path, p.target.to_string()) : path;
    };
    // Refused before any file is written: PTX of a pipeline without kernels.
    if (!files.ptx.empty()) {
        bool any = false;
        for (const lowering::LoweredPipeline &p : builds)
            any = any || !p.kernels.empty();
        user_assert(any) << name << " has no GPU kernels to write as PTX (its target is "
                         << builds[0].target.to_string() << (several ? " and the others" : "")
                         << ").";
    }
    if (!files.stmt.empty()) {
        for (const lowering::LoweredPipeline &p : builds) {
            std::string text = to_string(p.body);
            for (const lowering::LoweredKernel &k : p.kernels)
                text += "\n" + lowering::describe_kernel(k);
            write_file(file_of(files.stmt, p), text);
        }
    }
    if (!files.ptx.empty()) {
        for (const lowering::LoweredPipeline &p : builds)
            if (!p.kernels.empty())
                write_file(file_of(files.ptx, p), compile_kernels_to_ptx(p.kernels, p.target));
    }
    if (!files.c_header.empty()) write_file(files.c_header, c_header(builds, name));
    if (files.object.empty() && files.static_library.empty() && files.assembly.empty()) return;

    LLVMErrorScope scope("the ahead-of-time code of " + name);
    std::unique_ptr<llvm::TargetMachine> tm = aot_target_machine();
    llvm::LLVMContext context;
    auto m = std::make_unique<llvm::Module>(name, context);
    m->setDataLayout(tm->createDataLayout());
    m->setTargetTriple(tm->getTargetTriple().str());
    std::vector<llvm::GlobalVariable *> tables;
    for (size_t i = 0; i < builds.size(); i++) {
        const std::string prefix = "aicf." + name + (several ? "." + std::to_string(i) : "");
        const std::string entry_name = prefix + ".entry";
        compile_host_function(builds[i], entry_name, *m);
        llvm::Function *entry = m->getFunction(entry_name);
        internal_assert(entry) << "AOT: no host function " << entry_name;
        entry->setLinkage(llvm::GlobalValue::InternalLinkage);
        Tables t(*m, prefix);
        tables.push_back(t.pipeline(builds[i], name, cubins[i], entry));
    }
    Dispatch dispatch;
    if (!several) {
        dispatch.pipeline = tables[0];
    } else {
        llvm::PointerType *ptr = llvm::PointerType::get(context, 0);
        auto *array_t = llvm::ArrayType::get(ptr, tables.size());
        std::vector<llvm::Constant *> items(tables.begin(), tables.end());
        dispatch.builds = new llvm::GlobalVariable(
            *m, array_t, true, llvm::GlobalValue::InternalLinkage,
            llvm::ConstantArray::get(array_t, items), "aicf." + name + ".builds");
        dispatch.chosen = new llvm::GlobalVariable(
            *m, ptr, false, llvm::GlobalValue::InternalLinkage, llvm::ConstantPointerNull::get(ptr),
            "aicf." + name + ".chosen");
        dispatch.count = int(tables.size());
    }
    add_c_functions(*m, builds[0].args, name, dispatch);
    std::string errors;
    llvm::raw_string_ostream os(errors);
    if (llvm::verifyModule(*m, &os)) internal_error << "AOT module does not verify:\n" << os.str();
    optimize_module(*m, *tm);

    if (!files.assembly.empty()) {
        std::unique_ptr<llvm::Module> copy = llvm::CloneModule(*m);
        write_file(files.assembly, emit(*tm, *copy, llvm::CodeGenFileType::AssemblyFile));
    }
    if (files.object.empty() && files.static_library.empty()) return;
    std::string object = emit(*tm, *m, llvm::CodeGenFileType::ObjectFile);
    if (!files.object.empty()) write_file(files.object, object);
    if (!files.static_library.empty()) {
        std::unique_ptr<llvm::MemoryBuffer> buffer =
            llvm::MemoryBuffer::getMemBuffer(object, name + ".o", false);
        std::vector<llvm::NewArchiveMember> members;
        members.emplace_back(buffer->getMemBufferRef());
        if (llvm::Error err = llvm::writeArchive(files.static_library, members,
                                                 llvm::SymtabWritingMode::NormalSymtab,
                                                 llvm::object::Archive::K_GNU, true, false)) {
            runtime_error_report << "Cannot write " << files.static_library << ": "
                                 << take_error(std::move(err));
        }
    }
}

} // namespace backends
} // namespace aicf
