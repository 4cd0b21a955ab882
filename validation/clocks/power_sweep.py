#!/usr/bin/env python3
"""What does each kind of kernel draw? Session 34 (docs/power.md): power_mix.py's one GEMM and one add give one point
per kernel class, and an energy model built from them alone (a FLOP costs e_F, a byte e_B) put a real training step
(gpt-ln 8x2048 on H200) at 623 W where nvidia-smi read 691 W at a capped clock: part of a kernel's draw goes with
the time it runs, not with its work. This runs each kernel of a set ALONE, back to back for SECONDS seconds, and
records its sustained rate (CUDA events over the second half) against its 50 ms bursts after idle (the calibration's
timing), and the SM clock, power and clock-event reasons nvidia-smi samples over the last half; 1 s idle between
kernels gives the idle draw. Kernels: bf16 and FP8 GEMMs (torch.matmul; torch._scaled_mm with fast accumulation as
Transformer Engine's forward) from 1024^3 to training sizes, flash and cuDNN attention forward + backward (SDPA), and
memory-bound kernels (add, copy, layer norm) from 4 MB to 1 GiB per tensor, down to a launch-bound 64 KB add.

  python3 validation/clocks/power_sweep.py OUT.json [--seconds 3] [--quick] [--extended]

OUT.json (scalescope.power-sweep/1): gpu, torch, limits, idle samples, and per kernel {name, class (gemm | attention |
memory), dtype, flops and bytes per call, burst_s and sustained_s per call, relative (burst / sustained time),
sm_MHz, power_W (median of power.draw), power_instant_W (median of power.draw.instant where the driver has it),
cap_share (samples with reason 0x4), samples}. `scalescope calibrate import-power` reads it."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smi  # noqa: E402  (validation/clocks/smi.py: nvidia-smi every 100 ms into a file)


class Sampler(smi.Sampler):
    """smi.Sampler with power.draw.instant where the driver has it; window() in this file's field names."""

    def __init__(self, path):
        super().__init__(path, instant=True)

    def window(self, t0, t1):
        inside = [s for s in getattr(self, "samples", []) if t0 <= s[0] <= t1]
        if not inside:
            return {"samples": 0}
        inst = [s[5] for s in inside if s[5] is not None]
        caps = sum(1 for s in inside if int(s[4], 16) & smi.POWER_CAP_BIT)
        return {"samples": len(inside), "sm_MHz": statistics.median(s[1] for s in inside),
                "power_W": statistics.median(s[2] for s in inside),
                "power_instant_W": statistics.median(inst) if inst else None,
                "temperature_C": statistics.median(s[3] for s in inside), "cap_share": round(caps / len(inside), 3)}


