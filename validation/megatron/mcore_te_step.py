#!/usr/bin/env python3
"""Megatron-Core with Transformer Engine on one GPU: the step time of the NeMo rows' layers (issue 20).

The program NVIDIA's published NeMo / Megatron-Bridge rows ran is Megatron-Core's GPTModel with Transformer Engine's
layer spec (TE's fused LayerNorm + Linear, its DotProductAttention, FP8 through te.fp8_autocast). Neither had been
run here before session 39: megatron-core 0.16.1 and transformer-engine 2.20.2 from PyPI, TE's PyTorch extension
built on this project's machine against the lease's torch (validation/device/te_bundle.sh), carried to the lease.

Each case is one of the rows' layers at a one-GPU shape (tp = pp = 1), a few layers deep, bf16 or FP8:
  step  wall time of forward + backward (no optimizer: it is priced apart), median of --steps after warm-up, and one
        step under torch.profiler: GPU busy time, the kernels (name, count, total time) and the gzipped trace
  host  at 1 x 64 tokens (the GPU idles) the wall time of models of L1 and L2 layers: per layer = the difference /
        (L2 - L1), the host time Megatron-Core + TE take to issue one layer (scalescope.host_dispatch/1's module)
One JSON per case (--out). The MoE models (session 40, issue 21) are one EP rank's layer on one GPU: its local experts,
its tokens, no all-to-all; the profiled step also counts the host's synchronisations with the GPU (the first and
the last are the step's own torch.cuda.synchronize).

Settings as Megatron-Core defaults unless a row's recipe says otherwise: TE's fused attention (the backend TE picks
is read from the kernel names), bias + activation and RoPE fusions on, gradient_accumulation_fusion off (it needs
Megatron's DDP wrapper for main_grad: the weight gradients are written in bf16, not accumulated into fp32),
cross_entropy_loss_fusion as the case says (Megatron-Core's default: off).
"""
import argparse
import collections
import os
import platform
import sys

import torch
import torch.nn.functional as F


def use_torchs_cudnn():
    """Loads PyTorch's own cuDNN and points Transformer Engine at the same file: TE looks in the system first (CUDA's
    toolkit) and may load an older cuDNN, which PyTorch then refuses (on the lease: TE found 9.14, torch was built
    against 9.19). Returns the library's path."""
    torch.backends.cudnn.version()
    with open("/proc/self/maps") as f:
        paths = sorted({line.split()[-1] for line in f if "libcudnn.so" in line})
    if paths:
        os.environ["CUDNN_HOME"] = os.path.dirname(paths[0])
    return paths[0] if paths else None


CUDNN_LIBRARY = use_torchs_cudnn()

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mcore_moe_host as mh  # noqa: E402  (init_megatron, inputs, timed, busy_union, write_json)

def training_step(model, ids, pos, labels, mid_sync):
    """One step as Megatron's schedule runs its first micro-batch (schedules.forward_step calls
    set_is_first_microbatch): TE then casts the weights to FP8 again, once per step. Without it TE keeps the first
    step's casts, and set 1 (session 39) measured its FP8 steps without them (1.1-1.8 ms, 1-6% of those steps)."""
    model.set_is_first_microbatch()
    return mh.one_step(model, ids, pos, labels, mid_sync)

