#ifndef AICF_GENERATOR_H
#define AICF_GENERATOR_H

// Generators: a pipeline written once with compile-time parameters, compiled ahead of time by
// a generator program into an object file (or static library) and a C header that any C or
// C++ program links with libaicf_runtime, with no LLVM and no JIT when it runs.
//
//   class Scale : public aicf::Generator<Scale> {
//   public:
//       GeneratorParam<int> tile{"tile", 64};
//       Input<Buffer<float, 2>> in{"in"};
//       Input<float> factor{"factor"};
//       Output<Buffer<float, 2>> out{"out"};
//       void generate() { out(x, y) = in(x, y) * factor; }
//       void schedule() { out.parallel(y).vectorize(x, 8); }
//   private:
//       Var x{"x"}, y{"y"};
//   };
//   AICF_REGISTER_GENERATOR(Scale, scale)
//
// A program built from generators and the aicf_generator library (whose main() is
// aicf::generator_main) compiles them:
//
//   scale_gen -g scale -o out/ -e static_library,c_header target=host tile=32
//
// which writes out/scale.a and out/scale.h declaring
//   int scale(DLTensor *in, float factor, DLTensor *out);
// (backends/runtime/AOTABI.h says how it is called). The arguments are the inputs, then the
// outputs, in the order the class declares them.
//
// Inputs and outputs whose type or rank is a parameter (Input<Buffer<>>, Output<Buffer<>>,
// Input<Buffer<float>>) get GeneratorParams named after them: "in.type" and "in.dim".
//
// Presets are named sets of parameter values, registered with the generator and usable where
// a generator name is:
//
//   AICF_REGISTER_GENERATOR(Norm, norm,
//                           (norm_rows_in_warps, (schedule, warp_per_row)),
//                           (norm_rows_in_blocks, (schedule, block_per_row)(threads, 512)))

#include "dsl/Func.h"
#include "dsl/Param.h"
#include "dsl/Pipeline.h"
#include "dsl/Target.h"
#include "dsl/base/Error.h"

#include <boost/preprocessor/cat.hpp>
#include <boost/preprocessor/comparison/greater.hpp>
#include <boost/preprocessor/control/if.hpp>
#include <boost/preprocessor/punctuation/comma_if.hpp>
#include <boost/preprocessor/seq/enum.hpp>
#include <boost/preprocessor/seq/for_each_i.hpp>
#include <boost/preprocessor/seq/pop_front.hpp>
#include <boost/preprocessor/seq/seq.hpp>
#include <boost/preprocessor/seq/size.hpp>
#include <boost/preprocessor/seq/transform.hpp>
#include <boost/preprocessor/seq/variadic_seq_to_seq.hpp>
#include <boost/preprocessor/stringize.hpp>
#include <boost/preprocessor/tuple/elem.hpp>
#include <boost/preprocessor/variadic/to_seq.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace aicf {

class GeneratorBase;

// One compile-time parameter: set from the command line (name=value) or a preset before
// generate() runs.
class GeneratorParamBase {
public:
    virtual ~GeneratorParamBase() = default;
    GeneratorParamBase(const GeneratorParamBase &) = delete;
    GeneratorParamBase &operator=(const GeneratorParamBase &) = delete;
    const std::string &name() const { return name_; }
    // What values it takes ("int", "float", "bool", "a type such as float32", "one of a, b").
    virtual std::string kind() const = 0;
    virtual std::string value_text() const = 0;
    // Sets the value from its text; a CompileError that names the parameter and says what is
    // valid otherwise.
    virtual void set_from_text(const std::string &text) = 0;
    // Whether a value was given (on the command line, by a preset or by set()).
    bool was_set() const { return was_set_; }

protected:
    explicit GeneratorParamBase(std::string name);
    bool was_set_ = false;
    // Where an error about this parameter comes from ("GeneratorParam width of norm").
    std::string where() const;

private:
    std::string name_;
    GeneratorBase *owner = nullptr;
    friend class GeneratorBase;
};

