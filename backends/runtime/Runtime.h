#ifndef AICF_BACKENDS_RUNTIME_RUNTIME_H
#define AICF_BACKENDS_RUNTIME_RUNTIME_H

// The functions compiled host code calls, and the context a pipeline runs with.

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace aicf {
namespace runtime {

// State of one pipeline run: the first error raised, and the heap allocations still live
// (freed when the run ends, whether or not it failed).
// Parallel loops share it across threads, hence the lock.
struct RunContext {
    std::mutex lock;
    std::string error;
    std::vector<void *> live_allocations;
    ~RunContext();
};

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
}

#endif
