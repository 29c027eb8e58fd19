#include "dsl/Pipeline.h"

#include "dsl/BufferMemory.h"
#include "dsl/Fingerprint.h"
#include "dsl/Names.h"
#include "dsl/base/Changes.h"
#include "dsl/base/Error.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>

#include <pthread.h>

namespace aicf {

using namespace ir;

namespace detail {

namespace {

PipelineCompiler *&compiler_slot() {
    static PipelineCompiler *c = nullptr;
    return c;
}

PipelineCompiler &get_compiler() {
    PipelineCompiler *c = compiler_slot();
    internal_assert(c != nullptr) << "No pipeline compiler is registered: link the aicf library.";
    return *c;
}

// Runs `work` on a thread of its own with a 1 GiB stack (address space, touched only as deep
// as the recursion goes) and rethrows what it throws. Lowering and LLVM recurse over the IR,
// and Funcs inlined into one another make expressions deeper than any one definition, deeper
// than the stack of the caller's thread (8 MiB, or far less on some threads) may hold. Where
// no such thread can be made, the work runs on the caller's thread.
void on_large_stack(const std::function<void()> &work) {
    struct Job {
        const std::function<void()> *work;
        std::exception_ptr error;
    } job{&work, nullptr};
    pthread_attr_t attr;
    bool made = pthread_attr_init(&attr) == 0;
    made = made && pthread_attr_setstacksize(&attr, size_t(1) << 30) == 0;
    pthread_t thread;
    made = made && pthread_create(
                       &thread, &attr,
                       [](void *p) -> void * {
                           auto *j = static_cast<Job *>(p);
                           try {
                               (*j->work)();
                           } catch (...) {
                               j->error = std::current_exception();
                           }
                           return nullptr;
                       },
                       &job) == 0;
    pthread_attr_destroy(&attr);
    if (!made) {
        work();
        return;
    }
    pthread_join(thread, nullptr);
    if (job.error) std::rethrow_exception(job.error);
}

// Visits every Expr of every definition of every Func in env.
template <typename F>
void for_each_definition_expr(const std::map<std::string, Function> &env, F &&f) {
    for (const auto &kv : env) {
        const Function &fn = kv.second;
        for (int s = 0; s < fn.stages(); s++) {
            const Definition &d = fn.stage(s);
            for (const Expr &e : d.args)
                f(e);
            for (const Expr &e : d.values)
                f(e);
            if (d.rdom.defined()) {
                for (const ReductionVariable &rv : d.rdom.domain()) {
                    f(rv.min);
                    f(rv.extent);
                }
                if (d.rdom.predicate().defined()) f(d.rdom.predicate());
            }
            // Schedules may use Params too (a split factor or a prefetch's look-ahead known
            // only at run time).
            for (const Split &sp : d.schedule.splits)
                if (sp.factor.defined()) f(sp.factor);
            for (const Prefetch &p : d.schedule.prefetches)
                f(p.offset);
        }
        for (const RegionConstraint &c : fn.schedule().region_constraints) {
            for (const Expr &e : {c.min, c.extent, c.modulus, c.remainder})
                if (e.defined()) f(e);
        }
        for (const StorageAlignment &a : fn.schedule().storage_alignment)
            f(a.alignment);
    }
}

} // namespace

void register_pipeline_compiler(PipelineCompiler *compiler) {
    compiler_slot() = compiler;
}

namespace {

// For a clash of names, when one of the two was made without a name.
std::string unnamed_hint(const std::string &name) {
    if (!detail::is_generated_name(name)) return "";
    return " One of them was made without a name and given " + name +
           " by AICF before the other was named so: name the first one too, or choose "
           "another name.";
}

} // namespace

std::map<std::string, Function> find_transitive_calls(const std::vector<Function> &outputs) {
    std::map<std::string, Function> env;
    std::vector<Function> stack(outputs.begin(), outputs.end());
    while (!stack.empty()) {
        Function f = stack.back();
        stack.pop_back();
        auto it = env.find(f.name());
        if (it != env.end()) {
            user_assert(it->second.same_as(f))
                << "Two different Funcs are both named " << f.name()
                << " in this pipeline. Give each Func its own name." << unnamed_hint(f.name());
            continue;
        }
        user_assert(f.has_pure_definition())
            << "Func " << f.name() << " is used but has no definition.";
        env.emplace(f.name(), f);
        for (const Function &g : direct_callees(f))
            stack.push_back(g);
        for (const auto &w : f.get()->wrappers)
            stack.push_back(Function(w.second.get()));
    }
    return env;
}

std::vector<Argument> infer_arguments(const std::vector<Function> &outputs) {
    std::map<std::string, Function> env = find_transitive_calls(outputs);
    std::map<std::string, Argument> inputs;
    auto add = [&](const Parameter &p) {
        auto it = inputs.find(p.name());
        if (it != inputs.end()) {
            const Parameter &q = it->second.param;
            bool same = q.same_as(p) ||
                        (p.is_buffer() && q.is_buffer() && p.buffer() && p.buffer() == q.buffer() &&
                         p.is_concrete_buffer() && q.is_concrete_buffer());
            user_assert(same) << "Two different inputs are both named " << p.name()
                              << " in this pipeline. Give each Param, ImageParam and Buffer its "
                              << "own name." << unnamed_hint(p.name());
            return;
        }
        user_assert(!env.count(p.name()))
            << "The input " << p.name() << " has the same name as a Func of this pipeline."
            << unnamed_hint(p.name());
        Argument a;
        a.name = p.name();
        a.is_buffer = p.is_buffer();
        a.type = p.type();
        a.dimensions = p.dimensions();
        a.param = p;
        if (p.is_buffer() && p.is_concrete_buffer() && p.buffer()) {
            for (int d = 0; d < p.buffer()->dimensions(); d++)
                a.known_strides.push_back(p.buffer()->dim(d).stride);
        }
        inputs.emplace(p.name(), a);
    };
    for_each_definition_expr(env, [&](const Expr &e) {
        struct Finder : IRGraphVisitor {
            std::function<void(const Parameter &)> add;
            using IRGraphVisitor::visit;
            // RDom bounds and predicates are visited with the definitions that use them.
            void visit(const Variable *op) override {
                if (first_visit(op) && op->param.defined()) add(op->param);
            }
            void visit(const Call *op) override {
                if (!first_visit(op)) return;
                if (op->call_type == Call::Image) add(op->param);
                IRVisitor::visit(op);
            }
        } finder;
        finder.add = add;
        e.accept(&finder);
    });

    std::vector<Argument> args;
    for (auto &kv : inputs)
        args.push_back(kv.second);
    for (const Function &f : outputs) {
        for (int i = 0; i < f.outputs(); i++) {
            Argument a;
            a.name = storage_name(f.name(), i, f.outputs());
            a.is_buffer = true;
            a.is_output = true;
            a.type = f.output_types()[i];
            a.dimensions = f.dimensions();
            args.push_back(a);
        }
    }
    return args;
}

namespace {

std::mutex cache_lock;
// Lives as long as the process: its pipelines' code stays valid until exit, and nothing is
// torn down in an order static destruction would pick.
std::map<std::string, std::shared_ptr<CompiledPipeline>> &cache() {
    static auto *c = [] {
        // A child of fork() must not inherit the lock held by a thread that no longer
        // exists there: fork waits for it.
        pthread_atfork([] { cache_lock.lock(); }, [] { cache_lock.unlock(); },
                       [] { cache_lock.unlock(); });
        return new std::map<std::string, std::shared_ptr<CompiledPipeline>>;
    }();
    return *c;
}

} // namespace

size_t compiled_pipeline_count() {
    std::lock_guard<std::mutex> guard(cache_lock);
    return cache().size();
}

} // namespace detail

Pipeline::Pipeline(const Func &output) : Pipeline(std::vector<Func>{output}) {}

Pipeline::Pipeline(const std::vector<Func> &outputs) {
    user_assert(!outputs.empty()) << "A Pipeline needs at least one output Func.";
    for (const Func &f : outputs) {
        user_assert(f.defined()) << "Func " << f.name()
                                 << " has no definition, so it cannot be realized.";
        for (const Function &earlier : outputs_) {
            user_assert(!earlier.same_as(f.function()))
                << "Func " << f.name() << " is listed twice among the outputs of a Pipeline. "
                << "Each output is one buffer, written once: list it once (for a second buffer "
                << "with the same values, list " << f.name() << ".in() as the other output).";
        }
        outputs_.push_back(f.function());
    }
}

void Pipeline::compile_jit(const Target &target) {
    compiled_for(target);
}

Pipeline::Compiled Pipeline::compiled_for(const Target &target) {
    // One thread at a time per Pipeline: a second thread realizing it waits for the first's
    // compilation instead of compiling again.
    std::lock_guard<std::mutex> own(*lock_);
    // Nothing changed since the last lookup: the same code (the common case of realizing a
    // pipeline over and over costs no walk of its definition).
    const uint64_t changes = detail::definition_changes();
    if (compiled_ && compiled_changes_ == changes && compiled_target_ == target)
        return {compiled_, args_};
    // Out of memory anywhere on the way (the key, the lookup, the compilation) is the same
    // CompileError: which allocation fails first depends on what the process did before.
    auto out_of_memory = [&] {
        user_error << "Out of memory while compiling pipeline " << outputs_[0].name() << " for "
                   << target.to_string() << ". Free memory, or split the pipeline (fewer "
                   << "unrolled or vectorized loops make smaller code).";
    };
    try {
        args_ = detail::infer_arguments(outputs_);
        std::string key = detail::fingerprint(outputs_, args_, target);
        compiled_target_ = target;
        if (compiled_ && key == compiled_key_) {
            compiled_changes_ = changes;
            return {compiled_, args_};
        }
        {
            std::lock_guard<std::mutex> guard(detail::cache_lock);
            auto it = detail::cache().find(key);
            if (it != detail::cache().end()) {
                compiled_ = it->second;
                compiled_key_ = key;
                compiled_changes_ = changes;
                return {compiled_, args_};
            }
        }
        std::shared_ptr<CompiledPipeline> c;
        detail::on_large_stack(
            [&] { c = detail::get_compiler().compile(outputs_, args_, target); });
        std::lock_guard<std::mutex> guard(detail::cache_lock);
        detail::cache()[key] = c;
        compiled_ = c;
        compiled_key_ = key;
        // Compiling changes nothing the user wrote, but lowering works on copies of the Funcs and
        // counts their changes: the count from before compiling would never be seen again.
        compiled_changes_ = detail::definition_changes();
        return {compiled_, args_};
    } catch (const std::bad_alloc &) {
        out_of_memory();
    }
    return {compiled_, args_}; // not reached: out_of_memory() throws
}

Callable Pipeline::compile_to_callable(const Target &target) {
    const Compiled compiled = compiled_for(target);
    Callable c;
    c.name_ = outputs_[0].name();
    c.code_ = compiled.code;
    c.args_ = compiled.args;
    return c;
}

std::string Pipeline::lower_to_text(const Target &target, detail::LoweredText what) const {
    std::string text;
    detail::on_large_stack([&] {
        text = detail::get_compiler().lower_to_text(outputs_, detail::infer_arguments(outputs_),
                                                    target, what);
    });
    return text;
}

namespace {

void write_text_file(const std::string &filename, const std::string &text, const char *directive) {
    std::ofstream out(filename);
    user_assert(out.good()) << directive << ": cannot open " << filename << " for writing.";
    out << text;
}

} // namespace

void Pipeline::compile_to_files(const std::string &function_name, const std::vector<Argument> &args,
                                const OutputFiles &files, const Target &target) const {
    compile_multitarget_to_files(function_name, {{*this, args, target}}, files);
}

void Pipeline::compile_to_files(const std::string &function_name, const OutputFiles &files,
                                const Target &target) const {
    compile_to_files(function_name, detail::infer_arguments(outputs_), files, target);
}

void Pipeline::compile_multitarget_to_files(const std::string &function_name,
                                            const std::vector<TargetBuild> &builds,
                                            const OutputFiles &files) {
    user_assert(!builds.empty()) << "compile_multitarget_to_files of " << function_name
                                 << ": no builds to compile.";
    // Each file its own path: one written over another would leave only the last.
    const std::vector<std::pair<const char *, const std::string *>> paths = {
        {"object", &files.object},     {"static_library", &files.static_library},
        {"c_header", &files.c_header}, {"ptx", &files.ptx},
        {"stmt", &files.stmt},         {"assembly", &files.assembly}};
    // Spellings of one file ("d/f.o", "d/./f.o", a link to it) are one path.
    auto file_of = [](const std::string &path) {
        std::error_code ignored;
        std::filesystem::path p = std::filesystem::weakly_canonical(path, ignored);
        return p.empty() ? std::filesystem::absolute(path, ignored).lexically_normal() : p;
    };
    for (size_t i = 0; i < paths.size(); i++)
        for (size_t j = 0; j < i; j++)
            user_assert(paths[i].second->empty() || paths[j].second->empty() ||
                        file_of(*paths[i].second) != file_of(*paths[j].second))
                << "compile_to_files of " << function_name << ": OutputFiles::" << paths[j].first
                << " (" << *paths[j].second << ") and OutputFiles::" << paths[i].first << " ("
                << *paths[i].second << ") are the same file; give each file its own path.";
    std::vector<detail::PipelineCompiler::Build> lowered;
    for (const TargetBuild &b : builds) {
        const std::vector<ir::Function> &outputs = b.pipeline.outputs_;
        std::vector<Argument> args = b.args.empty() ? detail::infer_arguments(outputs) : b.args;
        // Every input the pipeline reads and every output it computes must be one of the
        // arguments, once, as the pipeline has it: the generated code takes each argument as
        // the list describes it.
        const std::vector<Argument> needed_args = detail::infer_arguments(outputs);
        auto describe = [](const Argument &a) {
            return a.is_buffer
                       ? std::string(a.is_output ? "an output" : "an input") + " buffer of " +
                             ir::to_string(a.type) + " with " + std::to_string(a.dimensions) +
                             " dimension" + (a.dimensions == 1 ? "" : "s")
                       : "a scalar of " + ir::to_string(a.type);
        };
        for (size_t i = 0; i < args.size(); i++) {
            for (size_t j = 0; j < i; j++)
                user_assert(args[j].name != args[i].name)
                    << "compile_to_files of " << function_name << ": argument " << args[i].name
                    << " is listed twice.";
            for (const Argument &needed : needed_args) {
                if (needed.name != args[i].name) continue;
                const Argument &a = args[i];
                user_assert(a.is_buffer == needed.is_buffer && a.is_output == needed.is_output &&
                            a.type == needed.type &&
                            (!a.is_buffer || a.dimensions == needed.dimensions))
                    << "compile_to_files of " << function_name << " for " << b.target.to_string()
                    << ": argument " << a.name << " is listed as " << describe(a)
                    << ", but the pipeline's " << a.name << " is " << describe(needed) << ".";
            }
        }
        for (const Argument &needed : needed_args) {
            bool found = false;
            for (const Argument &a : args)
                found = found || a.name == needed.name;
            user_assert(found) << "compile_to_files of " << function_name << " for "
                               << b.target.to_string() << ": the pipeline "
                               << (needed.is_output ? "computes " : "reads ")
                               << (needed.is_buffer ? "the buffer " : "the scalar ") << needed.name
                               << ", which is not among its arguments.";
        }
        lowered.push_back({outputs, args, b.target});
    }
    detail::on_large_stack(
        [&] { detail::get_compiler().compile_to_files(lowered, function_name, files); });
}

std::string Pipeline::lowered_stmt(const Target &target) const {
    return lower_to_text(target, detail::LoweredText::Stmt);
}

std::string Pipeline::ptx(const Target &target) const {
    return lower_to_text(target, detail::LoweredText::PTX);
}

void Pipeline::compile_to_ptx(const std::string &filename, const Target &target) const {
    write_text_file(filename, ptx(target), "compile_to_ptx");
}

std::string Pipeline::assembly(const Target &target) const {
    return lower_to_text(target, detail::LoweredText::HostAssembly);
}

void Pipeline::compile_to_assembly(const std::string &filename, const Target &target) const {
    write_text_file(filename, assembly(target), "compile_to_assembly");
}

DataflowReport Pipeline::report(const std::vector<int> &sizes, const Target &target,
                                const ReportArguments &args, bool baseline) const {
    DataflowReport r;
    detail::on_large_stack([&] {
        r = detail::get_compiler().report(outputs_, detail::infer_arguments(outputs_), target,
                                          sizes, args, baseline);
    });
    return r;
}

std::string Pipeline::kernel_resources(const Target &target) const {
    return lower_to_text(target, detail::LoweredText::KernelResources);
}

std::string Pipeline::loop_nest(const Target &target) const {
    return lower_to_text(target, detail::LoweredText::LoopNest);
}

Realization Pipeline::realize(const std::vector<int> &sizes, const Target &target) {
    std::vector<Buffer<>> buffers;
    for (const Function &f : outputs_) {
        user_assert(static_cast<int>(sizes.size()) == f.dimensions())
            << "Func " << f.name() << " has " << f.dimensions() << " dimension"
            << (f.dimensions() == 1 ? "" : "s") << ", but realize was given " << sizes.size()
            << " size" << (sizes.size() == 1 ? "" : "s") << ".";
        for (size_t d = 0; d < sizes.size(); d++) {
            if (sizes[d] < 0) {
                runtime_error_report << "realize of Func " << f.name() << ": the size of dimension "
                                     << d << " is negative (" << sizes[d] << ").";
            }
        }
        for (int i = 0; i < f.outputs(); i++) {
            std::string name = f.outputs() == 1 ? f.name() : f.name() + "_" + std::to_string(i);
            buffers.emplace_back(f.output_types()[i], sizes, name);
        }
    }
    Realization r(buffers);
    realize(r, target);
    return r;
}

namespace {

// A buffer with points and no memory (a host pointer set to null through raw_buffer(), and no
// device allocation) is refused before the pipeline runs.
void check_buffers_have_memory(const std::vector<Argument> &args,
                               const std::vector<void *> &pointers) {
    for (size_t i = 0; i < args.size(); i++) {
        if (!(args[i].is_buffer || args[i].is_output)) continue;
        const auto *b = static_cast<const aicf_buffer_t *>(pointers[i]);
        if (b->host || b->device) continue;
        int64_t points = 1;
        for (int d = 0; d < b->dimensions; d++)
            points *= std::max<int64_t>(b->dim[d].extent, 0);
        if (points == 0) continue;
        runtime_error_report << "Buffer " << args[i].name << " has " << points
                             << " points but no memory: its host pointer is null and it has no "
                             << "device allocation.";
    }
}

// Compiled code assumes that what it writes is not also read through another buffer (loads
// and stores of different buffers are reordered freely), so an output that shares memory
// with an input or another output is refused.
void check_outputs_do_not_overlap(const std::vector<Argument> &args,
                                  const std::vector<void *> &pointers) {
    for (size_t i = 0; i < args.size(); i++) {
        if (!args[i].is_output) continue;
        const auto *out = static_cast<const aicf_buffer_t *>(pointers[i]);
        if (const int32_t d = aicf_buffer_self_overlap(out); d >= 0) {
            runtime_error_report
                << "The output buffer " << args[i].name << " may have points that share "
                << "memory: dimension " << d << " has stride " << out->dim[d].stride
                << ", within the span of the dimensions of smaller strides. Every point of an "
                << "output needs memory of its own (a stride of 0, or rows that overlap, would "
                << "make the pipeline's writes race and overwrite each other): give each "
                << "dimension a stride beyond the span of those with smaller strides.";
        }
        if (!out->host) continue;
        for (size_t j = 0; j < args.size(); j++) {
            if (j == i || !(args[j].is_buffer || args[j].is_output)) continue;
            if (args[j].is_output && j < i) continue; // each pair of outputs once
            const auto *other = static_cast<const aicf_buffer_t *>(pointers[j]);
            // Views of one array whose elements interleave (a matrix's halves) are distinct.
            if (!other->host ||
                !buffers_share_memory(out, reinterpret_cast<uintptr_t>(out->host), other,
                                      reinterpret_cast<uintptr_t>(other->host)))
                continue;
            runtime_error_report
                << "The output buffer " << args[i].name << " shares memory with the "
                << (args[j].is_output ? "output" : "input") << " buffer " << args[j].name
                << ". A pipeline's outputs must not overlap its "
                << "inputs or one another: the compiled code reorders the loads and "
                << "stores of different buffers. Realize into a separate buffer (or "
                << "pass a copy of the input).";
        }
    }
}

// Memory a Buffer borrows belongs to the caller, who may have written it since a GPU pipeline
// copied it to the device: an input in borrowed memory is copied again by every GPU run
// (unless its device copy is the newer one).
void refresh_borrowed_input(BufferStorage &s) {
    if (s.borrows_memory() && s.has_device_copy() && !s.device_dirty()) s.set_host_dirty();
}

// The caller reads borrowed memory directly, without the Buffer: an output in borrowed memory
// that a GPU pipeline wrote is copied back when the run ends, so that the caller's memory
// holds the results and the caller's later writes are the newest data.
void copy_back_borrowed_output(BufferStorage &s) {
    if (s.borrows_memory() && s.device_dirty()) s.copy_to_host();
}

// Runs compiled code. Its run-time errors name buffers as the pipeline does (the Func of an
// output, an ImageParam, the Buffer it was compiled with); where the caller passed a Buffer
// of another name for one, the message says which.
void run_naming_passed_buffers(const CompiledPipeline &code, const std::vector<Argument> &args,
                               void *const *pointers,
                               const std::vector<const BufferStorage *> &passed) {
    try {
        code.run(pointers);
    } catch (const KernelFault &) {
        throw;
    } catch (const RuntimeError &e) {
        std::string msg = e.what();
        bool renamed = false;
        for (size_t i = 0; i < args.size() && i < passed.size(); i++) {
            const BufferStorage *b = passed[i];
            if (!b || b->name() == args[i].name) continue;
            const std::string named = "Buffer " + args[i].name;
            if (msg.find(named + " ") == std::string::npos &&
                msg.find(named + ":") == std::string::npos)
                continue;
            msg += " (Buffer " + args[i].name + " is the Buffer " + b->name() + " passed for " +
                   (args[i].is_output ? "output " : "input ") + args[i].name + ".)";
            renamed = true;
        }
        if (!renamed) throw;
        throw RuntimeError(msg);
    }
}

} // namespace

void Pipeline::realize(const Realization &outputs, const Target &target) {
    const Compiled compiled = compiled_for(target);
    const std::vector<Argument> &args = compiled.args;
    std::vector<void *> pointers;
    std::vector<const BufferStorage *> passed;
    size_t next_output = 0;
    for (const Argument &a : args) {
        passed.push_back(nullptr);
        if (a.is_output) {
            user_assert(next_output < outputs.size())
                << "realize was given " << outputs.size() << " output buffer"
                << (outputs.size() == 1 ? "" : "s") << ", but the pipeline has more outputs ("
                << a.name << " has none).";
            const Buffer<> &b = outputs[next_output++];
            runtime_assert(b.defined())
                << "realize was given an undefined Buffer for " << a.name << ".";
            passed.back() = b.storage().get();
            pointers.push_back(b.raw_buffer());
        } else if (a.is_buffer) {
            const std::shared_ptr<BufferStorage> &s = a.param.buffer();
            if (!s) {
                runtime_error_report << "ImageParam " << a.name << " has no buffer bound. Call "
                                     << a.name << ".set(buffer) before realizing.";
            }
            refresh_borrowed_input(*s);
            passed.back() = s.get();
            pointers.push_back(s->raw());
        } else {
            // A Param read before it has a value would silently be 0.
            if (!a.param.scalar_set()) {
                runtime_error_report << "Param " << a.name << " has no value. Call " << a.name
                                     << ".set(value) before realizing, or give it one when it "
                                     << "is made: " << a.name << "(value, \"" << a.name << "\").";
            }
            // Scalars are stored as raw bits in the Parameter; the low bytes hold the value.
            pointers.push_back(const_cast<uint64_t *>(&a.param.get()->scalar_bits));
        }
    }
    user_assert(next_output == outputs.size())
        << "realize was given " << outputs.size() << " output buffers, but the pipeline has "
        << next_output << ".";
    check_buffers_have_memory(args, pointers);
    check_outputs_do_not_overlap(args, pointers);
    run_naming_passed_buffers(*compiled.code, args, pointers.data(), passed);
    for (size_t i = 0; i < outputs.size(); i++)
        copy_back_borrowed_output(*outputs[i].storage());
}

void Callable::call(const CallArgument *given, size_t count) const {
    user_assert(code_ != nullptr) << "Call of an undefined Callable: make it with "
                                  << "Pipeline::compile_to_callable.";
    auto listed = [&] {
        std::string names;
        for (const Argument &a : args_)
            names += (names.empty() ? "" : ", ") + a.name;
        return names;
    };
    user_assert(count == args_.size())
        << "The Callable of pipeline " << name_ << " takes " << args_.size() << " argument"
        << (args_.size() == 1 ? "" : "s") << " (" << listed() << "), but was called with " << count
        << ".";
    std::vector<void *> pointers(count);
    std::vector<const BufferStorage *> passed(count, nullptr);
    for (size_t i = 0; i < count; i++) {
        const Argument &a = args_[i];
        const CallArgument &g = given[i];
        if (a.is_buffer || a.is_output) {
            user_assert(g.buffer != nullptr)
                << "Argument " << i << " (" << a.name << ") of the Callable of pipeline " << name_
                << " is " << (a.is_output ? "an output" : "an input") << " buffer of "
                << to_string(a.type) << ", but a scalar was passed.";
            runtime_assert(g.buffer->defined())
                << "Argument " << i << " (" << a.name << ") of the Callable of pipeline " << name_
                << " is an undefined Buffer.";
            if (!a.is_output) refresh_borrowed_input(*g.buffer->storage());
            passed[i] = g.buffer->storage().get();
            pointers[i] = g.buffer->raw_buffer();
            continue;
        }
        user_assert(g.buffer == nullptr)
            << "Argument " << i << " (" << a.name << ") of the Callable of pipeline " << name_
            << " is " << with_article(a.type) << " scalar, but a buffer was passed.";
        user_assert(g.type == a.type)
            << "Argument " << i << " (" << a.name << ") of the Callable of pipeline " << name_
            << " is " << with_article(a.type) << " scalar, but " << with_article(g.type)
            << " was passed. Pass a value of exactly that type (a cast is explicit).";
        pointers[i] = const_cast<uint64_t *>(&g.bits);
    }
    check_buffers_have_memory(args_, pointers);
    check_outputs_do_not_overlap(args_, pointers);
    run_naming_passed_buffers(*code_, args_, pointers.data(), passed);
    for (size_t i = 0; i < count; i++)
        if (args_[i].is_output) copy_back_borrowed_output(*given[i].buffer->storage());
}

} // namespace aicf
