// Libraries compiled for several targets (tests/CMakeLists.txt: TARGETS host-cuda-sm_80
// x86-64-v3 x86-64): the build each call runs is the first the machine runs, and each build
// computes what the JIT computes for its target, bit for bit, and what a plain loop does.
// Builds for CPU levels this machine lacks are refused with a typed error, never run.

#include "AOTTensors.h"
#include "ErrorMessage.h"
#include "ScopedEnv.h"
#include "backends/cuda/CudaDevice.h"
#include "dsl/aicf.h"

#include "aot_rms_norm_any_cpu.h"
#include "aot_rms_norm_any_gpu.h"
#include "aot_rms_norm_any_old.h"
#include "aot_scale_v4.h"
#include "aot_scale_v4_v3.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

using namespace aicf;
using aicf_test::random_buffer;
using aicf_test::ScopedEnv;
using aicf_test::Tensor;

namespace {

using RMSNormFunction = int (*)(DLTensor *, DLTensor *, float, DLTensor *);

// Runs one copy of the library, checks the build it chose against `expected` and its result
// against the JIT of the same generator and target, and against a loop in double precision.
void check_rms_norm(RMSNormFunction call, const aicf_pipeline_metadata_t *(*metadata)(),
                    const Target &expected) {
    const int W = 250, H = 7;
    Buffer<float> in = random_buffer<float>({W, H}, 11, -2, 2);
    Buffer<float> weight = random_buffer<float>({W}, 12, 0.5, 1.5);
    Buffer<float> aot({W, H});
    Tensor tin(in), tw(weight), tout(aot);
    ASSERT_EQ(call(&tin, &tw, 1e-5f, &tout), 0) << aicf_last_error();
    const aicf_pipeline_metadata_t *m = metadata();
    ASSERT_NE(m, nullptr) << aicf_last_error();
    const Target chosen(m->target);
    EXPECT_EQ(chosen.to_string(), expected.to_string());
    EXPECT_EQ(m->kernel_count, expected.has_cuda() ? 1 : 0);

    // "host" was compiled as the highest level this machine runs; the JIT compiles that level
    // too, so that both make the same machine code choices.
    std::unique_ptr<GeneratorBase> g = GeneratorRegistry::create("rms_norm");
    g->set_param("target", chosen.to_string());
    g->set_param("threads", "96");
    Pipeline p = g->build();
    g->set_input("in", in);
    g->set_input("weight", weight);
    g->set_input<float>("epsilon", 1e-5f);
    Buffer<float> jit = p.realize({W, H}, chosen)[0];
    jit.copy_to_host();
    aicf_test::expect_same_bits(aot, jit);
    aicf_test::expect_rms_norm(aot, in, weight);
}

bool has_gpu() {
    try {
        return backends::cuda::cuda_compute_capability() >= 80;
    } catch (const RuntimeError &) {
        return false;
    }
}

// The highest x86-64 level this machine runs, as a target ("host" ahead of time).
Target host_level() {
    return Target().with_arch(Target::highest_level_here());
}

} // namespace

// AICF_DEVICE=sim asks for the simulator: the build with GPU kernels runs, there.
TEST(AOTTargets, GPUBuildOnTheSimulator) {
    ScopedEnv sim("AICF_DEVICE", "sim");
    Target expected = host_level();
    expected = Target(expected.to_string() + "-cuda-sm_80");
    check_rms_norm(aot_rms_norm_any_gpu, aot_rms_norm_any_gpu_metadata, expected);
}

// No device named: the GPU build where a GPU runs it, the best CPU build otherwise.
TEST(AOTTargets, CPUBuildWithoutAGPU) {
    ScopedEnv unset("AICF_DEVICE", nullptr);
    const bool v3 = Target("x86-64-v3").missing_cpu_features().empty();
    const Target expected = has_gpu() ? Target(host_level().to_string() + "-cuda-sm_80")
                                      : Target(v3 ? "x86-64-v3" : "x86-64");
    check_rms_norm(aot_rms_norm_any_cpu, aot_rms_norm_any_cpu_metadata, expected);
}

