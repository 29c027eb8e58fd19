// The dataflow report (dsl/Report.h): its static counts against the simulator's counters on
// every family of kernels (guarded tails, reductions across lanes, staged and pipelined tiles,
// tensor cores, atomics, data-dependent conditions), its bytes against sizes worked out by
// hand, the operator-by-operator baseline, its outputs (text, JSON, Graphviz) and its errors.

#include "ErrorMessage.h"
#include "GPUTarget.h"
#include "GemmGPU.h"
#include "KernelRunner.h"
#include "MatmulGPU.h"
#include "MlpBlock.h"
#include "NormSchedules.h"
#include "Reference.h"
#include "ReportCheck.h"
#include "dsl/aicf.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>

using namespace aicf;
using aicf_test::fill_random;
using aicf_test::realize_checking_report;

namespace {

const Target gpu_target = aicf_test::gpu_test_target();

TEST(ReportCounts, GuardedTilesMatchTheSimulator) {
    const int W = 37, H = 23;
    Buffer<float> in({W, H}, "in");
    fill_random(in, -1, 1, 3);
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    Func f("f"), g("g");
    f(x, y) = in(x, y) * 2.0f + 1.0f;
    g(x, y) = f(x, y) * f(x, y) - in(x, y);
    g.gpu_tile(x, y, bx, by, tx, ty, 16, 8, TailStrategy::GuardWithIf);
    f.compute_root().gpu_tile(x, y, bx, by, tx, ty, 8, 8, TailStrategy::GuardWithIf);
    realize_checking_report(g, {W, H}, gpu_target);
}

// Kernels that read a stage computed on the host (whose storage is around their launches),
// beside one computed on the GPU: every kernel is counted, and the values are right.
TEST(ReportCounts, KernelsBesideHostStagesMatchTheSimulator) {
    const int W = 45, H = 19;
    Buffer<float> in({W, H}, "in");
    fill_random(in, -1, 1, 8);
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    Func h("h"), f("f"), g("g");
    h(x, y) = in(x, y) * 0.5f;
    f(x, y) = h(x, y) + in(x, y);
    g(x, y) = f(x, y) * f(x, y) + h(x, y);
    h.compute_root();
    f.compute_root().gpu_tile(x, y, bx, by, tx, ty, 16, 4);
    g.gpu_tile(x, y, bx, by, tx, ty, 8, 8);
    const DataflowReport report = g.report({W, H}, gpu_target);
    ASSERT_EQ(report.kernels.size(), 2u);
    // h runs on the host: named, and outside the counts, not counted as traffic saved.
    EXPECT_EQ(report.host_funcs, std::vector<std::string>{"h"});
    EXPECT_NE(report.summary().find("; h on the host, not counted)"), std::string::npos)
        << report.summary();
    EXPECT_NE(report.to_json().find("\"host_funcs\": [\"h\"]"), std::string::npos);
    EXPECT_NE(report.to_text().find("Computed in host code, outside these counts: h"),
              std::string::npos);
    Buffer<float> out = realize_checking_report(g, {W, H}, gpu_target)[0];
    out.copy_to_host();
    for (int j = 0; j < H; j++) {
        for (int i = 0; i < W; i++) {
            const double hv = double(in(i, j)) * 0.5, fv = hv + in(i, j);
            ASSERT_NEAR(out(i, j), fv * fv + hv, 1e-6) << i << "," << j;
        }
    }
}

TEST(ReportCounts, RowReductionsMatchTheSimulator) {
    const int width = 200, rows = 19;
    Buffer<float> in({width, rows}, "in"), weight({width}, "weight"), bias({width}, "bias");
    fill_random(in, -2, 2, 4);
    fill_random(weight, 0.5, 1.5, 5);
    fill_random(bias, -0.5, 0.5, 6);
    for (aicf_apps::NormSchedule s :
         {aicf_apps::NormSchedule::WarpPerRow, aicf_apps::NormSchedule::BlockPerRow,
          aicf_apps::NormSchedule::SharedTree}) {
        SCOPED_TRACE(aicf_apps::to_string(s));
        aicf_apps::RowwiseOp op =
            aicf_apps::layer_norm<float>(in, weight, bias, width, 1e-5f, "ln");
        aicf_apps::schedule<float>(op, s);
        realize_checking_report(op.out, {width, rows}, gpu_target);
    }
}

TEST(ReportCounts, StagedMatmulMatchesTheSimulator) {
    const int M = 150, N = 200, K = 129;
    Buffer<float> A({K, M}, "A"), B({N, K}, "B");
    fill_random(A, -1, 1, 7);
    fill_random(B, -1, 1, 8);
    realize_checking_report(aicf_apps::matmul_register_tiled(A, B, K, "mm"), {N, M}, gpu_target);
}

// Tiles staged through an asynchronous copy pipeline one element (4 bytes) per copy: the
// report used to fail with an InternalError on such copies. Checked against a double loop.
TEST(ReportCounts, ScalarAsynchronousCopiesMatchTheSimulator) {
    const int M = 37, N = 32, K = 40;
    Buffer<float> A({K, M}, "A"), B({N, K}, "B");
    fill_random(A, -1, 1, 11);
    fill_random(B, -1, 1, 12);
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty"), t("t"), hi("hi"), lo("lo");
    RDom k(0, K, "k");
    RVar ko("ko"), ki("ki");
    Func a("a"), b("b"), prod("prod"), out("out");
    a(x, y) = A(x, y);
    b(x, y) = B(x, y);
    prod(x, y) = 0.0f;
    prod(x, y) += a(k, y) * b(x, k);
    out(x, y) = prod(x, y);
    out.gpu_tile(x, y, bx, by, tx, ty, 16, 16, TailStrategy::GuardWithIf);
    prod.compute_at(out, bx).store_in(MemoryType::Register).gpu_threads(x, y);
    prod.update().split(k, ko, ki, 8).reorder(ki, x, y, ko).gpu_threads(x, y);
    for (Func f : {a, b}) {
        f.compute_at(prod, ko).store_in(MemoryType::GPUShared);
        f.gpu_pipeline(2, PipelineCopy::Async);
        f.fuse(x, y, t).split(t, hi, lo, 128, TailStrategy::GuardWithIf).split(lo, ty, tx, 16);
        f.gpu_threads(tx, ty);
    }
    Buffer<float> result = realize_checking_report(out, {N, M}, gpu_target)[0];
    result.copy_to_host();
    for (int j = 0; j < M; j++) {
        for (int i = 0; i < N; i++) {
            double want = 0;
            for (int q = 0; q < K; q++)
                want += double(A(q, j)) * B(i, q);
            ASSERT_NEAR(result(i, j), want, 1e-4) << i << "," << j;
        }
    }
}

TEST(ReportCounts, TensorCoreGemmsMatchTheSimulator) {
    const int M = 150, N = 136, K = 88;
    Buffer<bfloat16_t> A({K, M}, "A"), B({N, K}, "B");
    fill_random(A, -1, 1, 9);
    fill_random(B, -1, 1, 10);
    aicf_apps::GemmSchedule swizzled;
    swizzled.rows = aicf_apps::GemmSchedule::Rows::Swizzled;
    for (const aicf_apps::GemmSchedule &s : {aicf_apps::GemmSchedule(), swizzled}) {
        realize_checking_report(aicf_apps::gemm_tensor_cores(A, B, K, "gemm", {}, {}, s), {N, M},
                                gpu_target);
    }
    // On Hopper's warpgroup tensor cores: the same bytes, the flops counted per warpgroup.
    const Target hopper("host-cuda-sm_90a");
    if (!aicf_test::device_runs(hopper)) return;
    realize_checking_report(
        aicf_apps::gemm_tensor_cores(A, B, K, "gemm", {}, {}, aicf_apps::GemmSchedule::hopper()),
        {N, M}, Target("host-cuda-sm_90a"));
}

TEST(ReportCounts, MlpBlockMatchesTheSimulator) {
    const int tokens = 80, d = 136, hidden = 264;
    Buffer<bfloat16_t> x({d, tokens}, "x");
    fill_random(x, -2, 2, 1);
    const aicf_apps::MlpWeights w = aicf_apps::random_mlp_weights(d, hidden, 2);
    realize_checking_report(aicf_apps::mlp_block_by_operator(x, w, d, hidden, "mlp"), {d, tokens},
                            gpu_target);
    realize_checking_report(aicf_apps::mlp_block_dataflow(x, w, d, hidden, "mlp"), {d, tokens},
                            gpu_target);
}

// Atomic updates at data-dependent indices: the bytes are exact, the span is the buffer.
TEST(ReportCounts, AtomicHistogramMatchesTheSimulator) {
    const int n = 3000;
    Buffer<int> in({n}, "in");
    for (int i = 0; i < n; i++)
        in(i) = (i * 37) % 251;
    Func hist("hist");
    Var b("b");
    RDom r(0, n, "r");
    RVar rb("rb"), rt("rt");
    hist(b) = 0;
    hist(clamp(in(r) / 4, 0, 63)) += 1;
    hist.update().atomic().split(r.x, rb, rt, 256).gpu_blocks(rb).gpu_threads(rt);
    hist.gpu_tile(b, Var("bo"), Var("bi"), 64);
    realize_checking_report(hist, {64}, gpu_target);
    const DataflowReport report = hist.report({64}, gpu_target, {}, false);
    ASSERT_EQ(report.kernels.size(), 2u);
    const BufferReport *counts = nullptr;
    for (const BufferReport &b : report.kernels[1].buffers)
        if (b.name == "hist") counts = &b;
    ASSERT_NE(counts, nullptr);
    EXPECT_EQ(counts->requested_written, int64_t(n) * 4);
    EXPECT_EQ(counts->moved_written, 64 * 4); // the whole buffer: the indices are data
}

// A reduction that skips points on a loaded value: the counts are an upper bound.
// The sum of each row's positive elements (n of them), a row per thread in blocks of `tile`.
template <typename Input> Func positive_row_sums(const Input &in, int n, int tile) {
    Func pos("pos");
    Var y("y"), by("by"), ty("ty");
    RDom r(0, n, "r");
    r.where(in(r, y) > 0.0f);
    pos(y) = 0.0f;
    pos(y) += in(r, y);
    pos.gpu_tile(y, by, ty, tile, TailStrategy::GuardWithIf);
    pos.update().gpu_tile(y, by, ty, tile, TailStrategy::GuardWithIf);
    return pos;
}

TEST(ReportCounts, DataDependentConditionsGiveBounds) {
    const int n = 1000, rows = 8;
    Buffer<float> in({n, rows}, "in");
    fill_random(in, -1, 1, 11);
    Func pos = positive_row_sums(in, n, 4);
    realize_checking_report(pos, {rows}, gpu_target);
    const DataflowReport report = pos.report({rows}, gpu_target, {}, false);
    ASSERT_EQ(report.kernels.size(), 2u);
    EXPECT_FALSE(report.kernels[1].exact);
    EXPECT_NE(report.to_text().find("(bound)"), std::string::npos);
}

// ---- Bytes worked out by hand ----

// The two-stage pipeline g(f(in)), fused into one kernel or not.
Func two_stages(const ImageParam &in, bool fused) {
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    Func f("f"), g("g");
    f(x, y) = in(x, y) * 3.0f;
    g(x, y) = f(x, y) + 1.0f;
    g.gpu_tile(x, y, bx, by, tx, ty, 32, 8);
    if (fused) {
        f.compute_at(g, tx);
    } else {
        f.compute_root().gpu_tile(x, y, bx, by, tx, ty, 32, 8);
    }
    return g;
}

TEST(ReportBytes, PointwiseStagesMoveWhatTheyTouch) {
    ImageParam in(Float(32), 2, "in");
    const int W = 256, H = 64;
    ReportArguments args;
    args.buffers["in"] = {W, H};
    const int64_t plane = int64_t(W) * H * 4;

    const DataflowReport fused = two_stages(in, true).report({W, H}, gpu_target, args);
    ASSERT_EQ(fused.kernels.size(), 1u);
    EXPECT_EQ(fused.kernels[0].requested_bytes(), 2 * plane);
    EXPECT_EQ(fused.moved_bytes(), 2 * plane);
    EXPECT_EQ(fused.compulsory_bytes, 2 * plane);
    EXPECT_EQ(fused.kernels[0].compulsory_bytes(), 2 * plane);
    EXPECT_EQ(fused.flops(), int64_t(W) * H * 2);
    EXPECT_EQ(fused.kernels[0].grid, (std::array<int64_t, 3>{{W / 32, H / 8, 1}}));

    const DataflowReport split = two_stages(in, false).report({W, H}, gpu_target, args);
    ASSERT_EQ(split.kernels.size(), 2u);
    EXPECT_EQ(split.moved_bytes(), 4 * plane);
    EXPECT_EQ(split.compulsory_bytes, 2 * plane);
    EXPECT_EQ(split.kernels[0].compulsory_bytes(), plane); // f's result is an intermediate

    // The baseline of either is the split pipeline.
    ASSERT_TRUE(fused.baseline);
    EXPECT_EQ(fused.baseline->kernels.size(), 2u);
    EXPECT_EQ(fused.baseline->moved_bytes(), 4 * plane);
    EXPECT_EQ(fused.summary(), "2 kernels moving 262.14 kB -> 1 kernel moving 131.07 kB "
                               "(2.0x less)");

    // The roofline: memory-bound on every GPU, at the datasheet bandwidth.
    ASSERT_EQ(fused.kernels[0].roofline.size(), report_gpus().size());
    for (size_t i = 0; i < report_gpus().size(); i++) {
        const RooflineBound &b = fused.kernels[0].roofline[i];
        EXPECT_EQ(b.gpu, report_gpus()[i].name);
        EXPECT_TRUE(b.memory_bound());
        EXPECT_DOUBLE_EQ(b.memory_seconds, double(2 * plane) / report_gpus()[i].memory_bytes_per_s);
        EXPECT_DOUBLE_EQ(b.seconds, b.memory_seconds);
    }
}

// Windows: an input that is a 30 x 10 view of an array with rows of 1000 elements, and a
// 16 x 16 crop of a 4096 x 2048 input. What a kernel moves of them is the elements in the box
// of coordinates it reaches, not the span of offsets (whole rows of the wider array).
TEST(ReportBytes, WindowsOfWiderArraysMoveTheirElements) {
    const int W = 30, H = 10, stride = 1000;
    std::vector<float> storage(size_t(stride) * H);
    for (size_t i = 0; i < storage.size(); i++)
        storage[i] = float(i % 97) * 0.25f - 3.0f;
    Buffer<float> view(storage.data(), std::vector<aicf_dim_t>{{0, W, 1, 0}, {0, H, stride, 0}},
                       "view");
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    Func sum3("sum3");
    sum3(x, y) = view(x, y) + view(x + 1, y) + view(x, y + 1);
    sum3.gpu_tile(x, y, bx, by, tx, ty, 16, 4, TailStrategy::GuardWithIf);
    Buffer<float> out = realize_checking_report(sum3, {W - 1, H - 1}, gpu_target)[0];
    out.copy_to_host();
    for (int j = 0; j < H - 1; j++)
        for (int i = 0; i < W - 1; i++)
            ASSERT_EQ(out(i, j), view(i, j) + view(i + 1, j) + view(i, j + 1)) << i << "," << j;
    const DataflowReport r = sum3.report({W - 1, H - 1}, gpu_target);
    ASSERT_EQ(r.kernels.size(), 1u);
    for (const BufferReport &b : r.kernels[0].buffers) {
        if (b.name != "view") continue;
        EXPECT_EQ(b.bytes, W * H * 4);
        EXPECT_EQ(b.moved_read, W * H * 4);
    }
    EXPECT_EQ(r.compulsory_bytes, (W * H + (W - 1) * (H - 1)) * 4);

    ImageParam big(Float(32), 2, "big");
    Func crop("crop");
    crop(x, y) = big(x + 1000, y + 1000) * 2.0f + big(x + 1001, y + 1000);
    crop.gpu_tile(x, y, bx, by, tx, ty, 16, 16);
    ReportArguments args;
    args.buffers["big"] = {4096, 2048};
    const DataflowReport c = crop.report({16, 16}, gpu_target, args);
    ASSERT_EQ(c.kernels.size(), 1u);
    EXPECT_EQ(c.kernels[0].buffers[0].name, "big");
    EXPECT_EQ(c.kernels[0].buffers[0].moved_read, 17 * 16 * 4);
    EXPECT_EQ(c.compulsory_bytes, (17 * 16 + 16 * 16) * 4);
}

TEST(ReportBytes, TheMlpBlockAtFullSize) {
    // The sizes of a transformer layer, counted without allocating them.
    const int tokens = 2048, d = 4096, hidden = 16384;
    const ImageParam x = aicf_apps::mlp_input_param();
    const auto w = aicf_apps::mlp_weight_params();
    const ReportArguments args = aicf_apps::mlp_report_arguments(tokens, d, hidden);
    const DataflowReport ops = aicf_apps::mlp_block_by_operator(x, w, d, hidden, "mlp")
                                   .report({d, tokens}, gpu_target, args, false);
    const DataflowReport flow = aicf_apps::mlp_block_dataflow(x, w, d, hidden, "mlp")
                                    .report({d, tokens}, gpu_target, args, false);
    ASSERT_EQ(ops.kernels.size(), 7u);
    ASSERT_EQ(flow.kernels.size(), 2u);
    // Inputs read once, the output written once (all bfloat16).
    const int64_t compulsory =
        2 * (int64_t(d) * tokens * 2 + 2 * int64_t(d) * hidden + hidden + d + 2 * int64_t(d));
    EXPECT_EQ(ops.compulsory_bytes, compulsory);
    EXPECT_EQ(flow.compulsory_bytes, compulsory);
    // The dataflow schedule writes and reads the hidden activations once, in bfloat16.
    EXPECT_EQ(flow.moved_bytes(), compulsory + 2 * 2 * int64_t(hidden) * tokens + 2 * d * tokens);
    EXPECT_LT(flow.moved_bytes(), ops.moved_bytes());
    // Both products on tensor cores: 2 tokens d hidden multiply-adds each.
    EXPECT_EQ(flow.tensor_flops(), 4 * int64_t(tokens) * d * hidden);
    EXPECT_EQ(ops.tensor_flops(), 4 * int64_t(tokens) * d * hidden);
    for (const KernelReport &k : flow.kernels)
        EXPECT_TRUE(k.exact) << k.name;
}

// ---- Outputs ----

TEST(ReportOutput, JsonTextAndPicture) {
    ImageParam in(Float(32), 2, "in");
    ReportArguments args;
    args.buffers["in"] = {64, 16};
    const DataflowReport r = two_stages(in, true).report({64, 16}, gpu_target, args);

    const std::string json = r.to_json();
    for (const char *key :
         {"\"pipeline\": \"g\"", "\"kernels\": [", "\"requested_bytes\"", "\"moved_bytes\"",
          "\"compulsory_bytes\"", "\"roofline\"", "\"bound\": \"memory\"", "\"baseline\": {",
          "\"summary\": \"2 kernels moving"})
        EXPECT_NE(json.find(key), std::string::npos) << key;
    // Python's parser accepts it, where Python is installed.
    if (std::system("command -v python3 > /dev/null 2>&1") == 0) {
        FILE *p = popen("python3 -c 'import json, sys; json.load(sys.stdin)'", "w");
        ASSERT_NE(p, nullptr);
        std::fputs(json.c_str(), p);
        EXPECT_EQ(pclose(p), 0) << json;
    }

    const std::string text = r.to_text();
    for (const char *part : {"Dataflow report: g at 64 x 16", "| kernel", "A100", "H100", "H200",
                             "Operator by operator", "2 kernels moving"})
        EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;

    const std::string dot = r.to_dot();
    EXPECT_NE(dot.find("digraph dataflow"), std::string::npos);
    EXPECT_NE(dot.find("cluster_0"), std::string::npos);
    EXPECT_NE(dot.find("\"func:f@0\" -> \"func:g@0\" [label=\"on chip\""), std::string::npos)
        << dot;
    EXPECT_NE(dot.find("\"in:in\" -> \"func:f@0\""), std::string::npos) << dot;
    const std::string base = r.baseline->to_dot();
    EXPECT_NE(base.find("\"func:f@0\" -> \"func:g@1\" [label=\"4.10 kB\""), std::string::npos)
        << base;

    // A Tuple output whose update is a kernel of its own: one box per kernel, the update's
    // continuing from the first through memory, and each element's buffer drawn once per
    // kernel that writes it, from that kernel's box (no box named after a buffer).
    Var x("x"), y("y"), bx("bx"), tx("tx");
    RDom k(0, 16, "k");
    Func am("am");
    am(x) = {0.0f, 0};
    am(x) = {max(am(x)[0], in(x, k)), select(in(x, k) > am(x)[0], k.x, am(x)[1])};
    am.gpu_tile(x, bx, tx, 32);
    am.update().gpu_tile(x, bx, tx, 32);
    const std::string tuple = am.report({64}, gpu_target, args, false).to_dot();
    for (const char *part :
         {"\"func:am@0\" [label=\"am\"]", "\"func:am@1\" [label=\"am (again)\"]",
          "\"func:am@0\" -> \"func:am@1\"", "\"in:in\" -> \"func:am@1\" [label=\"",
          "\"func:am@1\" -> \"out:am.0\"", "\"func:am@1\" -> \"out:am.1\""})
        EXPECT_NE(tuple.find(part), std::string::npos) << part << "\n" << tuple;
    EXPECT_EQ(tuple.find("func:am.0"), std::string::npos) << tuple;
    EXPECT_EQ(tuple.find("label=\"\", color=\"black\""), std::string::npos) << tuple;
    // The kernel of the pure definition reads nothing of the input: no edge into it.
    EXPECT_EQ(tuple.find("\"in:in\" -> \"func:am@0\""), std::string::npos) << tuple;
    // One kernel launched per row of a host loop: three boxes, each from the input, none
    // continuing from another.
    Func per_row("per_row"), host_out("host_out");
    per_row(x, y) = in(x, y) + in(x, y + 1);
    host_out(x, y) = per_row(x, y) * 2.0f;
    per_row.compute_at(host_out, y).gpu_tile(x, bx, tx, 16, TailStrategy::GuardWithIf);
    const std::string rows = host_out.report({40, 3}, gpu_target, args, false).to_dot();
    for (const char *part : {"\"in:in\" -> \"func:per_row@0\"", "\"in:in\" -> \"func:per_row@2\""})
        EXPECT_NE(rows.find(part), std::string::npos) << part << "\n" << rows;
    EXPECT_EQ(rows.find("\"func:per_row@0\" -> \"func:per_row@1\""), std::string::npos) << rows;

    const std::string dir = ::testing::TempDir();
    const bool has_dot = std::system("command -v dot > /dev/null 2>&1") == 0;
    EXPECT_EQ(write_report_picture(r, dir + "report.dot", dir + "report.svg"), has_dot);
    // Paths with quotes and spaces reach dot as they are.
    EXPECT_EQ(write_report_picture(r, dir + "it's a report.dot", dir + "it's a report.svg"),
              has_dot);
    std::ifstream written(dir + "it's a report.dot");
    EXPECT_TRUE(written.good());
    EXPECT_EQ(std::ifstream(dir + "it's a report.svg").good(), has_dot);
    // A picture that cannot be written is an error, not a missing Graphviz.
    EXPECT_CONTAINS(aicf_test::message_of<RuntimeError>([&] {
                        write_report_picture(r, "/nonexistent/dir/r.dot", "/nonexistent/dir/r.svg");
                    }),
                    "cannot write /nonexistent/dir/r.dot");
}

// ---- Errors ----

// Outputs of different ranks (a row's sum of squares and the rows scaled by it): the sizes
// are the larger one's, and the other's extents come with the arguments.
TEST(ReportCounts, OutputsOfDifferentRanks) {
    const int W = 40, H = 16;
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y"), xo("xo"), xi("xi"), yo("yo"), yi("yi");
    RDom r(0, W, "r");
    Func ss("ss"), out("out");
    ss(y) = 0.0f;
    ss(y) += in(r, y) * in(r, y);
    out(x, y) = in(x, y) * ss(y);
    ss.gpu_tile(y, yo, yi, 8, TailStrategy::GuardWithIf);
    ss.update().gpu_tile(y, yo, yi, 8, TailStrategy::GuardWithIf);
    out.gpu_tile(x, y, xo, yo, xi, yi, 8, 8);
    Pipeline p({ss, out});
    ReportArguments args;
    args.buffers["in"] = {W, H};
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>([&] {
                        p.report({W, H}, gpu_target, args);
                    }),
                    "for an output of another rank than the others, its extents in "
                    "ReportArguments::buffers[\"ss\"]");
    args.buffers["ss"] = {H};
    DataflowReport report = p.report({W, H}, gpu_target, args, false);
    // Each output at its own size: H floats of ss, W x H of out.
    std::map<std::string, int64_t> sizes;
    for (const auto &k : report.kernels)
        for (const auto &b : k.buffers)
            if (b.role == BufferReport::Output) sizes[b.name] = b.bytes;
    EXPECT_EQ(sizes["ss"], 4 * H);
    EXPECT_EQ(sizes["out"], 4 * W * H);
    // The header and the JSON name the output of the other rank at its own extents.
    EXPECT_CONTAINS(report.to_text(),
                    "Dataflow report: ss, outputs at 40 x 16 except ss at 16 for");
    EXPECT_CONTAINS(report.to_json(), "\"other_output_sizes\": {\"ss\": [16]}");
}

