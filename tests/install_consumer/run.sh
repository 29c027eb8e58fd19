#!/usr/bin/env bash
# Installs AICF from a build folder into a fresh prefix, then configures, builds and runs the
# consumer project against the installed package only. Usage: run.sh BUILD_DIR SCRATCH_DIR
set -euo pipefail
build=$1
scratch=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$scratch"
mkdir -p "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" > "$scratch/install.log"
# Only the public headers are installed.
if [ -d "$scratch/prefix/include/aicf/lowering" ] || [ -d "$scratch/prefix/include/aicf/backends/llvm" ]; then
  echo "FAIL: compiler internals were installed"
  exit 1
fi
generator=()
if command -v ninja > /dev/null; then generator=(-G Ninja); fi
cmake -S "$here" -B "$scratch/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$scratch/prefix" > "$scratch/configure.log"
cmake --build "$scratch/build" -j 2 > "$scratch/build.log" || { cat "$scratch/build.log"; exit 1; }
"$scratch/build/use_brighten"
AICF_DEVICE=sim "$scratch/build/jit_profile"
