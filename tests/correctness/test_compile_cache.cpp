// The compiled-pipeline cache is keyed by the pipeline's structure: a change to any schedule
// directive compiles anew, and the same pipeline built again does not. Every result is also
// checked against a plain double-precision loop.

#include "GPUTarget.h"
#include "dsl/aicf.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using namespace aicf;

namespace {

constexpr int W = 19, H = 7, K = 13;

Buffer<float> make_input() {
    Buffer<float> in({K + W + 1, H}, "cache_in");
    for (int y = 0; y < H; y++)
        for (int x = 0; x < K + W + 1; x++)
            in(x, y) = float((x * 7 + y * 3) % 11) * 0.5f + 0.25f;
    return in;
}

// The Funcs of one pipeline: p feeds out at two points, s reduces a row of the input.
struct CachePipeline {
    Var x{"x"}, y{"y"};
    RDom r{0, K, "r"};
    Func p{"cache_p"}, s{"cache_s"}, out{"cache_out"};
    explicit CachePipeline(const Buffer<float> &in, float scale = 2.0f) {
        p(x, y) = in(x, y) * scale;
        s(y) = 0.0f;
        s(y) += in(r, y);
        out(x, y) = p(x, y) + p(x + 1, y) + s(y);
        p.compute_root();
        s.compute_root();
    }
};

void check_values(const Buffer<float> &in, const Buffer<float> &out, float scale,
                  const std::string &what) {
    for (int y = 0; y < H; y++) {
        double row = 0;
        for (int k = 0; k < K; k++)
            row += in(k, y);
        for (int x = 0; x < W; x++) {
            double want = double(in(x, y)) * scale + double(in(x + 1, y)) * scale + row;
            ASSERT_NEAR(out(x, y), want, 1e-4 * std::abs(want)) << what << " at " << x << ", " << y;
        }
    }
}

using Schedule = std::function<void(CachePipeline &)>;

struct Variant {
    std::string what;
    Schedule schedule;
};

// Builds the pipeline afresh with `schedule`, realizes it and returns how many pipelines
// were compiled meanwhile.
size_t compiles_of(const Buffer<float> &in, const Schedule &schedule, const Target &target,
                   const std::string &what, float scale = 2.0f) {
    size_t before = detail::compiled_pipeline_count();
    try {
        CachePipeline c(in, scale);
        schedule(c);
        Buffer<float> out = c.out.realize({W, H}, target);
        check_values(in, out, scale, what);
    } catch (const Error &e) {
        ADD_FAILURE() << what << ": " << e.what();
    }
    return detail::compiled_pipeline_count() - before;
}

void expect_each_variant_compiles_once(const std::vector<Variant> &variants, const Target &target) {
    Buffer<float> in = make_input();
    for (const Variant &v : variants) {
        SCOPED_TRACE(v.what);
        // Each variant differs from every one before it, so it compiles, once.
        EXPECT_EQ(compiles_of(in, v.schedule, target, v.what), 1u)
            << v.what << " did not compile anew";
        EXPECT_EQ(compiles_of(in, v.schedule, target, v.what), 0u)
            << v.what << " built again compiled again";
    }
}

TEST(CompileCache, EachHostDirectiveCompilesAnewAndAnIdenticalPipelineDoesNot) {
    Var xo("xo"), xi("xi"), yo("yo"), yi("yi"), xy("xy"), x2("x2"), u("u");
    RVar ro("ro"), ri("ri");
    const std::vector<Variant> variants = {
        {"the base schedule", [](CachePipeline &) {}},
        {"split", [&](CachePipeline &c) { c.out.split(c.x, xo, xi, 4); }},
        {"split by another factor", [&](CachePipeline &c) { c.out.split(c.x, xo, xi, 8); }},
        {"split with another tail",
         [&](CachePipeline &c) { c.out.split(c.x, xo, xi, 4, TailStrategy::GuardWithIf); }},
        {"fuse", [&](CachePipeline &c) { c.out.fuse(c.x, c.y, xy); }},
        {"reorder", [&](CachePipeline &c) { c.out.reorder(c.y, c.x); }},
        {"rename", [&](CachePipeline &c) { c.out.rename(c.x, x2); }},
        {"tile", [&](CachePipeline &c) { c.out.tile(c.x, c.y, xo, yo, xi, yi, 4, 2); }},
        {"parallel", [&](CachePipeline &c) { c.out.parallel(c.y); }},
        {"vectorize", [&](CachePipeline &c) { c.out.vectorize(c.x, 4); }},
        {"unroll", [&](CachePipeline &c) { c.out.unroll(c.x, 2); }},
        {"never_partition",
         [&](CachePipeline &c) {
             c.out.split(c.x, xo, xi, 4, TailStrategy::GuardWithIf).never_partition(xi);
         }},
        {"never_partition_all",
         [&](CachePipeline &c) {
             c.out.split(c.x, xo, xi, 4, TailStrategy::GuardWithIf).never_partition_all();
         }},
        {"compute_at", [&](CachePipeline &c) { c.p.compute_at(c.out, c.y); }},
        {"store_root and compute_at",
         [&](CachePipeline &c) { c.p.store_root().compute_at(c.out, c.y); }},
        {"compute_inline", [&](CachePipeline &c) { c.p.compute_inline(); }},
        {"store_in", [&](CachePipeline &c) { c.p.store_in(ir::MemoryType::Heap); }},
        {"reorder_storage", [&](CachePipeline &c) { c.p.reorder_storage(c.y, c.x); }},
        {"align_storage", [&](CachePipeline &c) { c.p.align_storage(c.x, 8); }},
        {"bound", [&](CachePipeline &c) { c.p.bound(c.x, 0, W + 1); }},
        {"align_bounds", [&](CachePipeline &c) { c.p.align_bounds(c.x, 4); }},
        {"prefetch", [&](CachePipeline &c) { c.out.prefetch(c.p, c.y, c.y, 1); }},
        {"prefetch further ahead", [&](CachePipeline &c) { c.out.prefetch(c.p, c.y, c.y, 2); }},
        {"prefetch with a clamp",
         [&](CachePipeline &c) { c.out.prefetch(c.p, c.y, c.y, 1, PrefetchBoundStrategy::Clamp); }},
        {"a wrapper", [&](CachePipeline &c) { c.p.in(c.out).compute_root(); }},
        {"an update's split", [&](CachePipeline &c) { c.s.update().split(c.r.x, ro, ri, 4); }},
        {"an update's unroll", [&](CachePipeline &c) { c.s.update().unroll(c.r.x); }},
        {"rfactor",
         [&](CachePipeline &c) {
             c.s.update().split(c.r.x, ro, ri, 4).rfactor(ri, u).compute_root();
         }},
    };
    expect_each_variant_compiles_once(variants, Target("host"));

    Buffer<float> in = make_input();
    // A LoopLevel set after the directive names the same loop as compute_at did: the same
    // pipeline, already compiled.
    LoopLevel later;
    EXPECT_EQ(compiles_of(
                  in,
                  [&](CachePipeline &c) {
                      c.p.compute_at(later);
                      later.set(LoopLevel(c.out.name(), c.y.name()));
                  },
                  Target("host"), "compute_at a LoopLevel set later"),
              0u);
    // Another target, and another algorithm, compile anew.
    EXPECT_EQ(compiles_of(
                  in, [](CachePipeline &) {}, Target("host-fma"), "host-fma"),
              1u);
    EXPECT_EQ(compiles_of(
                  in, [](CachePipeline &) {}, Target("host"), "another constant", 3.0f),
              1u);
}

TEST(CompileCache, EachGPUDirectiveCompilesAnewAndAnIdenticalPipelineDoesNot) {
    Var bx("bx"), by("by"), tx("tx"), ty("ty"), xo("xo"), xi("xi");
    // s runs on one GPU thread; p, unless the variant places it, in a kernel of its own.
    auto s_on_gpu = [](CachePipeline &c) {
        c.s.gpu_single_thread();
        c.s.update().gpu_single_thread();
    };
    auto p_in_its_own_kernel = [&](CachePipeline &c) {
        c.p.gpu_tile(c.x, c.y, bx, by, tx, ty, 8, 4);
    };
    auto both = [&](std::function<void(CachePipeline &)> out_schedule) {
        return [=](CachePipeline &c) {
            s_on_gpu(c);
            p_in_its_own_kernel(c);
            out_schedule(c);
        };
    };
    const std::vector<Variant> variants = {
        {"gpu_tile",
         both([=](CachePipeline &c) { c.out.gpu_tile(c.x, c.y, bx, by, tx, ty, 8, 4); })},
        {"gpu_tile of another size",
         both([=](CachePipeline &c) { c.out.gpu_tile(c.x, c.y, bx, by, tx, ty, 4, 4); })},
        {"gpu_blocks and gpu_threads", both([=](CachePipeline &c) {
             c.out.split(c.x, xo, xi, 8).gpu_blocks(xo, c.y).gpu_threads(xi);
         })},
        {"gpu_single_thread", both([](CachePipeline &c) { c.out.gpu_single_thread(); })},
        {"a stage in shared memory",
         [=](CachePipeline &c) {
             s_on_gpu(c);
             c.out.gpu_tile(c.x, c.y, bx, by, tx, ty, 8, 4);
             c.p.compute_at(c.out, bx).gpu_threads(c.x, c.y);
         }},
        {"a stage in registers",
         [=](CachePipeline &c) {
             s_on_gpu(c);
             c.out.gpu_tile(c.x, c.y, bx, by, tx, ty, 8, 4);
             c.p.compute_at(c.out, tx);
         }},
    };
    expect_each_variant_compiles_once(variants, aicf_test::gpu_test_target());
}

} // namespace