def kernels(quick, extended=False):
    """(name, class, dtype, flops, bytes, fn) per kernel; each fn issues one call."""
    out = []
    dev = "cuda"

    def gemm(m, k, n):
        x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        w = torch.randn(k, n, device=dev, dtype=torch.bfloat16)
        y = torch.empty(m, n, device=dev, dtype=torch.bfloat16)
        out.append((f"bf16 GEMM {m}x{k}x{n}", "gemm", "bf16", 2.0 * m * k * n, 2.0 * (m * k + k * n + m * n),
                    lambda: torch.matmul(x, w, out=y)))

    def gemm8(m, k, n):
        x = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
        w = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn).t()
        one = torch.ones((), device=dev)
        out.append((f"fp8 GEMM {m}x{k}x{n}", "gemm", "fp8", 2.0 * m * k * n, 1.0 * (m * k + k * n) + 2.0 * m * n,
                    lambda: torch._scaled_mm(x, w, one, one, out_dtype=torch.bfloat16, use_fast_accum=True)))

    def attention(b, h, s, d, backend):
        from torch.nn.attention import SDPBackend, sdpa_kernel
        q, k, v = (torch.randn(b, h, s, d, device=dev, dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
        g = torch.randn(b, h, s, d, device=dev, dtype=torch.bfloat16)
        kind = SDPBackend.FLASH_ATTENTION if backend == "flash" else SDPBackend.CUDNN_ATTENTION

        def run():
            with sdpa_kernel(kind):
                o = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            o.backward(g)
        flops = 4.0 * b * h * s * s * d / 2 * 3.5  # causal forward, backward 2.5x
        out.append((f"{backend} attention fwd+bwd b{b} h{h} s{s} d{d}", "attention", "bf16", flops,
                    2.0 * b * h * s * d * 8, run))

    def add(n):
        u, v, z = (torch.randn(n, device=dev, dtype=torch.bfloat16) for _ in range(3))
        out.append((f"add {n * 2 >> 20} MiB x3" if n * 2 >= 1 << 20 else f"add {n * 2 >> 10} KiB x3", "memory", "bf16",
                    0.0, 6.0 * n, lambda: torch.add(u, v, out=z)))

    def copy(n):
        u, z = (torch.randn(n, device=dev, dtype=torch.bfloat16) for _ in range(2))
        out.append((f"copy {n * 2 >> 20} MiB x2", "memory", "bf16", 0.0, 4.0 * n, lambda: z.copy_(u)))

    def layer_norm(t, h):
        x = torch.randn(t, h, device=dev, dtype=torch.bfloat16)
        w = torch.ones(h, device=dev, dtype=torch.bfloat16)
        b = torch.zeros(h, device=dev, dtype=torch.bfloat16)
        out.append((f"layer_norm {t}x{h}", "memory", "bf16", 0.0, 4.0 * t * h,
                    lambda: torch.nn.functional.layer_norm(x, (h,), w, b)))

    shapes = [(2048, 2048, 2048), (8192, 8192, 8192), (8192, 1600, 6400)] if quick else \
        [(1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192), (8192, 1600, 6400),
         (8192, 4096, 16384), (4096, 2048, 8192), (2048, 4096, 1024), (1024, 2048, 2048)]
    for s in shapes:
        gemm(*s)
    for s in ([(4096, 4096, 4096)] if quick else [(2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
                                                  (8192, 4096, 16384)]):
        gemm8(*s)
    for a in ([(2, 32, 4096, 128, "flash")] if quick else
              [(4, 16, 2048, 128, "flash"), (2, 32, 4096, 128, "flash"), (16, 16, 512, 64, "flash"),
               (2, 32, 4096, 128, "cudnn")]):
        attention(*a)
    for n in ([1 << 21, 1 << 29] if quick else [1 << 14, 1 << 21, 1 << 23, 1 << 25, 1 << 27, 1 << 29]):
        add(n)
    if not quick:
        copy(1 << 29)
        layer_norm(8192, 4096)
        layer_norm(32768, 4096)
    if extended:
        extended_kernels(out, dev, attention)
    return out


def extended_kernels(out, dev, attention):
    """--extended (session 34, after its blind check): kernels of real training steps the first sweep lacked, cuDNN
    and flash attention at head size 64 (gpt-ln's), a GEMM with its bias and GELU in the epilogue, and memory-bound
    kernels that compute per element (RMSNorm, softmax, SiLU x mul, GELU, cross entropy, a fused AdamW step)."""
    for a in [(8, 25, 2048, 64, "cudnn"), (4, 16, 4096, 64, "cudnn"), (8, 25, 2048, 64, "flash")]:
        attention(*a)
    m, k, n = 8192, 1600, 6400
    x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
    w = torch.randn(k, n, device=dev, dtype=torch.bfloat16)
    b = torch.randn(n, device=dev, dtype=torch.bfloat16)
    out.append((f"bf16 GEMM {m}x{k}x{n} bias+gelu epilogue", "gemm", "bf16", 2.0 * m * k * n,
                2.0 * (m * k + k * n + m * n), lambda: torch._addmm_activation(b, x, w, use_gelu=True)))
    t, h = 16384, 4096
    xs = torch.randn(t, h, device=dev, dtype=torch.bfloat16)
    g = torch.ones(h, device=dev, dtype=torch.bfloat16)
    out.append((f"rms_norm {t}x{h}", "memory", "bf16", 0.0, 4.0 * t * h,
                lambda: torch.nn.functional.rms_norm(xs, (h,), g)))
    out.append((f"gelu tanh {t}x{h}", "memory", "bf16", 0.0, 4.0 * t * h,
                lambda: torch.nn.functional.gelu(xs, approximate="tanh")))
    ys = torch.randn(t, h, device=dev, dtype=torch.bfloat16)
    out.append((f"silu x mul {t}x{h}", "memory", "bf16", 0.0, 10.0 * t * h,
                lambda: torch.nn.functional.silu(xs) * ys))
    logits = torch.randn(8192, 50304, device=dev, dtype=torch.bfloat16)
    out.append(("softmax 8192x50304 fp32", "memory", "bf16", 0.0, 6.0 * 8192 * 50304,
                lambda: torch.softmax(logits, dim=-1, dtype=torch.float32)))
    lg = torch.randn(8192, 50304, device=dev, dtype=torch.bfloat16, requires_grad=True)
    labels = torch.randint(0, 50304, (8192,), device=dev)

    def cross_entropy():
        torch.nn.functional.cross_entropy(lg.float(), labels).backward()
    out.append(("cross_entropy fwd+bwd 8192x50304", "memory", "bf16", 0.0, 20.0 * 8192 * 50304, cross_entropy))
    params = [torch.nn.Parameter(torch.randn(1 << 26, device=dev)) for _ in range(4)]
    for p in params:
        p.grad = torch.randn_like(p)
    opt = torch.optim.AdamW(params, lr=1e-4, fused=True)
    out.append(("adamw fused step 268M fp32", "memory", "fp32", 0.0, 28.0 * (1 << 28), opt.step))


def timed(fn, calls):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(calls):
        fn()
    e.record()
    return s, e


def burst(fn, calls):
    torch.cuda.synchronize()
    time.sleep(0.5)
    s, e = timed(fn, calls)
    torch.cuda.synchronize()
    return s.elapsed_time(e) * 1e-3 / calls


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    p.add_argument("--seconds", type=float, default=3.0, help="seconds each kernel runs back to back")
    p.add_argument("--quick", action="store_true", help="a few kernels (a dry run)")
    p.add_argument("--extended", action="store_true", help="also the kernels of extended_kernels()")
    a = p.parse_args()
    ks = kernels(a.quick, a.extended)
    limits = subprocess.run(["nvidia-smi", "--query-gpu=name,clocks.max.sm,power.limit,power.default_limit",
                             "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    smi = Sampler(a.out + ".smi.csv")
    time.sleep(2.0)
    t_idle = (time.time() - 1.5, time.time())
    rows = []
    for name, cls, dtype, flops, bytes_, fn in ks:
        try:
            rows.append(run_one(name, cls, dtype, flops, bytes_, fn, a.seconds))
        except Exception as e:  # noqa: BLE001  (a kernel the lease cannot run: recorded, the rest go on)
            rows.append({"name": name, "class": cls, "dtype": dtype, "error": repr(e)})
            print(f"{name}: failed: {e!r}", flush=True)
        time.sleep(1.0)
    smi.stop()
    for r in rows:  # the last half of each run (nvidia-smi's power.draw averages over up to a second)
        if "t0" in r:
            r.update(smi.window(r["t0"] + (r["t1"] - r["t0"]) / 2, r["t1"]))
    doc = {"schema": "scalescope.power-sweep/1", "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "cuda": torch.version.cuda, "limits": limits, "fields": smi.fields, "seconds_per_kernel": a.seconds,
           # the importer fits the memory class on kernels that move at least twice this (L2-resident ones draw less)
           "l2_bytes": getattr(torch.cuda.get_device_properties(0), "L2_cache_size", None),
           "idle": smi.window(*t_idle), "kernels": rows}
    with open(a.out + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(a.out + ".tmp", a.out)
    for r in rows:
        print({k: r.get(k) for k in ("name", "relative", "sm_MHz", "power_W", "power_instant_W", "cap_share", "error")})
    print("idle", doc["idle"])


def run_one(name, cls, dtype, flops, bytes_, fn, seconds):
    """One kernel: its bursts after idle, then SECONDS back to back; the row without the nvidia-smi window."""
    if True:
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        one = burst(fn, 3)
        calls = max(1, int(0.05 / one))
        burst_s = statistics.median(burst(fn, calls) for _ in range(3))
        block = max(1, int(0.01 / burst_s))
        events, t0 = [], time.time()
        while time.time() - t0 < seconds:
            events.append((time.time(),) + timed(fn, block))
            if len(events) > 64:
                events[-64][2].synchronize()
        torch.cuda.synchronize()
        t1 = time.time()
        late = [ev for ev in events if ev[0] >= t0 + (t1 - t0) / 2]
        sustained_s = statistics.median(ev[1].elapsed_time(ev[2]) * 1e-3 / block for ev in late)
        print(f"{name}: sustained x{burst_s / sustained_s:.3f} of bursts", flush=True)
        return {"name": name, "class": cls, "dtype": dtype, "flops": flops, "bytes": bytes_, "burst_s": burst_s,
                "sustained_s": sustained_s, "relative": burst_s / sustained_s, "t0": t0, "t1": t1}


if __name__ == "__main__":
    sys.exit(main())
