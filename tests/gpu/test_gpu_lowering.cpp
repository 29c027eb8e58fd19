// The kernels lowering produces: where barriers go, how shared memory is packed, the launch
// shape. Checked on the kernel IR itself.

#include "GPUTarget.h"
#include "MatmulGPU.h"
#include "Reference.h"
#include "ScopedEnv.h"
#include "dsl/aicf.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "dsl/ir/IRVisitor.h"
#include "lowering/Lower.h"

#include <gtest/gtest.h>

using namespace aicf;
using namespace aicf::ir;

namespace {

const Target gpu_target = aicf_test::gpu_test_target();

lowering::LoweredPipeline lower_gpu(const Func &out) {
    std::vector<Function> outputs = {out.function()};
    return lowering::lower(outputs, detail::infer_arguments(outputs), gpu_target);
}

// The producers and barriers of a kernel body in program order, as a string such as
// "f g | " (| is a barrier; a barrier at the start of a producer comes after its name).
std::string barrier_pattern(const lowering::LoweredKernel &k) {
    std::map<int64_t, std::string> func_at; // shared offset -> Func
    for (const lowering::SharedAllocation &a : k.shared)
        func_at[a.offset] = a.func;
    std::string pattern;
    struct Walker : IRVisitor {
        std::string &out;
        const lowering::LoweredKernel &k;
        Walker(std::string &o, const lowering::LoweredKernel &k) : out(o), k(k) {}
        using IRVisitor::visit;
        void visit(const Call *op) override {
            if (op->is_intrinsic(Intrinsic::gpu_barrier)) out += "| ";
            IRVisitor::visit(op);
        }
        void visit(const ProducerConsumer *op) override {
            if (op->is_producer) out += op->name + " ";
            IRVisitor::visit(op);
        }
    } walker(pattern, k);
    k.body.accept(&walker);
    return pattern;
}

// Where each shared Func lives in a kernel, by Func.
std::map<std::string, lowering::SharedAllocation> shared_by_func(const lowering::LoweredKernel &k) {
    std::map<std::string, lowering::SharedAllocation> by_func;
    for (const lowering::SharedAllocation &a : k.shared)
        by_func[a.func] = a;
    return by_func;
}

TEST(GPULowering, BarrierOnlyBetweenSharedProducerAndConsumer) {
    Buffer<float> in({64}, "in");
    Var x("x"), bx("bx"), tx("tx");
    Func f("f"), g("g"), out("out");
    f(x) = in(x)*2.0f;
    g(x) = in(x) + 1.0f;
    out(x) = f(x) + g(x) * g(x + 1);
    out.gpu_tile(x, bx, tx, 32);
    f.compute_at(out, bx).gpu_threads(x);
    g.compute_at(out, bx).gpu_threads(x);
    lowering::LoweredPipeline p = lower_gpu(out);
    ASSERT_EQ(p.kernels.size(), 1u);
    // f and g only read the input: no barrier between them; out reads both: one barrier
    // before it; nothing after the last stage.
    std::string pattern = barrier_pattern(p.kernels[0]);
    EXPECT_TRUE(pattern == "g f | " || pattern == "f g | ") << pattern;
    EXPECT_EQ(p.kernels[0].threads[0], 33); // g's tile has a halo of one
}

// A tile staged in rounds (a serial loop around the threads) whose rounds write disjoint
// elements, in a loop over rows that reuses it: the barrier that orders its writes after the
// previous row's reads runs once, before the rounds, not at every round. Checked for races
// and against a plain loop on the simulator.
TEST(GPULowering, BarrierBeforeRoundsThatDoNotConflict) {
    const int W = 256, H = 6;
    Buffer<float> in({W + 1, H}, "in");
    for (int y = 0; y < H; y++)
        for (int x = 0; x <= W; x++)
            in(x, y) = float((x * 7 + y * 13) % 29) - 3.5f;
    Var x("x"), y("y"), tx("tx"), xo("xo"), rounds("rounds"), t("t");
    Func tile("tile"), out("out");
    tile(x, y) = in(x, y) * 2.0f;
    out(x, y) = tile(x, y) + tile(x + 1, y);
    out.split(x, xo, tx, 64).reorder(tx, y, xo).gpu_blocks(xo).gpu_threads(tx);
    // Each block's 65 points of a row, in two rounds of 64 threads.
    tile.compute_at(out, y).split(x, rounds, t, 64, TailStrategy::GuardWithIf).gpu_threads(t);
    lowering::LoweredPipeline p = lower_gpu(out);
    ASSERT_EQ(p.kernels.size(), 1u);
    int in_rounds = 0, total = 0;
    struct Count : IRVisitor {
        int &in_rounds, &total;
        int depth = 0;
        Count(int &a, int &b) : in_rounds(a), total(b) {}
        using IRVisitor::visit;
        void visit(const For *op) override {
            const bool r = op->name.find("rounds") != std::string::npos;
            depth += r;
            IRVisitor::visit(op);
            depth -= r;
        }
        void visit(const Call *op) override {
            if (op->is_intrinsic(Intrinsic::gpu_barrier)) {
                total++;
                in_rounds += depth > 0;
            }
            IRVisitor::visit(op);
        }
    } count(in_rounds, total);
    p.kernels[0].body.accept(&count);
    EXPECT_EQ(in_rounds, 0) << lowering::describe_kernel(p.kernels[0]);
    EXPECT_EQ(total, 2) << lowering::describe_kernel(p.kernels[0]); // WAR before, RAW after
    aicf_test::ScopedEnv sim("AICF_DEVICE", "sim");
    Buffer<float> result = out.realize({W, H}, gpu_target)[0];
    result.copy_to_host();
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++)
            ASSERT_EQ(result(i, j), in(i, j) * 2.0f + in(i + 1, j) * 2.0f) << i << ", " << j;
}

