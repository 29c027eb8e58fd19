#!/usr/bin/env bash
# On a machine with a CUDA GPU, in one command of a few minutes: runs the GPU test suite on
# the GPU (AICF_DEVICE=cuda, kernels compiled for sm_90), lesson 5 and the GPU benchmarks,
# and prints one summary table last. It runs what scripts/gpu_bundle.sh packed on a
# development machine (carry .gpu_bundle with the call); with no bundle it builds here.
# Full logs go to $OUT (or /tmp/aicf-gpu-logs); AICF_GPU_CHECK_PACK=file packs them into one
# file, AICF_GPU_CHECK_SECONDS bounds the whole check and AICF_GPU_CHECK_STEPS picks steps
# (see step() below).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
logs="${OUT:-/tmp/aicf-gpu-logs}"
mkdir -p "$logs"
if [ -f "$root/.gpu_bundle/aicf-gpu.tar.xz" ]; then
  dir=$(mktemp -d)
  tar -C "$dir" -xJf "$root/.gpu_bundle/aicf-gpu.tar.xz"
  bin="$dir/bin"
  # The bundle's own loader and libraries (its C library too), for these programs only.
  loader=$(ls "$dir"/lib/ld-linux*.so* | head -n 1)
  run=("$loader" --library-path "$dir/lib")
  [ -f "$dir/lib/libdevice.10.bc" ] && export AICF_LIBDEVICE="$dir/lib/libdevice.10.bc"
else
  run=()
  "$root/scripts/build.sh" test_gpu test_errors lesson_05_gpu bench_gpu bench_norms gemm mlp_block aot_rms_norm_shared || exit 1
  build="${AICF_BUILD_DIR:-$root/build}"
  mkdir -p "$build/gpu_bin"
  ln -sf "$build/tests/test_gpu" "$build/tests/test_errors" "$build/tutorials/lesson_05_gpu" "$build/apps/bench_gpu/bench_gpu" \
    "$build/apps/bench_norms/bench_norms" "$build/apps/gemm/gemm" "$build/apps/mlp_block/mlp_block" \
    "$build/gpu_bin/"
  bin="$build/gpu_bin"
fi
export AICF_DEVICE=cuda AICF_TEST_GPU_TARGET=host-cuda-sm_90
# The PyTorch peers below share scripts/torch_timing.py.
export PYTHONPATH="$root/scripts${PYTHONPATH:+:$PYTHONPATH}"

# Each step has its own time limit (exit 124 when it runs out), so that a hung kernel costs
# one step, not the whole device call; AICF_GPU_CHECK_SECONDS bounds the steps together, and
# a step that finds less than 10 s left is skipped (exit 125). The steps run in order of what
# the open work needs: the AOT kernel from PyTorch, the MLP block and its PyTorch peers, the
# GPU tests, then the benchmarks.
deadline=$(( $(date +%s) + ${AICF_GPU_CHECK_SECONDS:-3600} ))
# step NAME LIMIT COMMAND...: runs COMMAND with its output in $logs/NAME.log; its exit status
# goes into rc_NAME. With AICF_GPU_CHECK_STEPS set (names, as "test_gpu gemm"), only the steps
# it names run.
step() {
  local name=$1 limit=$2 left
  shift 2
  if [ -n "${AICF_GPU_CHECK_STEPS:-}" ] && [[ " $AICF_GPU_CHECK_STEPS " != *" $name "* ]]; then
    echo "not run: AICF_GPU_CHECK_STEPS does not name it" > "$logs/$name.log"
    printf -v "rc_$name" 0
    return
  fi
  left=$(( deadline - $(date +%s) ))
  [ "$left" -lt "$limit" ] && limit=$left
  if [ "$limit" -lt 10 ]; then
    echo "skipped: the check's time budget (AICF_GPU_CHECK_SECONDS) was spent" > "$logs/$name.log"
    printf -v "rc_$name" 125
    return
  fi
  timeout "$limit" "$@" > "$logs/$name.log" 2>&1
  printf -v "rc_$name" "%d" $?
}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$logs/gpu.txt" 2>&1
# A pipeline compiled ahead of time, called from PyTorch through DLPack (CUDA tensors in
# place, CPU tensors copied), against PyTorch's own result: the build tree's library, or the
# bundle's copy of it (loaded into this machine's Python, with the runtime beside it).
if [ -z "${dir:-}" ]; then
  step torch_aot 120 python3 "$root/scripts/torch_aot_check.py" "${AICF_BUILD_DIR:-$root/build}"
else
  LD_LIBRARY_PATH="$dir/aot/tests${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    step torch_aot 120 python3 "$root/scripts/torch_aot_check.py" "$dir/aot"
