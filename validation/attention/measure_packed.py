#!/usr/bin/env python3
"""Measures packed-document and sliding-window causal attention on one GPU, for the blind check of how scalescope
prices them (docs/plan-format.md, packed_doc_tokens: `seq / doc` causal attentions of `doc` tokens; a window of w
as causal attentions of 2w tokens).

  measure_packed.py OUT.json --shapes validation/attention/packed22/shapes.json

Each row of the shapes file (batch, heads, optional kv_heads, head_dim, seq, and `doc` or `window`, optional `doc_lengths` cycled to
fill each sequence) is timed two ways:
  varlen   torch.nn.attention.varlen.varlen_attn (FlashAttention's varlen kernel on the THD layout: all documents of
           the batch in one call with cumulative lengths, as Transformer Engine runs packed sequences); windows with
           its window_size=(w - 1, 0); an unpacked row is one document per sequence.
  batched  torch SDPA's flash backend on the shape the model prices (batch x seq / span sequences of span tokens,
           span = doc or 2 x window), scaled to the row's tokens: the profile-style row the prediction interpolates.
GPU time per call as validation/attention/measure_attention.py (calls queued behind a GPU sleep; backward = forward +
backward minus forward). Output rows carry fwd_s / bwd_s of the varlen kernel (what `scalescope calibrate
attention-check` compares with) and batched_fwd_s / batched_bwd_s."""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure_attention import forward_backward_time, varlen_call, write_measurement  # noqa: E402


def doc_lengths(row):
    """The document lengths of one sequence: doc_lengths cycled (or doc repeated) until seq tokens, the last cut."""
    seq = row["seq"]
    if "doc" not in row:
        return [seq]
    cycle = row.get("doc_lengths") or [row["doc"]]
    out, i = [], 0
    while sum(out) < seq:
        out.append(min(cycle[i % len(cycle)], seq - sum(out)))
        i += 1
    return out


def measure(row, call):
    b, h, d, seq = row["batch"], row["heads"], row["head_dim"], row["seq"]
    hk = row.get("kv_heads", h)  # grouped-query attention: fewer key/value heads
    window = row.get("window", 0)
    lengths = doc_lengths(row) * b
    total = sum(lengths)
    dev, dt = "cuda", torch.bfloat16
    q = torch.randn(total, h, d, device=dev, dtype=dt, requires_grad=True)
    k = torch.randn(total, hk, d, device=dev, dtype=dt, requires_grad=True)
    v = torch.randn(total, hk, d, device=dev, dtype=dt, requires_grad=True)
    cu = torch.tensor([0] + list(torch.tensor(lengths).cumsum(0).tolist()), device=dev, dtype=torch.int32)
    longest = max(lengths)
    res = dict(row)
    res["documents"] = len(lengths)
    res["sum_doc_squares"] = sum(x * x for x in lengths)
    try:
        res["fwd_s"], res["bwd_s"] = forward_backward_time(lambda: call(q, k, v, cu, longest, window), (q, k, v),
                                                           row["label"])
    except Exception as e:  # noqa: BLE001 (recorded: the row says what failed)
        res["varlen_error"] = f"{type(e).__name__}: {str(e)[:300]}"
    # The shape the model prices: batch x seq / span causal sequences of span tokens (rounded), scaled to total.
    span = row["doc"] if "doc" in row else min(seq, 2 * window) if window else seq
    n = max(1, round(b * seq / span))
    qb = torch.randn(n, h, span, d, device=dev, dtype=dt, requires_grad=True)
    kb = torch.randn(n, hk, span, d, device=dev, dtype=dt, requires_grad=True)
    vb = torch.randn(n, hk, span, d, device=dev, dtype=dt, requires_grad=True)
    gqa = {"enable_gqa": True} if hk != h else {}
    try:
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            f, bw = forward_backward_time(lambda: F.scaled_dot_product_attention(qb, kb, vb, is_causal=True, **gqa),
                                          (qb, kb, vb), row["label"] + " (batched)")
    except Exception as e:  # noqa: BLE001 (recorded: the row says what failed)
        res["batched_error"] = f"{type(e).__name__}: {str(e)[:300]}"
        return res
    scale = (b * seq) / (n * span)
    res["batched_fwd_s"], res["batched_bwd_s"] = f * scale, bw * scale
    res["batched_shape"] = dict(batch=n, seq=span, scale=scale)
    return res


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    p.add_argument("--shapes", required=True)
    a = p.parse_args()
    with open(a.shapes) as f:
        shapes = json.load(f)["attention"]
    call = varlen_call()
    rows, t0 = [], time.time()
    for i, row in enumerate(shapes):
        try:
            rows.append(measure(row, call))
        except torch.cuda.OutOfMemoryError as e:
            print(f"skipped {row['label']}: out of memory ({str(e)[:120]})", file=sys.stderr)
        torch.cuda.empty_cache()
        print(f"[{i + 1}/{len(shapes)} {time.time() - t0:.0f} s] {rows[-1] if rows else ''}", file=sys.stderr, flush=True)
    write_measurement(a.out, "fwd_s/bwd_s: torch.nn.attention.varlen.varlen_attn (FlashAttention varlen, THD), causal or "
                      "window_size=(w-1, 0); batched_*: torch SDPA flash on batch x seq / span sequences of span "
                      "tokens, scaled to the row's tokens; bf16; GPU time per call queued behind a GPU sleep "
                      "(validation/harness/cuda_timing.py), backward = forward + backward minus forward", rows)

if __name__ == "__main__":
    main()
