// Asynchronous copies (cp.async) as kernel IR writes them: kernels written directly in kernel
// IR, one warp each, run on the device AICF_DEVICE names (the simulator here), compiled to PTX
// and assembled by ptxas; and the simulator's reports of what would be intermittent on a GPU:
// a destination touched before the wait that covers it, a wait with a copy not committed, a
// misaligned copy.

#include "ErrorMessage.h"
#include "KernelRunner.h"
#include "ScopedEnv.h"
#include "backends/llvm/CodeGen_PTX.h"
#include "dsl/ir/IROperator.h"
#include "lowering/AsyncCopy.h"

#include <gtest/gtest.h>

#include <random>

using namespace aicf;
using namespace aicf::ir;
using aicf_test::HostBuffer;
using aicf_test::lane;
using lowering::LoweredKernel;

namespace {

const std::string sh = lowering::kSharedMemoryName;

Stmt barrier() {
    return Evaluate::make(Call::make(Int(32), Intrinsic::gpu_barrier, {}, Call::Intrinsic));
}

// 32 threads each copy 4 floats (16 bytes) of `in` into shared memory by cp.async, the copy
// of the last ones cut at n elements (zeros past it); after `wait` (if any) and a barrier, each
// thread stores the 4 floats its right neighbour copied. `copies` is 1, or 2: a second group
// into the second half of shared memory, of which `wait_groups` may stay pending.
LoweredKernel copy_kernel(int n, bool wait, int wait_groups = 0, int misalign = 0,
                          bool read_second_half = false, bool with_barrier = true) {
    Expr l = lane();
    Expr valid = max(min(Expr(n) - l * 4, 4), 0);
    std::vector<Stmt> body = {
        lowering::gpu_cp_async(Float(32), 4, sh, l * 4 + misalign, "in", l * 4, valid),
        lowering::gpu_cp_async_commit(),
        lowering::gpu_cp_async(Float(32), 4, sh, 128 + l * 4, "in", l * 4, valid),
        lowering::gpu_cp_async_commit()};
    if (wait) body.push_back(lowering::gpu_cp_async_wait(wait_groups));
    if (with_barrier) body.push_back(barrier());
    Expr from = ((l + 1) % 32) * 4 + (read_second_half ? 128 : 0);
    body.push_back(Store::make("out", Load::make(Float(32, 4), sh, Ramp::make(from, 1, 4), Expr()),
                               Ramp::make(l * 4, 1, 4), Expr()));
    LoweredKernel k;
    k.name = "copy";
    k.threads = {32, 1, 1};
    k.shared_bytes = 256 * 4;
    k.args = {aicf_test::buffer_arg("in", Float(32), false),
              aicf_test::buffer_arg("out", Float(32), true)};
    k.body = Block::make(body);
    return k;
}

std::vector<float> inputs() {
    std::mt19937 rng(9);
    std::uniform_real_distribution<float> d(-3.0f, 3.0f);
    std::vector<float> v(128);
    for (float &x : v)
        x = d(rng);
    return v;
}

} // namespace

// Zero fill: the copies past n read nothing and write zeros.
TEST(AsyncCopy, CopiesWithZeroFillAfterTheWait) {
    const int n = 101;
    std::vector<float> in = inputs();
    std::vector<HostBuffer> buffers = {HostBuffer::of("in", in),
                                       HostBuffer::of("out", std::vector<float>(128, -7.0f))};
    aicf_test::run_kernel(copy_kernel(n, true), buffers);
    const std::vector<float> out = buffers[1].as<float>();
    for (int t = 0; t < 32; t++) {
        for (int i = 0; i < 4; i++) {
            const int source = ((t + 1) % 32) * 4 + i;
            ASSERT_EQ(out[size_t(t * 4 + i)], source < n ? in[size_t(source)] : 0.0f)
                << "thread " << t << ", element " << i;
        }
    }
}

