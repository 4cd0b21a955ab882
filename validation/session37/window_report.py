#!/usr/bin/env python3
"""Session 37, call 2: power_mix.py's GEMM / add mixes in cycles of 2 ms to 1 s (validation/device/session37_window.sh)
as one table: per dtype, cycle and GEMM share, the share the whole calls gave at burst times, the GEMM's rate over its
bursts, the SM clock and the draw; beside them the GPU's fitted model (calibrate/profiles/GPU-power.json: the draw
averaged over the whole mix) and the GEMM alone at the cap (the same GEMM's 10 ms mixes at G = 1: call 1's on the
H100, session 34's on the H200).

  python3 validation/session37/window_report.py validation/session37/window --gpu h200 [-o report.md]
"""
import argparse
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import blind_cli  # noqa: E402  (emit: print a report and write it with -o)


def rows(folder):
    out = []
    for path in glob.glob(os.path.join(folder, "window-*-*.json")):
        dt, ms = re.match(r"window-(\w+)-([\d.]+)\.json$", os.path.basename(path)).groups()
        doc = json.load(open(path))
        for m in doc["mixes"]:
            b = m["bursts_before"]
            if not 0.0 < m["gemm_share"] < 1.0:
                continue
            blk = float(ms) * 1e-3  # files before session 37 lack the calls: power_mix.py's own rounding
            cg = m.get("gemm_calls", max(1, round(blk * m["gemm_share"] / b["gemm_s"])))
            cm = m.get("add_calls", max(1, round(blk * (1 - m["gemm_share"]) / b["add_s"])))
            share = cg * b["gemm_s"] / (cg * b["gemm_s"] + cm * b["add_s"]) if cg + cm else None
            out.append(dict(dtype=dt, block_ms=float(ms), share=m["gemm_share"], actual=share, calls=(cg, cm),
                            rate=m["gemm_relative_to_bursts"], mhz=m.get("sm_MHz_median"), w=m.get("power_W_median"),
                            # the mix's burst rates: its sustained rates over their ratio to the bursts
                            burst_tflops=m["gemm_TFLOPS"] / m["gemm_relative_to_bursts"] if m["gemm_TFLOPS"] else 0.0,
                            add_gbps=m["add_GBps"] / m["add_relative_to_bursts"] if m["add_GBps"] else 0.0))
    return sorted(out, key=lambda r: (r["dtype"], -r["share"], r["block_ms"]))


def modelled(power, dtype, share, burst_tflops, add_gbps):
    """The fit's rate for the mix's GEMM when the draw is averaged over the mix (docs/power.md, power_mix checks)."""
    cls = power["classes"]["gemm_fp8" if dtype == "fp8" else "gemm_bf16"]
    mem = power["classes"]["memory"]
    e = share * (cls["watts"] + cls["joules_per_unit"] * burst_tflops * 1e12) + \
        (1 - share) * (mem["watts"] + mem["joules_per_unit"] * add_gbps * 1e9)
    window = e / (power["capped_w"] - power["idle_w"]) - (1 - share)
    return min(1.0, share / window) if window > 0 else 1.0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder")
    p.add_argument("--gpu", choices=("h100", "h200"), default="h100", help="whose fit and reference mixes")
    p.add_argument("-o", "--out")
    a = p.parse_args()
    reference = {"h100": "validation/session37/h100/mix-{}.json", "h200": "validation/session34/power34/mix-{}.json"}
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    power = json.load(open(os.path.join(root, f"calibrate/profiles/{a.gpu}-power.json")))["power"]
    alone = {}
    for dt in ("fp8", "bf16"):
        mix = json.load(open(os.path.join(root, reference[a.gpu].format(dt))))
        alone[dt] = next(m["gemm_relative_to_bursts"] for m in mix["mixes"] if m["gemm_share"] == 1.0)
    lines = ["| dtype | G | cycle ms | calls per cycle (GEMM, add) | G of whole calls | GEMM rate / bursts | SM MHz | "
             "W | model (draw averaged) | GEMM alone |", "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows(a.folder):
        model = modelled(power, r["dtype"], r["actual"], r["burst_tflops"], r["add_gbps"])
        lines.append(f"| {r['dtype']} | {r['share']:.2f} | {r['block_ms']:g} | {r['calls'][0]}, {r['calls'][1]} | "
                     f"{r['actual']:.2f} | {r['rate']:.3f} | {r['mhz']:.0f} | {r['w']:.0f} | {model:.3f} | "
                     f"{alone[r['dtype']]:.3f} |")
    blind_cli.emit("\n".join(lines) + "\n", a.out)


if __name__ == "__main__":
    main()