namespace detail {
// Parsing and printing of parameter values; each raises CompileError for text that is not a
// value of its kind, naming `where`.
int64_t parse_int(const std::string &text, int64_t lo, int64_t hi, const std::string &where);
double parse_float(const std::string &text, const std::string &where);
// "float32" or "float64" for a float of that many bytes.
std::string float_type_name(size_t bytes);
bool parse_bool(const std::string &text, const std::string &where);
ir::Type parse_type(const std::string &text, const std::string &where);
Target parse_target(const std::string &text, const std::string &where);
std::string type_text(ir::Type t);
// The shortest text that reads back as v (as a float32 where `single`).
std::string format_float(double v, bool single);
// A GeneratorParam declared with a default outside its range, an empty range, or an enum
// default that has no name: a CompileError naming the parameter and its generator.
[[noreturn]] void bad_declaration(const std::string &param, const std::string &what);
ir::Expr int_constant(ir::Type t, int64_t v);
ir::Expr float_constant(ir::Type t, double v);
[[noreturn]] void out_of_range(const std::string &text, const std::string &kind,
                               const std::string &where);
[[noreturn]] void bad_enum_value(const std::string &text, const std::vector<std::string> &names,
                                 const std::string &where);
} // namespace detail

template <typename T> class GeneratorParam : public GeneratorParamBase {
    static_assert(std::is_arithmetic_v<T> || std::is_enum_v<T> || std::is_same_v<T, ir::Type> ||
                      std::is_same_v<T, Target> || std::is_same_v<T, std::string>,
                  "GeneratorParam takes integers, floats, bools, enums, Type, Target or "
                  "std::string");

public:
    GeneratorParam(const std::string &name, const T &value)
        : GeneratorParamBase(name), value_(value) {
        static_assert(!std::is_enum_v<T>, "an enum GeneratorParam needs the names of its values");
    }
    // An enum, with the name of each value as the command line spells it.
    GeneratorParam(const std::string &name, const T &value, std::map<std::string, T> names)
        : GeneratorParamBase(name), value_(value), names_(std::move(names)) {
        bool named = false;
        for (const auto &kv : names_)
            named = named || kv.second == value_;
        if (!named) detail::bad_declaration(name, "has a default value without a name: " + kind());
    }
    // A number with the range of values it takes.
    GeneratorParam(const std::string &name, const T &value, const T &min, const T &max)
        : GeneratorParamBase(name), value_(value), min_(min), max_(max) {
        static_assert(std::is_arithmetic_v<T>, "a range is for numbers");
        if (!(min <= max)) detail::bad_declaration(name, "has an empty range, " + kind());
        if (!(min <= value && value <= max))
            detail::bad_declaration(name, "has the default " + value_text() + ", but it must be " +
                                              kind());
    }

    operator T() const { return value_; }
    // Numbers and bools are also Exprs in the algorithm and the schedule (a split factor).
    template <typename U = T, typename = std::enable_if_t<std::is_arithmetic_v<U>>>
    operator ir::Expr() const {
        if constexpr (std::is_floating_point_v<T>) {
            return detail::float_constant(ir::type_of<T>(), double(value_));
        } else {
            return detail::int_constant(ir::type_of<T>(), int64_t(value_));
        }
    }
    const T &value() const { return value_; }
    void set(const T &v) {
        value_ = v;
        was_set_ = true;
    }

    std::string kind() const override {
        if constexpr (std::is_same_v<T, bool>) {
            return "bool (true or false)";
        } else if constexpr (std::is_integral_v<T>) {
            return "an integer from " + std::to_string(lowest()) + " to " +
                   std::to_string(highest());
        } else if constexpr (std::is_floating_point_v<T>) {
            constexpr bool single = sizeof(T) == 4;
            return min_ ? "a number from " + detail::format_float(double(*min_), single) + " to " +
                              detail::format_float(double(*max_), single)
                        : "a number";
        } else if constexpr (std::is_enum_v<T>) {
            std::string s = "one of";
            for (const auto &kv : names_)
                s += " " + kv.first;
            return s;
        } else if constexpr (std::is_same_v<T, ir::Type>) {
            return "a type (int8 ... int64, uint8 ... uint64, bool, float16, bfloat16, float32, "
                   "float64)";
        } else if constexpr (std::is_same_v<T, Target>) {
            return "a target (host, host-cuda-sm_80, ...)";
        } else {
            return "text";
        }
    }
    std::string value_text() const override {
        if constexpr (std::is_same_v<T, bool>) {
            return value_ ? "true" : "false";
        } else if constexpr (std::is_integral_v<T>) {
            return std::to_string(value_);
        } else if constexpr (std::is_floating_point_v<T>) {
            return detail::format_float(double(value_), sizeof(T) == 4);
        } else if constexpr (std::is_enum_v<T>) {
            for (const auto &kv : names_)
                if (kv.second == value_) return kv.first;
            return "?";
        } else if constexpr (std::is_same_v<T, ir::Type>) {
            return detail::type_text(value_);
        } else if constexpr (std::is_same_v<T, Target>) {
            return value_.to_string();
        } else {
            return value_;
        }
    }
    void set_from_text(const std::string &text) override {
        was_set_ = true;
        if constexpr (std::is_same_v<T, bool>) {
            value_ = detail::parse_bool(text, where());
        } else if constexpr (std::is_integral_v<T>) {
            value_ = T(detail::parse_int(text, lowest(), highest(), where()));
        } else if constexpr (std::is_floating_point_v<T>) {
            double v = detail::parse_float(text, where());
            if (min_ && (v < double(*min_) || v > double(*max_)))
                detail::out_of_range(text, kind(), where());
            // Finite in T too: 1e300 is no float.
            if (!(std::fabs(v) <= double(std::numeric_limits<T>::max())))
                detail::out_of_range(
                    text, "a finite " + detail::float_type_name(sizeof(T)) + " number", where());
            value_ = T(v);
        } else if constexpr (std::is_enum_v<T>) {
            auto it = names_.find(text);
            if (it == names_.end()) {
                std::vector<std::string> valid;
                for (const auto &kv : names_)
                    valid.push_back(kv.first);
                detail::bad_enum_value(text, valid, where());
            }
            value_ = it->second;
        } else if constexpr (std::is_same_v<T, ir::Type>) {
            value_ = detail::parse_type(text, where());
        } else if constexpr (std::is_same_v<T, Target>) {
            value_ = detail::parse_target(text, where());
        } else {
            value_ = text;
        }
    }

private:
    T value_;
    std::map<std::string, T> names_;
    std::optional<T> min_, max_;

    int64_t lowest() const {
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
            if (min_) return int64_t(*min_);
            return int64_t(std::numeric_limits<T>::lowest());
        }
        return 0;
    }
    int64_t highest() const {
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
            if (max_) return int64_t(*max_);
            if constexpr (sizeof(T) >= 8 && std::is_unsigned_v<T>) return INT64_MAX;
            return int64_t(std::numeric_limits<T>::max());
        }
        return 1;
    }
};

