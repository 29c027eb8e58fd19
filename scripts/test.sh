#!/usr/bin/env bash
# Builds everything and runs the whole test suite (ctest). Extra arguments go to ctest,
# e.g. `scripts/test.sh -L correctness`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
jobs=$(nproc 2>/dev/null || echo 2)
cd "${AICF_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j "$jobs" "$@"