# The rows' layers (validation/nemo/models and the catalog's llama2-7b, llama3-8b), vocabularies padded to 128 as
# Megatron pads them.
MODELS = {
    "llama2-7b": dict(hidden=4096, heads=32, groups=32, ffn=11008, act="swiglu", norm="RMSNorm", bias=False,
                      vocab=32000, pos="rope"),
    "llama3-8b": dict(hidden=4096, heads=32, groups=8, ffn=14336, act="swiglu", norm="RMSNorm", bias=False,
                      vocab=128256, pos="rope", rotary_base=500000),
    "gpt3-5b": dict(hidden=4096, heads=32, groups=32, ffn=16384, act="gelu", norm="LayerNorm", bias=True,
                    vocab=50304, pos="learned_absolute", dropout=0.1),
    "nemotron-8b": dict(hidden=4096, heads=32, groups=32, ffn=16384, act="squared_relu", norm="LayerNorm",
                        bias=False, vocab=256000, pos="rope", rotary_percent=0.5, zero_centered_gamma=True),
    # Session 39's second check: two models at widths never run here.
    "llama2-13b": dict(hidden=5120, heads=40, groups=40, ffn=13824, act="swiglu", norm="RMSNorm", bias=False,
                       vocab=32000, pos="rope"),
    "llama3-70b": dict(hidden=8192, heads=64, groups=8, ffn=28672, act="swiglu", norm="RMSNorm", bias=False,
                       vocab=128256, pos="rope", rotary_base=500000),
    # Session 40 (issue 21): the MoE layers of the Megatron-Bridge Qwen3 rows, each with 16 experts: the experts one
    # rank of EP 8 holds of Qwen3-30B-A3B's 128, or of EP 8 of Qwen3-235B-A22B's (its rows run EP 32, 4 experts, with
    # TP 2; at top-8 one GPU needs at least 8 experts). Attention with QK RMSNorm, no biases, router in fp32.
    "qwen3-30b-a3b-e16": dict(hidden=2048, heads=32, groups=4, kv_channels=128, ffn=6144, act="swiglu",
                              norm="RMSNorm", bias=False, vocab=151936, pos="rope", rotary_base=1000000, qk_norm=True,
                              experts=16, topk=8, moe_ffn=768),
    "qwen3-235b-a22b-e16": dict(hidden=4096, heads=64, groups=4, kv_channels=128, ffn=12288, act="swiglu",
                                norm="RMSNorm", bias=False, vocab=151936, pos="rope", rotary_base=1000000,
                                qk_norm=True, experts=16, topk=8, moe_ffn=1536),
    # GPT OSS 120B's layer as Megatron-Bridge's GPT-OSS provider builds it: biases, QuickGELU GLU with offset 1 and
    # clamp 7, learnable softmax offsets (sinks), a 128-token sliding window on every other layer, 16 of its 128
    # experts (one EP-8 rank's), top-4, no router fusion (its recipe). RoPE instead of YaRN (the same kernels).
    "gpt-oss-120b-e16": dict(hidden=2880, heads=64, groups=8, kv_channels=64, ffn=2880, act="quick_geglu",
                             norm="RMSNorm", bias=True, vocab=201088, pos="rope", rotary_base=150000, experts=16,
                             topk=4, moe_ffn=2880, sinks=True, window=128, router_fusion=False),
    # Session 41's set 4 (issue 21): the same layers with the local experts of other EP sizes (Qwen3-30B's 8 at EP 16,
    # as the 26.04 rows; 32 at EP 4), Qwen3-235B's 8 (EP 16), and Mixtral 8x7B's layer (8 experts, top-2, a router in
    # the model's dtype), never run here.
    "qwen3-30b-a3b-e8": dict(hidden=2048, heads=32, groups=4, kv_channels=128, ffn=6144, act="swiglu",
                             norm="RMSNorm", bias=False, vocab=151936, pos="rope", rotary_base=1000000, qk_norm=True,
                             experts=8, topk=8, moe_ffn=768),
    "qwen3-30b-a3b-e32": dict(hidden=2048, heads=32, groups=4, kv_channels=128, ffn=6144, act="swiglu",
                              norm="RMSNorm", bias=False, vocab=151936, pos="rope", rotary_base=1000000, qk_norm=True,
                              experts=32, topk=8, moe_ffn=768),
    "qwen3-235b-a22b-e8": dict(hidden=4096, heads=64, groups=4, kv_channels=128, ffn=12288, act="swiglu",
                               norm="RMSNorm", bias=False, vocab=151936, pos="rope", rotary_base=1000000,
                               qk_norm=True, experts=8, topk=8, moe_ffn=1536),
    "mixtral-8x7b": dict(hidden=4096, heads=32, groups=8, ffn=14336, act="swiglu", norm="RMSNorm", bias=False,
                         vocab=32000, pos="rope", rotary_base=1000000, experts=8, topk=2, moe_ffn=14336,
                         router_dtype=None),
}


