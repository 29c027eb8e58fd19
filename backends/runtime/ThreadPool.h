#ifndef AICF_BACKENDS_RUNTIME_THREAD_POOL_H
#define AICF_BACKENDS_RUNTIME_THREAD_POOL_H

// The threads that run parallel loops on the CPU.
//
// One pool per process, started at the first parallel loop: one thread per core the process
// may run on, less the caller's (AICF_NUM_THREADS, or else OMP_NUM_THREADS, sets the total).
// A parallel loop is a job the caller puts on the pool's list; the caller runs iterations
// itself at once, and idle workers join as they come. The caller waits only for the workers
// that took iterations, never for one still waking up: a worker that arrives after the last
// iteration was claimed finds nothing to do, and the loop has already returned. Between loops
// workers spin for a few milliseconds before they sleep, so loops that follow one another
// find them awake; while they spin they yield their cores to any thread that has work, so a
// machine busy with other processes is not slowed by them.
//
// A parallel loop inside another runs serially on the thread that reaches it. Several threads
// may run parallel loops at once; the workers help the oldest loop with iterations left.

#include <cstdint>

namespace aicf {
namespace runtime {

typedef int32_t (*ParallelBody)(void *ctx, int32_t i, void *closure);

// Runs body(ctx, i, closure) for i in [min, min + extent). Returns 0, or the first nonzero
// code a body returned (the iterations not started by then are skipped).
int32_t parallel_for(ParallelBody body, void *ctx, int32_t min, int32_t extent, void *closure);

// How many threads run a parallel loop, the caller included.
int parallel_threads();

} // namespace runtime
} // namespace aicf

#endif
