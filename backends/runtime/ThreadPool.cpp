#include "backends/runtime/ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <pthread.h>
#include <sched.h>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace aicf {
namespace runtime {
namespace {

// A parallel loop on the pool's list. Lives on its caller's stack until the caller has taken it
// off the list and every worker that joined it has left.
struct Job {
    ParallelBody body;
    void *ctx;
    void *closure;
    int32_t min, extent;
    int threads;                            // the pool's size, for the chunk sizes
    int caller_cpu;                         // where the caller runs (sched_getcpu), or -1
    std::atomic<int32_t> next{0};           // the first iteration not yet claimed
    std::atomic<int32_t> result{0};         // the first nonzero code a body returned
    std::atomic<int> helpers{0};            // workers inside; joined under the pool's lock
    Job *older = nullptr, *newer = nullptr; // the pool's list (under its lock)

    // Claims the next chunk of iterations: [*first, *first + *count). Chunks shrink as the loop
    // goes (half the remaining share of each thread), so the threads finish together even when
    // iterations differ in cost. False when nothing is left or a body failed.
    bool claim(int32_t *first, int32_t *count) {
        int32_t i = next.load(std::memory_order_relaxed);
        while (i < extent && result.load(std::memory_order_relaxed) == 0) {
            int32_t c = std::max<int32_t>(1, (extent - i) / (2 * threads));
            if (next.compare_exchange_weak(i, i + c, std::memory_order_relaxed)) {
                *first = i;
                *count = c;
                return true;
            }
        }
        return false;
    }

    bool open() const {
        return next.load(std::memory_order_relaxed) < extent &&
               result.load(std::memory_order_relaxed) == 0;
    }

    // Runs chunks until none is left.
    void run() {
        int32_t first, count;
        while (claim(&first, &count)) {
            for (int32_t i = first; i < first + count; i++) {
                int32_t r = body(ctx, min + i, closure);
                if (r != 0) {
                    int32_t none = 0;
                    result.compare_exchange_strong(none, r);
                    return;
                }
            }
        }
    }
};

// Set on the pool's workers, and on a caller while it runs its loop's iterations: a parallel
// loop reached there runs serially.
thread_local bool inside_parallel_loop = false;

// How long a thread waits for another by spinning before it sleeps: first `pause_rounds`
// looks a few nanoseconds apart (tens of microseconds in all), then `yield_rounds` looks that
// each give the core to any other thread that wants it (a few milliseconds on an idle core).
// Waking a sleeping thread takes tens of microseconds on a machine of its own and up to
// milliseconds on a virtual one, more than many parallel loops take; yielding while spinning
// keeps a busy machine's cores for the threads that have work. Counted in rounds, not in time:
// a thread that does not get a core for a while has not spun meanwhile.
constexpr int pause_rounds = 2048;
constexpr int yield_rounds = 4096;

// Spins until done() or the rounds are up; returns done().
template <typename Done> bool spin_until(Done done) {
    for (int round = 0; round < pause_rounds + yield_rounds; round++) {
        if (done()) return true;
        if (round < pause_rounds) {
#if defined(__x86_64__) || defined(__i386__)
            _mm_pause();
#endif
        } else {
            sched_yield();
        }
    }
    return done();
}

// A whole number of threads from AICF_NUM_THREADS, or else the first of OMP_NUM_THREADS's list
// ("8" or "8,2"); anything else (0, negative, not a number) is ignored, and an absurd count is
// capped.
int threads_from_environment() {
    for (const char *name : {"AICF_NUM_THREADS", "OMP_NUM_THREADS"}) {
        const char *v = std::getenv(name);
        if (!v) continue;
        char *end = nullptr;
        errno = 0;
        long n = std::strtol(v, &end, 10);
        const bool whole =
            end != v && errno == 0 && (*end == '\0' || (*end == ',' && name[0] == 'O'));
        if (whole && n >= 1) return int(std::min(n, 1024L));
    }
    cpu_set_t cores;
    if (sched_getaffinity(0, sizeof cores, &cores) == 0) return std::max(1, CPU_COUNT(&cores));
    return std::max(1, int(std::thread::hardware_concurrency()));
}

// A worker woken onto the core its caller runs on only gets that core when the caller stops:
// the scheduler places a woken thread on the core it last ran on or its waker's, and does
// not always look further (a virtual machine whose cores share no cache). Such a worker moves
// itself to another core it may run on.
void leave_core(int cpu) {
    if (cpu < 0 || sched_getcpu() != cpu) return;
    cpu_set_t allowed, others;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
    others = allowed;
    CPU_CLR(cpu, &others);
    if (CPU_COUNT(&others) == 0) return;
    if (sched_setaffinity(0, sizeof others, &others) == 0)
        sched_setaffinity(0, sizeof allowed, &allowed);
}

class Pool {
public:
    explicit Pool(int threads) : threads(threads) {
        for (int t = 1; t < threads; t++) {
            try {
                std::thread([this] { work(); }).detach();
            } catch (...) {
                this->threads = t; // no more threads (or memory) to be had: fewer workers
                break;
            }
        }
    }