// The same with rounds of 32 threads in a block of 64 (the consumer's): thread t of round r
// writes element t + 32 r, one-to-one over the 32 threads that run the rounds (the others
// skip them), though not over the block's 64, so no barrier stands between rounds: one, before
// the consumer reads the tile.
TEST(GPULowering, RoundsOnFewerThreadsThanTheBlockNeedNoBarrierBetweenThem) {
    const int N = 1000;
    Buffer<float> in({N + 64}, "in");
    aicf_test::fill_random(in, -1.0, 1.0, 31);
    Var x("x"), bx("bx"), tx("tx"), xo("xo"), xi("xi");
    Func tile("tile"), out("out");
    tile(x) = in(x)*3.0f;
    out(x) = tile(x) + tile(x + 63);
    out.gpu_tile(x, bx, tx, 64, TailStrategy::GuardWithIf);
    // 127 points in rounds of 32.
    tile.compute_at(out, bx).split(x, xo, xi, 32, TailStrategy::GuardWithIf).gpu_threads(xi);
    lowering::LoweredPipeline p = lower_gpu(out);
    ASSERT_EQ(p.kernels.size(), 1u);
    EXPECT_EQ(barrier_pattern(p.kernels[0]), "tile | ") << lowering::describe_kernel(p.kernels[0]);
    aicf_test::ScopedEnv sim("AICF_DEVICE", "sim");
    Buffer<float> result = out.realize({N}, gpu_target)[0];
    result.copy_to_host();
    for (int i = 0; i < N; i++)
        ASSERT_EQ(result(i), in(i)*3.0f + in(i + 63) * 3.0f) << i;
}

TEST(GPULowering, NoBarrierWithoutSharedData) {
    Buffer<float> in({64}, "in");
    Var x("x"), bx("bx"), tx("tx");
    Func f("f"), out("out");
    f(x) = in(x)*2.0f;
    out(x) = f(x) + 1.0f;
    out.gpu_tile(x, bx, tx, 32);
    f.compute_at(out, tx); // in each thread's registers
    lowering::LoweredPipeline p = lower_gpu(out);
    ASSERT_EQ(p.kernels.size(), 1u);
    EXPECT_EQ(barrier_pattern(p.kernels[0]).find('|'), std::string::npos);
    EXPECT_EQ(p.kernels[0].shared_bytes, 0);
}

