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
                    "AICF cannot bound the region of input table read in dimension 0");
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

