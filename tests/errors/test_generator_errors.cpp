// Mistakes in generators and on the generator command line: each a CompileError (or, from the
// driver, exit code 1 and a message) that names what is wrong and lists what is valid.

#include "ErrorMessage.h"
#include "dsl/aicf.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

using namespace aicf;
using aicf_test::message_of;

namespace {

enum class Mode { Fast, Exact };

class Typed : public Generator<Typed> {
public:
    GeneratorParam<int> factor{"factor", 2, 1, 16};
    GeneratorParam<float> gain{"gain", 1.0f};
    GeneratorParam<bool> fused{"fused", false};
    GeneratorParam<Mode> mode{"mode", Mode::Fast, {{"fast", Mode::Fast}, {"exact", Mode::Exact}}};
    Input<Buffer<>> in{"in"};
    Output<Buffer<float, 1>> out{"out"};
    void generate() { out(x) = cast<float>(in(x)) * gain; }

private:
    Var x{"x"};
};

// Two outputs of different ranks: a row's sum of squares and the rows scaled by it.
class TwoRanks : public Generator<TwoRanks> {
public:
    Input<Buffer<float, 2>> in{"in"};
    Output<Buffer<float, 1>> ss{"ss"};
    Output<Buffer<float, 2>> out{"out"};
    void generate() {
        RDom r(0, in.dim(0).extent(), "r");
        ss(y) = 0.0f;
        ss(y) += in(r, y) * in(r, y);
        out(x, y) = in(x, y) * ss(y);
        Var bx("bx"), tx("tx"), by("by"), ty("ty");
        ss.gpu_tile(y, by, ty, 8, TailStrategy::GuardWithIf);
        ss.update().gpu_tile(y, by, ty, 8, TailStrategy::GuardWithIf);
        out.gpu_tile(x, y, bx, by, tx, ty, 8, 8);
    }

private:
    Var x{"x"}, y{"y"};
};

class NoDefinition : public Generator<NoDefinition> {
public:
    Input<Buffer<float, 1>> in{"in"};
    Output<Buffer<float, 1>> out{"out"};
    Output<Buffer<float, 1>> extra{"extra"};
    void generate() { out(x) = in(x); }

private:
    Var x{"x"};
};

class WrongType : public Generator<WrongType> {
public:
    Input<Buffer<float, 1>> in{"in"};
    Output<Buffer<int32_t, 1>> out{"out"};
    void generate() { out(x) = in(x); }

private:
    Var x{"x"};
};

class MixedTuple : public Generator<MixedTuple> {
public:
    Input<Buffer<float, 1>> in{"in"};
    Output<Buffer<float, 1>> stats{"stats"};
    void generate() { stats(x) = Tuple(in(x), cast<int32_t>(in(x))); }

private:
    Var x{"x"};
};

class WrongRank : public Generator<WrongRank> {
public:
    Input<Buffer<float, 2>> in{"in"};
    Output<Buffer<float, 1>> out{"out"};
    void generate() { out(x, y) = in(x, y); }

private:
    Var x{"x"}, y{"y"};
};

// Reads a buffer that is not one of its inputs: a program calling it could not pass it.
class Captured : public Generator<Captured> {
public:
    Input<Buffer<float, 1>> in{"in"};
    Output<Buffer<float, 1>> out{"out"};
    void generate() { out(x) = in(x) + table(x); }

private:
    Var x{"x"};
    Buffer<float> table{std::vector<int>{16}, "table"};
};

// A generator whose own code throws a standard exception, or fails while it is constructed.
class ThrowsStd : public Generator<ThrowsStd> {
public:
    GeneratorParam<int> which{"which", 0};
    Output<Buffer<float, 1>> out{"out"};
    void generate() {
        out(x) = 1.0f;
        (void)std::vector<int>{}.at(size_t(which.value()));
    }

private:
    Var x{"x"};
};

class TwoParamsNamedK : public Generator<TwoParamsNamedK> {
public:
    GeneratorParam<int> k{"k", 1}, k_again{"k", 2};
    Output<Buffer<float, 1>> out{"out"};
    void generate() { out(x) = 1.0f; }

private:
    Var x{"x"};
};

// Parameters declared wrongly: each refused when the generator is constructed.
class EmptyRange : public Generator<EmptyRange> {
public:
    GeneratorParam<int> inv{"inv", 5, 10, 1};
    Output<Buffer<float, 1>> out{"out"};
    void generate() { out(x) = 1.0f; }

private:
    Var x{"x"};
};

class DefaultOutOfRange : public Generator<DefaultOutOfRange> {
public:
    GeneratorParam<int> vec{"vec", 100, 1, 64};
    Output<Buffer<float, 1>> out{"out"};
    void generate() { out(x) = 1.0f; }

private:
    Var x{"x"};
};

class UnnamedDefault : public Generator<UnnamedDefault> {
public:
    GeneratorParam<Mode> mode{"mode", Mode::Exact, {{"fast", Mode::Fast}}};
    Output<Buffer<float, 1>> out{"out"};
    void generate() { out(x) = 1.0f; }

private:
    Var x{"x"};
};

} // namespace

