#ifndef AICF_AOT_ABI_H
#define AICF_AOT_ABI_H

/* The C interface of pipelines compiled ahead of time (by a generator) and of the runtime
 * they link (libaicf_runtime). Plain C.
 *
 * Each pipeline `name` is three functions, declared in its generated header:
 *
 *   int name(DLTensor *in0, ..., float scalar0, ..., DLTensor *out0, ...);
 *   int name_argv(void **args);  // one pointer per argument: the DLTensor, or the value
 *   const aicf_pipeline_metadata_t *name_metadata(void);
 *
 * with the arguments in the generator's declaration order. name_metadata() never returns NULL:
 * for a library built for several targets it describes the build this machine runs, or the
 * first where none runs (every build takes the same arguments; calling it then fails with the
 * reason). They return 0, or a nonzero code
 * with the message in aicf_last_error(). Every argument is checked before any work: null
 * pointers, the device, element type, rank, shape and strides, and that each buffer covers
 * the region the pipeline reads or writes.
 *
 * Buffers are DLTensors (DLPack): row-major shapes, strides in elements (NULL: compact), the
 * data at `data + byte_offset`, in CPU memory (kDLCPU) or, for pipelines with GPU kernels, in
 * the memory of CUDA device 0 (kDLCUDA; used in place). AICF counts dimensions the other way round:
 * its dimension 0 is the innermost, DLPack's last axis; messages name both. */

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#include "dsl/BufferABI.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    AICF_ARGUMENT_SCALAR = 0, /* an input scalar, passed by value */
    AICF_ARGUMENT_INPUT = 1,  /* an input buffer */
    AICF_ARGUMENT_OUTPUT = 2, /* an output buffer */
};

typedef struct aicf_argument_metadata_t {
    const char *name;
    int32_t kind;       /* AICF_ARGUMENT_* */
    aicf_type_t type;   /* the scalar's type, or the buffer's element type */
    int32_t dimensions; /* buffers: the rank */
} aicf_argument_metadata_t;

typedef struct aicf_kernel_parameter_t {
    const char *name;
    int32_t is_buffer;
    int32_t scalar_bytes; /* scalars: the bytes a launch passes */
    int32_t written;      /* buffers: the kernel stores to it */
} aicf_kernel_parameter_t;

/* A kernel assembled for one GPU architecture. */
typedef struct aicf_cubin_t {
    int32_t compute_capability; /* 10 * major + minor: the GPUs that load it */
    int64_t size;
    const uint8_t *data;
} aicf_cubin_t;

/* One GPU kernel, as the object file carries it. */
typedef struct aicf_kernel_metadata_t {
    const char *name;
    int32_t threads[3];
    int64_t shared_bytes;
    int32_t min_compute_capability; /* 10 * major + minor of the GPU it was compiled for */
    int32_t parameter_count;
    const aicf_kernel_parameter_t *parameters;
    const char *ptx;          /* the kernel in PTX, NUL-terminated */
    const uint8_t *kernel_ir; /* the kernel for the simulator (serialized IR) */
    int64_t kernel_ir_size;
    int32_t cubin_count; /* assembled ahead of time, loaded instead of the PTX where they fit */
    const aicf_cubin_t *cubins;
} aicf_kernel_metadata_t;

typedef struct aicf_pipeline_metadata_t {
    const char *name;   /* the C function's name */
    const char *target; /* the Target it was compiled for, as a string */
    int32_t argument_count;
    const aicf_argument_metadata_t *arguments;
    int32_t kernel_count;
    const aicf_kernel_metadata_t *kernels;
    /* The compiled host code: (run context, one pointer per argument: an aicf_buffer_t * for
     * buffers, a pointer to the value for scalars). Called by aicf_run_pipeline only. */
    int32_t (*entry)(void *ctx, void *const *args);
} aicf_pipeline_metadata_t;

/* Runs a pipeline with one pointer per argument: the DLTensor for buffers, a pointer to the
 * value for scalars. What name() and name_argv() call. */
int aicf_run_pipeline(const aicf_pipeline_metadata_t *pipeline, void *const *args);

/* A library compiled for several targets holds one build of the pipeline per target, most
 * preferred first; its functions run the first build this machine runs:
 *   - its CPU has the features of the build's CPU level (x86-64-v3: AVX2 and FMA, ...);
 *   - for a build with GPU kernels, this process runs kernels on a CUDA GPU of the build's
 *     architecture or a newer one (device 0), or AICF_DEVICE=sim asks for the simulator.
 * Where none does, the last build whose CPU features are present (its kernels then run on the
 * device the process uses, the simulator without a GPU). The choice is made at the first call
 * and kept in *chosen. Returns NULL, with the reasons in aicf_last_error(), when no build's
 * CPU features are present. */
const aicf_pipeline_metadata_t *aicf_choose_pipeline(const aicf_pipeline_metadata_t *const *builds,
                                                     int32_t count,
                                                     const aicf_pipeline_metadata_t **chosen);

/* aicf_choose_pipeline, then aicf_run_pipeline with the build it chose. */
int aicf_run_chosen_pipeline(const aicf_pipeline_metadata_t *const *builds, int32_t count,
                             const aicf_pipeline_metadata_t **chosen, void *const *args);

/* The message of the last failed call on this thread ("" after a call of a pipeline that
 * succeeded; the metadata functions, and a choice of build that succeeds, leave it). The
 * text belongs to the thread and stays valid until its next call of a pipeline or choice of
 * build, which may replace or free it: copy it before calling again, and read it after the
 * call it reports on (not as another argument of the same function call). */
const char *aicf_last_error(void);

/* The CUDA stream (a CUstream of the primary context of device 0) that the kernels of the
 * calls made on this thread run on, as a framework's current stream; NULL (the default) is
 * the default stream. Each call returns when its kernels have finished. */
void aicf_set_cuda_stream(void *stream);

#ifdef __cplusplus
}
#endif

#endif
