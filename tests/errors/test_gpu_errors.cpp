// Mistakes in GPU schedules raise CompileError naming the Func, the loop and the limit.

#include "ErrorMessage.h"
#include "GPUTarget.h"
#include "KernelRunner.h"
#include "Reference.h"
#include "ScopedEnv.h"
#include "backends/llvm/CodeGen_PTX.h"
#include "dsl/aicf.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>

using namespace aicf;
using aicf_test::message_of;

namespace {

const Target gpu_target = aicf_test::gpu_test_target();

TEST(GPUScheduleErrors, SharedMemoryOverTheTargetLimit) {
    Buffer<float> in({512, 512}, "in");
    Var x("x"), y("y"), bx("bx"), by("by"), xi("xi"), yi("yi"), xo("xo"), yo("yo"), tx("tx"),
        ty("ty");
    Func f("f"), g("g");
    f(x, y) = in(x, y) * 2.0f;
    g(x, y) = f(x, y) + 1.0f;
    // Each block computes a 256 x 256 tile of f (256 KiB of floats) in shared memory, with
    // 16 x 16 threads.
    g.tile(x, y, bx, by, xi, yi, 256, 256).gpu_blocks(bx, by);
    g.tile(xi, yi, xo, yo, tx, ty, 16, 16).gpu_threads(tx, ty);
    f.compute_at(g, bx).tile(x, y, xo, yo, tx, ty, 16, 16).gpu_threads(tx, ty);
    std::string msg = message_of<CompileError>([&] { g.realize({512, 512}, gpu_target); });
    EXPECT_CONTAINS(msg, "needs 262144 bytes of shared memory per block");
    EXPECT_CONTAINS(msg, "f: 262144 bytes at offset 0");
    EXPECT_CONTAINS(msg, "host-cuda-sm_80");
}

// Launch bounds: out of range when given, on a Func that makes no kernel, or more than a
// multiprocessor holds for the block shape.
TEST(GPUScheduleErrors, LaunchBounds) {
    Var x("x"), y("y"), bx("bx"), tx("tx");
    Func f("f");
    f(x) = x * 2;
    std::string msg = message_of<CompileError>([&] { f.gpu_launch_bounds(0); });
    EXPECT_CONTAINS(msg, "gpu_launch_bounds(0) on Func f: a multiprocessor holds 1 to 32 blocks "
                         "at once. Give a count in that range.");
    msg = message_of<CompileError>([&] { f.gpu_max_registers(300); });
    EXPECT_CONTAINS(msg, "gpu_max_registers(300) on Func f: a thread may be limited to 16 to 255 "
                         "registers. Give a count in that range.");

    Func g("g"), h("h");
    g(x) = x * 3;
    h(x) = g(x) + 1;
    g.compute_root().gpu_launch_bounds(2);
    h.gpu_tile(x, bx, tx, 64);
    msg = message_of<CompileError>([&] { h.realize({256}, gpu_target); });
    EXPECT_CONTAINS(msg, "Func g sets gpu_launch_bounds, but none of its loops is a GPU block "
                         "loop. Launch bounds belong to the Func whose gpu_blocks loops make the "
                         "kernel.");

    Func big("big");
    big(x) = x;
    big.gpu_tile(x, bx, tx, 1024).gpu_launch_bounds(3);
    msg = message_of<CompileError>([&] { big.realize({4096}, gpu_target); });
    EXPECT_CONTAINS(msg, "gpu_launch_bounds(3) on Func big asks for 3 blocks of 1024 threads on "
                         "each multiprocessor, but one holds at most");
    Func regs("regs");
    regs(x) = x;
    regs.gpu_tile(x, bx, tx, 512).gpu_max_registers(255);
    msg = message_of<CompileError>([&] { regs.realize({4096}, gpu_target); });
    EXPECT_CONTAINS(msg, "gpu_max_registers(255) on Func regs would let its 512 threads use "
                         "130560 registers, more than a multiprocessor's 65536, so no block could "
                         "start. Allow at most 128.");
}

// gpu_pipeline: a stage count out of range for its kind of copy, a Func that is not a tile
// staged at a serial loop of a kernel, and one that reads what its loop computes.
TEST(GPUScheduleErrors, Pipeline) {
    Var x("x"), bx("bx"), tx("tx");
    Func f("f");
    f(x) = x * 2;
    std::string msg = message_of<CompileError>([&] { f.gpu_pipeline(3); });
    EXPECT_CONTAINS(msg, "gpu_pipeline(3, PipelineCopy::Registers) on Func f: through registers, "
                         "a pipeline holds one iteration ahead. Give 1 (none) to 2, or "
                         "PipelineCopy::Async for up to 4 stages in shared memory.");
    msg = message_of<CompileError>([&] { f.gpu_pipeline(5, PipelineCopy::Async); });
    EXPECT_CONTAINS(msg, "gpu_pipeline(5, PipelineCopy::Async) on Func f: more than 4 shared "
                         "buffers");
    msg = message_of<CompileError>([&] { f.gpu_pipeline(0, PipelineCopy::Async); });
    EXPECT_CONTAINS(msg, "a pipeline has at least one stage. Give 1 (none) to 4.");
    Func g("g"), h("h");
    g(x) = x * 3;
    h(x) = g(x) + 1;
    g.compute_root().gpu_pipeline(2);
    h.gpu_tile(x, bx, tx, 64);
    msg = message_of<CompileError>([&] { h.realize({256}, gpu_target); });
    EXPECT_CONTAINS(msg, "gpu_pipeline on Func g: g is not computed in a GPU kernel.");
    Func s("s"), t("t");
    s(x) = x * 5;
    t(x) = s(x) + s(x + 1);
    t.gpu_tile(x, bx, tx, 64);
    s.compute_at(t, bx).gpu_threads(x).gpu_pipeline(2);
    msg = message_of<CompileError>([&] { t.realize({256}, gpu_target); });
    EXPECT_CONTAINS(msg, "gpu_pipeline on Func s: s is not staged at a serial loop of kernel");

    // A staging pipelined through registers that reads a Func the loop it is staged at
    // computes: the next step's values do not exist yet when they would be loaded.
    Var y("y"), by("by"), ty("ty");
    RVar ro("ro"), ri("ri");
    Buffer<float> X({64, 32}, "X");
    RDom r(0, 64, "r");
    Func c("c"), a("a"), prod("prod");
    c(x, y) = X(x, y) * 2.0f;
    a(x, y) = c(x, y) + 1.0f;
    prod(y) = 0.0f;
    prod(y) += a(r, y);
    prod.gpu_tile(y, by, ty, 8);
    prod.update().gpu_tile(y, by, ty, 8).split(r.x, ro, ri, 8).reorder(ri, ty, ro, by);
    a.compute_at(prod.update(), ro).store_in(MemoryType::GPUShared).gpu_threads(x, y);
    a.gpu_pipeline(2);
    c.compute_at(prod.update(), ro).store_in(MemoryType::GPUShared).gpu_threads(x, y);
    msg = message_of<CompileError>([&] { prod.realize({32}, gpu_target); });
    EXPECT_CONTAINS(msg, "gpu_pipeline on Func a: its definition reads c, which the kernel writes "
                         "inside the loop ro of prod.update(0) that a is staged at, so its next "
                         "values cannot be loaded an iteration ahead. Compute c outside that loop "
                         "(at a loop around it), or do not pipeline a.");
}

TEST(GPUScheduleErrors, MoreThan1024ThreadsPerBlock) {
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    Func f("f");
    f(x, y) = x + y;
    f.gpu_tile(x, y, bx, by, tx, ty, 64, 32);
    std::string msg = message_of<CompileError>([&] { f.realize({128, 128}, gpu_target); });
    EXPECT_CONTAINS(msg, "needs 2048 threads per block");
    EXPECT_CONTAINS(msg, "64 in x (loop tx of f)");
    EXPECT_CONTAINS(msg, "32 in y (loop ty of f)");
    EXPECT_CONTAINS(msg, "at most 1024");
    // A count past what an int holds is said as it is.
    Func g("g");
    g(x, y) = x + y;
    g.gpu_tile(x, y, bx, by, tx, ty, 2147483647, 4, TailStrategy::GuardWithIf);
    EXPECT_CONTAINS(message_of<CompileError>([&] {
                        g.realize({37, 23}, gpu_target);
                    }),
                    "needs 2147483647 threads in dimension x (loop tx of g), but a block allows "
                    "at most 1024 there");
}

TEST(GPUScheduleErrors, FourLoopsOnThreadsOfOneStage) {
    Var x("x"), y("y"), xo("xo"), xi("xi"), yo("yo"), yi("yi");
    Func f("f");
    f(x, y) = x + y;
    f.split(x, xo, xi, 4).split(y, yo, yi, 4).gpu_blocks(yo).gpu_threads(xi, xo, yi);
    // Three thread loops are a block's three dimensions; a fourth has nowhere to go.
    f.serial(yo).gpu_threads(yo);
    std::string msg = message_of<CompileError>([&] { f.realize({16, 16}, gpu_target); });
    EXPECT_CONTAINS(msg, "the loop yo is the fourth loop mapped onto GPU threads");
    EXPECT_CONTAINS(msg, "three dimensions (x, y, z)");
}

// 64 threads at most along z: the message says how to fit, by a smaller factor or by
// putting the longer loop on x or y.
TEST(GPUScheduleErrors, TooManyThreadsAlongZ) {
    Var x("x"), y("y"), z("z"), w("w");
    Func f("f");
    f(x, y, z, w) = x + y + z + w;
    f.bound(x, 0, 2).bound(y, 0, 2).bound(z, 0, 128).gpu_threads(x, y, z).gpu_blocks(w);
    std::string msg = message_of<CompileError>([&] { f.realize({2, 2, 128, 3}, gpu_target); });
    EXPECT_CONTAINS(msg, "needs 128 threads in dimension z (loop z of f), but a block allows at "
                         "most 64 there (and 1024 in x and y). Split the loop by a factor of at "
                         "most 64, or map the longer loops onto x and y");
}

TEST(GPUScheduleErrors, ThreadLoopOutsideBlockLoops) {
    Var x("x"), xo("xo"), xi("xi");
    Func f("f");
    f(x) = x * 2;
    f.split(x, xo, xi, 32).gpu_threads(xi);
    std::string msg = message_of<CompileError>([&] { f.realize({100}, gpu_target); });
    EXPECT_CONTAINS(msg, "GPU thread loop xi of f is not inside any GPU block loop");
    // (gpu_single_thread() would refuse the thread loop too: not offered.)
    EXPECT_EQ(msg.find("gpu_single_thread"), std::string::npos) << msg;
    EXPECT_CONTAINS(msg, "A Func of no dimensions, a total, has no loop of its own to put on "
                         "blocks: give it one of extent 1");
}

// An update whose pure definition is on blocks and which is not: the message says that each
// stage is scheduled on its own, and which stage is on blocks.
TEST(GPUScheduleErrors, ThreadLoopOfAnUpdateWhoseDefinitionIsOnBlocks) {
    Var x("x"), xo("xo"), xi("xi");
    RDom r(0, 8, "r");
    Func f("f");
    f(x) = 0.0f;
    f(x) += cast<float>(x + r);
    f.gpu_tile(x, xo, xi, 32);
    f.update().split(x, xo, xi, 32).gpu_threads(xi);
    std::string msg = message_of<CompileError>([&] { f.realize({100}, gpu_target); });
    EXPECT_CONTAINS(msg, "GPU thread loop xi of f.update(0) is not inside any GPU block loop");
    EXPECT_CONTAINS(msg, "f runs on blocks (loop xo of f), but f.update(0) does not: each stage "
                         "of a Func is scheduled on its own");
    EXPECT_EQ(msg.find("total"), std::string::npos) << msg;
}

TEST(GPUScheduleErrors, ThreadLoopOutsideBlockLoopsOfAStageComputedAtRoot) {
    Var x("x"), bx("bx"), tx("tx");
    Func f("f"), g("g");
    f(x) = x * 2;
    g(x) = f(x) + 1;
    g.gpu_tile(x, bx, tx, 32);
    f.compute_root().gpu_threads(x);
    std::string msg = message_of<CompileError>([&] { g.realize({100}, gpu_target); });
    EXPECT_CONTAINS(msg, "GPU thread loop x of f is not inside any GPU block loop");
}

TEST(GPUScheduleErrors, ComputeAtBetweenTwoBlockLoops) {
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    Func f("f"), g("g");
    f(x, y) = x + y;
    g(x, y) = f(x, y) * 2;
    g.gpu_tile(x, y, bx, by, tx, ty, 8, 8);
    f.compute_at(g, by);
    std::string msg = message_of<CompileError>([&] { g.realize({64, 64}, gpu_target); });
    EXPECT_CONTAINS(msg, "Func f is stored at the GPU block loop by of g, between it and an "
                         "inner block loop");
    EXPECT_CONTAINS(msg, "innermost block loop");
    // At the innermost block loop, with a loop of its own on blocks: that is the mistake.
    Func c("c"), o("o");
    c(x, y) = x * y;
    o(x, y) = c(x - 1, y) + c(x + 1, y + 1);
    o.gpu_tile(x, y, bx, by, tx, ty, 8, 4, TailStrategy::GuardWithIf);
    c.compute_at(o, bx).store_in(MemoryType::GPUShared).gpu_blocks(x);
    EXPECT_CONTAINS(message_of<CompileError>([&] {
                        o.realize({37, 23}, gpu_target);
                    }),
                    "Func c is computed inside the kernel of loop bx of o, but its own loop x of "
                    "c is on GPU blocks");
}

TEST(GPUScheduleErrors, GPULoopsNeedAGPUTarget) {
    Var x("x"), bx("bx"), tx("tx");
    Func f("f");
    f(x) = x;
    f.gpu_tile(x, bx, tx, 32);
    std::string msg = message_of<CompileError>([&] { f.realize({100}, Target("host")); });
    EXPECT_CONTAINS(msg, "has no GPU");
    EXPECT_CONTAINS(msg, "host-cuda-sm_80");
}

TEST(GPUScheduleErrors, PrefetchIsForCPULoops) {
    Buffer<float> in({256}, "in");
    Var x("x"), bx("bx"), tx("tx");
    Func f("f");
    f(x) = in(x)*2.0f;
    f.gpu_tile(x, bx, tx, 32).prefetch(in, tx, bx);
    std::string msg = message_of<CompileError>([&] { f.realize({256}, gpu_target); });
    EXPECT_CONTAINS(
        msg,
        "the prefetch of in at loop tx: the loop runs on a GPU, and prefetch is for CPU loops.");
    EXPECT_CONTAINS(msg, "in.in() computed at the block loop in shared memory");
}

TEST(GPUScheduleErrors, GPULoopOverAReductionVariableRaces) {
    Func f("f");
    Var x("x");
    RDom r(0, 10, "r");
    f(x) = 0;
    f(x) += r;
    std::string msg = message_of<CompileError>([&] { f.update().gpu_blocks(r); });
    EXPECT_CONTAINS(msg, "gpu_blocks(r.x) could race");

    // On threads and lanes, iterations that write the same point reduce across them; those
    // that write points along the reduction variable race when they touch each other's (a
    // scan, a shift, a scatter that is not one to one), as on blocks and CPU threads.
    Var y("y");
    RVar ro("ro"), ri("ri");
    Buffer<int> in({40, 3}, "in");
    RDom s(1, 39, "s");
    auto update = [&](const std::function<void(Func &)> &define) {
        Func g("g");
        g(x, y) = in(x, y);
        define(g);
        return g.update().split(s, ro, ri, 16, TailStrategy::GuardWithIf).gpu_blocks(y);
    };
    auto racing = [&](const std::function<void(Func &)> &define, bool lanes) {
        Stage st = update(define);
        return message_of<CompileError>([&] { lanes ? st.gpu_lanes(ri) : st.gpu_threads(ri); });
    };
    auto scan = [&](Func &g) { g(s, y) = g(s - 1, y) + in(s, y); };
    EXPECT_CONTAINS(racing(scan, false),
                    "In the schedule of g.update(0), gpu_threads(ri) could race: ri is a reduction "
                    "variable, and its iterations may update the same points of g");
    EXPECT_CONTAINS(racing(scan, true), "gpu_lanes(ri) could race");
    EXPECT_CONTAINS(racing([&](Func &g) { g(s + 1, y) = g(s, y); }, true), "could race");
    EXPECT_CONTAINS(racing([&](Func &g) { g(s % 5, y) += in(s, y); }, false), "could race");
    EXPECT_CONTAINS(racing([&](Func &g) { g(s, y) = g(s, y) + g(0, y); }, false), "could race");
    // A loop fused from the reduction variables a scatter writes along races too.
    RDom q(0, 40, 0, 3, "q");
    RVar qf("qf");
    Func bins("bins");
    bins(x) = 0;
    bins(clamp(in(q.x, q.y), 0, 9)) += 1;
    EXPECT_CONTAINS(
        message_of<CompileError>([&] { bins.update().fuse(q.x, q.y, qf).gpu_threads(qf); }),
        "gpu_threads(qf) could race");
    // Accepted: each iteration its own point, a reduction into one point, or atomic updates.
    update([&](Func &g) { g(s, y) = g(s, y) * 2 + in(s, y); }).gpu_threads(ri);
    update([&](Func &g) { g(0, y) += in(s, y); }).gpu_lanes(ri);
    Func h("h");
    h(x, y) = 0;
    h(s % 5, y) += in(s, y);
    h.update().atomic().split(s, ro, ri, 16, TailStrategy::GuardWithIf).gpu_threads(ri);
}

// A Func with updates stored outside the GPU loops it is computed in: the blocks or threads
// between would each compute their region into the one allocation at once, and where the
// regions meet apply the updates twice (g(x + 1) of one thread is g(x) of the next). Refused,
// as across a parallel loop on the host; stored where it is computed, it is right.
TEST(GPUScheduleErrors, UpdatesStoredOutsideTheGPULoopsThatComputeThem) {
    for (int form = 0; form < 4; form++) {
        Var x("x"), bx("bx"), tx("tx");
        RDom r(0, 2, "r");
        Func g("g"), f("f");
        g(x) = x;
        g(x) += 1 + 0 * r;
        f(x) = g(x) + g(x + 1);
        f.gpu_tile(x, bx, tx, 8);
        if (form == 0) g.store_root().compute_at(f, tx);
        if (form == 1) g.store_root().compute_at(f, bx).gpu_threads(x);
        if (form == 2) g.store_at(f, bx).compute_at(f, tx);
        if (form == 3) g.compute_at(f, tx);
        if (form < 3) {
            std::string msg = message_of<CompileError>([&] { f.realize({16}, gpu_target); });
            EXPECT_CONTAINS(msg, "Func g is stored at ");
            EXPECT_CONTAINS(msg, std::string("inside the GPU loop ") + (form == 2 ? "tx" : "bx") +
                                     " of f: its blocks or threads would compute into one "
                                     "allocation at once, and where their regions meet, each "
                                     "would apply g's updates to the same points. Store it at "
                                     "that loop or inside it (store_at), or compute it outside "
                                     "the kernel.");
            continue;
        }
        Buffer<int> out = f.realize({16}, gpu_target);
        for (int i = 0; i < 16; i++)
            EXPECT_EQ(out(i), 2 * i + 5) << i;
    }
}

// A Func stored per block in shared memory and computed at the outer of the consumer's thread
// loops: its stores run on the first thread along the inner loop, and the others read the
// tile with no barrier after them (the simulator saw the race). Refused; computed at the
// block loop, the values are right.
TEST(GPUScheduleErrors, SharedTileComputedOutsideAnInnerThreadLoop) {
    Buffer<int> in({40, 10}, "in");
    for (int j = 0; j < 10; j++)
        for (int i = 0; i < 40; i++)
            in(i, j) = i * 3 + j;
    for (bool at_block : {false, true}) {
        Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
        Func s("s"), out("out");
        s(x, y) = in(x, y) * 2;
        out(x, y) = s(x, y) + 1;
        out.gpu_tile(x, y, bx, by, tx, ty, 8, 2);
        if (at_block) {
            s.compute_at(out, bx).gpu_threads(x, y);
        } else {
            s.store_at(out, bx).compute_at(out, ty);
            EXPECT_CONTAINS(message_of<CompileError>([&] {
                                out.realize({16, 4}, gpu_target);
                            }),
                            "Func s is stored per block in shared memory (at the GPU block loop "
                            "bx of out) and computed inside the GPU thread loop ty of out, but "
                            "outside the thread loop tx of out inside it: only the first thread "
                            "along tx of out would compute it");
            // So too stored in device memory.
            s.store_root();
            EXPECT_CONTAINS(message_of<CompileError>([&] {
                                out.realize({16, 4}, gpu_target);
                            }),
                            "Func s is stored in device memory and computed inside the GPU thread "
                            "loop ty of out, but outside the thread loop tx of out inside it");
            continue;
        }
        Buffer<int> o = out.realize({16, 4}, gpu_target);
        o.copy_to_host();
        for (int j = 0; j < 4; j++)
            for (int i = 0; i < 16; i++)
                ASSERT_EQ(o(i, j), 2 * (i * 3 + j) + 1) << i << ", " << j;
    }
}

TEST(GPUScheduleErrors, SharedMemoryInsideThreadLoops) {
    Var x("x"), bx("bx"), tx("tx");
    Func f("f"), g("g");
    f(x) = x * 3;
    g(x) = f(x) + f(x + 1);
    g.gpu_tile(x, bx, tx, 32);
    f.compute_at(g, tx).store_in(MemoryType::GPUShared);
    std::string msg = message_of<CompileError>([&] { g.realize({100}, gpu_target); });
    EXPECT_CONTAINS(msg, "Func f is stored inside the GPU thread loop tx of g");
    EXPECT_CONTAINS(msg, "MemoryType::Register");
}

// Stored per block in shared memory and computed per thread, f's windows overlap: each thread
// would write the points its neighbours also compute. Where they do not overlap (one point per
// thread), the same placement runs.
TEST(GPUScheduleErrors, SharedTileComputedByThreadsInOverlappingWindows) {
    const int W = 64, H = 8;
    Buffer<float> in({W + 2, H}, "in");
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W + 2; i++)
            in(i, j) = float((i * 7 + j * 3) % 13) - 6.5f;
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    {
        Func f("f"), out("out");
        f(x, y) = in(x, y) + 1.0f;
        out(x, y) = f(x, y) * f(x + 1, y) + f(x + 2, y);
        out.gpu_tile(x, y, bx, by, tx, ty, 32, 8);
        f.store_at(out, bx).compute_at(out, tx).store_in(MemoryType::GPUShared);
        std::string msg = message_of<CompileError>([&] { out.realize({W, H}, gpu_target); });
        EXPECT_CONTAINS(msg, "Func f is stored per block in shared memory (at the GPU block loop "
                             "bx of out) but computed inside the GPU thread loop tx of out");
        EXPECT_CONTAINS(msg, "neighbouring threads compute points in common");
        EXPECT_CONTAINS(msg, "Compute f at the block loop bx of out");
    }
    // Windows along both dimensions under guarded tails: the message names the loop f is
    // computed at (tx, not the ty around it) and the size of one thread's window.
    {
        Func f("f"), out("out");
        f(x, y) = in(x, y) + 1.0f;
        out(x, y) = f(x, y) + f(x, y + 2) + f(x + 2, y + 1);
        out.gpu_tile(x, y, bx, by, tx, ty, 8, 4, TailStrategy::GuardWithIf);
        f.store_at(out, bx).compute_at(out, tx);
        std::string msg = message_of<CompileError>([&] { out.realize({37, H - 2}, gpu_target); });
        EXPECT_CONTAINS(msg, "computed inside the GPU thread loop tx of out, where each thread "
                             "computes a region of 3 x 3 points: neighbouring threads");
    }
    Func f("f"), out("out");
    f(x, y) = in(x, y) * 2.0f;
    out(x, y) = f(x, y) + 1.0f;
    out.gpu_tile(x, y, bx, by, tx, ty, 32, 8);
    f.store_at(out, bx).compute_at(out, tx).store_in(MemoryType::GPUShared);
    Buffer<float> o = out.realize({W - 5, H}, gpu_target)[0];
    o.copy_to_host();
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W - 5; i++)
            ASSERT_EQ(o(i, j), double(in(i, j)) * 2 + 1) << i << ", " << j;
}