def config(model, layers, precision, recipe, ce_fusion):
    """The case's TransformerConfig (built without a GPU: the program's settings can be checked anywhere)."""
    from megatron.core.transformer.transformer_config import TransformerConfig
    from megatron.core.activations import squared_relu
    from megatron.core.fusions.fused_bias_geglu import quick_gelu
    m = MODELS[model]
    act = {"swiglu": F.silu, "gelu": F.gelu, "squared_relu": squared_relu, "quick_geglu": quick_gelu}[m["act"]]
    kw = dict(num_layers=layers, hidden_size=m["hidden"], num_attention_heads=m["heads"],
              num_query_groups=m["groups"], ffn_hidden_size=m["ffn"], normalization=m["norm"],
              layernorm_zero_centered_gamma=m.get("zero_centered_gamma", False),
              add_bias_linear=m["bias"], add_qkv_bias=m["bias"],
              gated_linear_unit=m["act"] in ("swiglu", "quick_geglu"), activation_func=act,
              bias_activation_fusion=m["act"] in ("swiglu", "gelu", "quick_geglu"),
              bf16=True, params_dtype=torch.bfloat16, pipeline_dtype=torch.bfloat16,
              hidden_dropout=m.get("dropout", 0.0), attention_dropout=m.get("dropout", 0.0),
              apply_rope_fusion=True, gradient_accumulation_fusion=False,
              cross_entropy_loss_fusion=ce_fusion != "none",
              cross_entropy_fusion_impl="te" if ce_fusion == "te" else "native")
    if m["act"] == "gelu" and not m["bias"]:
        kw["bias_activation_fusion"] = False
    if m["act"] == "quick_geglu":
        kw.update(glu_linear_offset=1.0, activation_func_clamp_value=7.0, bias_dropout_fusion=False)
    if m.get("sinks"):
        kw["softmax_type"] = "learnable"
    if "window" in m:  # Bridge's provider: (128, 0), (127, 0) since its March 2026 off-by-one fix
        kw.update(window_size=(m["window"] - 1, 0), window_attn_skip_freq=2)
    if "kv_channels" in m:
        kw["kv_channels"] = m["kv_channels"]
    if m.get("qk_norm"):
        kw["qk_layernorm"] = True
    if "experts" in m:
        # As Megatron-Bridge's Qwen3 MoE recipes and NVIDIA's benchmark runs: TE's grouped GEMM (TEGroupedMLP), the
        # fused permutation and router, balanced routing forced (the rows' "dropless with balanced gating"), the
        # aux-loss router in fp32; the alltoall dispatcher, which with EP 1 permutes and never communicates. No CUDA
        # graphs (the recipes capture some modules; not run here).
        kw.update(num_moe_experts=m["experts"], moe_router_topk=m["topk"], moe_ffn_hidden_size=m["moe_ffn"],
                  moe_token_dispatcher_type="alltoall", moe_grouped_gemm=True,
                  moe_router_load_balancing_type="aux_loss", moe_aux_loss_coeff=1e-3,
                  moe_router_dtype=m.get("router_dtype", "fp32"),
                  moe_router_force_load_balancing=True, moe_permute_fusion=True,
                  moe_router_fusion=m.get("router_fusion", True))
    if precision == "fp8":
        kw.update(fp8="hybrid", fp8_recipe=recipe)
        if recipe == "delayed":  # NeMo 1.0's recipe settings (the 24.07 rows)
            kw.update(fp8_amax_history_len=1024, fp8_amax_compute_algo="max", fp8_margin=0)
    return TransformerConfig(**kw)


def build(model, layers, seq, precision, recipe, ce_fusion):
    from megatron.core.models.gpt import GPTModel
    from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_with_transformer_engine_spec
    m = MODELS[model]
    cfg = config(model, layers, precision, recipe, ce_fusion)
    if "experts" in m:
        # The MoE auxiliary-loss tracker is sized by the first model's layer count: start it again for each model.
        import megatron.core.transformer.moe.moe_utils as moe_utils
        moe_utils._MOE_LAYER_WISE_LOGGING_TRACKER.clear()
    spec = get_gpt_layer_with_transformer_engine_spec(num_experts=m.get("experts"), moe_grouped_gemm="experts" in m,
                                                      qk_layernorm=m.get("qk_norm", False))
    net = GPTModel(config=cfg, transformer_layer_spec=spec, vocab_size=m["vocab"], max_sequence_length=seq,
                   position_embedding_type=m["pos"], rotary_percent=m.get("rotary_percent", 1.0),
                   rotary_base=m.get("rotary_base", 10000), share_embeddings_and_output_weights=model == "gpt3-5b")
    if m["pos"] == "learned_absolute":
        # Megatron's training loop wraps the model in Float16Module (everything bf16); the learned position table
        # is created in fp32 and would make the first layer's input fp32, which TE refuses.
        net.embedding.position_embeddings.to(torch.bfloat16)
    return net.cuda()


def kernels_of(doc):
    """Per kernel name: count and total GPU time (us) of one profiled step."""
    ev = [e for e in doc.get("traceEvents", []) if e.get("ph") == "X" and e.get("cat") == "kernel"]
    tot, cnt = collections.Counter(), collections.Counter()
    for e in ev:
        tot[e["name"]] += e["dur"]
        cnt[e["name"]] += 1
    return [{"name": k, "count": cnt[k], "us": round(v, 1)} for k, v in tot.most_common()]


