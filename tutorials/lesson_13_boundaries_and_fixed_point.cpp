// Lesson 13: boundary conditions and fixed-point arithmetic, on an 8-bit image.
//
// A stencil reads past the edges of its input: a 5-tap blur at x = 0 reads in(-2) and in(-1).
// AICF infers the region each Func needs from its consumers, so a blur of the whole image
// asks its input for two more points on each side, and an input of the image's own size is
// refused at run time, naming the buffer and the region it lacks. A boundary condition says
// what lies outside:
//
//   Func padded = BoundaryConditions::mirror_image(in);   // ... c b a | a b c ...
//
// `padded` is a plain Func, defined everywhere, that reads `in` only inside its region (its
// coordinates are clamped or folded into it), so the input is asked for exactly that region
// however far the consumers reach. The others: repeat_edge (the nearest edge point),
// constant_exterior(in, v), repeat_image (the image tiled) and mirror_interior
// (... c b | a b c ...).
//
// The blur computes in uint16 (five 8-bit taps weighted up to 6 overflow uint8) and rounds
// back to 8 bits with a shift; a sharpen then computes 2 * in - blur, which leaves [0, 255]:
// a plain cast back to uint8 wraps (300 becomes 44), saturating_cast<uint8_t> clamps. Each
// result is checked against plain C++ loops that fold every coordinate into the image by hand.

#include "dsl/aicf.h"

#include <algorithm>
#include <cstdio>
#include <random>

using namespace aicf;

namespace {

// The point of [0, n) that mirror_image reads at x, found by reflecting step by step.
int mirror(int x, int n) {
    while (x < 0 || x >= n)
        x = x < 0 ? -x - 1 : 2 * n - 1 - x;
    return x;
}

} // namespace

int main() {
    const int W = 203, H = 101; // not multiples of any tile below
    Buffer<uint8_t> image({W, H}, "image");
    std::mt19937 rng(13);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            image(x, y) = uint8_t(std::uniform_int_distribution<int>(0, 255)(rng));
    ImageParam in(UInt(8), 2, "in");
    in.set(image);

    Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
    // A separable binomial blur, [1 4 6 4 1] / 16 along each axis, in uint16.
    auto blur_of = [&](Func source, const std::string &name) {
        Func bx(name + "_x"), by(name);
        auto at = [&](Expr u, Expr v) { return cast<uint16_t>(source(u, v)); };
        bx(x, y) = at(x - 2, y) + 4 * at(x - 1, y) + 6 * at(x, y) + 4 * at(x + 1, y) + at(x + 2, y);
        by(x, y) = cast<uint8_t>((bx(x, y - 2) + 4 * bx(x, y - 1) + 6 * bx(x, y) +
                                  4 * bx(x, y + 1) + bx(x, y + 2) + 128) >>
                                 8);
        by.tile(x, y, xo, yo, xi, yi, 64, 16, TailStrategy::GuardWithIf)
            .vectorize(xi, 16, TailStrategy::GuardWithIf)
            .parallel(yo);
        bx.compute_at(by, xo).vectorize(x, 16, TailStrategy::GuardWithIf);
        return by;
    };

    // Without a boundary condition: the blur of the whole image needs two more columns and
    // rows of the input than it has.
    Func in_func("in_func");
    in_func(x, y) = in(x, y);
    Func plain = blur_of(in_func, "plain");
    try {
        plain.realize({W, H});
        std::printf("unexpected: the blur without a boundary condition ran\n");
        return 1;
    } catch (const RuntimeError &e) {
        std::printf("== without a boundary condition:\n%s\n\n", e.what());
    }

    // With one: every read lands inside the image.
    Func blurred = blur_of(BoundaryConditions::mirror_image(in), "blurred");
    Buffer<uint8_t> b = blurred.realize({W, H});
    int errors = 0;
    for (int j = 0; j < H; j++) {
        for (int i = 0; i < W; i++) {
            int sum = 0;
            const int taps[5] = {1, 4, 6, 4, 1};
            for (int v = 0; v < 5; v++)
                for (int u = 0; u < 5; u++)
                    sum += taps[u] * taps[v] * image(mirror(i + u - 2, W), mirror(j + v - 2, H));
            errors += b(i, j) != (sum + 128) >> 8;
        }
    }
    std::printf("== mirror_image blur: %d of %d pixels differ from the plain loop\n", errors,
                W * H);

    // A sharpen, 2 * in - blur, leaves [0, 255]: a plain cast wraps, saturating_cast clamps.
    Func wrapped("wrapped"), clamped("clamped");
    Expr sharpened = 2 * cast<int16_t>(in(x, y)) - cast<int16_t>(blurred(x, y));
    wrapped(x, y) = cast<uint8_t>(sharpened);
    clamped(x, y) = saturating_cast<uint8_t>(sharpened);
    blurred.compute_root();
    clamped.vectorize(x, 16, TailStrategy::GuardWithIf).parallel(y);
    Buffer<uint8_t> w = wrapped.realize({W, H}), c = clamped.realize({W, H});
    int wraps = 0, example = 0, example_wrapped = 0;
    for (int j = 0; j < H; j++) {
        for (int i = 0; i < W; i++) {
            const int want = 2 * image(i, j) - b(i, j);
            errors += c(i, j) != std::clamp(want, 0, 255);
            errors += w(i, j) != uint8_t(want);
            if ((want < 0 || want > 255) && wraps++ == 0) {
                example = want;
                example_wrapped = w(i, j);
            }
        }
    }
    std::printf("== sharpen: %d pixels leave [0, 255]; cast wraps them (%d becomes %d), "
                "saturating_cast clamps them\n",
                wraps, example, example_wrapped);
    std::printf("%s\n", errors ? "FAILED" : "all results match the plain loops");
    return errors ? 1 : 0;
}