// A shared stage whose split puts runs of points on threads: shifted inwards, the last run
// overlaps its neighbour's (a race); GuardWithIf, Auto's choice here, runs and is right.
// A tile staged over a fused loop split by RoundUp onto threads: the points past the fused
// loop's end are clamped onto its last row, so two threads would store one point in a round.
// Refused, naming the fused loop; GuardWithIf, or a factor that divides the fused extent, runs
// and gives the right values.
TEST(GPUScheduleErrors, RoundedUpFusedLoopOnThreads) {
    const int W = 64, H = 4;
    Buffer<float> in({W + 1, H + 1}, "in");
    aicf_test::fill_random(in, -1.0, 1.0, 3);
    for (int factor : {64, 66}) {
        for (TailStrategy tail : {TailStrategy::RoundUp, TailStrategy::GuardWithIf}) {
            Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty"), f("f"), fo("fo"), fi("fi");
            Func tile("tile"), out("out");
            tile(x, y) = in(x, y) * 2.0f;
            out(x, y) = tile(x, y) + tile(x + 1, y + 1);
            out.gpu_tile(x, y, bx, by, tx, ty, 32, 4);
            // The tile: 33 x 5 = 165 points; 66 does not divide them either.
            tile.compute_at(out, bx).fuse(x, y, f).split(f, fo, fi, factor, tail).gpu_threads(fi);
            if (tail == TailStrategy::RoundUp) {
                std::string msg = message_of<CompileError>([&] {
                    out.realize({W, H}, gpu_target);
                });
                EXPECT_CONTAINS(msg, "In the schedule of tile, the split of f (a fused loop) "
                                     "rounds up its tail (RoundUp), and a loop split from it runs "
                                     "on GPU threads");
                EXPECT_CONTAINS(msg, "Split with TailStrategy::GuardWithIf");
                continue;
            }
            aicf_test::ScopedEnv sim("AICF_DEVICE", "sim");
            Buffer<float> r = out.realize({W, H}, gpu_target)[0];
            r.copy_to_host();
            for (int j = 0; j < H; j++)
                for (int i = 0; i < W; i++)
                    ASSERT_EQ(r(i, j), in(i, j) * 2.0f + in(i + 1, j + 1) * 2.0f) << i << ", " << j;
        }
    }
}