def profiled(net, shape, vocab, trace_out):
    doc = mh.profile_step(net, shape, vocab, trace_out, step=training_step)
    gpu = [e for e in doc.get("traceEvents", []) if e.get("ph") == "X"
           and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    syncs = [e for e in doc.get("traceEvents", []) if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver")
             and e.get("name") in mh.SYNC_CALLS]
    return {"gpu_busy_s": mh.busy_union(gpu) * 1e-6, "kernels": kernels_of(doc), "host_syncs": len(syncs),
            "host_sync_wait_s": sum(e["dur"] for e in syncs) * 1e-6}


def sustained(net, shape, vocab, seconds, smi_path):
    """Steps back to back for `seconds` (a training run's steady state: the GPU at its power cap for as long as it
    lasts) with nvidia-smi sampling beside them: each step's wall time, and the medians of the first second and of the
    last half with the SM clock and power nvidia-smi read over each. validation/clocks/smi.py."""
    import time
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "clocks"))
    import statistics
    import smi
    ids, pos, labels = mh.inputs(*shape, vocab)
    sampler = smi.Sampler(smi_path)
    time.sleep(1.0)  # idle: the clock recovers, as before the burst steps
    steps, t0 = [], time.time()
    while time.time() - t0 < seconds:
        a = time.time()
        training_step(net, ids, pos, labels, False)
        steps.append((a - t0, time.time() - a))
    t1 = time.time()
    sampler.stop()
    first = [d for a, d in steps if a < 1.0]
    last = [d for a, d in steps if a >= seconds / 2]
    return {"seconds": seconds, "steps": len(steps), "step_times_s": [round(d, 6) for _, d in steps],
            "first_second_step_s": statistics.median(first), "last_half_step_s": statistics.median(last),
            "slowdown": statistics.median(last) / statistics.median(first),
            "smi_first_second": sampler.window(t0, t0 + 1.0), "smi_last_half": sampler.window(t0 + seconds / 2, t1)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", choices=sorted(MODELS), required=True)
    ap.add_argument("--precision", choices=("bf16", "fp8"), required=True)
    ap.add_argument("--recipe", choices=("delayed", "tensorwise"), default="delayed")
    ap.add_argument("--ce-fusion", nargs="?", const="te", default="none", choices=("none", "native", "te"),
                    help="cross_entropy_loss_fusion: te (Transformer Engine's kernel, Megatron-Bridge's recipes; the "
                    "flag alone), native (Megatron-Core's torch.compile'd one) or none (the default: Megatron-Core's "
                    "unfused vocab-parallel cross entropy)")
    ap.add_argument("--shape", default="1x4096", help="micro-batch x sequence")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--host-layers", default="", help="L1,L2: also the host time per layer at 1 x 64 tokens")
    ap.add_argument("--sustain", type=float, default=0.0, help="SECONDS: also run steps back to back this long with "
                    "nvidia-smi beside them (the step at the power cap's steady state; --out's name with .smi.csv)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--trace", default="")
    a = ap.parse_args()
    b, s = mh.parse_shape(a.shape)
    mh.init_megatron()
    import megatron.core
    import transformer_engine
    vocab = MODELS[a.model]["vocab"]
    res = {"schema": "scalescope.mcore_te_step/1", "model": a.model, "dims": MODELS[a.model],
           "precision": a.precision, "recipe": a.recipe if a.precision == "fp8" else None,
           "ce_fusion": a.ce_fusion, "shape": [b, s], "layers": a.layers,
           "software": {"megatron_core": getattr(megatron.core, "__version__", "?"),
                        "transformer_engine": getattr(transformer_engine, "__version__", "?"),
                        "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(), "cudnn_library": CUDNN_LIBRARY,
                        "python": platform.python_version()},
           "gpu": torch.cuda.get_device_name(0)}
    net = build(a.model, a.layers, s, a.precision, a.recipe, a.ce_fusion)
    res["parameters"] = sum(p.numel() for p in net.parameters())
    res["step"] = mh.timed(net, (b, s), vocab, a.steps, step=training_step)
    res["step"].update(profiled(net, (b, s), vocab, a.trace))
    if a.sustain > 0:
        res["sustained"] = sustained(net, (b, s), vocab, a.sustain, a.out[:-5] + ".smi.csv")
        print("sustained", {k: v for k, v in res["sustained"].items() if k != "step_times_s"}, flush=True)
    res["max_allocated_GiB"] = torch.cuda.max_memory_allocated() / 2**30
    print(a.model, a.precision, a.recipe, a.shape, {k: res["step"][k] for k in ("forward_s", "backward_s", "step_s",
                                                                              "gpu_busy_s")}, flush=True)
    del net
    torch.cuda.empty_cache()
    if a.host_layers:
        l1, l2 = (int(x) for x in a.host_layers.split(","))
        t = {}
        for n in (l1, l2):
            net = build(a.model, n, 128, a.precision, a.recipe, a.ce_fusion)
            t[n] = mh.timed(net, (1, 64), vocab, 30, step=training_step)
            del net
            torch.cuda.empty_cache()
        res["host_timings"] = {str(n): t[n] for n in (l1, l2)}
        res["host_per_layer_s"] = {k: (t[l2][k] - t[l1][k]) / (l2 - l1) for k in ("forward_s", "backward_s", "step_s")}
        print("host per layer", res["host_per_layer_s"], flush=True)
    mh.write_json(a.out, res)
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
