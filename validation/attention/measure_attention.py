#!/usr/bin/env python3
"""Measures causal attention (torch SDPA, flash and/or cuDNN backend) forward and backward GPU time on one GPU, so the
compute model's attention efficiency is measured instead of assumed.

  measure_attention.py OUT.json                      the shapes of the validation models (llama-1b/3b/8b heads,
                                                     batch 1, 2, 4, seq 2048-8192)
  measure_attention.py OUT.json --shapes SHAPES.json the shapes a model's plans run (`scalescope calibrate shapes`
                                                     writes them: {"attention": [{batch, heads, kv_heads, head_dim,
                                                     seq, causal, label?, backend?, dropout?}]}; rows of backend "varlen"
                                                     (--packed-doc-tokens) are timed with torch's varlen_attn)
FLOPs counted as in the compute model: forward 4*b*h*s^2*d / 2 (causal), backward 2.5x forward (FlashAttention-2
convention). The output (schema scalescope.attention-measurement/1, rows with batch, heads, kv_heads, head_dim, seq,
causal, dtype, fwd_s, bwd_s) is what `scalescope calibrate import-attention FILE --into PROFILE` reads.
Times are GPU time: the calls are queued behind a GPU sleep so the host's issue time (SDPA's Python path, autograd)
is not in them (cuda_timing.queued_gpu_time), as a profiler trace's kernel durations are not; rows timed call by
call before session 17 counted the host's issue at small shapes (up to 1.7x the kernels at 4x768 on H200)."""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
from cuda_timing import queued_gpu_time  # noqa: E402


def default_shapes():
    for (name, heads, kv, d) in [("llama-1b", 32, 8, 64), ("llama-3b", 24, 8, 128), ("llama3-8b", 32, 8, 128)]:
        for b in (1, 2, 4):
            for s in (2048, 4096, 8192):
                yield dict(label=name, batch=b, seq=s, heads=heads, kv_heads=kv, head_dim=d, causal=True)


BACKENDS = {"flash": (SDPBackend.FLASH_ATTENTION, "torch SDPA flash backend"),
            "cudnn": (SDPBackend.CUDNN_ATTENTION, "torch SDPA cuDNN backend (cuDNN fused attention, as Transformer "
                                                  "Engine's FusedAttention runs on Hopper)")}


def varlen_call():
    """call(q, k, v, cu, longest, window=0): torch's varlen_attn (FlashAttention's varlen kernel, THD layout, the same
    cumulative lengths for queries and keys), causal, or each query over the `window` tokens up to itself; for the
    torch versions that spell causality `is_causal` and those that spell it `window_size=(-1, 0)`."""
    import inspect
    from torch.nn.attention.varlen import varlen_attn
    params = inspect.signature(varlen_attn).parameters

    def call(q, k, v, cu, longest, window=0):
        if "window_size" in params:
            return varlen_attn(q, k, v, cu, cu, longest, longest, window_size=(window - 1 if window else -1, 0))
        if window:
            raise RuntimeError("this torch's varlen_attn has no window_size")
        return varlen_attn(q, k, v, cu, cu, longest, longest, is_causal=True)
    return call


def forward_backward_time(forward, inputs, what):
    """(forward s, backward s) of forward() and of its backward into `inputs`, queued behind a GPU sleep (backward =
    forward + torch.autograd.grad minus forward)."""
    fwd, _, ok1 = queued_gpu_time(forward)
    g = torch.randn_like(forward())

    def fb():
        torch.autograd.grad(forward(), inputs, g)
    both, _, ok2 = queued_gpu_time(fb)
    if not (ok1 and ok2):
        print(f"warning: {what}: the host issued slower than the GPU sleep; the row may count host time", file=sys.stderr)
    return fwd, max(both - fwd, 1e-9)


def write_measurement(path, method, rows):
    """The scalescope.attention-measurement/1 file (`scalescope calibrate import-attention` reads it), atomically."""
    meta = dict(schema="scalescope.attention-measurement/1", gpu=torch.cuda.get_device_name(0), torch=torch.__version__,
                cuda=torch.version.cuda, measured_utc=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                method=method, rows=rows)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(meta, f, indent=1)
    os.replace(tmp, path)


