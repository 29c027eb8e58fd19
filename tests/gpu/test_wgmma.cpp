// Warpgroup tensor cores (wgmma.mma_async, sm_90a) as kernel IR writes them: kernels written
// directly in kernel IR, two warpgroups each, run on the device AICF_DEVICE names (the
// simulator here; on an H100 or H200 the GPU itself, which checks the layouts of
// lowering/WarpgroupMMA.h against the hardware) against a double-precision product, compiled
// to PTX and assembled by ptxas for sm_90a; and, on the simulator whatever the device, its
// reports of operands a warpgroup cannot take and its profile of the operands read.

#include "ErrorMessage.h"
#include "KernelRunner.h"
#include "ScopedEnv.h"
#include "backends/llvm/CodeGen_PTX.h"
#include "backends/sim/Profile.h"
#include "dsl/ir/IROperator.h"
#include "lowering/WarpgroupMMA.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace aicf;
using namespace aicf::ir;
using aicf_test::HostBuffer;
using aicf_test::message_of;
using lowering::LoweredKernel;

namespace {

const std::string sh = lowering::kSharedMemoryName;
const Target sm90a("host-cuda-sm_90a");

Stmt barrier() {
    return Evaluate::make(Call::make(Int(32), Intrinsic::gpu_barrier, {}, Call::Intrinsic));
}

// The layouts written out here as the PTX ISA states them, apart from the library's maps.
// A (64 x 16 per warpgroup) in shared memory: core matrices of 8 rows x 8 elements, 128 bytes
// each; along the rows 128 bytes apart (SBO), along k 1024 bytes apart (LBO).
constexpr int kALbo = 1024, kASbo = 128;
int a_byte(int r, int k) {
    return (r / 8) * kASbo + (k / 8) * kALbo + (r % 8) * 16 + (k % 8) * 2;
}
// B (N x 16, K-major) the other way round: along k 128 bytes apart, along n 256.
constexpr int kBLbo = 128, kBSbo = 256;
int b_byte(int n, int k) {
    return (n / 8) * kBSbo + (k / 8) * kBLbo + (n % 8) * 16 + (k % 8) * 2;
}
// B stored MN-major (as a row-major K x N B is copied in 16-byte pieces): core matrices of 8 k
// x 8 consecutive n, along n 128 bytes apart (SBO), along k N * 16 bytes apart (LBO).
constexpr int kBMnSbo = 128;
int b_mn_lbo(int N) {
    return N * 16;
}
int b_mn_byte(int n, int k, int N) {
    return (n / 8) * kBMnSbo + (k / 8) * b_mn_lbo(N) + (k % 8) * 16 + (n % 8) * 2;
}

struct Options {
    int threads = 256;
    int a_misalign = 0; // bytes added to warpgroup 1's A
    bool b_mn_major = false;
    // Thread 0 stores to B's first element: not at all, between the commit and the wait
    // (while the wgmma may still read it), after the wait and a barrier, or right after the
    // wait (when warpgroup 1, which reads B too, may not have reached its own).
    enum class StoreToB { No, BeforeWait, AfterWait, AfterWaitNoBarrier } store_to_b = StoreToB::No;
    // Thread 0 stores to A's first element right after the wait: only its own warpgroup's wgmma
    // read it.
    bool store_to_own_a = false;
    bool commit = true;
};

// Two warpgroups: warpgroup g computes rows 64g .. 64g + 63 of D = C + A * B, where A is
// 128 x 16 (row-major, bfloat16), B is N x 16 (row n holds B's column n), C and D are
// 128 x N floats. Each thread copies its share of A and B into shared memory with plain
// stores, then the fence and barrier that make them visible to wgmma; loads its fragment of C,
// runs one wgmma, and stores its fragment of D.
LoweredKernel wgmma_kernel(int N, const Options &o = Options()) {
    Expr t = aicf_test::lane();
    Expr group = t / 128;
    const int b_start = 2 * 64 * 16 * 2;
    std::vector<Stmt> body;
    // A: 2048 elements, B: N * 16, 256 threads.
    for (int i = 0; i < 128 * 16 / 256; i++) {
        Expr e = t + 256 * i, row = e / 16, k = e % 16, r = row % 64;
        Expr byte =
            (row / 64) * 2048 + (r / 8) * kASbo + (k / 8) * kALbo + (r % 8) * 16 + (k % 8) * 2;
        body.push_back(Store::make(sh, Load::make(BFloat(16), "a", e, Expr()), byte / 2, Expr()));
    }
    auto b_at = [&](const Expr &n, const Expr &k) {
        if (o.b_mn_major)
            return b_start + (n / 8) * kBMnSbo + (k / 8) * b_mn_lbo(N) + (k % 8) * 16 + (n % 8) * 2;
        return b_start + (n / 8) * kBSbo + (k / 8) * kBLbo + (n % 8) * 16 + (k % 8) * 2;
    };
    for (int i = 0; i < N * 16 / 256; i++) {
        Expr e = t + 256 * i, n = e / 16, k = e % 16;
        Expr byte = b_at(n, k);
        body.push_back(Store::make(sh, Load::make(BFloat(16), "b", e, Expr()), byte / 2, Expr()));
    }
    if (N * 16 % 256 != 0) { // the rest of B, by the first threads
        Expr e = t + 256 * (N * 16 / 256), n = e / 16, k = e % 16;
        Expr byte = b_at(n, k);
        body.push_back(IfThenElse::make(
            e < N * 16, Store::make(sh, Load::make(BFloat(16), "b", e, Expr()), byte / 2, Expr())));
    }
    body.push_back(lowering::gpu_async_proxy_fence());
    body.push_back(barrier());
    // Thread t's elements of D: warp w = (t % 128) / 32, g = (t % 32) / 4, q = t % 4; element
    // 4j + 2h + c at row 64 * group + 16w + g + 8h, column 8j + 2q + c.
    Expr w = (t % 128) / 32, g = (t % 32) / 4, q = t % 4;
    auto at = [&](int i) {
        const int j = i / 4, h = (i / 2) % 2, c = i % 2;
        return (group * 64 + w * 16 + g + 8 * h) * N + 8 * j + 2 * q + c;
    };
    std::vector<Expr> c_values;
    for (int i = 0; i < N / 2; i++)
        c_values.push_back(Load::make(Float(32), "c", at(i), Expr()));
    Expr c = Call::make(Float(32, N / 2), Intrinsic::make_vector, c_values, Call::PureIntrinsic);
    const Type acc = Float(32, N / 2);
    Expr fenced = Variable::make(acc, "fenced"), product = Variable::make(acc, "product"),
         done = Variable::make(acc, "done");
    std::vector<Stmt> stores;
    for (int i = 0; i < N / 2; i++) {
        stores.push_back(Store::make(
            "d",
            Call::make(Float(32), Intrinsic::extract_element, {done, Expr(i)}, Call::PureIntrinsic),
            at(i), Expr()));
    }
    Stmt store_to_b = IfThenElse::make(
        t == 0, Store::make(sh, Cast::make(BFloat(16), Expr(0.0f)), b_start / 2, Expr()));
    if (o.store_to_b == Options::StoreToB::AfterWait)
        stores.insert(stores.begin(), {barrier(), store_to_b});
    if (o.store_to_b == Options::StoreToB::AfterWaitNoBarrier)
        stores.insert(stores.begin(), store_to_b);
    if (o.store_to_own_a)
        stores.insert(stores.begin(),
                      IfThenElse::make(
                          t == 0, Store::make(sh, Cast::make(BFloat(16), Expr(0.0f)), 0, Expr())));
    Stmt tail = LetStmt::make("done", lowering::gpu_wgmma_wait(0, product), Block::make(stores));
    if (o.store_to_b == Options::StoreToB::BeforeWait) tail = Block::make({store_to_b, tail});
    if (o.commit) tail = Block::make({lowering::gpu_wgmma_commit(), tail});
    lowering::WgmmaOperand a{group * 2048 + group * o.a_misalign, kALbo, kASbo};
    lowering::WgmmaOperand b{Expr(b_start), kBLbo, kBSbo};
    if (o.b_mn_major) b = {Expr(b_start), b_mn_lbo(N), kBMnSbo, true};
    tail = LetStmt::make("product", lowering::gpu_wgmma(BFloat(16), N, a, b, fenced), tail);
    tail = LetStmt::make("fenced", lowering::gpu_wgmma_fence(c), tail);
    body.push_back(tail);
    LoweredKernel k;
    k.name = "wgmma_m64n" + std::to_string(N) + (o.b_mn_major ? "_b_mn" : "");
    k.threads = {o.threads, 1, 1};
    k.shared_bytes = b_start + N * 16 * 2 + 64;
    k.args = {aicf_test::buffer_arg("a", BFloat(16), false),
              aicf_test::buffer_arg("b", BFloat(16), false),
              aicf_test::buffer_arg("c", Float(32), false),
              aicf_test::buffer_arg("d", Float(32), true)};
    k.body = Block::make(body);
    return k;
}

struct Operands {
    std::vector<bfloat16_t> a, b;
    std::vector<float> c;
};

Operands random_operands(int N, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-2.0f, 2.0f);
    Operands o;
    for (int i = 0; i < 128 * 16; i++)
        o.a.push_back(bfloat16_t(d(rng)));
    for (int i = 0; i < N * 16; i++)
        o.b.push_back(bfloat16_t(d(rng)));
    for (int i = 0; i < 128 * N; i++)
        o.c.push_back(d(rng));
    return o;
}

