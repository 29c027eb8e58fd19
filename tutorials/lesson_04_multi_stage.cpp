// Lesson 4: scheduling a pipeline of stages: compute_root, compute_at, store_at, inline.
//
// With two stages, a producer and a consumer, the schedule decides where the producer is
// computed relative to the consumer's loops. That trades recomputation against memory
// traffic and storage:
//   inline          recompute the producer wherever it is used (no storage, most work)
//   compute_root    compute all of it first (least work, a whole intermediate in memory)
//   compute_at      compute the part one iteration of the consumer needs, just before it
//                   (small, cache-resident storage; neighbouring tiles recompute overlaps)
//   store_at        keep the storage at an outer loop and compute inside it: when the
//                   loops between are serial and the region needed moves forward with
//                   them, each iteration computes only the part no earlier iteration has
//                   (a sliding window), so every point is computed once; the storage then
//                   folds to the few rows one iteration needs (a line buffer)

#include "dsl/aicf.h"

#include <chrono>
#include <cstdio>

using namespace aicf;

namespace {

int errors = 0;

// A two-stage blur, with the producer blurring rows and the consumer columns. Every point
// of blur_y needs three rows of blur_x, so blur_x points are needed by three consumers.
struct Blur {
    Var x{"x"}, y{"y"};
    Func blur_x{"blur_x"}, blur_y{"blur_y"};
    explicit Blur(const Buffer<float> &in) {
        blur_x(x, y) = (in(x - 1, y) + in(x, y) + in(x + 1, y)) / 3.0f;
        blur_y(x, y) = (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3.0f;
    }
};

void run(const char *what, Blur &b, const Buffer<float> &reference) {
    std::printf("== %s\n%s", what, b.blur_y.loop_nest().c_str());
    Buffer<float> out(reference.width(), reference.height());
    b.blur_y.realize(out); // compiles
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 10; i++)
        b.blur_y.realize(out);
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
        10;
    int bad = 0;
    for (int y = 0; y < out.height(); y++)
        for (int x = 0; x < out.width(); x++)
            bad += out(x, y) != reference(x, y);
    std::printf("   %.3f ms per run, %s\n\n", ms, bad == 0 ? "same result" : "WRONG RESULT");
    errors += bad;
}

} // namespace

int main() {
    const int W = 1000, H = 700;
    Buffer<float> in(W + 2, H + 2);
    for (int y = 0; y < H + 2; y++)
        for (int x = 0; x < W + 2; x++)
            in(x, y) = float((x * 7 + y * 13) % 17);
    in.set_min({-1, -1});

    Blur inline_blur(in);
    Buffer<float> reference = inline_blur.blur_y.realize({W, H});
    run("inline (default): blur_x recomputed inside blur_y, 3 times per point", inline_blur,
        reference);

    Blur root(in);
    root.blur_x.compute_root();
    run("blur_x.compute_root(): all of blur_x first, then blur_y", root, reference);

    Blur at_rows(in);
    at_rows.blur_x.compute_at(at_rows.blur_y, at_rows.y);
    run("blur_x.compute_at(blur_y, y): the 3 rows each output row needs", at_rows, reference);

    Blur sliding(in);
    sliding.blur_x.store_root().compute_at(sliding.blur_y, sliding.y);
    run("blur_x.store_root().compute_at(blur_y, y): a sliding window, one new row of blur_x per "
        "row of blur_y",
        sliding, reference);

    Blur tiled(in);
    Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
    tiled.blur_y.tile(tiled.x, tiled.y, xo, yo, xi, yi, 64, 32).parallel(yo).vectorize(xi, 8);
    tiled.blur_x.compute_at(tiled.blur_y, xo).vectorize(tiled.x, 8);
    run("tiles of 64 x 32, blur_x computed per tile (34 rows), parallel and vectorized", tiled,
        reference);

    std::printf("%s\n", errors == 0 ? "lesson 4: every schedule computed the same values"
                                    : "lesson 4: WRONG VALUES");
    return errors == 0 ? 0 : 1;
}
