#!/usr/bin/env python3
"""Training step time of Hugging Face transformers' GPT-2 with and without dropout on one GPU (session 31 blind
check of the dropout model: validation/dropout/README.md).

The program is transformers' own GPT2LMHeadModel (attn_implementation="sdpa"), built from a GPT2Config, trained as
a user of the library would: fp32 parameters, torch.autocast(bfloat16), the loss the model computes from
labels=input_ids, torch.optim.AdamW(fused=True). Random token ids; no data loading.

  python3 gpt2_dropout.py OUT.json --config NAME:CONFIG.json ... [--steps 20] [--warmup 5]

Each NAME:CONFIG.json is one HF config.json (written beside this script; the predictions read the same files);
per config: the median wall time of --steps training steps (each ends with torch.cuda.synchronize()), the peak
allocated memory, and the CUDA kernels one profiled step ran whose names say which attention kernel SDPA picked
(flash, cuDNN, memory-efficient) and which dropout kernels ran.
"""
import argparse
import json
import statistics
import sys
import time

import torch


def kernel_names(step):
    """Names and total GPU time (us) of the CUDA kernels of one step, from torch.profiler."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    totals = {}
    for e in prof.key_averages():
        t = getattr(e, "device_time_total", None)
        if t is None:
            t = getattr(e, "cuda_time_total", 0.0)
        if t and t > 0:
            totals[e.key] = totals.get(e.key, 0.0) + float(t)
    return totals


def run(name, config_file, steps, warmup):
    from transformers import GPT2Config, GPT2LMHeadModel
    with open(config_file) as f:
        cfg = json.load(f)
    mbs, seq = int(cfg.pop("_mbs")), int(cfg.pop("_seq"))
    cfg = {k: v for k, v in cfg.items() if not k.startswith("_")}
    config = GPT2Config(**cfg)
    torch.manual_seed(0)
    try:
        model = GPT2LMHeadModel._from_config(config, attn_implementation="sdpa")
    except (TypeError, ValueError):
        config._attn_implementation = "sdpa"
        model = GPT2LMHeadModel(config)
    model = model.cuda()
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    ids = torch.randint(0, config.vocab_size, (mbs, seq), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    peak = torch.cuda.max_memory_allocated()
    kernels = kernel_names(step)
    attention = {k: v for k, v in kernels.items() if any(s in k.lower() for s in ("flash", "fmha", "cudnn", "sdpa", "attention", "mem_eff"))}
    dropout = {k: v for k, v in kernels.items() if "dropout" in k.lower() or "bernoulli" in k.lower()}
    row = dict(name=name, config=config_file, attn_implementation=getattr(model.config, "_attn_implementation", None), mbs=mbs, seq=seq, n_layer=config.n_layer, n_embd=config.n_embd,
               n_head=config.n_head, activation_function=config.activation_function, attn_pdrop=config.attn_pdrop,
               resid_pdrop=config.resid_pdrop, embd_pdrop=config.embd_pdrop, steps=steps,
               step_s_median=statistics.median(times), step_s_min=min(times), step_s_all=times,
               peak_allocated_bytes=peak, gpu_kernel_us_total=sum(kernels.values()),
               attention_kernels_us=attention, dropout_kernels_us=dropout, kernels=len(kernels))
    print(f"{name}: {1e3 * row['step_s_median']:.2f} ms (min {1e3 * row['step_s_min']:.2f}), peak "
          f"{peak / 2**30:.2f} GiB, GPU {row['gpu_kernel_us_total'] / 1e3:.2f} ms; attention kernels "
          f"{sorted(attention)[:3]}", file=sys.stderr, flush=True)
    del model, opt
    torch.cuda.empty_cache()
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    p.add_argument("--config", action="append", required=True, help="NAME:CONFIG.json (repeatable)")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    a = p.parse_args()
    import transformers
    rows = []
    for spec in a.config:
        name, _, path = spec.partition(":")
        if not path:
            p.error(f"--config: expected NAME:CONFIG.json, got '{spec}'")
        rows.append(run(name, path, a.steps, a.warmup))
    doc = dict(schema="scalescope.gpt2-dropout/1", gpu=torch.cuda.get_device_name(0), torch=torch.__version__,
               cuda=torch.version.cuda, transformers=transformers.__version__,
               measured_utc=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), rows=rows)
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