    int size() const { return threads; }

    int32_t run(ParallelBody body, void *ctx, int32_t min, int32_t extent, void *closure) {
        Job job;
        job.body = body;
        job.ctx = ctx;
        job.closure = closure;
        job.min = min;
        job.extent = extent;
        job.threads = threads;
        job.caller_cpu = sched_getcpu();
        {
            std::lock_guard<std::mutex> guard(lock);
            job.older = newest;
            (newest ? newest->newer : oldest) = &job;
            newest = &job;
            posted.fetch_add(1, std::memory_order_release);
            for (int i = std::min(sleeping, extent - 1); i > 0; i--)
                work_ready.notify_one();
        }
        inside_parallel_loop = true;
        job.run();
        inside_parallel_loop = false;
        {
            // Off the list: no worker joins it any more.
            std::lock_guard<std::mutex> guard(lock);
            (job.older ? job.older->newer : oldest) = job.newer;
            (job.newer ? job.newer->older : newest) = job.older;
        }
        // The workers still inside run their last chunks.
        auto left = [&] { return job.helpers.load(std::memory_order_acquire) == 0; };
        if (!spin_until(left)) {
            std::unique_lock<std::mutex> guard(lock);
            waiting_callers++;
            job_left.wait(guard, left);
            waiting_callers--;
        }
        return job.result.load(std::memory_order_relaxed);
    }

private:
    // A worker: helps the oldest loop with iterations left; spins, then sleeps, when none has.
    void work() {
        inside_parallel_loop = true;
        std::unique_lock<std::mutex> guard(lock);
        for (;;) {
            Job *job = oldest;
            while (job && !job->open())
                job = job->newer;
            if (job) {
                job->helpers.fetch_add(1, std::memory_order_relaxed);
                guard.unlock();
                leave_core(job->caller_cpu);
                job->run();
                // The caller may return once helpers is 0: nothing of `job` is read after it.
                job->helpers.fetch_sub(1, std::memory_order_seq_cst);
                guard.lock();
                if (waiting_callers > 0) job_left.notify_all();
                continue;
            }
            const uint64_t seen = posted.load(std::memory_order_relaxed);
            guard.unlock();
            bool more = spin_until([&] { return posted.load(std::memory_order_acquire) != seen; });
            guard.lock();
            if (more) continue;
            sleeping++;
            work_ready.wait(guard, [&] { return posted.load(std::memory_order_relaxed) != seen; });
            sleeping--;
        }
    }

    int threads;
    std::mutex lock;
    std::condition_variable work_ready, job_left;
    Job *oldest = nullptr, *newest = nullptr; // the loops running, linked (no allocation)
    std::atomic<uint64_t> posted{0};          // loops ever posted (changed under the lock)
    int sleeping = 0;                         // workers waiting on work_ready
    int waiting_callers = 0;                  // callers waiting on job_left
};

std::atomic<Pool *> current_pool{nullptr};
std::mutex pool_creation;

// The process's pool, started at the first call; nullptr where none can be had (no memory).
Pool *pool() noexcept try {
    Pool *p = current_pool.load(std::memory_order_acquire);
    if (p) return p;
    std::lock_guard<std::mutex> guard(pool_creation);
    p = current_pool.load(std::memory_order_relaxed);
    if (!p) {
        // A child process made by fork has none of its parent's workers: it starts a pool of
        // its own (the parent's stays allocated, untouched).
        static bool registered = pthread_atfork(nullptr, nullptr, [] {
                                     current_pool.store(nullptr, std::memory_order_relaxed);
                                 }) == 0;
        (void)registered;
        // Kept for the life of the process: its workers never stop.
        p = new Pool(threads_from_environment());
        current_pool.store(p, std::memory_order_release);
    }
    return p;
} catch (...) {
    return nullptr;
}

} // namespace

int32_t parallel_for(ParallelBody body, void *ctx, int32_t min, int32_t extent, void *closure) {
    if (extent <= 0) return 0;
    // Nothing here throws: compiled code, which calls this, has no way to pass an exception on.
    Pool *p = extent > 1 && !inside_parallel_loop ? pool() : nullptr;
    if (p && p->size() > 1) return p->run(body, ctx, min, extent, closure);
    for (int32_t i = 0; i < extent; i++) {
        int32_t r = body(ctx, min + i, closure);
        if (r != 0) return r;
    }
    return 0;
}

int parallel_threads() {
    Pool *p = pool();
    return p ? p->size() : 1;
}

} // namespace runtime
} // namespace aicf