// A float atomic add is a flop, in the report and in the simulator alike: a column sum of a
// W x H input over blocks of rows adds W x H times.
TEST(ReportCounts, FloatAtomicsAreFlops) {
    const int W = 77, H = 203;
    Buffer<float> in({W, H}, "in");
    fill_random(in, -1.0, 1.0, 48);
    Var x("x"), bx("bx"), tx("tx");
    RDom r(0, W, 0, H, "r");
    RVar rxo("rxo"), rxi("rxi"), ryo("ryo"), ryi("ryi");
    Func out("out");
    out(x) = 0.0f;
    out(r.x) += in(r.x, r.y);
    out.gpu_tile(x, bx, tx, 32, TailStrategy::GuardWithIf);
    out.update()
        .atomic()
        .split(r.x, rxo, rxi, 32, TailStrategy::GuardWithIf)
        .split(r.y, ryo, ryi, 16, TailStrategy::GuardWithIf)
        .reorder(ryi, rxi, rxo, ryo)
        .gpu_blocks(rxo, ryo)
        .gpu_threads(rxi);
    Buffer<float> sums = realize_checking_report(out, {W}, gpu_target)[0];
    DataflowReport report = out.report({W}, gpu_target, {}, false);
    ASSERT_EQ(report.kernels.size(), 2u);
    EXPECT_EQ(report.kernels[1].flops, int64_t(W) * H);
    for (int i = 0; i < W; i++) {
        double want = 0;
        for (int j = 0; j < H; j++)
            want += in(i, j);
        EXPECT_TRUE(aicf_test::close(sums(i), want, 1e-4, 1e-4)) << i;
    }
}