TEST(GPULowering, BarrierAtTheTopOfAReductionLoopThatRefillsSharedTiles) {
    Buffer<float> A({64, 64}, "A");
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    VarOrRVar ko("ko", true), ki("ki", true);
    Func a("a"), b("b"), prod("prod"), out("out");
    RDom k(0, 64, "k");
    a(x, y) = A(x, y);
    b(x, y) = A(y, x);
    prod(x, y) = 0.0f;
    prod(x, y) += a(k, y) * b(x, k);
    out(x, y) = prod(x, y);
    out.gpu_tile(x, y, bx, by, tx, ty, 16, 16);
    prod.compute_at(out, bx).gpu_threads(x, y);
    prod.update().split(k, ko, ki, 16).reorder(ki, x, y, ko).gpu_threads(x, y);
    a.compute_at(prod, ko).gpu_threads(x, y);
    b.compute_at(prod, ko).gpu_threads(x, y);
    lowering::LoweredPipeline p = lower_gpu(out);
    ASSERT_EQ(p.kernels.size(), 1u);
    // prod's init; per step: a barrier (the previous step still reads the tiles), a's and
    // b's tiles with no barrier between them, a barrier, the update. After the loop, out
    // needs no barrier: each thread reads the element of prod it accumulated itself.
    std::string text = to_string(p.kernels[0].body);
    size_t loop = text.find("for (prod.s1.ko");
    ASSERT_NE(loop, std::string::npos) << text;
    size_t first_barrier = text.find("gpu_barrier", loop);
    size_t a_store = text.find("produce a", loop);
    EXPECT_LT(a_store, first_barrier) << text; // the barrier is inside a's producer, first
    EXPECT_EQ(barrier_pattern(p.kernels[0]), "prod a | b | ") << text;
}

TEST(GPULowering, SharedMemoryIsReusedByLifetime) {
    Buffer<float> in({256}, "in");
    Var x("x"), bx("bx"), tx("tx");
    Func f1("f1"), f2("f2"), f3("f3"), out("out");
    f1(x) = in(x)*2.0f;
    f2(x) = f1(x) + f1(x + 1);
    f3(x) = f2(x) * f2(x + 1);
    out(x) = f3(x) - 1.0f;
    out.gpu_tile(x, bx, tx, 64);
    f3.compute_at(out, bx).gpu_threads(x);
    f2.compute_at(out, bx).gpu_threads(x);
    f1.compute_at(out, bx).gpu_threads(x);
    lowering::LoweredPipeline p = lower_gpu(out);
    ASSERT_EQ(p.kernels.size(), 1u);
    const lowering::LoweredKernel &k = p.kernels[0];
    std::map<std::string, lowering::SharedAllocation> by_func = shared_by_func(k);
    ASSERT_EQ(by_func.size(), 3u);
    // f1 (66 floats) is dead once f2 (65) is computed, so f3 (64) takes its place.
    EXPECT_EQ(by_func["f1"].bytes, 66 * 4);
    EXPECT_EQ(by_func["f3"].offset, by_func["f1"].offset);
    EXPECT_NE(by_func["f2"].offset, by_func["f1"].offset);
    EXPECT_LT(k.shared_bytes, by_func["f1"].bytes + by_func["f2"].bytes + by_func["f3"].bytes);
    // f2 and f3 read their neighbours' elements, so barriers precede them; out reads the
    // element of f3 its own thread computed, so none precedes it.
    EXPECT_EQ(barrier_pattern(k), "f1 f2 | f3 | ");
}