// A parameter in an expression is its value: gain * in(x), tile / 2, mode == Mode::Fast.
// (Without these, a parameter that is both a number and an Expr would make gain * e
// ambiguous.)
#define AICF_GENERATOR_PARAM_OPERATOR_(OP)                                                         \
    template <typename T, typename U>                                                              \
    auto operator OP(const GeneratorParam<T> &a, const U &b)->decltype(a.value() OP b) {           \
        return a.value() OP b;                                                                     \
    }                                                                                              \
    template <typename U, typename T,                                                              \
              typename = std::enable_if_t<!std::is_base_of_v<GeneratorParamBase, U>>>              \
    auto operator OP(const U &a, const GeneratorParam<T> &b)->decltype(a OP b.value()) {           \
        return a OP b.value();                                                                     \
    }
AICF_GENERATOR_PARAM_OPERATOR_(+)
AICF_GENERATOR_PARAM_OPERATOR_(-)
AICF_GENERATOR_PARAM_OPERATOR_(*)
AICF_GENERATOR_PARAM_OPERATOR_(/)
AICF_GENERATOR_PARAM_OPERATOR_(%)
AICF_GENERATOR_PARAM_OPERATOR_(<)
AICF_GENERATOR_PARAM_OPERATOR_(<=)
AICF_GENERATOR_PARAM_OPERATOR_(>)
AICF_GENERATOR_PARAM_OPERATOR_(>=)
AICF_GENERATOR_PARAM_OPERATOR_(==)
AICF_GENERATOR_PARAM_OPERATOR_(!=)
AICF_GENERATOR_PARAM_OPERATOR_(&&)
AICF_GENERATOR_PARAM_OPERATOR_(||)
#undef AICF_GENERATOR_PARAM_OPERATOR_

