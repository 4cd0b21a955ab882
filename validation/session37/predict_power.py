#!/usr/bin/env python3
"""Session 37's blind check of the power-cap model on an H100 (docs/power.md): the first H100 lent since the model
exists. The model's form (session 35's second fit) is refitted on the H100's own kernel sweep, on the lease, by
`scalescope calibrate import-power` into build-lease/h100-power-s37.json, and these predictions are written from it
by the committed code BEFORE any training step runs (validation/device/session37_h100.sh). Four gpt-ln programs at
eight shapes never timed on any GPU, built-in pytorch-eager stack, shipped h100-gpu profile (measured on another
H100 lease, 2026-11-25), cluster dgx-h100-8 with one GPU. Each case is predicted five ways:

  h100_cudnn   primary: the lease's H100 fit, attention as cuDNN's kernels (what PyTorch's SDPA runs on H100)
  burst_flash  burst rates, FlashAttention rows (the default)
  burst_cudnn  burst rates, cuDNN rows
  h200_cudnn   the H200's fit (calibrate/profiles/h200-power.json) on the H100: does one GPU's fit carry to another?
  h100_flash   the lease's H100 fit with FlashAttention rows

  python3 validation/session37/predict_power.py BIN -o PREDICTIONS.json
  python3 validation/session37/predict_power.py BIN --report MEASURED_DIR [--predictions P.json] [-o report.md]
"""
import json
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "validation"))
sys.path.insert(0, os.path.join(ROOT, "validation", "session35"))
import blind_cli  # noqa: E402
import predict_power as s35  # noqa: E402

CLUSTER = "dgx-h100-8"
LEASE_FIT = "build-lease/h100-power-s37.json"  # written on the lease from its own sweep before predicting
# case name (measured-NAME.json) -> (model file, shapes never timed on any GPU); every one is program gpt-ln
CASES = {
    "gpt-ln-h3072": ("validation/programs/gpt-ln-h3072.json", ["3x4096", "12x1024"]),
    "gpt-ln-h4096": ("validation/programs/gpt-ln-h4096.json", ["6x2048", "3x4096"]),
    "gpt-ln": ("validation/programs/gpt-ln-0.5b.json", ["12x2048", "3x8192"]),
    "gpt-ln-h20": ("validation/programs/gpt-ln-0.5b-h20.json", ["6x4096", "24x1024"]),
}
WAYS = {  # name -> (calibration, --attention)
    "h100_cudnn": (f"h100-gpu,{LEASE_FIT}", "cudnn"),
    "burst_flash": ("h100-gpu", "flash"),
    "burst_cudnn": ("h100-gpu", "cudnn"),
    "h200_cudnn": ("h100-gpu,calibrate/profiles/h200-power.json", "cudnn"),
    "h100_flash": (f"h100-gpu,{LEASE_FIT}", "flash"),
}


def predict(a):
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    if os.path.exists(os.path.join(ROOT, "devbin", "COMMIT")):  # on the lease: the commit the binary was built from
        commit = open(os.path.join(ROOT, "devbin", "COMMIT")).read().strip()
    doc = s35.prediction_doc(commit, "h100_cudnn", WAYS, cluster=CLUSTER)
    for name, (model, shapes) in CASES.items():
        for shape in shapes:
            doc["cases"][f"{name} {shape}"] = s35.predict_case(
                a.bin, {"program": "gpt-ln", "model": model, "shape": shape}, model, shape, WAYS, cluster=CLUSTER)
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    sys.exit(blind_cli.main(__doc__, os.path.join(ROOT, "validation/session37/predictions.json"), predict,
                            s35.report, "CASE"))
