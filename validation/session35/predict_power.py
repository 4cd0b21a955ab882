#!/usr/bin/env python3
"""Session 35's blind check of the power-cap model's second fit (docs/power.md): the memory class fitted on every
memory-bound kernel of session 34's extended sweep that moves at least twice the L2 (v2, calibrate/profiles/
h200-power.json), and the programs' attention priced as the cuDNN kernel PyTorch's SDPA runs on an H200
(`--attention cudnn`). Four gpt-ln programs at shapes never timed (one model, gpt-ln-h3072, never run), built-in
pytorch-eager stack, shipped h200-gpu profile; written BEFORE the steps run (validation/device/session35_blind.sh).
Each case is predicted five ways: the primary (v2, cudnn), and for comparison burst rates with flash (the default
before this session), burst rates with cudnn, session 34's fit (v1, validation/session35/h200-power-v1.json) with
cudnn, and v2 with flash.

  python3 validation/session35/predict_power.py BIN -o validation/session35/predictions.json
  python3 validation/session35/predict_power.py BIN --report validation/session35/blind/ [-o report.md]
"""
import datetime
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "validation"))
import blind_cli  # noqa: E402
# case name -> (model file, shapes never timed before this check); every one is run_steps.py's program gpt-ln
CASES = {
    "gpt-ln-h3072": ("validation/programs/gpt-ln-h3072.json", ["4x2048", "2x8192", "8x1024"]),
    "gpt-ln-h4096": ("validation/programs/gpt-ln-h4096.json", ["2x4096", "16x1024"]),
    "gpt-ln": ("validation/programs/gpt-ln-0.5b.json", ["6x4096", "24x1024"]),
    "gpt-ln-h20": ("validation/programs/gpt-ln-0.5b-h20.json", ["8x2048", "4x4096"]),
}
V1 = "validation/session35/h200-power-v1.json"
V2 = "calibrate/profiles/h200-power.json"
WAYS = {  # name -> (calibration, --attention)
    "v2_cudnn": (f"h200-gpu,{V2}", "cudnn"),
    "burst_flash": ("h200-gpu", "flash"),
    "burst_cudnn": ("h200-gpu", "cudnn"),
    "v1_cudnn": (f"h200-gpu,{V1}", "cudnn"),
    "v2_flash": (f"h200-gpu,{V2}", "flash"),
}


def simulate(bin_, model, shape, calibration, attention, precision="precision=bf16", cluster="hgx-h200-8"):
    mbs, seq = (int(x) for x in shape.split("x"))
    plan = f"tp=1,pp=1,dp=1,mbs={mbs},gbs={mbs},seq={seq},{precision}"
    out = subprocess.run([bin_, "simulate", "--model", model, "--cluster", cluster, "--gpus", "1", "--plan", plan,
                          "--framework", "pytorch-eager", "--attention", attention, "--calibration", calibration,
                          "--format", "json"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    d = json.loads(out)
    return {"step_time_s": d["step_time_s"], "memory_peak_GiB": d.get("memory_peak_GiB"),
            "power_cap": d.get("power_cap")}


def prediction_doc(commit, primary, ways, **extra):
    """The head of a predictions file (scalescope.power-blind/1): who predicted, when, and each way's inputs."""
    return dict({"schema": "scalescope.power-blind/1", "commit": commit, "primary": primary},
                **extra, predicted_utc=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                ways={k: {"calibration": c, "attention": att} for k, (c, att) in ways.items()}, cases={})


def predict_case(bin_, case, model, shape, ways, precision="precision=bf16", cluster="hgx-h200-8"):
    """One case's entry: `case` (program, model, shape, ...) and its prediction by every way."""
    return dict(case, **{k: simulate(bin_, model, shape, c, att, precision, cluster) for k, (c, att) in ways.items()})


def predict(a):
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    doc = prediction_doc(commit, "v2_cudnn", WAYS)
    for name, (model, shapes) in CASES.items():
        for shape in shapes:
            doc["cases"][f"{name} {shape}"] = predict_case(
                a.bin, {"program": "gpt-ln", "model": model, "shape": shape}, model, shape, WAYS)
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)


def rate_label(pred):
    """The last column's header: the primary way's modelled tensor-core rate ("v2 rate" in sessions 35-36)."""
    return "v2 rate" if pred["primary"] == "v2_cudnn" else f"{pred['primary']} rate"


def report(a):
    pred = json.load(open(a.predictions))
    ways = list(pred["ways"])
    lines = [f"Predictions by commit {pred['commit']} ({pred['predicted_utc']}); measured in {a.report}. "
             f"Error = predicted / measured step time - 1; primary: {pred['primary']}.", "",
             "| case | measured s | SM MHz | W | cap share | " + " | ".join(ways) + f" | {rate_label(pred)} |",
             "|---|---|---|---|---|" + "---|" * len(ways) + "---|"]
    errs = {k: [] for k in ways}
    for key, c in pred["cases"].items():
        path = os.path.join(a.report, f"measured-{key.split()[0]}.json")
        if not os.path.exists(path):
            continue
        rows = {f"{r['micro_batch']}x{r['seq']}": r for r in json.load(open(path))["rows"]}
        m = rows.get(c["shape"])
        if not m or "step_time_s" not in m:
            lines.append(f"| {key} | not measured ({(m or {}).get('error', 'missing')}) |")
            continue
        t = m["step_time_s"]
        clock = m.get("clock") or {}
        cells = []
        for k in ways:
            e = c[k]["step_time_s"] / t - 1
            errs[k].append(abs(e))
            cells.append(f"{c[k]['step_time_s']:.4f} ({100 * e:+.1f}%)")
        pc = c[pred["primary"]]["power_cap"] or {}
        def num(field, digits):
            v = clock.get(field)
            return "-" if v is None else f"{v:.{digits}f}"
        lines.append(f"| {key} | {t:.4f} | {num('sm_MHz_median', 0)} | {num('power_W_median', 1)} | "
                     f"{num('power_cap_share', 2)} | " + " | ".join(cells) + f" | {pc.get('tensor_rate', '-')} |")
    lines.append("")
    for k, v in errs.items():
        if v:
            v = sorted(v)
            lines.append(f"- {k}: median |error| {100 * statistics.median(v):.1f}%, "
                         f"p90 {100 * v[min(len(v) - 1, int(0.9 * len(v)))]:.1f}%, max {100 * max(v):.1f}% (n={len(v)})")
    blind_cli.emit("\n".join(lines) + "\n", a.out)


if __name__ == "__main__":
    sys.exit(blind_cli.main(__doc__, os.path.join(ROOT, "validation/session35/predictions.json"), predict, report,
                            "CASE"))