AICF_REGISTER_GENERATOR(EmptyRange, empty_range)
AICF_REGISTER_GENERATOR(DefaultOutOfRange, default_out_of_range)
AICF_REGISTER_GENERATOR(UnnamedDefault, unnamed_default)
AICF_REGISTER_GENERATOR(Typed, typed, (typed_exact, (mode, exact)(factor, 4)),
                        (typed_bad_preset, (factor, 99)))
AICF_REGISTER_GENERATOR(ThrowsStd, throws_std)
AICF_REGISTER_GENERATOR(TwoParamsNamedK, two_params_named_k)
AICF_REGISTER_GENERATOR(NoDefinition, no_definition)
AICF_REGISTER_GENERATOR(TwoRanks, two_ranks)
AICF_REGISTER_GENERATOR(WrongType, wrong_type)
AICF_REGISTER_GENERATOR(WrongRank, wrong_rank)
AICF_REGISTER_GENERATOR(MixedTuple, mixed_tuple)
AICF_REGISTER_GENERATOR(Captured, captured)

namespace {

TEST(GeneratorErrors, UnknownGeneratorListsTheRegisteredOnes) {
    std::string msg = message_of<CompileError>([] { GeneratorRegistry::create("blurr"); });
    EXPECT_CONTAINS(msg, "No generator or preset is named blurr. Registered: ");
    EXPECT_CONTAINS(msg, "typed");
    EXPECT_CONTAINS(msg, "typed_exact");
}

TEST(GeneratorErrors, ParametersByNameAndKind) {
    auto g = GeneratorRegistry::create("typed");
    std::string msg = message_of<CompileError>([&] { g->set_param("factr", "3"); });
    EXPECT_CONTAINS(msg, "Generator typed has no parameter factr. Its parameters are: target, "
                         "cubins, factor, gain, fused, mode, in.type, in.dim.");
    msg = message_of<CompileError>([&] { g->set_param("factor", "three"); });
    EXPECT_CONTAINS(msg, "GeneratorParam factor of typed is a decimal integer, not \"three\".");
    // Decimal, whatever the leading zeros; nothing else around the digits.
    g->set_param("factor", "010");
    g->set_param("factor", "09");
    for (const char *text : {" 4", "+4", "0x4", "4 ", "-"}) {
        msg = message_of<CompileError>([&] { g->set_param("factor", text); });
        EXPECT_CONTAINS(msg, "is a decimal integer, not \"" + std::string(text) + "\".");
    }
    // A float32 parameter takes what a float32 holds.
    msg = message_of<CompileError>([&] { g->set_param("gain", "1e300"); });
    EXPECT_CONTAINS(msg,
                    "GeneratorParam gain of typed must be a finite float32 number, not 1e300.");
    msg = message_of<CompileError>([&] { g->set_param("factor", "17"); });
    EXPECT_CONTAINS(msg, "GeneratorParam factor of typed must be an integer from 1 to 16, not 17.");
    msg = message_of<CompileError>([&] { g->set_param("gain", "1.5x"); });
    EXPECT_CONTAINS(msg, "GeneratorParam gain of typed is a finite number, not \"1.5x\".");
    msg = message_of<CompileError>([&] { g->set_param("fused", "yes"); });
    EXPECT_CONTAINS(msg, "GeneratorParam fused of typed is true or false, not \"yes\".");
    msg = message_of<CompileError>([&] { g->set_param("mode", "slow"); });
    EXPECT_CONTAINS(msg, "GeneratorParam mode of typed is one of exact, fast, not \"slow\".");
    msg = message_of<CompileError>([&] { g->set_param("in.type", "float31"); });
    EXPECT_CONTAINS(msg, "GeneratorParam in.type of typed is a type (bool, int8, int16, int32, "
                         "int64, uint8, uint16, uint32, uint64, float16, bfloat16, float32, "
                         "float64), not \"float31\".");
    msg = message_of<CompileError>([&] { g->set_param("target", "host-cuda-sm_99x"); });
    EXPECT_CONTAINS(msg, "GeneratorParam target of typed: ");
    // Parameters are set before the generator is built: a later value would not be compiled.
    auto built = GeneratorRegistry::create("typed");
    built->set_param("in.type", "uint8");
    built->set_param("in.dim", "1");
    built->set_param("factor", "3");
    built->build();
    built->set_param("factor", "3");
    msg = message_of<CompileError>([&] { built->set_param("factor", "5"); });
    EXPECT_CONTAINS(msg, "Generator typed: parameter factor is set to 5 after the generator was "
                         "built with 3");
    for (const GeneratorParamBase *p : built->params()) {
        if (p->name() == "factor") {
            EXPECT_EQ(p->value_text(), "3");
        }
    }
    // A preset sets its values.
    auto exact = GeneratorRegistry::create("typed_exact");
    std::map<std::string, std::string> values;
    for (const GeneratorParamBase *p : exact->params())
        values[p->name()] = p->value_text();
    EXPECT_EQ(values["mode"], "exact");
    EXPECT_EQ(values["factor"], "4");
    // A preset's bad value names the preset.
    msg = message_of<CompileError>([] { GeneratorRegistry::create("typed_bad_preset"); });
    EXPECT_CONTAINS(msg, "Preset typed_bad_preset (of generator typed) sets factor=99: "
                         "GeneratorParam factor of typed must be an integer from 1 to 16");
}

// The generator's own code throwing, or a mistake while it is constructed: a CompileError that
// names the generator (the driver prints it and exits with 1, never aborts).
TEST(GeneratorErrors, ExceptionsOfTheGeneratorsOwnCodeNameIt) {
    auto g = GeneratorRegistry::create("throws_std");
    g->set_param("which", "3");
    std::string msg = message_of<CompileError>([&] { g->build(); });
    EXPECT_CONTAINS(msg, "throws_std, in generate() (with which=3): its code threw an exception: ");
    msg = message_of<CompileError>([] { GeneratorRegistry::create("two_params_named_k"); });
    EXPECT_CONTAINS(msg, "Generator two_params_named_k has two parameters named k.");
}

TEST(GeneratorErrors, ParametersDeclaredWrongly) {
    std::string msg = message_of<CompileError>([] { GeneratorRegistry::create("empty_range"); });
    EXPECT_CONTAINS(msg, "GeneratorParam inv of empty_range has an empty range, an integer from "
                         "10 to 1.");
    msg = message_of<CompileError>([] { GeneratorRegistry::create("default_out_of_range"); });
    EXPECT_CONTAINS(msg, "GeneratorParam vec of default_out_of_range has the default 100, but it "
                         "must be an integer from 1 to 64.");
    msg = message_of<CompileError>([] { GeneratorRegistry::create("unnamed_default"); });
    EXPECT_CONTAINS(msg, "GeneratorParam mode of unnamed_default has a default value without a "
                         "name: one of fast.");
    // Floats print as the shortest text that reads back as the same float.
    auto g = GeneratorRegistry::create("typed");
    g->set_param("gain", "0.1");
    std::string gain;
    for (const GeneratorParamBase *p : g->params())
        if (p->name() == "gain") gain = p->value_text();
    EXPECT_EQ(gain, "0.1");
}

// A name registered twice (registration runs before main(), so every later use of the
// registry reports it). Run in a child process, whose registry the clash spoils.
TEST(GeneratorErrors, ANameRegisteredTwiceIsRefused) {
    auto expect_clash = [](const std::string &name, const std::vector<GeneratorPreset> &presets,
                           const std::string &expected) {
        GeneratorRegistry::add(
            name, [] { return GeneratorRegistry::create("typed"); }, presets, "Other");
        std::string msg = message_of<CompileError>([] { GeneratorRegistry::generators(); });
        if (msg.find(expected) == std::string::npos) {
            std::fprintf(stderr, "message: %s\n", msg.c_str());
            std::exit(1);
        }
        std::exit(0);
    };
    EXPECT_EXIT(expect_clash("typed", {},
                             "This program registers the name typed twice: as generator typed "
                             "(class Typed) and as generator typed (class Other). Give each "
                             "generator and preset a name of its own."),
                ::testing::ExitedWithCode(0), "");
    EXPECT_EXIT(expect_clash("other", {GeneratorPreset{"typed_exact", {}}},
                             "the name typed_exact twice: as preset typed_exact of generator "
                             "typed and as preset typed_exact of generator other"),
                ::testing::ExitedWithCode(0), "");
    EXPECT_EXIT(expect_clash("other", {GeneratorPreset{"typed", {}}},
                             "the name typed twice: as generator typed (class Typed) and as "
                             "preset typed of generator other"),
                ::testing::ExitedWithCode(0), "");
}

TEST(GeneratorErrors, InputsLeftUnsetAndOutputsNotAsDeclared) {
    auto g = GeneratorRegistry::create("typed");
    std::string msg = message_of<CompileError>([&] { g->build(); });
    EXPECT_CONTAINS(msg, "Generator typed: the type of Input in is a parameter, and it is unset. "
                         "Set in.type (for example in.type=float32).");
    g->set_param("in.type", "uint8");
    msg = message_of<CompileError>([&] { g->build(); });
    EXPECT_CONTAINS(msg, "the rank of Input in is a parameter, and it is unset. Set in.dim");
    g->set_param("in.dim", "1");
    g->build();

    msg = message_of<CompileError>([] { GeneratorRegistry::create("no_definition")->build(); });
    EXPECT_CONTAINS(msg, "Generator no_definition never defines its Output extra: generate() "
                         "must give it a definition");
    msg = message_of<CompileError>([] { GeneratorRegistry::create("wrong_type")->build(); });
    EXPECT_CONTAINS(msg, "Generator wrong_type: Output out is declared int32, but generate() "
                         "defines it as float32. Cast its value, or declare it "
                         "Output<Buffer<float>>.");
    msg = message_of<CompileError>([] { GeneratorRegistry::create("mixed_tuple")->build(); });
    EXPECT_CONTAINS(msg, "Generator mixed_tuple: Output stats is declared float32, but generate() "
                         "defines it as a Tuple of float32, int32. The buffers of a Tuple-valued "
                         "Output all have its one declared type: cast the elements to float32");
    msg = message_of<CompileError>([] { GeneratorRegistry::create("wrong_rank")->build(); });
    EXPECT_CONTAINS(msg, "Generator wrong_rank: Output out is declared with 1 dimensions, but "
                         "generate() defines it with 2.");
    msg = message_of<CompileError>(
        [] { GeneratorRegistry::create("captured")->compile_to_files("captured", {}); });
    EXPECT_CONTAINS(msg, "Generator captured reads the buffer table, which is not one of its "
                         "Inputs.");
    msg = message_of<CompileError>([] {
        auto t = GeneratorRegistry::create("typed");
        t->set_param("in.type", "uint8");
        t->set_param("in.dim", "1");
        t->compile_to_files("not a name", {});
    });
    EXPECT_CONTAINS(msg, "The function name \"not a name\" is not a C identifier");
    // Names the header cannot declare, or that would clash with a program's own.
    const std::pair<const char *, const char *> refused[] = {
        {"int", "The function name \"int\" is a keyword of C or C++"},
        {"class", "The function name \"class\" is a keyword of C or C++"},
        {"__scale", "The function name \"__scale\" is reserved to the C implementation"},
        {"_Scale", "The function name \"_Scale\" is reserved to the C implementation"},
        {"_scale", "The function name \"_scale\" starts with _, which C reserves for its "
                   "implementation's names at file scope"},
        {"aicf_last_error", "The function name \"aicf_last_error\" is a name of AICF's ABI"},
        {"AICF_AOT_ABI_H", "The function name \"AICF_AOT_ABI_H\" is a name of AICF's ABI"},
        {"main", "The function name \"main\" would clash with a program's main"},
        {"malloc", "The function name \"malloc\" would replace malloc, a name libc.so.6 "
                   "defines, in every program that links it"},
        {"sqrtf", "The function name \"sqrtf\" would replace sqrtf, a name"},
        {"qsort_r", "The function name \"qsort_r\" would replace qsort_r, a name"},
        {"errno", "The function name \"errno\" would replace errno, a name"},
        // Names the headers that the generated header includes declare, or C reserves to them.
        {"DLTensor", "The function name \"DLTensor\" is a name of DLPack's header"},
        {"kDLCPU", "The function name \"kDLCPU\" is a name of DLPack's header"},
        {"DLPACK_VERSION", "The function name \"DLPACK_VERSION\" is a name of DLPack's"},
        {"int24_t", "The function name \"int24_t\" is a name of stdint.h or stddef.h, or "
                    "reserved to them by C"},
        {"UINT12_MAX", "The function name \"UINT12_MAX\" is a name of stdint.h"},
        {"NULL", "The function name \"NULL\" is a name of stdint.h"},
        {"offsetof", "The function name \"offsetof\" is a name of stdint.h"},
        {"size_t", "The function name \"size_t\" is a name of stdint.h"},
        {"typeof", "The function name \"typeof\" is a keyword or namespace of some C or C++"},
        {"std", "The function name \"std\" is a keyword or namespace of some C or C++"}};
    for (const auto &[name, text] : refused) {
        msg = message_of<CompileError>([&] {
            auto t = GeneratorRegistry::create("typed");
            t->set_param("in.type", "uint8");
            t->set_param("in.dim", "1");
            t->compile_to_files(name, {});
        });
        EXPECT_CONTAINS(msg, text);
    }
    msg = message_of<CompileError>([] {
        auto t = GeneratorRegistry::create("typed");
        t->set_param("in.type", "uint8");
        t->set_param("in.dim", "1");
        t->set_param("cubins", "sm_80");
        t->compile_to_files("typed", {});
    });
    EXPECT_CONTAINS(msg, "typed is compiled for host, which has no GPU kernels to assemble for "
                         "sm_80. Give a target with a GPU (host-cuda-sm_80).");
    msg = message_of<CompileError>([] {
        auto t = GeneratorRegistry::create("typed");
        t->set_param("in.type", "uint8");
        t->set_param("in.dim", "1");
        t->set_param("cubins", "ampere");
        t->compile_to_files("typed", {});
    });
    EXPECT_CONTAINS(msg, "\"ampere\" is not a GPU architecture to assemble kernels for");
}

std::string run_main(std::vector<std::string> args, int *code) {
    std::vector<char *> argv;
    args.insert(args.begin(), "gen");
    for (std::string &a : args)
        argv.push_back(a.data());
    std::ostringstream captured;
    std::streambuf *out = std::cout.rdbuf(captured.rdbuf());
    std::streambuf *err = std::cerr.rdbuf(captured.rdbuf());
    *code = generator_main(int(argv.size()), argv.data());
    std::cout.rdbuf(out);
    std::cerr.rdbuf(err);
    return captured.str();
}

TEST(GeneratorDriver, HelpListAndErrors) {
    int code = -1;
    std::string text = run_main({"--help"}, &code);
    EXPECT_EQ(code, 0);
    EXPECT_CONTAINS(text, "usage: gen -g NAME [-o DIR] [-e KINDS] [-f FUNCTION] [-s ARG=SIZE ...] "
                          "[PARAM=VALUE ...]");
    text = run_main({"-l"}, &code);
    EXPECT_EQ(code, 0);
    EXPECT_CONTAINS(text, "typed\n  target = host  (a target");
    EXPECT_CONTAINS(text, "  factor = 2  (an integer from 1 to 16)");
    EXPECT_CONTAINS(text, "typed_exact (preset of typed: mode=exact factor=4)");
    // A generator that cannot be constructed is listed as such, the others as usual.
    EXPECT_CONTAINS(text, "two_params_named_k\n  (cannot be constructed: Generator "
                          "two_params_named_k has two parameters named k.)");
    EXPECT_CONTAINS(text, "throws_std\n  target = host");
    // The type and rank of `in` are parameters without a default.
    EXPECT_CONTAINS(text, "typed\n  target = host  (a target");
    EXPECT_CONTAINS(text, "  in.type (required)  (a type");
    EXPECT_CONTAINS(text, "  in.dim (required)  (");
    EXPECT_CONTAINS(text, "  input in: buffer of the type in.type, in.dim dimensions\n"
                          "  output out: buffer of float32, 1 dimension\n");
    text = run_main({"-g", "typed", "-e", "object,pdf"}, &code);
    EXPECT_EQ(code, 1);
    EXPECT_CONTAINS(text, "-e: unknown kind pdf; the kinds are static_library, object, c_header, "
                          "ptx, stmt, assembly, report");
    // An empty value (an unset variable in a build script) or an empty kind is refused aloud.
    for (const char *flag : {"-g", "-o", "-e", "-f", "-s"}) {
        text = run_main({"-g", "typed", flag, ""}, &code);
        EXPECT_EQ(code, 1) << flag;
        EXPECT_CONTAINS(text, std::string(flag) + " needs a value (it was given an empty one)");
    }
    text = run_main({"-g", "typed", "-e"}, &code);
    EXPECT_EQ(code, 1);
    EXPECT_CONTAINS(text, "-e needs a value\n");
    for (const char *kinds : {"stmt,", ",stmt", "stmt,,object", ","}) {
        text = run_main({"-g", "typed", "-e", kinds}, &code);
        EXPECT_EQ(code, 1) << kinds;
        EXPECT_CONTAINS(text, "-e " + std::string(kinds) + ": an empty kind between commas");
    }
    // The report needs a GPU target and the sizes of the output and of each input buffer.
    text = run_main({"-g", "typed", "-e", "report", "in.type=uint8", "in.dim=1", "-s", "out=64"},
                    &code);
    EXPECT_EQ(code, 1);
    EXPECT_CONTAINS(text, "has no GPU");
    text = run_main(
        {"-g", "typed", "-e", "report", "in.type=uint8", "in.dim=1", "target=host-cuda-sm_80"},
        &code);
    EXPECT_EQ(code, 1);
    EXPECT_CONTAINS(text, "needs the size of its output: -s out=4096x2048");
    text = run_main({"-g", "typed", "-e", "report", "in.type=uint8", "in.dim=1",
                     "target=host-cuda-sm_80", "-s", "out=64", "-s", "in=6x"},
                    &code);
    EXPECT_EQ(code, 1);
    EXPECT_CONTAINS(text, "-s in=6x: the extents of a buffer are non-negative integers");
    for (const auto &[given, said] : std::vector<std::pair<std::string, std::string>>{
             {"in=2147483648", "-s in=2147483648: an extent must be an integer from 0 to "
                               "2147483647, not 2147483648."},
             {"in=99999999999999999999x2", "-s in=99999999999999999999x2: an extent must be an "
                                           "integer from 0 to 2147483647"},
             {"in=-1", "-s in=-1: an extent must be an integer from 0 to 2147483647, not -1."},
             {"in=4xy", "-s in=4xy: an extent is a decimal integer, not \"y\"."}}) {
        text = run_main({"-g", "typed", "-e", "report", "in.type=uint8", "in.dim=1",
                         "target=host-cuda-sm_80", "-s", "out=64", "-s", given},
                        &code);
        EXPECT_EQ(code, 1) << given;
        EXPECT_CONTAINS(text, said);
    }
    text = run_main({"-g", "typed", "-e", "report", "-s", "out=64", "-s", "out=32"}, &code);
    EXPECT_EQ(code, 1);
    EXPECT_CONTAINS(text, "-s out is given twice (64, then 32)");
    text = run_main({"-g", "typed", "-e", "report", "-s", "nothing"}, &code);
    EXPECT_EQ(code, 1);
    EXPECT_CONTAINS(text, "-s takes ARG=SIZE");
    // Every output's -s counts: outputs of another rank than the first's take their own, and
    // outputs of its rank must agree with it.
    const std::string reports = ::testing::TempDir() + "aicf_gen_reports";
    text = run_main({"-g", "two_ranks", "-o", reports, "-e", "report", "target=host-cuda-sm_80",
                     "-s", "in=40x16", "-s", "ss=16", "-s", "out=40x16"},
                    &code);
    EXPECT_EQ(code, 0) << text;
    std::ifstream json(reports + "/two_ranks.report.json");
    const std::string written((std::istreambuf_iterator<char>(json)),
                              std::istreambuf_iterator<char>());
    EXPECT_CONTAINS(written, "\"sizes\": [16]");
    // Extents of 0, which realize takes: the report says that no kernel launches.
    text = run_main({"-g", "typed", "-o", reports, "-e", "report", "in.type=uint8", "in.dim=1",
                     "target=host-cuda-sm_80", "-s", "out=0", "-s", "in=0"},
                    &code);
    EXPECT_EQ(code, 0) << text;
    std::ifstream empty_text(reports + "/typed.report.txt");
    const std::string empty_report((std::istreambuf_iterator<char>(empty_text)),
                                   std::istreambuf_iterator<char>());
    EXPECT_CONTAINS(empty_report, "no kernels launch: the output is empty at these sizes");
    // Of a list of targets, the report counts the kernels of the first with a GPU.
    text = run_main({"-g", "typed", "-o", reports, "-e", "report", "in.type=uint8", "in.dim=1",
                     "target=host,host-cuda-sm_80", "-s", "out=64", "-s", "in=64"},
                    &code);
    EXPECT_EQ(code, 0) << text;
    std::ifstream typed_report(reports + "/typed.report.txt");
    const std::string typed_text((std::istreambuf_iterator<char>(typed_report)),
                                 std::istreambuf_iterator<char>());
    EXPECT_CONTAINS(typed_text, "for host-cuda-sm_80");
    EXPECT_CONTAINS(written, "\"name\": \"out\", \"role\": \"output\", \"bytes\": 2560");
    text = run_main({"-g", "two_ranks", "-o", reports, "-e", "report", "target=host-cuda-sm_80",
                     "-s", "in=40x16", "-s", "out=40x16"},
                    &code);
    EXPECT_EQ(code, 1);
    EXPECT_CONTAINS(text, "is at sizes 40 x 16 (2 sizes), but its output ss has 1 dimension: "
                          "give 1 size, or, for an output of another rank than the others, its "
                          "extents in ReportArguments::buffers[\"ss\"].");
    // -o makes its folder; one that cannot be made is named.
    const std::string made = ::testing::TempDir() + "aicf_gen_out/nested";
    text = run_main({"-g", "typed", "-o", made, "-e", "stmt", "in.type=uint8", "in.dim=1"}, &code);
    EXPECT_EQ(code, 0) << text;
    EXPECT_TRUE(std::ifstream(made + "/typed.stmt").good());
    text = run_main(
        {"-g", "typed", "-o", "/proc/no/such", "-e", "stmt", "in.type=uint8", "in.dim=1"}, &code);
    EXPECT_EQ(code, 1);
    EXPECT_CONTAINS(text, "-o /proc/no/such: cannot make the folder: ");
    text = run_main({"-g", "nope"}, &code);
    EXPECT_EQ(code, 1);
    EXPECT_CONTAINS(text, "No generator or preset is named nope.");
    text = run_main({"-g", "typed", "in.type=uint8", "in.dim=1", "factor=0"}, &code);
    EXPECT_EQ(code, 1);
    EXPECT_CONTAINS(text, "GeneratorParam factor of typed must be an integer from 1 to 16, not 0.");
    // A rank the algorithm cannot take: the error names the generator and what it was given.
    text = run_main({"-g", "typed", "in.type=uint8", "in.dim=2"}, &code);
    EXPECT_EQ(code, 1);
    EXPECT_CONTAINS(text, "Generator typed, in generate() (with in.type=uint8 in.dim=2): ");
    EXPECT_CONTAINS(text, "in has 2 dimensions");
    text = run_main({"-g", "typed", "in.type=uint8", "in.dim=1", "in.dim=2"}, &code);
    EXPECT_EQ(code, 1);
    EXPECT_CONTAINS(text, "in.dim is given twice (1, then 2)");
    // So is a flag, and a report's size without a report.
    text = run_main({"-g", "typed", "-g", "two_ranks", "in.type=uint8", "in.dim=1"}, &code);
    EXPECT_EQ(code, 1);
    EXPECT_CONTAINS(text, "-g is given twice (the second time as two_ranks)");
    text = run_main({"-g", "typed", "-e", "stmt", "-o", made, "-e", "ptx"}, &code);
    EXPECT_EQ(code, 1);
    EXPECT_CONTAINS(text, "-e is given twice (the second time as ptx)");
    text = run_main(
        {"-g", "typed", "-o", made, "-e", "stmt", "in.type=uint8", "in.dim=1", "-s", "out=64"},
        &code);
    EXPECT_EQ(code, 1);
    EXPECT_CONTAINS(text, "-s out=64 gives a size to the report, but -e stmt does not ask for "
                          "one: add report to -e (-e stmt,report)");
    text = run_main({"typed"}, &code);
    EXPECT_EQ(code, 1);
    EXPECT_CONTAINS(text, "unknown argument typed");
    // The report asks for an input's extents as the command line spells them.
    text = run_main({"-g", "typed", "-e", "report", "in.type=uint8", "in.dim=1",
                     "target=host-cuda-sm_80", "-s", "out=64"},
                    &code);
    EXPECT_EQ(code, 1);
    EXPECT_CONTAINS(text, "or to a generator with -s in=4096.");
    // PTX of a pipeline without kernels is refused before any file is written.
    const std::string dir = testing::TempDir();
    std::remove((dir + "/cpu_only.stmt").c_str());
    text = run_main(
        {"-g", "typed", "-o", dir, "-e", "stmt,ptx", "-f", "cpu_only", "in.type=uint8", "in.dim=1"},
        &code);
    EXPECT_EQ(code, 1);
    EXPECT_CONTAINS(text, "cpu_only has no GPU kernels to write as PTX (its target is ");
    EXPECT_FALSE(std::ifstream(dir + "/cpu_only.stmt").good());
    // A good run writes the header it was asked for.
    text = run_main(
        {"-g", "typed", "-o", dir, "-e", "c_header", "-f", "typed_fn", "in.type=uint8", "in.dim=1"},
        &code);
    EXPECT_EQ(code, 0) << text;
    std::ifstream header(dir + "/typed_fn.h");
    std::stringstream contents;
    contents << header.rdbuf();
    EXPECT_CONTAINS(contents.str(), "int typed_fn(DLTensor *in, DLTensor *out);");
    EXPECT_CONTAINS(contents.str(), " *   in: input buffer of uint8, 1 dimension\n");
}

} // namespace