// An input or output of a generator: a pipeline argument.
class GeneratorIOBase {
public:
    virtual ~GeneratorIOBase() = default;
    GeneratorIOBase(const GeneratorIOBase &) = delete;
    GeneratorIOBase &operator=(const GeneratorIOBase &) = delete;
    const std::string &name() const { return name_; }
    bool is_buffer() const { return buffer_; }
    bool is_output() const { return output_; }
    // The element (or scalar) type and the rank, once the parameters are set.
    ir::Type type() const;
    int dimensions() const;

protected:
    GeneratorIOBase(std::string name, bool buffer, bool output, std::optional<ir::Type> type,
                    int dimensions);
    std::string where() const;
    std::string name_;
    bool buffer_, output_;
    std::optional<ir::Type> fixed_type_;
    int fixed_dimensions_;
    // The parameters a type or rank left open becomes ("in.type", "in.dim").
    std::unique_ptr<GeneratorParam<ir::Type>> type_param_;
    std::unique_ptr<GeneratorParam<int>> dim_param_;
    GeneratorBase *owner = nullptr;
    friend class GeneratorBase;
    // Makes the Param, ImageParam or Func, once the parameters are set.
    virtual void create() = 0;
};

template <typename T> class Input;
template <typename T> class Output;

// A scalar input: Input<float> factor{"factor"}, an Expr in the algorithm.
template <typename T> class Input : public GeneratorIOBase {
    static_assert(std::is_arithmetic_v<T> || std::is_same_v<T, float16_t> ||
                      std::is_same_v<T, bfloat16_t>,
                  "Input<T> takes a scalar type, or Buffer<T, D>");

public:
    explicit Input(const std::string &name)
        : GeneratorIOBase(name, false, false, ir::type_of<T>(), 0) {}
    operator ir::Expr() const { return expr(); }
    ir::Expr expr() const;
    const Param<T> &param() const { return *param_; }
    // For running the generator's pipeline in this process (JIT): the value it reads.
    void set(T v) { param_->set(v); }

private:
    std::unique_ptr<Param<T>> param_;
    void create() override { param_ = std::make_unique<Param<T>>(name()); }
};

template <typename T> ir::Expr Input<T>::expr() const {
    user_assert(param_) << where() << " is used before generate() runs.";
    return *param_;
}

// What buffer inputs have in common, whatever their type.
class GeneratorBufferInput : public GeneratorIOBase {
public:
    // For running the generator's pipeline in this process (JIT): the buffer it reads.
    virtual void set(const BufferBase &b) = 0;

protected:
    using GeneratorIOBase::GeneratorIOBase;
};

// A buffer input: Input<Buffer<float, 2>> in{"in"}, read as in(x, y).
template <typename T, int D> class Input<Buffer<T, D>> : public GeneratorBufferInput {
public:
    explicit Input(const std::string &name)
        : GeneratorBufferInput(
              name, true, false,
              std::is_void_v<T> ? std::nullopt : std::optional<ir::Type>(Buffer<T>::element_type()),
              D) {}
    template <typename... Args> ir::Expr operator()(const Args &...args) const {
        return image()(std::vector<ir::Expr>{ir::Expr(args)...});
    }
    ir::Expr operator()(const std::vector<ir::Expr> &args) const { return image()(args); }
    Dimension dim(int d) const { return image().dim(d); }
    ir::Expr width() const { return image().width(); }
    ir::Expr height() const { return image().height(); }
    ImageParam &image() const {
        user_assert(image_) << where() << " is used before generate() runs.";
        return *image_;
    }
    void set(const BufferBase &b) override { image().set(b); }

private:
    std::unique_ptr<ImageParam> image_;
    void create() override { image_ = std::make_unique<ImageParam>(type(), dimensions(), name()); }
};

// A buffer output: a Func the generator defines and schedules (out(x, y) = ...), which must
// have the declared type and rank.
template <typename T, int D> class Output<Buffer<T, D>> : public GeneratorIOBase, public Func {
public:
    explicit Output(const std::string &name)
        : GeneratorIOBase(name, true, true,
                          std::is_void_v<T> ? std::nullopt
                                            : std::optional<ir::Type>(Buffer<T>::element_type()),
                          D),
          Func(name) {}
    using Func::operator();
    using Func::operator=;
    const std::string &name() const { return GeneratorIOBase::name(); }
    // The declared element type and rank (what the definition must have).
    ir::Type type() const { return GeneratorIOBase::type(); }
    int dimensions() const { return GeneratorIOBase::dimensions(); }

private:
    void create() override {}
};

