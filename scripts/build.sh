#!/usr/bin/env bash
# Installs what AICF needs (once), configures a Release build in build/ and builds the given
# targets (all when none are given).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install_deps.sh"
build="${AICF_BUILD_DIR:-$root/build}"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
jobs=$(nproc 2>/dev/null || echo 2)
if [ $# -eq 0 ]; then
  cmake --build "$build" -j "$jobs"
else
  cmake --build "$build" -j "$jobs" --target "$@"
fi
