// Indices computed in floating point and converted to integers: a resampling reads
// in(floor(x * scale)). Bounds inference carries the float's range over to the index where
// every value is a finite number rounded as the range's ends are, so a producer computed per
// tile is computed over that tile's footprint only; a value that may be NaN (converted to 0)
// widens the region to 0, and the buffers read are checked against it.

#include "Reference.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

using namespace aicf;
using aicf_test::fill_random;

namespace {

const float scale = 1.4285714f;

// The source position of output x, and its integer part, as the pipelines compute them.
float source(int x) {
    return float(x) * scale;
}
int source_index(int x) {
    return int(std::floor(source(x)));
}

} // namespace

// A bilinear resize by a scale that is not a fraction of small integers, reading a producer
// computed per output tile of 32 x 8: each tile computes only the 47 x 13 points it reads.
TEST(FloatIndices, AResizeComputesItsProducerPerTileOverTheTilesFootprint) {
    const int width = 203, height = 61; // not multiples of the tile
    Buffer<float> in({300, 100});
    fill_random(in, -1, 1, 7);
    Var x("x"), y("y"), xi("xi"), yi("yi");
    Func doubled("doubled"), resized("resized");
    doubled(x, y) = in(x, y) * 2.0f;
    Expr sx = cast<float>(x) * scale, sy = cast<float>(y) * scale;
    Expr ix = cast<int>(floor(sx)), iy = cast<int>(floor(sy));
    Expr fx = sx - cast<float>(ix), fy = sy - cast<float>(iy);
    resized(x, y) = (doubled(ix, iy) * (1 - fx) + doubled(ix + 1, iy) * fx) * (1 - fy) +
                    (doubled(ix, iy + 1) * (1 - fx) + doubled(ix + 1, iy + 1) * fx) * fy;
    resized.tile(x, y, xi, yi, 32, 8).vectorize(xi, 16).parallel(y);
    doubled.compute_at(resized, x).vectorize(x, 8);
    Buffer<float> out = resized.realize({width, height});
    for (int j = 0; j < height; j++) {
        for (int i = 0; i < width; i++) {
            const int a = source_index(i), b = source_index(j);
            const double u = double(source(i)) - a, v = double(source(j)) - b;
            auto at = [&](int p, int q) { return 2.0 * double(in(p, q)); };
            const double want = (at(a, b) * (1 - u) + at(a + 1, b) * u) * (1 - v) +
                                (at(a, b + 1) * (1 - u) + at(a + 1, b + 1) * u) * v;
            ASSERT_NEAR(out(i, j), want, 1e-5) << i << ", " << j;
        }
    }
    // The producer's extent per tile is the tile's footprint, found from the tile's ends.
    const std::string stmt = resized.lowered_stmt();
    const size_t at = stmt.find("let doubled.x.extent_realized = ");
    ASSERT_NE(at, std::string::npos) << stmt;
    const std::string extent = stmt.substr(at, stmt.find('\n', at) - at);
    EXPECT_NE(extent.find("floor((float32("), std::string::npos) << extent;
}

// tanh is within [-1, 1] but NaN for a NaN input, and NaN converts to 0: a table indexed by
// tanh(v) * 10 + 20 must cover 0 too, or be read through a clamp.
TEST(FloatIndices, AnIndexThatMayBeNaNReachesZero) {
    Buffer<float> in(64);
    fill_random(in, -1, 1, 3);
    for (int i = 0; i < 64; i += 5)
        in(i) = NAN;
    Buffer<float> table(21);
    table.set_min({10});
    fill_random(table, -1, 1, 4);
    Var x("x");
    Func direct("direct");
    direct(x) = table(cast<int>(tanh(in(x)) * 10.0f + 20.0f));
    try {
        direct.realize({64});
        FAIL() << "expected a RuntimeError: index 0 lies outside the table";
    } catch (const RuntimeError &e) {
        EXPECT_NE(std::string(e.what()).find("must cover [0, 30]"), std::string::npos) << e.what();
    }
    Func clamped("clamped");
    clamped(x) = table(clamp(cast<int>(tanh(in(x)) * 10.0f + 20.0f), 10, 30));
    clamped.vectorize(x, 8);
    Buffer<float> out = clamped.realize({64});
    for (int i = 0; i < 64; i++) {
        const double t = std::tanh(double(in(i))) * 10 + 20;
        // Near an integer, float rounding decides which side it falls on.
        if (std::fabs(t - std::round(t)) < 1e-4) continue;
        // A NaN converts to 0, which the clamp takes to 10.
        const int index = std::isnan(t) ? 10 : std::min(std::max(int(t), 10), 30);
        EXPECT_EQ(out(i), table(index)) << i;
    }
}