std::vector<HostBuffer> buffers_of(const Operands &o, int N) {
    return {HostBuffer::of("a", o.a), HostBuffer::of("b", o.b), HostBuffer::of("c", o.c),
            HostBuffer::of("d", std::vector<float>(size_t(128 * N), -99.0f))};
}

} // namespace

// The layout maps of lowering/WarpgroupMMA.h against the ones written out above.
TEST(Wgmma, LayoutMaps) {
    for (int r = 0; r < 64; r++) {
        for (int k = 0; k < 16; k++) {
            ASSERT_EQ(lowering::wgmma_operand_byte(r, k, 2, kALbo, kASbo), a_byte(r, k));
            ASSERT_EQ(lowering::wgmma_operand_byte(r, k, 2, kBLbo, kBSbo), b_byte(r, k));
            for (int N : {64, 24})
                ASSERT_EQ(lowering::wgmma_operand_byte(r, k, 2, b_mn_lbo(N), kBMnSbo, true),
                          b_mn_byte(r, k, N));
        }
    }
    for (int t = 0; t < 128; t++) {
        for (int i = 0; i < 32; i++) {
            const auto [row, col] = lowering::wgmma_d_element(t, i);
            ASSERT_EQ(row, 16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2)) << t << ", " << i;
            ASSERT_EQ(col, 8 * (i / 4) + 2 * (t % 4) + i % 2) << t << ", " << i;
        }
    }
    EXPECT_TRUE(lowering::wgmma_shape_exists(256, BFloat(16)));
    EXPECT_TRUE(lowering::wgmma_shape_exists(24, Float(16)));
    EXPECT_FALSE(lowering::wgmma_shape_exists(20, BFloat(16)));
    EXPECT_FALSE(lowering::wgmma_shape_exists(264, BFloat(16)));
    EXPECT_FALSE(lowering::wgmma_shape_exists(64, Float(32)));
}

