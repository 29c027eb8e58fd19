// Tensor-core instructions as kernel IR writes them (gpu_mma, gpu_ldmatrix): kernels written
// directly in kernel IR, one warp each, run on the device AICF_DEVICE names (the simulator
// here), compiled to PTX and assembled by ptxas. The fragment layouts the kernels use are
// the PTX ISA's tables (sections 9.7.14.5.7-8 and 9.7.14.5.15), written out here as literal
// offsets, apart from the maps in lowering/TensorCores.cpp; results are checked against a
// double-precision product of the same (rounded) inputs.

#include "ErrorMessage.h"
#include "KernelRunner.h"
#include "ScopedEnv.h"
#include "backends/llvm/CodeGen_PTX.h"
#include "backends/runtime/CompiledKernel.h"
#include "backends/runtime/Device.h"
#include "backends/sim/Profile.h"
#include "dsl/aicf.h"
#include "dsl/ir/IROperator.h"
#include "dsl/ir/IRPrinter.h"
#include "lowering/Kernel.h"
#include "lowering/KernelSerialization.h"
#include "lowering/TensorCores.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace aicf;
using namespace aicf::ir;
using lowering::KernelArgument;
using lowering::LoweredKernel;

namespace {

const Target sm80("host-cuda-sm_80");

// Element offsets, from the ISA's fragment tables: row r and column c of a matrix whose rows
// are `row` elements apart, relative to the lane's base (row g or 2t, column 2t, t or g).
std::vector<int> offsets(const std::vector<std::pair<int, int>> &table, int row) {
    std::vector<int> o;
    for (auto [r, c] : table)
        o.push_back(r * row + c);
    return o;
}

// m16n8k16: A (16 x 16) from (g, 2t); B (16 x 8) from (2t, g); C (16 x 8) from (g, 2t).
const std::vector<std::pair<int, int>> kA16 = {{0, 0}, {0, 1}, {8, 0}, {8, 1},
                                               {0, 8}, {0, 9}, {8, 8}, {8, 9}};
const std::vector<std::pair<int, int>> kB16 = {{0, 0}, {1, 0}, {8, 0}, {9, 0}};
const std::vector<std::pair<int, int>> kC = {{0, 0}, {0, 1}, {8, 0}, {8, 1}};
// m16n8k8 TF32: A (16 x 8) from (g, t); B (8 x 8) from (t, g).
const std::vector<std::pair<int, int>> kA8 = {{0, 0}, {8, 0}, {0, 4}, {8, 4}};
const std::vector<std::pair<int, int>> kB8 = {{0, 0}, {4, 0}};

// A gather of `lanes` elements of `name` at base + table[i]; the table is an argument of the
// kernel (`name`_off), so the offsets are the literal ones above.
Expr gather(Type t, const std::string &name, Expr base, int lanes) {
    Expr table = Load::make(Int(32, lanes), name + "_off", Ramp::make(0, 1, lanes), Expr());
    return Load::make(t.with_lanes(lanes), name, Broadcast::make(base, lanes) + table, Expr());
}

std::vector<float> random_values(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-2.0f, 2.0f);
    std::vector<float> v(n);
    for (float &x : v)
        x = d(rng);
    return v;
}

// float32 to bfloat16 bits, rounded to nearest even, and back.
uint16_t to_bf16(float x) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    u += 0x7fffu + ((u >> 16) & 1u);
    return uint16_t(u >> 16);
}
float from_bf16(uint16_t b) {
    uint32_t u = uint32_t(b) << 16;
    float x;
    std::memcpy(&x, &u, 4);
    return x;
}

// Random bfloat16 inputs: their bits, and their values.
struct BF16Values {
    std::vector<uint16_t> bits;
    std::vector<double> values;
};
BF16Values random_bf16(size_t n, uint32_t seed) {
    BF16Values r;
    for (float x : random_values(n, seed)) {
        r.bits.push_back(to_bf16(x));
        r.values.push_back(from_bf16(r.bits.back()));
    }
    return r;
}