TEST(GPUScheduleErrors, ShiftedTailOfRunsOnThreads) {
    const int W = 64, H = 8;
    Buffer<float> in({W + 4, H + 2}, "in");
    for (int j = 0; j < H + 2; j++)
        for (int i = 0; i < W + 4; i++)
            in(i, j) = float((i * 37 + j * 11) % 17) - 8.5f;
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty"), xo("xo"), xi("xi");
    for (TailStrategy tail : {TailStrategy::ShiftInwards, TailStrategy::GuardWithIf}) {
        Func blur("blur"), out("out");
        blur(x, y) = in(x, y) + in(x + 1, y) + in(x + 2, y);
        out(x, y) = blur(x, y) + blur(x + 2, y + 1) + blur(x, y + 2);
        out.gpu_tile(x, y, bx, by, tx, ty, 64, 1, TailStrategy::GuardWithIf);
        blur.compute_at(out, bx)
            .store_in(MemoryType::GPUShared)
            .split(x, xo, xi, 4, tail)
            .gpu_threads(xo, y);
        if (tail == TailStrategy::ShiftInwards) {
            std::string msg = message_of<CompileError>([&] { out.realize({W, H}, gpu_target); });
            EXPECT_CONTAINS(msg, "In the schedule of blur, the split of x shifts its tail inwards "
                                 "(ShiftInwards), and its outer loop xo runs on GPU threads");
            EXPECT_CONTAINS(msg, "Split with TailStrategy::GuardWithIf");
            continue;
        }
        Buffer<float> o = out.realize({W, H}, gpu_target);
        o.copy_to_host();
        auto b = [&](int i, int j) { return double(in(i, j)) + in(i + 1, j) + in(i + 2, j); };
        for (int j = 0; j < H; j++)
            for (int i = 0; i < W; i++)
                ASSERT_NEAR(o(i, j), b(i, j) + b(i + 2, j + 1) + b(i, j + 2), 1e-4)
                    << i << ", " << j;
    }
}

TEST(GPUScheduleErrors, ThreadLoopsOfAFuncComputedInsideThreadLoops) {
    Var x("x"), bx("bx"), tx("tx");
    Func f("f"), g("g");
    f(x) = x * 3;
    g(x) = f(x) + f(x + 1) + f(x + 2);
    g.gpu_tile(x, bx, tx, 32);
    f.compute_at(g, tx).gpu_threads(x);
    std::string msg = message_of<CompileError>([&] { g.realize({100}, gpu_target); });
    EXPECT_CONTAINS(msg, "f is computed inside the GPU thread loop tx of g, where each thread "
                         "computes its own copy of it");
    EXPECT_CONTAINS(msg, "compute it at the block loop bx of g");
}

