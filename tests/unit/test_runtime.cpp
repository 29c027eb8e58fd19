// The runtime's heap allocations: each thread keeps its own list of what it allocated, and a
// run frees what is still live when it ends (as it does when it stops at an error).

#include "backends/llvm/LLVMErrors.h"
#include "backends/runtime/Device.h"
#include "backends/runtime/Runtime.h"
#include "dsl/base/Error.h"

#include <llvm/Support/ErrorHandling.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

namespace {

TEST(Runtime, AllocationsFromManyThreadsAreFreedOnceEach) {
    std::vector<void *> kept_by[4];
    {
        aicf::runtime::RunContext ctx;
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; t++) {
            threads.emplace_back([&, t] {
                for (int i = 0; i < 200; i++) {
                    void *p = aicf_malloc(&ctx, "tile", 4096 + i);
                    ASSERT_NE(p, nullptr);
                    std::memset(p, t, 4096 + i);
                    // Half are freed by the thread that made them, in any order; half stay.
                    if (i % 2 == 0) {
                        aicf_free(&ctx, p);
                    } else {
                        kept_by[t].push_back(p);
                    }
                }
            });
        }
        for (std::thread &th : threads)
            th.join();
        // Some freed on another thread than the one that made them.
        for (int t = 0; t < 4; t++) {
            for (size_t i = 0; i < kept_by[t].size(); i += 3)
                aicf_free(&ctx, kept_by[t][i]);
        }
        // A large one, which takes the huge-page path.
        void *big = aicf_malloc(&ctx, "big", int64_t(3) << 20);
        ASSERT_NE(big, nullptr);
        std::memset(big, 1, size_t(3) << 20);
    } // the context frees the rest; a double free would abort here
    SUCCEED();
}

TEST(Runtime, AnAbsurdAllocationIsAnErrorNotACrash) {
    aicf::runtime::RunContext ctx;
    EXPECT_EQ(aicf_malloc(&ctx, "huge", int64_t(1) << 50), nullptr);
    EXPECT_NE(ctx.error.find("huge"), std::string::npos) << ctx.error;
    EXPECT_EQ(aicf_malloc(&ctx, "negative", -1), nullptr);
}

// A device whose launches fail as a machine out of memory would: the allocation of what a
// launch needs throws std::bad_alloc.
class OutOfMemoryDevice : public aicf::runtime::Device {
public:
    const char *name() const override { return "out_of_memory"; }
    const aicf_device_interface_t *memory() const override { return nullptr; }
    void launch(const aicf::runtime::CompiledKernel &, const std::array<int, 3> &,
                void *const *) override {
        throw std::bad_alloc();
    }
};

TEST(Runtime, AFailedAllocationInALaunchIsAnErrorOfTheRun) {
    // Compiled code calls aicf_gpu_launch; an exception must not cross back into it.
    aicf::runtime::CompiledKernel k(nullptr, [] { return std::string(); });
    k.name = "p_k0_f";
    std::vector<aicf::runtime::CompiledKernel> kernels = {k};
    OutOfMemoryDevice device;
    aicf::runtime::RunContext ctx;
    ctx.kernels = &kernels;
    ctx.device = &device;
    EXPECT_NE(aicf_gpu_launch(&ctx, 0, 1, 1, 1, nullptr), 0);
    EXPECT_NE(ctx.error.find("Out of memory while launching kernel p_k0_f"), std::string::npos)
        << ctx.error;
}

TEST(Runtime, AKernelsPTXIsMadeOnceOnFirstUseAndSharedByCopies) {
    std::atomic<int> made{0};
    aicf::runtime::CompiledKernel k(nullptr, [&made] {
        made++;
        return std::string(".entry k");
    });
    EXPECT_EQ(made.load(), 0); // nothing until a GPU asks
    aicf::runtime::CompiledKernel copy = k;
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; t++)
        threads.emplace_back([&, t] { EXPECT_EQ((t % 2 ? k : copy).ptx(), ".entry k"); });
    for (std::thread &t : threads)
        t.join();
    EXPECT_EQ(made.load(), 1);
}

TEST(LLVMErrors, AFatalErrorIsAnInternalErrorNamingWhatWasCompiled) {
    aicf::backends::install_llvm_error_handlers();
    aicf::backends::LLVMErrorScope pipeline("the host code of pipeline blur");
    try {
        aicf::backends::LLVMErrorScope kernel("kernel blur_k0_blur for sm_80");
        llvm::report_fatal_error("forced failure");
        ADD_FAILURE() << "LLVM's fatal error returned";
    } catch (const aicf::InternalError &e) {
        std::string msg = e.what();
        EXPECT_NE(
            msg.find("LLVM failed while compiling kernel blur_k0_blur for sm_80: forced failure"),
            std::string::npos)
            << msg;
    }
    // The kernel's scope ended with the exception; the pipeline's is the innermost again.
    EXPECT_EQ(aicf::backends::describe_llvm_work(), "the host code of pipeline blur");
}

TEST(LLVMErrors, AFailedAllocationInLLVMIsABadAlloc) {
    aicf::backends::install_llvm_error_handlers();
    EXPECT_THROW(llvm::report_bad_alloc_error("forced failure"), std::bad_alloc);
}

} // namespace