// D = C + A * B for N = 64 and 24, B K-major and MN-major, against double precision.
TEST(Wgmma, MatchesDoublePrecision) {
    if (!aicf_test::device_runs(sm90a)) GTEST_SKIP() << "wgmma runs on sm_90 GPUs only";
    for (auto [N, mn] : {std::pair{64, false}, {24, false}, {64, true}, {24, true}}) {
        SCOPED_TRACE(mn ? "B MN-major" : "B K-major");
        const Operands o = random_operands(N, unsigned(N));
        std::vector<HostBuffer> buffers = buffers_of(o, N);
        Options options;
        options.b_mn_major = mn;
        aicf_test::run_kernel(wgmma_kernel(N, options), buffers, sm90a);
        const std::vector<float> d = buffers[3].as<float>();
        for (int m = 0; m < 128; m++) {
            for (int n = 0; n < N; n++) {
                double want = o.c[size_t(m * N + n)];
                for (int k = 0; k < 16; k++)
                    want += double(o.a[size_t(m * 16 + k)]) * double(o.b[size_t(n * 16 + k)]);
                ASSERT_NEAR(d[size_t(m * N + n)], want, 1e-4 * (1 + std::abs(want)))
                    << "N " << N << ": row " << m << ", column " << n;
            }
        }
    }
}