TEST(AsyncCopy, PTXHoldsTheCopiesAndGroups) {
    const std::string ptx =
        backends::compile_kernels_to_ptx({copy_kernel(101, true, 1)}, Target("host-cuda-sm_80"));
    EXPECT_NE(ptx.find("cp.async.cg.shared.global"), std::string::npos) << ptx;
    EXPECT_NE(ptx.find("cp.async.commit_group"), std::string::npos) << ptx;
    EXPECT_NE(ptx.find("cp.async.wait_group 1"), std::string::npos) << ptx;
    if (backends::ptxas_available()) {
        for (const char *arch : {"sm_80", "sm_90"})
            EXPECT_FALSE(backends::assemble_ptx(ptx, arch).empty());
    }
}

// A read of a destination whose copy no wait has covered; the older group of two completes
// with wait_group 1, the newer stays pending.
TEST(AsyncCopy, SimulatorReportsReadsBeforeTheWait) {
    aicf_test::ScopedEnv sim("AICF_DEVICE", "sim"); // what the simulator reports
    std::vector<HostBuffer> buffers = {HostBuffer::of("in", inputs()),
                                       HostBuffer::of("out", std::vector<float>(128))};
    std::string msg = aicf_test::message_of<RuntimeError>(
        [&] { aicf_test::run_kernel(copy_kernel(128, false), buffers); });
    EXPECT_NE(msg.find("kernel copy: thread (0, 0, 0) of block (0, 0, 0) reads byte 16 of shared "
                       "memory"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("which a cp.async of thread (1, 0, 0) is still copying to: a thread may "
                       "touch a copy's destination only after its cp.async.wait_group covers the "
                       "copy"),
              std::string::npos)
        << msg;

    // wait_group 1: the first group is complete, the second not.
    aicf_test::run_kernel(copy_kernel(128, true, 1), buffers);
    msg = aicf_test::message_of<RuntimeError>([&] {
        aicf_test::run_kernel(copy_kernel(128, true, 1, 0, /*read_second_half=*/true), buffers);
    });
    EXPECT_NE(msg.find("reads byte 528 of shared memory"), std::string::npos) << msg;

    // After its own wait a thread reads its copies; another thread needs a barrier too.
    msg = aicf_test::message_of<RuntimeError>([&] {
        aicf_test::run_kernel(copy_kernel(128, true, 0, 0, false, /*with_barrier=*/false), buffers);
    });
    EXPECT_NE(msg.find("kernel copy: shared-memory race in block (0, 0, 0) on byte 16 of shared "
                       "memory: thread (1, 0, 0) stores it"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("and thread (0, 0, 0) loads it"), std::string::npos) << msg;
}

TEST(AsyncCopy, SimulatorReportsMisalignedAndUncommittedCopies) {
    aicf_test::ScopedEnv sim("AICF_DEVICE", "sim"); // what the simulator reports
    std::vector<HostBuffer> buffers = {HostBuffer::of("in", inputs()),
                                       HostBuffer::of("out", std::vector<float>(128))};
    std::string msg = aicf_test::message_of<RuntimeError>(
        [&] { aicf_test::run_kernel(copy_kernel(128, true, 0, 1), buffers); });
    EXPECT_NE(msg.find("kernel copy: thread (0, 0, 0) of block (0, 0, 0) starts a cp.async of 16 "
                       "bytes into shared memory at byte 4, which is not a multiple of the "
                       "copy's size"),
              std::string::npos)
        << msg;

    LoweredKernel k = copy_kernel(128, true);
    k.body = Block::make(
        {lowering::gpu_cp_async(Float(32), 4, sh, lane() * 4, "in", lane() * 4, Expr(4)),
         lowering::gpu_cp_async_wait(0)});
    msg = aicf_test::message_of<RuntimeError>([&] { aicf_test::run_kernel(k, buffers); });
    EXPECT_NE(msg.find("waits (cp.async.wait_group 0) with a cp.async it has not committed, "
                       "which no wait covers: commit it first"),
              std::string::npos)
        << msg;
}
