// The runtime's heap allocations: each thread keeps its own list of what it allocated, and a
// run frees what is still live when it ends (as it does when it stops at an error).

#include "backends/runtime/Runtime.h"

#include <gtest/gtest.h>

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
        for (std::thread &th : threads) th.join();
        // Some freed on another thread than the one that made them.
        for (int t = 0; t < 4; t++) {
            for (size_t i = 0; i < kept_by[t].size(); i += 3) aicf_free(&ctx, kept_by[t][i]);
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

} // namespace
