#include "dsl/Generator.h"

#include "dsl/base/Error.h"
#include "dsl/ir/IROperator.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <sstream>

namespace aicf {

namespace {

// The generator whose members are being constructed on this thread, and its name.
thread_local GeneratorBase *building = nullptr;
thread_local std::string building_name;

std::string join(const std::vector<std::string> &items, const char *separator = ", ") {
    std::string s;
    for (size_t i = 0; i < items.size(); i++)
        s += (i ? separator : "") + items[i];
    return s;
}

} // namespace

namespace detail {

GeneratorBase *generator_being_built() {
    return building;
}

int64_t parse_int(const std::string &text, int64_t lo, int64_t hi, const std::string &where) {
    // Decimal digits with an optional minus sign (no blanks, no octal: 010 is ten).
    bool digits = !text.empty();
    for (size_t i = 0; i < text.size(); i++)
        digits = digits && (std::isdigit(static_cast<unsigned char>(text[i])) ||
                            (i == 0 && text[i] == '-' && text.size() > 1));
    errno = 0;
    char *end = nullptr;
    long long v = digits ? std::strtoll(text.c_str(), &end, 10) : 0;
    user_assert(digits && end && *end == '\0')
        << where << " is a decimal integer, not \"" << text << "\".";
    user_assert(errno == 0) << where << " must be an integer from " << lo << " to " << hi
                            << ", not " << text << ".";
    user_assert(v >= lo && v <= hi)
        << where << " must be an integer from " << lo << " to " << hi << ", not " << text << ".";
    return v;
}

double parse_float(const std::string &text, const std::string &where) {
    errno = 0;
    char *end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    user_assert(!text.empty() && end && *end == '\0' && errno == 0 && std::isfinite(v))
        << where << " is a finite number, not \"" << text << "\".";
    return v;
}

std::string float_type_name(size_t bytes) {
    return bytes == 4 ? "float32" : "float64";
}

bool parse_bool(const std::string &text, const std::string &where) {
    if (text == "true" || text == "1") return true;
    if (text == "false" || text == "0") return false;
    user_error << where << " is true or false, not \"" << text << "\".";
    return false;
}

ir::Type parse_type(const std::string &text, const std::string &where) {
    static const std::pair<const char *, ir::Type> types[] = {
        {"bool", ir::Bool()},       {"int8", ir::Int(8)},         {"int16", ir::Int(16)},
        {"int32", ir::Int(32)},     {"int64", ir::Int(64)},       {"uint8", ir::UInt(8)},
        {"uint16", ir::UInt(16)},   {"uint32", ir::UInt(32)},     {"uint64", ir::UInt(64)},
        {"float16", ir::Float(16)}, {"bfloat16", ir::BFloat(16)}, {"float32", ir::Float(32)},
        {"float64", ir::Float(64)}, {"float", ir::Float(32)},     {"double", ir::Float(64)},
    };
    for (const auto &t : types)
        if (text == t.first) return t.second;
    user_error << where << " is a type (bool, int8, int16, int32, int64, uint8, uint16, uint32, "
               << "uint64, float16, bfloat16, float32, float64), not \"" << text << "\".";
    return ir::Type();
}

std::string type_text(ir::Type t) {
    return t.is_bool() ? "bool" : ir::to_string(t);
}

// The C++ type that declares t in Input<Buffer<T>> and Output<Buffer<T>>.
std::string cpp_type_text(ir::Type t) {
    if (t.is_bool()) return "bool";
    if (t.is_float()) {
        if (t.bits == 64) return "double";
        if (t.bits == 32) return "float";
        return t.is_bfloat() ? "bfloat16_t" : "float16_t";
    }
    return std::string(t.is_int() ? "int" : "uint") + std::to_string(t.bits) + "_t";
}

Target parse_target(const std::string &text, const std::string &where) {
    try {
        return Target(text);
    } catch (const CompileError &e) {
        user_error << where << ": " << e.what();
    }
    return Target();
}

ir::Expr int_constant(ir::Type t, int64_t v) {
    return ir::make_const(t, v);
}

ir::Expr float_constant(ir::Type t, double v) {
    return ir::make_const(t, v);
}

std::string format_float(double v, bool single) {
    for (int digits = 1; digits <= 17; digits++) {
        std::ostringstream s;
        s.precision(digits);
        s << v;
        const double back = std::strtod(s.str().c_str(), nullptr);
        if (single ? float(back) == float(v) : back == v) return s.str();
    }
    std::ostringstream s;
    s.precision(17);
    s << v;
    return s.str();
}

void bad_declaration(const std::string &param, const std::string &what) {
    throw CompileError("GeneratorParam " + param + " of " +
                       (building_name.empty() ? std::string("a generator") : building_name) + " " +
                       what + ".");
}

void out_of_range(const std::string &text, const std::string &kind, const std::string &where) {
    throw CompileError(where + " must be " + kind + ", not " + text + ".");
}

void bad_enum_value(const std::string &text, const std::vector<std::string> &names,
                    const std::string &where) {
    throw CompileError(where + " is one of " + join(names) + ", not \"" + text + "\".");
}

} // namespace detail

GeneratorParamBase::GeneratorParamBase(std::string name) : name_(std::move(name)) {
    if (building) building->add(this);
}

std::string GeneratorParamBase::where() const {
    return "GeneratorParam " + name_ + (owner ? " of " + owner->generator_name() : "");
}

GeneratorIOBase::GeneratorIOBase(std::string name, bool buffer, bool output,
                                 std::optional<ir::Type> type, int dimensions)
    : name_(std::move(name)), buffer_(buffer), output_(output), fixed_type_(type),
      fixed_dimensions_(dimensions) {
    if (!fixed_type_)
        type_param_ = std::make_unique<GeneratorParam<ir::Type>>(name_ + ".type", ir::Float(32));
    if (fixed_dimensions_ < 0)
        dim_param_ = std::make_unique<GeneratorParam<int>>(name_ + ".dim", 0, 0, 16);
    if (building) building->add(this);
}

ir::Type GeneratorIOBase::type() const {
    return fixed_type_ ? *fixed_type_ : type_param_->value();
}

int GeneratorIOBase::dimensions() const {
    return fixed_dimensions_ >= 0 ? fixed_dimensions_ : dim_param_->value();
}

std::string GeneratorIOBase::where() const {
    return std::string(output_ ? "Output " : "Input ") + name_ +
           (owner ? " of " + owner->generator_name() : "");
}

GeneratorBase::GeneratorBase() {
    building = this;
    add(&target);
    add(&cubins);
}

GeneratorBase::~GeneratorBase() {
    if (building == this) building = nullptr;
}

void GeneratorBase::add(GeneratorParamBase *p) {
    for (const GeneratorParamBase *q : params_) {
        user_assert(q->name() != p->name())
            << "Generator " << (name_.empty() ? building_name : name_)
            << " has two parameters named " << p->name() << ".";
    }
    p->owner = this;
    params_.push_back(p);
}

void GeneratorBase::add(GeneratorIOBase *io) {
    for (const GeneratorIOBase *q : io_) {
        user_assert(q->name() != io->name())
            << "Generator " << (name_.empty() ? building_name : name_)
            << " has two inputs or outputs named " << io->name() << ".";
    }
    io->owner = this;
    io_.push_back(io);
}

void GeneratorBase::set_param(const std::string &name, const std::string &value) {
    for (GeneratorParamBase *p : params_) {
        if (p->name() != name) continue;
        // generate() and schedule() ran once, with the values then: a later value would be
        // reported (value_text) but not compiled.
        if (pipeline_) {
            const std::string before = p->value_text();
            p->set_from_text(value);
            const std::string after = p->value_text();
            if (after != before) {
                p->set_from_text(before);
                user_error << "Generator " << name_ << ": parameter " << name << " is set to "
                           << after << " after the generator was built with " << before
                           << " (build() or compile_to_files ran generate() and schedule() "
                           << "once). Set parameters before building, or build another "
                           << "generator (GeneratorRegistry::create(\"" << name_ << "\")).";
            }
            return;
        }
        p->set_from_text(value);
        return;
    }
    std::vector<std::string> names;
    for (const GeneratorParamBase *p : params_)
        names.push_back(p->name());
    user_error << "Generator " << name_ << " has no parameter " << name
               << ". Its parameters are: " << join(names) << ".";
}

Pipeline GeneratorBase::build() {
    if (building == this) building = nullptr;
    if (pipeline_) return *pipeline_;
    const std::string gen = "Generator " + name_;
    for (GeneratorIOBase *io : io_) {
        if (io->type_param_) {
            user_assert(io->type_param_->was_set())
                << gen << ": the type of " << (io->is_output() ? "Output " : "Input ") << io->name()
                << " is a parameter, and it is unset. Set " << io->name() << ".type (for example "
                << io->name() << ".type=float32).";
        }
        if (io->dim_param_) {
            user_assert(io->dim_param_->was_set())
                << gen << ": the rank of " << (io->is_output() ? "Output " : "Input ") << io->name()
                << " is a parameter, and it is unset. Set " << io->name() << ".dim (for example "
                << io->name() << ".dim=2).";
        }
        io->create();
    }
    // A mistake in generate() or schedule() names the generator and the parameters it was
    // given (a rank or type set on the command line may be what the algorithm cannot take).
    // The generator's own code may throw too (std::stoi of a parameter, vector::at).
    auto in_context = [&](const char *step, void (GeneratorBase::*run)()) {
        auto where = [&] {
            std::string given;
            for (const GeneratorParamBase *p : params_)
                if (p->was_set()) given += " " + p->name() + "=" + p->value_text();
            return gen + ", in " + step + (given.empty() ? "" : " (with" + given + ")") + ": ";
        };
        try {
            (this->*run)();
        } catch (const CompileError &e) {
            const std::string what = e.what();
            if (what.rfind(gen, 0) == 0) throw;
            throw CompileError(where() + what);
        } catch (const Error &) {
            throw;
        } catch (const std::exception &e) {
            throw CompileError(where() + "its code threw an exception: " + e.what());
        }
    };
    in_context("generate()", &GeneratorBase::generate);
    std::vector<Func> outputs;
    for (GeneratorIOBase *io : io_) {
        if (!io->is_output()) continue;
        Func &f = dynamic_cast<Func &>(*io);
        user_assert(f.defined()) << gen << " never defines its Output " << io->name()
                                 << ": generate() must give it a definition, as " << io->name()
                                 << "(x, y) = ....";
        user_assert(f.dimensions() == io->dimensions())
            << gen << ": Output " << io->name() << " is declared with " << io->dimensions()
            << " dimensions, but generate() defines it with " << f.dimensions() << ".";
        const std::vector<ir::Type> types = f.types();
        for (const ir::Type &t : types) {
            if (t == io->type()) continue;
            std::string tuple;
            for (const ir::Type &u : types)
                tuple += (tuple.empty() ? "" : ", ") + detail::type_text(u);
            user_assert(types.size() == 1 || std::all_of(types.begin(), types.end(),
                                                         [&](const ir::Type &u) { return u == t; }))
                << gen << ": Output " << io->name() << " is declared "
                << detail::type_text(io->type()) << ", but generate() defines it as a Tuple of "
                << tuple << ". The buffers of a Tuple-valued Output all have its one declared "
                << "type: cast the elements to " << detail::type_text(io->type())
                << ", or make them one type and declare that.";
            user_error << gen << ": Output " << io->name() << " is declared "
                       << detail::type_text(io->type()) << ", but generate() defines it as "
                       << detail::type_text(t) << ". Cast its value, or declare it Output<Buffer<"
                       << detail::cpp_type_text(t) << ">>.";
        }
        outputs.push_back(f);
    }
    user_assert(!outputs.empty()) << gen << " has no Output: declare at least one, as "
                                  << "Output<Buffer<float, 2>> out{\"out\"};.";
    in_context("schedule()", &GeneratorBase::schedule);
    pipeline_ = Pipeline(outputs);
    return *pipeline_;
}

std::vector<Argument> GeneratorBase::pipeline_arguments() {
    Pipeline p = build();
    std::vector<Argument> args;
    for (const GeneratorIOBase *io : io_) {
        if (io->is_output()) continue;
        Argument a;
        a.name = io->name();
        a.is_buffer = io->is_buffer();
        a.type = io->type();
        a.dimensions = io->dimensions();
        args.push_back(a);
    }
    for (const Argument &needed : detail::infer_arguments(p.output_functions())) {
        if (needed.is_output) {
            args.push_back(needed);
            continue;
        }
        bool declared = false;
        for (Argument &a : args) {
            if (a.name == needed.name) {
                a.param = needed.param;
                declared = true;
            }
        }
        user_assert(declared && !needed.param.is_concrete_buffer())
            << "Generator " << name_ << " reads " << (needed.is_buffer ? "the buffer " : "")
            << needed.name << ", which is not one of its Inputs. A program that calls the "
            << "compiled pipeline passes it every buffer it reads: declare it as an Input "
            << "(Input<Buffer<" << detail::type_text(needed.type) << ", " << needed.dimensions
            << ">> " << needed.name << "{\"" << needed.name << "\"};).";
    }
    return args;
}

GeneratorIOBase *GeneratorBase::find_argument(const std::string &name, bool output) {
    build();
    std::vector<std::string> names;
    for (GeneratorIOBase *io : io_) {
        if (io->is_output() != output) continue;
        if (io->name() == name) return io;
        names.push_back(io->name());
    }
    user_error << "Generator " << name_ << " has no " << (output ? "Output " : "Input ") << name
               << ". Its " << (output ? "outputs" : "inputs") << " are: " << join(names) << ".";
    return nullptr;
}

void GeneratorBase::set_input(const std::string &name, const BufferBase &buffer) {
    auto *input = dynamic_cast<GeneratorBufferInput *>(find_argument(name, false));
    user_assert(input) << "Generator " << name_ << ": Input " << name << " is a scalar, not a "
                       << "buffer.";
    input->set(buffer);
}

std::vector<std::string> GeneratorBase::cubin_list() const {
    std::vector<std::string> archs;
    std::stringstream list(cubins.value());
    for (std::string arch; std::getline(list, arch, ',');)
        if (!arch.empty()) archs.push_back(arch);
    return archs;
}

void GeneratorBase::compile_to_files(const std::string &function_name, const OutputFiles &files) {
    std::vector<Argument> args = pipeline_arguments();
    OutputFiles with_cubins = files;
    with_cubins.cubins = cubin_list();
    Pipeline p = build();
    try {
        p.compile_to_files(function_name, args, with_cubins, target.value());
    } catch (const CompileError &e) {
        // A schedule the target cannot run is found when compiling: name the generator.
        throw CompileError(generator_name() + ", compiled for " + target.value().to_string() +
                           ": " + e.what());
    }
}

void GeneratorRegistry::compile_to_files(
    const std::string &name, const std::vector<std::pair<std::string, std::string>> &params,
    const std::string &function_name, const OutputFiles &files) {
    std::vector<std::string> targets;
    for (const auto &p : params) {
        if (p.first != "target") continue;
        targets.clear();
        std::stringstream list(p.second);
        for (std::string t; std::getline(list, t, ',');)
            targets.push_back(t);
    }
    if (targets.size() <= 1) {
        std::unique_ptr<GeneratorBase> g = create(name);
        for (const auto &p : params)
            g->set_param(p.first, p.second);
        g->compile_to_files(function_name, files);
        return;
    }
    // One generator per target: generate() and schedule() may look at the target.
    std::vector<std::unique_ptr<GeneratorBase>> generators;
    std::vector<Pipeline> pipelines;
    pipelines.reserve(targets.size());
    std::vector<Pipeline::TargetBuild> builds;
    for (const std::string &t : targets) {
        std::unique_ptr<GeneratorBase> g = create(name);
        for (const auto &p : params)
            g->set_param(p.first, p.first == "target" ? t : p.second);
        pipelines.push_back(g->build());
        builds.push_back({pipelines.back(), g->pipeline_arguments(), g->get_target()});
        generators.push_back(std::move(g));
    }
    OutputFiles with_cubins = files;
    with_cubins.cubins = generators[0]->cubin_list();
    Pipeline::compile_multitarget_to_files(function_name, builds, with_cubins);
}

namespace {

struct Registered {
    GeneratorRegistry::Factory factory;
    std::vector<GeneratorPreset> presets;
    std::string class_name;
};

std::map<std::string, Registered> &registry() {
    static std::map<std::string, Registered> r;
    return r;
}

// Names registered twice, with what registered them, found when registering.
std::vector<std::string> &name_clashes() {
    static std::vector<std::string> clashes;
    return clashes;
}

std::string registered_as(const std::string &name, const Registered &r) {
    return "generator " + name + (r.class_name.empty() ? "" : " (class " + r.class_name + ")");
}

// Refuses every use of a registry in which a name stands for two things.
void check_registry() {
    const std::vector<std::string> &clashes = name_clashes();
    user_assert(clashes.empty()) << "This program registers " << join(clashes, "; ")
                                 << ". Give each generator and preset a name of its own.";
}

} // namespace

void GeneratorRegistry::add(const std::string &name, Factory factory,
                            const std::vector<GeneratorPreset> &presets,
                            const std::string &class_name) {
    Registered entry{std::move(factory), presets, class_name};
    auto taken = [&](const std::string &n) -> std::string {
        for (const auto &kv : registry()) {
            if (kv.first == n) return registered_as(kv.first, kv.second);
            for (const GeneratorPreset &p : kv.second.presets)
                if (p.name == n) return "preset " + n + " of generator " + kv.first;
        }
        return "";
    };
    if (std::string other = taken(name); !other.empty())
        name_clashes().push_back("the name " + name + " twice: as " + other + " and as " +
                                 registered_as(name, entry));
    for (size_t i = 0; i < presets.size(); i++) {
        std::string other = taken(presets[i].name);
        if (other.empty() && presets[i].name == name) other = registered_as(name, entry);
        for (size_t j = 0; j < i && other.empty(); j++)
            if (presets[j].name == presets[i].name)
                other = "preset " + presets[i].name + " of generator " + name;
        if (!other.empty())
            name_clashes().push_back("the name " + presets[i].name + " twice: as " + other +
                                     " and as preset " + presets[i].name + " of generator " + name);
    }
    if (!registry().count(name)) registry()[name] = std::move(entry);
}

std::unique_ptr<GeneratorBase> GeneratorRegistry::create(const std::string &name) {
    check_registry();
    auto it = registry().find(name);
    if (it != registry().end()) return it->second.factory();
    for (const auto &kv : registry()) {
        for (const GeneratorPreset &p : kv.second.presets) {
            if (p.name != name) continue;
            std::unique_ptr<GeneratorBase> g = kv.second.factory();
            for (const auto &v : p.values) {
                try {
                    g->set_param(v.first, v.second);
                } catch (const CompileError &e) {
                    throw CompileError("Preset " + p.name + " (of generator " + kv.first +
                                       ") sets " + v.first + "=" + v.second + ": " + e.what());
                }
            }
            return g;
        }
    }
    std::vector<std::string> names = generators();
    for (const auto &p : presets())
        names.push_back(p.second.name);
    user_error << "No generator or preset is named " << name << ". "
               << (names.empty() ? "None is registered in this program."
                                 : "Registered: " + join(names) + ".");
    return nullptr;
}

std::vector<std::string> GeneratorRegistry::generators() {
    check_registry();
    std::vector<std::string> names;
    for (const auto &kv : registry())
        names.push_back(kv.first);
    return names;
}

std::vector<std::pair<std::string, GeneratorPreset>> GeneratorRegistry::presets() {
    std::vector<std::pair<std::string, GeneratorPreset>> all;
    for (const auto &kv : registry())
        for (const GeneratorPreset &p : kv.second.presets)
            all.push_back({kv.first, p});
    return all;
}

namespace detail {

GeneratorRegistration::GeneratorRegistration(const char *name, const char *class_name,
                                             GeneratorRegistry::Factory factory,
                                             std::vector<GeneratorPreset> presets) {
    GeneratorRegistry::add(name, std::move(factory), presets, class_name);
}

void begin_building_generator(const char *name) {
    building = nullptr;
    building_name = name;
}

void end_building_generator(GeneratorBase *g, const std::string &name) {
    building = nullptr;
    building_name.clear();
    if (g) g->name_ = name;
}

} // namespace detail

} // namespace aicf
