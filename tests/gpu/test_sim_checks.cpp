// The simulator as the strictest GPU a kernel runs on, and as a profiler. Kernels come from
// real schedules through lowering; the broken ones are those kernels with their IR edited
// (a barrier removed or put under a branch, a shared index shifted, a store skipped), run
// directly on the simulator, which must name what went wrong. The profiles of a transpose
// through shared memory (with and without padding) and of a coalesced and a strided read
// are checked against the numbers a GPU's memory system gives.

#include "Reference.h"
#include "ScopedEnv.h"

#include "backends/sim/Profile.h"
#include "backends/sim/Simulator.h"
#include "dsl/ir/IRMutator.h"
#include "dsl/ir/IROperator.h"
#include "lowering/Lower.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>

using namespace aicf;
using namespace aicf::ir;
using aicf::backends::sim::KernelProfile;
using aicf::backends::sim::LaunchArgument;
using aicf::backends::sim::MemoryInstructionProfile;

namespace {

const Target gpu_target("host-cuda-sm_80");
const int N = 64; // the matrices are N x N floats; tiles are 32 x 32

lowering::LoweredKernel lower_one_kernel(const Func &out) {
    std::vector<Function> outputs = {out.function()};
    lowering::LoweredPipeline p =
        lowering::lower(outputs, detail::infer_arguments(outputs), gpu_target);
    EXPECT_EQ(p.kernels.size(), 1u);
    return p.kernels.at(0);
}

// The launch arguments of a kernel over named float buffers: each buffer's memory, and the
// scalars lowering passes for them (in.min.0, out.stride.1, ...).
std::vector<LaunchArgument> arguments(const lowering::LoweredKernel &k,
                                      const std::map<std::string, Buffer<float>> &buffers) {
    std::vector<LaunchArgument> values;
    for (const lowering::KernelArgument &a : k.args) {
        LaunchArgument v;
        bool found = false;
        for (const auto &[name, b] : buffers) {
            if (a.is_buffer && a.name == name) {
                v.data = b.data();
                v.bytes = int64_t(b.width()) * b.height() * int64_t(sizeof(float));
                found = true;
            }
            for (int d = 0; d < b.dimensions() && !a.is_buffer; d++) {
                const std::pair<BufferField, int> fields[] = {{BufferField::Min, b.min(d)},
                                                              {BufferField::Extent, b.extent(d)},
                                                              {BufferField::Stride, b.stride(d)}};
                for (const auto &[field, value] : fields) {
                    if (buffer_field_name(name, field, d) != a.name) continue;
                    v.bits = uint64_t(uint32_t(value));
                    found = true;
                }
            }
        }
        EXPECT_TRUE(found) << "no value for argument " << a.name;
        values.push_back(v);
    }
    return values;
}

// Every check on, whatever AICF_SIM_CHECKS says.
backends::sim::LaunchOptions all_checks() {
    backends::sim::LaunchOptions options;
    options.checks = true;
    return options;
}

// Runs `k` expecting a RuntimeError and returns its message.
std::string launch_error(const lowering::LoweredKernel &k, const std::array<int, 3> &grid,
                         const std::vector<LaunchArgument> &args) {
    try {
        backends::sim::launch(k, grid, args, all_checks());
    } catch (const RuntimeError &e) {
        std::cout << "[ message  ] " << e.what() << std::endl;
        return e.what();
    }
    ADD_FAILURE() << "kernel " << k.name << " ran without the expected error:\n"
                  << lowering::describe_kernel(k);
    return "";
}

bool contains(const std::string &text, const std::string &part) {
    return text.find(part) != std::string::npos;
}

// Edits of a kernel body: each one that is set replaces what it matches.
struct Edits {
    std::function<Stmt(const Stmt &)> barrier;      // each gpu_barrier() statement
    std::function<Stmt(const Stmt &)> shared_store; // each store to shared memory
    std::function<Expr(const Load *)> shared_load;  // each load from shared memory
};

class ApplyEdits : public IRMutator {
public:
    explicit ApplyEdits(const Edits &edits) : edits(edits) {}

