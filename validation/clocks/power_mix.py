#!/usr/bin/env python3
"""What does a GPU at its power cap do to a MIX of kernels? Session 18 found (validation/session18/README.md) that
on an H200 a back-to-back bf16 GEMM runs 15% below its burst rate at 100% duty (SM clock 1455-1830 MHz, power cap),
while training steps, which mix GEMMs with memory-bound kernels, come out only 3-6% slower than predicted from burst
rates. A model of that needs the rate of each kernel class under a sustained mix. This runs, for SECONDS seconds
each and with no idle between kernels, mixes of a GEMM (G, a training-size bf16 product) and a memory-bound add (M,
three 1 GiB bf16 tensors) in which G takes 100, 75, 50, 25 and 0% of the burst time, and times every block of each
class with CUDA events (events in a busy stream add no idle), while nvidia-smi samples clocks and power beside it.
Before and after each mix, 50 ms bursts of each class with the GPU idle before them give the burst rates.

  python3 validation/clocks/power_mix.py OUT.json [--seconds 6] [--gemm 8192x1600x6400] [--dtype bf16|fp8]

--dtype fp8 (session 32): the GEMM as Transformer Engine's FP8 forward runs it, torch._scaled_mm on float8_e4m3fn
operands with per-tensor scales and fast accumulation, bf16 output.

--block-ms, --shares (session 37): the length of one cycle (10 ms by default) and the shares to run; each mix records
its calls per block (gemm_calls, add_calls), as short cycles round G to whole calls.

OUT.json: per mix, the median GEMM TFLOP/s and add GB/s over its second half relative to the bursts, the SM clock
and power medians of the nvidia-smi samples inside it, and every sample."""
import argparse
import json
import os
import statistics
import time

import torch

