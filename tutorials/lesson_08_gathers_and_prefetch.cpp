// Lesson 8: gathers and software prefetch on the CPU.
//
// An embedding lookup reads the rows of a large table that a batch of ids selects: each
// row is somewhere random in memory, so each is a cache miss that costs hundreds of cycles.
// The CPU's own prefetchers recognize streams and strides, not rows picked by data. A
// prefetch directive asks for them ahead of time:
//
//   out.prefetch(table, yi, yi, 4);
//
// means: at the top of each iteration of loop yi, fetch what the loop will read of `table`
// four iterations later. The index ids(y + 4) is known by then, so exactly that row is
// fetched, and its miss overlaps the work on the rows before it. A prefetch is a hint: the
// result is the same bits with or without it (checked below against a double loop).
//
// It pays where data arrive in an order the hardware cannot guess and there is work to
// hide the wait behind (here a GELU on each row). For rows read in order, or a tile of a
// matrix walked with a fixed stride, the hardware prefetchers already do this job.

#include "dsl/aicf.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

using namespace aicf;

namespace {

// GELU with the tanh approximation, as transformer feed-forward layers use it.
Expr gelu(const Expr &v) {
    return 0.5f * v * (1.0f + tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
}

double gelu(double v) {
    return 0.5 * v * (1.0 + std::tanh(0.7978845608 * (v + 0.044715 * v * v * v)));
}

} // namespace

int main() {
    // A table of 2^20 rows of 64 floats (256 MB: larger than the caches) and a batch of ids.
    const int D = 64, ROWS = 1 << 20, B = 1 << 14;
    Buffer<float> table({D, ROWS}, "table");
    float *t = table.data();
    for (int64_t i = 0; i < table.number_of_elements(); i++)
        t[i] = float(i % 977) * 0.004f - 2.0f;
    Buffer<int> ids({B}, "ids");
    std::mt19937 rng(1);
    for (int i = 0; i < B; i++)
        ids(i) = std::uniform_int_distribution<int>(0, ROWS - 1)(rng);

    int errors = 0;
    for (bool prefetch : {false, true}) {
        Var x("x"), y("y"), yo("yo"), yi("yi");
        Func out("out");
        // The algorithm: row ids(y) of the table, through a GELU. The clamp keeps every read
        // inside the table whatever the ids hold.
        out(x, y) = gelu(table(x, clamp(ids(y), 0, ROWS - 1)));
        // The schedule: blocks of 256 rows on the threads, each row a few vectors.
        out.split(y, yo, yi, 256).parallel(yo).vectorize(x, 16);
        if (prefetch) out.prefetch(table, yi, yi, 4);
        std::printf("== %s\n%s", prefetch ? "with prefetch(table, yi, yi, 4)" : "without prefetch",
                    out.loop_nest().c_str());

        Buffer<float> result(D, B);
        out.realize(result); // compiles
        double best = 1e30;
        for (int run = 0; run < 5; run++) {
            auto t0 = std::chrono::steady_clock::now();
            out.realize(result);
            best = std::min(best, std::chrono::duration<double, std::milli>(
                                      std::chrono::steady_clock::now() - t0)
                                      .count());
        }
        double worst = 0;
        for (int j = 0; j < B; j++)
            for (int i = 0; i < D; i++)
                worst = std::max(worst, std::fabs(result(i, j) - gelu(double(table(i, ids(j))))));
        bool ok = worst < 1e-5;
        std::printf("   %.2f ms (best of 5), largest error against a double loop %.1e: %s\n\n",
                    best, worst, ok ? "ok" : "WRONG");
        errors += !ok;
    }
    return errors ? 1 : 0;
}
