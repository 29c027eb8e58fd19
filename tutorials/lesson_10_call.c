/* Lesson 10, the caller: a C program that calls the softmax compiled ahead of time by
 * lesson_10_generators.cpp (through the header it generated), checks the result against a
 * plain loop in double precision, and shows what a wrong argument gets: a code and a message,
 * before any work. */

#include "softmax_rows.h"
#include "softmax_rows_per_operator.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { W = 300, H = 20 };

static DLTensor matrix(float *data) {
    static int64_t shape[2] = {H, W}; /* DLPack: row-major, the last axis contiguous */
    DLTensor t;
    memset(&t, 0, sizeof t);
    t.data = data;
    t.device.device_type = kDLCPU;
    t.ndim = 2;
    t.dtype.code = kDLFloat;
    t.dtype.bits = 32;
    t.dtype.lanes = 1;
    t.shape = shape;
    t.strides = NULL; /* compact */
    return t;
}

static double worst_error(const float *in, const float *out, float temperature) {
    double worst = 0;
    for (int y = 0; y < H; y++) {
        double m = -INFINITY, s = 0;
        for (int x = 0; x < W; x++)
            m = fmax(m, in[y * W + x] / (double)temperature);
        for (int x = 0; x < W; x++)
            s += exp(in[y * W + x] / (double)temperature - m);
        for (int x = 0; x < W; x++) {
            double want = exp(in[y * W + x] / (double)temperature - m) / s;
            worst = fmax(worst, fabs(out[y * W + x] - want));
        }
    }
    return worst;
}

int main(void) {
    static float in[H * W], fused[H * W], per_operator[H * W];
    for (int i = 0; i < H * W; i++)
        in[i] = (float)sin(0.37 * i) * 4.0f;
    DLTensor tin = matrix(in), tf = matrix(fused), tp = matrix(per_operator);

    /* The arguments in the generator's order: its Inputs, then its Outputs. */
    if (softmax_rows(&tin, 0.5f, &tf) != 0 || softmax_rows_per_operator(&tin, 0.5f, &tp) != 0) {
        printf("failed: %s\n", aicf_last_error());
        return 1;
    }
    double e1 = worst_error(in, fused, 0.5f), e2 = worst_error(in, per_operator, 0.5f);
    printf("softmax_rows (fused):               largest error against double precision %.2g\n", e1);
    printf("softmax_rows_per_operator (preset): largest error against double precision %.2g\n", e2);

    /* What the compiled function says about itself. */
    const aicf_pipeline_metadata_t *m = softmax_rows_metadata();
    printf("%s, compiled for %s, takes:", m->name, m->target);
    for (int i = 0; i < m->argument_count; i++)
        printf(" %s", m->arguments[i].name);
    printf("\n");

    /* A wrong argument: a code and a message, nothing computed, nothing printed. */
    DLTensor wrong = tin;
    wrong.dtype.bits = 64;
    int code = softmax_rows(&wrong, 0.5f, &tf);
    printf("with a float64 input: code %d, \"%s\"\n", code, aicf_last_error());
    return e1 < 1e-6 && e2 < 1e-6 && code != 0 ? 0 : 1;
}
