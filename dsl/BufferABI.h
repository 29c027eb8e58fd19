#ifndef AICF_BUFFER_ABI_H
#define AICF_BUFFER_ABI_H

/* The buffer descriptor compiled pipelines read and write. Plain C: generated code, the
 * runtime and ahead-of-time callers share it. Dimension 0 is innermost; strides count
 * elements, not bytes. */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aicf_dim_t {
    int32_t min;
    int32_t extent;
    int32_t stride;
    uint32_t flags;
} aicf_dim_t;

typedef struct aicf_type_t {
    uint8_t code; /* aicf::ir::TypeCode: 0 int, 1 uint, 2 float, 3 bfloat, 4 handle */
    uint8_t bits;
    uint16_t lanes;
} aicf_type_t;

typedef struct aicf_buffer_t {
    uint64_t device;        /* device allocation handle, 0 when none */
    void *device_interface; /* the device that owns `device` */
    uint8_t *host;          /* host data, or NULL */
    uint64_t flags;         /* AICF_BUFFER_HOST_DIRTY, AICF_BUFFER_DEVICE_DIRTY */
    aicf_type_t type;
    int32_t dimensions;
    aicf_dim_t *dim;
    void *reserved;
} aicf_buffer_t;

enum {
    AICF_BUFFER_HOST_DIRTY = 1,
    AICF_BUFFER_DEVICE_DIRTY = 2,
};

/* Byte offsets of the fields generated code reads. */
enum {
    AICF_BUFFER_OFFSET_HOST = 16,
    AICF_BUFFER_OFFSET_TYPE = 32,
    AICF_BUFFER_OFFSET_DIMENSIONS = 36,
    AICF_BUFFER_OFFSET_DIM = 40,
};

#ifdef __cplusplus
}
static_assert(offsetof(aicf_buffer_t, host) == AICF_BUFFER_OFFSET_HOST, "buffer ABI");
static_assert(offsetof(aicf_buffer_t, type) == AICF_BUFFER_OFFSET_TYPE, "buffer ABI");
static_assert(offsetof(aicf_buffer_t, dimensions) == AICF_BUFFER_OFFSET_DIMENSIONS, "buffer ABI");
static_assert(offsetof(aicf_buffer_t, dim) == AICF_BUFFER_OFFSET_DIM, "buffer ABI");
static_assert(sizeof(aicf_dim_t) == 16, "buffer ABI");
#endif

#endif
