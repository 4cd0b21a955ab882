#!/usr/bin/env python3
"""Session 34's blind check of the power-cap model (docs/power.md): each program at shapes it was never timed at,
predicted with the shipped one-GPU H200 profile (`--framework pytorch-eager`, the built-in stack priced from the
profile) without and with the power section of calibrate/profiles/h200-power.json (fitted on this session's kernel
sweep, validation/session34/power34/, which holds no training step), BEFORE the steps run (call 2,
validation/device/session34_blind.sh). Measured: the step time, and the SM clock, power and power-cap share of the
timed steps (run_steps.py --smi).

  python3 validation/session34/predict_power.py BIN -o validation/session34/predictions.json
  python3 validation/session34/predict_power.py BIN --report validation/session34/blind/ [-o table.md]
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
# program -> (model file, precision as the program trains, shapes never timed before this check)
CASES = {
    "gpt-ln": ("validation/programs/gpt-ln-0.5b.json", "bf16", ["4x4096", "16x2048"]),
    "gpt-ln-h4096": ("validation/programs/gpt-ln-h4096.json", "bf16", ["4x2048", "8x2048"]),
    "hf-llama": ("validation/programs/hf-llama-0.9b/config.json", "mixed", ["8x2048", "2x4096"]),
}
PROGRAM_OF = {"gpt-ln-h4096": "gpt-ln"}  # run_steps.py's program for a model file


def simulate(bin_, model, precision, shape, calibration):
    mbs, seq = (int(x) for x in shape.split("x"))
    plan = f"tp=1,pp=1,dp=1,mbs={mbs},gbs={mbs},seq={seq},precision={precision}"
    out = subprocess.run([bin_, "simulate", "--model", model, "--cluster", "hgx-h200-8", "--gpus", "1", "--plan", plan,
                          "--framework", "pytorch-eager", "--calibration", calibration, "--format", "json"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    d = json.loads(out)
    return {"step_time_s": d["step_time_s"], "power_cap": d.get("power_cap")}


def predict(a):
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    doc = {"schema": "scalescope.power-blind/1", "commit": commit,
           "predicted_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "cases": {}}
    for prog, (model, precision, shapes) in CASES.items():
        for shape in shapes:
            doc["cases"][f"{prog} {shape}"] = {
                "program": PROGRAM_OF.get(prog, prog), "model": model, "shape": shape,
                "burst": simulate(a.bin, model, precision, shape, "h200-gpu"),
                "power": simulate(a.bin, model, precision, shape, "h200-gpu,calibrate/profiles/h200-power.json")}
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)


def report(a):
    pred = json.load(open(a.predictions))
    lines = [f"Predictions by commit {pred['commit']} ({pred['predicted_utc']}); measured in {a.report}.", "",
             "| case | measured s | SM MHz | W | cap share | burst-rate prediction | error | power model | error | "
             "modelled tensor rate | modelled draw at burst rates W |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    errs = {"burst": [], "power": []}
    for key, c in pred["cases"].items():
        prog = key.split()[0]
        path = os.path.join(a.report, f"measured-{prog}.json")
        if not os.path.exists(path):
            continue
        rows = {f"{r['micro_batch']}x{r['seq']}": r for r in json.load(open(path))["rows"]}
        m = rows.get(c["shape"])
        if not m or "step_time_s" not in m:
            continue
        t = m["step_time_s"]
        clock = m.get("clock") or {}
        e = {k: c[k]["step_time_s"] / t - 1 for k in ("burst", "power")}
        for k in e:
            errs[k].append(abs(e[k]))
        pc = c["power"]["power_cap"] or {}
        lines.append(f"| {key} | {t:.4f} | {clock.get('sm_MHz_median', '-')} | {clock.get('power_W_median', '-')} | "
                     f"{clock.get('power_cap_share', '-')} | {c['burst']['step_time_s']:.4f} | {100 * e['burst']:+.1f}% | "
                     f"{c['power']['step_time_s']:.4f} | {100 * e['power']:+.1f}% | {pc.get('tensor_rate', '-')} | "
                     f"{pc.get('uncapped_draw_W', '-')} |")
    for k, v in errs.items():
        if v:
            lines.append(f"\n{k}: median |error| {100 * statistics.median(v):.1f}%, max {100 * max(v):.1f}% (n={len(v)})")
    blind_cli.emit("\n".join(lines) + "\n", a.out)


if __name__ == "__main__":
    sys.exit(blind_cli.main(__doc__, os.path.join(ROOT, "validation/session34/predictions.json"), predict, report,
                            "PROGRAM"))