// Host loops that launch nothing are not walked, however long: a pipeline left on the host
// reports no kernels at any size. A result of no dimensions is reported at one point.
TEST(ReportCounts, HostLoopsWithoutLaunchesAndScalarResults) {
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    Func host_only("host_only");
    host_only(x, y) = in(x, y) * 2.0f;
    ReportArguments big;
    big.buffers["in"] = {1000, 512};
    DataflowReport none = host_only.report({1000, 512}, gpu_target, big, false);
    EXPECT_EQ(none.kernels.size(), 0u);
    EXPECT_CONTAINS(none.to_text(), "outputs written once (none in device memory: no kernel "
                                    "reads or writes it)");
    RDom r(0, 1000, 0, 512, "r");
    Func total("total");
    total() = 0.0f;
    total() += in(r.x, r.y);
    total.gpu_single_thread();
    total.update().gpu_single_thread();
    DataflowReport report = total.report({}, gpu_target, big, false);
    EXPECT_EQ(report.kernels.size(), 2u);
    EXPECT_CONTAINS(report.to_text(), "Dataflow report: total at one point (no dimensions) for ");
}

// A where() no point passes leaves the producer an empty region: its kernels have no blocks,
// so the runtime launches nothing, and the report lists only the kernels that run. Its sum is
// still the update's identity plus one.
TEST(ReportCounts, KernelsWithoutBlocksAreNotLaunched) {
    const int D = 4, S = 6, T = 9;
    Buffer<float> q({D, S}, "q"), k({D, T}, "k");
    fill_random(q, -1, 1, 81);
    fill_random(k, -1, 1, 82);
    Var t("t"), s("s"), bx("bx"), by("by"), tx("tx"), ty("ty");
    RDom rd(0, D, "rd"), rt(0, T, "rt");
    rt.where(rt <= s - 50);
    Func score("score"), total("total");
    score(t, s) = 0.0f;
    score(t, s) += q(rd, s) * k(rd, t);
    total(s) = 1.0f;
    total(s) += score(rt, s);
    score.compute_root().gpu_tile(t, s, bx, by, tx, ty, 8, 8);
    score.update().gpu_tile(t, s, bx, by, tx, ty, 8, 8);
    total.gpu_tile(s, bx, tx, 4);
    total.update().gpu_tile(s, bx, tx, 4);
    Buffer<float> out = realize_checking_report(total, {S}, gpu_target)[0];
    out.copy_to_host();
    for (int j = 0; j < S; j++)
        EXPECT_EQ(out(j), 1.0f) << j;
    DataflowReport r = total.report({S}, gpu_target, ReportArguments(), false);
    ASSERT_EQ(r.kernels.size(), 2u) << r.to_text();
    for (const KernelReport &kr : r.kernels) {
        EXPECT_EQ(kr.name.find("score"), std::string::npos) << r.to_text();
        EXPECT_GT(kr.grid[0], 0);
    }
}