TEST(GPULowering, SharedMemoryIsReusedOnlyAcrossABarrier) {
    // f1 is dead once f2 is computed, but no barrier follows: f2 reads, in each thread, the
    // element of f1 its own thread wrote, and f3 reads only the input. So f3 may not take
    // f1's bytes (a slow thread could still be reading f1 while a fast one writes f3), and
    // no barrier is added to make it so.
    const int n = 100;
    Buffer<float> in({n}, "in");
    for (int i = 0; i < n; i++)
        in(i) = float(i % 17) * 0.25f + 1.0f;
    Var x("x"), bx("bx"), tx("tx");
    Func f1("f1"), f2("f2"), f3("f3"), out("out");
    f1(x) = in(x)*2.0f;
    f2(x) = f1(x) + 1.0f;
    f3(x) = in(x)*3.0f;
    out(x) = f2(x) * f3(x);
    out.gpu_tile(x, bx, tx, 32);
    f1.compute_at(out, bx).gpu_threads(x);
    f2.compute_at(out, bx).gpu_threads(x);
    f3.compute_at(out, bx).gpu_threads(x);
    lowering::LoweredPipeline p = lower_gpu(out);
    ASSERT_EQ(p.kernels.size(), 1u);
    const lowering::LoweredKernel &k = p.kernels[0];
    EXPECT_EQ(barrier_pattern(k), "f1 f2 f3 ");
    std::map<std::string, lowering::SharedAllocation> by_func = shared_by_func(k);
    ASSERT_EQ(by_func.size(), 3u);
    for (const char *a : {"f1", "f2", "f3"}) {
        for (const char *b : {"f1", "f2", "f3"}) {
            if (std::string(a) >= b) continue;
            const lowering::SharedAllocation &u = by_func[a], &v = by_func[b];
            EXPECT_TRUE(u.offset + u.bytes <= v.offset || v.offset + v.bytes <= u.offset)
                << a << " and " << b << " share bytes\n"
                << lowering::describe_kernel(k);
        }
    }
    // The simulator checks every shared access for races; the values against plain floats.
    Buffer<float> result = out.realize({n}, gpu_target);
    for (int i = 0; i < n; i++) {
        float expected = (in(i)*2.0f + 1.0f) * (in(i)*3.0f);
        EXPECT_EQ(result(i), expected) << "at " << i;
    }
}

// A reduction on a warp's lanes takes x; the rows' thread loop moves to y, in the loop nest
// as in the kernel.
TEST(GPULowering, LanesTakeXInTheLoopNest) {
    Buffer<float> in({17, 8}, "in");
    Var y("y"), yo("yo"), yi("yi");
    RDom r(0, 17, "r");
    RVar ro("ro"), lane("lane");
    Func sum("sum"), out("out");
    sum(y) = 0.0f;
    sum(y) += in(r.x, y);
    out(y) = sum(y);
    out.split(y, yo, yi, 4).gpu_blocks(yo).gpu_threads(yi);
    sum.compute_at(out, yi);
    sum.update().split(r.x, ro, lane, 17).reorder(ro, lane).gpu_lanes(lane);
    const std::string nest = out.loop_nest(gpu_target);
    EXPECT_NE(nest.find("gpu_thread.y for out.s0.yi"), std::string::npos) << nest;
    EXPECT_NE(nest.find("gpu_thread.x for sum.s1.lane"), std::string::npos) << nest;
}

TEST(GPULowering, LoopsStateTheirHardwareDimension) {
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    Func f("f");
    f(x, y) = x * 3 + y;
    f.gpu_tile(x, y, bx, by, tx, ty, 16, 4);
    std::string nest = f.loop_nest(gpu_target);
    // Within a stage, the innermost block (thread) loop runs along x, the next along y.
    EXPECT_NE(nest.find("gpu_block.y for f.s0.by"), std::string::npos) << nest;
    EXPECT_NE(nest.find("gpu_block.x for f.s0.bx"), std::string::npos) << nest;
    EXPECT_NE(nest.find("gpu_thread.y for f.s0.ty"), std::string::npos) << nest;
    EXPECT_NE(nest.find("gpu_thread.x for f.s0.tx"), std::string::npos) << nest;
    // With ty innermost, ty is the block's x: threads next in x are next in memory no more.
    f.reorder(ty, tx);
    nest = f.loop_nest(gpu_target);
    EXPECT_NE(nest.find("gpu_thread.y for f.s0.tx"), std::string::npos) << nest;
    EXPECT_NE(nest.find("gpu_thread.x for f.s0.ty"), std::string::npos) << nest;
    lowering::LoweredPipeline p = lower_gpu(f);
    ASSERT_EQ(p.kernels.size(), 1u);
    EXPECT_EQ(p.kernels[0].threads[0], 4);
    EXPECT_EQ(p.kernels[0].threads[1], 16);
    EXPECT_EQ(p.kernels[0].thread_loops[0], "f.s0.ty");
    Buffer<int> out = f.realize({37, 10}, gpu_target);
    for (int yy = 0; yy < 10; yy++)
        for (int xx = 0; xx < 37; xx++)
            EXPECT_EQ(out(xx, yy), xx * 3 + yy);
}

