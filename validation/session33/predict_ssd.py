#!/usr/bin/env python3
"""Predicts the Mamba-2 kernels ssd_kernels.py times, with `scalescope simulate --kernels` on one H200 of hgx-h200-8
priced by calibrate/profiles/h200-gpu.json (the fused stack's rows: docs/hybrid.md), and writes predictions.json.

Each shape is a one-layer Mamba-2 model (pattern "M") run at mbs = batch, seq = the shape's sequence, bf16, tp 1:
the SSD forward is the rows ssd chunk cumsum .. ssd chunk scan, its backward the rows ssd recompute .. ssd backward
ddt (mamba_ssm's _mamba_chunk_scan_combined_bwd recomputes the states and C B^T first, as the rows do), the gated norm
the rows mamba gated norm (backward). Run before the measurement; nothing in it is fitted to the GPU's times.

Usage: predict_ssd.py SCALESCOPE_BINARY OUT.json [--second-set] [--calibration PROFILE]
"""
import json
import subprocess
import sys
import tempfile

SHAPES = [
    # name, batch, seq, heads, head_dim, groups, state, chunk
    ("nemotron-3-nano", 1, 8192, 64, 64, 8, 128, 128),
    ("nemotron-3-nano-tp2", 1, 8192, 32, 64, 4, 128, 128),
    ("nano-mbs2-4k", 2, 4096, 64, 64, 8, 128, 128),
    ("mamba2-2.7b", 2, 4096, 80, 64, 1, 128, 256),
    ("small", 2, 1024, 32, 64, 4, 128, 128),
    ("long-32k", 1, 32768, 64, 64, 8, 128, 128),
    ("head128", 1, 8192, 32, 128, 8, 128, 128),
    ("state64", 4, 4096, 48, 64, 2, 64, 128),
]

# The second set (session 33, after the per-head reads): shapes none of the first set has, predicted before they ran.
SHAPES2 = [
    ("nemotron-h-8b", 1, 8192, 128, 64, 8, 128, 128),
    ("groups4-chunk256", 2, 4096, 64, 64, 4, 128, 256),
    ("state256", 1, 8192, 64, 64, 8, 256, 128),
    ("b8-2k", 8, 2048, 32, 64, 8, 128, 128),
    ("h96-g1-16k", 1, 16384, 96, 64, 1, 128, 128),
    ("p32-n64-q64", 2, 8192, 128, 32, 8, 64, 64),
]

FWD = ["ssd chunk cumsum", "ssd chunk state", "ssd state passing", "ssd chunk C B^T", "ssd chunk scan"]
BWD = ["ssd recompute states and C B^T", "ssd backward dstates", "ssd backward state passing", "ssd backward dC",
       "ssd backward dx", "ssd backward dB", "ssd backward dCB", "ssd backward ddA", "ssd backward dB dC from dCB",
       "ssd backward ddt"]


def predict(binary, calibration, name, b, l, h, p, g, n, q):
    model = {"name": "mamba-" + name, "layers": 1, "hidden": 2048, "heads": 16, "kv_heads": 16, "ffn_hidden": 8192,
             "ffn": "gelu", "norm": "rmsnorm", "bias": False, "vocab": 32000, "tied_embeddings": False,
             "seq_len": l, "positional": "none", "hybrid_pattern": "M", "mamba_heads": h, "mamba_head_dim": p,
             "mamba_state": n, "mamba_groups": g, "mamba_conv_kernel": 4, "mamba_chunk": q}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(model, f)
    out = subprocess.run([binary, "simulate", "--model", f.name, "--cluster", "hgx-h200-8", "--calibration",
                          calibration, "--plan", f"dp=1,mbs={b},gbs={b},precision=bf16",
                          "--kernels", "--format", "json"], capture_output=True, text=True, check=True).stdout
    rows = {r["name"]: r for r in json.loads(out)["kernels"][0]["rows"]}
    t = lambda names: sum(rows[x]["time_s"] for x in names)
    return {"name": name, "batch": b, "seq": l, "heads": h, "head_dim": p, "groups": g, "state": n, "chunk": q,
            "ssd_forward_s": t(FWD), "ssd_backward_s": t(BWD), "gated_norm_forward_s": t(["mamba gated norm"]),
            "gated_norm_backward_s": t(["mamba gated norm backward"]),
            "ssd_forward_bytes": sum(rows[x]["bytes"] for x in FWD),
            "ssd_backward_bytes": sum(rows[x]["bytes"] for x in BWD)}


def main():
    binary, out, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    calibration = rest[rest.index("--calibration") + 1] if "--calibration" in rest else "calibrate/profiles/h200-gpu.json"
    shapes = [predict(binary, calibration, *s) for s in (SHAPES2 if "--second-set" in rest else SHAPES)]
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    json.dump({"predicted_with": "scalescope simulate --kernels, hgx-h200-8, " + calibration + ", "
                                 "fused stack, at commit " + commit + " (the rows are models/stacks/fused.json's)",
               "shapes": shapes}, open(out, "w"), indent=1)
    for s in shapes:
        print(f"{s['name']:22s} ssd fwd {s['ssd_forward_s']*1e6:8.1f} us  bwd {s['ssd_backward_s']*1e6:8.1f} us  "
              f"norm {s['gated_norm_forward_s']*1e6:6.1f} / {s['gated_norm_backward_s']*1e6:6.1f} us")


if __name__ == "__main__":
    main()
