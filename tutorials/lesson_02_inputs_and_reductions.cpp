// Lesson 2: inputs (Buffer, ImageParam, Param) and reductions (RDom, sum, argmax).
//
// Pipelines read buffers and scalars that arrive at run time. Reductions iterate over an
// RDom, a domain written separately from the pure variables; inline reductions such as
// sum() and argmax() build the update definitions for you.

#include "dsl/aicf.h"

#include <cmath>
#include <cstdio>

using namespace aicf;

int main() {
    const int cols = 6, rows = 3;
    Buffer<float> data({cols, rows}, "data");
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            data(c, r) = std::sin(1.0f + c * 0.7f + r * 1.3f);

    // An ImageParam is a buffer input bound at run time; a Param<T> is a scalar input.
    ImageParam input(Float(32), 2, "input");
    Param<float> temperature("temperature");
    input.set(data);
    temperature.set(0.5f);

    Var c("c"), r("r");
    RDom k(0, input.width(), "k"); // k runs over the columns, whatever the input's width

    // A reduction written out: a pure definition, then an update over the RDom.
    Func row_sum("row_sum");
    row_sum(r) = 0.0f;
    row_sum(r) += input(k, r);

    // The same with inline reductions, for a softmax with a temperature.
    Func scaled("scaled"), softmax("softmax");
    scaled(c, r) = input(c, r) / temperature;
    Expr row_max = maximum(scaled(k, r));
    Func max_of_row("max_of_row");
    max_of_row(r) = row_max;
    Func e("e");
    e(c, r) = exp(scaled(c, r) - max_of_row(r));
    e.compute_root();
    softmax(c, r) = e(c, r) / sum(e(k, r));

    // argmax returns a Tuple: (index, value).
    Func best("best");
    best(r) = argmax(input(k, r));

    Buffer<float> sums = row_sum.realize({rows});
    Buffer<float> probs = softmax.realize({cols, rows});
    Realization arg = best.realize({rows});
    Buffer<int> best_index = arg[0];

    int errors = 0;
    for (int j = 0; j < rows; j++) {
        double s = 0, mx = -1e30, z = 0;
        int bi = 0;
        for (int i = 0; i < cols; i++) {
            s += data(i, j);
            mx = std::max(mx, double(data(i, j)) / 0.5);
            if (data(i, j) > data(bi, j)) bi = i;
        }
        for (int i = 0; i < cols; i++)
            z += std::exp(data(i, j) / 0.5 - mx);
        std::printf("row %d: sum %+.5f (expected %+.5f), argmax %d (expected %d), softmax:", j,
                    sums(j), s, best_index(j), bi);
        errors += std::fabs(sums(j) - s) > 1e-5 || best_index(j) != bi;
        for (int i = 0; i < cols; i++) {
            double p = std::exp(data(i, j) / 0.5 - mx) / z;
            std::printf(" %.3f", probs(i, j));
            errors += std::fabs(probs(i, j) - p) > 1e-5;
        }
        std::printf("\n");
    }

    // A run-time check: a buffer too small for what the pipeline reads is a RuntimeError
    // that names the buffer and the dimension.
    Func shifted("shifted");
    shifted(c, r) = input(c + 1, r);
    try {
        shifted.realize({cols, rows});
        errors++;
    } catch (const RuntimeError &err) {
        std::printf("expected error: %s\n", err.what());
    }

    std::printf("%s\n", errors == 0 ? "lesson 2: all values correct" : "lesson 2: WRONG VALUES");
    return errors == 0 ? 0 : 1;
}