fi
# The transformer MLP block (2048 x 4096 x 16384), one kernel per operator and with fused
# epilogues; PyTorch eager and torch.compile on the same block below.
step mlp_block 300 "${run[@]}" "$bin/mlp_block"
# PyTorch's time against the block's ideal bound, which mlp_block prints (the compulsory
# bytes or the products' flops at the H200's datasheet peaks).
export MLP_IDEAL_MS=$(grep -oE "ideal bound on [A-Z0-9]+: [0-9.]+" "$logs/mlp_block.log" | grep -oE "[0-9.]+$")
step torch_mlp 240 python3 - <<'PY'
import os
import torch
import torch.nn.functional as F
from torch_timing import median_ms
tokens, d, hidden = 2048, 4096, 16384
bf = torch.bfloat16
x = torch.randn(tokens, d, device="cuda", dtype=bf)
ln = torch.nn.LayerNorm(d, device="cuda", dtype=bf)
l1 = torch.nn.Linear(d, hidden, device="cuda", dtype=bf)
l2 = torch.nn.Linear(hidden, d, device="cuda", dtype=bf)
def mlp(x):
    return x + l2(F.gelu(l1(ln(x))))
flops = 4 * tokens * d * hidden
ideal = float(os.environ.get("MLP_IDEAL_MS") or "nan")
def row(name, ms):
    share = f"{100 * ideal / ms:.0f}% of the ideal bound" if ideal == ideal else "-"
    print(f"| {name} | {tokens} x {d} x {hidden} | {ms:.3f} ms | {flops / ms / 1e9:.1f} TFLOP/s | {share} |", flush=True)
with torch.no_grad():
    row("torch eager MLP", median_ms(lambda: mlp(x), 10))
    try:
        compiled = torch.compile(mlp)
        row("torch.compile MLP", median_ms(lambda: compiled(x), 10))
    except Exception as e:
        print(f"torch.compile failed: {type(e).__name__}: {str(e)[:200]}")
PY
step test_gpu 240 "${run[@]}" "$bin/test_gpu"
# Run-time checks that fail inside kernels: raised as messages, the CUDA context still usable.
step gpu_errors 60 env GTEST_FILTER='GPURuntimeErrors.*' "${run[@]}" "$bin/test_errors"
# The tensor-core GEMM's variants (types, fused epilogues; JIT and AOT) at 4096^3.
step gemm 180 "${run[@]}" "$bin/gemm"
step bench_norms 240 "${run[@]}" "$bin/bench_norms"
# The peers for the norms: PyTorch's own kernels on the same shapes, in GB/s of the same
# compulsory bytes.
step torch_norms 120 python3 - <<'PY'
import torch
import torch.nn.functional as F
from torch_timing import median_ms
print("| torch op | rows x cols | type | median ms | GB/s |")
for rows, cols in [(16384, 1024), (4096, 8192), (1024, 65536)]:
    for dtype, name in [(torch.float32, "f32"), (torch.bfloat16, "bf16")]:
        x = torch.randn(rows, cols, device="cuda", dtype=dtype)
        w = torch.rand(cols, device="cuda", dtype=dtype) + 0.5
        b = torch.randn(cols, device="cuda", dtype=dtype)
        ops = [("layernorm", lambda: F.layer_norm(x, (cols,), w, b, 1e-5), 2),
               ("softmax", lambda: torch.softmax(x, -1), 0)]
        if hasattr(F, "rms_norm"):
            ops.insert(1, ("rmsnorm", lambda: F.rms_norm(x, (cols,), w, 1e-5), 1))
        for op, f, params in ops:
            ms = median_ms(f)
            size = x.element_size() * cols * (2 * rows + params)
            print(f"| {op} | {rows} x {cols} | {name} | {ms:.3f} | {size / ms / 1e6:.1f} |", flush=True)
PY
step bench_gpu 180 "${run[@]}" "$bin/bench_gpu"
# The peer for matmul: PyTorch's float32 matrix product (TF32 off) on the same GPU.
step torch_peer 90 python3 - <<'PY'
import torch
from torch_timing import median_ms
torch.backends.cuda.matmul.allow_tf32 = False
n = 2048
a = torch.randn(n, n, device="cuda"); b = torch.randn(n, n, device="cuda")
ms = median_ms(lambda: a @ b)
print(f"| torch matmul | {n}^3 f32 (cuBLAS, TF32 off) | {ms:.3f} ms | {2 * n**3 / ms / 1e9:.2f} TFLOP/s |")
# The peer for the tensor-core gemm: bf16 inputs (M x K times K x N), as bench_gpu's rows.
for m, n_, k in [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 4096, 16384)]:
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n_, device="cuda", dtype=torch.bfloat16)
    ms = median_ms(lambda: a @ b, 10)
    print(f"| torch matmul | {m}x{n_}x{k} bf16 (cuBLAS) | {ms:.3f} ms | {2 * m * n_ * k / ms / 1e9:.1f} TFLOP/s |")
PY
step lesson_05_gpu 60 "${run[@]}" "$bin/lesson_05_gpu"

