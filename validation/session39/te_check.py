#!/usr/bin/env python3
"""Session 39's blind check of the built-in `fused` stack on the program NVIDIA's published rows ran: Megatron-Core
0.16.1 with Transformer Engine 2.20.2 (validation/megatron/mcore_te_step.py), on one GPU, at the layers of the NeMo
dense rows (Llama 2 7B, Llama 3 8B, GPT-3 5B, Nemotron 8B), 4 layers deep, bf16 and FP8 (delayed scaling as NeMo
1.0's rows, tensorwise current scaling as Megatron-Bridge's). Predictions are committed before the lease runs.

  cases    print one line per case: NAME and mcore_te_step.py's arguments (validation/device/session39_te.sh reads them)
  predict  python3 validation/session39/te_check.py predict --out validation/session39/predictions.json
           every case on H100 (dgx-h100-8) and H200 (hgx-h200-8) with the shipped profile of that GPU:
             default    the fused stack as `validate nemo` runs it (attention priced at the profile's flash rows)
             cudnn      --attention cudnn (the kernel Transformer Engine runs on Hopper without flash-attn)
             host       default + --host-cost validation/nemo/megatron-core-host/dense.json (Megatron-Core's local
                        spec host time per layer, measured on an H200 lease in session 28): the wall time if TE's
                        host time were the local spec's
           Forward + backward seconds (the step less the optimizer, which the program does not run).
  report   python3 validation/session39/te_check.py report --predictions P --measured DIR [--out DIR/report.md]
           GPU busy time against the compute predictions, wall time against the host prediction.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# name: (mcore_te_step.py arguments, scalescope model file, layers-4 vocab override, plan additions)
CASES = {
    "llama2-7b-fp8-delayed": ("--model llama2-7b --precision fp8 --recipe delayed --shape 1x4096 --host-layers 2,6",
                              "models/catalog/llama2-7b.json", None, "precision=fp8,fp8_recipe=delayed"),
    "llama2-7b-bf16": ("--model llama2-7b --precision bf16 --shape 1x4096 --host-layers 2,6",
                       "models/catalog/llama2-7b.json", None, "precision=mixed"),
    "llama2-7b-fp8-tensorwise-cef": ("--model llama2-7b --precision fp8 --recipe tensorwise --ce-fusion --shape 1x4096 "
                                     "--host-layers 2,6", "models/catalog/llama2-7b.json", None,
                                     "precision=fp8,fp8_recipe=tensorwise"),
    "gpt3-5b-fp8-delayed": ("--model gpt3-5b --precision fp8 --recipe delayed --shape 4x2048",
                            "validation/nemo/models/nemo-gpt3-5b.json", 50304, "precision=fp8,fp8_recipe=delayed"),
    "nemotron-8b-fp8-delayed": ("--model nemotron-8b --precision fp8 --recipe delayed --shape 1x4096",
                                "validation/nemo/models/nemo-nemotron-8b.json", None,
                                "precision=fp8,fp8_recipe=delayed"),
    "llama3-8b-fp8-tensorwise-cef": ("--model llama3-8b --precision fp8 --recipe tensorwise --ce-fusion --shape 1x8192",
                                     "models/catalog/llama3-8b.json", None, "precision=fp8,fp8_recipe=tensorwise"),
    "llama3-8b-fp8-delayed": ("--model llama3-8b --precision fp8 --recipe delayed --shape 1x8192",
                              "models/catalog/llama3-8b.json", None, "precision=fp8,fp8_recipe=delayed"),
}
LAYERS = 4
GPUS = {"NVIDIA H100 80GB HBM3": "dgx-h100-8", "NVIDIA H200": "hgx-h200-8"}
HOST_COST = "validation/nemo/megatron-core-host/dense.json"
VARIANTS = {"default": [], "cudnn": ["--attention", "cudnn"], "host": ["--host-cost", HOST_COST]}


def commit():
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()


def shape_of(args):
    b, s = args.split("--shape ")[1].split()[0].split("x")
    return int(b), int(s)


def model_file(name, tmp):
    _, path, vocab, _ = CASES[name]
    with open(os.path.join(ROOT, path)) as f:
        m = json.load(f)
    m["layers"] = LAYERS
    m["seq_len"] = shape_of(CASES[name][0])[1]
    if vocab:
        m["vocab"] = vocab
    m["name"] = f"{m['name']}-l{LAYERS}"
    out = os.path.join(tmp, name + ".json")
    with open(out, "w") as f:
        json.dump(m, f)
    return out


def simulate(binary, model, cluster, plan, extra):
    cmd = [binary, "simulate", "--model", model, "--cluster", cluster, "--gpus", "1", "--plan", plan,
           "--format", "json"] + extra
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"te_check.py: {' '.join(cmd)} failed: {r.stderr.strip()}")
    d = json.loads(r.stdout)
    b = d["breakdown"]
    return {"forward_s": b["forward_s"], "backward_s": b["backward_s"], "compute_s": b["compute_s"],
            "host_wait_s": b.get("host_wait_s", 0.0), "fwd_bwd_s": d["step_time_s"] - b["optimizer_s"],
            "memory_peak_GiB": d["memory_peak_GiB"]}


def cmd_cases(_):
    for name, (args, *_rest) in CASES.items():
        print(name, args, f"--layers {LAYERS}")


def cmd_predict(a):
    doc = {"schema": "scalescope.te-check/1", "commit": commit(), "layers": LAYERS,
           "predicted_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "variants": {k: " ".join(v) for k, v in VARIANTS.items()}, "cases": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (args, _, _, plan_extra) in CASES.items():
            b, _ = shape_of(args)
            model = model_file(name, tmp)
            plan = f"tp=1,pp=1,dp=1,mbs={b},gbs={b},recompute=none,{plan_extra}"
            e = {"args": args, "plan": plan, "model": CASES[name][1]}
            for gpu, cluster in GPUS.items():
                e[gpu] = {v: simulate(a.bin, model, cluster, plan, extra) for v, extra in VARIANTS.items()}
            doc["cases"][name] = e
            h = e["NVIDIA H100 80GB HBM3"]
            print(f"{name:32s} H100 fwd+bwd {h['default']['fwd_bwd_s']*1e3:7.2f} ms (cudnn "
                  f"{h['cudnn']['fwd_bwd_s']*1e3:7.2f}, with host {h['host']['fwd_bwd_s']*1e3:7.2f})", flush=True)
    with open(a.out + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(a.out + ".tmp", a.out)


def err(pred, meas):
    return pred / meas - 1.0


def cmd_report(a):
    pred = json.load(open(a.predictions))
    rows, errs = [], {"default": [], "cudnn": [], "host": []}
    for name, e in pred["cases"].items():
        path = os.path.join(a.measured, name + ".json")
        if not os.path.exists(path):
            rows.append(f"| {name} | not measured | | | | | | | |")
            continue
        m = json.load(open(path))
        p = e[m["gpu"]]
        busy, wall = m["step"]["gpu_busy_s"], m["step"]["step_s"]
        ed, ec, eh = err(p["default"]["compute_s"], busy), err(p["cudnn"]["compute_s"], busy), err(
            p["host"]["fwd_bwd_s"], wall)
        errs["default"].append(ed)
        errs["cudnn"].append(ec)
        errs["host"].append(eh)
        host = m.get("host_per_layer_s", {}).get("step_s")
        rows.append(f"| {name} | {m['gpu'].replace('NVIDIA ', '')} | {wall*1e3:.2f} | {busy*1e3:.2f} | "
                    f"{p['default']['compute_s']*1e3:.2f} ({ed:+.1%}) | {p['cudnn']['compute_s']*1e3:.2f} ({ec:+.1%}) | "
                    f"{p['host']['fwd_bwd_s']*1e3:.2f} ({eh:+.1%}) | {'' if host is None else f'{host*1e3:.2f}'} |")
    out = [f"# Session 39: the fused stack against Megatron-Core + Transformer Engine on one GPU",
           "", f"Predictions: commit {pred['commit']} ({pred['predicted_utc']}), {pred['layers']} layers per case.",
           "GPU busy = the union of kernel, copy and memset intervals of one profiled step (forward + backward); "
           "the fused stack's compute is compared with it, its wall time with Megatron-Core's local-spec host time "
           "(`host`) with the measured step.", "",
           "| case | GPU | measured step ms | GPU busy ms | fused (flash rows) | fused, cuDNN attention | "
           "with local-spec host time, wall | TE host ms per layer |", "|---|---|---:|---:|---:|---:|---:|---:|"] + rows
    out.append("")
    for k, v in errs.items():
        if v:
            out.append(f"- {k}: median |error| {statistics.median(abs(x) for x in v):.1%}, worst "
                       f"{max(v, key=abs):+.1%} (n = {len(v)})")
    text = "\n".join(out) + "\n"
    print(text)
    if a.out:
        with open(a.out + ".tmp", "w") as f:
            f.write(text)
        os.replace(a.out + ".tmp", a.out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("cases")
    p = sub.add_parser("predict")
    p.add_argument("--out", required=True)
    p.add_argument("--bin", default="build-core/cli/scalescope")
    r = sub.add_parser("report")
    r.add_argument("--predictions", required=True)
    r.add_argument("--measured", required=True)
    r.add_argument("--out", default="")
    a = ap.parse_args()
    {"cases": cmd_cases, "predict": cmd_predict, "report": cmd_report}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
