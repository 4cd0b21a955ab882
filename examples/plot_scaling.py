"""Plots a scaling curve (best plan per GPU count, fixed global batch) and a plan comparison with matplotlib.

    python examples/plot_scaling.py [OUT.png]     (default docs/python-example.png)

Left: Llama-3-8B on an H100 rail-optimized NDR cluster, global batch 512 sequences, the planner's best plan at
8..128 GPUs (one `scalescope.sweep` in plan mode): tokens/s against ideal linear scaling from 8 GPUs.
Right: the ten best plans of Llama-3-70B on 64 of those GPUs (`scalescope.plan`), where each one's step goes.
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import scalescope  # noqa: E402

CLUSTER = "h100-rail-ndr"


def scaling_rows():
    spec = {"format": "scalescope.sweep/1", "mode": "plan", "models": ["llama3-8b"], "clusters": [CLUSTER],
            "gpus": [8, 16, 32, 64, 128], "global_batches": [512]}
    return [r for r in scalescope.sweep(spec) if r["status"] == "ok"]


def label(ranked_plan):
    p = ranked_plan["plan"]
    text = f"#{ranked_plan['rank']} tp{p['tp']} pp{p['pp']} dp{p['dp']} zero{p['zero']} mbs{p['mbs']} {p['schedule']}"
    if p["vpp"] > 1:
        text += f" vpp{p['vpp']}"
    if p["recompute"] != "none":
        text += f" rc-{p['recompute']}"
    return text + (" sp" if p["sp"] else "")


def plot(out):
    rows = scaling_rows()
    ranked = scalescope.plan("llama3-70b", CLUSTER, 512, gpus=64, top=10, flow_top=0)["plans"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.8))

    gpus = [r["gpus"] for r in rows]
    tps = [r["tokens_per_s"] / 1e6 for r in rows]
    left.plot(gpus, [tps[0] * g / gpus[0] for g in gpus], "--", color="grey", label="ideal (linear from 8 GPUs)")
    left.plot(gpus, tps, "o-", label="best plan (scalescope.sweep)")
    for g, t, r in zip(gpus, tps, rows):
        left.annotate(f"tp{r['tp']} pp{r['pp']} dp{r['dp']}\nMFU {100 * r['mfu']:.0f}%", (g, t),
                      textcoords="offset points", xytext=(4, -22), fontsize=7)
    left.set_xscale("log", base=2)
    left.set_yscale("log")
    left.set_xticks(gpus, [str(g) for g in gpus])
    left.set_xlabel("GPUs")
    left.set_ylabel("million tokens/s (log scale)")
    left.set_title("Llama-3-8B, gbs 512, " + CLUSTER)
    left.legend(loc="upper left")

    parts = [("compute", ["forward_s", "backward_s", "recompute_s", "optimizer_s", "other_compute_s"]),
             ("exposed comm", ["tp_comm_s", "sp_comm_s", "dp_comm_s", "zero_comm_s", "pp_comm_s", "other_comm_s"]),
             ("bubble / idle", ["bubble_s"])]
    labels = [label(p) for p in ranked]
    bottom = [0.0] * len(ranked)
    for name, keys in parts:
        vals = [sum(p["breakdown"].get(k, 0.0) for k in keys) for p in ranked]
        right.barh(labels, vals, left=bottom, label=name)
        bottom = [b + v for b, v in zip(bottom, vals)]
    right.invert_yaxis()
    right.tick_params(axis="y", labelsize=7)
    right.set_xlabel("step time (s), critical rank")
    right.set_title("Llama-3-70B, 64 GPUs: the 10 best plans (scalescope.plan)", fontsize=10)
    right.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=3, fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    return rows, ranked


if __name__ == "__main__":
    plot(sys.argv[1] if len(sys.argv) > 1 else "docs/python-example.png")
