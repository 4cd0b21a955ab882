#!/usr/bin/env python3
"""Megatron-Core's host time per transformer layer, dense and MoE, and its GPU idle time, on one GPU (issue 21).

The program is Megatron-Core itself (megatron-core 0.16.1 from PyPI, carried to the lease unpacked), with the
modules it ships for machines without Transformer Engine or apex (the "local" layer spec: its own linear layers,
attention and torch RMSNorm). The layer is Qwen3-30B-A3B's (hidden 2048, 32 query heads of 128 in 4 groups, QK
RMSNorm, SwiGLU, no biases); the MoE variants hold 16 experts of 768, top-8, which is what one rank of EP 8 holds of
the model's 128, routed by Megatron's router with forced load balancing (as NVIDIA's benchmark recipes run), the
alltoall token dispatcher, and either GroupedMLP (the grouped_gemm package's gmm, provided here by
validation/megatron/shim as torch._grouped_mm) or SequentialMLP (one MLP per expert). Dense: the MLP is 6144 wide.

Two measurements per variant (one process each; validation/device/session_measure28.sh):
  host  At a tiny shape the GPU idles and a pass lasts as long as the host takes to issue it: forward and backward
        wall time of models of L1 and L2 layers, per layer = (t(L2) - t(L1)) / (L2 - L1), medians of --steps.
  busy  At a real shape: wall time per step (forward + backward, no optimizer), and one step under torch.profiler:
        the GPU's busy time (union of kernel, copy and memset intervals), the host's synchronisations (runtime calls
        that wait for the GPU) and their count per layer.
Output: one JSON file (--out), and the profiled step's trace (--trace, gzipped).
"""
import argparse
import gzip
import json
import os
import platform
import statistics
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

TE_NAMES = ("fused_compute_score_for_moe_aux_loss", "fused_moe_aux_loss", "fused_permute", "fused_permute_with_probs",
            "fused_sort_chunks_by_index", "fused_sort_chunks_by_index_with_probs", "fused_topk_with_score_function",
            "fused_unpermute", "te_general_gemm")
SYNC_CALLS = ("cudaStreamSynchronize", "cudaEventSynchronize", "cudaDeviceSynchronize")


def parse_shape(s):
    b, t = s.lower().split("x")
    return int(b), int(t)


def init_megatron():
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29571")
    torch.cuda.set_device(0)
    torch.distributed.init_process_group("nccl", rank=0, world_size=1)
    from megatron.core import parallel_state
    from megatron.core.tensor_parallel.random import model_parallel_cuda_manual_seed
    parallel_state.initialize_model_parallel(1, 1)
    model_parallel_cuda_manual_seed(1234)


# The layer's dimensions (--dims overrides them; session 30 measured other models' layers with them).
DIMS = dict(hidden=2048, heads=32, groups=4, kv_channels=128, ffn=6144, experts=16, topk=8, moe_ffn=768)