namespace detail {
// The generator under construction on this thread (its members register with it).
GeneratorBase *generator_being_built();
} // namespace detail

namespace detail {
void end_building_generator(GeneratorBase *g, const std::string &name);
} // namespace detail

class GeneratorBase {
public:
    virtual ~GeneratorBase();
    GeneratorBase(const GeneratorBase &) = delete;
    GeneratorBase &operator=(const GeneratorBase &) = delete;

    // The name it is registered under.
    const std::string &generator_name() const { return name_; }
    // The target it compiles for (its "target" parameter).
    Target get_target() const { return target; }

    const std::vector<GeneratorParamBase *> &params() const { return params_; }
    const std::vector<GeneratorIOBase *> &arguments() const { return io_; }
    // Sets a parameter from its text; CompileError for an unknown name (listing the valid
    // ones) or a value that is not of its kind.
    void set_param(const std::string &name, const std::string &value);

    // Runs generate() and schedule() (once), and checks what they made: every output
    // defined, with its declared type and rank. Returns the pipeline of the outputs.
    Pipeline build();
    // The pipeline's arguments in the generator's declaration order: inputs, then outputs.
    std::vector<Argument> pipeline_arguments();
    // Compiles the pipeline ahead of time into `files`, its C function named function_name.
    void compile_to_files(const std::string &function_name, const OutputFiles &files);

    // To run the pipeline in this process (JIT) after build(): what an input reads.
    // CompileError for an input it does not have, or of another kind or type.
    void set_input(const std::string &name, const BufferBase &buffer);
    template <typename T, typename = std::enable_if_t<!std::is_base_of_v<BufferBase, T>>>
    void set_input(const std::string &name, T value) {
        auto *input = dynamic_cast<Input<T> *>(find_argument(name, false));
        user_assert(input) << "Generator " << name_ << ": Input " << name << " is not a scalar "
                           << "of type " << detail::type_text(ir::type_of<T>()) << ".";
        input->set(value);
    }

protected:
    GeneratorBase();
    virtual void generate() = 0;
    virtual void schedule() {}

    GeneratorParam<Target> target{"target", Target("host")};
    // GPU architectures to assemble the kernels for ahead of time, comma-separated
    // ("sm_80,sm_90"; needs the CUDA toolkit's ptxas when generating).
    GeneratorParam<std::string> cubins{"cubins", ""};

private:
    std::string name_;
    std::vector<GeneratorParamBase *> params_;
    std::vector<GeneratorIOBase *> io_;
    std::optional<Pipeline> pipeline_;
    friend class GeneratorParamBase;
    friend class GeneratorIOBase;
    friend struct GeneratorRegistry;
    friend void detail::end_building_generator(GeneratorBase *g, const std::string &name);
    void add(GeneratorParamBase *p);
    void add(GeneratorIOBase *io);
    GeneratorIOBase *find_argument(const std::string &name, bool output);
    // The "cubins" parameter, as a list of architectures.
    std::vector<std::string> cubin_list() const;
};

// The base class user generators derive from (as Halide's Generator<T>).
template <typename T> class Generator : public GeneratorBase {
protected:
    template <typename U> using Input = aicf::Input<U>;
    template <typename U> using Output = aicf::Output<U>;
    template <typename U> using GeneratorParam = aicf::GeneratorParam<U>;
    template <typename U = void, int D = -1> using Buffer = aicf::Buffer<U, D>;
};

// A named set of parameter values.
struct GeneratorPreset {
    std::string name;
    std::vector<std::pair<std::string, std::string>> values;
};

struct GeneratorRegistry {
    using Factory = std::function<std::unique_ptr<GeneratorBase>()>;
    // A name registered twice (two classes, or a preset with a generator's name) is reported
    // by every use of the registry below: registration runs before main().
    static void add(const std::string &name, Factory factory,
                    const std::vector<GeneratorPreset> &presets,
                    const std::string &class_name = "");
    // The generator (or preset) `name`, constructed, with its preset's values set.
    // CompileError for a name that is neither, listing the registered ones.
    static std::unique_ptr<GeneratorBase> create(const std::string &name);
    // Registered generators, and presets with the generator each uses, sorted.
    static std::vector<std::string> generators();
    static std::vector<std::pair<std::string, GeneratorPreset>> presets();
    // Compiles the generator (or preset) `name` with `params` (name and value text, in order)
    // into `files`, its C function named function_name. A "target" that lists several
    // targets, comma-separated and most preferred first ("x86-64-v4,x86-64-v3,x86-64"),
    // builds the generator once per target, each with its own schedule, into one library that
    // runs the first build this machine runs (Pipeline::compile_multitarget_to_files).
    static void compile_to_files(const std::string &name,
                                 const std::vector<std::pair<std::string, std::string>> &params,
                                 const std::string &function_name, const OutputFiles &files);
};