TEST(GPUScheduleErrors, RegisterTileReadOutsideItsThreadsPart) {
    Var x("x"), bx("bx"), tx("tx");
    Func f("f"), g("g");
    f(x) = x * 3;
    g(x) = f(x) + f(x + 1); // a thread needs its neighbour's element of f
    g.gpu_tile(x, bx, tx, 32);
    f.compute_at(g, bx).store_in(MemoryType::Register).split(x, bx, tx, 32).gpu_threads(tx);
    std::string msg = message_of<CompileError>([&] { g.realize({100}, gpu_target); });
    EXPECT_CONTAINS(msg, "Func f is stored in registers at the GPU block loop bx of g, so each "
                         "thread holds only the part it computes");
    // f's 33 points are two tiles of 32 threads, one after the other: each thread computes a
    // point in each, and its registers hold one.
    EXPECT_CONTAINS(msg, "f(x) reads, in dimension 0, points its thread may not hold: its "
                         "registers hold the points it computes in one iteration of the loop bx "
                         "of f, which every thread runs (it is not mapped onto threads)");
    EXPECT_CONTAINS(msg, "or store f in GPUShared");
    EXPECT_EQ(msg.find("__thread"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("_realized"), std::string::npos) << msg;

    // In two dimensions, a read one row down: the message says how far, in points.
    Var y("y"), by("by"), ty("ty");
    Func f2("f"), g2("g");
    f2(x, y) = x * 3 + y;
    g2(x, y) = f2(x, y) + f2(x, y + 1);
    g2.gpu_tile(x, y, bx, by, tx, ty, 16, 8);
    f2.compute_at(g2, bx).store_in(MemoryType::Register).gpu_threads(x, y);
    msg = message_of<CompileError>([&] { g2.realize({100, 50}, gpu_target); });
    EXPECT_CONTAINS(msg, "f(x, (y + 1)) reads another thread's part in dimension 1 (it reads 1 "
                         "point after the points its thread computes there)");
    EXPECT_EQ(msg.find("__thread"), std::string::npos) << msg;
}

// A Tuple in registers at a block loop, its pure definition computed there by every thread
// (its update on threads and lanes): the message quotes the definition on one line and says
// what would be valid.
TEST(GPUScheduleErrors, RegisterTileComputedOutsideThreadLoops) {
    Buffer<int> in({37, 6}, "in");
    Var y("y"), yo("yo"), yi("yi");
    RVar ro("ro"), lane("lane");
    RDom r(0, 37, "r");
    Func f("f"), out("out");
    f(y) = Tuple(Expr(-1), Expr(0));
    f(y) = Tuple(max(f(y)[0], in(r, y)), f(y)[1] + in(r, y));
    out(y) = f(y)[0] + f(y)[1];
    out.split(y, yo, yi, 2, TailStrategy::GuardWithIf).gpu_blocks(yo).gpu_threads(yi);
    f.compute_at(out, yo).store_in(MemoryType::Register);
    f.update()
        .split(r.x, ro, lane, 8, TailStrategy::GuardWithIf)
        .reorder(lane, ro, y)
        .gpu_threads(y)
        .gpu_lanes(lane);
    std::string msg = message_of<CompileError>([&] { out.realize({6}, gpu_target); });
    EXPECT_CONTAINS(msg, "Func f is stored in registers at the GPU block loop yo of out, so each "
                         "thread holds the part it computes, but f(y) = {-1, 0} accesses it "
                         "outside any thread loop. Map the loops of f and of its consumers onto "
                         "threads (gpu_threads), or store it in GPUShared.");
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

// A Func in registers read at half the rate it is computed: the message names the scale (not
// the tails, which agree), and the schedule it offers runs.
TEST(GPUScheduleErrors, RegisterTileReadAtAnotherScale) {
    Buffer<float> in({70, 20}, "in");
    aicf_test::fill_random(in, -1.0, 1.0, 3);
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty"), xi("xi");
    auto build = [&](MemoryType memory) {
        Func f("f"), out("out");
        f(x, y) = in(x, y) * 2.0f;
        out(x, y) = f(x / 2, y) + 1.0f;
        out.gpu_tile(x, y, bx, by, tx, ty, 64, 8).split(tx, tx, xi, 4).unroll(xi);
        f.compute_at(out, bx).store_in(memory).gpu_threads(x, y);
        return out;
    };
    std::string msg = message_of<CompileError>([&] {
        build(MemoryType::Register).realize({128, 20}, gpu_target);
    });
    EXPECT_CONTAINS(msg, "Func f is stored in registers at the GPU block loop bx of out, so each "
                         "thread holds only the part it computes, but f((x / 2), y) reads it at "
                         "another scale in dimension 0: from one thread to the next in x the "
                         "point read moves by 2 and the point computed by 1");
    EXPECT_CONTAINS(msg, "Store f in GPUShared");
    EXPECT_EQ(msg.find("tails differently"), std::string::npos) << msg;
    Buffer<float> o = build(MemoryType::GPUShared).realize({128, 20}, gpu_target)[0];
    o.copy_to_host();
    for (int j = 0; j < 20; j++)
        for (int i = 0; i < 128; i++)
            ASSERT_NEAR(o(i, j), 2.0 * in(i / 2, j) + 1.0, 1e-5) << i << ", " << j;
}

TEST(GPUScheduleErrors, ParallelLoopInsideAKernel) {
    Var x("x"), y("y"), bx("bx"), tx("tx");
    Func f("f");
    f(x, y) = x + y;
    f.gpu_tile(x, bx, tx, 32).parallel(y);
    f.reorder(y, tx, bx);
    std::string msg = message_of<CompileError>([&] { f.realize({64, 4}, gpu_target); });
    EXPECT_CONTAINS(msg, "The loop y of f is parallel inside the GPU kernel");
}

TEST(GPUScheduleErrors, SingleThreadAndMappedLoopsTogether) {
    Var x("x"), bx("bx"), tx("tx");
    Func f("f");
    f(x) = x * 2;
    f.gpu_tile(x, bx, tx, 8).gpu_single_thread();
    std::string msg = message_of<CompileError>([&] { f.realize({16}, gpu_target); });
    EXPECT_CONTAINS(
        msg, "In the schedule of f, gpu_single_thread() runs the stage as one GPU thread, "
             "but its loop tx is also mapped onto the GPU (gpu_thread). Use one or the other.");
}

TEST(GPUScheduleErrors, ThreadExtentWithoutAConstantBound) {
    Param<int> n("n");
    Var x("x"), y("y"), bx("bx"), tx("tx");
    Func f("f");
    f(x, y) = x + y;
    f.split(y, bx, tx, n).gpu_blocks(bx).gpu_threads(tx);
    n.set(8);
    std::string msg = message_of<CompileError>([&] { f.realize({16, 64}, gpu_target); });
    EXPECT_CONTAINS(msg, "The GPU thread loop tx of f");
    EXPECT_CONTAINS(msg, "not bounded by a constant");
    // A count of run-time symbols says what they are.
    Var x2("x"), y2("y");
    Func h("h");
    h(x2, y2) = x2 + y2;
    h.gpu_blocks(y2).gpu_threads(x2);
    msg = message_of<CompileError>([&] { h.realize({100, 4}, gpu_target); });
    EXPECT_CONTAINS(msg, "The GPU thread loop x of h runs h.extent.0 times (h.extent.0 is the "
                         "extent of buffer h in dimension 0), which is not bounded by a constant");
}

// A neighbour read clamped to a constant edge: from a block far past the edge the region
// would reach back to it, so its size grows with the output's. The message says so and names
// the fix (a bound on the output), which the last part checks against a plain loop.
TEST(GPUScheduleErrors, SharedRegionThatGrowsWithTheOutput) {
    const int W = 40;
    Buffer<float> in({W}, "in");
    for (int i = 0; i < W; i++)
        in(i) = float((i * 7) % 13) - 6.0f;
    Var x("x"), bx("bx"), tx("tx"), xo("xo"), xi("xi");
    Func src("src"), out("out");
    src(x) = in(x);
    out(x) = src(x) + 2.0f * src(min(x + 1, W - 1));
    out.gpu_tile(x, bx, tx, 16);
    src.compute_at(out, bx)
        .store_in(MemoryType::GPUShared)
        .split(x, xo, xi, 16, TailStrategy::GuardWithIf)
        .gpu_threads(xi);
    const std::string msg = message_of<CompileError>([&] { out.realize({W}, gpu_target); });
    EXPECT_CONTAINS(msg, "Func src is stored in GPU shared memory in kernel");
    EXPECT_CONTAINS(msg, "Where the region grows with the output's size (a read clamped to a "
                         "constant edge, such as min(x + 1, 39), reaches that edge from any "
                         "block), bound() the output instead if its size is fixed.");
    out.bound(x, 0, W);
    aicf_test::ScopedEnv sim("AICF_DEVICE", "sim");
    Buffer<float> result = out.realize({W}, gpu_target)[0];
    result.copy_to_host();
    for (int i = 0; i < W; i++)
        ASSERT_EQ(result(i), in(i) + 2.0f * in(std::min(i + 1, W - 1))) << i;
}

} // namespace

namespace {

using aicf_test::ScopedEnv;

Func small_gpu_func() {
    Var x("x"), bx("bx"), tx("tx");
    Func f("f");
    f(x) = x * 2;
    f.gpu_tile(x, bx, tx, 32);
    return f;
}

// AICF_PTXAS_CHECK with a value that is no architecture is named, with the valid ones.
TEST(GPUDeviceErrors, PtxasCheckWithAnUnknownArchitecture) {
    for (const char *value : {"sm80", "sm_80,ampere", "sm_70"}) {
        ScopedEnv check("AICF_PTXAS_CHECK", value);
        ScopedEnv sim("AICF_DEVICE", "sim");
        Var x("x"), bx("bx"), tx("tx");
        Func f(std::string("checked_") + std::to_string(std::strlen(value)));
        f(x) = x * 3;
        f.gpu_tile(x, bx, tx, 32);
        const std::string msg = message_of<CompileError>([&] { f.realize({64}, gpu_target); });
        EXPECT_CONTAINS(msg, std::string("AICF_PTXAS_CHECK=") + value + " names \"");
        EXPECT_CONTAINS(msg, "which is not a GPU architecture: list sm_80, sm_86, sm_89 or sm_90");
    }
}

// Without a driver (here a driver library that does not exist, so that the check runs on
// machines with a GPU too), AICF_DEVICE=cuda says what failed and to use the simulator. The
// driver is loaded once per process, so the check runs in a fresh one.
TEST(GPUDeviceErrors, CudaWithoutADriverSaysToUseTheSimulator) {
    ::testing::FLAGS_gtest_death_test_style = "threadsafe";
    auto check = [] {
        ScopedEnv device("AICF_DEVICE", "cuda");
        ScopedEnv driver("AICF_CUDA_DRIVER", "libcuda-absent-for-aicf-tests.so.1");
        Func f = small_gpu_func();
        std::string msg = message_of<RuntimeError>([&] { f.realize({100}, gpu_target); });
        std::fprintf(stderr, "%s\n", msg.c_str());
        std::exit(0);
    };
    EXPECT_EXIT(
        check(), ::testing::ExitedWithCode(0),
        "AICF_DEVICE=cuda, but the CUDA driver \\(libcuda-absent-for-aicf-tests.so.1\\) could not "
        "be loaded.*AICF_DEVICE=sim");
}

TEST(GPUDeviceErrors, UnknownDevice) {
    ScopedEnv env("AICF_DEVICE", "tpu");
    Func f = small_gpu_func();
    std::string msg = message_of<RuntimeError>([&] { f.realize({100}, gpu_target); });
    EXPECT_CONTAINS(msg, "AICF_DEVICE=tpu is not a device. Valid devices: sim");
}

} // namespace

namespace {

// A row sum whose reduction loop the test maps onto GPU threads or lanes; `out` has one block
// per four rows and a thread loop over them.
struct RowSum {
    Buffer<float> in{{100, 8}, "in"};
    Var y{"y"}, yo{"yo"}, yi{"yi"};
    RDom r{0, 100, "r"};
    RVar ro{"ro"}, lane{"lane"};
    Func sum{"sum"}, out{"out"};
    RowSum() {
        sum(y) = 0.0f;
        sum(y) += in(r, y);
        out(y) = sum(y);
        out.split(y, yo, yi, 4).gpu_blocks(yo).gpu_threads(yi);
        sum.compute_at(out, yi);
    }
};

TEST(GPUScheduleErrors, LanesOfMoreThanAWarpOrOfNoConstantCount) {
    RowSum a;
    a.sum.update().split(a.r.x, a.ro, a.lane, 64).reorder(a.ro, a.lane).gpu_lanes(a.lane);
    std::string msg = message_of<CompileError>([&] { a.out.realize({8}, gpu_target); });
    EXPECT_CONTAINS(msg, "In the schedule of sum.update(0), gpu_lanes(lane) needs a constant "
                         "extent from 1 to 32 (the lanes of one warp), but the loop runs over 64 "
                         "iterations.");
    Param<int> n("n");
    Func g("g");
    Var x("x"), bx("bx");
    g(x) = x;
    g.split(x, bx, x, n).gpu_blocks(bx).gpu_lanes(x);
    msg = message_of<CompileError>([&] {
        n.set(16);
        g.realize({64}, gpu_target);
    });
    EXPECT_CONTAINS(msg, "gpu_lanes(x) needs a constant extent from 1 to 32");
    EXPECT_CONTAINS(msg, "split(x, xo, xi, 32) and gpu_lanes(xi)");
}

TEST(GPUScheduleErrors, LaneLoopInsideAnotherThreadLoopOfItsStage) {
    Func f("f");
    Var x("x"), y("y"), bx("bx"), tx("tx");
    f(x, y) = x + y;
    f.split(x, bx, tx, 32).reorder(tx, y, bx).gpu_blocks(bx).gpu_threads(tx).gpu_lanes(y);
    std::string msg = message_of<CompileError>([&] { f.realize({64, 4}, gpu_target); });
    EXPECT_CONTAINS(msg, "In the schedule of f, the GPU thread loop tx is inside gpu_lanes(y). "
                         "The lanes of a warp are the innermost threads");
}

// The partials of an argmax keeping a label (ties to the later point, by order) carry
// whether each had a point where a split's tail leaves some without one: their update stays
// serial, and a second rfactor of it is refused, each saying why.
TEST(GPUScheduleErrors, FlaggedRFactorPartialsStaySerial) {
    const float inf = std::numeric_limits<float>::infinity();
    Buffer<float> in({77, 3}, "in");
    aicf_test::fill_random(in, -1, 1, 5);
    for (bool again : {false, true}) {
        Func red("red"), out("out");
        Var y("y"), u("u"), v("v");
        RDom r(0, 77, "r");
        RVar ro("ro"), ri("ri"), a("a"), b("b");
        Expr x = in(r.x, y);
        red(y) = Tuple(-inf, Expr(-1));
        red(y) = Tuple(max(red(y)[0], x), select(x < red(y)[0], red(y)[1], r.x % 9));
        out(y) = red(y)[1];
        red.update().split(r.x, ro, ri, 64, TailStrategy::GuardWithIf);
        Func chunk = red.update().rfactor(ro, u);
        chunk.compute_root().gpu_blocks(u, y);
        if (again) {
            std::string msg =
                message_of<CompileError>([&] { chunk.update().split(ri, a, b, 8).rfactor(a, v); });
            EXPECT_CONTAINS(msg, "rfactor of red_intm.update(0): this update is one an earlier "
                                 "rfactor wrote, over partial results that carry whether they "
                                 "had any point");
            continue;
        }
        chunk.update().split(ri, a, b, 2, TailStrategy::GuardWithIf).gpu_lanes(a);
        chunk.update().gpu_blocks(u, y);
        std::string msg = message_of<CompileError>([&] { out.realize({3}, gpu_target); });
        EXPECT_CONTAINS(msg, "The update red_intm.update(0) runs its reduction loop a on GPU "
                             "threads");
        EXPECT_CONTAINS(msg, "such partials are reduced serially");
    }
}

// A serial loop between two block loops: the message names it, whether or not a Func is
// computed at the inner block loop (stored inside it, not between the two).
TEST(GPUScheduleErrors, SerialLoopBetweenBlockLoops) {
    Buffer<float> in({33, 21, 3}, "in");
    for (bool producer : {false, true}) {
        Var x("x"), y("y"), c("c"), bx("bx"), by("by"), tx("tx"), ty("ty");
        Func a("a"), o("o");
        a(x, y, c) = in(clamp(x, 0, 32), y, c) * 2.0f;
        o(x, y, c) = a(x - 1, y, c) + a(x + 1, y, c);
        o.gpu_tile(x, y, bx, by, tx, ty, 8, 4).reorder(tx, ty, bx, c, by);
        if (producer) a.compute_at(o, bx).store_in(MemoryType::GPUShared).gpu_threads(x, y);
        std::string msg = message_of<CompileError>([&] { o.realize({33, 21, 3}, gpu_target); });
        EXPECT_CONTAINS(msg, "The GPU block loops inside by of o are not perfectly nested in it: "
                             "the serial loop c of o is between them.");
    }
}

// A pure loop whose extent a bound() fixes is a constant number of lanes (as it is a constant
// number of threads, or of vector lanes).
TEST(GPUScheduleErrors, LanesOfALoopWhoseExtentABoundFixes) {
    Buffer<float> in({8, 5}, "in");
    aicf_test::fill_random(in, -1, 1, 3);
    Var c("c"), x("x");
    Func o("o");
    o(c, x) = in(c, x) * 2.0f;
    o.bound(c, 0, 8).gpu_blocks(x).gpu_lanes(c);
    Buffer<float> out = o.realize({8, 5}, gpu_target);
    out.copy_to_host();
    for (int j = 0; j < 5; j++)
        for (int i = 0; i < 8; i++)
            ASSERT_EQ(out(i, j), in(i, j) * 2.0f) << i << "," << j;
    Func wide("wide");
    wide(c, x) = in(c % 8, x);
    wide.bound(c, 0, 40).gpu_blocks(x).gpu_lanes(c);
    EXPECT_CONTAINS(message_of<CompileError>([&] {
                        wide.realize({40, 5}, gpu_target);
                    }),
                    "gpu_lanes(c) needs a constant extent from 1 to 32");
}

TEST(GPUScheduleErrors, CrossThreadUpdateThatIsNotAssociative) {
    Buffer<float> in({100, 8}, "in");
    Func s("s"), out("out");
    Var y("y"), yo("yo"), yi("yi");
    RDom r(0, 100, "r");
    RVar ro("ro"), lane("lane");
    s(y) = 0.0f;
    s(y) = s(y) * 0.5f + in(r, y);
    out(y) = s(y);
    out.split(y, yo, yi, 4).gpu_blocks(yo).gpu_threads(yi);
    s.compute_at(out, yi);
    s.update().split(r.x, ro, lane, 32).reorder(ro, lane).gpu_lanes(lane);
    std::string msg = message_of<CompileError>([&] { out.realize({8}, gpu_target); });
    EXPECT_CONTAINS(msg, "The update s.update(0) runs its reduction loop lane on GPU threads, so "
                         "the threads of that loop update the same points of s, and they combine "
                         "their partial results, but AICF cannot tell that the update is "
                         "associative.");
    EXPECT_CONTAINS(msg, "Cross-thread reductions recognize s = s op x for op in "
                         "+, *, min, max");
}

// The largest value and a payload read beside it, the later one on ties: without the
// candidates' positions, lanes that each take every 32nd point would merge equal candidates
// out of order, so the reorder that makes them is refused. (An argmax that keeps the index may
// take strided lanes: GPUCrossThreadReduction.ArgmaxOverStridedLanesBreaksTiesByIndex.)
TEST(GPUScheduleErrors, CrossThreadArgmaxOverStridedLanesWithoutItsIndex) {
    Buffer<float> in({100, 8}, "in"), payload({100, 8}, "payload");
    Func best("best"), out("out");
    Var y("y"), yo("yo"), yi("yi");
    RDom r(0, 100, "r");
    RVar ro("ro"), lane("lane");
    best(y) = Tuple(Expr(-std::numeric_limits<float>::infinity()), Expr(0.0f));
    Expr v = in(r.x, y);
    best(y) = Tuple(max(best(y)[0], v), select(v < best(y)[0], best(y)[1], payload(r.x, y)));
    out(y) = best(y)[1];
    out.split(y, yo, yi, 4).gpu_blocks(yo).gpu_threads(yi);
    best.compute_at(out, yi);
    best.update().split(r.x, ro, lane, 32).reorder(ro, lane).gpu_lanes(lane);
    std::string msg = message_of<CompileError>([&] { out.realize({8}, gpu_target); });
    EXPECT_CONTAINS(msg, "In the schedule of best.update(0), the order of its loops (set by "
                         "reorder, or by tile, which puts the tiles outside the points within "
                         "them) changes the order of the reduction loops (outermost first) from "
                         "ro, lane to lane, ro. The update "
                         "keeps one candidate by comparison (argmax-style)");
    EXPECT_CONTAINS(msg, "threads and lanes may take any points only when the update keeps each "
                         "candidate's position in its Tuple");
}

// vectorize (or unroll) on a loop mapped to GPU blocks or threads is refused; with a factor it
// splits the loop, keeping the outer part on the threads.
TEST(GPUScheduleErrors, VectorizeALoopMappedToTheGPU) {
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    Func f("f");
    f(x, y) = x + y;
    f.gpu_tile(x, y, bx, by, tx, ty, 32, 4);
    std::string msg = message_of<CompileError>([&] { f.vectorize(tx); });
    EXPECT_CONTAINS(msg, "In the schedule of f, vectorize(tx) names a loop already mapped to GPU "
                         "threads (gpu_threads): a loop runs on one of them or as vector lanes, "
                         "not both.");
    msg = message_of<CompileError>([&] { f.unroll(bx); });
    EXPECT_CONTAINS(msg, "unroll(bx) names a loop already mapped to GPU blocks (gpu_blocks)");
    // Nor does a loop move between blocks, threads and lanes by a second mapping.
    msg = message_of<CompileError>([&] { f.gpu_threads(bx); });
    EXPECT_CONTAINS(msg, "In the schedule of f, gpu_threads(bx) names a loop already mapped to "
                         "GPU blocks (gpu_blocks): a loop runs on one of them. Split bx");
    msg = message_of<CompileError>([&] { f.gpu_blocks(ty); });
    EXPECT_CONTAINS(msg, "gpu_blocks(ty) names a loop already mapped to GPU threads");
    EXPECT_EQ(message_of<CompileError>([&] { f.gpu_threads(tx).serial(by).gpu_blocks(by); }),
              "no exception");
    // No split makes the CPU's threads run inside a kernel: parallel is refused either way.
    for (int factor : {0, 4}) {
        msg = message_of<CompileError>([&] { factor ? f.parallel(tx, factor) : f.parallel(tx); });
        EXPECT_CONTAINS(msg, "as a parallel CPU loop, not both. A kernel's loops cannot run on "
                             "the CPU's threads: give the parallelism to GPU blocks and threads, "
                             "or serial(tx) undoes the mapping");
    }
    f.vectorize(tx, 4);
    const std::string nest = Pipeline(f).loop_nest(gpu_target);
    EXPECT_CONTAINS(nest, "gpu_thread.x for f.s0.tx in [0, 8)");
    EXPECT_CONTAINS(nest, "vectorized for f.s0.tx_vi in [0, 4)");
    EXPECT_CONTAINS(nest, "8 x 4 x 1 threads per block");
    Buffer<int> out = f.realize({70, 9}, gpu_target);
    out.copy_to_host();
    for (int j = 0; j < 9; j++)
        for (int i = 0; i < 70; i++)
            ASSERT_EQ(out(i, j), i + j) << i << "," << j;
}

TEST(GPUScheduleErrors, LaneGroupsThatDoNotTileTheBlock) {
    // 16 lanes reduce each row while another stage of the kernel runs 24 threads along x:
    // the groups of 16 lanes would straddle rows of the block.
    Buffer<float> in({100, 8}, "in");
    Func s("s"), out("out");
    Var x("x"), y("y"), xo("xo"), xi("xi");
    RDom r(0, 100, "r");
    RVar ro("ro"), lane("lane");
    s(y) = 0.0f;
    s(y) += in(r, y);
    out(x, y) = s(y) + x;
    out.split(x, xo, xi, 24).gpu_blocks(y).gpu_threads(xi);
    s.compute_at(out, y);
    s.update().split(r.x, ro, lane, 16).reorder(ro, lane).gpu_lanes(lane);
    std::string msg = message_of<CompileError>([&] { out.realize({48, 8}, gpu_target); });
    EXPECT_CONTAINS(msg, "The update s.update(0) reduces across 16 threads of its loop lane by "
                         "warp shuffles, which need those threads to fill aligned groups of 16 "
                         "lanes, but the kernel's blocks are 24 threads wide in x.");
}

TEST(GPUScheduleErrors, CrossThreadReductionAlongY) {
    Buffer<float> in({64, 8}, "in");
    Func s("s"), out("out");
    Var y("y");
    RDom r(0, 64, 0, 4, "r");
    s(y) = 0.0f;
    s(y) += in(r.x + 16 * r.y, y);
    out(y) = s(y);
    out.gpu_blocks(y);
    s.compute_at(out, y);
    s.update().gpu_threads(r.x, r.y);
    std::string msg = message_of<CompileError>([&] { out.realize({8}, gpu_target); });
    EXPECT_CONTAINS(msg, "The update s.update(0) runs its reduction loop r.y on GPU threads, so "
                         "the threads of that loop update the same points of s along y, and also "
                         "its loop r.x along an inner dimension: a reduction over two dimensions "
                         "of threads. Fuse the two reduction loops (fuse)");
}

TEST(ScheduleErrors, AtomicNeedsAnAtomicForm) {
    Buffer<float> in({100}, "in");
    RDom r(0, 100, "r");
    RVar rb("rb"), rt("rt");
    // Not associative.
    Func f("f");
    f() = 1.0f;
    f() = f() * 0.5f + in(r);
    f.update().atomic().split(r.x, rb, rt, 32).gpu_blocks(rb).gpu_threads(rt);
    std::string msg = message_of<CompileError>([&] { f.realize(std::vector<int>{}, gpu_target); });
    EXPECT_CONTAINS(msg, "In the schedule of f.update(0), atomic() makes each read-modify-write "
                         "of f one atomic operation, which exists for f(p) = f(p) op x with op in "
                         "+, *, min, max, & | ^ on a single value.");
    // A Tuple.
    Func g("g");
    g() = Tuple(0.0f, 0.0f);
    g() = Tuple(g()[0] + in(r), g()[1] + in(r)*in(r));
    g.update().atomic().split(r.x, rb, rt, 32).gpu_blocks(rb).gpu_threads(rt);
    msg = message_of<CompileError>([&] { g.realize(std::vector<int>{}, gpu_target); });
    EXPECT_CONTAINS(msg, "a Tuple has no atomic form");
    // A bool.
    Func h("h");
    h() = cast<bool>(false);
    h() = max(h(), in(r) > 0.5f);
    h.update().atomic().split(r.x, rb, rt, 32).gpu_blocks(rb).gpu_threads(rt);
    msg = message_of<CompileError>([&] { h.realize(std::vector<int>{}, gpu_target); });
    EXPECT_CONTAINS(msg, "atomic() updates h of type bool, but atomic operations exist for "
                         "integers of 8 to 64 bits and for floats. Accumulate in an integer or "
                         "float type.");
    // On a pure definition.
    Func p("p");
    Var x("x");
    p(x) = x;
    msg = message_of<CompileError>([&] { Stage(p.function(), 0).atomic(); });
    EXPECT_CONTAINS(msg, "atomic() applies to updates");
    // Blocks over a reduction variable without atomic().
    Func q("q");
    q() = 0.0f;
    q() += in(r);
    msg = message_of<CompileError>([&] { q.update().gpu_blocks(r.x); });
    EXPECT_CONTAINS(msg, "gpu_blocks(r.x) could race");
    EXPECT_CONTAINS(msg, "or make the update atomic() first.");
}

} // namespace

namespace {

// A product on tensor cores as apps/common/GemmGPU.h schedules it, with one thing changed.
struct MMASchedule {
    int n_split = 8;           // the extent of the mma's n loop
    int k_total = 64;          // the reduction's extent
    int staging_threads_x = 4; // the staged tile's threads along x
    bool add_one = false;      // the update adds a(k, y) * b(x, k) + 1
    bool times_two = false;    // the update adds a(k, y) * b(x, k) * 2
    bool mma_over_ko = false;  // gpu_mma(xm, ym, ko): ko lies outside the warps' loop
    Type input_b = BFloat(16); // A is bfloat16
    bool row_groups = false;   // blocks in groups of 2 rows of tiles (byi innermost), prod at bx
    bool swapped = false;      // gpu_mma(ym, xm, ki): the rows' loop first
};

Func mma_pipeline(const MMASchedule &s) {
    Buffer<> A(BFloat(16), {s.k_total, 64}, "A"), B(s.input_b, {128, s.k_total}, "B");
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty"), xl("xl"), yh("yh"), xt("xt"),
        yt("yt"), wz("wz"), xm("xm"), ym("ym"), t("t"), tz("tz"), xv("xv"), xo("xo");
    RVar ko("ko"), ki("ki");
    RDom k(0, s.k_total, "k");
    Func a("a"), b("b"), prod("prod"), out("out");
    a(x, y) = A(x, y);
    b(x, y) = B(x, y);
    prod(x, y) = 0.0f;
    Expr term = cast<float>(a(k, y)) * cast<float>(b(x, k));
    prod(x, y) += s.add_one ? term + 1.0f : s.times_two ? term * 2.0f : term;
    out(x, y) = prod(x, y);
    auto fragments = [&](Stage st) {
        st.split(x, wz, x, 32).split(x, xt, x, 8).split(x, tx, xl, 2).split(y, yt, y, 16);
        st.split(y, yh, ty, 8).reorder(xl, yh, xt, yt, tx, ty, wz).gpu_threads(tx, ty, wz);
    };
    out.tile(x, y, bx, by, x, y, 128, 64);
    if (s.row_groups) {
        Var byi("byi");
        out.split(by, by, byi, 2, TailStrategy::GuardWithIf)
            .reorder(byi, bx)
            .gpu_blocks(byi, bx, by);
    } else {
        out.gpu_blocks(bx, by);
    }
    fragments(Stage(out.function(), 0));
    prod.compute_at(out, bx).store_in(MemoryType::Register);
    fragments(Stage(prod.function(), 0));
    prod.update()
        .split(x, wz, x, 32)
        .split(x, xt, xm, s.n_split)
        .split(y, yt, ym, 16)
        .split(k, ko, ki, 16)
        .reorder(xm, ym, ki, xt, yt, wz, ko)
        .gpu_threads(wz)
        .gpu_mma(s.swapped ? ym : xm, s.swapped ? xm : ym, s.mma_over_ko ? ko : ki);
    for (Func f : {a, b})
        f.compute_at(prod, ko).split(x, xo, xv, 8).fuse(xo, y, t).split(t, tz, t, 32);
    a.split(t, ty, tx, s.staging_threads_x).gpu_threads(tx, ty, tz);
    b.split(t, ty, tx, 4).gpu_threads(tx, ty, tz);
    return out;
}

std::string mma_error(const MMASchedule &s, const Target &target = gpu_target) {
    return message_of<CompileError>([&] { mma_pipeline(s).realize({128, 64}, target); });
}

} // namespace

// gpu_mma refuses what the instruction cannot do, naming the stage, the loops and the fix.
TEST(GPUScheduleErrors, TensorCores) {
    std::string msg = mma_error({}, Target("host"));
    EXPECT_CONTAINS(msg, "prod.update(0) runs gpu_mma(xm, ym, ki)");
    EXPECT_CONTAINS(msg, "sm_80 or later");

    MMASchedule wide;
    wide.n_split = 16;
    msg = mma_error(wide);
    EXPECT_CONTAINS(msg, "n (columns) loop xm must have extent 8, but it has 16");

    MMASchedule swapped;
    swapped.swapped = true;
    msg = mma_error(swapped);
    EXPECT_CONTAINS(msg, "whose n (columns) loop must have extent 8 and m (rows) loop extent 16, "
                         "but its n loop ym has 16 and its m loop xm has 8: the arguments look "
                         "swapped. gpu_mma takes the columns' loop first: gpu_mma(xm, ym, ki).");

    MMASchedule ragged;
    ragged.k_total = 72;
    msg = mma_error(ragged);
    EXPECT_CONTAINS(msg, "but a test guards the update: if (");
    EXPECT_CONTAINS(msg, "give the reduction an extent that is a multiple of the instruction's k "
                         "(16)");
    EXPECT_CONTAINS(msg, "select(k < K, A(min(k, K - 1), y), 0)");
    EXPECT_CONTAINS(msg, "give prod a bound_extent of whole tiles where its consumer's tail is "
                         "guarded (GuardWithIf)");

    // The accumulator computed at a block loop with another inside: named as such, not by
    // the guard on the update that follows from it.
    MMASchedule grouped;
    grouped.row_groups = true;
    msg = mma_error(grouped);
    EXPECT_CONTAINS(msg, "Func prod is stored at the GPU block loop bx of out, between it and "
                         "an inner block loop of the same kernel. Store and compute prod at the "
                         "innermost block loop");

    MMASchedule affine;
    affine.add_one = true;
    msg = mma_error(affine);
    EXPECT_CONTAINS(msg, "does not add a product");

    MMASchedule scaled;
    scaled.times_two = true;
    msg = mma_error(scaled);
    EXPECT_CONTAINS(msg, "multiplies the operands' product by a third factor, 2.0f (scale an "
                         "operand's definition, or the result in a later stage)");

    MMASchedule outside;
    outside.mma_over_ko = true;
    msg = mma_error(outside);
    EXPECT_CONTAINS(msg, "prod.update(0) runs gpu_mma(xm, ym, ko), which must be its innermost "
                         "three loops, inside its thread loop over warps, but the loop ko lies "
                         "outside the thread loop wz. Reorder the stage.");

    MMASchedule mixed_types;
    mixed_types.input_b = Float(16);
    msg = mma_error(mixed_types);
    EXPECT_CONTAINS(msg, "multiplies a bfloat16 by a float16");

    MMASchedule mixed_warps;
    mixed_warps.staging_threads_x = 8;
    msg = mma_error(mixed_warps);
    EXPECT_CONTAINS(msg, "runs 8 threads along x (at most 4 fit)");
    EXPECT_CONTAINS(msg, "the loop tx of a runs");

    Func f("f");
    Var x("x");
    f(x) = 0.0f;
    msg = message_of<CompileError>([&] { Stage(f.function(), 0).gpu_mma(x, x, x); });
    EXPECT_CONTAINS(msg, "gpu_mma() applies to an update");
}

// A tensor-core operand staged in registers, each thread holding the part its loader
// computes: the fragments read other threads' parts (the read inside the mma's let was not
// checked, and the kernel read outside its registers).
TEST(GPUScheduleErrors, TensorCoreOperandInOtherThreadsRegisters) {
    Buffer<> A(BFloat(16), {32, 16}, "A"), B(BFloat(16), {8, 32}, "B");
    Var x("x"), y("y"), kk("kk"), bx("bx"), by("by"), xi("xi"), yi("yi"), tx("tx"), ty("ty"),
        xv("xv"), yv("yv"), w("w"), xw("xw"), wx("wx"), xn("xn"), t("t"), kv("kv"), yo("yo"),
        yt("yt");
    RVar ko("ko"), ki("ki");
    RDom r(0, 32, "r");
    Func a("a"), b("b"), prod("prod"), out("out");
    a(kk, y) = A(kk, y);
    b(x, kk) = B(x, kk);
    prod(x, y) = 0.0f;
    prod(x, y) += cast<float>(a(r, y)) * cast<float>(b(x, r));
    out(x, y) = prod(x, y);
    out.tile(x, y, bx, by, xi, yi, 8, 16)
        .split(xi, w, xw, 8)
        .split(xw, tx, xv, 2)
        .split(yi, yv, ty, 8)
        .reorder(xv, yv, tx, ty, w, bx, by)
        .gpu_blocks(bx, by)
        .gpu_threads(tx, ty, w);
    prod.compute_at(out, bx).store_in(MemoryType::Register);
    prod.split(x, w, xw, 8)
        .split(xw, tx, xv, 2)
        .split(y, yv, ty, 8)
        .reorder(xv, yv, tx, ty, w)
        .gpu_threads(tx, ty, w);
    prod.update()
        .split(r, ko, ki, 16)
        .split(x, wx, xn, 8)
        .reorder(xn, y, ki, wx, ko)
        .gpu_threads(wx)
        .gpu_mma(xn, y, ki);
    a.compute_at(prod.update(), ko)
        .store_in(MemoryType::Register)
        .split(kk, t, kv, 4)
        .split(y, yo, yt, 8)
        .reorder(kv, yo, t, yt)
        .gpu_threads(t, yt);
    b.compute_at(prod.update(), ko)
        .store_in(MemoryType::GPUShared)
        .split(x, t, kv, 2)
        .split(kk, yo, yt, 8)
        .reorder(kv, yo, t, yt)
        .gpu_threads(t, yt);
    std::string msg = message_of<CompileError>([&] { out.realize({8, 16}, gpu_target); });
    EXPECT_CONTAINS(msg, "Func a is stored in registers at the GPU block loop bx of out");
    // The fragments' lanes step through a at 2 points a thread, its loaders at 4.
    EXPECT_CONTAINS(msg, "reads it at another scale in dimension 0: from one thread to the next "
                         "in x the point read moves by 2 and the point computed by 4");
    EXPECT_CONTAINS(msg, "Store a in GPUShared (not a tensor-core accumulator");
}

// A tensor-core accumulator in registers whose consumer's tiles guard their tails: the region
// the consumer reads depends on the tile, which the message says, with the tails that keep
// tiles whole; with the default tail the same schedule runs (checked against double
// precision).
TEST(GPUScheduleErrors, TensorCoreAccumulatorUnderAGuardedConsumer) {
    const int N = 37, M = 50, K = 40;
    Buffer<bfloat16_t> A({K, M}, "A"), B({N, K}, "B");
    for (int j = 0; j < M; j++)
        for (int i = 0; i < K; i++)
            A(i, j) = bfloat16_t(float((i * 5 + j * 3) % 17) / 16.0f - 0.5f);
    for (int j = 0; j < K; j++)
        for (int i = 0; i < N; i++)
            B(i, j) = bfloat16_t(float((i * 7 + j) % 13) / 12.0f - 0.5f);
    auto build = [&](TailStrategy t) {
        Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi"), tx("tx"), ty("ty"), xv("xv"),
            yv("yv"), cxo("cxo"), cyo("cyo"), cxi("cxi"), cyi("cyi"), uxo("uxo"), uyo("uyo"),
            uxi("uxi"), uyi("uyi");
        RVar ko("ko"), ki("ki");
        RDom k(0, (K + 15) / 16 * 16, "k");
        Func C("C"), out("out");
        Expr a = select(k.x < K, A(min(k.x, K - 1), y), cast(BFloat(16), 0));
        Expr b = select(k.x < K, B(x, min(k.x, K - 1)), cast(BFloat(16), 0));
        C(x, y) = 0.0f;
        C(x, y) += cast<float>(a) * cast<float>(b);
        out(x, y) = C(x, y);
        out.split(x, xo, xi, 8, t).split(xi, tx, xv, 2).split(y, yo, yi, 16, t);
        out.split(yi, yv, ty, 8).reorder(xv, yv, tx, ty, xo, yo).gpu_blocks(xo, yo);
        out.gpu_threads(tx, ty);
        C.compute_at(out, xo).store_in(MemoryType::Register);
        C.split(x, cxo, cxi, 8, TailStrategy::RoundUp).split(cxi, tx, xv, 2);
        C.split(y, cyo, cyi, 16, TailStrategy::RoundUp).split(cyi, yv, ty, 8);
        C.reorder(xv, yv, tx, ty, cxo, cyo).gpu_threads(tx, ty);
        C.update()
            .split(x, uxo, uxi, 8, TailStrategy::RoundUp)
            .split(y, uyo, uyi, 16, TailStrategy::RoundUp)
            .split(k.x, ko, ki, 16)
            .reorder(uxi, uyi, ki, ko, uxo, uyo)
            .gpu_threads(uyo)
            .gpu_mma(uxi, uyi, ki);
        return out;
    };
    const std::string msg = message_of<CompileError>([&] {
        build(TailStrategy::GuardWithIf).realize({N, M}, gpu_target);
    });
    EXPECT_CONTAINS(msg, "reads another thread's part in dimension 0: how far depends on the "
                         "tile");
    EXPECT_CONTAINS(msg, "where the splits of C and of its consumers treat their tails "
                         "differently");
    Buffer<float> o = build(TailStrategy::Auto).realize({N, M}, gpu_target)[0];
    o.copy_to_host();
    for (int j = 0; j < M; j++) {
        for (int i = 0; i < N; i++) {
            double want = 0;
            for (int q = 0; q < K; q++)
                want += double(float(A(q, j))) * double(float(B(i, q)));
            ASSERT_NEAR(o(i, j), want, 1e-4 * (1 + std::fabs(want))) << i << ", " << j;
        }
    }
}

// swizzle_storage: a Func of one dimension, and rows the swizzle cannot permute.
TEST(GPUScheduleErrors, SwizzledStorage) {
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    Func line("line");
    line(x) = x;
    std::string msg = message_of<CompileError>([&] { line.swizzle_storage(); });
    EXPECT_CONTAINS(msg, "swizzle_storage on Func line: the swizzle permutes the 16-byte pieces "
                         "of each row by the row's index, but line has one dimension.");
    Buffer<float> in({48, 48}, "in");
    Func tile("tile"), out("out");
    tile(x, y) = in(x, y);
    out(x, y) = tile(x, y) * 2.0f;
    out.gpu_tile(x, y, bx, by, tx, ty, 12, 8);
    tile.compute_at(out, bx).store_in(MemoryType::GPUShared).gpu_threads(x, y).swizzle_storage();
    msg = message_of<CompileError>([&] { out.realize({48, 48}, gpu_target); });
    EXPECT_CONTAINS(msg, "swizzle_storage on Func tile: its rows (dimension x, stored innermost) "
                         "are 48 bytes long, but the swizzle permutes the 16-byte pieces of rows "
                         "of 32, 64 or a multiple of 128 bytes.");
    EXPECT_CONTAINS(msg, "or pad it (align_storage).");
    // Rows that padding made the wrong length: the message names the padding.
    Func padded("padded"), out4("out4");
    padded(x, y) = in(x, y);
    out4(x, y) = padded(x, y) * 2.0f;
    out4.gpu_tile(x, y, bx, by, tx, ty, 8, 8);
    padded.compute_at(out4, bx)
        .store_in(MemoryType::GPUShared)
        .gpu_threads(x, y)
        .align_storage(x, 12)
        .swizzle_storage();
    msg = message_of<CompileError>([&] { out4.realize({48, 48}, gpu_target); });
    EXPECT_CONTAINS(msg, "are 48 bytes long, which its align_storage(x, 12) pads them to, but the "
                         "swizzle permutes");
    EXPECT_CONTAINS(msg, "A swizzle replaces padding: remove the align_storage");

    // Anywhere but shared memory the swizzle would do nothing: refused, not ignored.
    Func root("root"), out2("out2");
    root(x, y) = in(x, y);
    out2(x, y) = root(x, y) * 2.0f;
    out2.gpu_tile(x, y, bx, by, tx, ty, 16, 8);
    root.compute_root().gpu_tile(x, y, bx, by, tx, ty, 16, 8).swizzle_storage();
    msg = message_of<CompileError>([&] { out2.realize({48, 48}, gpu_target); });
    EXPECT_CONTAINS(msg, "swizzle_storage on Func root: the swizzle lays out a tile in GPU shared "
                         "memory, but root is stored in device or host memory.");
    Func held("held"), out3("out3");
    held(x, y) = in(x, y);
    out3(x, y) = held(x, y) * 2.0f;
    out3.gpu_tile(x, y, bx, by, tx, ty, 16, 8);
    held.compute_at(out3, tx).store_in(MemoryType::Register).swizzle_storage();
    msg = message_of<CompileError>([&] { out3.realize({48, 48}, gpu_target); });
    EXPECT_CONTAINS(msg, "but held is stored in registers.");
    Func swizzled_out("swizzled_out");
    swizzled_out(x, y) = in(x, y);
    swizzled_out.gpu_tile(x, y, bx, by, tx, ty, 16, 8).swizzle_storage();
    msg = message_of<CompileError>([&] { swizzled_out.realize({48, 48}, gpu_target); });
    EXPECT_CONTAINS(msg, "Func swizzled_out is an output of the pipeline, so it is computed at the "
                         "root into the buffer realize() is given; it cannot be swizzled");
}

namespace {

// out(x, y) = the sum over k of lhs(k, y) * rhs(x, k), each 16 x 16 block's part of it in prod
// on the block's threads, its reduction split by `k_split` (ko outside, ki inside).
struct StagedProduct {
    Var x{"x"}, y{"y"}, bx{"bx"}, by{"by"}, tx{"tx"}, ty{"ty"};
    RVar ko{"ko"}, ki{"ki"};
    Func prod{"prod"}, out{"out"};
    StagedProduct(const Func &lhs, const Func &rhs, int k_total, int k_split) {
        RDom k(0, k_total, "k");
        prod(x, y) = 0.0f;
        prod(x, y) += lhs(k, y) * rhs(x, k);
        out(x, y) = prod(x, y);
        out.gpu_tile(x, y, bx, by, tx, ty, 16, 16);
        prod.compute_at(out, bx).gpu_threads(x, y);
        prod.update().split(k, ko, ki, k_split).reorder(ki, x, y, ko).gpu_threads(x, y);
    }
};

Func copy_of(const Buffer<float> &b, const std::string &name) {
    Var x("x"), y("y");
    Func f(name);
    f(x, y) = b(x, y);
    return f;
}

} // namespace

// gpu_pipeline with asynchronous copies: two tiles at one loop with different stages, or one
// of them without.
TEST(GPUScheduleErrors, AsyncPipeline) {
    Buffer<float> A({64, 64}, "A"), B({64, 64}, "B");
    aicf_test::fill_random(A, -1, 1, 31);
    aicf_test::fill_random(B, -1, 1, 32);
    // The schedules that run, against a plain loop of lhs(k, j) * B(i, k).
    auto expect_product = [&](Func out, const std::function<double(int, int)> &lhs) {
        Buffer<float> o = out.realize({64, 64}, gpu_target);
        o.copy_to_host();
        for (int j = 0; j < 64; j += 3) {
            for (int i = 0; i < 64; i += 5) {
                double want = 0;
                for (int kk = 0; kk < 64; kk++)
                    want += lhs(kk, j) * B(i, kk);
                ASSERT_TRUE(aicf_test::close(o(i, j), want, 1e-4, 1e-4)) << i << "," << j;
            }
        }
    };
    auto product = [&](int a_stages, int b_stages) {
        Func a = copy_of(A, "a"), b = copy_of(B, "b");
        StagedProduct p(a, b, 64, 8);
        a.compute_at(p.prod, p.ko).gpu_threads(p.x, p.y);
        a.gpu_pipeline(a_stages, PipelineCopy::Async);
        b.compute_at(p.prod, p.ko).gpu_threads(p.x, p.y);
        if (b_stages > 1) b.gpu_pipeline(b_stages, PipelineCopy::Async);
        return p.out;
    };
    std::string msg = message_of<CompileError>([&] {
        product(3, 2).realize({64, 64}, gpu_target);
    });
    EXPECT_CONTAINS(msg, "both are staged at ko of prod.update(0) with asynchronous copies, in 3 "
                         "and 2 stages");
    msg = message_of<CompileError>([&] { product(3, 1).realize({64, 64}, gpu_target); });
    EXPECT_CONTAINS(msg, "b is also staged in shared memory at ko of prod.update(0), without "
                         "asynchronous copies");
    // A tile computed from a pipelined tile of the same iteration (scores from a key tile)
    // cannot be copied ahead of it, pipelined or not.
    for (bool pipelined : {true, false}) {
        Var x("x"), y("y");
        Func a = copy_of(A, "a"), s("s");
        s(x, y) = a(x, y) * 2.0f;
        StagedProduct p(s, copy_of(B, "b"), 64, 8);
        a.compute_at(p.prod, p.ko).gpu_threads(x, y).gpu_pipeline(2, PipelineCopy::Async);
        s.compute_at(p.prod, p.ko).store_in(MemoryType::GPUShared).gpu_threads(x, y);
        if (pipelined) s.gpu_pipeline(2, PipelineCopy::Async);
        msg = message_of<CompileError>([&] { p.out.realize({64, 64}, gpu_target); });
        if (pipelined) {
            EXPECT_CONTAINS(msg, "gpu_pipeline on Func s: its definition reads a, which the "
                                 "kernel writes inside the loop ko of prod.update(0) that s is "
                                 "staged at, so its next values cannot be copied ahead.");
        } else {
            EXPECT_CONTAINS(msg, "gpu_pipeline on Func a: s is also staged in shared memory at "
                                 "ko of prod.update(0) and computed from a in each iteration");
            EXPECT_CONTAINS(msg, "Keep s out of shared memory at this loop");
        }
    }
    // Tiles past the shared memory a block has: the message says what each stage costs.
    {
        Buffer<float> wide_a({8192, 16}, "wide_a"), wide_b({16, 8192}, "wide_b");
        Func a = copy_of(wide_a, "a");
        StagedProduct p(a, copy_of(wide_b, "b"), 8192, 1024);
        Var xo("xo"), xi("xi");
        a.compute_at(p.prod, p.ko)
            .split(p.x, xo, xi, 16)
            .gpu_threads(xi, p.y)
            .gpu_pipeline(4, PipelineCopy::Async);
        msg = message_of<CompileError>([&] { p.out.realize({16, 16}, gpu_target); });
        EXPECT_CONTAINS(msg, "bytes of shared memory per block, more than the");
        EXPECT_CONTAINS(msg, "(one buffer per stage of its gpu_pipeline: fewer stages make it "
                             "smaller)");
    }
    // A pipelined tile with an update definition: the update would read the tile before its
    // copies are waited for. Refused for asynchronous copies as for copies through registers.
    for (PipelineCopy copy : {PipelineCopy::Async, PipelineCopy::Registers}) {
        Var x("x"), y("y");
        Func a = copy_of(A, "a");
        a(x, y) = a(x, y) * 2.0f;
        StagedProduct p(a, copy_of(B, "b"), 64, 8);
        a.compute_at(p.prod, p.ko).gpu_threads(x, y).gpu_pipeline(2, copy);
        a.update().gpu_threads(x, y);
        msg = message_of<CompileError>([&] { p.out.realize({64, 64}, gpu_target); });
        if (copy == PipelineCopy::Async) {
            EXPECT_CONTAINS(msg, "gpu_pipeline on Func a: a has an update definition, which reads "
                                 "the tile a is copying; its copies are made 1 iteration of the "
                                 "loop ko of prod.update(0) ahead");
        } else {
            EXPECT_CONTAINS(msg, "gpu_pipeline on Func a: its definition reads a, which the "
                                 "kernel writes inside the loop ko of prod.update(0)");
        }
        // Without the pipeline, the same schedule is right (against a plain loop).
        a.gpu_pipeline(1);
        expect_product(p.out, [&](int k, int j) { return 2.0 * A(k, j); });
    }
    // A bfloat16 tile copied an element per thread: 2-byte copies, which no cp.async makes, so
    // the pipeline would wait on nothing. Refused, naming the width; vectorized to 16 bytes, the
    // same product runs (against a plain loop).
    Buffer<bfloat16_t> H({64, 64}, "H");
    aicf_test::fill_random(H, -1, 1, 33);
    // A float tile vectorized by 8 (32 bytes): two 16-byte copies each, against a plain loop.
    {
        Var x("x"), y("y"), xo("xo"), xi("xi");
        Func a = copy_of(A, "a");
        StagedProduct p(a, copy_of(B, "b"), 64, 8);
        a.compute_at(p.prod, p.ko).store_in(MemoryType::GPUShared);
        a.split(x, xo, xi, 8).vectorize(xi).gpu_threads(xo, y);
        a.gpu_pipeline(2, PipelineCopy::Async);
        expect_product(p.out, [&](int k, int j) { return double(A(k, j)); });
        EXPECT_CONTAINS(p.out.ptx(gpu_target), "cp.async.cg.shared.global");
    }
    for (bool vectorized : {false, true}) {
        Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty"), xo("xo"), xi("xi");
        RDom k(0, 64, "k");
        RVar ko("ko"), ki("ki");
        Func h("h"), prod("prod"), out("out");
        h(x, y) = H(x, y);
        prod(x, y) = 0.0f;
        prod(x, y) += cast<float>(h(k, y)) * B(x, k);
        out(x, y) = prod(x, y);
        out.gpu_tile(x, y, bx, by, tx, ty, 16, 16);
        prod.compute_at(out, bx).gpu_threads(x, y);
        prod.update().split(k, ko, ki, 8).reorder(ki, x, y, ko).gpu_threads(x, y);
        h.compute_at(prod, ko).store_in(MemoryType::GPUShared);
        h.gpu_pipeline(2, PipelineCopy::Async);
        if (!vectorized) {
            h.gpu_threads(x, y);
            msg = message_of<CompileError>([&] { out.realize({64, 64}, gpu_target); });
            EXPECT_CONTAINS(msg, "gpu_pipeline(2, PipelineCopy::Async) on Func h: h's tile is "
                                 "copied from the input 2 bytes (a bfloat16) at a time, but "
                                 "cp.async copies 4, 8 or 16 bytes (a wider vector in 16-byte "
                                 "pieces). Vectorize the innermost loop of h by 8 (16 bytes) or a "
                                 "multiple of it");
            continue;
        }
        h.split(x, xo, xi, 8).vectorize(xi).gpu_threads(xo, y);
        expect_product(out, [&](int k, int j) { return double(float(H(k, j))); });
    }
}

// A Func computed inside a kernel's loops whose region passes the 32-bit coordinates is
// refused on the host, before the launch, over all of the kernel's iterations; just inside
// them the values are exact.
// A check that fails inside a kernel on the simulator says what its host form says (here a
// bound() smaller than a block's region of a tile in shared memory), with the values the
// failing thread saw, not the lowered condition.
// A row held in registers striped across a warp's lanes, 100 wide: split by 32 with the
// default tail, the last stripe shifts inwards and the array has no constant layout; the
// message says so and names the tail to use, with which the schedule runs (checked against a
// plain loop).
// A Func striped over 4 threads (its outer split a loop of the block) read by a consumer of
// 8 threads: threads 4 to 7 would read registers they never wrote. Refused for every tail of
// the consumer, with the reading thread named as the user wrote it.
TEST(GPUScheduleErrors, StripedRegistersReadByMoreThreadsThanHoldThem) {
    for (TailStrategy t : {TailStrategy::ShiftInwards, TailStrategy::RoundUp}) {
        Buffer<float> A({40}, "A");
        Var i("i"), io("io"), ii("ii"), si("si"), ti("ti");
        Func f("f"), O("O");
        f(i) = A(i) * 3.0f;
        O(i) = f(i) + 1.0f;
        O.split(i, io, ii, 8, t).gpu_blocks(io).gpu_threads(ii);
        f.compute_at(O, io)
            .store_in(MemoryType::Register)
            .split(i, si, ti, 4, TailStrategy::GuardWithIf)
            .gpu_threads(ti);
        const std::string msg = message_of<CompileError>([&] { O.realize({40}, gpu_target); });
        EXPECT_CONTAINS(msg, "f(i) may read an element another thread holds");
        EXPECT_CONTAINS(msg, "held by thread x = (ii % 4)");
        EXPECT_EQ(msg.find("__thread"), std::string::npos) << msg;
        EXPECT_EQ(msg.find("buffer_get"), std::string::npos) << msg;
    }
}

// A Func in registers computed in thread loops that also store another Func to shared
// memory, with no loop along y: those loops run on the first thread along y only, so a
// consumer on threads along y would read registers never computed. Refused; computing the
// shared Func at the block loop instead runs, against a plain loop.
TEST(GPUScheduleErrors, RegistersComputedBesideSharedStoresOnOneThreadAlongY) {
    const int W = 16, H = 13;
    Buffer<int> in({W, 16}, "in"); // 16 rows: what f's tiles of 4 rows read
    for (int y = 0; y < 16; y++)
        for (int x = 0; x < W; x++)
            in(x, y) = (x * 7 + y * 13) % 101 - 50;
    for (bool at_block : {false, true}) {
        Var x("x"), i("i"), io("io"), ii("ii");
        Func g("g"), f("f"), O("O");
        g(x, i) = in(x, i) * 2;
        f(x, i) = g(x, i) + i;
        O(x, i) = f(x, i) + 1;
        O.bound(x, 0, W)
            .split(i, io, ii, 4, TailStrategy::GuardWithIf)
            .gpu_blocks(io)
            .gpu_threads(x, ii);
        f.compute_at(O, io)
            .store_in(MemoryType::Register)
            .gpu_threads(x)
            .bound_extent(i, 4)
            .unroll(i);
        if (at_block) {
            g.compute_at(O, io).store_in(MemoryType::GPUShared).gpu_threads(x);
        } else {
            g.store_at(O, io).compute_at(f, x).store_in(MemoryType::GPUShared);
            const std::string msg = message_of<CompileError>([&] {
                O.realize({W, H}, gpu_target);
            });
            EXPECT_CONTAINS(msg, "Func f is stored in registers and computed in GPU thread loops "
                                 "(x of f) that also store to shared or device memory (a Func "
                                 "computed inside them), with no thread loop along y");
            EXPECT_CONTAINS(msg, "Compute what the thread loops of f store outside them (at the "
                                 "block loop)");
            continue;
        }
        aicf_test::ScopedEnv sim("AICF_DEVICE", "sim");
        Buffer<int> out = O.realize({W, H}, gpu_target);
        out.copy_to_host();
        for (int y = 0; y < H; y++)
            for (int c = 0; c < W; c++)
                ASSERT_EQ(out(c, y), in(c, y) * 2 + y + 1) << c << ", " << y;
    }
}

TEST(GPUScheduleErrors, StripedRegistersUnderAShiftedTail) {
    const int W = 100, H = 3;
    Buffer<float> in({W, H}, "in");
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++)
            in(i, j) = float((i * 7 + j) % 13);
    auto build = [&](TailStrategy t) {
        Var x("x"), y("y"), xo("xo"), xl("xl"), yo("yo"), yi("yi");
        RDom r(0, W, "r");
        RVar ro("ro"), rl("rl");
        Func row("row"), s("s"), out("out");
        row(x, y) = in(x, y);
        s(y) = 0.0f;
        s(y) += row(r, y);
        out(x, y) = row(x, y) - s(y) / float(W);
        out.bound(x, 0, W).split(y, yo, yi, 2, TailStrategy::GuardWithIf);
        out.gpu_blocks(yo).gpu_threads(yi);
        out.split(x, xo, xl, 32, t).reorder(xo, xl).gpu_lanes(xl).unroll(xo);
        row.compute_at(out, yi).store_in(MemoryType::Register);
        row.split(x, xo, xl, 32, t).reorder(xo, xl).gpu_lanes(xl).unroll(xo);
        s.compute_at(out, yi);
        s.update()
            .split(r.x, ro, rl, 32, TailStrategy::GuardWithIf)
            .reorder(ro, rl)
            .gpu_lanes(rl)
            .unroll(ro);
        return out;
    };
    const std::string msg = message_of<CompileError>([&] {
        build(TailStrategy::Auto).realize({W, H}, gpu_target);
    });
    EXPECT_CONTAINS(msg, "the loop xo of row does not step by a constant along the striped "
                         "dimension");
    EXPECT_CONTAINS(msg, "split with TailStrategy::GuardWithIf");
    Buffer<float> o = build(TailStrategy::GuardWithIf).realize({W, H}, gpu_target)[0];
    o.copy_to_host();
    for (int j = 0; j < H; j++) {
        double mean = 0;
        for (int i = 0; i < W; i++)
            mean += in(i, j);
        mean /= W;
        for (int i = 0; i < W; i++)
            ASSERT_NEAR(o(i, j), in(i, j) - mean, 1e-4) << i << ", " << j;
    }
}