def build(variant, layers, seq, vocab):
    from megatron.core.models.gpt import GPTModel
    from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
    from megatron.core.transformer.transformer_config import TransformerConfig
    import megatron.core.transformer.moe.moe_utils as moe_utils
    # Megatron-Core 0.16.1 imports these from Transformer Engine and, without it, leaves them undefined, though the
    # router's gating GEMM tests `te_general_gemm is not None` (NameError): define them as None, as they would be.
    for name in TE_NAMES:
        if not hasattr(moe_utils, name):
            setattr(moe_utils, name, None)
    # The MoE auxiliary-loss tracker is sized by the first model's layer count: start it again for each model.
    moe_utils._MOE_LAYER_WISE_LOGGING_TRACKER.clear()
    moe = variant != "dense"
    grouped = variant == "moe-grouped"
    kw = dict(num_layers=layers, hidden_size=DIMS["hidden"], num_attention_heads=DIMS["heads"],
              num_query_groups=DIMS["groups"], kv_channels=DIMS["kv_channels"], ffn_hidden_size=DIMS["ffn"], normalization="RMSNorm", layernorm_epsilon=1e-6, qk_layernorm=True,
              add_bias_linear=False, add_qkv_bias=False, gated_linear_unit=True, activation_func=F.silu,
              bf16=True, params_dtype=torch.bfloat16, pipeline_dtype=torch.bfloat16, hidden_dropout=0.0,
              attention_dropout=0.0, masked_softmax_fusion=False, apply_rope_fusion=False,
              gradient_accumulation_fusion=False)
    if moe:
        kw.update(num_moe_experts=DIMS["experts"], moe_router_topk=DIMS["topk"], moe_ffn_hidden_size=DIMS["moe_ffn"], moe_token_dispatcher_type="alltoall",
                  moe_grouped_gemm=grouped, moe_use_legacy_grouped_gemm=grouped,
                  moe_router_load_balancing_type="aux_loss", moe_aux_loss_coeff=1e-3, moe_router_dtype="fp32",
                  moe_router_force_load_balancing=True, moe_permute_fusion=False)
    cfg = TransformerConfig(**kw)
    spec = get_gpt_layer_local_spec(num_experts=DIMS["experts"] if moe else None, moe_grouped_gemm=grouped, qk_layernorm=True,
                                    normalization="RMSNorm", moe_use_legacy_grouped_gemm=grouped)
    model = GPTModel(config=cfg, transformer_layer_spec=spec, vocab_size=vocab, max_sequence_length=seq,
                     position_embedding_type="rope", rotary_base=1000000,
                     share_embeddings_and_output_weights=False)
    return model.cuda()


def inputs(b, s, vocab):
    g = torch.Generator(device="cuda").manual_seed(7)
    ids = torch.randint(0, vocab, (b, s), device="cuda", generator=g)
    pos = torch.arange(s, device="cuda").unsqueeze(0).expand(b, s)
    return ids, pos, torch.roll(ids, -1, dims=1)


def one_step(model, ids, pos, labels, mid_sync):
    model.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    loss = model(ids, pos, None, labels=labels).float().mean()
    if mid_sync:
        torch.cuda.synchronize()
    t1 = time.perf_counter()
    loss.backward()
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, t2 - t0


def timed(model, shape, vocab, steps, warmup=3, step=None):
    """Forward / backward / step medians of `steps` steps after `warmup`; `step` replaces one_step (same arguments)."""
    run = step or one_step
    ids, pos, labels = inputs(*shape, vocab)
    for _ in range(warmup):
        run(model, ids, pos, labels, True)
    split = [run(model, ids, pos, labels, True) for _ in range(steps)]
    whole = [run(model, ids, pos, labels, False)[2] for _ in range(steps)]
    return {"forward_s": statistics.median(x[0] for x in split), "backward_s": statistics.median(x[1] for x in split),
            "step_s": statistics.median(whole)}


def write_json(path, obj):
    """Writes `obj` to `path` atomically (a temporary file renamed over it)."""
    with open(path + ".tmp", "w") as f:
        json.dump(obj, f, indent=1)
    os.replace(path + ".tmp", path)


def busy_union(events):
    """Union length (us) of [ts, ts + dur) intervals."""
    iv = sorted((e["ts"], e["ts"] + e["dur"]) for e in events)
    total, end = 0.0, None
    start = None
    for a, b in iv:
        if end is None or a > end:
            if end is not None:
                total += end - start
            start, end = a, b
        else:
            end = max(end, b)
    if end is not None:
        total += end - start
    return total


def profile_step(model, shape, vocab, trace_out, step=None):
    """Two unprofiled steps, then one under torch.profiler (CPU and CUDA): its Chrome trace as a dict, also written
    gzipped to `trace_out` when given; `step` replaces one_step."""
    run = step or one_step
    from torch.profiler import ProfilerActivity, profile
    ids, pos, labels = inputs(*shape, vocab)
    for _ in range(2):
        run(model, ids, pos, labels, False)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        run(model, ids, pos, labels, False)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            doc = json.load(f)
        if trace_out:
            with open(path, "rb") as f, gzip.open(trace_out, "wb") as g:
                g.write(f.read())
    return doc