    using IRMutator::visit;
    Stmt visit(const Evaluate *op) override {
        const Call *c = op->value.as<Call>();
        if (edits.barrier && c && c->is_intrinsic(Intrinsic::gpu_barrier)) return edits.barrier(op);
        return IRMutator::visit(op);
    }
    Stmt visit(const Store *op) override {
        Stmt s = IRMutator::visit(op);
        if (!edits.shared_store || op->name != lowering::kSharedMemoryName) return s;
        return edits.shared_store(s);
    }
    Expr visit(const Load *op) override {
        if (edits.shared_load && op->name == lowering::kSharedMemoryName) {
            return edits.shared_load(op);
        }
        return IRMutator::visit(op);
    }

private:
    const Edits &edits;
};

lowering::LoweredKernel edited(lowering::LoweredKernel k, const Edits &edits) {
    k.body = ApplyEdits(edits).mutate(k.body);
    return k;
}

Expr thread_index(int d) {
    return Call::make(Int(32), Intrinsic::gpu_thread_index, {Expr(d)}, Call::PureIntrinsic);
}

// out = in transposed, through a 32 x 32 tile of `in` staged in shared memory: each block's
// 32 x 32 threads load the tile row by row (coalesced), then read it column by column.
// `pad` stores the tile's rows 33 elements apart.
struct Transpose {
    Buffer<float> in{{N, N}, "in"}, out{{N, N}, "out"};
    Var x{"x"}, y{"y"}, bx{"bx"}, by{"by"}, tx{"tx"}, ty{"ty"};
    Func tile{"tile"}, transposed{"out"};
    lowering::LoweredKernel kernel;
    const std::array<int, 3> grid{{N / 32, N / 32, 1}};

    explicit Transpose(bool pad) {
        aicf_test::fill_random(in, -1, 1, 21);
        tile(x, y) = in(x, y);
        transposed(x, y) = tile(y, x);
        transposed.gpu_tile(x, y, bx, by, tx, ty, 32, 32);
        tile.compute_at(transposed, bx).store_in(MemoryType::GPUShared).gpu_threads(x, y);
        if (pad) tile.align_storage(x, 33);
        kernel = lower_one_kernel(transposed);
    }

    std::vector<LaunchArgument> args() const {
        return arguments(kernel, {{"in", in}, {"out", out}});
    }

    KernelProfile run(const lowering::LoweredKernel &k) {
        return backends::sim::launch(k, grid, args(), all_checks());
    }

