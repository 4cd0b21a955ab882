#!/usr/bin/env python3
"""Measures causal FlashAttention (torch SDPA, flash backend) forward and backward time on one GPU
for the attention shapes of the validation models, so the compute model's attention efficiency can
be measured instead of assumed. Writes JSON to argv[1]. FLOPs counted as in the compute model:
forward 4*b*h*s^2*d / 2 (causal), backward 2.5x forward (FlashAttention-2 convention).
The output (schema scalescope.attention-measurement/1, rows with batch, heads, kv_heads, head_dim, seq,
causal, dtype, fwd_s, bwd_s) is what `scalescope calibrate import-attention FILE --into PROFILE` reads."""
import json, sys, time, torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
import os

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
from cuda_timing import median_event_time as bench  # noqa: E402

rows = []
for (name, heads, kv, d) in [("llama-1b", 32, 8, 64), ("llama-3b", 24, 8, 128), ("llama3-8b", 32, 8, 128)]:
    for b in (1, 2, 4):
        for s in (2048, 4096, 8192):
            q = torch.randn(b, heads, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
            k = torch.randn(b, kv, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
            v = torch.randn(b, kv, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                fwd = bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True))
                out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
                g = torch.randn_like(out)
                def fb():
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
                    o.backward(g)
                both = bench(fb)
            flops_f = 4 * b * heads * s * s * d / 2
            rows.append(dict(model=name, batch=b, seq=s, heads=heads, kv_heads=kv, head_dim=d, causal=True, dtype="bf16",
                             fwd_s=fwd, fwd_bwd_s=both, bwd_s=both - fwd, fwd_TFLOPS=flops_f / fwd / 1e12,
                             bwd_TFLOPS=2.5 * flops_f / max(both - fwd, 1e-9) / 1e12))
            print(rows[-1], flush=True)
            del q, k, v, out, g
meta = dict(schema="scalescope.attention-measurement/1", gpu=torch.cuda.get_device_name(0), torch=torch.__version__,
            cuda=torch.version.cuda, measured_utc=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            method="torch SDPA flash backend, bf16, causal, GQA; median of 20 CUDA-event timings after 3 warm-ups",
            rows=rows)
json.dump(meta, open(sys.argv[1], "w"), indent=1)