// A CPU without AVX2 (AICF_CPU_LEVEL caps what this one counts as) gets the baseline build.
TEST(AOTTargets, BaselineBuildOnAnOlderCPU) {
    ScopedEnv unset("AICF_DEVICE", nullptr);
    ScopedEnv level("AICF_CPU_LEVEL", "x86-64-v2");
    if (has_gpu()) GTEST_SKIP() << "a GPU runs the first build here";
    check_rms_norm(aot_rms_norm_any_old, aot_rms_norm_any_old_metadata, Target("x86-64"));
}

// A build for a level the CPU lacks is refused before it runs, with a typed error; so is a
// library none of whose builds runs here. The JIT refuses to compile for it.
TEST(AOTTargets, LevelsTheCPULacksAreRefused) {
    Buffer<float> in = random_buffer<float>({16, 3}, 13, -1, 1), out({16, 3});
    Tensor tin(in), tout(out);
    {
        ScopedEnv level("AICF_CPU_LEVEL", "x86-64-v3");
        EXPECT_EQ(aot_scale_v4(&tin, 2.0f, 1, &tout),
                  -int(ir::RuntimeErrorKind::TargetUnsupported));
        // (Where the CPU has them, the message says that the variable took them away.)
        const bool has_avx512 = [] {
            ScopedEnv uncapped("AICF_CPU_LEVEL", nullptr);
            return Target("x86-64-v4").missing_cpu_features().empty();
        }();
        const std::string capped = has_avx512 ? " (as AICF_CPU_LEVEL=x86-64-v3 says)" : "";
        EXPECT_EQ(std::string(aicf_last_error()),
                  "aot_scale_v4 was compiled for x86-64-v4, but this machine's CPU lacks "
                  "avx512f, avx512bw, avx512cd, avx512dq, avx512vl" +
                      capped + ". Build it for a lower x86-64 level, or with several targets.");
        Var x("x");
        Func f("f");
        f(x) = x * 2;
        const std::string jit =
            aicf_test::message_of<CompileError>([&] { f.realize({8}, Target("x86-64-v4")); });
        EXPECT_NE(jit.find("Cannot compile f for x86-64-v4 here: this CPU lacks avx512f, "
                           "avx512bw, avx512cd, avx512dq, avx512vl" +
                           capped + ", so it cannot run that code. Compile it ahead of time"),
                  std::string::npos)
            << jit;
        EXPECT_NE(jit.find("or name a lower level (x86-64-v3) or host."), std::string::npos) << jit;
        ScopedEnv older("AICF_CPU_LEVEL", "x86-64-v2");
        EXPECT_EQ(aot_scale_v4_v3(&tin, 2.0f, 1, &tout),
                  -int(ir::RuntimeErrorKind::TargetUnsupported));
        const std::string msg = aicf_last_error();
        EXPECT_NE(msg.find("aot_scale_v4_v3: none of its builds runs on this machine "
                           "(x86-64-v4: the CPU lacks avx, avx2, bmi, bmi2, f16c, fma, lzcnt, "
                           "movbe, avx512f"),
                  std::string::npos)
            << msg;
        EXPECT_NE(msg.find("; x86-64-v3: the CPU lacks avx, avx2"), std::string::npos) << msg;
        // The metadata describes the arguments all the same (the first build's).
        ASSERT_NE(aot_scale_v4_v3_metadata(), nullptr);
        EXPECT_STREQ(aot_scale_v4_v3_metadata()->target, "x86-64-v4");
        EXPECT_STREQ(aot_scale_v4_v3_metadata()->arguments[0].name, "in");
    }
    // Where the CPU has them, the same calls run (the library's choice is made at the first
    // call that finds a build).
    if (!Target("x86-64-v4").missing_cpu_features().empty())
        GTEST_SKIP() << "this CPU has no AVX-512: the uncapped runs below need it";
    for (auto call : {aot_scale_v4, aot_scale_v4_v3}) {
        ASSERT_EQ(call(&tin, 2.0f, 1, &tout), 0) << aicf_last_error();
        for (int y = 0; y < 3; y++)
            for (int x = 0; x < 16; x++)
                ASSERT_EQ(out(x, y), in(x, y) * 2.0f + 1.0f);
    }
    EXPECT_STREQ(aot_scale_v4_v3_metadata()->target, "x86-64-v4");
}