    void expect_transposed() const {
        for (int j = 0; j < N; j++) {
            for (int i = 0; i < N; i++)
                ASSERT_EQ(out(i, j), in(j, i)) << i << ", " << j;
        }
    }
};

TEST(SimCheck, CorrectTransposePassesEveryCheck) {
    Transpose t(false);
    t.run(t.kernel);
    t.expect_transposed();
}

TEST(SimCheck, MissingBarrierIsARaceOnTheTile) {
    Transpose t(false);
    Edits no_barrier;
    no_barrier.barrier = [](const Stmt &) { return Evaluate::make(0); };
    std::string msg = launch_error(edited(t.kernel, no_barrier), t.grid, t.args());
    // Thread (1, 0) reads tile element (0, 1), which thread (0, 1) stored.
    EXPECT_TRUE(contains(msg, "kernel " + t.kernel.name)) << msg;
    EXPECT_TRUE(contains(
        msg, "shared-memory race in block (0, 0, 0) on tile[32] at byte 128 of shared memory"))
        << msg;
    EXPECT_TRUE(contains(msg, "thread (0, 1, 0) stores it (store tile[...] in tile at x)")) << msg;
    EXPECT_TRUE(contains(msg, "thread (1, 0, 0) loads it (load tile[...] in out at tx = 1)"))
        << msg;
    EXPECT_TRUE(contains(msg, "no barrier")) << msg;
}

TEST(SimCheck, BarrierUnderABranchOnTheThreadIndex) {
    Transpose t(false);
    Edits branch;
    branch.barrier = [](const Stmt &b) { return IfThenElse::make(thread_index(0) < 16, b); };
    std::string msg = launch_error(edited(t.kernel, branch), t.grid, t.args());
    EXPECT_TRUE(contains(msg, "barrier in kernel " + t.kernel.name +
                                  " reached by 512 of 1024 threads of block (0, 0, 0)"))
        << msg;
    EXPECT_TRUE(contains(msg, "divergent control flow")) << msg;
    EXPECT_TRUE(contains(msg, "thread (16, 0, 0) does not")) << msg;
    EXPECT_TRUE(contains(msg, "while computing out")) << msg;
}

TEST(SimCheck, SharedReadOutOfBounds) {
    Transpose t(false);
    // The consumer reads one tile further on: past the end of shared memory.
    Edits shift;
    shift.shared_load = [](const Load *op) {
        return Load::make(op->type, op->name, op->index + 32 * 32, op->predicate);
    };
    std::string msg = launch_error(edited(t.kernel, shift), t.grid, t.args());
    EXPECT_TRUE(contains(msg, "thread (0, 0, 0) of block (0, 0, 0) loads from shared memory"))
        << msg;
    EXPECT_TRUE(contains(msg, "at index 1024, outside its valid range [0, 1024)")) << msg;
    EXPECT_TRUE(contains(msg, "byte 4096 is past tile, which lives at bytes [0, 4096)")) << msg;
    EXPECT_TRUE(contains(msg, "while computing out, in loop tx = 0")) << msg;
}

TEST(SimCheck, SharedStoreOutOfBounds) {
    Transpose t(false);
    // The producer's rows land one element too far: the last one spills out of the tile.
    Edits shift;
    shift.shared_store = [](const Stmt &s) {
        const Store *op = s.as<Store>();
        return Store::make(op->name, op->value, op->index + 1, op->predicate);
    };
    std::string msg = launch_error(edited(t.kernel, shift), t.grid, t.args());
    EXPECT_TRUE(contains(msg, "thread (31, 31, 0) of block (0, 0, 0) stores to shared memory"))
        << msg;
    EXPECT_TRUE(contains(msg, "at index 1024, outside its valid range [0, 1024)")) << msg;
    EXPECT_TRUE(contains(msg, "while computing tile, in loop x = 31")) << msg;
}

TEST(SimCheck, ReadOfUnwrittenSharedMemory) {
    Transpose t(false);
    // Only the first 16 rows of the tile are loaded; column reads reach the other 16.
    Edits skip;
    skip.shared_store = [](const Stmt &s) { return IfThenElse::make(thread_index(1) < 16, s); };
    std::string msg = launch_error(edited(t.kernel, skip), t.grid, t.args());
    EXPECT_TRUE(contains(msg, "thread (16, 0, 0) of block (0, 0, 0) loads tile[512] at byte 2048 "
                              "of shared memory, which no thread of the block has written"))
        << msg;
    EXPECT_TRUE(contains(msg, "(load tile[...] in out at tx = 16)")) << msg;
}

// Shared memory reused by lifetime: f3 takes f1's bytes once f2 is computed. The message
// names the Func that was stored where the race is, not every Func that lives there.
TEST(SimCheck, RaceNamesTheFuncStoredThere) {
    Buffer<float> in({256}, "in"), result({254}, "out"); // out(x) reads in(x + 2)
    aicf_test::fill_random(in, -1, 1, 24);
    Var x("x"), bx("bx"), tx("tx");
    Func f1("f1"), f2("f2"), f3("f3"), out("out");
    f1(x) = in(x)*2.0f;
    f2(x) = f1(x) + f1(x + 1);
    f3(x) = f2(x) * f2(x + 1);
    out(x) = f3(x) - 1.0f;
    out.gpu_tile(x, bx, tx, 64);
    for (Func f : {f3, f2, f1})
        f.compute_at(out, bx).gpu_threads(x);
    lowering::LoweredKernel k = lower_one_kernel(out);
    std::map<std::string, int64_t> offset;
    for (const lowering::SharedAllocation &a : k.shared)
        offset[a.func] = a.offset;
    ASSERT_EQ(offset.at("f1"), offset.at("f3"));
    const std::vector<LaunchArgument> args = arguments(k, {{"in", in}, {"out", result}});
    backends::sim::launch(k, {4, 1, 1}, args, all_checks());
    auto f2_at = [&](int i) { return 2.0 * in(i) + 2.0 * in(i + 1); };
    for (int i = 0; i < 254; i++)
        ASSERT_TRUE(aicf_test::close(result(i), f2_at(i) * f2_at(i + 1) - 1.0, 1e-5, 1e-5)) << i;
    Edits no_barrier;
    no_barrier.barrier = [](const Stmt &) { return Evaluate::make(0); };
    // Thread 0 of f2 reads f1(1), which thread 1 of f1 stored.
    std::string msg = launch_error(edited(k, no_barrier), {4, 1, 1}, args);
    EXPECT_TRUE(contains(msg, "race in block (0, 0, 0) on f1[1] at byte " +
                                  std::to_string(offset.at("f1") + 4) + " of shared memory"))
        << msg;
    EXPECT_TRUE(contains(msg, "thread (1, 0, 0) stores it (store f1[...] in f1")) << msg;
    EXPECT_TRUE(contains(msg, "thread (0, 0, 0) loads it (load f1[...] in f2")) << msg;
}

TEST(SimCheck, ExpensiveChecksCanBeTurnedOff) {
    Transpose t(false);
    Edits no_barrier;
    no_barrier.barrier = [](const Stmt &) { return Evaluate::make(0); };
    backends::sim::LaunchOptions options;
    options.checks = false;
    // Lockstep execution hides the missing barrier: the result is even right.
    backends::sim::launch(edited(t.kernel, no_barrier), t.grid, t.args(), options);
    t.expect_transposed();
}

// A histogram whose threads update the bins without atomic(): lockstep execution would lose
// updates silently (each thread of a warp writes its old count plus one). Scheduled, the update
// is refused where its reduction loop goes on threads; written directly as a kernel, the
// simulator names the two threads and the element. With atomic(), every count is kept.
TEST(SimCheck, ReadModifyWriteOfDeviceMemoryWithoutAtomic) {
    const int N = 500, C = 3;
    Buffer<int> in({N, C}, "in");
    for (int c = 0; c < C; c++)
        for (int i = 0; i < N; i++)
            in(i, c) = (i * 7919 + c) % 300;
    auto histogram = [&](bool atomic) {
        Func hist("hist");
        Var b("b"), c("c");
        RDom r(0, N, "r");
        RVar ro("ro"), rt("rt");
        hist(b, c) = 0;
        hist(clamp(in(r, c) / 4, 0, 63), c) += 1;
        if (atomic) hist.update().atomic();
        hist.update().split(r.x, ro, rt, 64).reorder(ro, rt, c).gpu_blocks(c).gpu_threads(rt);
        return hist;
    };
    std::string msg;
    try {
        histogram(false);
    } catch (const CompileError &e) {
        msg = e.what();
    }
    EXPECT_TRUE(contains(msg, "In the schedule of hist.update(0), gpu_threads(rt) could race"))
        << msg;
    Buffer<int> h = histogram(true).realize({64, C}, Target("host-cuda-sm_80"))[0];
    for (int c = 0; c < C; c++) {
        int total = 0;
        for (int b = 0; b < 64; b++)
            total += h(b, c);
        EXPECT_EQ(total, N);
    }

    // hist[bins[t]] = hist[bins[t]] + 1 on 32 threads, 4 of them per bin.
    lowering::LoweredKernel k;
    k.name = "hist";
    k.threads = {32, 1, 1};
    for (const char *name : {"bins", "hist"}) {
        lowering::KernelArgument a;
        a.name = name;
        a.is_buffer = true;
        a.type = Int(32);
        a.read = true;
        a.written = std::string(name) == "hist";
        k.args.push_back(a);
    }
    const Expr t = Call::make(Int(32), Intrinsic::gpu_thread_index, {Expr(0)}, Call::PureIntrinsic);
    const Expr bin = Load::make(Int(32), "bins", t, Expr());
    k.body = Store::make("hist", Add::make(Load::make(Int(32), "hist", bin, Expr()), Expr(1)), bin,
                         Expr());
    std::vector<int32_t> bins(32), counts(8, 0);
    for (int i = 0; i < 32; i++)
        bins[size_t(i)] = i % 8;
    std::vector<LaunchArgument> args(2);
    args[0].data = bins.data();
    args[0].bytes = int64_t(bins.size() * sizeof(int32_t));
    args[1].data = counts.data();
    args[1].bytes = int64_t(counts.size() * sizeof(int32_t));
    msg = launch_error(k, {1, 1, 1}, args);
    EXPECT_TRUE(contains(msg, "of block (0, 0, 0) reads, modifies and writes hist[")) << msg;
    EXPECT_TRUE(contains(msg, "of the same block also updates, with no ordering between them: "
                              "one of the updates is lost. Make the update atomic()"))
        << msg;
}

// ---- Profiles ----

TEST(SimProfile, TransposeThroughSharedMemoryHas32WayBankConflicts) {
    Transpose t(false);
    KernelProfile p = t.run(t.kernel);
    t.expect_transposed();
    std::cout << p.to_string();
    const int64_t requests = 4 * 32; // 4 blocks of 32 warps, one request each per instruction
    const MemoryInstructionProfile *store = p.find_instruction("store tile[...]");
    const MemoryInstructionProfile *load = p.find_instruction("load tile[...]");
    ASSERT_TRUE(store && load) << p.to_string();
    // Row-wise: a warp writes 32 consecutive words, one per bank.
    EXPECT_EQ(store->requests, requests);
    EXPECT_EQ(store->wavefronts, requests);
    // Column-wise: a warp reads 32 words 32 words apart, all in one bank.
    EXPECT_EQ(load->requests, requests);
    EXPECT_EQ(load->wavefronts, 32 * requests);
    EXPECT_EQ(load->wavefronts_per_request(), 32.0);
    EXPECT_EQ(load->conflict_ways(), 32.0);
    EXPECT_EQ(store->conflict_ways(), 1.0);
    EXPECT_EQ(p.worst_shared_instruction(), load);
    EXPECT_EQ(p.shared_wavefronts(), 33 * requests);
    // Global memory stays coalesced both ways: 4 sectors of 32 bytes per 32 floats.
    const MemoryInstructionProfile *read = p.find_instruction("load in[...]");
    ASSERT_TRUE(read);
    EXPECT_EQ(read->sectors, 4 * requests);
    EXPECT_EQ(read->efficiency(), 1.0);
    EXPECT_EQ(p.find_buffer("in")->bytes_loaded, N * N * 4);
    EXPECT_EQ(p.find_buffer("out")->bytes_stored, N * N * 4);
    EXPECT_EQ(p.find_buffer("out")->store_sectors, N * N * 4 / 32);
    EXPECT_EQ(p.global_efficiency(), 1.0);
    EXPECT_EQ(p.barriers, 4);
    EXPECT_EQ(p.instructions.shared_load, requests);
    EXPECT_EQ(p.instructions.shared_store, requests);
    EXPECT_EQ(p.instructions.global_load, requests);
    EXPECT_EQ(p.instructions.global_store, requests);
    EXPECT_EQ(p.flops, 0);
}

TEST(SimProfile, PaddedTileHasNoBankConflicts) {
    Transpose t(true);
    ASSERT_EQ(t.kernel.shared_bytes, 32 * 33 * 4);
    KernelProfile p = t.run(t.kernel);
    t.expect_transposed();
    std::cout << p.to_string();
    const int64_t requests = 4 * 32;
    const MemoryInstructionProfile *store = p.find_instruction("store tile[...]");
    const MemoryInstructionProfile *load = p.find_instruction("load tile[...]");
    ASSERT_TRUE(store && load) << p.to_string();
    // Rows 33 words apart: a column's 32 words fall into 32 different banks.
    EXPECT_EQ(load->wavefronts, requests);
    EXPECT_EQ(store->wavefronts, requests);
    EXPECT_EQ(p.shared_wavefronts(), 2 * requests);
}

// out = in, with the warps' 32 threads along x (consecutive floats of a row) or along y (one
// float from each of 32 rows).
KernelProfile copy_profile(bool threads_along_x) {
    Buffer<float> in({N, N}, "in"), out({N, N}, "out");
    aicf_test::fill_random(in, -1, 1, 22);
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    Func copy("copy");
    copy(x, y) = in(x, y) * 2.0f;
    if (threads_along_x) {
        copy.gpu_tile(x, y, bx, by, tx, ty, 32, 8);
    } else {
        copy.gpu_tile(y, x, by, bx, ty, tx, 32, 8);
    }
    lowering::LoweredKernel k = lower_one_kernel(copy);
    const std::array<int, 3> grid{{N / 32, N / 8, 1}}; // 32 x 8 threads either way
    KernelProfile p =
        backends::sim::launch(k, grid, arguments(k, {{"in", in}, {"copy", out}}), all_checks());
    for (int j = 0; j < N; j++) {
        for (int i = 0; i < N; i++)
            EXPECT_EQ(out(i, j), in(i, j) * 2.0f);
    }
    return p;
}

TEST(SimProfile, CoalescedAgainstStridedGlobalReads) {
    KernelProfile coalesced = copy_profile(true), strided = copy_profile(false);
    std::cout << coalesced.to_string() << strided.to_string();
    const int64_t requests = N * N / 32;
    for (const KernelProfile *p : {&coalesced, &strided}) {
        const MemoryInstructionProfile *read = p->find_instruction("load in[...] in copy");
        ASSERT_TRUE(read) << p->to_string();
        EXPECT_EQ(read->requests, requests);
        EXPECT_EQ(read->bytes, N * N * 4);
        EXPECT_EQ(p->flops, N * N);
        EXPECT_EQ(p->instructions.floating, requests);
    }
    // 32 floats of a row: 128 bytes, 4 sectors. One float from each of 32 rows: 32 sectors,
    // of which 4 bytes each are used.
    const MemoryInstructionProfile *good = coalesced.find_instruction("load in[...]");
    const MemoryInstructionProfile *bad = strided.find_instruction("load in[...]");
    EXPECT_EQ(good->sectors_per_request(), 4.0);
    EXPECT_EQ(good->efficiency(), 1.0);
    EXPECT_EQ(bad->sectors_per_request(), 32.0);
    EXPECT_EQ(bad->efficiency(), 0.125);
    EXPECT_EQ(strided.find_buffer("copy")->store_sectors, 32 * requests);
    EXPECT_EQ(coalesced.global_efficiency(), 1.0);
    EXPECT_EQ(strided.global_efficiency(), 0.125);
}

TEST(SimProfile, RecorderCollectsTheLaunchesOfARealize) {
    // The counters come from the simulator, whatever device the other tests run on.
    aicf_test::ScopedEnv sim("AICF_DEVICE", "sim");
    Buffer<float> in({300}, "in");
    aicf_test::fill_random(in, -3, 3, 23);
    Var x("x"), bx("bx"), tx("tx");
    Func f("f"), g("g");
    f(x) = in(x)*3.0f;
    g(x) = f(x) + f(x + 1);
    f.compute_root().gpu_tile(x, bx, tx, 64);
    g.gpu_tile(x, bx, tx, 32);
    backends::sim::ProfileRecorder recorder;
    {
        backends::sim::ProfileRecorder inner;
        Buffer<float> out = g.realize({299}, gpu_target);
        out.copy_to_host();
        ASSERT_EQ(inner.launches().size(), 2u);
        EXPECT_NEAR(out(10), 3.0 * (in(10) + in(11)), 1e-5);
    }
    g.realize({299}, gpu_target);
    ASSERT_EQ(recorder.launches().size(), 4u);
    const KernelProfile &first = recorder.launches()[0];
    EXPECT_EQ(first.block[0], 64);
    EXPECT_EQ(first.grid[0], 5);                                  // ceil(300 / 64)
    EXPECT_EQ(first.find_buffer("in")->bytes_loaded, 5 * 64 * 4); // shifted-inward tail
    EXPECT_EQ(first.flops, 5 * 64);
    const KernelProfile &second = recorder.launches()[1];
    EXPECT_EQ(second.grid[0], 10);
    EXPECT_EQ(second.flops, 10 * 32);
    EXPECT_TRUE(contains(second.to_string(), "load f[...] in g")) << second.to_string();
}

} // namespace
