// The simulator's counters describe the kernel the GPU runs: the kernel IR it counts makes the
// device-memory accesses the PTX makes. Where the IR would read an element again with
// nothing in between that may change it (the copies of an unrolled loop, a producer and its
// consumer in one thread), or read and write one element at every step of a loop (an update
// over a serial reduction loop), lowering keeps the value in a register, as LLVM would. Each
// kernel here is checked three ways: its results against a plain loop in double precision,
// the simulator's bytes against the accesses the schedule implies, and the global loads and
// stores of its PTX against those of its IR.

#include "GPUTarget.h"
#include "MatmulGPU.h"
#include "Reference.h"
#include "ScopedEnv.h"
#include "StagedProduct.h"

#include "backends/sim/Profile.h"
#include "dsl/aicf.h"
#include "dsl/ir/IRVisitor.h"
#include "lowering/Lower.h"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <set>

using namespace aicf;
using namespace aicf::ir;
using aicf::backends::sim::KernelProfile;

namespace {

const Target gpu_target = aicf_test::gpu_test_target();

struct AccessCounts {
    int loads = 0, stores = 0;
};

// Global loads and stores written in the kernels' IR (each node once).
AccessCounts ir_accesses(const Func &out) {
    std::vector<Function> outputs = {out.function()};
    lowering::LoweredPipeline p =
        lowering::lower(outputs, detail::infer_arguments(outputs), gpu_target);
    AccessCounts n;
    for (const lowering::LoweredKernel &k : p.kernels) {
        std::set<std::string> buffers;
        for (const lowering::KernelArgument &a : k.args)
            if (a.is_buffer) buffers.insert(a.name);
        visit_each<Load>(k.body, [&](const Load *op) { n.loads += buffers.count(op->name); });
        visit_each<Store>(k.body, [&](const Store *op) { n.stores += buffers.count(op->name); });
    }
    return n;
}

// Global loads and stores in the PTX LLVM makes of the same kernels.
AccessCounts ptx_accesses(const Func &out) {
    const std::string ptx = out.ptx(gpu_target);
    AccessCounts n;
    const std::regex ld("\\bld\\.global\\."), st("\\bst\\.global\\.");
    n.loads = int(std::distance(std::sregex_iterator(ptx.begin(), ptx.end(), ld), {}));
    n.stores = int(std::distance(std::sregex_iterator(ptx.begin(), ptx.end(), st), {}));
    return n;
}

void expect_ptx_matches_ir(const Func &out, int loads, int stores) {
    AccessCounts ir = ir_accesses(out), ptx = ptx_accesses(out);
    EXPECT_EQ(ir.loads, loads) << out.lowered_stmt(gpu_target);
    EXPECT_EQ(ir.stores, stores) << out.lowered_stmt(gpu_target);
    EXPECT_EQ(ptx.loads, ir.loads) << out.ptx(gpu_target);
    EXPECT_EQ(ptx.stores, ir.stores) << out.ptx(gpu_target);
}

// Runs `out` on the simulator; its one launch's profile.
template <typename T>
KernelProfile run_one_launch(Func out, const std::vector<int> &sizes, Buffer<T> *result,
                             const Target &target = gpu_target) {
    aicf_test::ScopedEnv sim("AICF_DEVICE", "sim"); // the counters come from the simulator
    backends::sim::ProfileRecorder recorder;
    *result = Buffer<T>(sizes);
    out.realize(*result, target);
    EXPECT_FALSE(recorder.launches().empty());
    return recorder.launches().back();
}

int64_t bytes_loaded(const KernelProfile &k, const std::string &buffer) {
    const backends::sim::BufferTraffic *b = k.find_buffer(buffer);
    return b ? b->bytes_loaded : 0;
}
int64_t bytes_stored(const KernelProfile &k, const std::string &buffer) {
    const backends::sim::BufferTraffic *b = k.find_buffer(buffer);
    return b ? b->bytes_stored : 0;
}

// An inlined value used three times (t * t + t, t = a(x) * 1.5) in a vectorized GPU loop is
// loaded once per vector: the wide access's alignment mark does not keep the expression from
// being shared. With a guarded tail each use was a predicated load of its own, which the PTX
// made lane by lane three times; with the tail shifted inwards, the simulator counted three
// loads where the PTX made one.
TEST(KernelAccesses, AValueUsedThreeTimesIsLoadedOnce) {
    const int N = 1001;
    Buffer<float> a({N}, "a");
    aicf_test::fill_random(a, -2.0, 2.0, 17);
    for (TailStrategy tail : {TailStrategy::GuardWithIf, TailStrategy::ShiftInwards}) {
        SCOPED_TRACE(tail == TailStrategy::GuardWithIf ? "GuardWithIf" : "ShiftInwards");
        Var x("x"), bx("bx"), tx("tx"), xv("xv");
        Func out("out");
        Expr t = a(x) * 1.5f;
        out(x) = t * t + t;
        out.split(x, x, xv, 4, tail).vectorize(xv).gpu_tile(x, bx, tx, 64, tail);
        std::vector<Function> outputs = {out.function()};
        lowering::LoweredPipeline p =
            lowering::lower(outputs, detail::infer_arguments(outputs), gpu_target);
        for (const lowering::LoweredKernel &k : p.kernels) {
            int loads = 0;
            visit_each<Load>(k.body, [&](const Load *op) { loads += op->name == "a"; });
            EXPECT_EQ(loads, 1) << describe_kernel(k);
        }
        Buffer<float> result;
        KernelProfile prof = run_one_launch(out, {N}, &result);
        for (int i = 0; i < N; i++) {
            const double v = double(a(i)) * 1.5;
            ASSERT_NEAR(result(i), v * v + v, 1e-5 * (1 + v * v)) << i;
        }
        // Each element once; shifted inwards, every thread of the last block loads a vector
        // (some of them again).
        const int64_t vectors = (N + 3) / 4, threads = (vectors + 63) / 64 * 64;
        EXPECT_EQ(bytes_loaded(prof, "a"),
                  tail == TailStrategy::GuardWithIf ? int64_t(N) * 4 : threads * 16)
            << prof.to_string();
    }
}

// Three neighbours, four outputs per thread in an unrolled loop: the six elements a thread
// needs are each loaded once, though the unrolled copies name twelve.
TEST(KernelAccesses, UnrolledCopiesLoadEachElementOnce) {
    const int W = 1003;
    Buffer<float> in({W + 2}, "in");
    aicf_test::fill_random(in, -1.0, 1.0, 1);
    Var x("x"), xo("xo"), xi("xi"), bx("bx"), tx("tx");
    Func f("f");
    f(x) = in(x) + in(x + 1) * 2.0f + in(x + 2);
    f.split(x, xo, xi, 4).unroll(xi).gpu_tile(xo, bx, tx, 64);
    expect_ptx_matches_ir(f, 6, 4);

    Buffer<float> out;
    KernelProfile k = run_one_launch(f, {W}, &out);
    for (int i = 0; i < W; i++) {
        double want = double(in(i)) + 2.0 * double(in(i + 1)) + double(in(i + 2));
        ASSERT_NEAR(out(i), want, 1e-5) << "at " << i;
    }
    const int64_t threads = k.blocks() * 64;
    EXPECT_EQ(bytes_loaded(k, "in"), threads * 6 * 4) << k.to_string();
    EXPECT_EQ(bytes_stored(k, "f"), threads * 4 * 4) << k.to_string();
}

// A producer computed by each thread for its own point, and a consumer that reads the same
// input element again: one load.
TEST(KernelAccesses, ProducerAndConsumerInOneThreadShareTheirLoad) {
    const int W = 777;
    Buffer<float> in({W}, "in");
    aicf_test::fill_random(in, 0.5, 2.0, 2);
    Var x("x"), bx("bx"), tx("tx");
    Func g("g"), f("f");
    g(x) = sqrt(in(x)) * 3.0f;
    f(x) = g(x) + g(x) * in(x);
    f.gpu_tile(x, bx, tx, 128);
    g.compute_at(f, tx);
    expect_ptx_matches_ir(f, 1, 1);

    Buffer<float> out;
    KernelProfile k = run_one_launch(f, {W}, &out);
    for (int i = 0; i < W; i++) {
        double v = double(in(i)), gv = std::sqrt(v) * 3.0;
        ASSERT_NEAR(out(i), gv + gv * v, 1e-4 * std::fabs(gv + gv * v)) << "at " << i;
    }
    EXPECT_EQ(bytes_loaded(k, "in"), k.blocks() * 128 * 4) << k.to_string();
}

// An update over an unrolled reduction: the point is loaded once, accumulated in a register
// and stored once; the guard of the tail threads is tested once.
TEST(KernelAccesses, UnrolledUpdateKeepsItsPointInARegister) {
    const int W = 1000, R = 5;
    Buffer<float> in({W + R}, "in"), w({R}, "w");
    aicf_test::fill_random(in, -1.0, 1.0, 3);
    aicf_test::fill_random(w, -1.0, 1.0, 4);
    Var x("x"), bx("bx"), tx("tx");
    RDom r(0, R);
    Func f("f");
    f(x) = 0.5f;
    f(x) += in(x + r) * w(r);
    f.gpu_tile(x, bx, tx, 64);
    f.update().gpu_tile(x, bx, tx, 64).unroll(r);
    // The initialization stores once; the update loads f, R inputs and R weights, stores f.
    expect_ptx_matches_ir(f, 1 + 2 * R, 2);

    Buffer<float> out;
    KernelProfile k = run_one_launch(f, {W}, &out);
    for (int i = 0; i < W; i++) {
        double want = 0.5;
        for (int j = 0; j < R; j++)
            want += double(in(i + j)) * double(w(j));
        ASSERT_NEAR(out(i), want, 1e-5) << "at " << i;
    }
    EXPECT_EQ(bytes_loaded(k, "f"), int64_t(W) * 4) << k.to_string();
    EXPECT_EQ(bytes_stored(k, "f"), int64_t(W) * 4) << k.to_string();
    EXPECT_EQ(bytes_loaded(k, "in"), int64_t(W) * R * 4) << k.to_string();
}

// C(j, i) = init + the sum over k of A(k.x, i) * B(j, k.x), each row k.y of a 2-D k weighted
// k.y + 1, with a thread per point of C: run on the simulator and checked against a plain loop
// over `steps` points of k.x and `reps` rows. The profile of the update's launch.
KernelProfile run_product(const Buffer<float> &A, const Buffer<float> &B, const RDom &k, bool two_d,
                          float init, int steps, int reps) {
    const int M = A.extent(1), N = B.extent(0);
    Var j("j"), i("i"), bj("bj"), bi("bi"), tj("tj"), ti("ti");
    Func C("C");
    C(j, i) = init;
    Expr term = A(k.x, i) * B(j, k.x);
    C(j, i) += two_d ? term * cast<float>(k.y + 1) : term;
    C.gpu_tile(j, i, bj, bi, tj, ti, 16, 8);
    C.update().gpu_tile(j, i, bj, bi, tj, ti, 16, 8);
    Buffer<float> out;
    KernelProfile prof = run_one_launch(C, {N, M}, &out);
    for (int r = 0; r < M; r++) {
        for (int c = 0; c < N; c++) {
            double want = init;
            for (int t = 0; t < reps; t++)
                for (int q = 0; q < steps; q++)
                    want += double(A(q, r)) * double(B(c, q)) * (t + 1);
            EXPECT_NEAR(out(c, r), want, 1e-3) << "at " << c << ", " << r;
            if (std::fabs(out(c, r) - want) > 1e-3) return prof;
        }
    }
    return prof;
}

// A matrix product as a new user writes it first: each thread owns a point of C and runs the
// serial reduction loop over k. C(i, j) is read and written at every k in the IR as written;
// the kernel loads it once and stores it once, and so does the IR the simulator counts.
TEST(KernelAccesses, SerialReductionLoopKeepsItsPointInARegister) {
    const int M = 37, N = 45, K = 29;
    Buffer<float> A({K, M}, "A"), B({N, K}, "B");
    aicf_test::fill_random(A, -1.0, 1.0, 5);
    aicf_test::fill_random(B, -1.0, 1.0, 6);
    KernelProfile prof = run_product(A, B, RDom(0, K), false, 0.0f, K, 1);
    // The update's launch: every point read once and written once (its threads past the
    // edge are guarded off), A and B K times per point.
    EXPECT_EQ(bytes_loaded(prof, "C"), int64_t(M) * N * 4) << prof.to_string();
    EXPECT_EQ(bytes_stored(prof, "C"), int64_t(M) * N * 4) << prof.to_string();
    EXPECT_EQ(bytes_loaded(prof, "A"), int64_t(M) * N * K * 4) << prof.to_string();
    EXPECT_EQ(bytes_loaded(prof, "B"), int64_t(M) * N * K * 4) << prof.to_string();
}

// The same with the reduction's length known only at run time (a Param, or an input's
// extent): the point is kept in a register under the condition that the loop runs at all, so
// a loop of no steps neither loads nor stores it; and around a nest of two such loops (a 2-D
// RDom of run-time extents).
TEST(KernelAccesses, RunTimeLengthReductionKeepsItsPointInARegister) {
    const int M = 37, N = 45, K = 29;
    Buffer<float> A({K, M}, "A"), B({N, K}, "B");
    aicf_test::fill_random(A, -1.0, 1.0, 7);
    aicf_test::fill_random(B, -1.0, 1.0, 8);
    for (bool two_d : {false, true}) {
        for (int steps : {K, 0}) {
            SCOPED_TRACE(std::to_string(steps) + (two_d ? " repetitions of the rows" : " steps"));
            // (A 2-D k: K points of k.x in each of 3 rows, or none.)
            const int reps = two_d ? (steps ? 3 : 0) : 1;
            Param<int> length("length"), times("times");
            length.set(two_d ? K : steps);
            times.set(reps);
            RDom k = two_d ? RDom(0, length, 0, times) : RDom(0, length);
            KernelProfile prof = run_product(A, B, k, two_d, 0.25f, two_d ? K : steps, reps);
            const int64_t points = steps ? int64_t(M) * N * 4 : 0;
            EXPECT_EQ(bytes_loaded(prof, "C"), points) << prof.to_string();
            EXPECT_EQ(bytes_stored(prof, "C"), points) << prof.to_string();
            if (!two_d) {
                EXPECT_EQ(bytes_loaded(prof, "A"), int64_t(M) * N * steps * 4) << prof.to_string();
            }
        }
    }
}

// The SIMT matmul (apps/common/MatmulGPU.h) of n x K by K x n random matrices on the
// simulator, with fused multiply-adds as the benchmark compiles it (and as ptxas fits it in
// registers), its values checked against double precision every `sample` rows and columns;
// its launch's profile.
KernelProfile profile_simt_matmul(int n, int K, unsigned seed, int sample) {
    Buffer<float> A({K, n}, "A"), B({n, K}, "B");
    aicf_test::fill_random(A, -1.0, 1.0, seed);
    aicf_test::fill_random(B, -1.0, 1.0, seed + 1);
    Buffer<float> C;
    KernelProfile k = run_one_launch(aicf_apps::matmul_register_tiled(A, B, K, "C"), {n, n}, &C,
                                     gpu_target.with_feature(Target::FMA));
    for (int j = 0; j < n; j += sample)
        for (int i = 0; i < n; i += sample) {
            double want = 0;
            for (int r = 0; r < K; r++)
                want += double(A(r, j)) * B(i, r);
            EXPECT_NEAR(C(i, j), want, 1e-3) << "K " << K << ": " << i << ", " << j;
        }
    return k;
}

// The SIMT matmul (apps/common/MatmulGPU.h) reads its staged B tile at the fewest
// wavefronts a warp can: the 16 threads of a row read 16 consecutive float4 (two wavefronts
// for a warp's two rows of threads, which read the same ones), and writes C in whole sectors.
TEST(KernelAccesses, MatmulReadsBWithoutBankConflicts) {
    const KernelProfile k = profile_simt_matmul(256, 256, 21, 37);
    int b_reads = 0;
    for (const backends::sim::MemoryInstructionProfile &i : k.memory_instructions) {
        if (!i.shared || i.store || i.memory != "b") continue;
        b_reads++;
        EXPECT_EQ(i.wavefronts_per_request(), 2.0) << i.label << "\n" << k.to_string();
    }
    EXPECT_EQ(b_reads, 16) << k.to_string(); // two float4 per k step, 8 steps unrolled
    EXPECT_EQ(k.find_buffer("C")->store_sectors * 32, k.find_buffer("C")->bytes_stored)
        << k.to_string();
}

// The same matmul reads A's staged column (8 consecutive floats per thread and step of k, the
// rows of its 8 x 8 points) as two float4, which is what the PTX does: the simulator, which
// runs the kernel IR, counts the shared-memory loads the PTX makes (each of 16 bytes), and
// every A read of a warp is one wavefront (its two rows of threads read two float4).
TEST(KernelAccesses, MatmulReadsStagedRowsInTheWideLoadsOfThePTX) {
    const int K = 80;
    Buffer<float> A({K, 256}, "A"), B({256, K}, "B");
    Func C = aicf_apps::matmul_register_tiled(A, B, K, "C");
    std::vector<Function> outputs = {C.function()};
    lowering::LoweredPipeline p =
        lowering::lower(outputs, detail::infer_arguments(outputs), gpu_target);
    int ir_loads = 0;
    for (const lowering::LoweredKernel &k : p.kernels) {
        visit_each<Load>(k.body, [&](const Load *op) {
            if (op->name != lowering::kSharedMemoryName) return;
            ir_loads++;
            EXPECT_EQ(op->type.bytes() * op->type.lanes, 16) << describe_kernel(k);
        });
    }
    const std::string ptx = C.ptx(gpu_target);
    const std::regex ld("\\bld\\.shared\\.v4\\.f32"), any("\\bld\\.shared\\.");
    const int wide = int(std::distance(std::sregex_iterator(ptx.begin(), ptx.end(), ld), {}));
    EXPECT_EQ(int(std::distance(std::sregex_iterator(ptx.begin(), ptx.end(), any), {})), wide);
    // Per kernel and step of 8: 8 x 2 float4 of A and 8 x 2 of B.
    EXPECT_EQ(ir_loads, 32 * int(p.kernels.size()));
    EXPECT_EQ(wide, ir_loads) << ptx;

    const KernelProfile k = profile_simt_matmul(256, K, 27, 29);
    int a_reads = 0;
    for (const backends::sim::MemoryInstructionProfile &i : k.memory_instructions) {
        if (!i.shared || i.store || i.memory != "a") continue;
        a_reads++;
        EXPECT_EQ(i.bytes, i.requests * 32 * 16) << i.label << "\n" << k.to_string();
        EXPECT_EQ(i.wavefronts_per_request(), 1.0) << i.label << "\n" << k.to_string();
    }
    EXPECT_EQ(a_reads, 16) << k.to_string();
}

// The matmul at a K that 8 does not divide (77) runs its short last step as a whole one: the
// same barriers per block as at K = 80 (the staged rounds of A are a known function of the
// thread, with no barrier between them), and about as many instructions.
TEST(KernelAccesses, MatmulShortLastStepCostsAWholeStep) {
    const KernelProfile whole = profile_simt_matmul(256, 80, 23, 11);
    const KernelProfile short_last = profile_simt_matmul(256, 77, 23, 11);
    EXPECT_EQ(short_last.barriers, whole.barriers) << short_last.to_string();
    // (The guards and clamps of the short step cost about 2%; dividing by the step's extent
    // cost 6%.)
    EXPECT_LE(short_last.instructions.total(), whole.instructions.total() * 103 / 100)
        << short_last.to_string() << "\n"
        << whole.to_string();
}

// A reduction of one short step (K = 3, steps of 8) stages only its 3 rows: the staging
// loop, its two dimensions fused onto threads, runs over 3 x 8 points (one warp), not over
// the 8 x 8 that the step's extent, min(2 - ko * 8, 7) + 1, is bounded by for other ko.
TEST(KernelAccesses, OneShortStepStagesOnlyItsRows) {
    const int K = 3, N = 16, M = 8;
    Buffer<float> A({K, M}, "A"), B({N, K}, "B");
    aicf_test::fill_random(A, -1.0, 1.0, 25);
    aicf_test::fill_random(B, -1.0, 1.0, 26);
    Var x("x"), y("y"), t("t");
    Func a("a");
    a(x, y) = A(x, y) * 2.0f;
    Func out = aicf_test::staged_product(a, B, K);
    a.fuse(x, y, t).gpu_threads(t);
    Buffer<float> C;
    KernelProfile p = run_one_launch(out, {N, M}, &C);
    for (int j = 0; j < M; j++)
        for (int i = 0; i < N; i++) {
            double want = 0;
            for (int r = 0; r < K; r++)
                want += 2.0 * double(A(r, j)) * B(i, r);
            ASSERT_NEAR(C(i, j), want, 1e-5) << i << ", " << j;
        }
    int stores = 0;
    for (const backends::sim::MemoryInstructionProfile &i : p.memory_instructions) {
        if (!i.shared || !i.store || i.memory != "a") continue;
        stores++;
        EXPECT_EQ(i.requests, p.blocks()) << i.label << "\n" << p.to_string();
        EXPECT_EQ(i.bytes, p.blocks() * K * M * 4) << i.label << "\n" << p.to_string();
    }
    EXPECT_EQ(stores, 1) << p.to_string();
}

// What must stay two loads: a read after a store to the same buffer, and a read after a
// barrier that publishes another thread's write.
TEST(KernelAccesses, ReadsAfterAWriteOrABarrierAreLoadsAgain) {
    const int W = 300;
    Buffer<float> in({W + 1}, "in");
    aicf_test::fill_random(in, -1.0, 1.0, 7);
    Var x("x"), bx("bx"), tx("tx");
    Func s("s"), g("g");
    s(x) = in(x)*2.0f;
    g(x) = s(x) + s(x + 1);
    g.gpu_tile(x, bx, tx, 64);
    s.compute_at(g, bx).gpu_threads(x); // staged in shared memory: a barrier between
    Buffer<float> out;
    KernelProfile k = run_one_launch(g, {W}, &out);
    for (int i = 0; i < W; i++)
        ASSERT_NEAR(out(i), 2.0 * (double(in(i)) + double(in(i + 1))), 1e-5) << "at " << i;
    // Two shared loads per thread, after the barrier: neither is served by the other.
    EXPECT_EQ(k.shared_requests(), k.blocks() * (64 / 32) * 2 + k.blocks() * 3) << k.to_string();
}

} // namespace