// A value of float arithmetic rounded once per operation, as the code generators round what
// feeds a conversion to an integer (the compiler of this test may contract a * b + c).
float times_plus(float a, float b, float c) {
    const float product = float(double(a) * double(b)); // exact in double, then rounded once
    return float(double(product) + double(c));
}

// Source positions computed by multiply-adds (the pixel-centre resize, (x + 0.5) s - 0.5, and
// x * 0.1 - 0.3, x * 0.7 + 0.1, which one fused multiply-add would round across an integer:
// at x = 3 to just below 0, at x = 47 to 33 instead of 32). Under -fma too, the loop rounds
// them as the region's ends are: the region is exact, an input of exactly its size is read
// (a fused product would read before its start), and every value comes from the index the
// arithmetic as written gives.
TEST(FloatIndices, MultiplyAddIndicesAreRoundedAsWrittenAndBoundedExactly) {
    Var x("x"), xi("xi");
    struct Index {
        std::string name;
        Expr index;
        std::function<int(int)> want;
    };
    const std::vector<Index> indices = {
        {"pixel centre", cast<int>(floor((cast<float>(x) + 0.5f) * scale - 0.5f)) + 1,
         [](int i) { return int(std::floor(times_plus(float(i) + 0.5f, scale, -0.5f))) + 1; }},
        {"x * 0.1 - 0.3", cast<int>(floor(cast<float>(x) * 0.1f - 0.3f)),
         [](int i) { return int(std::floor(times_plus(float(i), 0.1f, -0.3f))); }},
        {"x * 0.7 + 0.1", cast<int>(floor(cast<float>(x) * 0.7f + 0.1f)),
         [](int i) { return int(std::floor(times_plus(float(i), 0.7f, 0.1f))); }}};
    const int first = 3, width = 150;
    for (const Target &target : {Target("host"), Target("host-fma")}) {
        for (const auto &[name, index, want] : indices) {
            int lo = INT32_MAX, hi = INT32_MIN;
            for (int i = first; i < first + width; i++)
                lo = std::min(lo, want(i)), hi = std::max(hi, want(i));
            ASSERT_EQ(name == "x * 0.1 - 0.3", lo == 0) << name;
            Buffer<float> in({hi - lo + 1});
            in.set_min({lo});
            fill_random(in, -1, 1, 9);
            Func copy("copy"), out("out");
            copy(x) = in(x)*3.0f;
            out(x) = copy(index);
            out.split(x, x, xi, 16, TailStrategy::GuardWithIf).vectorize(xi);
            copy.compute_at(out, x);
            Buffer<float> got({width});
            got.set_min({first});
            out.realize(got, target);
            for (int i = first; i < first + width; i++)
                ASSERT_EQ(got(i), in(want(i)) * 3.0f)
                    << name << ", x = " << i << ", " << target.to_string();
        }
    }
}

// A table read at an index computed from a float Param and clamped to a limit computed from
// the same Param (the bilateral grid's histogram bins): the limit is one value wherever it is
// evaluated, so it bounds the table's region, whatever the Param holds (NaN converts to 0; below
// the lower limit, the lower limit wins), with the table at the root or per tile.
TEST(FloatIndices, AClampToALimitComputedFromAFloatParam) {
    Buffer<float> in(45);
    fill_random(in, -0.2f, 1.2f, 11);
    Param<float> bins("bins");
    Var x("x"), xo("xo"), xi("xi"), i("i");
    const Expr v = clamp(in(x), 0.0f, 1.0f);
    auto saturated = [](float f) {
        if (std::isnan(f)) return 0;
        return int(std::max(-2147483648.0f, std::min(f, 2147483520.0f)));
    };
    for (bool per_tile : {false, true}) {
        for (float b : {10.0f, 7.5f, NAN, -3.0f}) {
            SCOPED_TRACE(std::string(per_tile ? "per tile, " : "at the root, ") +
                         std::to_string(b));
            Func table("table"), out("out");
            table(i) = cast<float>(i) * 0.5f + 1.0f;
            out(x) = table(clamp(cast<int>(v * bins), 0, cast<int>(bins)));
            if (per_tile) {
                out.split(x, xo, xi, 8);
                table.compute_at(out, xo);
            } else {
                table.compute_root();
            }
            bins.set(b);
            Buffer<float> o = out.realize({45});
            for (int k = 0; k < 45; k++) {
                const float value = std::min(std::max(in(k), 0.0f), 1.0f) * b;
                // clamp is max(min(e, hi), lo): lo where the limits cross.
                const int index = std::max(std::min(saturated(value), saturated(b)), 0);
                ASSERT_EQ(o(k), float(index) * 0.5f + 1.0f) << k;
            }
        }
    }
}
