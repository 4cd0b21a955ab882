#!/usr/bin/env python3
"""Prints predicted / measured - 1 of every Mamba-2 kernel group of session 33 (validation/session33/README.md)."""
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).parent
KEYS = ["ssd_forward_s", "ssd_backward_s", "gated_norm_forward_s", "gated_norm_backward_s"]


def compare(pred_file, meas_file, title):
    p = {s["name"]: s for s in json.load(open(HERE / pred_file))["shapes"]}
    m = json.load(open(HERE / meas_file))["rows"]
    print(f"## {title}: {pred_file} against {meas_file}")
    print("| shape | " + " | ".join(k[:-2].replace("_", " ") + " pred/meas us (err)" for k in KEYS) + " | host fwd / bwd us |")
    print("|---" * (len(KEYS) + 2) + "|")
    errs = {k: [] for k in KEYS}
    for r in m:
        q = p[r["name"]]
        cells = []
        for k in KEYS:
            e = q[k] / r[k] - 1
            errs[k].append(e)
            cells.append(f"{q[k]*1e6:.0f} / {r[k]*1e6:.0f} ({e:+.0%})")
        host = f"{r.get('host_ssd_forward_s', 0)*1e6:.0f} / {r.get('host_ssd_backward_s', 0)*1e6:.0f}"
        print(f"| {r['name']} | " + " | ".join(cells) + f" | {host} |")
    print("| median abs error | " + " | ".join(f"{statistics.median(abs(e) for e in errs[k]):.0%}" for k in KEYS) + " | |")
    print()


if __name__ == "__main__":
    compare("predictions.json", "measured.json", "first set, blind (per-group reads)")
    compare("predictions1-revised.json", "measured.json", "first set with per-head reads (in-sample for that change)")
    compare("predictions2.json", "measured2.json", "second set, blind (per-head reads)")
    compare("predictions2-anchored-on-run1.json", "measured2.json",
            "second set from the first set's measured rows (profile `mamba` section; held out)")