TEST(Wgmma, PTXAssemblesForSm90a) {
    const std::string ptx = backends::compile_kernels_to_ptx({wgmma_kernel(64)}, sm90a);
    for (const char *text :
         {"wgmma.fence.sync.aligned;", "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16",
          "wgmma.commit_group.sync.aligned;", "wgmma.wait_group.sync.aligned 0;",
          "fence.proxy.async.shared::cta;", ".target sm_90a"}) {
        EXPECT_NE(ptx.find(text), std::string::npos) << text << "\n" << ptx;
    }
    if (backends::ptxas_available()) {
        EXPECT_FALSE(backends::assemble_ptx(ptx, "sm_90a").empty());
        const std::string ptx24 = backends::compile_kernels_to_ptx({wgmma_kernel(24)}, sm90a);
        EXPECT_FALSE(backends::assemble_ptx(ptx24, "sm_90a").empty());
        Options mn;
        mn.b_mn_major = true;
        const std::string ptx_mn = backends::compile_kernels_to_ptx({wgmma_kernel(64, mn)}, sm90a);
        EXPECT_NE(ptx_mn.find(", p, 1, 1, 0, 1;"), std::string::npos) << ptx_mn;
        EXPECT_FALSE(backends::assemble_ptx(ptx_mn, "sm_90a").empty());
    }
}

// What ptxas does to wgmma it cannot leave running as written is reported with the kernel's
// resources (and the test suite's ptxas check refuses it): here an accumulator register read
// between the instruction and its wait, which makes ptxas inject a wait.
TEST(Wgmma, PtxasChangesToWgmmaAreReported) {
    if (!backends::ptxas_available()) GTEST_SKIP() << "needs ptxas";
    const std::string ptx = backends::compile_kernels_to_ptx({wgmma_kernel(64)}, sm90a);
    for (const backends::KernelResources &r : backends::assemble_ptx(ptx, "sm_90a"))
        EXPECT_TRUE(r.wgmma_changes.empty()) << r.to_string();
    const size_t at = ptx.find("wgmma.mma_async.sync.aligned");
    ASSERT_NE(at, std::string::npos);
    const size_t reg = ptx.find("{%f", at) + 1, reg_end = ptx.find(',', reg);
    const std::string accumulator = ptx.substr(reg, reg_end - reg);
    const size_t line_end = ptx.find('\n', at) + 1;
    const std::string touched = ptx.substr(0, line_end) + "\tadd.f32 " + accumulator + ", " +
                                accumulator + ", 0f3F800000;\n" + ptx.substr(line_end);
    const std::vector<backends::KernelResources> r = backends::assemble_ptx(touched, "sm_90a");
    ASSERT_EQ(r.size(), 1u);
    ASSERT_FALSE(r[0].wgmma_changes.empty()) << touched;
    EXPECT_CONTAINS(r[0].to_string(), "; ptxas: C75");
}

// What a warpgroup cannot take: a block of 64 threads (half a warpgroup), an operand that does
// not start on 16 bytes.
TEST(Wgmma, SimulatorReportsPartWarpgroupsAndMisalignedOperands) {
    aicf_test::ScopedEnv sim("AICF_DEVICE", "sim"); // what the simulator reports
    const Operands o = random_operands(64, 5);
    std::vector<HostBuffer> buffers = buffers_of(o, 64);
    Options half;
    half.threads = 64;
    EXPECT_CONTAINS(message_of<KernelFault>(
                        [&] { aicf_test::run_kernel(wgmma_kernel(64, half), buffers, sm90a); }),
                    "executes wgmma.mma_async");
    EXPECT_CONTAINS(message_of<KernelFault>(
                        [&] { aicf_test::run_kernel(wgmma_kernel(64, half), buffers, sm90a); }),
                    "all 128 threads of a warpgroup execute it together");
    Options misaligned;
    misaligned.a_misalign = 8;
    EXPECT_CONTAINS(message_of<KernelFault>([&] {
                        aicf_test::run_kernel(wgmma_kernel(64, misaligned), buffers, sm90a);
                    }),
                    "wgmma.mma_async with an operand that does not start on 16 bytes of shared "
                    "memory (A at byte 2056, B at byte 4096)");
}

