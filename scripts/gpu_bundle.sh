#!/usr/bin/env bash
# Prepares what scripts/gpu_check.sh runs on a GPU machine, whose image has the CUDA driver
# and toolkit but not AICF's build dependencies (LLVM 19, GoogleTest): builds the GPU tests,
# lesson 5 and the GPU benchmark here, and packs them with the shared libraries they need
# (libLLVM among them) and libdevice into .gpu_bundle/aicf-gpu.tar.xz (about 46 MB; git
# ignores it). Carry .gpu_bundle with the device call.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${AICF_BUILD_DIR:-$root/build}"
"$root/scripts/build.sh" test_gpu test_errors lesson_05_gpu bench_gpu bench_norms gemm mlp_block aot_rms_norm_shared
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
cp "$build/tests/test_gpu" "$build/tests/test_errors" "$build/tutorials/lesson_05_gpu" "$build/apps/bench_gpu/bench_gpu" \
  "$build/apps/bench_norms/bench_norms" "$build/apps/gemm/gemm" \
  "$build/apps/mlp_block/mlp_block" "$stage/bin/"
cp -L "$build/libaicf.so" "$stage/lib/"
# Every library they load, the C library and its loader included: gpu_check.sh starts the
# programs through this loader, so they do not depend on the GPU machine's C library
# (libcuda.so.1, which they dlopen, still comes from that machine).
for f in "$stage"/bin/* "$stage/lib/libaicf.so"; do
  ldd "$f" | awk '/=> \// {print $3} /ld-linux/ {print $1}'
done | sort -u | while read -r lib; do cp -L "$lib" "$stage/lib/"; done
# Loaded with dlopen, so ldd does not list them: the C library's compatibility stubs, and its
# vector math library (which the JIT's code calls for exp, log, tanh, erf and pow).
for stub in libpthread.so.0 libdl.so.2 librt.so.1 libmvec.so.1; do
  [ -e "/lib/x86_64-linux-gnu/$stub" ] && cp -L "/lib/x86_64-linux-gnu/$stub" "$stage/lib/"
done
# The pipeline compiled ahead of time that scripts/torch_aot_check.py calls from PyTorch, with
# the runtime it links: loaded into the GPU machine's own Python, so not through the loader.
mkdir -p "$stage/aot/tests"
cp -L "$build/tests/libaot_rms_norm_shared.so" "$build/libaicf_runtime.so" "$stage/aot/tests/"
libdevice=$(ls /usr/local/cuda/nvvm/libdevice/libdevice.10.bc 2>/dev/null || true)
[ -n "$libdevice" ] && cp "$libdevice" "$stage/lib/"
mkdir -p "$root/.gpu_bundle"
tar -C "$stage" -cf - bin lib aot | xz -T0 -6 > "$root/.gpu_bundle/aicf-gpu.tar.xz"
ls -l "$root/.gpu_bundle/aicf-gpu.tar.xz"
