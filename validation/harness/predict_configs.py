"""Predicts every configuration the harness would measure, BEFORE it is measured, and writes the predictions.

Usage: python3 validation/harness/predict_configs.py BIN OUT.json --sizes 2 4 --families pp-interleaved
           [--models validation/models/llama-1b.json ...] [--calibration h200x4] [--what TEXT]
BIN is the scalescope binary. The configurations are those of train_step.py for the same --families and
--models (plans.build_configs), one `scalescope simulate` per configuration with the flags of
validation/make_report.py (eager-PyTorch kernels, the eager bandwidth factor it last fitted, read from
validation/eager_bandwidth_factor.json, and the measured host cost).
Commit OUT.json before the measurement: validation/make_report.py compares it with what was measured.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plans  # noqa: E402
import train_step  # noqa: E402  (stdlib and plans only at import time)

FACTOR_FILE = "validation/eager_bandwidth_factor.json"  # written by validation/make_report.py


def flags():
    with open(FACTOR_FILE) as f:
        factor = json.load(f)["factor"]
    return ["--cluster", "hgx-h200-4", "--framework", "pytorch-eager", "--eager-bandwidth-factor", repr(factor),
            "--host-cost", "validation/profiles/h200-torch/host_dispatch.json", "--format", "json"]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("bin")
    p.add_argument("out")
    p.add_argument("--sizes", nargs="+", type=int, required=True)
    p.add_argument("--families", default="", help="comma list, as train_step.py --families")
    p.add_argument("--models", nargs="+", default=["validation/models/llama-1b.json", "validation/models/llama-3b.json"])
    p.add_argument("--calibration", default="h200x4")
    p.add_argument("--what", default="")
    a = p.parse_args()
    models = [(plans.load_model_json(m), m) for m in a.models]
    fams = [f for f in a.families.split(",") if f]
    rows = []
    FLAGS = flags()
    for n in a.sizes:
        for c in plans.build_configs(n, models, fams):
            cmd = [a.bin, "simulate", "--model", c.model_file, "--plan", c.plan_string(), "--calibration",
                   a.calibration, *FLAGS]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"predict_configs: {' '.join(cmd)} failed (exit {r.returncode}):\n{r.stderr}")
            d = json.loads(r.stdout)
            for kind in c.kinds:
                rows.append({"family": c.family, "gpus": n, "plan": c.plan_string(), "file": c.filename(kind),
                             "predicted_step_s": d["step_time_s"], "memory_peak_GiB": d["memory_peak_GiB"],
                             "fits_memory": d["fits_memory"]})
            print(f"{c.filename(c.kinds[0]):75s} {d['step_time_s']:.4f} s  {d['memory_peak_GiB']:.1f} GiB", file=sys.stderr)
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    doc = {"what": a.what or f"Predictions made and committed BEFORE the runs were measured ({when})",
           "command": "scalescope simulate --model MODEL --plan PLAN --calibration " + a.calibration + " " +
                      " ".join(FLAGS),
           "rows": rows}
    train_step.write_json(os.path.abspath(a.out), doc)  # atomic


if __name__ == "__main__":
    main()