TEST(ReportErrors, SizesTargetsAndArguments) {
    ImageParam in(Float(32), 2, "in");
    Func g = two_stages(in, true);
    ReportArguments args;
    args.buffers["in"] = {64, 16};
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>([&] {
                        g.report({64, 16}, Target("host"), args);
                    }),
                    "has no GPU");
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>([&] {
                        g.report({64, 16}, gpu_target);
                    }),
                    "needs the extents of input in");
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>([&] { g.report({64}, gpu_target, args); }),
                    "is at sizes 64 (1 size), but its output g has 2 dimensions: give 2 sizes.");
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>([&] {
                        g.report({64, -1}, gpu_target, args);
                    }),
                    "size 1 of output g is -1; sizes may not be negative");
    // An empty output, as realize takes it: nothing launches, in either schedule.
    for (bool fused : {true, false}) {
        const DataflowReport empty = two_stages(in, fused).report({64, 0}, gpu_target, args);
        EXPECT_TRUE(empty.kernels.empty()) << empty.to_text();
        EXPECT_EQ(empty.moved_bytes(), 0);
        ASSERT_TRUE(empty.baseline != nullptr);
        EXPECT_TRUE(empty.baseline->kernels.empty()) << empty.to_text();
        EXPECT_EQ(empty.summary(), "no kernels launch: the output is empty at these sizes");
    }
    ReportArguments small = args;
    small.buffers["in"] = {32, 16};
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>([&] {
                        g.report({64, 16}, gpu_target, small);
                    }),
                    "cannot use these sizes: Buffer in is too small");
    ReportArguments extra = args;
    extra.buffers["nothing"] = {1};
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>([&] {
                        g.report({64, 16}, gpu_target, extra);
                    }),
                    "not an input of the pipeline");
    ReportArguments wrong_rank;
    wrong_rank.buffers["in"] = {64};
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>([&] {
                        g.report({64, 16}, gpu_target, wrong_rank);
                    }),
                    "which has 2 dimensions");

    Param<int> offset("offset");
    Var x("x"), bx("bx"), tx("tx");
    Func h("h");
    h(x) = in(x, 0) + cast<float>(offset);
    h.gpu_tile(x, bx, tx, 64);
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>([&] { h.report({64}, gpu_target, args); }),
                    "needs the value of Param offset");
    ReportArguments with_offset = args;
    with_offset.scalars["offset"] = 3;
    EXPECT_EQ(h.report({64}, gpu_target, with_offset, false).kernels.size(), 1u);
    // A value the Param cannot hold is refused, not wrapped.
    for (double bad : {1e12, 2.5, -3e9}) {
        with_offset.scalars["offset"] = bad;
        EXPECT_CONTAINS(aicf_test::message_of<CompileError>(
                            [&] { h.report({64}, gpu_target, with_offset, false); }),
                        "for Param offset, which holds int32 values");
    }
    // Arguments of the wrong kind, and an output's extents other than the sizes.
    ReportArguments kinds = with_offset;
    kinds.scalars["offset"] = 3;
    kinds.scalars["in"] = 1;
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>([&] { h.report({64}, gpu_target, kinds); }),
                    "given a value for in, which is a buffer of the pipeline");
    kinds = with_offset;
    kinds.scalars["offset"] = 3;
    kinds.buffers["offset"] = {4};
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>([&] { h.report({64}, gpu_target, kinds); }),
                    "given the extents of offset, which is a Param of the pipeline");
    // Given as a buffer only: the wrong kind is what is said, not that the value is missing.
    kinds.scalars.erase("offset");
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>([&] { h.report({64}, gpu_target, kinds); }),
                    "given the extents of offset, which is a Param of the pipeline");
    kinds = with_offset;
    kinds.scalars["offset"] = 3;
    kinds.buffers["h"] = {32};
    EXPECT_CONTAINS(
        aicf_test::message_of<CompileError>([&] { h.report({64}, gpu_target, kinds); }),
        "is at sizes 64, but ReportArguments::buffers gives its output h the extents 32");
    kinds.buffers["h"] = {64};
    EXPECT_EQ(h.report({64}, gpu_target, kinds, false).kernels.size(), 1u);
    {
        // A buffer laid out backwards, which a GPU pipeline refuses when it runs.
        std::vector<float> storage(64 * 16, 1.0f);
        Buffer<float> backwards(storage.data(), {64, 16});
        backwards.raw_buffer()->dim[1].stride = -64;
        backwards.raw_buffer()->host = reinterpret_cast<uint8_t *>(storage.data() + 64 * 15);
        in.set(backwards);
        EXPECT_CONTAINS(aicf_test::message_of<CompileError>([&] {
                            g.report({64, 16}, gpu_target, ReportArguments(), false);
                        }),
                        "input in has a negative stride in dimension 1 (-64), and GPU devices "
                        "need buffers laid out with non-negative strides.");
    }
}