// Where the region over the whole pipeline is too loose a bound, each block's region is
// checked before the kernel; its message says it is one block's. Here b's tiles of 64 rows
// shift inwards over 33 rows, so a computes rows [-31, 32], one row a block, each reading
// its row of in.
TEST(GPURuntimeErrors, ARegionCheckedPerBlockSaysSo) {
    Buffer<float> in({4, 33}, "in");
    aicf_test::fill_random(in, -1.0, 1.0, 8);
    Var x("x"), y("y"), yo("yo"), yi("yi"), xo("xo"), xi("xi");
    Func row("row"), a("a"), b("b"), out("out");
    row(x, y) = in(x, y) + 1.0f;
    a(x, y) = row(x, y) * 3.0f;
    a.compute_root().bound(x, 0, 4).gpu_blocks(y).gpu_threads(x);
    row.compute_at(a, y).gpu_threads(x);
    b(x, y) = a(x, y) * 2.0f;
    b.compute_root().split(y, yo, yi, 64).gpu_blocks(yo).gpu_threads(yi);
    out(x, y) = b(x, y) + in(x, y);
    out.gpu_tile(x, y, xo, yo, xi, yi, 4, 1);
    aicf_test::ScopedEnv sim("AICF_DEVICE", "sim");
    const std::string msg = message_of<RuntimeError>([&] { out.realize({4, 33}, gpu_target); });
    EXPECT_CONTAINS(msg, "Buffer in is too small: dimension 1 must cover [-31, -31] (what one "
                         "block of the kernel over loop y of a reads), but it covers [0, 32].");
}

