#!/usr/bin/env bash
# Builds and runs the AICF demo (apps/demo).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" aicf_demo
"${AICF_BUILD_DIR:-$root/build}/apps/demo/aicf_demo"