// A library of several builds finds its build in the metadata function too: asking for the
// metadata after a failed call leaves that call's message.
TEST(AOTTargets, MetadataLeavesTheLastError) {
    ScopedEnv unset("AICF_DEVICE", nullptr);
    Buffer<float> in = random_buffer<float>({250, 7}, 14, -2, 2);
    Buffer<float> weight = random_buffer<float>({100}, 15, 0.5, 1.5);
    Buffer<float> out({250, 7});
    Tensor tin(in), tw(weight), tout(out);
    EXPECT_EQ(aot_rms_norm_any_cpu(&tin, &tw, 1e-5f, &tout),
              -int(ir::RuntimeErrorKind::InputTooSmall));
    const std::string msg = aicf_last_error();
    EXPECT_NE(msg.find("Buffer weight is too small: dimension 0"), std::string::npos) << msg;
    ASSERT_NE(aot_rms_norm_any_cpu_metadata(), nullptr);
    EXPECT_EQ(std::string(aicf_last_error()), msg);
}

// Target texts with CPU levels, and what is not one.
TEST(AOTTargets, TargetTexts) {
    EXPECT_EQ(Target("x86-64-v3-cuda-sm_80-fma").to_string(), "x86-64-v3-cuda-sm_80-fma");
    EXPECT_EQ(Target("x86-64").cpu_name(), "x86-64");
    EXPECT_EQ(Target("x86-64-cuda-sm_90").arch(), Target::X86_64);
    EXPECT_EQ(Target("host").cpu_name(), "");
    EXPECT_EQ(Target("host").missing_cpu_features(), "");
    const std::string msg = aicf_test::message_of<CompileError>([] { Target("x86-64-v5"); });
    EXPECT_NE(msg.find("Unknown x86-64 level \"v5\" in target \"x86-64-v5\". Valid targets: a "
                       "CPU (host, the one compiling, or x86-64, x86-64-v2, x86-64-v3, "
                       "x86-64-v4)"),
              std::string::npos)
        << msg;
    for (const char *level : {"host", "x86-64-v5", "bogus"}) {
        ScopedEnv bad("AICF_CPU_LEVEL", level);
        EXPECT_NE(
            aicf_test::message_of<CompileError>([] { Target("x86-64").missing_cpu_features(); })
                .find("AICF_CPU_LEVEL=" + std::string(level) +
                      " is not an x86-64 level (x86-64, x86-64-v2, x86-64-v3, x86-64-v4)."),
            std::string::npos)
            << level;
    }
}