// float32 rounded to TF32 (10 mantissa bits), to nearest with ties away from zero.
float to_tf32(float x) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    u = (u + 0x1000u) & ~0x1fffu;
    std::memcpy(&x, &u, 4);
    return x;
}

// D = A (M x K) * B (K x N) + C, all row-major, against `d` within the accumulation's rounding.
void expect_product(const std::vector<double> &a, const std::vector<double> &b,
                    const std::vector<float> &c, const std::vector<float> &d, int M, int N, int K) {
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            double want = c[size_t(i * N + j)], size = std::fabs(want);
            for (int k = 0; k < K; k++) {
                want += a[size_t(i * K + k)] * b[size_t(k * N + j)];
                size += std::fabs(a[size_t(i * K + k)] * b[size_t(k * N + j)]);
            }
            ASSERT_NEAR(d[size_t(i * N + j)], want, 1e-6 * size + 1e-30)
                << "D(" << i << ", " << j << ")";
        }
    }
}

// One warp: each lane gathers its fragments of A, B and C by the ISA's tables, executes one
// mma and stores its fragment of D by C's table.
LoweredKernel mma_kernel(Type in, bool tf32) {
    const int K = tf32 ? 8 : 16;
    Expr g = aicf_test::lane() / 4, t = aicf_test::lane() % 4;
    Expr a = gather(in, "A", tf32 ? g * K + t : g * K + 2 * t, tf32 ? 4 : 8);
    Expr b = gather(in, "B", tf32 ? t * 8 + g : 2 * t * 8 + g, tf32 ? 2 : 4);
    Expr c = gather(Float(32), "C", g * 8 + 2 * t, 4);
    Expr d = lowering::gpu_mma(a, b, c);
    Expr d_index = Broadcast::make(g * 8 + 2 * t, 4) +
                   Load::make(Int(32, 4), "C_off", Ramp::make(0, 1, 4), Expr());
    LoweredKernel k;
    k.name = tf32 ? "mma_tf32" : in.is_bfloat() ? "mma_bf16" : "mma_f16";
    k.threads = {32, 1, 1};
    k.args = {aicf_test::buffer_arg("A", in, false),
              aicf_test::buffer_arg("A_off", Int(32), false),
              aicf_test::buffer_arg("B", in, false),
              aicf_test::buffer_arg("B_off", Int(32), false),
              aicf_test::buffer_arg("C", Float(32), false),
              aicf_test::buffer_arg("C_off", Int(32), false),
              aicf_test::buffer_arg("D", Float(32), true)};
    k.body = Store::make("D", d, d_index, Expr());
    return k;
}

} // namespace

TEST(TensorCores, MMABFloat16MatchesTheISALayouts) {
    const BF16Values A = random_bf16(16 * 16, 1), B = random_bf16(16 * 8, 2);
    const std::vector<uint16_t> &a16 = A.bits, &b16 = B.bits;
    const std::vector<double> &a = A.values, &b = B.values;
    std::vector<float> c = random_values(16 * 8, 3);
    std::vector<aicf_test::HostBuffer> buffers = {
        aicf_test::HostBuffer::of("A", a16),
        aicf_test::HostBuffer::of("A_off", offsets(kA16, 16)),
        aicf_test::HostBuffer::of("B", b16),
        aicf_test::HostBuffer::of("B_off", offsets(kB16, 8)),
        aicf_test::HostBuffer::of("C", c),
        aicf_test::HostBuffer::of("C_off", offsets(kC, 8)),
        aicf_test::HostBuffer::of("D", std::vector<float>(16 * 8, -1.0f))};
    backends::sim::ProfileRecorder recorder;
    aicf_test::run_kernel(mma_kernel(BFloat(16), false), buffers);
    expect_product(a, b, c, buffers[6].as<float>(), 16, 8, 16);
    if (!recorder.launches().empty()) {
        // One warp-level tensor-core instruction, 2 * 16 * 8 * 16 flops, none on the FMA pipes.
        const backends::sim::KernelProfile &p = recorder.launches().back();
        EXPECT_EQ(p.instructions.tensor_core, 1);
        EXPECT_EQ(p.tensor_flops, 2 * 16 * 8 * 16);
        EXPECT_EQ(p.flops, 0);
    }
}

