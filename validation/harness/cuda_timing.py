"""GPU time of a callable on the current CUDA device: the median of `reps` CUDA-event timings after 3 warm-ups.
Used by the one-GPU microbenchmarks (validation/attention/measure_attention.py, validation/kernels/eager_ops.py)."""
import torch


def median_event_time(fn, reps=20):
    """Seconds: median over `reps` calls of fn(), each bracketed by CUDA events and synchronized."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) * 1e-3)
    return sorted(times)[reps // 2]
