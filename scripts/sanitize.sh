#!/usr/bin/env bash
# Builds AICF and its tests with sanitizers and runs the fast labels under them; any report
# fails the run (the sanitizers abort on the first).
#   scripts/sanitize.sh           AddressSanitizer and UndefinedBehaviorSanitizer, in
#                                 build-sanitize/: the unit, errors and gpu labels, the test
#                                 that realizes from eight threads at once, and the quick
#                                 correctness tests (the reference interpreter, typed
#                                 expressions, inline math, the host runtime, the cache)
#   scripts/sanitize.sh thread    ThreadSanitizer, in build-tsan/: the eight-thread test, two
#                                 threads sharing a pipeline's memory pool, and the thread
#                                 pool of parallel loops, alone and running pipelines
# Both build at -O1 (quicker to compile, and the sanitizers' reports keep their frames).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install_deps.sh"
jobs=$(nproc 2>/dev/null || echo 2)

kind=${1:-address}
if [ "$kind" = thread ]; then
  build="${AICF_TSAN_BUILD_DIR:-$root/build-tsan}"
  sanitizers=thread
  targets=(test_correctness)
  labels=''
  correctness='^(Threads\.|HostMemoryPool\.TwoThreads|HostRuntime\.|ThreadPool\.)'
  # ThreadSanitizer does not support starting threads in the child of a threaded process.
  excluded='^ThreadPool\.(AForkedChild|AICF_NUM_THREADS)'
else
  build="${AICF_SANITIZE_BUILD_DIR:-$root/build-sanitize}"
  sanitizers=address,undefined
  targets=(test_unit test_errors test_gpu test_correctness)
  labels='^(unit|errors|gpu)$'
  correctness='^(Threads|ThreadPool|ReferenceInterpreter|TypedExpressions|InlineMath|HostMemoryPool|HostRuntime|Callable|CompileCache)\.'
  # Children forked while other threads compile hung in the AddressSanitizer build (two runs
  # of three; never in the plain build): where they wait is not yet known.
  excluded='^ThreadPool\.AForkedChildCompiles'
fi

if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELEASE=-O1 -DNDEBUG" \
    -DAICF_SANITIZE=$sanitizers
fi
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}"
cd "$build"
if [ -n "$labels" ]; then
  # A third of the random GPU schedules of the plain run (each about ten times slower here);
  # not the format check, which runs no library code.
  AICF_GPU_SCHEDULE_COUNT=${AICF_GPU_SCHEDULE_COUNT:-40} ctest --output-on-failure -j "$jobs" \
    -L "$labels" -E '^format$'
fi
# Fewer random expressions than the plain run: each compiles three pipelines.
AICF_TYPED_COUNT=${AICF_TYPED_COUNT:-40} ctest --output-on-failure -j "$jobs" -R "$correctness" \
  -E "$excluded"
