#!/usr/bin/env python3
"""Times the Mamba-2 kernels Megatron-Core's MambaMixer runs (mamba_ssm's Triton SSD kernels and its gated RMSNorm)
on one GPU at the shapes of predictions.json, forward and backward: each call's GPU time (queued behind a GPU sleep,
so the host issuing it is not timed) and its host time.

mamba_ssm is not installed on the lease and cannot be fetched there: its source distribution (pure-Python Triton
kernels; the CUDA extensions it also holds are not needed for these functions) is carried in and put on sys.path
with its package __init__ skipped (that __init__ imports the CUDA selective-scan extension, which is not built).

Usage: ssd_kernels.py --src DIR_WITH_mamba_ssm --shapes predictions.json --out measured.json
"""
import argparse
import json
import math
import platform
import subprocess
import sys
import types


def load_mamba(src):
    pkg = types.ModuleType("mamba_ssm")
    pkg.__path__ = [src + "/mamba_ssm"]
    sys.modules["mamba_ssm"] = pkg
    from mamba_ssm.ops.triton import ssd_combined, layernorm_gated  # noqa: E402
    return ssd_combined, layernorm_gated


SLEEP_CYCLES = 40_000_000  # ~20 ms at 1980 MHz: longer than the host takes to issue one call


def timed(fn, reps, torch):
    """(GPU time, host time) of one call, medians. GPU: the call queued behind a GPU sleep, so that the events
    bracket its kernels back to back and not the host issuing them. Host: the wall time of the call while the GPU
    sleeps (Python, Triton's launcher, the tensor set-up), no synchronisation inside."""
    import time
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    gpu, host = [], []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(SLEEP_CYCLES)
        a.record()
        t0 = time.perf_counter()
        fn()
        host.append(time.perf_counter() - t0)
        b.record()
        b.synchronize()
        gpu.append(a.elapsed_time(b) * 1e-3)
    gpu.sort()
    host.sort()
    return gpu[len(gpu) // 2], host[len(host) // 2]


def measure(shape, ssd, ln, torch, reps):
    b, l, h, p, g, n, q = (shape[k] for k in ("batch", "seq", "heads", "head_dim", "groups", "state", "chunk"))
    dev = "cuda"
    torch.manual_seed(0)
    x = torch.randn(b, l, h, p, device=dev, dtype=torch.bfloat16)
    dt = torch.randn(b, l, h, device=dev, dtype=torch.bfloat16)
    A = -torch.rand(h, device=dev, dtype=torch.float32) - 0.5
    B = torch.randn(b, l, g, n, device=dev, dtype=torch.bfloat16) / math.sqrt(n)
    C = torch.randn(b, l, g, n, device=dev, dtype=torch.bfloat16) / math.sqrt(n)
    D = torch.ones(h, device=dev, dtype=torch.float32)
    dt_bias = torch.zeros(h, device=dev, dtype=torch.float32)
    # Megatron-Core's MambaMixer (rmsnorm=True): the scan without z, D per head, softplus on dt + dt_bias.
    kw = dict(D=D, z=None, dt_bias=dt_bias, dt_softplus=True)
    out = ssd._mamba_chunk_scan_combined_fwd(x, dt, A, B, C, q, **kw)[0]
    dout = torch.randn_like(out)
    fwd, fwd_host = timed(lambda: ssd._mamba_chunk_scan_combined_fwd(x, dt, A, B, C, q, **kw), reps, torch)
    bwd, bwd_host = timed(lambda: ssd._mamba_chunk_scan_combined_bwd(dout, x, dt, A, B, C, out, q, **kw), reps, torch)
    # The gated RMSNorm over d_i (groups of d_i / G), gate silu(z) after the norm (norm_before_gate=False).
    di = h * p
    y = out.reshape(-1, di)
    z = torch.randn_like(y)
    w = torch.ones(di, device=dev, dtype=torch.bfloat16)
    yn, mean, rstd = ln._layer_norm_fwd(y, w, None, 1e-5, z=z, group_size=di // g, norm_before_gate=False,
                                        is_rms_norm=True)
    dy = torch.randn_like(yn)
    nfwd, nfwd_host = timed(lambda: ln._layer_norm_fwd(y, w, None, 1e-5, z=z, group_size=di // g, norm_before_gate=False,
                                            is_rms_norm=True), reps, torch)
    nbwd, nbwd_host = timed(lambda: ln._layer_norm_bwd(dy, y, w, None, 1e-5, mean, rstd, z=z, group_size=di // g,
                                            norm_before_gate=False, is_rms_norm=True), reps, torch)
    return {"ssd_forward_s": fwd, "ssd_backward_s": bwd, "gated_norm_forward_s": nfwd, "gated_norm_backward_s": nbwd,
            "host_ssd_forward_s": fwd_host, "host_ssd_backward_s": bwd_host, "host_gated_norm_forward_s": nfwd_host,
            "host_gated_norm_backward_s": nbwd_host}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", required=True, help="directory holding the mamba_ssm package source")
    ap.add_argument("--shapes", required=True, help="predictions.json (its shapes are measured)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    import torch
    import triton
    ssd, ln = load_mamba(a.src)
    shapes = json.load(open(a.shapes))["shapes"]
    rows = []
    for s in shapes:
        r = dict(s)
        r.update(measure(s, ssd, ln, torch, a.reps))
        print(json.dumps(r), flush=True)
        rows.append(r)
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit",
                          "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    meta = {"gpu": torch.cuda.get_device_name(), "nvidia_smi": smi, "torch": torch.__version__,
            "triton": triton.__version__, "cuda": torch.version.cuda, "python": platform.python_version(),
            "mamba_ssm": open(a.src + "/mamba_ssm/__init__.py").read().split('"')[1], "cpu": platform.processor(),
            "reps": a.reps, "timing": "median of reps after 3 warm-up calls: GPU time between CUDA events around the "
            "call queued behind a ~20 ms GPU sleep (the kernels back to back); host time the call's wall time"}
    json.dump({"meta": meta, "rows": rows}, open(a.out, "w"), indent=1)


if __name__ == "__main__":
    main()
