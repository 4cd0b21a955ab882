#!/usr/bin/env python3
"""Writes a scalescope.host_dispatch/1 file from mcore_moe_host.py measurements, or from mcore_te_step.py's (Megatron-Core
with Transformer Engine, `--host-layers`; session 39) (validate nemo --host-cost and --moe-host-cost; simulate
--host-cost).

  python3 validation/megatron/host_dispatch_file.py --measured A.json [B.json ...] --stack STACK.json -o OUT.json

module: the median over the measured files of host_per_layer_s.step_s (a layer's forward and backward for one
micro-batch, no synchronisation between them); forward_share: the median of forward / (forward + backward);
per_edge_microbatch_s and after_sync_share: from the stack profile that `scalescope import torch-trace` made of the
same program's profiled trace (host.per_edge_microbatch_s, host.after_sync_share), which mcore_moe_host.py does not
measure. tensor_parallel = module (Megatron's tensor parallelism adds its collectives' launches only; not measured).
"""
import argparse
import json
import os
import statistics


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--measured", nargs="+", required=True, help="mcore_moe_host.py outputs, all dense or all MoE")
    ap.add_argument("--stack", required=True, help="the imported stack profile of the same program (edge, shares)")
    ap.add_argument("--host", required=True, help="the machine the measurements ran on, in words")
    ap.add_argument("--samples", action="store_true", help="the --measured files are processes of one layer: keep "
                    "each one's time relative to their median as process_samples (a step of N ranks waits for the "
                    "slowest of N hosts)")
    ap.add_argument("--per-local-expert", action="store_true", help="the --measured files are one MoE layer with "
                    "different numbers of local experts (mcore_te_step.py's dims.experts): module = the least-squares "
                    "intercept of host time against local experts, per_local_expert_s = its slope")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()
    runs = [json.load(open(f)) for f in a.measured]
    te = all(r.get("schema") == "scalescope.mcore_te_step/1" and "host_per_layer_s" in r for r in runs)
    for r in runs:  # mcore_te_step.py: Megatron-Core's GPT layers with Transformer Engine's spec, dense or MoE
        r.setdefault("variant", "moe (TEGroupedMLP)" if "experts" in r.get("dims", {}) else "dense")
    variants = {r["variant"] for r in runs}
    if len(variants) != 1 or not (te or all(r["schema"] == "scalescope.mcore_moe_host/1" for r in runs)):
        ap.error("--measured: expected mcore_moe_host.py outputs of one variant or mcore_te_step.py outputs with "
                 f"host_per_layer_s, got {sorted(variants)}")
    variant = variants.pop()
    per = [r["host_per_layer_s"] for r in runs]
    module = statistics.median(p["step_s"] for p in per)
    slope = None
    if a.per_local_expert:
        e = [r["dims"]["experts"] for r in runs]
        if len(set(e)) < 2:
            ap.error(f"--per-local-expert: expected runs with at least two local-expert counts, got {sorted(e)}")
        slope, module = statistics.linear_regression(e, [p["step_s"] for p in per])
    share = statistics.median(p["forward_s"] / (p["forward_s"] + p["backward_s"]) for p in per)
    stack = json.load(open(a.stack))["host"]
    sw = runs[0]["software"]
    doc = {
        "schema": "scalescope.host_dispatch/1",
        "framework": (f"megatron-core {sw['megatron_core']} with Transformer Engine {sw['transformer_engine']} (its "
                      "layer spec)" if te else f"megatron-core {sw['megatron_core']} (local layer spec: no Transformer "
                      "Engine or apex)") + f", torch {sw['torch']}, {variant} layers ({len(runs)} measured: "
                     + ", ".join(os.path.basename(f)[:-5] for f in a.measured) + ")",
        "gpu": runs[0]["gpu"],
        "host": a.host,
        "method": ("validation/megatron/mcore_te_step.py --host-layers 2,6: at 1 x 64 tokens (the GPU idles) the wall "
                   "time of models of 2 and 6 layers, per layer = the difference / 4" if te else
                   "validation/megatron/mcore_moe_host.py: at 1 x 64 tokens (the GPU idles) the wall time of models "
                   "of 2 and 8 layers, per layer = the difference / 6") + ", medians of 30 steps; module = the median over the "
                  "files of the step without a synchronisation between forward and backward; forward_share = the "
                  "median of forward / (forward + backward); per_edge_microbatch_s and after_sync_share from the "
                  + ("import of Megatron-Core's local-spec program's profiled trace, not the TE program's "
                     if te else "import of the same program's profiled trace ") +
                  f"({a.stack}); tensor_parallel = module (Megatron's "
                  "tensor parallelism adds its collectives' launches, not measured; no DTensor). Written by "
                  "validation/megatron/host_dispatch_file.py",
        "fitted_on": {"module": ", ".join(a.measured), "tensor_parallel": "not measured: the module value"},
        "per_layer_microbatch_s": {"module": round(module, 7), "tensor_parallel": round(module, 7)},
        "per_edge_microbatch_s": round(stack["per_edge_microbatch_s"], 7),
        "forward_share": round(share, 4),
    }
    if slope is not None:
        doc["per_local_expert_s"] = round(slope, 7)
        doc["fitted_on"]["per_local_expert_s"] = doc["fitted_on"]["module"]
        doc["method"] += ("; module and per_local_expert_s: the least-squares line of host time per layer against "
                          "the local experts of the measured runs (" + ", ".join(
                              f"{r['dims']['experts']}: {p['step_s'] * 1e3:.2f} ms" for r, p in zip(runs, per)) + ")")
    if len(runs) > 1 and a.samples:
        # several processes of one layer: each one's host time relative to their median (slowest_of, framework_host.hpp)
        doc["process_samples"] = [round(p["step_s"] / module, 4) for p in per]
    if "after_sync_share" in stack:
        doc["after_sync_share"] = round(stack["after_sync_share"], 4)
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(json.dumps(doc, indent=1) + "\n")
    os.replace(tmp, a.out)
    print(f"{a.out}: module {module * 1e3:.3f} ms, forward share {share:.3f}"
          + ("" if slope is None else f", per local expert {slope * 1e3:.3f} ms"))


if __name__ == "__main__":
    main()
