/* A C program that calls a pipeline compiled ahead of time: it links the generated library
 * and libaicf_runtime only (no libaicf, no LLVM; tests/CMakeLists.txt checks with ldd). */

#include "aot_scale_offset.h"

#include <stdio.h>
#include <string.h>

int main(void) {
    enum { W = 37, H = 5 };
    static float in[H][W], out[H][W];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            in[y][x] = (float)(x - 2 * y) * 0.25f;
    int64_t shape[2] = {H, W};
    DLTensor tin, tout;
    memset(&tin, 0, sizeof tin);
    tin.data = in;
    tin.device.device_type = kDLCPU;
    tin.ndim = 2;
    tin.dtype.code = kDLFloat;
    tin.dtype.bits = 32;
    tin.dtype.lanes = 1;
    tin.shape = shape;
    tout = tin;
    tout.data = out;
    if (aot_scale_offset(&tin, 2.0f, 3, &tout) != 0) {
        printf("failed: %s\n", aicf_last_error());
        return 1;
    }
    for (int y = 0; y < H; y++) {
        for (int x = 0; x < W; x++) {
            if (out[y][x] != in[y][x] * 2.0f + 3.0f) {
                printf("wrong at %d, %d: %g\n", x, y, out[y][x]);
                return 1;
            }
        }
    }
    /* A wrong call returns a code and a message, and prints nothing. */
    tin.dtype.bits = 64;
    if (aot_scale_offset(&tin, 2.0f, 3, &tout) == 0 || strlen(aicf_last_error()) == 0) {
        printf("a float64 input was accepted\n");
        return 1;
    }
    printf("ok\n");
    return 0;
}
