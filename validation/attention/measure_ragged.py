#!/usr/bin/env python3
"""Diagnostic for issue 20's fine-tuning rows: does cuDNN's fused attention get cheaper on packed documents?

NVIDIA's NeMo SFT runs (SQuAD packed into 4,096-token sequences, Transformer Engine, whose FusedAttention is cuDNN's
kernel with ragged THD offsets) are published at the speed of pre-training at the same shape (Llama 2 7B: 16,891
against 16,934 tokens/s per GPU), where scalescope prices packing as attention inside each document and predicts
1.22x. Two readings, written down before this ran (validation/attention/packed23/README.md, "Ragged cuDNN"):
  (a) cuDNN's ragged attention costs about what the documents' own work costs (like FlashAttention's varlen kernel:
      4,096 tokens in documents of 180 about 0.2x of one causal 4,096): then the SFT gap is not attention;
  (b) it costs about as much as the unpacked sequence (>= 0.8x): then packing saves nothing in TE, as the rows say.

Times, per shape (batch 1, 32 heads of 128, bf16, causal), forward and backward GPU time queued behind a GPU sleep
(validation/harness/cuda_timing.py):
  njt_<backend>  torch SDPA on nested jagged tensors (one document per component; torch picks the kernel it supports
                 among cudnn, flash, efficient; rows that torch refuses record why);
  batched_cudnn  SDPA cuDNN on the documents as a batch of equal sequences (the shape scalescope's cudnn rows price);
  varlen         torch's varlen_attn (FlashAttention-2 varlen), for comparison.

  measure_ragged.py OUT.json
"""
import argparse
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from measure_attention import forward_backward_time, varlen_call, write_measurement  # noqa: E402

HEADS, HEAD_DIM, TOKENS = 32, 128, 4096
NJT_BACKENDS = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
                "efficient": SDPBackend.EFFICIENT_ATTENTION}


def lengths_of(doc):
    n, rest = divmod(TOKENS, doc)
    return [doc] * n + ([rest] if rest else [])


def timed(res, key, forward, inputs, what):
    try:
        res[key + "_fwd_s"], res[key + "_bwd_s"] = forward_backward_time(forward, inputs, what)
    except Exception as e:  # noqa: BLE001 (recorded: the row says what failed)
        res[key + "_error"] = f"{type(e).__name__}: {str(e)[:300]}"


def measure(doc):
    dev, dt = "cuda", torch.bfloat16
    lengths = lengths_of(doc)
    offsets = torch.tensor([0] + torch.tensor(lengths).cumsum(0).tolist(), device=dev, dtype=torch.int64)
    res = dict(label=f"{TOKENS} tokens in documents of {doc}", doc=doc, documents=len(lengths), heads=HEADS,
               head_dim=HEAD_DIM, tokens=TOKENS)
    qv, kv, vv = (torch.randn(TOKENS, HEADS, HEAD_DIM, device=dev, dtype=dt, requires_grad=True) for _ in range(3))

    def njt(x):  # (documents, j, heads, d) -> (documents, heads, j, d)
        return torch.nested.nested_tensor_from_jagged(x, offsets).transpose(1, 2)

    for name, backend in NJT_BACKENDS.items():
        def forward(backend=backend):
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(njt(qv), njt(kv), njt(vv), is_causal=True)
        timed(res, "njt_" + name, forward, (qv, kv, vv), f"njt {name} doc {doc}")
    n = len(lengths)
    if n * doc == TOKENS:
        qb, kb, vb = (torch.randn(n, HEADS, doc, HEAD_DIM, device=dev, dtype=dt, requires_grad=True) for _ in range(3))

        def batched():
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                return F.scaled_dot_product_attention(qb, kb, vb, is_causal=True)
        timed(res, "batched_cudnn", batched, (qb, kb, vb), f"batched cudnn doc {doc}")
    call = varlen_call()
    cu = offsets.to(torch.int32)
    timed(res, "varlen", lambda: call(qv, kv, vv, cu, max(lengths)), (qv, kv, vv), f"varlen doc {doc}")
    return res


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    p.add_argument("--docs", default="128,180,256,512,1024,4096", help="document lengths (4096: unpacked)")
    a = p.parse_args()
    rows = []
    for doc in (int(x) for x in a.docs.split(",")):
        rows.append(measure(doc))
        print(rows[-1], file=sys.stderr)
    write_measurement(a.out, "per document length: SDPA on nested jagged tensors with each backend torch accepts, "
                      "SDPA cuDNN on the equal-length batch, varlen_attn; bf16, causal, 32 heads of 128; GPU time "
                      "queued behind a GPU sleep, backward = forward + backward minus forward", rows)


if __name__ == "__main__":
    main()
