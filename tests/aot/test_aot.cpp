// Pipelines compiled ahead of time by tests/aot/Generators.cpp at build time, called through
// their C functions with DLTensors, against the same generators run by the JIT (bit for bit)
// and against plain loops; and every argument check of the C interface, by code and message.

#include "AOTTensors.h"
#include "ErrorMessage.h"
#include "Reference.h"
#include "ScopedEnv.h"
#include "backends/runtime/Runtime.h"
#include "dsl/aicf.h"

#include "aot_blur.h"
#include "aot_blur_tiled.h"
#include "aot_column_sum.h"
#include "aot_count_true.h"
#include "aot_rms_norm.h"
#include "aot_scale_offset.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace aicf;
using aicf_test::expect_same_bits;
using aicf_test::random_buffer;
using aicf_test::Tensor;

namespace {

TEST(AOT, ScaleOffsetMatchesTheJITAndAPlainLoop) {
    const int W = 203, H = 37;
    Buffer<float> in = random_buffer<float>({W, H}, 1, -2, 2);
    Buffer<float> aot({W, H});
    Tensor tin(in), tout(aot);
    ASSERT_EQ(aot_scale_offset(&tin, 1.5f, -3, &tout), 0) << aicf_last_error();
    EXPECT_STREQ(aicf_last_error(), "");

    std::unique_ptr<GeneratorBase> g = GeneratorRegistry::create("scale_offset");
    Pipeline p = g->build();
    g->set_input("in", in);
    g->set_input<float>("scale", 1.5f);
    g->set_input<int32_t>("offset", -3);
    Buffer<float> jit = p.realize({W, H}, Target("host"))[0];
    expect_same_bits(aot, jit);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            ASSERT_EQ(aot(x, y), in(x, y) * 1.5f + float(-3)) << x << ", " << y;
}

TEST(AOT, ArgvFormAndMetadata) {
    const int W = 16, H = 3;
    Buffer<float> in = random_buffer<float>({W, H}, 2, -1, 1);
    Buffer<float> out({W, H});
    Tensor tin(in), tout(out);
    float scale = 2.0f;
    int32_t offset = 5;
    void *args[] = {&tin, &scale, &offset, &tout};
    ASSERT_EQ(aot_scale_offset_argv(args), 0) << aicf_last_error();
    EXPECT_EQ(out(3, 2), in(3, 2) * 2.0f + 5.0f);

    const aicf_pipeline_metadata_t *m = aot_scale_offset_metadata();
    // "host", compiled ahead of time, is the highest x86-64 level this machine runs.
    const Target built(m->target);
    EXPECT_NE(built.arch(), Target::Host);
    EXPECT_EQ(built.missing_cpu_features(), "");
    if (built.arch() < Target::X86_64_v4) {
        EXPECT_NE(built.with_arch(Target::Arch(built.arch() + 1)).missing_cpu_features(), "");
    }
    ASSERT_EQ(m->argument_count, 4);
    const char *names[] = {"in", "scale", "offset", "out"};
    const int kinds[] = {AICF_ARGUMENT_INPUT, AICF_ARGUMENT_SCALAR, AICF_ARGUMENT_SCALAR,
                         AICF_ARGUMENT_OUTPUT};
    for (int i = 0; i < 4; i++) {
        EXPECT_STREQ(m->arguments[i].name, names[i]);
        EXPECT_EQ(m->arguments[i].kind, kinds[i]);
    }
    EXPECT_EQ(m->arguments[0].dimensions, 2);
    EXPECT_EQ(m->arguments[2].type.code, 0); // int32
    EXPECT_EQ(m->arguments[2].type.bits, 32);
    EXPECT_EQ(m->kernel_count, 0);
}

// Two stages, root and tiled (a preset): the same as the JIT, and as a plain loop.
TEST(AOT, BlurRootAndTiledPresetMatchTheJIT) {
    const int W = 157, H = 61;
    Buffer<uint16_t> in = random_buffer<uint16_t>({W + 2, H + 2}, 3, 1, 65535);
    for (const char *preset : {"blur", "blur_tiled"}) {
        SCOPED_TRACE(preset);
        Buffer<uint16_t> aot({W, H});
        Tensor tin(in), tout(aot);
        int code =
            std::string(preset) == "blur" ? aot_blur(&tin, &tout) : aot_blur_tiled(&tin, &tout);
        ASSERT_EQ(code, 0) << aicf_last_error();
        std::unique_ptr<GeneratorBase> g = GeneratorRegistry::create(preset);
        Pipeline p = g->build();
        g->set_input("in", in);
        Buffer<uint16_t> jit = p.realize({W, H}, Target("host"))[0];
        expect_same_bits(aot, jit);
        for (int y = 0; y < H; y++) {
            for (int x = 0; x < W; x++) {
                uint32_t s = 0;
                for (int j = 0; j < 3; j++)
                    for (int i = 0; i < 3; i++)
                        s += in(x + i, y + j);
                ASSERT_EQ(aot(x, y), uint16_t(s / 9)) << x << ", " << y;
            }
        }
    }
}

// Types and rank set on the command line (in.type=uint8 in.dim=2 out.type=uint32 out.dim=1).
TEST(AOT, TypesAndRanksFromParameters) {
    const int W = 45, H = 300;
    Buffer<uint8_t> in = random_buffer<uint8_t>({W, H}, 4, 1, 255);
    Buffer<uint32_t> aot({W});
    Tensor tin(in), tout(aot);
    ASSERT_EQ(aot_column_sum(&tin, &tout), 0) << aicf_last_error();
    std::unique_ptr<GeneratorBase> g = GeneratorRegistry::create("column_sum");
    for (auto [k, v] :
         {std::pair{"in.type", "uint8"}, {"in.dim", "2"}, {"out.type", "uint32"}, {"out.dim", "1"}})
        g->set_param(k, v);
    Pipeline p = g->build();
    g->set_input("in", in);
    Buffer<uint32_t> jit = p.realize({W}, Target("host"))[0];
    expect_same_bits(aot, jit);
    for (int x = 0; x < W; x++) {
        uint32_t s = 0;
        for (int y = 0; y < H; y++)
            s += in(x, y);
        ASSERT_EQ(aot(x), s) << x;
    }
}

// A bool input: DLPack's bool (code 6, DLPack 0.8: PyTorch's bool tensors), uint8 and uint1
// (a byte each) are all one byte of 0 or 1; other types are refused by name.
TEST(AOT, BoolTensorsOfEverySpelling) {
    const int W = 13, H = 41;
    Buffer<uint8_t> bytes = random_buffer<uint8_t>({W, H}, 5, 0, 1.99);
    Buffer<int32_t> counts({W});
    for (uint8_t code : {uint8_t(6), uint8_t(kDLUInt)}) {
        for (uint8_t bits : {uint8_t(8), uint8_t(1)}) {
            if (code == 6 && bits == 1) continue;
            Tensor tin(bytes), tout(counts);
            tin.t.dtype = {code, bits, 1};
            ASSERT_EQ(aot_count_true(&tin, &tout), 0) << aicf_last_error();
            for (int x = 0; x < W; x++) {
                int want = 0;
                for (int y = 0; y < H; y++)
                    want += bytes(x, y) != 0;
                ASSERT_EQ(counts(x), want) << "code " << int(code) << ", column " << x;
            }
        }
    }
    Tensor tin(bytes), tout(counts);
    tin.t.dtype = {6, 16, 1};
    EXPECT_NE(aot_count_true(&tin, &tout), 0);
    EXPECT_NE(std::string(aicf_last_error())
                  .find("holds bool16 elements, but the pipeline "
                        "expects bool"),
              std::string::npos)
        << aicf_last_error();
}

// A GPU pipeline: its kernels ride in the object (PTX, and the kernel IR the simulator runs
// where there is no GPU). The same as the JIT on the same device, and close to a plain loop.
TEST(AOT, GPUKernelsRunFromTheObject) {
    aicf_test::ScopedEnv sim("AICF_DEVICE", "sim");
    const int W = 250, H = 7;
    Buffer<float> in = random_buffer<float>({W, H}, 5, -2, 2);
    Buffer<float> weight = random_buffer<float>({W}, 6, 0.5, 1.5);
    Buffer<float> aot({W, H});
    Tensor tin(in), tw(weight), tout(aot);
    aicf_set_cuda_stream(nullptr); // the default stream (the simulator has no others)
    ASSERT_EQ(aot_rms_norm(&tin, &tw, 1e-5f, &tout), 0) << aicf_last_error();
    const aicf_pipeline_metadata_t *m = aot_rms_norm_metadata();
    ASSERT_EQ(m->kernel_count, 1);
    EXPECT_NE(std::string(m->kernels[0].ptx).find("shfl.sync.bfly"), std::string::npos);
    EXPECT_GT(m->kernels[0].kernel_ir_size, 0);
#ifdef AOT_HAS_CUBINS
    // Assembled at build time for sm_80 and sm_90 (ELF images), loaded on those GPUs.
    ASSERT_EQ(m->kernels[0].cubin_count, 2);
    EXPECT_EQ(m->kernels[0].cubins[0].compute_capability, 80);
    EXPECT_EQ(m->kernels[0].cubins[1].compute_capability, 90);
    for (int i = 0; i < 2; i++) {
        ASSERT_GT(m->kernels[0].cubins[i].size, 4);
        EXPECT_EQ(std::memcmp(m->kernels[0].cubins[i].data,
                              "\x7f"
                              "ELF",
                              4),
                  0);
    }
#endif

    std::unique_ptr<GeneratorBase> g = GeneratorRegistry::create("rms_norm");
    g->set_param("target", "host-cuda-sm_80");
    g->set_param("threads", "96");
    Pipeline p = g->build();
    g->set_input("in", in);
    g->set_input("weight", weight);
    g->set_input<float>("epsilon", 1e-5f);
    Buffer<float> jit = p.realize({W, H}, Target("host-cuda-sm_80"))[0];
    jit.copy_to_host();
    expect_same_bits(aot, jit);
    aicf_test::expect_rms_norm(aot, in, weight);
}

// Tensors in CUDA memory are used in place where the kernels run on a GPU; where they run on
// the simulator, they are refused before anything runs.
TEST(AOT, CUDATensorsNeedAGPU) {
    aicf_test::ScopedEnv sim("AICF_DEVICE", "sim");
    Buffer<float> in({8, 2}), weight({8}), out({8, 2});
    Tensor tin(in), tw(weight), tout(out);
    tin.t.device = {kDLCUDA, 0};
    EXPECT_EQ(aot_rms_norm(&tin, &tw, 1e-5f, &tout), -int(ir::RuntimeErrorKind::BufferDevice));
    EXPECT_STREQ(aicf_last_error(),
                 "aot_rms_norm: buffer in (argument 0) is in CUDA memory, but this process runs "
                 "kernels on the sim device (no GPU here, or AICF_DEVICE says so): pass kDLCPU "
                 "tensors.");
    tin.t.device = {kDLCUDA, 1};
    EXPECT_EQ(aot_rms_norm(&tin, &tw, 1e-5f, &tout), -int(ir::RuntimeErrorKind::BufferDevice));
    EXPECT_STREQ(aicf_last_error(), "aot_rms_norm: buffer in (argument 0) is on CUDA device 1; "
                                    "AICF runs kernels on CUDA device 0.");
}

// Strides as DLPack gives them: a view of every other row of a larger array.
TEST(AOT, StridedInput) {
    const int W = 40, H = 9;
    Buffer<float> big = random_buffer<float>({W + 8, 2 * H}, 7, -1, 1);
    Buffer<float> out({W, H});
    std::vector<int64_t> shape = {H, W}, strides = {2 * (W + 8), 1};
    DLTensor view{};
    view.data = big.data();
    view.device = {kDLCPU, 0};
    view.ndim = 2;
    view.dtype = {kDLFloat, 32, 1};
    view.shape = shape.data();
    view.strides = strides.data();
    Tensor tout(out);
    ASSERT_EQ(aot_scale_offset(&view, 1.0f, 1, &tout), 0) << aicf_last_error();
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            ASSERT_EQ(out(x, y), big(x, 2 * y) + 1.0f);
}

// One column of a matrix, (H, 1) with strides (2 W, 2), as a framework gives every other
// column: one point per row is dense whatever its stride.
TEST(AOT, AStrideAlongOnePointIsNoStride) {
    const int W = 30, H = 50;
    Buffer<uint8_t> matrix = random_buffer<uint8_t>({W, H}, 5, 1, 255);
    std::vector<int64_t> shape = {H, 1}, strides = {W, 2};
    DLTensor column{};
    column.data = &matrix(3, 0);
    column.device = {kDLCPU, 0};
    column.ndim = 2;
    column.dtype = {kDLUInt, 8, 1};
    column.shape = shape.data();
    column.strides = strides.data();
    Buffer<uint32_t> sum({1});
    Tensor tsum(sum);
    ASSERT_EQ(aot_column_sum(&column, &tsum), 0) << aicf_last_error();
    uint32_t want = 0;
    for (int y = 0; y < H; y++)
        want += matrix(3, y);
    EXPECT_EQ(sum(0), want);
}

// Every argument check: the code returned and the message, with nothing run.
TEST(AOTErrors, EachArgumentCheckReturnsItsCodeAndMessage) {
    const int W = 16, H = 4;
    Buffer<float> in = random_buffer<float>({W, H}, 8, -1, 1);
    Buffer<float> out({W, H});
    out.fill(42.0f);
    auto call = [&](DLTensor *a, DLTensor *b) { return aot_scale_offset(a, 1.0f, 0, b); };
    auto expect = [&](int code, int want, const std::string &text) {
        EXPECT_EQ(code, want) << aicf_last_error();
        EXPECT_NE(std::string(aicf_last_error()).find(text), std::string::npos)
            << "message: " << aicf_last_error() << "\nexpected to contain: " << text;
        EXPECT_EQ(out(0, 0), 42.0f) << "the pipeline ran";
    };
    using K = ir::RuntimeErrorKind;
    Tensor tout(out);
    {
        expect(call(nullptr, &tout), -int(K::BufferNull),
               "aot_scale_offset: buffer in (argument 0) is a null DLTensor pointer.");
    }
    {
        Tensor t(in);
        t.t.dtype = {kDLInt, 32, 1};
        expect(call(&t, &tout), -int(K::BufferType),
               "buffer in (argument 0) holds int32 elements, but the pipeline expects float32.");
        t.t.dtype = {99, 32, 1};
        expect(call(&t, &tout), -int(K::BufferType),
               "buffer in (argument 0) holds unknown DLPack type code 99 (32 bits) elements");
    }
    {
        Tensor t(in);
        t.t.ndim = 3;
        expect(call(&t, &tout), -int(K::BufferDimensions),
               "buffer in (argument 0) has 3 dimensions, but the pipeline expects 2.");
    }
    {
        Tensor t(in);
        t.strides[0] = -W;
        expect(call(&t, &tout), -int(K::BufferStride),
               "buffer in (argument 0): dimension 1 (DLPack axis 0) has stride -16; pipelines "
               "take strides from 0 to 2^31 - 1 elements.");
    }
    {
        Tensor t(in);
        t.strides[1] = 2;
        expect(call(&t, &tout), -int(K::BufferStride),
               "aot_scale_offset: Buffer in has stride 2 in dimension 0 (DLPack axis 1); "
               "pipelines expect dimension 0 to be dense");
    }
    {
        Tensor t(in);
        t.shape[0] = -1;
        expect(call(&t, &tout), -int(K::BufferExtentNegative),
               "dimension 1 (DLPack axis 0) has a negative extent (-1).");
    }
    {
        Tensor t(in);
        t.shape[1] = int64_t(1) << 33;
        expect(call(&t, &tout), -int(K::BufferTooLarge),
               "dimension 0 (DLPack axis 1) has extent 8589934592; pipelines address at most "
               "2^31 - 1.");
    }
    {
        Tensor t(in);
        t.t.device = {kDLCUDA, 0};
        expect(call(&t, &tout), -int(K::BufferDevice),
               "buffer in (argument 0) is in the memory of a CUDA device, but the pipeline runs "
               "on the CPU: pass a kDLCPU tensor.");
    }
    {
        Tensor t(in);
        t.t.byte_offset = 2;
        expect(call(&t, &tout), -int(K::BufferMisaligned),
               "starts at byte offset 2, which is not a multiple of its 4-byte elements.");
    }
    for (uint64_t offset : {uint64_t(1) << 62, uint64_t(1) << 63, ~uint64_t(0) - 3}) {
        // The pointer the pipeline would compute is no memory of the process, or wraps.
        Tensor t(in);
        t.t.byte_offset = offset;
        expect(call(&t, &tout), -int(K::BufferMisaligned),
               "starts at byte offset " + std::to_string(offset) +
                   " from its data pointer, and its elements would reach past 2^57, beyond the "
                   "addresses a process's memory has.");
    }
    {
        Tensor t(in);
        t.t.data = nullptr;
        expect(call(&t, &tout), -int(K::BufferNull), "buffer in (argument 0) has null data.");
    }
    {
        Tensor t(in);
        t.t.shape = nullptr;
        expect(call(&t, &tout), -int(K::BufferNull), "has a null shape array.");
    }
    {
        // Smaller than the output: the pipeline's own bounds check, before it computes.
        Buffer<float> small({W - 1, H});
        Tensor t(small);
        expect(call(&t, &tout), -int(K::InputTooSmall),
               "aot_scale_offset: Buffer in is too small: dimension 0 (DLPack axis 1) must cover "
               "[0, 15], but it covers [0, 14].");
    }
    {
        Tensor t(in);
        void *args[] = {&t, nullptr, nullptr, &tout};
        expect(aot_scale_offset_argv(args), -int(K::BufferNull),
               "aot_scale_offset: scalar scale (argument 1) is a null pointer.");
    }
    {
        // The output over the input itself, and over its second half.
        Tensor t(in), same(in);
        expect(call(&t, &same), -int(K::BufferOverlap),
               "aot_scale_offset: the output buffer out (argument 3) shares memory with the "
               "input buffer in (argument 0).");
        Buffer<float> big({W, 2 * H});
        Tensor lower(big), upper(big);
        lower.shape[0] = H;
        upper.shape[0] = H;
        upper.t.byte_offset = sizeof(float) * W * (H - 1); // one row in common
        expect(call(&lower, &upper), -int(K::BufferOverlap), "shares memory with the input");
        // The left and right halves of a wider matrix share no element: the call runs.
        Buffer<float> wide({2 * W, H});
        Tensor left(wide), right(wide);
        left.shape[1] = right.shape[1] = W;
        right.t.byte_offset = sizeof(float) * W;
        wide.fill(3.0f);
        EXPECT_EQ(call(&left, &right), 0) << aicf_last_error();
        EXPECT_EQ(wide(W, 0), 3.0f) << "scale 1, offset 0";
        // One column more and they share one.
        left.shape[1] = W + 1;
        expect(call(&left, &right), -int(K::BufferOverlap), "shares memory with the input");
    }
    {
        // An output whose rows overlap (stride 0, or a row stride shorter than a row).
        for (int64_t stride : {int64_t(0), int64_t(W - 1)}) {
            Tensor t(in), o(out);
            o.strides[0] = stride;
            expect(
                call(&t, &o), -int(K::BufferOverlap),
                "the output buffer out (argument 3) may have points that share memory: dimension 1 "
                "(DLPack axis 0) has stride " +
                    std::to_string(stride));
        }
    }
    // A good call afterwards succeeds and clears the message.
    Tensor t(in);
    EXPECT_EQ(call(&t, &tout), 0);
    EXPECT_STREQ(aicf_last_error(), "");
}

} // namespace

