#!/usr/bin/env python3
"""Achieved HBM bandwidth of the eager-PyTorch elementwise ops the harness runs, at its tensor sizes, in fp32 and
bf16, on one GPU. The question it answers: do bf16 kernels (FSDP2's residual stream) reach less of the bandwidth
than fp32 ones (autocast's) for the same bytes, or only because they move fewer bytes per kernel?

  python3 validation/kernels/eager_ops.py OUT.json

Each row: op, dtype, elements, bytes (read + written, counted by hand per op), median time of 20 CUDA-event timings
after 3 warm-ups, GB/s. The calibration's own sweep (`scalescope-calibrate --sections mem`, fp32 c = a + b) is the
reference; its bandwidth at the same bytes is what the simulator uses. Nothing here is fitted or imported.
"""
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
from cuda_timing import median_event_time as bench  # noqa: E402


def shape_rows(dev, dtype, t, w):
    """One (tokens, width) tensor shape: every op once, timed."""
    e = torch.tensor([], dtype=dtype).element_size()
    n = t * w
    a = torch.randn(t, w, device=dev, dtype=dtype)
    b = torch.randn(t, w, device=dev, dtype=dtype)
    row = torch.randn(w, device=dev, dtype=dtype)
    ops = {
        "add": (lambda: a + b, 3 * e * n),
        "mul": (lambda: a * b, 3 * e * n),
        "add_": (lambda: a.add_(b), 3 * e * n),
        "silu": (lambda: F.silu(a), 2 * e * n),
        "neg": (lambda: -a, 2 * e * n),
        "cat_halves": (lambda: torch.cat((a[:, w // 2:], a[:, :w // 2]), dim=-1), 2 * e * n),
        "copy": (lambda: a.clone(), 2 * e * n),
        "mul_broadcast_row": (lambda: a * row, 2 * e * n),
    }
    if dtype == torch.float32:
        ops["cast_to_bf16"] = (lambda: a.to(torch.bfloat16), (4 + 2) * n)
    else:
        ops["cast_to_fp32"] = (lambda: a.to(torch.float32), (2 + 4) * n)
    rows = []
    for name, (fn, nbytes) in ops.items():
        s = bench(fn)
        rows.append({"op": name, "dtype": str(dtype).replace("torch.", ""), "tokens": t, "width": w,
                     "elements": n, "bytes": nbytes, "time_s": s, "GBps": nbytes / s / 1e9})
        print(f"{name:20s} {rows[-1]['dtype']:9s} {t:5d}x{w:<6d} {nbytes / 1e6:9.1f} MB {s * 1e6:9.1f} us "
              f"{rows[-1]['GBps']:7.0f} GB/s", flush=True)
    return rows


def main():
    dev = torch.device("cuda")
    rows = []
    # (tokens, width): llama-1b / qwen2-1.5b / llama-7b hidden, q/k widths and the MLP width at 4096-8192 tokens.
    shapes = [(4096, 2048), (8192, 2048), (4096, 512), (4096, 1536), (4096, 4096), (8192, 8192), (4096, 11008)]
    for dtype in (torch.float32, torch.bfloat16):
        for t, w in shapes:
            rows += shape_rows(dev, dtype, t, w)
    # FSDP2's all-gather copy-in: torch._foreach_copy_ of one llama-1b layer's fp32 shards (2 shards: q, k, v, o,
    # gate, up, down and the 2 norms, each halved) into bf16 gather buffers.
    h, kv, f = 2048, 512, 8192
    shard = [torch.randn(x // 2, device=dev) for x in (h * h, kv * h, kv * h, h * h, f * h, f * h, h * f, h, h)]
    dst = [torch.empty(x.numel(), device=dev, dtype=torch.bfloat16) for x in shard]
    n = sum(x.numel() for x in shard)
    try:
        s = bench(lambda: torch._foreach_copy_(dst, shard))
        rows.append({"op": "foreach_copy_fp32_to_bf16", "dtype": "float32->bfloat16", "tensors": len(shard),
                     "elements": n, "bytes": 6 * n, "time_s": s, "GBps": 6 * n / s / 1e9})
        print(f"foreach_copy fp32->bf16 {len(shard)} tensors {6 * n / 1e6:9.1f} MB {s * 1e6:9.1f} us "
              f"{rows[-1]['GBps']:7.0f} GB/s")
    except RuntimeError as err:  # keep the other rows
        rows.append({"op": "foreach_copy_fp32_to_bf16", "error": str(err)[:300]})
        print("foreach_copy fp32->bf16 failed:", err)
    out = {"schema": "scalescope.eager-ops/1", "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
           "cuda": torch.version.cuda, "method": __doc__.strip().splitlines()[0], "rows": rows}
    with open(sys.argv[1] + ".tmp", "w") as fh:
        json.dump(out, fh, indent=1)
    os.replace(sys.argv[1] + ".tmp", sys.argv[1])


if __name__ == "__main__":
    main()
