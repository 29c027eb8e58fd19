/* Calls the two builds of the generator and checks every pixel. */

#include "brighten.h"
#include "brighten_tiny.h"

#include <stdio.h>
#include <string.h>

static DLTensor tensor(void *data, int64_t *shape, uint8_t code, uint8_t bits) {
    DLTensor t;
    memset(&t, 0, sizeof t);
    t.data = data;
    t.device.device_type = kDLCPU;
    t.ndim = 2;
    t.dtype.code = code;
    t.dtype.bits = bits;
    t.dtype.lanes = 1;
    t.shape = shape;
    return t;
}

int main(void) {
    enum { W = 70, H = 9 };
    static uint16_t in16[H][W];
    static uint8_t in8[H][W], out[H][W];
    int64_t shape[2] = {H, W};
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            in16[y][x] = in8[y][x] = (uint8_t)(x * 3 + y);
    DLTensor a = tensor(in16, shape, kDLUInt, 16), o = tensor(out, shape, kDLUInt, 8);
    if (brighten(&a, &o) != 0) {
        printf("brighten failed: %s\n", aicf_last_error());
        return 1;
    }
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            int want = in16[y][x] * 3 > 255 ? 255 : in16[y][x] * 3;
            if (out[y][x] != want) {
                printf("brighten is wrong at %d, %d\n", x, y);
                return 1;
            }
        }
    /* Its input is 16-bit: an 8-bit one is refused with a message. */
    DLTensor wrong = tensor(in8, shape, kDLUInt, 8);
    if (brighten(&wrong, &o) == 0 || strstr(aicf_last_error(), "expects uint16") == NULL) {
        printf("brighten accepted 8-bit input (%s)\n", aicf_last_error());
        return 1;
    }
    DLTensor b = tensor(in8, shape, kDLUInt, 8);
    if (brighten_tiny(&b, &o) != 0) {
        printf("brighten_tiny failed: %s\n", aicf_last_error());
        return 1;
    }
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            if (out[y][x] != in8[y][x]) {
                printf("brighten_tiny is wrong at %d, %d\n", x, y);
                return 1;
            }
    printf("ok\n");
    return 0;
}
