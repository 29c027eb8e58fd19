// Gathers and scatters whose index is a Func computed on its own (at the root, per tile, in
// GPU shared memory): the region they read is the range of that Func's values, as it would be
// with the index inlined. Checked against plain loops over the same random indices.

#include "ErrorMessage.h"
#include "GPUTarget.h"
#include "Reference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <random>

using namespace aicf;
using aicf_test::message_of;

namespace {

// Indices from -40 to 59, most of them outside a table of 16 or 20 entries.
Buffer<int> random_indices(int n, unsigned seed) {
    Buffer<int> idx({n}, "idx");
    std::mt19937 rng(seed);
    for (int i = 0; i < n; i++)
        idx(i) = int(rng() % 100) - 40;
    return idx;
}

} // namespace

// A lookup table read at clamp(idx(x), 0, 15), the clamp computed at the root (on the host,
// vectorized; through a Func of Param bounds; through a second Func that scales it).
TEST(IndexFuncs, LookupThroughAClampedIndexComputedAtTheRoot) {
    Buffer<float> table({20}, "table");
    aicf_test::fill_random(table, -5, 5, 3);
    const Buffer<int> idx = random_indices(41, 4);
    Var x("x");
    {
        Func id("id"), f("f");
        id(x) = clamp(idx(x), 0, 15);
        f(x) = table(id(x)) * 2.0f;
        id.compute_root();
        f.vectorize(x, 8, TailStrategy::GuardWithIf);
        Buffer<float> out = f.realize({41});
        for (int i = 0; i < 41; i++)
            ASSERT_EQ(out(i), table(std::clamp(idx(i), 0, 15)) * 2.0f) << i;
    }
    {
        // Bounds of Param values, and a Func of the index Func: 2 * id + 1 in [1, 2n - 1].
        Param<int> n("n");
        Func id("id"), odd("odd"), f("f");
        id(x) = max(min(idx(x), n - 1), 0);
        odd(x) = id(x) * 2 + 1;
        f(x) = table(odd(x)) - table(id(x));
        id.compute_root();
        odd.compute_root();
        for (int count : {10, 3, 1}) {
            n.set(count);
            Buffer<float> out = f.realize({41});
            for (int i = 0; i < 41; i++) {
                const int k = std::clamp(idx(i), 0, count - 1);
                ASSERT_EQ(out(i), table(2 * k + 1) - table(k)) << i << ", n = " << count;
            }
        }
        // A range past the table's end: a RuntimeError naming it, not a read past it.
        n.set(11);
        EXPECT_CONTAINS(message_of<RuntimeError>([&] { f.realize({41}); }),
                        "Buffer table is too small");
    }
}

// A histogram of clamped indices computed at the root, and the same updated atomically in
// parallel.
TEST(IndexFuncs, HistogramOfAClampedIndexFunc) {
    const Buffer<int> idx = random_indices(203, 5);
    for (bool parallel : {false, true}) {
        Var x("x");
        RDom r(0, 203, "r");
        Func id("id"), h("h");
        id(x) = clamp(idx(x), 0, 15);
        h(x) = 0;
        h(id(r)) += 1;
        id.compute_root();
        if (parallel) h.update().atomic().parallel(r);
        Buffer<int> out = h.realize({16});
        std::vector<int> want(16, 0);
        for (int i = 0; i < 203; i++)
            want[size_t(std::clamp(idx(i), 0, 15))]++;
        for (int b = 0; b < 16; b++)
            ASSERT_EQ(out(b), want[size_t(b)]) << b << (parallel ? ", parallel" : "");
    }
}

// Where the index Func has an update, its values are not bounded: the read is refused, and
// clamping where the index is used still works.
TEST(IndexFuncs, IndexFuncWithAnUpdateIsClampedWhereItIsRead) {
    Buffer<float> table({16}, "table");
    aicf_test::fill_random(table, -5, 5, 6);
    const Buffer<int> idx = random_indices(23, 7);
    Var x("x");
    Func id("id"), f("f");
    id(x) = clamp(idx(x), 0, 15);
    id(x) = id(x) + 1;
    id.compute_root();
    f(x) = table(id(x));
    EXPECT_CONTAINS(message_of<CompileError>([&] { f.realize({23}); }),
                    "AICF cannot bound the region of input table (read by f) in dimension 0");
    Func g("g");
    g(x) = table(clamp(id(x), 0, 15));
    Buffer<float> out = g.realize({23});
    for (int i = 0; i < 23; i++)
        ASSERT_EQ(out(i), table(std::min(std::clamp(idx(i), 0, 15) + 1, 15))) << i;
}

