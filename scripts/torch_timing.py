"""The timing the GPU check script's PyTorch peers share (scripts/gpu_check.sh)."""

import torch


def median_ms(f, runs=20):
    """The median time of f() on the current CUDA stream, in milliseconds, after 3 warm-up
    calls, each run timed by CUDA events."""
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(runs):
        start.record()
        f()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]
