#!/usr/bin/env python3
"""Session 36's blind check of the power-cap model on FP8 training steps (docs/power.md): the `gemm_fp8` class of
calibrate/profiles/h200-power.json was fitted on three FP8 GEMMs run alone (session 34's extended sweep) and checked
only on power_mix.py mixes, never on a training step. Program gpt-ln-fp8 (validation/programs/fp8_linear.py:
torch._scaled_mm with tensorwise dynamic scaling, e4m3 forward, e5m2 gradients) on three gpt-ln models at shapes
never timed in FP8, built-in pytorch-eager stack, shipped h200-gpu profile; plus one bf16 shape that session 35
measured on another lease, repeated as this lease's reference (not blind, reported apart). Written BEFORE the steps
run (validation/device/session36_fp8.sh). Each case is predicted the five ways of session 35 (its WAYS: primary v2
with cuDNN attention; burst rates with flash, the default, and with cuDNN; session 34's fit; v2 with flash).

  python3 validation/session36/predict_power.py BIN -o validation/session36/predictions.json
  python3 validation/session36/predict_power.py BIN --report validation/session36/fp8/ [-o report.md]
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

FP8 = "precision=fp8,fp8_recipe=tensorwise,grad_reduce_in_fp32=0"  # as validation/blind24 prices gpt-ln-fp8
# case name -> (run_steps.py program, model file, plan precision keys, shapes); the name is measured-NAME.json's
CASES = {
    "fp8-0.5b": ("gpt-ln-fp8", "validation/programs/gpt-ln-0.5b.json", FP8, ["8x2048", "4x4096"]),
    "fp8-h4096": ("gpt-ln-fp8", "validation/programs/gpt-ln-h4096.json", FP8, ["4x2048", "2x4096"]),
    "fp8-h3072": ("gpt-ln-fp8", "validation/programs/gpt-ln-h3072.json", FP8, ["8x1024", "2x8192"]),
    "bf16-h4096-repeat": ("gpt-ln", "validation/programs/gpt-ln-h4096.json", "precision=bf16", ["2x4096"]),
}


def predict(a):
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    doc = s35.prediction_doc(commit, "v2_cudnn", s35.WAYS)
    for name, (program, model, precision, shapes) in CASES.items():
        for shape in shapes:
            doc["cases"][f"{name} {shape}"] = s35.predict_case(
                a.bin, {"program": program, "model": model, "shape": shape, "plan_precision": precision}, model,
                shape, s35.WAYS, precision)
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    sys.exit(blind_cli.main(__doc__, os.path.join(ROOT, "validation/session36/predictions.json"), predict,
                            s35.report, "CASE"))