// Realizing the same Func again finds its compiled code without fingerprinting it, so every
// way of changing an algorithm or a schedule after a realize must still reach the next one.
TEST(CompileCache, AChangeAfterARealizeReachesTheNextRealize) {
    // A scale no other test uses: every variant below is new to the compiled-code cache.
    const float scale = 3.0f;
    Buffer<float> in = make_input();
    CachePipeline c(in, scale);
    check_values(in, c.out.realize({W, H}), scale, "first");
    size_t before = detail::compiled_pipeline_count();
    for (int i = 0; i < 3; i++)
        check_values(in, c.out.realize({W, H}), scale, "again");
    EXPECT_EQ(detail::compiled_pipeline_count(), before) << "realizing again compiled again";

    auto expect_recompiled = [&](const std::string &what) {
        size_t n = detail::compiled_pipeline_count();
        check_values(in, c.out.realize({W, H}), scale, what);
        EXPECT_EQ(detail::compiled_pipeline_count(), n + 1) << what << " was not seen";
    };
    c.p.compute_at(c.out, c.y);
    expect_recompiled("compute_at after a realize");
    c.out.vectorize(c.x, 4);
    expect_recompiled("vectorize after a realize");
    // At the root already: the same pipeline, no new code.
    LoopLevel where = LoopLevel::root();
    c.s.compute_at(where);
    size_t same = detail::compiled_pipeline_count();
    check_values(in, c.out.realize({W, H}), scale, "compute_at the root LoopLevel");
    EXPECT_EQ(detail::compiled_pipeline_count(), same);
    where.set(LoopLevel(c.out.name(), c.y.name()));
    expect_recompiled("setting that LoopLevel to a loop");
    Func copy = c.out; // a copy of the handle sees the same change
    c.p.compute_root();
    size_t n = detail::compiled_pipeline_count();
    check_values(in, copy.realize({W, H}), scale, "through a copy");
    EXPECT_EQ(detail::compiled_pipeline_count(), n + 1);

    // A new update definition changes the values (with s at the root: out is then computed
    // there too).
    where.set(LoopLevel::root());
    c.out(c.x, c.y) += 1.0f;
    Buffer<float> plus_one = c.out.realize({W, H});
    Buffer<float> shifted({W, H});
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            shifted(x, y) = plus_one(x, y) - 1.0f;
    check_values(in, shifted, scale, "an update added after a realize");
}