from power_sweep import burst, timed  # noqa: E402  (CUDA-event timing of back-to-back calls)
from smi import Sampler  # noqa: E402  (validation/clocks/smi.py)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    p.add_argument("--seconds", type=float, default=6.0, help="seconds per mix")
    p.add_argument("--gemm", default="8192x1600x6400", help="M x K x N of the GEMM (default: gpt-ln's fc at 8x1024)")
    p.add_argument("--dtype", choices=("bf16", "fp8"), default="bf16", help="the GEMM's operands (fp8: e4m3, fast "
                   "accumulation, as TE's forward)")
    p.add_argument("--block-ms", type=float, default=10.0, help="milliseconds of one mix cycle (a GEMM block then an "
                   "add block) at burst rates (session 37: how long a phase must last for the cap to act on it alone)")
    p.add_argument("--shares", default="1,0.75,0.5,0.25,0", help="the GEMM shares G of the mixes, in order")
    a = p.parse_args()
    shares = [float(v) for v in a.shares.split(",")]
    if not shares or any(not 0.0 <= v <= 1.0 for v in shares) or not a.block_ms > 0:
        p.error("--shares: expected numbers in [0, 1]; --block-ms: expected a positive number")
    m, k, n = (int(v) for v in a.gemm.split("x"))
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    y = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    if a.dtype == "fp8":
        x8 = x.to(torch.float8_e4m3fn)
        w8 = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()  # column-major k x n, as _scaled_mm needs
        one = torch.ones((), device="cuda")
    elems = 512 * 1024 * 1024  # 1 GiB of bf16 each
    u = torch.randn(elems, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(elems, device="cuda", dtype=torch.bfloat16)
    z = torch.empty(elems, device="cuda", dtype=torch.bfloat16)
    gemm = (lambda: torch._scaled_mm(x8, w8, one, one, out_dtype=torch.bfloat16, use_fast_accum=True)) \
        if a.dtype == "fp8" else (lambda: torch.matmul(x, w, out=y))  # noqa: E731
    add = lambda: torch.add(u, v, out=z)  # noqa: E731
    flops, bytes_ = 2.0 * m * k * n, 3.0 * 2 * elems

    for fn in (gemm, add):
        for _ in range(3):
            fn()
    torch.cuda.synchronize()
    time.sleep(3)
    one_g, one_m = burst(gemm, 3), burst(add, 3)
    ng, nm = max(1, int(0.05 / one_g)), max(1, int(0.05 / one_m))

    def bursts():
        return {"gemm_s": statistics.median(burst(gemm, ng) for _ in range(3)),
                "add_s": statistics.median(burst(add, nm) for _ in range(3))}

    smi = Sampler(a.out + ".smi.csv")
    time.sleep(1)
    doc = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "gemm": f"{m}x{k} @ {k}x{n} {a.dtype}",
           "add": f"{elems} bf16 elements, 3 tensors", "seconds_per_mix": a.seconds, "block_ms": a.block_ms,
           "mixes": []}
    block = a.block_ms * 1e-3  # seconds of one cycle (GEMM block + add block) at burst rates
    for share in shares:
        before = bursts()
        cg = max(1, int(round(block * share / before["gemm_s"]))) if share > 0 else 0
        cm = max(1, int(round(block * (1 - share) / before["add_s"]))) if share < 1 else 0
        events, t0 = [], time.time()
        while time.time() - t0 < a.seconds:  # no idle: the host queues the next blocks while the GPU runs
            if cg:
                events.append(("gemm", cg, time.time()) + timed(gemm, cg))
            if cm:
                events.append(("add", cm, time.time()) + timed(add, cm))
            if len(events) > 64:
                events[-64][4].synchronize()  # keep the queue bounded without draining it
        torch.cuda.synchronize()
        t1 = time.time()
        after = bursts()
        second_half = [ev for ev in events if ev[2] >= t0 + (t1 - t0) / 2]
        g = [ev[3].elapsed_time(ev[4]) * 1e-3 / ev[1] for ev in second_half if ev[0] == "gemm"]
        d = [ev[3].elapsed_time(ev[4]) * 1e-3 / ev[1] for ev in second_half if ev[0] == "add"]
        ref_g = (before["gemm_s"] + after["gemm_s"]) / 2
        ref_m = (before["add_s"] + after["add_s"]) / 2
        doc["mixes"].append({
            "gemm_share": share, "block_ms": a.block_ms, "gemm_calls": cg, "add_calls": cm, "t0": t0, "t1": t1,
            "bursts_before": before, "bursts_after": after,
            "gemm_TFLOPS": flops / statistics.median(g) / 1e12 if g else None,
            "gemm_relative_to_bursts": ref_g / statistics.median(g) if g else None,
            "add_GBps": bytes_ / statistics.median(d) / 1e9 if d else None,
            "add_relative_to_bursts": ref_m / statistics.median(d) if d else None})
        print(f"mix G {share:.2f}: gemm x{doc['mixes'][-1]['gemm_relative_to_bursts'] or 0:.3f} of bursts, "
              f"add x{doc['mixes'][-1]['add_relative_to_bursts'] or 0:.3f}", flush=True)
    samples = smi.stop()
    with open(a.out + ".smi.csv") as f:
        lines = f.read().strip().splitlines()
    for mix in doc["mixes"]:
        inside = [s for s in samples if mix["t0"] + (mix["t1"] - mix["t0"]) / 2 <= s[0] <= mix["t1"]]
        mix["sm_MHz_median"] = statistics.median(s[1] for s in inside) if inside else None
        mix["power_W_median"] = statistics.median(s[2] for s in inside) if inside else None
        mix["reasons"] = sorted({s[4] for s in inside})
    doc["nvidia_smi"] = lines
    with open(a.out + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(a.out + ".tmp", a.out)
    for mix in doc["mixes"]:
        print({k_: mix[k_] for k_ in ("gemm_share", "gemm_relative_to_bursts", "add_relative_to_bursts",
                                      "sm_MHz_median", "power_W_median", "reasons")})


if __name__ == "__main__":
    main()
