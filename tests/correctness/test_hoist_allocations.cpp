// Heap storage of a Func computed inside a serial loop is allocated once, outside the loop,
// when its size does not change with the loop; the values are those of the plain loops.

#include "Reference.h"

#include <sstream>
#include <string>

using namespace aicf;
using aicf_test::fill_random;

namespace {

// The line of `text` where `what` first appears (-1 if nowhere).
int line_of(const std::string &text, const std::string &what) {
    std::istringstream in(text);
    int n = 0;
    for (std::string line; std::getline(in, line); n++)
        if (line.find(what) != std::string::npos) return n;
    return -1;
}

// Whether the allocation of `func` comes before (outside) or after (inside) the first line
// of the lowered statement `stmt` that has `loop`; both must be there.
::testing::AssertionResult allocated(const std::string &stmt, const std::string &func, bool before,
                                     const std::string &loop) {
    int alloc = line_of(stmt, "allocate " + func + "["), at = line_of(stmt, loop);
    if (alloc >= 0 && at >= 0 && (alloc < at) == before) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "allocate " << func << " at line " << alloc << ", "
                                         << loop << " at line " << at << ":\n"
                                         << stmt;
}

} // namespace

// A row of the first pass of a blur, computed for each row of the second: its width is the
// output's, known only at run time, so it lives on the heap. One allocation serves every row
// of a task.
TEST(HoistAllocations, ARowBufferIsAllocatedOncePerTask) {
    Buffer<float> in(203, 41);
    fill_random(in, -1, 1, 11);
    in.set_min({-1, -1});
    Var x("x"), y("y"), yo("yo"), yi("yi");
    Func bx("bx"), by("by");
    bx(x, y) = in(x - 1, y) + in(x, y) + in(x + 1, y);
    by(x, y) = bx(x, y - 1) + bx(x, y) + bx(x, y + 1);
    by.split(y, yo, yi, 8, TailStrategy::GuardWithIf).parallel(yo);
    bx.compute_at(by, yi);

    std::string stmt = by.lowered_stmt();
    EXPECT_TRUE(allocated(stmt, "bx", true, "for (by.s0.yi,"));
    EXPECT_NE(stmt.find("] in heap"), std::string::npos) << stmt;

    for (int W : {1, 37, 201}) {
        for (int H : {0, 1, 5, 39}) {
            Buffer<float> out = by.realize({W, H});
            for (int j = 0; j < H; j++)
                for (int i = 0; i < W; i++) {
                    double want = 0;
                    for (int dy = -1; dy <= 1; dy++)
                        for (int dx = -1; dx <= 1; dx++)
                            want += in(i + dx, j + dy);
                    ASSERT_TRUE(aicf_test::close(out(i, j), want, 1e-5, 1e-5))
                        << W << "x" << H << " at " << i << "," << j;
                }
        }
    }
}

// Storage whose size changes with the loop (the last tile of a guarded split is shorter)
// stays inside it.
TEST(HoistAllocations, StorageSizedByTheLoopStaysInside) {
    Buffer<int> in(300);
    fill_random(in, -100, 100, 12);
    Var x("x"), xo("xo"), xi("xi");
    Func f("f"), g("g");
    f(x) = in(x)*3;
    g(x) = f(x) + 1;
    g.split(x, xo, xi, 100, TailStrategy::GuardWithIf);
    f.compute_at(g, xo);

    std::string stmt = g.lowered_stmt();
    EXPECT_TRUE(allocated(stmt, "f", false, "for (g.s0.xo,"));
    for (int W : {1, 99, 100, 101, 300}) {
        Buffer<int> out = g.realize({W});
        for (int i = 0; i < W; i++)
            ASSERT_EQ(out(i), in(i)*3 + 1) << W << " at " << i;
    }
}

// Storage computed inside a parallel loop stays there, also when a serial loop is around
// that: each task fills its own (property seed 21, MatMulEpilogue schedule 95, where tasks
// shared one row of C and 132 of 493 values came out wrong).
TEST(HoistAllocations, StorageInsideAParallelLoopStaysThere) {
    Buffer<float> in(131, 40);
    fill_random(in, -1, 1, 14);
    Var x("x"), y("y"), yo("yo"), yi("yi");
    RDom k(0, 40, "k");
    Func c("c"), out("out");
    c(x, y) = in(x, y) * 0.5f;
    c(x, y) += in(x, k) * cast<float>(k + 1);
    out(x, y) = c(x, y) + 1.0f;
    out.split(y, yo, yi, 9, TailStrategy::ShiftInwards).parallel(yi);
    c.compute_at(out, yi);

    std::string stmt = out.lowered_stmt();
    EXPECT_TRUE(allocated(stmt, "c", false, "parallel for (out.s0.yi,"));
    for (int run = 0; run < 5; run++) {
        Buffer<float> result = out.realize({131, 40});
        for (int j = 0; j < 40; j++)
            for (int i = 0; i < 131; i++) {
                double want = in(i, j) * 0.5;
                for (int r = 0; r < 40; r++)
                    want += double(in(i, r)) * (r + 1);
                ASSERT_TRUE(aicf_test::close(result(i, j), want + 1, 1e-4, 1e-5)) << i << "," << j;
            }
    }
}

// A hostile schedule: a 2^20-row guarded split of 10 rows, with a Func whose storage is
// padded to 2^31 - 1 rows computed at each step of the reduction inside. The tail past the
// 10 rows computes nothing, and the 8 GB of storage is allocated once per task, not once per
// step of 2^20 x 32 x 10 (where the run would take hours).
TEST(HoistAllocations, HugeStorageAtAnInnerStepOfAHugeGuardedSplit) {
    Buffer<int> in(40, 20);
    fill_random(in, -20, 20, 13);
    in.set_min({-4, -4});
    Var x("x"), y("y");
    RDom k(0, 10, "k");
    Func f("f"), g("g"), out("out");
    f(x, y) = in(x, y) * 2 + in(x + 1, y);
    g(x, y) = f(x, y) + f(x, y + 1) * 3 + f(x + 1, y + 1);
    out(x, y) = 0;
    out(x, y) += g(x, k) * (y + 1);
    f.compute_root();
    out.update().parallel(y, 1 << 20, TailStrategy::GuardWithIf);
    g.align_storage(y, 2147483647).compute_at(out, k.x);

    std::string stmt = out.lowered_stmt();
    // Asserted before it runs: with the storage allocated per step, the run would not end.
    ASSERT_TRUE(allocated(stmt, "g", true, "for (out.s1.y_task,"));
    ASSERT_TRUE(allocated(stmt, "g", true, "for (out.s1.k.x,"));

    Buffer<int> result = out.realize({32, 10});
    for (int j = 0; j < 10; j++)
        for (int i = 0; i < 32; i++) {
            int want = 0;
            for (int r = 0; r < 10; r++) {
                auto fv = [&](int a, int b) { return in(a, b) * 2 + in(a + 1, b); };
                want += (fv(i, r) + fv(i, r + 1) * 3 + fv(i + 1, r + 1)) * (j + 1);
            }
            ASSERT_EQ(result(i, j), want) << i << "," << j;
        }
}