// A comparison of floats is a flop, as min and max are: a max written as a select counts what
// max counts, on the simulator and statically; comparisons of integers count none.
TEST(ReportCounts, ComparisonsOfFloatsAreFlops) {
    const int W = 45, H = 7;
    Buffer<float> in({W, H}, "in");
    fill_random(in, -1.0, 1.0, 71);
    Var x("x"), bx("bx"), tx("tx");
    RDom r(0, H, "r");
    Func by_max("by_max"), by_select("by_select"), by_index("by_index");
    by_max(x) = in(x, 0);
    by_max(x) = max(by_max(x), in(x, r));
    by_select(x) = in(x, 0);
    by_select(x) = select(in(x, r) > by_select(x), in(x, r), by_select(x));
    by_index(x) = select(x > 3, in(x, 0), 0.0f);
    int64_t update_flops[2];
    int i = 0;
    for (Func f : {by_max, by_select}) {
        f.gpu_tile(x, bx, tx, 32, TailStrategy::GuardWithIf);
        f.update().gpu_tile(x, bx, tx, 32, TailStrategy::GuardWithIf);
        Buffer<float> got = realize_checking_report(f, {W}, gpu_target)[0];
        for (int j = 0; j < W; j++) {
            float want = in(j, 0);
            for (int k = 0; k < H; k++)
                want = std::max(want, in(j, k));
            EXPECT_EQ(got(j), want) << f.name() << " " << j;
        }
        DataflowReport report = f.report({W}, gpu_target, {}, false);
        ASSERT_EQ(report.kernels.size(), 2u);
        update_flops[i++] = report.kernels[1].flops;
    }
    EXPECT_EQ(update_flops[0], int64_t(W) * H);
    EXPECT_EQ(update_flops[1], update_flops[0]);
    by_index.gpu_tile(x, bx, tx, 32, TailStrategy::GuardWithIf);
    realize_checking_report(by_index, {W}, gpu_target);
    EXPECT_EQ(by_index.report({W}, gpu_target, {}, false).flops(), 0);
}