// A check that depends on the block stays in the kernel. There a failed check writes its
// message's values to the kernel's check slot and leaves the kernel; the host raises the
// message. A trap would leave a GPU's CUDA context unusable for the rest of the process.
TEST(GPURuntimeErrors, AFailedCheckInAKernelSaysWhatFailed) {
    Buffer<float> in({64, 33}, "in");
    aicf_test::fill_random(in, -1.0, 1.0, 7);
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    // f bound in dimension `d` to [0, extent), where extent > 0.
    auto build = [&](int d, int extent) {
        Func f("f"), out("out");
        f(x, y) = in(x, y) * 2.0f;
        out(x, y) = f(x, y) + f(x, y + 1);
        out.gpu_tile(x, y, bx, by, tx, ty, 32, 8);
        f.compute_at(out, bx).store_in(MemoryType::GPUShared).gpu_threads(x, y);
        if (extent > 0) f.bound(d == 0 ? x : y, 0, extent);
        return out;
    };
    Func bad = build(1, 4);
    const std::string ptx = bad.ptx(gpu_target);
    EXPECT_EQ(ptx.find("trap"), std::string::npos) << ptx;
    EXPECT_NE(ptx.find("atom.global.cas.b64"), std::string::npos) << ptx;
    if (backends::ptxas_available()) {
        EXPECT_CONTAINS(bad.kernel_resources(Target("host-cuda-sm_80")), " registers,");
        EXPECT_CONTAINS(bad.kernel_resources(Target("host-cuda-sm_90")), " registers,");
    }
    for (int run = 0; run < 2; run++) { // the check slot is clean again after a failure
        const std::string msg = message_of<KernelFault>([&] { bad.realize({64, 32}, gpu_target); });
        EXPECT_CONTAINS(msg, "an assertion failed in thread (");
        EXPECT_CONTAINS(msg, ") of block (");
        // Every block fails; the simulator reports its first block, a GPU the first to write.
        EXPECT_CONTAINS(msg, "): Func f is bound to [0, 3] in dimension 1, but its consumers "
                             "need [");
        if (aicf_test::on_simulator()) {
            EXPECT_CONTAINS(msg, "an assertion failed in thread (0, 0, 0) of block (0, 0, 0): "
                                 "Func f is bound to [0, 3] in dimension 1, but its consumers "
                                 "need [0, 8].");
        }
    }
    // The device still runs kernels, and a bound that holds in every block passes its check.
    for (int extent : {0, 64}) {
        Buffer<float> o = build(0, extent).realize({64, 32}, gpu_target)[0];
        o.copy_to_host();
        for (int j = 0; j < 32; j++) {
            for (int i = 0; i < 64; i++) {
                ASSERT_NEAR(o(i, j), 2.0 * in(i, j) + 2.0 * in(i, j + 1), 1e-5)
                    << extent << ": " << i << ", " << j;
            }
        }
    }
    EXPECT_NE(build(0, 64).ptx(gpu_target).find("atom.global.cas.b64"), std::string::npos);
    EXPECT_EQ(build(0, 0).ptx(gpu_target).find("atom.global.cas.b64"), std::string::npos);
}

