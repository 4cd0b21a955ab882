"""GPU time of a callable on the current CUDA device. Used by the one-GPU microbenchmarks
(validation/attention/measure_attention.py, validation/kernels/eager_ops.py).

median_event_time: each call bracketed by CUDA events and synchronized. When the host takes longer to issue a call
  than the GPU takes to run it (small shapes; a backward through autograd issues for 100-500 us), the events time the
  host's issue, not the kernels.
queued_gpu_time: the calls queued behind a GPU sleep, so the GPU runs them back to back and the events time only the
  kernels (and the gaps between the kernels of one call), as a profiler trace's kernel durations do. What a stack
  profile moves by the ratio of two rows must be priced this way (session 17: flash and cuDNN attention rows timed
  with median_event_time were up to 1.7x the traced kernels at 4x768 on H200, so traced attention was scaled too
  little to long sequences)."""
import time

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


_SLEEP_CYCLES_PER_S = None


def _sleep_cycles_per_s():
    """torch.cuda._sleep spins for a number of GPU clock cycles: its rate, measured once (50 ms of sleep)."""
    global _SLEEP_CYCLES_PER_S
    if _SLEEP_CYCLES_PER_S is None:
        cycles = 50_000_000
        torch.cuda._sleep(cycles // 10)  # warm-up
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        torch.cuda._sleep(cycles)
        e.record()
        torch.cuda.synchronize()
        _SLEEP_CYCLES_PER_S = cycles / (s.elapsed_time(e) * 1e-3)
    return _SLEEP_CYCLES_PER_S


def queued_gpu_time(fn, reps=10, windows=5):
    """Seconds of GPU time per call of fn(): `windows` times, a GPU sleep longer than the host needs to issue `reps`
    calls, then the `reps` calls between two CUDA events; the median window over reps. Returns (seconds, host
    seconds to issue one call, whether the sleep outlasted the issue in every window)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    host = (time.perf_counter() - t0) / reps  # issue time of one call (the GPU may lag; only the host is timed)
    torch.cuda.synchronize()
    rate = _sleep_cycles_per_s()
    per_call, covered = [], True
    for _ in range(windows):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        sleep_s = 2 * host * reps + 2e-3
        torch.cuda._sleep(int(sleep_s * rate))
        t0 = time.perf_counter()
        s.record()
        for _ in range(reps):
            fn()
        e.record()
        issued = time.perf_counter() - t0
        covered = covered and issued < sleep_s  # the GPU was still asleep when the last call was issued
        torch.cuda.synchronize()
        per_call.append(s.elapsed_time(e) * 1e-3 / reps)
    return sorted(per_call)[windows // 2], host, covered