# Optional: more random GPU schedules on the GPU itself, one seed per process, as many at
# once as AICF_GPU_SWEEP_JOBS (default 8): AICF_GPU_SWEEP="seed seed ..." and
# AICF_GPU_SCHEDULE_COUNT schedules per seed (default 100).
sweep_rc=0
if [ -n "${AICF_GPU_SWEEP:-}" ]; then
  export AICF_GPU_SCHEDULE_COUNT="${AICF_GPU_SCHEDULE_COUNT:-100}"
  sweep_logs=$(mktemp -d)
  sweep_one() {
    AICF_GPU_SCHEDULE_SEED=$1 timeout 300 "${run[@]}" "$bin/test_gpu" \
      --gtest_filter='GPUScheduleProperty.*' > "$sweep_logs/$1.log" 2>&1
    echo "seed $1: exit $?"
  }
  sweep_started=$(date +%s)
  for s in $AICF_GPU_SWEEP; do echo "$s"; done |
    { while read -r s; do
        while [ "$(jobs -rp | wc -l)" -ge "${AICF_GPU_SWEEP_JOBS:-8}" ]; do sleep 0.2; done
        sweep_one "$s" &
      done; wait; } > "$logs/sweep.txt"
  sweep_seconds=$(( $(date +%s) - sweep_started ))
  grep -qv ': exit 0$' "$logs/sweep.txt" && sweep_rc=1
  # The failing seeds' logs, in one file.
  for s in $(grep -v ': exit 0$' "$logs/sweep.txt" | awk '{print $2}' | tr -d :); do
    echo "=== seed $s"; cat "$sweep_logs/$s.log"
  done > "$logs/sweep_failures.log"
fi

# show STEP PATTERN N: the lines of the step's log that match, or else its last N lines.
show() { grep -E "$2" "$logs/$1.log" || tail -n "$3" "$logs/$1.log"; }
echo "== GPU: $(cat "$logs/gpu.txt")"
echo "== a pipeline compiled ahead of time, called from PyTorch: exit $rc_torch_aot"
show torch_aot "^\| " 5
echo "== transformer MLP block: exit $rc_mlp_block (PyTorch: exit $rc_torch_mlp)"
show mlp_block "^\| |^ideal bound" 5
show torch_mlp "^\| |failed" 3
echo "== GPU tests (AICF_DEVICE=cuda, sm_90): exit $rc_test_gpu"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \] [A-Za-z]" "$logs/test_gpu.log" | head -20
grep -E "layernorm .* one block per row" "$logs/test_gpu.log"
# The first failures in full, so one call is enough to start fixing them.
grep -B2 -A8 -E "Failure|RuntimeError|CompileError|InternalError" "$logs/test_gpu.log" | head -60
[ "$rc_test_gpu" -ne 0 ] && tail -n 5 "$logs/test_gpu.log"
echo "== run-time checks inside kernels (test_errors GPURuntimeErrors.*): exit $rc_gpu_errors"
grep -E "^\[ +(OK|FAILED|PASSED) " "$logs/gpu_errors.log" | head -10
[ "$rc_gpu_errors" -ne 0 ] && grep -B2 -A8 -E "Failure|Error" "$logs/gpu_errors.log" | head -30
echo "== tensor-core GEMM variants: exit $rc_gemm"
show gemm "^\| " 5
echo "== norm benchmarks: exit $rc_bench_norms (PyTorch: exit $rc_torch_norms)"
show bench_norms "^\| |copy peer" 3
show torch_norms "^\| " 3
echo "== benchmarks: exit $rc_bench_gpu (PyTorch: exit $rc_torch_peer)"
tail -n 19 "$logs/bench_gpu.log"
tail -n 5 "$logs/torch_peer.log"
echo "== lesson 5: exit $rc_lesson_05_gpu"
[ "$rc_lesson_05_gpu" -ne 0 ] && tail -n 15 "$logs/lesson_05_gpu.log"
if [ -n "${AICF_GPU_SWEEP:-}" ]; then
  echo "== GPU schedule sweep, $AICF_GPU_SCHEDULE_COUNT schedules per seed, ${sweep_seconds} s:"
  sort -n -k2 "$logs/sweep.txt" | tr '\n' ';'; echo
  grep -A3 -E "^=== seed|failed at schedule" "$logs/sweep_failures.log" | head -40
fi
# With AICF_GPU_CHECK_PACK set, the logs are packed into that one file (the device tool brings
# back only a few files).
[ -n "${AICF_GPU_CHECK_PACK:-}" ] && tar -C "$logs" -czf "$AICF_GPU_CHECK_PACK" .
status=0
for rc in "$rc_torch_aot" "$rc_mlp_block" "$rc_torch_mlp" "$rc_test_gpu" "$rc_gpu_errors" "$rc_gemm" \
  "$rc_bench_norms" "$rc_torch_norms" "$rc_bench_gpu" "$rc_torch_peer" "$rc_lesson_05_gpu" \
  "$sweep_rc"; do
  [ "$rc" -ne 0 ] && status=1
done
exit $status