// wgmma reads its operands until a wait retires its group: a store to one before that is
// reported, one after the wait (and a barrier, for the other warpgroup) is not; a store right
// after the wait to what another warpgroup's wgmma read is reported; a wait with a wgmma not
// committed is reported too.
TEST(Wgmma, SimulatorReportsOperandsChangedBeforeTheWait) {
    aicf_test::ScopedEnv sim("AICF_DEVICE", "sim"); // what the simulator reports
    const Operands o = random_operands(64, 6);
    std::vector<HostBuffer> buffers = buffers_of(o, 64);
    Options early;
    early.store_to_b = Options::StoreToB::BeforeWait;
    const std::string msg = message_of<KernelFault>(
        [&] { aicf_test::run_kernel(wgmma_kernel(64, early), buffers, sm90a); });
    EXPECT_CONTAINS(msg, "kernel wgmma_m64n64: thread (0, 0, 0) of block (0, 0, 0) stores to "
                         "byte 4096 of shared memory, which a wgmma.mma_async of warpgroup 0 "
                         "may still be reading: its operands may change only after a "
                         "wgmma.wait_group retires its group");
    Options late;
    late.store_to_b = Options::StoreToB::AfterWait;
    aicf_test::run_kernel(wgmma_kernel(64, late), buffers, sm90a);
    // Right after the wait, with no barrier: thread 0 may change what only its own warpgroup
    // read, but not B, which warpgroup 1's wgmma read too and may still be reading.
    Options own;
    own.store_to_own_a = true;
    aicf_test::run_kernel(wgmma_kernel(64, own), buffers, sm90a);
    Options racing;
    racing.store_to_b = Options::StoreToB::AfterWaitNoBarrier;
    EXPECT_CONTAINS(message_of<KernelFault>(
                        [&] { aicf_test::run_kernel(wgmma_kernel(64, racing), buffers, sm90a); }),
                    "kernel wgmma_m64n64: thread (0, 0, 0) of block (0, 0, 0) stores to byte "
                    "4096 of shared memory, which a wgmma.mma_async of warpgroup 1 read: that "
                    "warpgroup's wgmma.wait_group retired it, but the threads of other "
                    "warpgroups may change it only after a barrier that follows the wait");
    Options uncommitted;
    uncommitted.commit = false;
    EXPECT_CONTAINS(message_of<KernelFault>([&] {
                        aicf_test::run_kernel(wgmma_kernel(64, uncommitted), buffers, sm90a);
                    }),
                    "waits (wgmma.wait_group 0) with a wgmma.mma_async of its warpgroup not "
                    "committed, which no wait covers");
}

// Each warpgroup's wgmma is one request reading its A (64 x 16) and its B (N x 16) from shared
// memory, one wavefront per 128-byte core matrix, whichever way B is stored.
TEST(Wgmma, SimulatorProfilesOperandReads) {
    aicf_test::ScopedEnv sim("AICF_DEVICE", "sim"); // what the simulator reports
    for (auto [N, mn] : {std::pair{64, false}, {24, false}, {64, true}, {24, true}}) {
        SCOPED_TRACE(std::to_string(N) + (mn ? ", B MN-major" : ", B K-major"));
        std::vector<HostBuffer> buffers = buffers_of(random_operands(N, unsigned(N + 1)), N);
        Options options;
        options.b_mn_major = mn;
        backends::sim::ProfileRecorder recorder;
        aicf_test::run_kernel(wgmma_kernel(N, options), buffers, sm90a);
        ASSERT_EQ(recorder.launches().size(), 1u);
        const backends::sim::KernelProfile &p = recorder.launches().back();
        EXPECT_EQ(p.instructions.tensor_core, 2) << p.to_string();
        std::vector<const backends::sim::MemoryInstructionProfile *> reads;
        for (const backends::sim::MemoryInstructionProfile &i : p.memory_instructions)
            if (i.label.rfind("wgmma reads ", 0) == 0) reads.push_back(&i);
        ASSERT_EQ(reads.size(), 2u) << p.to_string();
        const int64_t bytes[2] = {2 * 64 * 16 * 2, 2 * int64_t(N) * 16 * 2};
        for (int o = 0; o < 2; o++) {
            EXPECT_TRUE(reads[size_t(o)]->shared && !reads[size_t(o)]->store);
            EXPECT_EQ(reads[size_t(o)]->requests, 2) << reads[size_t(o)]->label;
            EXPECT_EQ(reads[size_t(o)]->bytes, bytes[o]) << reads[size_t(o)]->label;
            EXPECT_EQ(reads[size_t(o)]->wavefronts, bytes[o] / 128) << reads[size_t(o)]->label;
            EXPECT_EQ(reads[size_t(o)]->conflict_ways(), 1.0) << reads[size_t(o)]->label;
        }
    }
}