// An explicit argument list describes each argument as the generated code takes it: one that
// disagrees with the pipeline (another type, rank or kind) or is listed twice is refused,
// naming it, before any file is written (an int8 output took int32 elements, past its end).
TEST(AOTTargets, ArgumentListsThatDisagreeWithThePipeline) {
    ImageParam in(Int(32), 1, "in");
    Param<int> k("k");
    Var x("x");
    Func f("f");
    f(x) = in(x)*k + 1;
    const std::vector<Argument> right = Pipeline(f).compile_to_callable().arguments();
    ASSERT_EQ(right.size(), 3u);
    const std::string dir = ::testing::TempDir();
    OutputFiles files;
    files.c_header = dir + "/aicf_listed.h";
    std::remove(files.c_header.c_str());
    auto refusal = [&](const std::function<void(std::vector<Argument> &)> &change) {
        std::vector<Argument> args = right;
        change(args);
        return aicf_test::message_of<CompileError>(
            [&] { Pipeline(f).compile_to_files("listed", args, files, Target("host")); });
    };
    auto index = [&](const std::string &name) {
        for (size_t i = 0; i < right.size(); i++)
            if (right[i].name == name) return i;
        return right.size();
    };
    const size_t i_in = index("in"), i_k = index("k"), i_f = index("f");
    ASSERT_LT(std::max({i_in, i_k, i_f}), right.size());
    EXPECT_CONTAINS(refusal([&](auto &a) { a[i_f].type = Int(8); }),
                    "argument f is listed as an output buffer of int8 with 1 dimension, but the "
                    "pipeline's f is an output buffer of int32 with 1 dimension.");
    EXPECT_CONTAINS(refusal([&](auto &a) { a[i_in].type = Float(32); }),
                    "argument in is listed as an input buffer of float32");
    EXPECT_CONTAINS(refusal([&](auto &a) { a[i_in].dimensions = 3; }),
                    "argument in is listed as an input buffer of int32 with 3 dimensions");
    EXPECT_CONTAINS(refusal([&](auto &a) { a[i_in].is_buffer = false; }),
                    "argument in is listed as a scalar of int32, but the pipeline's in is an "
                    "input buffer of int32 with 1 dimension.");
    EXPECT_CONTAINS(refusal([&](auto &a) { a[i_k].type = Int(8); }),
                    "argument k is listed as a scalar of int8, but the pipeline's k is a scalar "
                    "of int32.");
    EXPECT_CONTAINS(refusal([&](auto &a) { a.push_back(a[i_k]); }), "argument k is listed twice");
    EXPECT_FALSE(std::ifstream(files.c_header).good());
    OutputFiles same = files;
    same.stmt = files.c_header;
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>([&] {
                        Pipeline(f).compile_to_files("listed", right, same, Target("host"));
                    }),
                    "OutputFiles::c_header (" + files.c_header + ") and OutputFiles::stmt (" +
                        files.c_header + ") are the same file; give each file its own path.");
    // Another spelling of the same file.
    const size_t slash = files.c_header.rfind('/');
    same.stmt = files.c_header.substr(0, slash) + "/./" + files.c_header.substr(slash + 1);
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>([&] {
                        Pipeline(f).compile_to_files("listed", right, same, Target("host"));
                    }),
                    "are the same file; give each file its own path.");
    EXPECT_FALSE(std::ifstream(files.c_header).good());
    Pipeline(f).compile_to_files("listed", right, files, Target("host"));
    EXPECT_TRUE(std::ifstream(files.c_header).good());
}

// Builds that cannot make one library are refused, naming what differs.
TEST(AOTTargets, BuildsThatDoNotMakeOneLibrary) {
    ImageParam in(Float(32), 2, "in");
    Param<float> k("k");
    Var x("x"), y("y");
    Func a("a"), b("b");
    a(x, y) = in(x, y) * k;
    b(x, y) = in(x, y) + 1.0f;
    Pipeline pa(a), pb(b);
    const std::string dir = ::testing::TempDir();
    OutputFiles files;
    files.c_header = dir + "/lib.h";
    std::string msg = aicf_test::message_of<CompileError>([&] {
        Pipeline::compile_multitarget_to_files(
            "lib", {{pa, {}, Target("x86-64-v3")}, {pb, {}, Target("x86-64")}}, files);
    });
    EXPECT_NE(msg.find("The builds of lib for x86-64-v3 and x86-64 take different arguments: "
                       "argument 1 is scalar k of float32 in one and output b (float32, 2 "
                       "dimensions) in the other. One library calls every build with the same "
                       "arguments."),
              std::string::npos)
        << msg;
    msg = aicf_test::message_of<CompileError>([&] {
        Pipeline::compile_multitarget_to_files(
            "lib", {{pa, {}, Target("x86-64")}, {pa, {}, Target("x86-64")}}, files);
    });
    EXPECT_NE(msg.find("lib is built twice for x86-64"), std::string::npos) << msg;
    files.cubins = {"sm_80"};
    msg = aicf_test::message_of<CompileError>([&] {
        Pipeline::compile_multitarget_to_files(
            "lib", {{pa, {}, Target("x86-64-v3")}, {pa, {}, Target("x86-64")}}, files);
    });
    EXPECT_NE(msg.find("lib is compiled for x86-64-v3 and others, which have no GPU kernels to "
                       "assemble for sm_80."),
              std::string::npos)
        << msg;
    msg = aicf_test::message_of<CompileError>(
        [&] { Pipeline::compile_multitarget_to_files("lib", {}, files); });
    EXPECT_NE(msg.find("compile_multitarget_to_files of lib: no builds to compile."),
              std::string::npos)
        << msg;
}
