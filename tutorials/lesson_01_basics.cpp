// Lesson 1: Func, Var, Expr and realize.
//
// A Func is a pure function over integer coordinates. Defining it computes nothing: it
// records an algorithm. realize() compiles the pipeline with LLVM and runs it over a region.

#include "dsl/aicf.h"

#include <cmath>
#include <cstdio>

using namespace aicf;

int main() {
    // Vars are the coordinates. Dimension 0 (x) is innermost: a row-major [rows][cols] image
    // is f(col, row).
    Var x("x"), y("y");

    // An Expr is the value computed at each point: here x + y, an int32.
    Func gradient("gradient");
    gradient(x, y) = x + y;
    std::printf("gradient(x, y) = %s\n", ir::to_string(gradient.value()).c_str());

    // Compile and run over an 8 x 4 region starting at (0, 0).
    Buffer<int> grid = gradient.realize({8, 4});
    int errors = 0;
    for (int j = 0; j < grid.height(); j++) {
        for (int i = 0; i < grid.width(); i++) {
            std::printf("%3d", grid(i, j));
            errors += grid(i, j) != i + j;
        }
        std::printf("\n");
    }

    // Types mix as in Halide: an int32 times a float literal is float32. Funcs call Funcs;
    // by default a Func that is not an output is inlined into its caller.
    Func phase("phase"), wave("wave");
    phase(x) = x * 0.25f;
    wave(x) = exp(-phase(x)) * 10.0f;
    Buffer<float> w = wave.realize({6});
    std::printf("wave:");
    for (int i = 0; i < 6; i++) {
        std::printf(" %.4f", w(i));
        errors += std::fabs(w(i) - 10.0f * std::exp(-0.25f * i)) > 1e-5f;
    }
    std::printf("\n");

    // The lowered program: the loop nest AICF generated, after bounds inference.
    std::printf("\nLowered IR of wave:\n%s", wave.lowered_stmt().c_str());

    std::printf("%s\n", errors == 0 ? "lesson 1: all values correct" : "lesson 1: WRONG VALUES");
    return errors == 0 ? 0 : 1;
}