// A check per thread: a Func computed in each thread of g, bound smaller than what threads
// other than the first need. The failing threads leave the kernel, the others go on to the
// barrier before out reads g (on a GPU it waits only for threads that have not exited).
TEST(GPURuntimeErrors, AFailedCheckInSomeThreadsOfABlock) {
    Buffer<float> in({64, 33}, "in");
    aicf_test::fill_random(in, -1.0, 1.0, 11);
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    auto build = [&](bool bounded) {
        Func f("f"), g("g"), out("out");
        f(x, y) = in(x, y) * 2.0f;
        g(x, y) = f(x, y) + f(x + 1, y);
        out(x, y) = g(x, y) + g(x, y + 1);
        out.gpu_tile(x, y, bx, by, tx, ty, 16, 8);
        g.compute_at(out, bx).store_in(MemoryType::GPUShared).gpu_threads(x, y);
        f.compute_at(g, x);
        if (bounded) f.bound(x, 0, 2);
        return out;
    };
    const std::string msg = message_of<KernelFault>([&] {
        build(true).realize({32, 32}, gpu_target);
    });
    EXPECT_CONTAINS(msg, "an assertion failed in thread (");
    EXPECT_CONTAINS(msg, "): Func f is bound to [0, 1] in dimension 0, but its consumers need [");
    if (aicf_test::on_simulator()) {
        EXPECT_CONTAINS(msg, "in thread (1, 0, 0) of block (0, 0, 0)");
    }
    Buffer<float> o = build(false).realize({32, 32}, gpu_target)[0];
    o.copy_to_host();
    for (int j = 0; j < 32; j++) {
        for (int i = 0; i < 32; i++) {
            const double want = 2.0 * (in(i, j) + in(i + 1, j) + in(i, j + 1) + in(i + 1, j + 1));
            ASSERT_NEAR(o(i, j), want, 1e-5) << i << ", " << j;
        }
    }
}