def profiled(model, shape, vocab, layers, trace_out):
    doc = profile_step(model, shape, vocab, trace_out)
    ev = [e for e in doc.get("traceEvents", []) if e.get("ph") == "X"]
    gpu = [e for e in ev if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    syncs = [e for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver") and e.get("name") in SYNC_CALLS]
    d2h = [e for e in ev if e.get("cat") == "gpu_memcpy" and "DtoH" in e.get("name", "")]
    span = (max(e["ts"] + e["dur"] for e in gpu) - min(e["ts"] for e in gpu)) if gpu else 0.0
    return {"gpu_busy_s": busy_union(gpu) * 1e-6, "gpu_span_s": span * 1e-6, "kernels": len(gpu),
            "host_syncs": len(syncs), "host_syncs_per_layer": len(syncs) / layers,
            "host_sync_wait_s": sum(e["dur"] for e in syncs) * 1e-6,
            "sync_calls": sorted({e["name"] for e in syncs}), "dtoh_copies": len(d2h)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variant", choices=("dense", "moe-grouped", "moe-sequential"), required=True)
    ap.add_argument("--host-shape", default="1x64", help="micro-batch x sequence where the GPU idles (default 1x64)")
    ap.add_argument("--host-layers", default="2,8", help="L1,L2 for the per-layer difference (default 2,8)")
    ap.add_argument("--busy-shape", default="1x4096", help="a real shape (default 1x4096)")
    ap.add_argument("--busy-layers", type=int, default=6)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--vocab", type=int, default=4096)
    ap.add_argument("--out", required=True)
    ap.add_argument("--trace", default="", help="gzipped torch.profiler trace of the busy step")
    ap.add_argument("--dims", default="", help="the layer's dimensions, e.g. hidden=4096,heads=64,experts=4 (keys and "
                    "defaults: " + ",".join(f"{k}={v}" for k, v in DIMS.items()) + ")")
    ap.add_argument("--no-busy", action="store_true", help="only the host measurement")
    a = ap.parse_args()
    for item in filter(None, a.dims.split(",")):
        key, _, value = item.partition("=")
        if key not in DIMS or not value.isdigit() or int(value) < 1:
            ap.error(f"--dims: expected key=positive integer with a key of {sorted(DIMS)}, got {item!r}")
        DIMS[key] = int(value)
    l1, l2 = (int(x) for x in a.host_layers.split(","))
    hb, hs = parse_shape(a.host_shape)
    init_megatron()
    import megatron.core
    res = {"schema": "scalescope.mcore_moe_host/1", "variant": a.variant,
           "software": {"megatron_core": getattr(megatron.core, "__version__", "?"), "torch": torch.__version__,
                        "python": platform.python_version(),
                        "torch_compile_disabled": os.environ.get("TORCH_COMPILE_DISABLE", "") == "1"},
           "gpu": torch.cuda.get_device_name(0), "host_cpu": platform.processor() or platform.machine(),
           "host_shape": [hb, hs], "host_layers": [l1, l2], "busy_shape": list(parse_shape(a.busy_shape)),
           "busy_layers": a.busy_layers, "dims": dict(DIMS)}
    t = {}
    for n in (l1, l2):
        m = build(a.variant, n, max(hs, 128), a.vocab)
        t[n] = timed(m, (hb, hs), a.vocab, a.steps)
        del m
        torch.cuda.empty_cache()
        print(f"host {a.variant} L={n}: {t[n]}", flush=True)
    res["host_timings"] = {str(n): t[n] for n in (l1, l2)}
    res["host_per_layer_s"] = {k: (t[l2][k] - t[l1][k]) / (l2 - l1) for k in ("forward_s", "backward_s", "step_s")}
    if not a.no_busy:
        bb, bs = parse_shape(a.busy_shape)
        m = build(a.variant, a.busy_layers, bs, a.vocab)
        res["busy"] = timed(m, (bb, bs), a.vocab, max(5, a.steps // 2))
        res["busy"].update(profiled(m, (bb, bs), a.vocab, a.busy_layers, a.trace))
        res["busy"]["gpu_idle_s"] = res["busy"]["step_s"] - res["busy"]["gpu_busy_s"]
    res["cuda_max_allocated_GiB"] = torch.cuda.max_memory_allocated() / 2**30
    print(json.dumps(res, indent=1), flush=True)
    write_json(a.out, res)
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
