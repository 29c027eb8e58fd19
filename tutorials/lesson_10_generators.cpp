// Lesson 10: generators. A pipeline compiled ahead of time, so that a program can call it with
// no compiler in sight.
//
// Until now every pipeline was compiled by the program that wrote it, when it first ran (the
// JIT). A real project ships kernels instead: its build compiles them once into a library and
// a header, and its programs link them. A generator is the pipeline written for that:
//
//   - GeneratorParams are the choices made at build time (a tile size, a schedule, a type);
//   - Inputs and Outputs are the arguments of the compiled function, in declaration order;
//   - generate() writes the algorithm and schedule() the schedule, as in lessons 1 to 9.
//
// This file is a generator program: it registers one generator and links the aicf_generator
// library, whose main() compiles it on request:
//
//   lesson_10_generators -g softmax_rows -o out -e static_library,c_header vector=8
//
// writes out/softmax_rows.a and out/softmax_rows.h (the folder is made if need be; the rows'
// width is the input's, known when the function is called). In CMake (tutorials/CMakeLists.txt does
// this, and a project using an installed AICF the same through find_package(AICF)):
//
//   aicf_add_generator(lesson_10_generators SOURCES lesson_10_generators.cpp)
//   aicf_add_library(softmax_rows GENERATOR lesson_10_generators PARAMS vector=8)
//   target_link_libraries(lesson_10_call PRIVATE softmax_rows)
//
// lesson_10_call.c is the program that calls it: plain C, linked with the library and
// libaicf_runtime only, no LLVM. Run `lesson_10_generators -l` to see the generator's
// parameters, and `--help` for the rest.

#include "dsl/aicf.h"

using namespace aicf;

namespace {

enum class Layout { Fused, PerOperator };

// A softmax over each row of a float matrix: max, then exp and sum, then divide.
class SoftmaxRows : public Generator<SoftmaxRows> {
public:
    // Build-time choices: the vector width of the row loops, and whether the three stages
    // run together for each row (one pass over the row in cache) or one after another.
    GeneratorParam<int> vector{"vector", 8, 1, 64};
    GeneratorParam<Layout> layout{
        "layout", Layout::Fused, {{"fused", Layout::Fused}, {"per_operator", Layout::PerOperator}}};

    // The function's arguments: softmax_rows(DLTensor *in, float temperature, DLTensor *out).
    Input<Buffer<float, 2>> in{"in"};
    Input<float> temperature{"temperature"};
    Output<Buffer<float, 2>> out{"out"};

    void generate() {
        RDom r(0, in.dim(0).extent(), "r");
        Expr v = in(x, y) / temperature;
        scaled(x, y) = v;
        row_max(y) = scaled(0, y);
        row_max(y) = max(row_max(y), scaled(r, y));
        exps(x, y) = exp(scaled(x, y) - row_max(y));
        row_sum(y) = 0.0f;
        row_sum(y) += exps(r, y);
        out(x, y) = exps(x, y) / row_sum(y);
    }

    void schedule() {
        out.vectorize(x, vector).parallel(y);
        if (layout == Layout::Fused) {
            // Each row's stages at that row: the row stays in cache from max to divide.
            for (Func f : {row_max, exps, row_sum})
                f.compute_at(out, y);
            exps.vectorize(x, vector);
        } else {
            for (Func f : {row_max, exps, row_sum})
                f.compute_root();
            exps.vectorize(x, vector).parallel(y);
        }
    }

private:
    Var x{"x"}, y{"y"};
    Func scaled{"scaled"}, row_max{"row_max"}, exps{"exps"}, row_sum{"row_sum"};
};

} // namespace

// The name the command line and CMake use (-g softmax_rows), and a preset: a name for a set
// of parameter values, usable wherever a generator's name is.
AICF_REGISTER_GENERATOR(SoftmaxRows, softmax_rows,
                        (softmax_rows_per_operator, (layout, per_operator)(vector, 4)))