namespace detail {
struct GeneratorRegistration {
    GeneratorRegistration(const char *name, const char *class_name,
                          GeneratorRegistry::Factory factory, std::vector<GeneratorPreset> presets);
};
void begin_building_generator(const char *name);
inline std::pair<std::string, std::string> preset_value(const char *param, const char *value) {
    return {param, value};
}
template <typename G> std::unique_ptr<GeneratorBase> make_generator(const char *name) {
    begin_building_generator(name);
    std::unique_ptr<G> g;
    try {
        g = std::make_unique<G>();
    } catch (...) {
        end_building_generator(nullptr, name);
        throw;
    }
    end_building_generator(g.get(), name);
    return g;
}
} // namespace detail

// The generator program's main: parses the command line (-g, -o, -e, -f, -l, --help,
// name=value) and writes the files. Returns the process's exit code; prints errors to stderr.
int generator_main(int argc, char **argv);

} // namespace aicf

// (param, value) as the pair ("param", "value"); a call, whose parentheses keep the comma
// inside one element of the sequence.
#define AICF_GENERATOR_PRESET_VALUE_(s, data, pair)                                                \
    ::aicf::detail::preset_value(BOOST_PP_STRINGIZE(BOOST_PP_TUPLE_ELEM(2, 0, pair)), BOOST_PP_STRINGIZE(BOOST_PP_TUPLE_ELEM(2, 1, pair)))
// (preset_name, (param, value)(param, value)...) as a GeneratorPreset.
#define AICF_GENERATOR_PRESET_(r, data, i, preset)                                                 \
    BOOST_PP_COMMA_IF(i)::aicf::GeneratorPreset {                                                  \
        BOOST_PP_STRINGIZE(BOOST_PP_TUPLE_ELEM(2, 0, preset)), {                                   \
            BOOST_PP_SEQ_ENUM(BOOST_PP_SEQ_TRANSFORM(                                              \
                AICF_GENERATOR_PRESET_VALUE_, _,                                                   \
                BOOST_PP_VARIADIC_SEQ_TO_SEQ(BOOST_PP_TUPLE_ELEM(2, 1, preset))))                  \
        }                                                                                          \
    }
#define AICF_GENERATOR_PRESETS_(SEQ)                                                               \
    BOOST_PP_IF(BOOST_PP_GREATER(BOOST_PP_SEQ_SIZE(SEQ), 1), BOOST_PP_SEQ_FOR_EACH_I,              \
                AICF_GENERATOR_NO_PRESETS_)                                                        \
    (AICF_GENERATOR_PRESET_, _, BOOST_PP_SEQ_POP_FRONT(SEQ))
#define AICF_GENERATOR_NO_PRESETS_(macro, data, seq)
#define AICF_GENERATOR_REGISTRATION_(CLASS, NAME, SEQ)                                             \
    namespace {                                                                                    \
    ::aicf::detail::GeneratorRegistration BOOST_PP_CAT(aicf_generator_registration_, NAME)(        \
        BOOST_PP_STRINGIZE(NAME),                                                                  \
                           BOOST_PP_STRINGIZE(CLASS),                                              \
                                              [] {                                                 \
                                                  return ::aicf::detail::make_generator<CLASS>(    \
                                                      BOOST_PP_STRINGIZE(NAME));                   \
                                              },                                                   \
                                              {AICF_GENERATOR_PRESETS_(SEQ)});                     \
    }

// AICF_REGISTER_GENERATOR(Class, name) registers a generator; further arguments are presets,
// each (preset_name, (param, value)(param, value)...).
#define AICF_REGISTER_GENERATOR(CLASS, ...)                                                        \
    AICF_GENERATOR_REGISTRATION_(CLASS, BOOST_PP_SEQ_HEAD(BOOST_PP_VARIADIC_TO_SEQ(__VA_ARGS__)),  \
                                 BOOST_PP_VARIADIC_TO_SEQ(__VA_ARGS__))

#endif
