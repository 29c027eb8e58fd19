#!/usr/bin/env bash
# Builds and runs the CPU benchmarks (apps/bench_cpu), with Halide 14 installed as their peer
# (Debian's libhalide14-0-dev; the library itself never depends on it). Prints the table.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install_deps.sh" libhalide14-0-dev
build="${AICF_BUILD_DIR:-$root/build}"
# Configure again: bench_cpu looks for Halide when it is configured.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
"$root/scripts/build.sh" bench_cpu
"$build/apps/bench_cpu/bench_cpu"