def measure_varlen(sh):
    """A varlen row: `batch` documents of `seq` tokens packed into one THD tensor, one varlen_attn call (causal), as
    packed fine-tuning and sliding-window layers run (validation/attention/measure_packed.py times the same kernel)."""
    n, heads, kv, d, s = (sh[k] for k in ("batch", "heads", "kv_heads", "head_dim", "seq"))
    if kv != heads:
        raise RuntimeError("varlen rows need kv_heads == heads (this torch's varlen_attn has no GQA)")
    total = n * s
    q, k, v = (torch.randn(total, heads, d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    cu = torch.arange(0, total + 1, s, device="cuda", dtype=torch.int32)
    call = varlen_call()
    fwd, bwd = forward_backward_time(lambda: call(q, k, v, cu, s), (q, k, v), f"varlen {n}x{s}")
    flops_f = 4 * n * heads * s * s * d / 2
    return dict(model=sh.get("label", ""), batch=n, seq=s, heads=heads, kv_heads=kv, head_dim=d, causal=True,
                dtype="bf16", backend="varlen", fwd_s=fwd, fwd_bwd_s=fwd + bwd, bwd_s=bwd,
                fwd_TFLOPS=flops_f / fwd / 1e12, bwd_TFLOPS=2.5 * flops_f / bwd / 1e12)


def measure(sh, backend="flash"):
    if sh.get("backend") == "varlen":
        return measure_varlen(sh)
    b, heads, kv, d, s, causal = (sh[k] for k in ("batch", "heads", "kv_heads", "head_dim", "seq", "causal"))
    p = float(sh.get("dropout", 0.0))  # attention dropout inside the kernel (SDPA dropout_p), 0 for none
    q = torch.randn(b, heads, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(b, kv, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(b, kv, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    gqa = kv != heads
    with sdpa_kernel(BACKENDS[backend][0]):
        fwd, fwd_issue, fwd_ok = queued_gpu_time(
            lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa, dropout_p=p))
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa, dropout_p=p)
        g = torch.randn_like(out)

        def fb():  # gradients returned, not accumulated into q.grad (a training step's attention backward does not add)
            o = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa, dropout_p=p)
            torch.autograd.grad(o, (q, k, v), g)
        both, both_issue, both_ok = queued_gpu_time(fb)
    if not (fwd_ok and both_ok):
        print(f"warning: {backend} {b}x{s} heads {heads}: the host took longer to issue the calls than the GPU sleep "
              f"before them (issue {1e6 * fwd_issue:.0f} / {1e6 * both_issue:.0f} us per call): the row may count "
              "host time", file=sys.stderr)
    flops_f = 4 * b * heads * s * s * d / (2 if causal else 1)
    extra = {"dropout": p} if p else {}
    return dict(model=sh.get("label", ""), batch=b, seq=s, heads=heads, kv_heads=kv, head_dim=d, causal=causal,
                dtype="bf16", backend=backend, **extra, fwd_s=fwd, fwd_bwd_s=both, bwd_s=max(both - fwd, 1e-9), fwd_TFLOPS=flops_f / fwd / 1e12,
                bwd_TFLOPS=2.5 * flops_f / max(both - fwd, 1e-9) / 1e12)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    p.add_argument("--shapes", help="JSON with an 'attention' list of shapes (scalescope calibrate shapes)")
    p.add_argument("--backend", default="flash",
                   help="the SDPA kernel(s) to time, comma-separated: flash (the default), cudnn (what torch's SDPA "
                        "picks on Hopper and Transformer Engine runs); each row records its own")
    a = p.parse_args()
    backends = a.backend.split(",")
    for b in backends:
        if b not in BACKENDS:
            p.error(f"--backend: expected flash and/or cudnn, got '{b}'")
    shapes = list(default_shapes())
    if a.shapes:
        with open(a.shapes) as f:
            shapes = json.load(f)["attention"]
    rows, t0 = [], time.time()
    # Rows of their own kernel (backend "varlen": packed documents) are timed once, with it.
    jobs = [(b, sh) for b in backends for sh in shapes if sh.get("backend", "flash") != "varlen"]
    jobs += [("varlen", sh) for sh in shapes if sh.get("backend") == "varlen"]
    for i, (backend, sh) in enumerate(jobs):
        try:
            rows.append(measure(sh, backend))
        except torch.cuda.OutOfMemoryError as e:
            print(f"skipped {sh}: out of memory ({str(e)[:120]})", file=sys.stderr)
        except RuntimeError as e:  # e.g. no kernel of this backend for the shape (GQA, head size)
            print(f"skipped {sh}: {backend} cannot run it ({str(e)[:200]})", file=sys.stderr)
        torch.cuda.empty_cache()
        print(f"[{i + 1}/{len(jobs)} {time.time() - t0:.0f} s] {rows[-1] if rows else ''}", file=sys.stderr, flush=True)
    write_measurement(a.out, " and ".join(BACKENDS[b][1] for b in backends) + (", varlen_attn for packed rows" if any(
        sh.get("backend") == "varlen" for sh in shapes) else "") + " (each row's backend), bf16, causal, GQA where kv "
        "heads < heads; GPU time per call: 10 calls queued behind a GPU sleep (the host's issue time not counted), "
        "median of 5 such windows after 3 warm-ups; backward = forward + backward (torch.autograd.grad) minus forward",
        rows)

if __name__ == "__main__":
    main()
