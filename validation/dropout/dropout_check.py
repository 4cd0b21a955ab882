#!/usr/bin/env python3
"""Session 31's blind check of the dropout model on transformers' GPT-2 (validation/dropout/README.md).

  predict SCALESCOPE   (here, before the device call) `scalescope simulate` of every config in configs/ with the
                       built-in pytorch-eager stack (attention priced from the H200 profile's flash rows) and with
                       pytorch-eager-cudnn.json (the same stack, cuDNN rows): predictions.json
  report MEASURED.json (after) predictions against the measurement: REPORT.md on stdout
"""
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
STACKS = {"flash": "pytorch-eager", "cudnn": os.path.join("validation", "dropout", "pytorch-eager-cudnn.json")}


def configs():
    for f in sorted(glob.glob(os.path.join(HERE, "configs", "*.json"))):
        c = json.load(open(f))
        yield os.path.basename(f)[:-5], os.path.relpath(f, ROOT), c


def predict(exe):
    out = {"schema": "scalescope.dropout-predictions/1", "calibration": "h200-gpu", "cluster": "hgx-h200-8",
           "rows": []}
    for name, path, c in configs():
        plan = f"tp=1,pp=1,dp=1,mbs={c['_mbs']},gbs={c['_mbs']},precision=mixed"
        row = {"name": name, "config": path, "plan": plan}
        for kernel, stack in STACKS.items():
            cmd = [exe, "simulate", "--model", path, "--cluster", "hgx-h200-8", "--gpus", "1", "--plan", plan,
                   "--calibration", "h200-gpu", "--framework", stack, "--format", "json"]
            r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"{' '.join(cmd)}: {r.stderr.strip()}")
            j = json.loads(r.stdout)
            row[kernel] = {"step_s": j["step_time_s"], "memory_peak_GiB": j.get("memory_peak_GiB"),
                           "command": " ".join(cmd[1:])}
        out["rows"].append(row)
        print(f"{name}: flash {1e3 * row['flash']['step_s']:.2f} ms, cudnn {1e3 * row['cudnn']['step_s']:.2f} ms",
              file=sys.stderr)
    json.dump(out, sys.stdout, indent=1)
    print()


def report(measured_file):
    pred = {r["name"]: r for r in json.load(open(os.path.join(HERE, "predictions.json")))["rows"]}
    meas = json.load(open(measured_file))
    m = {r["name"]: r for r in meas["rows"]}
    print(f"Measured on one {meas['gpu']} (torch {meas['torch']}, transformers {meas['transformers']}, "
          f"{meas['measured_utc']}); predictions: predictions.json.\n")
    print("| config | attention kernel SDPA ran | measured ms | predicted ms (flash rows / cuDNN rows) | error |")
    print("|---|---|---:|---:|---:|")
    kern = {}
    for name in sorted(m):
        r, p = m[name], pred[name]
        att = ", ".join(sorted(r["attention_kernels_us"]))[:80] or "-"
        k = "cudnn" if any("cudnn" in a.lower() or "fmha" in a.lower() for a in r["attention_kernels_us"]) else "flash"
        kern[name] = k
        ms = 1e3 * r["step_s_median"]
        print(f"| {name} | {att} | {ms:.2f} | {1e3 * p['flash']['step_s']:.2f} / {1e3 * p['cudnn']['step_s']:.2f} | "
              f"{100 * (p[k]['step_s'] / r['step_s_median'] - 1):+.1f}% ({k}) |")
    print("\n| pair | measured increase ms | predicted increase ms | error of the increase |")
    print("|---|---:|---:|---:|")
    for name in sorted(m):
        if not name.endswith("-drop"):
            continue
        base = name[:-len("-drop")] + "-nodrop"
        if base not in m:
            continue
        k = kern[name]
        dm = m[name]["step_s_median"] - m[base]["step_s_median"]
        dp = pred[name][k]["step_s"] - pred[base][k]["step_s"]
        print(f"| {name} vs {base} | {1e3 * dm:.2f} | {1e3 * dp:.2f} | {100 * (dp / dm - 1):+.1f}% |")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("predict", "report"):
        sys.exit(__doc__)
    predict(sys.argv[2]) if sys.argv[1] == "predict" else report(sys.argv[2])