TEST(GPURuntimeErrors, RegionsInsideKernelsPastTheInt32Coordinates) {
    const int MX = 2147483647;
    Var x("x"), bx("bx"), tx("tx");
    Func f("f"), g("g");
    f(x) = x / 2;
    g(x) = f(x + 30);
    g.gpu_tile(x, bx, tx, 16);
    f.compute_at(g, tx);
    Buffer<int> out({32});
    out.set_min({MX - 50});
    EXPECT_CONTAINS(message_of<RuntimeError>([&] { g.realize(out, gpu_target); }),
                    "Func f would be computed over [");
    out.set_min({MX - 70});
    g.realize(out, gpu_target);
    out.copy_to_host();
    for (int i = 0; i < 32; i++)
        ASSERT_EQ(out(MX - 70 + i), (int64_t(MX) - 70 + i + 30) / 2) << i;
}

// gpu_single_thread() makes a stage a kernel of its own; computed at another kernel's block
// loop it is refused with a message that names it (it blamed another Func, or spoke of an
// inner block loop the user did not write). At the root it runs, checked against a loop.
TEST(GPUScheduleErrors, SingleThreadStageInsideAnotherKernel) {
    const int W = 40, H = 5;
    Buffer<float> in({W, H}, "in");
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++)
            in(i, j) = float((i * 7 + j * 3) % 11) - 5.0f;
    for (bool root : {false, true}) {
        Var x("x"), y("y"), xo("xo"), xi("xi");
        RDom r(0, W, "r");
        Func st("st"), pre("pre"), out("out");
        pre(x, y) = in(x, y) * 2.0f;
        st(y) = 0.0f;
        st(y) += pre(r, y);
        out(x, y) = pre(x, y) - st(y);
        out.bound(x, 0, W).split(x, xo, xi, 32, TailStrategy::GuardWithIf).reorder(xo, xi, y);
        out.gpu_blocks(y).gpu_threads(xi);
        if (root) {
            st.compute_root().gpu_single_thread();
        } else {
            pre.compute_at(out, y).store_in(MemoryType::GPUShared);
            pre.split(x, xo, xi, 32, TailStrategy::GuardWithIf).gpu_threads(xi);
            st.compute_at(out, y).gpu_single_thread();
        }
        if (!root) {
            EXPECT_CONTAINS(message_of<CompileError>([&] {
                                out.realize({W, H}, gpu_target);
                            }),
                            "Func st runs as one GPU thread (gpu_single_thread()), a kernel of "
                            "its own, but it is computed inside the kernel of loop y of out");
            continue;
        }
        Buffer<float> o = out.realize({W, H}, gpu_target)[0];
        o.copy_to_host();
        for (int j = 0; j < H; j++) {
            float sum = 0;
            for (int i = 0; i < W; i++)
                sum += in(i, j) * 2.0f;
            for (int i = 0; i < W; i++)
                ASSERT_EQ(o(i, j), in(i, j) * 2.0f - sum) << i << "," << j; // small integers
        }
    }
}

// A where() reading the Func it reduces makes each step depend on the ones before: its
// reduction loop cannot run on lanes (each lane would test its own partial sum).
TEST(GPUScheduleErrors, SelfReadingWhereOnLanes) {
    Buffer<int> in({200, 4}, "in");
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 200; i++)
            in(i, j) = (i * 7 + j * 3) % 5 + 1;
    Var y("y"), yo("yo"), yi("yi");
    RVar ro("ro"), lane("lane");
    Func f("f"), out("out");
    RDom k(0, 200, "k");
    f(y) = 0;
    k.where(f(y) < 50);
    f(y) += in(k, y);
    out(y) = f(y);
    out.split(y, yo, yi, 2).gpu_blocks(yo).gpu_threads(yi);
    f.compute_at(out, yi);
    f.update().split(k, ro, lane, 32).gpu_lanes(lane);
    EXPECT_CONTAINS(message_of<CompileError>([&] { out.realize({4}, gpu_target); }),
                    "the where() predicate of its RDom reads f, so each step depends on the "
                    "steps before it, but the reduction loop lane runs on GPU lanes");
}

// A Func in registers per thread over a region whose size grows with the thread (x to 2x):
// refused, naming the size, the splits that would make it constant, and bound_extent.
TEST(GPUScheduleErrors, RegistersOfAGrowingRegion) {
    Buffer<float> in({200}, "in");
    aicf_test::fill_random(in, -1, 1, 71);
    Var x("x"), bx("bx"), tx("tx");
    Func f("f"), g("g");
    f(x) = in(x)*2.0f;
    g(x) = f(x) + f(2 * x);
    g.gpu_tile(x, bx, tx, 8, TailStrategy::GuardWithIf);
    f.compute_at(g, tx);
    const std::string msg = message_of<CompileError>([&] { g.realize({100}, gpu_target); });
    EXPECT_CONTAINS(msg, "Func f is stored in registers in kernel");
    EXPECT_CONTAINS(msg, "which needs a small constant size, but it has f.x.extent_realized "
                         "elements");
    EXPECT_CONTAINS(msg, "split the loops it is computed in by constants; where the region is "
                         "never more than some n points along x, whatever the loop, say so "
                         "with f.bound_extent(x, n)");
}