// uint64 Params take every value they hold, past INT64_MAX too, and no other: an extent of
// p % 1000 reduces over 0 points for p = 10^19 (2^63 mod 1000 would be 808).
TEST(ReportErrors, UInt64Params) {
    Param<uint64_t> p("p");
    Var x("x"), bx("bx"), tx("tx");
    RDom r(0, cast<int>(p % 1000), "r");
    Func f("f");
    f(x) = 0.0f;
    f(x) += cast<float>(r.x + x);
    f.gpu_tile(x, bx, tx, 32);
    f.update().gpu_tile(x, bx, tx, 32);
    ReportArguments args;
    args.scalars["p"] = 1e19;
    DataflowReport zero = f.report({64}, gpu_target, args, false);
    ASSERT_EQ(zero.kernels.size(), 2u);
    EXPECT_EQ(zero.kernels[1].flops, 0);
    args.scalars["p"] = 1e19 + 4096; // 10000000000000004096, 96 points
    EXPECT_EQ(f.report({64}, gpu_target, args, false).kernels[1].flops, 64 * 96);
    for (double bad : {2e19, 1e30, -1.0, double(INFINITY)}) {
        args.scalars["p"] = bad;
        EXPECT_CONTAINS(
            aicf_test::message_of<CompileError>([&] { f.report({64}, gpu_target, args, false); }),
            "for Param p, which holds uint64 values");
    }
}

// Counts past int64's range are refused, not wrapped into negative bytes: an output of 2^31 - 1
// floats, each a sum over 2^31 - 1 of them, asks for 2^64 bytes.
TEST(ReportErrors, CountsBeyondInt64) {
    ImageParam in(Float(32), 1, "in");
    Var x("x"), bx("bx"), tx("tx");
    RDom r(0, INT32_MAX, "r");
    Func f("f");
    f(x) = 0.0f;
    f(x) += in(r);
    f.gpu_tile(x, bx, tx, 128, TailStrategy::GuardWithIf);
    f.update().gpu_tile(x, bx, tx, 128, TailStrategy::GuardWithIf);
    ReportArguments args;
    args.buffers["in"] = {INT32_MAX};
    EXPECT_CONTAINS(aicf_test::message_of<CompileError>(
                        [&] { f.report({INT32_MAX}, gpu_target, args, false); }),
                    "asks for more than 2^63 - 1 bytes of a buffer");
    // At 2^20 outputs the same kernel asks for 2^20 x (2^31 - 1) x 4 bytes, which fit.
    DataflowReport fits = f.report({1 << 20}, gpu_target, args, false);
    int64_t read_of_in = -1;
    for (const BufferReport &b : fits.kernels[1].buffers)
        if (b.name == "in") read_of_in = b.requested_read;
    EXPECT_EQ(read_of_in, int64_t(1 << 20) * INT32_MAX * 4);
}

// The compulsory bytes are at most what the kernels move: a column of a 1000 x 1000 input
// spans nearly all of it, but only 1000 floats are read, and 1000 written.
TEST(ReportCounts, CompulsoryBytesOfAStridedRead) {
    ImageParam in(Float(32), 2, "in");
    Var y("y"), by("by"), ty("ty");
    Func col("col");
    col(y) = in(0, y) * 2.0f;
    col.gpu_tile(y, by, ty, 64, TailStrategy::GuardWithIf);
    ReportArguments args;
    args.buffers["in"] = {1000, 1000};
    DataflowReport r = col.report({1000}, gpu_target, args, false);
    EXPECT_EQ(r.compulsory_bytes, 8000);
    EXPECT_EQ(r.moved_bytes(), 8000);
}

} // namespace