TEST(TensorCores, MMATF32RoundsItsInputs) {
    std::vector<float> af = random_values(16 * 8, 4), bf = random_values(8 * 8, 5);
    std::vector<float> c = random_values(16 * 8, 6);
    std::vector<double> a, b;
    for (float x : af)
        a.push_back(to_tf32(x));
    for (float x : bf)
        b.push_back(to_tf32(x));
    std::vector<aicf_test::HostBuffer> buffers = {
        aicf_test::HostBuffer::of("A", af),
        aicf_test::HostBuffer::of("A_off", offsets(kA8, 8)),
        aicf_test::HostBuffer::of("B", bf),
        aicf_test::HostBuffer::of("B_off", offsets(kB8, 8)),
        aicf_test::HostBuffer::of("C", c),
        aicf_test::HostBuffer::of("C_off", offsets(kC, 8)),
        aicf_test::HostBuffer::of("D", std::vector<float>(16 * 8, -1.0f))};
    aicf_test::run_kernel(mma_kernel(Float(32), true), buffers);
    expect_product(a, b, c, buffers[6].as<float>(), 16, 8, 8);
}

TEST(TensorCores, PTXHoldsTheInstructionsAndPtxasTakesThem) {
    for (auto [type, tf32, instruction] :
         {std::tuple{BFloat(16), false, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"},
          std::tuple{Float(16), false, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"},
          std::tuple{Float(32), true, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"}}) {
        const std::string ptx = backends::compile_kernels_to_ptx({mma_kernel(type, tf32)}, sm80);
        EXPECT_NE(ptx.find(instruction), std::string::npos) << ptx;
        if (tf32) {
            EXPECT_NE(ptx.find("cvt.rna.tf32.f32"), std::string::npos) << ptx;
        }
        if (!backends::ptxas_available()) continue;
        for (const char *arch : {"sm_80", "sm_90"}) {
            for (const backends::KernelResources &r : backends::assemble_ptx(ptx, arch)) {
                EXPECT_EQ(r.spill_store_bytes, 0) << r.to_string();
                EXPECT_EQ(r.stack_frame_bytes, 0) << r.to_string();
            }
        }
    }
}

namespace {

Stmt barrier() {
    return Evaluate::make(Call::make(Int(32), Intrinsic::gpu_barrier, {}, Call::Intrinsic));
}

// One warp stages A (16 x 16, K contiguous) and B (16 x 8, N contiguous) in shared memory,
// loads A's fragment with ldmatrix.x4 and B's with ldmatrix.x2.trans (lane l supplying row
// l % 16 of A at column 8 (l / 16), and row l % 16 of B: the CUTLASS mapping), stores both
// fragments as they arrived, and their product.
// With `swizzle`, A's 16-byte chunk c of row r is stored at chunk c ^ ((r / 4) % 2) of the
// row, so that a matrix's eight rows fall in eight different groups of banks.
LoweredKernel ldmatrix_kernel(int misalign = 0, bool swizzle = false) {
    const std::string sh = lowering::kSharedMemoryName;
    Expr l = aicf_test::lane();
    Type bf = BFloat(16);
    // Element (row r, chunk c) of A in shared memory.
    auto a_at = [&](Expr r, Expr c) { return r * 16 + (swizzle ? (c ^ ((r / 4) % 2)) : c) * 8; };
    Stmt stage = Block::make(
        {Store::make(sh, Load::make(bf.with_lanes(8), "A", Ramp::make(l * 8, 1, 8), Expr()),
                     Ramp::make(a_at(l / 2, l % 2), 1, 8), Expr()),
         Store::make(sh, Load::make(bf.with_lanes(4), "B", Ramp::make(l * 4, 1, 4), Expr()),
                     Ramp::make(256 + l * 4, 1, 4), Expr()),
         barrier()});
    Expr a = lowering::gpu_ldmatrix(bf, sh, a_at(l % 16, l / 16) + misalign, 4, false);
    Expr b = lowering::gpu_ldmatrix(bf, sh, 256 + (l % 16) * 8, 2, true);
    Expr g = l / 4, t = l % 4;
    Expr d_index = Broadcast::make(g * 8 + 2 * t, 4) +
                   Load::make(Int(32, 4), "C_off", Ramp::make(0, 1, 4), Expr());
    Stmt use = LetStmt::make(
        "a", a,
        LetStmt::make(
            "b", b,
            Block::make(
                {Store::make("FA", Variable::make(bf.with_lanes(8), "a"), Ramp::make(l * 8, 1, 8),
                             Expr()),
                 Store::make("FB", Variable::make(bf.with_lanes(4), "b"), Ramp::make(l * 4, 1, 4),
                             Expr()),
                 Store::make("D",
                             lowering::gpu_mma(Variable::make(bf.with_lanes(8), "a"),
                                               Variable::make(bf.with_lanes(4), "b"),
                                               Broadcast::make(FloatImm::make(Float(32), 0), 4)),
                             d_index, Expr())})));
    LoweredKernel k;
    k.name = "ldmatrix_mma";
    k.threads = {32, 1, 1};
    k.shared_bytes = (256 + 128) * 2;
    k.args = {aicf_test::buffer_arg("A", bf, false),
              aicf_test::buffer_arg("B", bf, false),
              aicf_test::buffer_arg("C_off", Int(32), false),
              aicf_test::buffer_arg("FA", bf, true),
              aicf_test::buffer_arg("FB", bf, true),
              aicf_test::buffer_arg("D", Float(32), true)};
    k.body = Block::make(stage, use);
    return k;
}

} // namespace

TEST(TensorCores, LdmatrixFeedsTheMMAFragments) {
    for (bool swizzle : {false, true}) {
        SCOPED_TRACE(swizzle ? "swizzled" : "plain");
        const BF16Values A = random_bf16(16 * 16, 7), B = random_bf16(16 * 8, 8);
        const std::vector<uint16_t> &a16 = A.bits, &b16 = B.bits;
        const std::vector<double> &a = A.values, &b = B.values;
        std::vector<aicf_test::HostBuffer> buffers = {
            aicf_test::HostBuffer::of("A", a16),
            aicf_test::HostBuffer::of("B", b16),
            aicf_test::HostBuffer::of("C_off", offsets(kC, 8)),
            aicf_test::HostBuffer::of("FA", std::vector<uint16_t>(32 * 8)),
            aicf_test::HostBuffer::of("FB", std::vector<uint16_t>(32 * 4)),
            aicf_test::HostBuffer::of("D", std::vector<float>(16 * 8, -1.0f))};
        backends::sim::ProfileRecorder recorder;
        aicf_test::run_kernel(ldmatrix_kernel(0, swizzle), buffers);
        if (!recorder.launches().empty()) {
            // Each ldmatrix is one shared request of 128 bytes a matrix. A's 32-byte rows put two
            // of a matrix's eight rows in each group of four banks: two wavefronts a matrix, 8
            // for the x4; swizzled, one. B's 16-byte rows fall in eight different groups.
            std::vector<std::pair<int64_t, int64_t>> seen; // (bytes, wavefronts) per request
            for (const backends::sim::MemoryInstructionProfile &i :
                 recorder.launches().back().memory_instructions) {
                if (i.shared && !i.store) seen.push_back({i.bytes, i.wavefronts});
            }
            EXPECT_EQ(seen,
                      (std::vector<std::pair<int64_t, int64_t>>{{512, swizzle ? 4 : 8}, {256, 2}}));
        }
        // Each lane holds exactly the mma fragments of the ISA's tables.
        const std::vector<uint16_t> fa = buffers[3].as<uint16_t>(), fb = buffers[4].as<uint16_t>();
        for (int l = 0; l < 32; l++) {
            const int g = l / 4, t = l % 4;
            for (int i = 0; i < 8; i++) {
                ASSERT_EQ(
                    fa[size_t(l * 8 + i)],
                    a16[size_t((g + kA16[size_t(i)].first) * 16 + 2 * t + kA16[size_t(i)].second)])
                    << "lane " << l << ", A element " << i;
            }
            for (int i = 0; i < 4; i++) {
                ASSERT_EQ(
                    fb[size_t(l * 4 + i)],
                    b16[size_t((2 * t + kB16[size_t(i)].first) * 8 + g + kB16[size_t(i)].second)])
                    << "lane " << l << ", B element " << i;
            }
        }
        expect_product(a, b, std::vector<float>(16 * 8, 0.0f), buffers[5].as<float>(), 16, 8, 16);
    }
    const std::string ptx = backends::compile_kernels_to_ptx({ldmatrix_kernel()}, sm80);
    EXPECT_NE(ptx.find("ldmatrix.sync.aligned.m8n8.x4.shared.b16"), std::string::npos) << ptx;
    EXPECT_NE(ptx.find("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16"), std::string::npos) << ptx;
    if (backends::ptxas_available()) {
        for (const char *arch : {"sm_80", "sm_90"})
            EXPECT_FALSE(backends::assemble_ptx(ptx, arch).empty());
    }
}

// What the simulator refuses: a row address that is not 16-byte aligned, and a warp-collective
// instruction that part of a warp executes.
TEST(TensorCores, SimulatorChecksAlignmentAndWholeWarps) {
    aicf_test::ScopedEnv sim("AICF_DEVICE", "sim"); // what the simulator reports
    std::vector<aicf_test::HostBuffer> buffers = {
        aicf_test::HostBuffer::of("A", std::vector<uint16_t>(256)),
        aicf_test::HostBuffer::of("B", std::vector<uint16_t>(128)),
        aicf_test::HostBuffer::of("C_off", offsets(kC, 8)),
        aicf_test::HostBuffer::of("FA", std::vector<uint16_t>(32 * 8)),
        aicf_test::HostBuffer::of("FB", std::vector<uint16_t>(32 * 4)),
        aicf_test::HostBuffer::of("D", std::vector<float>(16 * 8))};
    std::string msg = aicf_test::message_of<RuntimeError>(
        [&] { aicf_test::run_kernel(ldmatrix_kernel(1), buffers); });
    EXPECT_NE(msg.find("kernel ldmatrix_mma: thread (0, 0, 0) of block (0, 0, 0) supplies an "
                       "ldmatrix row at element 1 of shared memory, which is not 16-byte aligned"),
              std::string::npos)
        << msg;

    LoweredKernel half = mma_kernel(BFloat(16), false);
    half.body = IfThenElse::make(aicf_test::lane() < 16, half.body, Stmt());
    std::vector<aicf_test::HostBuffer> operands = {
        aicf_test::HostBuffer::of("A", std::vector<uint16_t>(256)),
        aicf_test::HostBuffer::of("A_off", offsets(kA16, 16)),
        aicf_test::HostBuffer::of("B", std::vector<uint16_t>(128)),
        aicf_test::HostBuffer::of("B_off", offsets(kB16, 8)),
        aicf_test::HostBuffer::of("C", std::vector<float>(128)),
        aicf_test::HostBuffer::of("C_off", offsets(kC, 8)),
        aicf_test::HostBuffer::of("D", std::vector<float>(128))};
    msg = aicf_test::message_of<RuntimeError>([&] { aicf_test::run_kernel(half, operands); });
    EXPECT_NE(msg.find("kernel mma_bf16: thread (0, 0, 0) of block (0, 0, 0) executes "
                       "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find(", but lane 16 of its warp (thread (16, 0, 0)) does not; all 32 lanes of "
                       "a warp execute it together"),
              std::string::npos)
        << msg;
}

// Kernels with tensor-core instructions travel in objects compiled ahead of time.
TEST(TensorCores, KernelsSerializeForAheadOfTime) {
    for (const LoweredKernel &k : {mma_kernel(BFloat(16), false), ldmatrix_kernel()}) {
        std::vector<uint8_t> bytes = lowering::serialize_kernel(k);
        std::shared_ptr<const LoweredKernel> back =
            lowering::deserialize_kernel(bytes.data(), bytes.size());
        EXPECT_EQ(to_string(back->body), to_string(k.body));
    }
}
