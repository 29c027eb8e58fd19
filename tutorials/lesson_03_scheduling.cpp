// Lesson 3: scheduling a single stage: split, tile, vectorize, parallel, and the assembly
// a schedule becomes.
//
// The algorithm says what each point is; the schedule says in which order, on which core,
// and in which SIMD lane it is computed. A schedule never changes the result. Each schedule
// below prints the loop nest it produces and is checked against the default one.

#include "dsl/aicf.h"

#include <cstdio>
#include <sstream>
#include <string>

using namespace aicf;

namespace {

int errors = 0;

void check(const char *what, Func &f, const Buffer<int> &reference) {
    std::printf("== %s\n%s", what, f.loop_nest().c_str());
    Buffer<int> out = f.realize({reference.width(), reference.height()});
    int bad = 0;
    for (int y = 0; y < out.height(); y++)
        for (int x = 0; x < out.width(); x++)
            bad += out(x, y) != reference(x, y);
    std::printf("   %s\n\n", bad == 0 ? "same result as the default schedule" : "WRONG RESULT");
    errors += bad;
}

Func make_gradient(Var &x, Var &y) {
    Func g("gradient");
    g(x, y) = x * 3 + y * y;
    return g;
}

} // namespace

int main() {
    // Sizes that are not multiples of the split factors: the tails are handled for us.
    const int W = 37, H = 13;
    Var x("x"), y("y");
    Func plain = make_gradient(x, y);
    std::printf("== default: y outer, x inner (dimension 0 innermost)\n%s\n",
                plain.loop_nest().c_str());
    Buffer<int> reference = plain.realize({W, H});

    {
        // Split x into an outer loop and an inner loop of 8 iterations.
        Var xo("xo"), xi("xi");
        Func f = make_gradient(x, y);
        f.split(x, xo, xi, 8);
        check("split(x, xo, xi, 8)", f, reference);
    }
    {
        // Reorder: x outermost now.
        Func f = make_gradient(x, y);
        f.reorder(y, x);
        check("reorder(y, x): columns outer", f, reference);
    }
    {
        // Tile: 8 x 4 blocks, each computed completely before the next.
        Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
        Func f = make_gradient(x, y);
        f.tile(x, y, xo, yo, xi, yi, 8, 4);
        check("tile(x, y, xo, yo, xi, yi, 8, 4)", f, reference);
    }
    {
        // Vectorize: the inner 8 iterations become one SIMD instruction each.
        Func f = make_gradient(x, y);
        f.vectorize(x, 8);
        check("vectorize(x, 8)", f, reference);
    }
    {
        // Parallel rows, vectorized columns, and an unrolled pair of vectors: a typical
        // schedule for a pointwise stage.
        Func f = make_gradient(x, y);
        f.parallel(y).vectorize(x, 8).unroll(x, 2);
        check("parallel(y).vectorize(x, 8).unroll(x, 2)", f, reference);
    }
    {
        // How the last tile is handled: GuardWithIf skips points past the end; ShiftInwards
        // (the default for pure definitions) moves the last tile back inside and recomputes
        // a few points; RoundUp computes past the end (allowed for intermediates only).
        Var xo("xo"), xi("xi");
        Func f = make_gradient(x, y);
        f.split(x, xo, xi, 8, TailStrategy::GuardWithIf);
        check("split(x, xo, xi, 8, GuardWithIf)", f, reference);
    }

    {
        // GuardWithIf on a vectorized loop, as AICF lowers it (lowered_stmt() is the IR that
        // becomes code): the tiles that lie inside the image run in a loop of their own with
        // whole vectors and no guard, and only the last tile tests each lane (loop
        // partitioning). never_partition(xo) would keep the test in every tile.
        Var xo("xo"), xi("xi");
        Func f = make_gradient(x, y);
        f.split(x, xo, xi, 8, TailStrategy::GuardWithIf).vectorize(xi);
        check("split(x, xo, xi, 8, GuardWithIf).vectorize(xi)", f, reference);
        std::istringstream lines(f.lowered_stmt());
        std::string line;
        bool inside = false;
        std::printf("== its lowered statement: a loop without the test, then one with it\n");
        while (std::getline(lines, line)) {
            inside = inside || line.find("produce gradient") != std::string::npos;
            if (inside && (line.find("for (") != std::string::npos ||
                           line.find("gradient[") != std::string::npos))
                std::printf("%s\n", line.c_str());
        }
        std::printf("\n");
    }

    {
        // What the CPU runs: assembly() returns the host code as this CPU's assembly, compiled
        // exactly as realize runs it. In the vectorized loop, each add and each store handles
        // 8 int32 values at once (a 256-bit ymm register on an x86-64 CPU with AVX).
        Func f = make_gradient(x, y);
        f.vectorize(x, 8);
        std::istringstream lines(f.assembly());
        std::string line;
        int shown = 0;
        std::printf("== vectorize(x, 8): vector instructions in its assembly\n");
        while (std::getline(lines, line) && shown < 6) {
            if (line.find("vpadd") != std::string::npos ||
                line.find("vmovdq") != std::string::npos) {
                std::printf("%s\n", line.c_str());
                shown++;
            }
        }
        std::printf("\n");
    }

    std::printf("%s\n", errors == 0 ? "lesson 3: every schedule computed the same values"
                                    : "lesson 3: WRONG VALUES");
    return errors == 0 ? 0 : 1;
}
