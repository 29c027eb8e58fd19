#ifndef AICF_BACKENDS_RUNTIME_RUNTIME_H
#define AICF_BACKENDS_RUNTIME_RUNTIME_H

// The functions compiled host code calls, and the context a pipeline runs with.

#include "backends/runtime/CompiledKernel.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace aicf {

class HostMemoryPool;

namespace runtime {

// State of one pipeline run: the first error raised, and the heap allocations still live
// (freed when the run ends, whether or not it failed).
// Parallel loops share it across threads, hence the lock.
class Device;

struct RunContext {
    RunContext();
    std::mutex lock;
    std::string error;
    // The type of Error the run raised, kept across the C functions compiled code calls: a
    // kernel's fault on the simulator (KernelFault), or an InternalError (a launch compiling
    // its kernels); any other error in a run is a RuntimeError.
    enum class ErrorType { Runtime, KernelFault, Internal };
    ErrorType error_type = ErrorType::Runtime;
    // The heap allocations still live, one list per thread that allocates: a Func computed
    // per row of a parallel loop allocates and frees once a row, and a list shared by the
    // threads made them wait for each other (half the time of a fused layernorm + softmax).
    struct Block {
        void *p;
        size_t bytes; // as requested
    };
    struct Allocations {
        std::vector<Block> live;
        // Small blocks this thread freed, kept for its next allocations in this run: the C
        // library's aligned allocation and free of a row's 4 KiB took a sixth of a fused
        // softmax's time.
        std::vector<Block> spare;
        size_t spare_bytes = 0;
    };
    // This thread's list (registered, under the lock, the first time the thread asks).
    Allocations &thread_allocations();
    // A small block (below pooled_allocation_threshold) of at least `bytes` (and at most
    // twice as many) that this thread freed earlier in the run, or nullptr.
    void *reuse(size_t bytes);
    // Forgets p: from this thread's list, or from another thread's (under the lock). Returns
    // whether it is done with p: a small block of this thread's, kept for reuse.
    bool forget(void *p);
    // GPU pipelines: the kernels gpu_launch refers to by index, the device they run on
    // (chosen at the first launch), and the device intermediates still live.
    const std::vector<CompiledKernel> *kernels = nullptr;
    // Where large host allocations come from and go back to (the compiled pipeline's pool),
    // or nullptr: the heap.
    HostMemoryPool *pool = nullptr;
    Device *device = nullptr;
    std::vector<void *> live_device_buffers;
    ~RunContext();

private:
    uint64_t id; // unique among the contexts of the process, for the threads' cached lists
    std::vector<std::unique_ptr<Allocations>> allocations;
};

// The message of a runtime error of the given kind (ir::RuntimeErrorKind) about `name`, with
// its six details, as a pipeline reports it.
std::string describe_runtime_error(int32_t kind, const char *name, const int64_t *details);

} // namespace runtime
} // namespace aicf

extern "C" {
// Records a runtime error of the given kind (aicf::ir::RuntimeErrorKind) about `name`, with
// up to six integer details. Returns the error code the pipeline returns.
int32_t aicf_runtime_error(void *ctx, int32_t kind, const char *name, int64_t a, int64_t b,
                           int64_t c, int64_t d, int64_t e, int64_t f);
// Allocates `bytes` for the allocation `name`; records an error and returns null on failure.
void *aicf_malloc(void *ctx, const char *name, int64_t bytes);
void aicf_free(void *ctx, void *p);
// Runs body(ctx, i, closure) for i in [min, min + extent) on the CPU's threads. Returns 0, or
// the first nonzero code a body returned (the remaining iterations are skipped).
typedef int32_t (*aicf_parallel_body)(void *ctx, int32_t i, void *closure);
int32_t aicf_parallel_for(void *ctx, aicf_parallel_body body, int32_t min, int32_t extent,
                          void *closure);

// Runs kernel number `kernel` of the pipeline over the grid (gx, gy, gz); `args` holds one
// pointer per kernel argument (an aicf_buffer_t * for buffers, a pointer to the value for
// scalars). Buffers are copied to the device first where needed; the ones the kernel writes
// are newer on the device afterwards. Returns 0 or an error code (the error is recorded).
int32_t aicf_gpu_launch(void *ctx, int32_t kernel, int32_t gx, int32_t gy, int32_t gz,
                        void *const *args);
// A device allocation of `bytes` for the intermediate `name`, as an aicf_buffer_t * with no
// host memory; null (with the error recorded) on failure.
void *aicf_device_malloc(void *ctx, const char *name, int64_t bytes);
// The same for an intermediate that host code also reads or writes, at `host` (`bytes` of
// elements of `element_bytes`): the buffer's data moves between the two copies as it does
// for a pipeline's buffers (aicf_gpu_launch, aicf_buffer_copy_to_host).
void *aicf_device_malloc_for_host(void *ctx, const char *name, int64_t bytes, void *host,
                                  int32_t element_bytes);
void aicf_device_free(void *ctx, void *buffer);
// Brings a buffer's data back to the host if the device copy is newer; with `writes`, marks
// the host copy as newer. Returns 0 or an error code.
int32_t aicf_buffer_copy_to_host(void *ctx, void *buffer, int32_t writes);
}

#endif