TEST(GPULowering, DebugLevelTwoPrintsEachKernelAfterEachGPUPass) {
    Buffer<float> in({64}, "in");
    Var x("x"), bx("bx"), tx("tx");
    Func f("f"), out("out");
    f(x) = in(x)*2.0f;
    out(x) = f(x) + f(x + 1);
    out.gpu_tile(x, bx, tx, 32);
    f.compute_at(out, bx).gpu_threads(x);
    std::string log;
    {
        aicf_test::ScopedEnv debug("AICF_DEBUG", "2");
        ::testing::internal::CaptureStderr();
        lower_gpu(out);
        log = ::testing::internal::GetCapturedStderr();
    }
    size_t at = 0;
    for (const char *pass :
         {"extract_kernels", "map_gpu_loops", "inject_gpu_barriers", "pack_shared_memory",
          "fuse_gpu_thread_loops", "size_register_allocations", "simplify", "kernel_closure",
          "common_subexpression_elimination"}) {
        std::string header =
            std::string("---- after ") + pass + ": out_k0_out ----\nkernel out_k0_out";
        size_t found = log.find(header, at);
        EXPECT_NE(found, std::string::npos) << "no dump after " << pass << " (in order)";
        if (found != std::string::npos) at = found + header.size();
    }
    // The kernel as each pass leaves it: thread loops until they are fused, then lets.
    size_t fused = log.find("---- after fuse_gpu_thread_loops");
    ASSERT_NE(fused, std::string::npos);
    EXPECT_NE(log.rfind("gpu_thread.x for (out.s0.tx", fused), std::string::npos);
    EXPECT_EQ(log.find("gpu_thread.x for", fused), std::string::npos);
    EXPECT_NE(log.find("---- after launch_kernels ----"), std::string::npos);
}

TEST(GPULowering, LaunchShapeAndArguments) {
    Buffer<float> in({100, 50}, "in");
    Param<float> scale("scale");
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    Func f("f");
    f(x, y) = in(x, y) * scale;
    f.gpu_tile(x, y, bx, by, tx, ty, 32, 8);
    lowering::LoweredPipeline p = lower_gpu(f);
    ASSERT_EQ(p.kernels.size(), 1u);
    const lowering::LoweredKernel &k = p.kernels[0];
    EXPECT_EQ(k.threads[0], 32);
    EXPECT_EQ(k.threads[1], 8);
    EXPECT_EQ(k.threads[2], 1);
    EXPECT_EQ(k.block_loops[0], "f.s0.bx");
    EXPECT_EQ(k.block_loops[1], "f.s0.by");
    bool reads_in = false, writes_f = false, has_scale = false;
    for (const auto &a : k.args) {
        reads_in |= a.is_buffer && a.name == "in" && a.read && !a.written;
        writes_f |= a.is_buffer && a.name == "f" && a.written;
        has_scale |= !a.is_buffer && a.name == "scale" && a.type == Float(32);
    }
    EXPECT_TRUE(reads_in && writes_f && has_scale) << lowering::describe_kernel(k);
    // The host code launches it once, with the grid from the loop extents (the tile counts,
    // computed without passing 2^31 - 1 for extents near it).
    std::string host = to_string(p.body);
    EXPECT_NE(
        host.find("gpu_launch(0, (((f.extent.0 - 1) / 32) + 1), (((f.extent.1 - 1) / 8) + 1), 1"),
        std::string::npos)
        << host;
}