// A Tuple-valued output compiled ahead of time: its buffers (minmax.0, minmax.1 inside AICF)
// are arguments minmax_0 and minmax_1 of the C function and its metadata.
TEST(AOT, TupleOutputsAreNamedForC) {
    ImageParam in(Float(32), 1, "in");
    Func mm("minmax");
    RDom r(0, in.width(), "r");
    mm() = Tuple(in(0), in(0));
    mm() = Tuple(min(mm()[0], in(r)), max(mm()[1], in(r)));
    const std::string dir = ::testing::TempDir();
    OutputFiles files;
    files.object = dir + "/aicf_minmax.o";
    files.c_header = dir + "/aicf_minmax.h";
    Pipeline(mm).compile_to_files("minmax", files, Target("host"));
    std::ifstream header(files.c_header);
    const std::string text((std::istreambuf_iterator<char>(header)),
                           std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("int minmax(DLTensor *in, DLTensor *minmax_0, DLTensor *minmax_1);"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find(" *   minmax_1: output buffer of float32, 0 dimensions"), std::string::npos)
        << text;
}

// Names the generated header cannot take: an argument named as something the headers it
// includes declare, or a header file named as one of C's (which would hide it). Two functions
// whose names differ in case have headers with their own guards.
TEST(AOT, NamesAndFilesTheHeaderCannotTake) {
    const std::string dir = ::testing::TempDir();
    Var x("x");
    for (const char *name : {"DLTensor", "NULL", "uint8_t", "aicf_buffer_t"}) {
        ImageParam in(Float(32), 1, name);
        Func f("f");
        f(x) = in(x)*2;
        OutputFiles files;
        files.c_header = dir + "/aicf_named.h";
        EXPECT_CONTAINS(aicf_test::message_of<CompileError>(
                            [&] { Pipeline(f).compile_to_files("named", files, Target("host")); }),
                        "The argument \"" + std::string(name) + "\" of named is a name of");
    }
    Func f("f");
    f(x) = x * 2;
    OutputFiles files;
    files.c_header = dir + "/stdint.h";
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>(
                        [&] { Pipeline(f).compile_to_files("stdint", files, Target("host")); }),
                    "The header of stdint would be " + files.c_header + ", named as C's stdint.h");
    std::string guards;
    for (const char *name : {"Twice", "twice"}) {
        files.c_header = dir + "/aicf_case_" + name + ".h";
        Pipeline(f).compile_to_files(name, files, Target("host"));
        std::ifstream header(files.c_header);
        const std::string text((std::istreambuf_iterator<char>(header)),
                               std::istreambuf_iterator<char>());
        EXPECT_CONTAINS(text, "#ifndef AICF_GENERATED_" + std::string(name) + "_H\n");
    }
}

