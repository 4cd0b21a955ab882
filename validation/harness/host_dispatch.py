"""Derives the host (CPU) dispatch cost per layer and micro-batch of the harness's PyTorch training from short-sequence
profiles (profile_step.py --seq 256: the GPU idles, so the step's wall time is the host's time to issue it).

  python3 validation/harness/host_dispatch.py validation/profiles/h200-torch/host-seq256/*.json \
      -o validation/profiles/h200-torch/host_dispatch.json

cost per (layer, micro-batch), forward + backward = wall step time / (micro-batches per rank x layers per rank).
Two implementations differ: plain modules (single GPU, DDP, ZeRO, pipeline stages) and DTensor tensor parallelism.
The values come from the configs named in FIT below; every other short-sequence config is listed as a check.
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plans  # noqa: E402

FIT = {"module": "single:llama-1b:1:16", "tensor_parallel": "tp:llama-1b:1:16"}
FIT_WORLD = {"module": 1, "tensor_parallel": 2}


def per_layer_microbatch(rec, world):
    fam, model, mbs, gbs = rec["config"].split(":")
    m = plans.load_model_json(f"validation/models/{model}.json")
    tp, pp, dp, _, _ = plans.family_layout(fam, world)
    micro = int(gbs) // (int(mbs) * dp)
    layers = m["layers"] // pp
    return rec["wall_s_per_step"] / (micro * layers), micro, layers


def timed_when(rec):
    """When profile_step.py timed the unprofiled steps. Before session 7 it timed them after torch.profiler had run in
    the process, with CUPTI still attached (pytorch/pytorch#144455), which slows host-bound steps."""
    if "wall_s_steps" in rec:
        return "no profiler in the process (--timing-only)"
    if "wall_s_per_step_after_profiler" in rec:
        return "before the profiler (pass 1)"
    return "after the profiler (CUPTI attached)"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("profiles", nargs="+")
    p.add_argument("-o", "--out", required=True)
    p.add_argument("--host", default="CPU of the lent nvidia-h200-x4 / -x2 machines",
                   help="which machine (lease) the profiles were measured on, for the record")
    a = p.parse_args()
    rows, gpu, torch_v = [], None, None
    for path in a.profiles:
        d = json.load(open(path))
        gpu, torch_v = d["gpu"], d["torch"]
        for group in d["results"]:
            r = group[0]
            if r.get("seq_len", 4096) > 1024:
                continue  # only short sequences measure the host
            # profile_step.py --timing-only runs have no kernel breakdown (no profiler): busy unknown
            busy = max(x["gpu_busy_s_per_step"] for x in group) if "gpu_busy_s_per_step" in r else None
            cost, micro, layers = per_layer_microbatch(r, d["world"])
            rows.append({"config": r["config"], "gpus": d["world"], "seq_len": r["seq_len"], "wall_s": r["wall_s_per_step"],
                         "max_gpu_busy_s": busy, "microbatches_per_rank": micro, "layers_per_rank": layers,
                         "per_layer_microbatch_s": round(cost, 7), "host_bound": None if busy is None else r["wall_s_per_step"] > 1.1 * busy,
                         "timed": timed_when(r), "file": os.path.relpath(path)})
    out = {}
    for kind, cfg in FIT.items():
        hit = [r for r in rows if r["config"] == cfg and r["gpus"] == FIT_WORLD[kind]]
        if not hit:
            sys.exit(f"host_dispatch.py: no row for {cfg} on {FIT_WORLD[kind]} GPUs in the given profiles")
        out[kind] = statistics.median(r["per_layer_microbatch_s"] for r in hit)
    # DTensor's host time per layer grows with the number of training processes sharing the host (tp and tp-dp on
    # 4 GPUs cost the same, more than tp on 2): the TP fit config at every world size measured.
    by_processes = {str(r["gpus"]): r["per_layer_microbatch_s"] for r in sorted(rows, key=lambda r: r["gpus"])
                    if r["config"] == FIT["tensor_parallel"]}
    doc = {"schema": "scalescope.host_dispatch/1",
           "framework": f"PyTorch {torch_v} eager, validation/harness (bf16 autocast, fp32 master params)",
           "gpu": gpu, "host": a.host,
           "method": "profile_step.py --seq 256 (GPU mostly idle): wall step time / (micro-batches x layers per rank); "
                     "forward + backward of one layer for one micro-batch",
           "fitted_on": {**{k: f"{FIT[k]} on {FIT_WORLD[k]} GPU(s)" for k in FIT},
                         "tensor_parallel_by_processes": f"{FIT['tensor_parallel']} on as many GPUs (one process each) as the key"},
           "per_layer_microbatch_s": {**{k: round(v, 7) for k, v in out.items()},
                                      "tensor_parallel_by_processes": by_processes},
           "rows": rows}
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, a.out)
    for r in rows:
        print(f"{r['config']:26s} n{r['gpus']} {r['per_layer_microbatch_s'] * 1e3:6.2f} ms/layer/mb "
              f"{ {True: 'host-bound', False: 'GPU-bound?', None: ''}[r['host_bound']] }", file=sys.stderr)


if __name__ == "__main__":
    main()