// Shared memory starts on a 16-byte boundary and its layout is fixed when the kernel is
// lowered, so the matmul's float4 accesses to its staged tiles are aligned by proof: each
// carries its alignment, with no check where it runs, in both versions of the kernel (its
// global float4 accesses, at tiles shifted inwards to min(extent - 128, 128 bx), are aligned
// when the extents and strides are multiples of 4: the first version's launch condition; the
// second version is the fallback).
TEST(GPULowering, SharedVectorAccessesAreAlignedByProof) {
    const int n = 256;
    Buffer<float> A({n, n}, "A"), B({n, n}, "B");
    lowering::LoweredPipeline p = lower_gpu(aicf_apps::matmul_register_tiled(A, B, n, "matmul"));
    ASSERT_EQ(p.kernels.size(), 2u);
    EXPECT_TRUE(p.kernels[0].launch_condition.defined());
    for (const lowering::LoweredKernel &k : p.kernels) {
        int wide = 0, hinted = 0;
        auto check = [&](const Expr &index, Type t) {
            const Ramp *r = index.as<Ramp>();
            if (!r || t.lanes != 4 || !is_const(r->stride, 1)) return;
            wide++;
            const Call *hint = r->base.as<Call>();
            if (hint && hint->is_intrinsic(Intrinsic::alignment_hint) && is_const(hint->args[1], 4))
                hinted++;
        };
        visit_each<Load>(k.body, [&](const Load *op) {
            if (op->name == lowering::kSharedMemoryName) check(op->index, op->type);
        });
        visit_each<Store>(k.body, [&](const Store *op) {
            if (op->name == lowering::kSharedMemoryName) check(op->index, op->value.type());
        });
        EXPECT_GT(wide, 0) << lowering::describe_kernel(k);
        EXPECT_EQ(hinted, wide) << lowering::describe_kernel(k);
    }
}

} // namespace

// The SIMT matmul's k step waits twice: once before its staging overwrites the tiles the
// last step read (its four rounds of A never touch one element twice, though their index
// is a digit split of the thread index, so they need no barrier between them; B's staging
// follows under the same barrier), and once before the product reads what was staged.
TEST(GPULowering, MatmulStepWaitsTwice) {
    for (int n : {256, 203}) {
        Buffer<float> A({n, n}, "A"), B({n, n}, "B");
        lowering::LoweredPipeline p =
            lower_gpu(aicf_apps::matmul_register_tiled(A, B, n, "matmul"));
        ASSERT_EQ(p.kernels.size(), 2u); // aligned global accesses, and the fallback
        const std::string pattern = barrier_pattern(p.kernels[0]);
        if (n == 256) {
            EXPECT_EQ(pattern, "prod a | b | ") << lowering::describe_kernel(p.kernels[0]);
        } else {
            // A reduction that 8 does not divide: the last step's rounds are shorter and
            // shift inwards, so they may write one element twice and keep their barriers.
            EXPECT_NE(pattern.find("a | "), std::string::npos) << pattern;
        }
    }
}

// gpu_pipeline(2) on the matmul's staged tiles: each thread keeps the next step's values of A
// and B in registers (loaded before the loop for its first step, and for step ko + 1 before
// step ko's product), and a step stores them into shared memory; the staging loops are
// unrolled. The results stay those of a plain loop (GPUSchedule.RegisterTiledMatmul).
TEST(GPULowering, PipelinedStagingLoadsTheNextStepIntoRegisters) {
    const int n = 256;
    Buffer<float> A({n, n}, "A"), B({n, n}, "B");
    lowering::LoweredPipeline p = lower_gpu(aicf_apps::matmul_register_tiled(A, B, n, "matmul"));
    ASSERT_EQ(p.kernels.size(), 2u); // aligned global accesses, and the fallback
    const lowering::LoweredKernel &k = p.kernels[0];
    std::map<std::string, int64_t> registers;
    visit_each<Allocate>(k.body, [&](const Allocate *op) {
        if (op->memory_type == MemoryType::Register)
            registers[op->name] = *as_const_int(op->extents[0]);
    });
    EXPECT_EQ(registers["a.pipelined"], 4) << lowering::describe_kernel(k); // 4 rounds of 1
    EXPECT_EQ(registers["b.pipelined"], 4) << lowering::describe_kernel(k); // one float4
    // Global loads of A and B happen only into the registers: twice in the code (before the
    // loop, and for the next step), never straight into shared memory.
    int into_registers = 0, into_shared = 0;
    visit_each<Store>(k.body, [&](const Store *op) {
        bool global = false;
        visit_each<Load>(op->value,
                         [&](const Load *l) { global |= l->name == "A" || l->name == "B"; });
        if (!global) return;
        (op->name == lowering::kSharedMemoryName ? into_shared : into_registers)++;
    });
    EXPECT_EQ(into_shared, 0) << lowering::describe_kernel(k);
    EXPECT_EQ(into_registers, 2 * (4 + 1)) << lowering::describe_kernel(k);
    const std::string text = lowering::describe_kernel(k);
    EXPECT_NE(text.find("if ((prod.s1.ko < 31))"), std::string::npos) << text;
}