// A bound() given again for the same Var replaces the first (it used to add a second one,
// and the two together refused every size), and so does align_bounds().
TEST(CompileCache, ABoundGivenAgainReplacesTheFirst) {
    Buffer<float> in = make_input();
    Var x("x"), y("y");
    Func g("rebound_g"), out("rebound_out");
    g(x, y) = in(x, y) * 2.0f + 1.0f;
    out(x, y) = g(x, y) - in(x + 1, y);
    g.compute_root().bound(x, 0, 12);
    auto check = [&](int width) {
        Buffer<float> o = out.realize({width, H});
        for (int j = 0; j < H; j++)
            for (int i = 0; i < width; i++)
                ASSERT_EQ(o(i, j), in(i, j) * 2.0f + 1.0f - in(i + 1, j)) << i << ", " << j;
    };
    check(12);
    g.bound(x, 0, W);
    check(W);
    // Rows aligned to 4 would read an eighth row of the input, which has 7 (H): aligned to 7
    // instead, they read none.
    g.align_bounds(y, 4).align_bounds(y, H);
    check(W);
    EXPECT_EQ(g.function().schedule().region_constraints.size(), 2u);
}

// Constants that differ only in a NaN's payload (values tagged by NaN-boxing) are different
// pipelines: the second used to find the first one's code and return its bits.
TEST(CompileCache, NaNsThatDifferInTheirPayloadAreDifferentConstants) {
    Buffer<float> in({8}, "nan_tag_in");
    for (int i = 0; i < 8; i++)
        in(i) = float(i) - 3.5f;
    for (uint32_t tag : {0x7fc0beefu, 0x7fc0cafeu, 0xffc00001u}) {
        float t;
        std::memcpy(&t, &tag, sizeof t);
        Var x("x");
        Func f("nan_tag");
        f(x) = select(in(x) < 0.0f, Expr(t), in(x));
        Buffer<float> o = f.realize({8});
        for (int i = 0; i < 8; i++) {
            uint32_t bits;
            const float v = o(i);
            std::memcpy(&bits, &v, sizeof bits);
            if (in(i) < 0.0f)
                EXPECT_EQ(bits, tag) << i;
            else
                EXPECT_EQ(v, in(i)) << i;
        }
    }
}