// A float16 or bfloat16 Param counts with its value, as a float32 one does (its bits are not
// the value: 3.0 is 0x4200 in float16).
TEST(ReportCounts, HalfPrecisionParamsCountByTheirValue) {
    const int n = 32;
    auto report_with = [&](const Expr &p, const std::string &name) {
        Var i("i"), bi("bi"), ti("ti");
        RDom r(0, cast<int>(p), "r");
        Func g(name);
        g(i) = 0.0f;
        g(i) += cast<float>(r) * 0.5f + cast<float>(i);
        g.gpu_tile(i, bi, ti, 32, TailStrategy::GuardWithIf);
        g.update().gpu_tile(i, bi, ti, 32, TailStrategy::GuardWithIf);
        Buffer<float> out = realize_checking_report(g, {n}, gpu_target)[0];
        out.copy_to_host();
        for (int k = 0; k < n; k++)
            EXPECT_EQ(out(k), 3 * k + 1.5f) << name << " " << k;
        return g.report({n}, gpu_target, {}, false);
    };
    Param<float> f32("p32");
    f32.set(3.0f);
    Param<float16_t> f16("p16");
    f16.set(float16_t(3.0f));
    Param<bfloat16_t> bf16("pbf16");
    bf16.set(bfloat16_t(3.0f));
    const DataflowReport want = report_with(f32, "g32");
    // Three iterations of a multiply and two adds per point.
    EXPECT_EQ(want.flops(), int64_t(n) * 3 * 3);
    for (const auto &[p, name] :
         std::vector<std::pair<Expr, std::string>>{{f16, "g16"}, {bf16, "gbf16"}}) {
        const DataflowReport r = report_with(p, name);
        EXPECT_EQ(r.flops(), want.flops()) << name;
        EXPECT_EQ(r.moved_bytes(), want.moved_bytes()) << name;
    }
}

// The baseline of a Func of four dimensions is one kernel over all its points (a grid of
// 16 x 16 tiles over two of them would launch from a host loop over the others).
TEST(ReportBaseline, FuncsOfMoreThanTwoDimensionsAreOneKernel) {
    ImageParam weights(Float(32), 4, "weights");
    ImageParam scale(Float(32), 1, "scale");
    Var x("x"), y("y"), ci("ci"), co("co"), t("t"), bt("bt"), tt("tt");
    Func w("w");
    w(x, y, ci, co) = weights(x, y, ci, co) * scale(co);
    w.fuse(x, y, t).fuse(t, ci, t).fuse(t, co, t).gpu_tile(t, bt, tt, 256,
                                                           TailStrategy::GuardWithIf);
    ReportArguments args;
    args.buffers["weights"] = {3, 3, 512, 512};
    args.buffers["scale"] = {512};
    const DataflowReport r = w.report({3, 3, 512, 512}, gpu_target, args);
    ASSERT_TRUE(r.baseline);
    ASSERT_EQ(r.baseline->kernels.size(), 1u);
    const int64_t points = 3 * 3 * 512 * 512;
    EXPECT_EQ(r.baseline->kernels[0].grid, (std::array<int64_t, 3>{{points / 256, 1, 1}}));
    EXPECT_EQ(r.baseline->kernels[0].block, (std::array<int, 3>{{256, 1, 1}}));
    EXPECT_EQ(r.baseline->moved_bytes(), 2 * points * 4 + 512 * 4);
    EXPECT_EQ(r.moved_bytes(), r.baseline->moved_bytes());
}

// A tensor-core product over K = 40 (steps of 32): the baseline computes the zero-padded
// operands at the root, each a loop over its points split into blocks of 256, whose outer
// coordinate is the quotient by the inner extent. The report asked for B's rows from -511
// (bounds inference did not see that extent positive); it now counts the baseline, whose
// flops are the product's and whose bytes are those of five kernels.
TEST(ReportBaseline, PaddedOperandsOfATensorCoreProduct) {
    const int M = 16, N = 8, K = 40;
    Buffer<bfloat16_t> A({K, M}, "A"), B({N, K}, "B");
    fill_random(A, -1, 1, 51);
    fill_random(B, -1, 1, 52);
    aicf_apps::GemmSchedule tiles;
    tiles.warps = 1;
    tiles.n_tiles = 1;
    tiles.m_tiles = 1;
    Func C = aicf_apps::gemm_tensor_cores(A, B, K, "C", {}, {}, tiles);
    const DataflowReport r = C.report({N, M}, gpu_target);
    ASSERT_TRUE(r.baseline);
    EXPECT_EQ(r.baseline->kernels.size(), 5u) << r.baseline->to_text();
    // The padded reduction: 64 multiply-adds per point, in either.
    EXPECT_EQ(r.baseline->flops(), int64_t(2) * 64 * N * M);
    EXPECT_EQ(r.tensor_flops(), int64_t(2) * 64 * N * M);
    EXPECT_GT(r.baseline->moved_bytes(), r.moved_bytes());
}

// The baseline is the algorithm's: the intermediates rfactor makes are the schedule's, so a
// row sum reports the same baseline however it is scheduled.
TEST(ReportBaseline, TheSameForEveryScheduleOfAReduction) {
    const int width = 300, rows = 12;
    ImageParam in(Float(32), 2, "in");
    ReportArguments args;
    args.buffers["in"] = {width, rows};
    std::vector<DataflowReport> reports;
    for (bool factored : {false, true}) {
        Var y("y"), u("u"), by("by"), ty("ty");
        RDom r(0, width, "r");
        RVar ro("ro"), ri("ri");
        Func s("s"), out("out");
        s(y) = 0.0f;
        s(y) += in(r, y);
        out(y) = s(y) * 2.0f;
        if (factored) {
            out.gpu_blocks(y);
            s.compute_at(out, y);
            s.update().split(r.x, ro, ri, 64, TailStrategy::GuardWithIf).reorder(ri, ro);
            Func partial = s.update().rfactor(ri, u);
            partial.compute_at(out, y).gpu_threads(u);
            partial.update().gpu_threads(u);
        } else {
            out.gpu_tile(y, by, ty, 8, TailStrategy::GuardWithIf);
            s.compute_at(out, ty);
        }
        reports.push_back(out.report({rows}, gpu_target, args));
    }
    for (const DataflowReport &r : reports) {
        ASSERT_TRUE(r.baseline);
        // s's definition, its update, and out: three kernels, moving the input once and each
        // intermediate as one kernel writes it and the next reads it.
        EXPECT_EQ(r.baseline->kernels.size(), 3u);
        EXPECT_EQ(r.baseline->moved_bytes(), int64_t(4) * (width * rows + 5 * rows));
    }
    EXPECT_EQ(reports[0].baseline->to_text(), reports[1].baseline->to_text());
}

