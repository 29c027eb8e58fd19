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
    AICF_BUFFER_HOST_DIRTY = 1,   /* the host copy is newer than the device copy */
    AICF_BUFFER_DEVICE_DIRTY = 2, /* the device copy is newer than the host copy */
};

/* A device's memory operations, reached through a buffer's `device_interface`. Each returns
 * 0 on success; on failure it returns nonzero and writes a message (NUL-terminated, at most
 * `error_size` bytes) to `error`. `bytes` is the buffer's footprint (aicf_buffer_footprint). */
typedef struct aicf_device_interface_t {
    const char *name;
    int (*device_malloc)(aicf_buffer_t *b, int64_t bytes, char *error, size_t error_size);
    void (*device_free)(aicf_buffer_t *b);
    int (*copy_to_device)(aicf_buffer_t *b, int64_t bytes, char *error, size_t error_size);
    int (*copy_to_host)(aicf_buffer_t *b, int64_t bytes, char *error, size_t error_size);
} aicf_device_interface_t;

/* The bytes from `host` to one past the last element (strides must not be negative);
 * -1 when a stride is negative. */
static inline int64_t aicf_buffer_footprint(const aicf_buffer_t *b) {
    int64_t last = 0;
    for (int32_t d = 0; d < b->dimensions; d++) {
        if (b->dim[d].extent <= 0) return 0;
        if (b->dim[d].stride < 0) return -1;
        last += (int64_t)(b->dim[d].extent - 1) * b->dim[d].stride;
    }
    return (last + 1) * ((b->type.bits + 7) / 8) * (b->type.lanes ? b->type.lanes : 1);
}

/* The bytes the elements of `b` span from `base` (its host or device address), as
 * [*first, *end); empty (*first == *end) when it has no elements. Strides may be negative. */
static inline void aicf_buffer_span(const aicf_buffer_t *b, uint64_t base, uint64_t *first,
                                    uint64_t *end) {
    int64_t lo = 0, hi = 0, elem = ((b->type.bits + 7) / 8) * (b->type.lanes ? b->type.lanes : 1);
    *first = *end = 0;
    for (int32_t d = 0; d < b->dimensions; d++) {
        int64_t span = (int64_t)(b->dim[d].extent - 1) * b->dim[d].stride;
        if (b->dim[d].extent <= 0) return;
        if (span < 0)
            lo += span;
        else
            hi += span;
    }
    *first = base + (uint64_t)(lo * elem);
    *end = base + (uint64_t)((hi + 1) * elem);
}

/* A dimension of `b` whose points share memory with other points of `b` (its stride is no
 * larger than the span of the dimensions of smaller strides: a stride of 0 over more than one
 * point, or rows that overlap), or -1 when every point has memory of its own. */
static inline int32_t aicf_buffer_self_overlap(const aicf_buffer_t *b) {
    int64_t covered = 0, last_stride = -1; /* in elements */
    int32_t last = -1;
    for (int32_t d = 0; d < b->dimensions; d++)
        if (b->dim[d].extent <= 0) return -1;
    /* The dimensions of more than one point, by increasing |stride| (then index). */
    for (int32_t k = 0; k < b->dimensions; k++) {
        int32_t next = -1;
        int64_t next_stride = 0;
        for (int32_t d = 0; d < b->dimensions; d++) {
            int64_t s = b->dim[d].stride < 0 ? -(int64_t)b->dim[d].stride : b->dim[d].stride;
            if (b->dim[d].extent <= 1) continue;
            if (s < last_stride || (s == last_stride && d <= last)) continue;
            if (next < 0 || s < next_stride || (s == next_stride && d < next))
                next = d, next_stride = s;
        }
        if (next < 0) break;
        if (next_stride <= covered && (covered > 0 || next_stride == 0)) return next;
        covered += (int64_t)(b->dim[next].extent - 1) * next_stride;
        last_stride = next_stride;
        last = next;
    }
    return -1;
}

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