// An inline reduction given a name is called exactly that, so a pipeline rebuilt the same way
// finds its compiled code; unnamed ones get new names (and compile anew).
TEST(CompileCache, NamedInlineReductionsFindTheirCode) {
    Buffer<float> in({64, 8}, "inline_named_in");
    for (int y = 0; y < 8; y++)
        for (int x = 0; x < 64; x++)
            in(x, y) = float((x * 5 + y * 3) % 17) * 0.25f - 1.0f;
    auto build = [&](bool named) {
        Var y("y");
        RDom r(0, 64, "r");
        Func g("inline_named_g");
        g(y) = named ? sum(in(r, y), "inline_row_sum") * maximum(in(r, y), "inline_row_max")
                     : sum(in(r, y)) * maximum(in(r, y));
        Buffer<float> o = g.realize({8});
        for (int j = 0; j < 8; j++) {
            double s = 0, m = -1e30;
            for (int i = 0; i < 64; i++)
                s += in(i, j), m = std::max(m, double(in(i, j)));
            EXPECT_EQ(double(o(j)), s * m) << j; // quarters of small integers: exact
        }
    };
    build(true);
    size_t before = detail::compiled_pipeline_count();
    for (int i = 0; i < 3; i++)
        build(true);
    EXPECT_EQ(detail::compiled_pipeline_count(), before);
    build(false);
    build(false);
    EXPECT_EQ(detail::compiled_pipeline_count(), before + 2);
}

// Code compiled in this process takes a concrete Buffer's strides as constants (as Halide's
// JIT does), so the same pipeline over a Buffer of another shape is other code; and a stride
// changed behind the library's back, through the raw descriptor, is a RuntimeError naming the
// buffer and dimension, never reads at the wrong addresses.
TEST(CompileCache, ConcreteBufferStridesAreConstantsOfTheirOwnCode) {
    const float scale = 5.0f; // new to the compiled-code cache
    Buffer<float> in = make_input();
    CachePipeline c(in, scale);
    const std::string stmt = c.out.lowered_stmt();
    EXPECT_EQ(stmt.find("cache_in.stride.1"), std::string::npos) << stmt;
    check_values(in, c.out.realize({W, H}), scale, "the input's own stride");

    Buffer<float> wide({K + W + 9, H}, "cache_in");
    for (int y = 0; y < H; y++)
        for (int x = 0; x < K + W + 9; x++)
            wide(x, y) = float((x * 5 + y * 7) % 13) * 0.25f - 1.0f;
    const size_t before = detail::compiled_pipeline_count();
    CachePipeline other(wide, scale);
    check_values(wide, other.out.realize({W, H}), scale, "a wider input of the same name");
    EXPECT_EQ(detail::compiled_pipeline_count(), before + 1);
    check_values(in, c.out.realize({W, H}), scale, "the first input again");

    aicf_dim_t &row = in.raw_buffer()->dim[1];
    row.stride -= 1;
    std::string message;
    try {
        c.out.realize({W, H});
    } catch (const RuntimeError &e) {
        message = e.what();
    }
    row.stride += 1;
    EXPECT_NE(message.find("Buffer cache_in has stride " + std::to_string(K + W)),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("dimension 1"), std::string::npos) << message;
    EXPECT_NE(message.find(std::to_string(K + W + 1)), std::string::npos) << message;
    check_values(in, c.out.realize({W, H}), scale, "the stride restored");
}
