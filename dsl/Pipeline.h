#ifndef AICF_PIPELINE_H
#define AICF_PIPELINE_H

// Pipeline: a set of output Funcs compiled and run together. Func::realize builds one.
//
// This header also holds the one seam between the language (dsl/) and the compiler
// (lowering/ and backends/): the PipelineCompiler interface, which the backends register
// when the AICF library loads.

#include "dsl/Func.h"
#include "dsl/Report.h"
#include "dsl/Target.h"

#include <array>
#include <cstring>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

namespace aicf {

// One argument of a compiled pipeline, in the order the compiled code expects them.
struct Argument {
    std::string name;
    bool is_buffer = false;
    bool is_output = false;
    ir::Type type;
    int dimensions = 0;
    ir::Parameter param; // inputs: the Parameter the algorithm refers to
    // The strides of a concrete Buffer input (dimension by dimension), which code compiled in
    // this process takes as constants, as Halide's JIT does: a row's offset is then a constant
    // displacement, not one more pointer to keep in a register. Empty for other arguments and
    // for code compiled ahead of time.
    std::vector<int> known_strides;
};

// The files a pipeline compiled ahead of time is written to; an empty path writes nothing.
// (backends/runtime/AOTABI.h describes the C functions the object and header hold.)
struct OutputFiles {
    std::string object;         // an object file
    std::string static_library; // an archive holding that object
    std::string c_header;       // the declarations of the pipeline's C functions
    std::string ptx;            // its GPU kernels, as one PTX module
    std::string stmt;           // the lowered IR
    std::string assembly;       // the host code, as assembly
    // GPU architectures ("sm_90") the object also carries each kernel assembled for (by the
    // CUDA toolkit's ptxas), beside its PTX.
    std::vector<std::string> cubins;
};

// A pipeline compiled to machine code.
class CompiledPipeline {
public:
    virtual ~CompiledPipeline() = default;
    // Runs with one pointer per argument: an aicf_buffer_t * for buffers, a pointer to the
    // value for scalars. Raises RuntimeError when the pipeline reports an error.
    virtual void run(void *const *args) const = 0;
};

namespace detail {

// What lower_to_text returns: the final lowered IR, the loop nest alone, the kernels as PTX,
// what ptxas reports about each kernel (registers, spills, shared memory), or the host code as
// this CPU's assembly.
enum class LoweredText { Stmt, LoopNest, PTX, KernelResources, HostAssembly };

struct PipelineCompiler {
    virtual ~PipelineCompiler() = default;
    virtual std::shared_ptr<CompiledPipeline> compile(const std::vector<ir::Function> &outputs,
                                                      const std::vector<Argument> &args,
                                                      const Target &target) = 0;
    virtual std::string lower_to_text(const std::vector<ir::Function> &outputs,
                                      const std::vector<Argument> &args, const Target &target,
                                      LoweredText what) = 0;
    // One build per target (one for most libraries), most preferred first.
    struct Build {
        std::vector<ir::Function> outputs;
        std::vector<Argument> args;
        Target target;
    };
    virtual void compile_to_files(const std::vector<Build> &builds,
                                  const std::string &function_name, const OutputFiles &files) = 0;
    virtual DataflowReport report(const std::vector<ir::Function> &outputs,
                                  const std::vector<Argument> &args, const Target &target,
                                  const std::vector<int> &sizes, const ReportArguments &given,
                                  bool baseline) = 0;
};

// How many pipelines have been compiled in this process (each distinct algorithm and
// schedule once: realizing again reuses the compiled code).
size_t compiled_pipeline_count();

void register_pipeline_compiler(PipelineCompiler *compiler);

// Every Func the outputs depend on (including themselves), by name. Raises CompileError if
// two different Funcs share a name.
std::map<std::string, ir::Function> find_transitive_calls(const std::vector<ir::Function> &outputs);

// The inputs the outputs read (scalars and buffers), sorted by name, then one output buffer
// per output Func and Tuple element.
std::vector<Argument> infer_arguments(const std::vector<ir::Function> &outputs);

} // namespace detail

// A pipeline compiled once, called with its arguments in order: Buffers (of any element type
// and rank: the compiled code checks them) for the ImageParams, concrete input Buffers and
// outputs, and C++ scalars of exactly the Params' types (float for Param<float>, and so on).
// Each call checks the arguments' number and kinds and raises CompileError naming the first
// wrong one; a buffer the pipeline cannot use raises RuntimeError, as realize does. Copies share
// the compiled code; calls may come from several threads at once.
//
//   Callable blur = Pipeline(out).compile_to_callable();
//   blur(input, 0.5f, output); // arguments() order: in, weight, out
class Callable {
public:
    Callable() = default;
    const std::vector<Argument> &arguments() const { return args_; }
    bool defined() const { return code_ != nullptr; }

    template <typename... Args> void operator()(const Args &...args) const {
        const std::array<CallArgument, sizeof...(Args)> list = {CallArgument(args)...};
        call(list.data(), list.size());
    }

    // One argument of a call: a buffer, or a scalar's type and bits.
    struct CallArgument {
        const BufferBase *buffer = nullptr;
        ir::Type type;
        uint64_t bits = 0;
        CallArgument(const BufferBase &b) : buffer(&b) {}
        template <typename T,
                  std::enable_if_t<std::is_arithmetic_v<T> || std::is_same_v<T, float16_t> ||
                                       std::is_same_v<T, bfloat16_t>,
                                   int> = 0>
        CallArgument(T v) : type(ir::type_of<T>()) {
            static_assert(sizeof(T) <= sizeof(uint64_t), "a scalar of at most 64 bits");
            std::memcpy(&bits, &v, sizeof(T));
        }
    };
    void call(const CallArgument *args, size_t count) const;

private:
    friend class Pipeline;
    std::string name_;
    std::shared_ptr<CompiledPipeline> code_;
    std::vector<Argument> args_;
};

// Pipelines may be realized from several threads at once, one Pipeline object included
// (the README's "Threads" says what else is shared).
class Pipeline {
public:
    explicit Pipeline(const Func &output);
    explicit Pipeline(const std::vector<Func> &outputs);