namespace {

// The host code of a pipeline whose checks find its Tuple output's first buffer too small.
int32_t tuple_output_too_small(void *ctx, void *const *) {
    return aicf_runtime_error(ctx, int32_t(ir::RuntimeErrorKind::BufferTooSmall), "minmax.0", 1, 0,
                              9, 0, 4, 0);
}

int32_t tuple_shapes_differ(void *ctx, void *const *) {
    return aicf_runtime_error(ctx, int32_t(ir::RuntimeErrorKind::TupleShapesDiffer),
                              "minmax.0\x1fminmax.10", 0, 0, 9, 0, 7, 0);
}

} // namespace

// The run-time errors of a compiled pipeline name a Tuple output's buffers as its header does
// (minmax_0, not minmax.0), with the DLPack axis of the dimension.
TEST(AOT, RunTimeErrorsNameTupleOutputsForC) {
    aicf_argument_metadata_t args[2] = {};
    args[0].name = "minmax_0";
    args[1].name = "minmax_10";
    for (aicf_argument_metadata_t &a : args) {
        a.kind = AICF_ARGUMENT_OUTPUT;
        a.type = {2, 32, 1};
        a.dimensions = 2;
    }
    aicf_pipeline_metadata_t p = {};
    p.name = "minmax";
    p.target = "host";
    p.argument_count = 2;
    p.arguments = args;
    p.entry = tuple_output_too_small;
    Buffer<float> a({10, 5}), b({10, 5});
    Tensor ta(a), tb(b);
    void *pointers[2] = {&ta, &tb};
    EXPECT_EQ(aicf_run_pipeline(&p, pointers), -int(ir::RuntimeErrorKind::BufferTooSmall));
    EXPECT_EQ(std::string(aicf_last_error()),
              "minmax: Buffer minmax_0 is too small: dimension 1 (DLPack axis 0) must cover [0, "
              "9], but it covers [0, 4].");
    p.entry = tuple_shapes_differ;
    EXPECT_EQ(aicf_run_pipeline(&p, pointers), -int(ir::RuntimeErrorKind::TupleShapesDiffer));
    EXPECT_EQ(std::string(aicf_last_error()),
              "minmax: The buffers of a Tuple-valued output differ in dimension 0 (DLPack axis "
              "1): minmax_0 covers [0, 9] and minmax_10 covers [0, 7]. The elements of a Tuple "
              "are realized over one region: give their buffers the same mins and extents.");
}