// An embedding lookup on the GPU: each block stages its tokens' clamped ids in shared memory
// and its threads read rows of the table at them.
TEST(IndexFuncs, EmbeddingRowsAtIdsStagedInSharedMemory) {
    const int D = 37, T = 45, V = 20;
    Buffer<float> emb({D, V}, "emb");
    aicf_test::fill_random(emb, -1, 1, 8);
    const Buffer<int> tokens = random_indices(T, 9);
    ImageParam table(Float(32), 2, "table");
    table.set(emb);
    Var d("d"), t("t"), bx("bx"), by("by"), tx("tx"), ty("ty");
    Func id("id"), out("out");
    id(t) = clamp(tokens(t), 0, table.dim(1).extent() - 1);
    out(d, t) = table(d, id(t)) * 3.0f;
    out.gpu_tile(d, t, bx, by, tx, ty, 32, 4, TailStrategy::GuardWithIf);
    id.compute_at(out, bx).store_in(MemoryType::GPUShared).gpu_threads(t);
    Buffer<float> result = out.realize({D, T}, aicf_test::gpu_test_target());
    result.copy_to_host();
    for (int j = 0; j < T; j++)
        for (int i = 0; i < D; i++)
            ASSERT_EQ(result(i, j), emb(i, std::clamp(tokens(j), 0, V - 1)) * 3.0f)
                << i << ", " << j;
}

// Values whose range is not what their arithmetic seems to say, used as indices inline and
// through an index Func: abs of the most negative int32 is itself, a remainder by a Param of
// -2^31 reaches 2^31 - 1, a float remainder far from [0, y) where the dividend is large, and
// inf * 0 is NaN (cast to 0). Each either reads inside the table, checked, or is refused:
// never a read outside it.
TEST(IndexFuncs, RangesOfOverflowingAndRoundedValues) {
    Buffer<float> table({16}, "table");
    aicf_test::fill_random(table, -5, 5, 10);
    Buffer<int> idx({6}, "idx");
    const int ints[] = {INT32_MIN, -7, 3, 40, INT32_MAX, -2};
    for (int i = 0; i < 6; i++)
        idx(i) = ints[i];
    Buffer<float> fin({4}, "fin");
    const float floats[] = {240823472.0f, 3.80221099e21f, INFINITY, 2.5f};
    for (int i = 0; i < 4; i++)
        fin(i) = floats[i];
    Var x("x");
    for (bool at_root : {false, true}) {
        SCOPED_TRACE(at_root ? "index Func at the root" : "index inlined");
        // The clamp of abs keeps its lower end: abs(-2^31) clamps to 0.
        Func id("id"), f("f");
        id(x) = clamp(abs(idx(x)), 0, 15);
        f(x) = table(id(x));
        if (at_root) id.compute_root();
        Buffer<float> out = f.realize({6});
        for (int i = 0; i < 6; i++) {
            const int64_t a =
                ints[i] == INT32_MIN ? int64_t(INT32_MIN) : std::abs(int64_t(ints[i]));
            ASSERT_EQ(out(i), table(int(std::clamp<int64_t>(a, 0, 15)))) << i;
        }
        // A remainder by a Param reaches |p| - 1 without overflow: 2^31 - 1 for -2^31.
        Param<int> p("p");
        Func rem("rem"), g("g");
        rem(x) = idx(x) % p;
        g(x) = table(rem(x));
        if (at_root) rem.compute_root();
        p.set(INT32_MIN);
        EXPECT_CONTAINS(message_of<RuntimeError>([&] { g.realize({6}); }),
                        "Buffer table is too small");
        p.set(-13);
        out = g.realize({6});
        for (int i = 0; i < 6; i++)
            ASSERT_EQ(out(i), table(int(((int64_t(ints[i]) % 13) + 13) % 13))) << i;
        // Float remainders of unbounded values, and inf * 0: no range.
        Func frem("frem"), h("h"), zero("zero"), k("k");
        frem(x) = cast<int>(fin(x) % 3.0f);
        h(x) = table(frem(x));
        zero(x) = cast<int>(fin(x) * 0.0f + 2.0f) - 2;
        k(x) = table(zero(x));
        if (at_root) {
            frem.compute_root();
            zero.compute_root();
        }
        EXPECT_CONTAINS(message_of<CompileError>([&] { h.realize({4}); }),
                        "AICF cannot bound the region of input table (read by h) in dimension 0");
        EXPECT_CONTAINS(message_of<CompileError>([&] { k.realize({4}); }),
                        "AICF cannot bound the region of input table (read by k) in dimension 0");
        // Bounded dividends keep a range: the remainder of [-100, 100] by 3 lies in [-6, 9].
        Func near("near"), m("m");
        near(x) = cast<int>(clamp(fin(x), -100.0f, 100.0f) % 3.0f) + 6;
        m(x) = table(near(x));
        if (at_root) near.compute_root();
        out = m.realize({4});
        for (int i = 0; i < 4; i++) {
            const float v = std::clamp(floats[i], -100.0f, 100.0f);
            ASSERT_EQ(out(i), table(int(v - 3.0f * std::floor(v / 3.0f)) + 6)) << i;
        }
    }
}