    Realization realize(const std::vector<int> &sizes,
                        const Target &target = get_target_from_environment());
    // realize({}) for outputs of no dimensions, as Func::realize.
    Realization realize(std::initializer_list<int> sizes,
                        const Target &target = get_target_from_environment()) {
        return realize(std::vector<int>(sizes), target);
    }
    void realize(const Realization &outputs, const Target &target = get_target_from_environment());
    std::string lowered_stmt(const Target &target = get_target_from_environment()) const;
    std::string loop_nest(const Target &target = get_target_from_environment()) const;
    // The GPU kernels as one PTX module for the target's architecture.
    std::string ptx(const Target &target) const;
    void compile_to_ptx(const std::string &filename, const Target &target) const;
    // Per kernel, what ptxas reports: registers, spills, stack and static shared memory
    // (needs the CUDA toolkit's ptxas).
    std::string kernel_resources(const Target &target) const;
    // The host code as assembly for this CPU: the loops that run on it, optimized exactly as
    // the JIT compiles them.
    std::string assembly(const Target &target = get_target_from_environment()) const;
    void compile_to_assembly(const std::string &filename,
                             const Target &target = get_target_from_environment()) const;

    // The dataflow report (dsl/Report.h) of the pipeline for a GPU target with outputs of
    // `sizes`, counted from its kernels without running them. `args` gives the extents of
    // ImageParams and the values of Params. With `baseline`, the report also lowers the same
    // algorithm one operator per kernel (every Func its own kernel, a plain GPU schedule)
    // and compares. Raises CompileError for a target without a GPU, a missing size, or sizes
    // the pipeline rejects (the message says which check).
    DataflowReport report(const std::vector<int> &sizes, const Target &target,
                          const ReportArguments &args = ReportArguments(),
                          bool baseline = true) const;

    // Compiles now (realize compiles on first use otherwise).
    void compile_jit(const Target &target = get_target_from_environment());

    // The pipeline compiled for `target`, as an object that runs it with its arguments given
    // directly (Halide's compile_to_callable): no lookup of the compiled code, no output
    // buffers made. Its arguments are those `arguments()` lists (the inputs the pipeline reads
    // sorted by name, then its outputs). Later changes to the algorithm or the schedule do not
    // change it.
    Callable compile_to_callable(const Target &target = get_target_from_environment());

    // Compiles ahead of time into `files`, with the C functions function_name,
    // function_name_argv and function_name_metadata taking `args` in that order (each of the
    // pipeline's inputs, then its outputs, as detail::infer_arguments lists them; an input
    // the pipeline does not read may be among them). Raises CompileError naming the argument
    // when one the pipeline has is missing, listed twice, or listed with another type, rank
    // or kind, and when two of `files` share a path.
    void compile_to_files(const std::string &function_name, const std::vector<Argument> &args,
                          const OutputFiles &files, const Target &target) const;
    // The same with the arguments infer_arguments gives (inputs sorted by name, then outputs).
    void compile_to_files(const std::string &function_name, const OutputFiles &files,
                          const Target &target) const;

    // One build of a library compiled for several targets: the pipeline (its schedule may
    // differ from target to target), its arguments (empty: those infer_arguments gives) and
    // its target.
    struct TargetBuild {
        const Pipeline &pipeline;
        std::vector<Argument> args;
        Target target;
    };
    // Compiles several builds of one algorithm into one library (`files`), most preferred
    // first. They must take the same arguments. Its C function runs the first build that
    // this machine runs, chosen at the first call:
    //   - its CPU has the features of the build's CPU level (x86-64-v4: AVX-512, ...);
    //   - a build with GPU kernels needs a CUDA GPU that runs them (the architecture it was
    //     compiled for or a newer one), or AICF_DEVICE=sim, which asks for the simulator.
    // When no build qualifies, the last one whose CPU features are present runs (its kernels
    // on the simulator, where there is no GPU). The stmt, ptx and assembly files are written
    // once per build, with the target before the extension (f.x86-64-v3.s). OutputFiles::
    // cubins go to every build whose GPU they run.
    static void compile_multitarget_to_files(const std::string &function_name,
                                             const std::vector<TargetBuild> &builds,
                                             const OutputFiles &files);

private:
    // The pipeline lowered for `target`, as the text a detail::LoweredText names.
    std::string lower_to_text(const Target &target, detail::LoweredText what) const;
    std::vector<ir::Function> outputs_;
    // The compiled code for the last target, and the arguments it takes (under lock_).
    struct Compiled {
        std::shared_ptr<CompiledPipeline> code;
        std::vector<Argument> args;
    };
    Compiled compiled_for(const Target &target);
    std::shared_ptr<CompiledPipeline> compiled_;
    std::string compiled_key_;
    std::vector<Argument> args_;
    // What compiled_ was compiled or found for: the target, and detail::definition_changes()
    // when it was looked up. While no algorithm or schedule has changed since, compiled_ is
    // still this pipeline's code, and realize skips the fingerprint.
    Target compiled_target_;
    uint64_t compiled_changes_ = ~uint64_t(0);
    std::shared_ptr<std::mutex> lock_ = std::make_shared<std::mutex>();

public:
    const std::vector<ir::Function> &output_functions() const { return outputs_; }
};

} // namespace aicf

#endif