// A Func staged per tile with bound_extent: the baseline computes it at the root, over the
// whole tensor, so the tile's extent does not carry over (a bound() does). Its baseline is
// that of the same algorithm with no such directive.
TEST(ReportBaseline, TileExtentsAreTheSchedules) {
    const int W = 64, H = 100;
    ImageParam in(Float(32), 2, "in");
    ReportArguments args;
    args.buffers["in"] = {W, H};
    std::vector<DataflowReport> reports;
    for (bool staged : {false, true}) {
        Var x("x"), y("y"), by("by"), ty("ty");
        Func p("p"), out("out");
        p(x, y) = in(x, min(y, H - 1)) * 2.0f;
        out(x, y) = p(x, y) + 1.0f;
        out.bound(x, 0, W)
            .split(y, by, ty, 16, TailStrategy::GuardWithIf)
            .gpu_blocks(by)
            .gpu_threads(x, ty);
        if (staged) {
            p.compute_at(out, by)
                .store_in(MemoryType::GPUShared)
                .bound_extent(y, 16)
                .gpu_threads(x, y);
        }
        reports.push_back(out.report({W, H}, gpu_target, args));
    }
    ASSERT_TRUE(reports[1].baseline);
    EXPECT_EQ(reports[1].kernels.size(), 1u);
    EXPECT_EQ(reports[1].baseline->kernels.size(), 2u);
    EXPECT_EQ(reports[0].baseline->to_text(), reports[1].baseline->to_text());

    // A bound on a Func that only renames another, which the baseline inlines.
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    Func p("p"), q("q"), out("out");
    p(x, y) = in(x, y) * 2.0f;
    q(x, y) = p(x, y);
    out(x, y) = q(x, y) + 1.0f;
    out.gpu_tile(x, y, bx, by, tx, ty, 16, 16, TailStrategy::GuardWithIf);
    p.compute_root().gpu_tile(x, y, bx, by, tx, ty, 16, 16, TailStrategy::GuardWithIf);
    q.compute_root().bound(x, 0, W).gpu_tile(x, y, bx, by, tx, ty, 16, 16,
                                             TailStrategy::GuardWithIf);
    DataflowReport r = out.report({W, H}, gpu_target, args);
    ASSERT_TRUE(r.baseline);
    EXPECT_EQ(r.kernels.size(), 3u);
    EXPECT_EQ(r.baseline->kernels.size(), 2u);
}

// A condition on data is counted as true, without visiting each point, while a guard beside
// it (the threads past the last row) still decides where it is false. Where the data makes
// every condition true, the bound is the count: equal to the simulator's.
TEST(ReportCounts, DataConditionsAreTakenAsTrueBesideTheirGuards) {
    const int n = 500, rows = 37;
    Buffer<float> in({n, rows}, "in");
    fill_random(in, 0.5, 1.5, 12);
    Func pos = positive_row_sums(in, n, 16);
    backends::sim::ProfileRecorder recorder;
    Buffer<float> out = pos.realize({rows}, gpu_target);
    out.copy_to_host();
    for (int j = 0; j < rows; j++) {
        double want = 0;
        for (int i = 0; i < n; i++)
            want += in(i, j);
        ASSERT_NEAR(out(j), want, 1e-3) << j;
    }
    if (recorder.launches().empty()) GTEST_SKIP() << "a GPU ran it: no counters to compare";
    const DataflowReport report = pos.report({rows}, gpu_target, {}, false);
    ASSERT_EQ(report.kernels.size(), 2u);
    EXPECT_FALSE(report.kernels[1].exact);
    const backends::sim::KernelProfile &p = recorder.launches()[1];
    for (const BufferReport &b : report.kernels[1].buffers) {
        EXPECT_EQ(b.requested_read, p.find_buffer(b.name)->bytes_loaded) << b.name;
        EXPECT_EQ(b.requested_written, p.find_buffer(b.name)->bytes_stored) << b.name;
    }
    EXPECT_EQ(report.kernels[1].flops, p.flops);
    // At a size with two million points the count stays a count of ranges.
    ImageParam big(Float(32), 2, "big");
    Func all = positive_row_sums(big, 4096, 64);
    ReportArguments args;
    args.buffers["big"] = {4096, 512};
    const DataflowReport large = all.report({512}, gpu_target, args, false);
    EXPECT_FALSE(large.kernels[1].exact);
    EXPECT_EQ(large.kernels[1].flops, report.kernels[1].flops / (int64_t(n) * rows) * 4096 * 512);
}

// The picture draws a Func computed on the host as a box of its own, the source of what the
// kernels read of it, and a wrapper staged in shared memory as the on-chip step between the
// Func it wraps and its reader.
TEST(ReportOutput, PictureOfHostFuncsAndWrappers) {
    {
        ImageParam in(Float(32), 2, "in");
        Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
        Func h("h"), g("g");
        h(x, y) = in(x, y) * 0.5f;
        g(x, y) = h(x, y) + 1.0f;
        h.compute_root();
        g.gpu_tile(x, y, bx, by, tx, ty, 8, 8);
        ReportArguments args;
        args.buffers["in"] = {32, 16};
        const std::string dot = g.report({32, 16}, gpu_target, args, false).to_dot();
        EXPECT_CONTAINS(dot, "\"host:h\" [style=dashed, label=\"h\\n(on the host)\"];");
        EXPECT_CONTAINS(dot, "\"in:in\" -> \"host:h\" [style=dotted];");
        EXPECT_CONTAINS(dot, "\"host:h\" -> \"func:g@0\" [label=\"2.05 kB\", color=\"red\"];");
    }
    {
        ImageParam in(Float(32), 2, "in");
        Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty"), xo("xo"), xi("xi");
        Func src("src"), blur("blur");
        src(x, y) = in(x, y) * 2.0f;
        blur(x, y) = src(x, y) + src(x + 1, y) + src(x, y + 1);
        src.compute_root().gpu_tile(x, y, bx, by, tx, ty, 16, 16);
        blur.gpu_tile(x, y, bx, by, tx, ty, 32, 8);
        src.in()
            .compute_at(blur, bx)
            .store_in(MemoryType::GPUShared)
            .split(x, xo, xi, 2)
            .gpu_threads(xo, y);
        ReportArguments args;
        args.buffers["in"] = {65, 33};
        const std::string dot = blur.report({64, 32}, gpu_target, args, false).to_dot();
        EXPECT_CONTAINS(dot, "\"func:src_in@1\" -> \"func:blur@1\" [label=\"on chip\"");
        EXPECT_CONTAINS(dot, "\"func:src@0\" -> \"func:src_in@1\" [label=\"");
        EXPECT_EQ(dot.find("\"func:src@0\" -> \"func:blur@1\""), std::string::npos) << dot;
    }
}
