#!/usr/bin/env python3
"""Session 39's blind check of the built-in `fused` stack on the program NVIDIA's published rows ran: Megatron-Core
0.16.1 with Transformer Engine 2.20.2 (validation/megatron/mcore_te_step.py), on one GPU, at the layers of the NeMo
dense rows (Llama 2 7B, Llama 3 8B, GPT-3 5B, Nemotron 8B), 4 layers deep, bf16 and FP8 (delayed scaling as NeMo
1.0's rows, tensorwise current scaling as Megatron-Bridge's). Predictions are committed before the lease runs.

Sets, each predicted before it was measured (--set, default 1):
  1  seven cases (predictions.json, by d2fad1d's binary; measured in validation/session39/h100)
  2  seven new cases: two models never run (Llama 2 13B, Llama 3 70B's layer), new shapes, the three cross-entropy
     implementations, bf16 with dropout (predictions2.json, by the code that models cross_entropy_fusion;
     measured in validation/session39/h100-set2)
  3  five MoE cases (session 40, issue 21): the Megatron-Bridge Qwen3 and GPT OSS rows' MoE layers with 16 local
     experts, TE's grouped GEMM, fused permutation and router (validation/session40/predictions3.json)
  4  seven MoE cases (session 41, issue 21): 8 and 32 local experts, Qwen3-235B's layer with 8, Mixtral 8x7B's
     layer in bf16 and FP8, set 3's first case again (validation/session41/predictions4.json)

  cases    print one line per case: NAME and mcore_te_step.py's arguments (validation/device/session39_te.sh reads them)
  predict  python3 validation/session39/te_check.py predict --out validation/session39/predictions.json
           every case on H100 (dgx-h100-8) and H200 (hgx-h200-8) with the shipped profile of that GPU:
             default    the fused stack as `validate nemo` runs it (attention priced at the profile's flash rows)
             cudnn      --attention cudnn (the kernel Transformer Engine runs on Hopper without flash-attn)
             host       default + --host-cost validation/nemo/megatron-core-host/dense.json (Megatron-Core's local
                        spec host time per layer, measured on an H200 lease in session 28): the wall time if TE's
                        host time were the local spec's
           Forward + backward seconds (the step less the optimizer, which the program does not run).
  shapes   python3 validation/session39/te_check.py shapes -o validation/session39/gemm-shapes.json: the GEMM shapes of
           every case of both sets (scalescope calibrate shapes at each case's tokens), for scalescope-calibrate on
           the lease of set 2, before its program steps
  lease    python3 validation/session39/te_check.py lease --predictions P --profile LEASE.json -o P2: P with the
           variant `cudnn-lease` added: the same code, its GEMMs priced from that lease's own calibration (the rest
           from the shipped profile); computed after the lease ran, by code committed before it
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
# Set 2 (after set 1 was measured; the plan now names the cross entropy the program runs). Llama 3 70B's layer: 2 of
# them (with its 128,256-token embedding and head, about 3.9B parameters).
CASES2 = {
    "llama2-13b-fp8-delayed": ("--model llama2-13b --precision fp8 --recipe delayed --shape 1x4096",
                               "models/catalog/llama2-13b.json", None,
                               "precision=fp8,fp8_recipe=delayed,cross_entropy_fusion=none"),
    "llama3-70b-l2-fp8-tensorwise-te": ("--model llama3-70b --precision fp8 --recipe tensorwise --ce-fusion te "
                                        "--shape 1x4096 --layers 2", "models/catalog/llama3-70b.json", None,
                                        "precision=fp8,fp8_recipe=tensorwise,cross_entropy_fusion=te"),
    "llama3-8b-fp8-tensorwise-native-2x4096": ("--model llama3-8b --precision fp8 --recipe tensorwise --ce-fusion "
                                               "native --shape 2x4096", "models/catalog/llama3-8b.json", None,
                                               "precision=fp8,fp8_recipe=tensorwise,cross_entropy_fusion=native"),
    "llama2-7b-fp8-delayed-2x4096": ("--model llama2-7b --precision fp8 --recipe delayed --shape 2x4096",
                                     "models/catalog/llama2-7b.json", None,
                                     "precision=fp8,fp8_recipe=delayed,cross_entropy_fusion=none"),
    "nemotron-8b-fp8-tensorwise-te": ("--model nemotron-8b --precision fp8 --recipe tensorwise --ce-fusion te "
                                      "--shape 1x4096", "validation/nemo/models/nemo-nemotron-8b.json", None,
                                      "precision=fp8,fp8_recipe=tensorwise,cross_entropy_fusion=te"),
    "gpt3-5b-bf16-2x2048": ("--model gpt3-5b --precision bf16 --shape 2x2048", "validation/nemo/models/nemo-gpt3-5b.json",
                            50304, "precision=mixed,cross_entropy_fusion=none"),
    "llama2-7b-bf16-1x8192": ("--model llama2-7b --precision bf16 --shape 1x8192", "models/catalog/llama2-7b.json",
                              None, "precision=mixed,cross_entropy_fusion=none"),
}
# Set 3 (session 40, issue 21): the MoE layers of the Megatron-Bridge Qwen3 rows with TE's grouped GEMM, fused
# permutation and router (mcore_te_step.py's qwen3-* models: 16 local experts, EP 1 on one GPU, balanced routing),
# Transformer Engine's cross entropy as the recipes set it. The third field overrides the catalog model's keys.
MOE_PLAN = "cross_entropy_fusion=te,moe_dispatcher=alltoall"
CASES3 = {
    "qwen3-30b-e16-fp8-tensorwise-1x4096": ("--model qwen3-30b-a3b-e16 --precision fp8 --recipe tensorwise --ce-fusion te "
                                            "--shape 1x4096 --host-layers 2,6", "models/catalog/qwen3-30b-a3b.json",
                                            {"experts": 16}, f"precision=fp8,fp8_recipe=tensorwise,{MOE_PLAN}"),
    "qwen3-30b-e16-fp8-tensorwise-2x4096": ("--model qwen3-30b-a3b-e16 --precision fp8 --recipe tensorwise --ce-fusion te "
                                            "--shape 2x4096", "models/catalog/qwen3-30b-a3b.json", {"experts": 16},
                                            f"precision=fp8,fp8_recipe=tensorwise,{MOE_PLAN}"),
    "qwen3-30b-e16-bf16-1x4096": ("--model qwen3-30b-a3b-e16 --precision bf16 --ce-fusion te --shape 1x4096 "
                                  "--host-layers 2,6", "models/catalog/qwen3-30b-a3b.json", {"experts": 16},
                                  f"precision=mixed,{MOE_PLAN}"),
    "qwen3-235b-e16-fp8-tensorwise-1x4096": ("--model qwen3-235b-a22b-e16 --precision fp8 --recipe tensorwise "
                                             "--ce-fusion te --shape 1x4096 --host-layers 2,6",
                                             "models/catalog/qwen3-235b-a22b.json", {"experts": 16},
                                             f"precision=fp8,fp8_recipe=tensorwise,{MOE_PLAN}"),
    "gpt-oss-e16-bf16-1x4096": ("--model gpt-oss-120b-e16 --precision bf16 --ce-fusion te --shape 1x4096 "
                                "--host-layers 2,6", "models/catalog/gpt-oss-120b.json", {"experts": 16},
                                f"precision=mixed,{MOE_PLAN}"),
}
# Set 4 (session 41, issue 21): other local-expert counts (the host time's growth with them, FP8's per-expert casts
# priced since session 40 at counts they were not seen at) and Mixtral 8x7B's layer, never run here. The first case
# repeats set 3's on this lease (a control: its host time on this lease's CPU).
CASES4 = {
    "qwen3-30b-e16-fp8-tensorwise-1x4096": CASES3["qwen3-30b-e16-fp8-tensorwise-1x4096"],
    "qwen3-30b-e8-fp8-tensorwise-1x4096": ("--model qwen3-30b-a3b-e8 --precision fp8 --recipe tensorwise --ce-fusion te "
                                           "--shape 1x4096 --host-layers 2,6", "models/catalog/qwen3-30b-a3b.json",
                                           {"experts": 8}, f"precision=fp8,fp8_recipe=tensorwise,{MOE_PLAN}"),
    "qwen3-30b-e32-fp8-tensorwise-1x4096": ("--model qwen3-30b-a3b-e32 --precision fp8 --recipe tensorwise --ce-fusion te "
                                            "--shape 1x4096 --host-layers 2,6", "models/catalog/qwen3-30b-a3b.json",
                                            {"experts": 32}, f"precision=fp8,fp8_recipe=tensorwise,{MOE_PLAN}"),
    "qwen3-30b-e8-bf16-1x4096": ("--model qwen3-30b-a3b-e8 --precision bf16 --ce-fusion te --shape 1x4096 "
                                 "--host-layers 2,6", "models/catalog/qwen3-30b-a3b.json", {"experts": 8},
                                 f"precision=mixed,{MOE_PLAN}"),
    "qwen3-235b-e8-fp8-tensorwise-1x4096": ("--model qwen3-235b-a22b-e8 --precision fp8 --recipe tensorwise "
                                            "--ce-fusion te --shape 1x4096 --host-layers 2,6",
                                            "models/catalog/qwen3-235b-a22b.json", {"experts": 8},
                                            f"precision=fp8,fp8_recipe=tensorwise,{MOE_PLAN}"),
    "mixtral-8x7b-bf16-1x4096": ("--model mixtral-8x7b --precision bf16 --ce-fusion te --shape 1x4096 "
                                 "--host-layers 2,6", "models/catalog/mixtral-8x7b.json", None,
                                 f"precision=mixed,{MOE_PLAN}"),
    "mixtral-8x7b-fp8-tensorwise-1x4096": ("--model mixtral-8x7b --precision fp8 --recipe tensorwise --ce-fusion te "
                                           "--shape 1x4096", "models/catalog/mixtral-8x7b.json", None,
                                           f"precision=fp8,fp8_recipe=tensorwise,{MOE_PLAN}"),
}
SETS = {1: CASES, 2: CASES2, 3: CASES3, 4: CASES4}
LAYERS = 4
GPUS = {"NVIDIA H100 80GB HBM3": "dgx-h100-8", "NVIDIA H200": "hgx-h200-8"}
HOST_COST = "validation/nemo/megatron-core-host/dense.json"
VARIANTS = {"default": [], "cudnn": ["--attention", "cudnn"], "host": ["--host-cost", HOST_COST]}
# Set 2: cuDNN attention (the kernel TE ran in set 1) is the primary prediction; `default` (the profile's flash
# rows) and `old` (session 38's binary and stack, which know no cross_entropy_fusion) are the controls.
VARIANTS2 = {"cudnn": ["--attention", "cudnn"], "default": [], "old": []}
# Set 3: cuDNN attention primary; `host` adds Megatron-Core's local-spec MoE host time per layer (session 28, an H200
# lease's CPU), against the measured wall time.
MOE_HOST_COST = "validation/nemo/megatron-core-host/moe.json"
VARIANTS3 = {"cudnn": ["--attention", "cudnn"], "default": [],
             "host": ["--attention", "cudnn", "--host-cost", MOE_HOST_COST]}


def commit():
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()


def shape_of(args):
    b, s = args.split("--shape ")[1].split()[0].split("x")
    return int(b), int(s)


def layers_of(args):
    return int(args.split("--layers ")[1].split()[0]) if "--layers " in args else LAYERS


def model_file(name, tmp, cases=CASES):
    args, path, override, _ = cases[name]
    with open(os.path.join(ROOT, path)) as f:
        m = json.load(f)
    m["layers"] = layers_of(args)
    m["seq_len"] = shape_of(args)[1]
    if isinstance(override, int):  # sets 1 and 2: the vocabulary
        override = {"vocab": override}
    m.update(override or {})
    m["name"] = f"{m['name']}-l{m['layers']}"
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


def cmd_shapes(a):
    """The union of `scalescope calibrate shapes` over every case's model and tokens (both sets)."""
    doc = None
    seen = set()
    with tempfile.TemporaryDirectory() as tmp:
        for cases in (CASES4, CASES3, CASES2, CASES):  # the newest set first: a calibration cut short by its budget keeps them
            for name, (args, *_r) in cases.items():
                b, s = shape_of(args)
                cmd = [a.bin, "calibrate", "shapes", "--model", model_file(name, tmp, cases), "--mbs", str(b), "--seq",
                       str(s), "--dtypes", "bf16", "fp8_e4m3", "fp8_e4m3_fast"]
                r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
                if r.returncode != 0:
                    sys.exit(f"te_check.py: {' '.join(cmd)} failed: {r.stderr.strip()}")
                d = json.loads(r.stdout)
                if doc is None:
                    doc = {**d, "gemm": [], "attention": [], "models": []}
                doc["models"] += [m for m in d["models"] if m not in doc["models"]]
                for g in d["gemm"]:
                    key = (g["m"], g["n"], g["k"], g["transa"], g["transb"])
                    if key not in seen:
                        seen.add(key)
                        doc["gemm"].append(g)
                doc["attention"] += [x for x in d["attention"] if x not in doc["attention"]]
    write_atomic(a.out, json.dumps(doc, indent=1))
    print(f"{a.out}: {len(doc['gemm'])} GEMM shapes x {len(doc['dtypes'])} dtypes, {len(doc['attention'])} attention")


def cmd_lease(a):
    pred = json.load(open(a.predictions))
    shipped = {"NVIDIA H100 80GB HBM3": "h100-gpu", "NVIDIA H200": "h200-gpu"}[a.gpu]
    with tempfile.TemporaryDirectory() as tmp:
        cases = SETS[pred.get("set", 1)]
        for name, e in pred["cases"].items():
            model = model_file(name, tmp, cases)
            e[a.gpu]["cudnn-lease"] = simulate(a.bin, model, GPUS[a.gpu], e["plan"],
                                               ["--attention", "cudnn", "--calibration", f"{a.profile},{shipped}"])
    pred["variants"]["cudnn-lease"] = f"--attention cudnn --calibration {a.profile},{shipped}"
    pred["lease_commit"] = commit()
    write_atomic(a.out, json.dumps(pred, indent=1))


def cmd_cases(a):
    for name, (args, *_rest) in SETS[a.set].items():
        print(name, args if "--layers " in args else f"{args} --layers {LAYERS}")


def cmd_predict(a):
    cases, variants = SETS[a.set], {1: VARIANTS, 2: VARIANTS2, 3: VARIANTS3, 4: VARIANTS3}[a.set]
    if a.set == 2 and not a.control_bin:
        sys.exit("te_check.py: --set 2 needs --control-bin (session 38's binary, the `old` variant)")
    doc = {"schema": "scalescope.te-check/1", "set": a.set, "commit": commit(), "layers": LAYERS,
           "control_bin": a.control_bin,
           "predicted_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "variants": {k: " ".join(v) for k, v in variants.items()}, "cases": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (args, _, _, plan_extra) in cases.items():
            b, _ = shape_of(args)
            model = model_file(name, tmp, cases)
            plan = f"tp=1,pp=1,dp=1,mbs={b},gbs={b},recompute=none,{plan_extra}"
            e = {"args": args, "plan": plan, "model": cases[name][1]}
            for gpu, cluster in GPUS.items():
                e[gpu] = {}
                for v, extra in variants.items():
                    if v == "old":  # an older binary: no cross_entropy_fusion key
                        old_plan = ",".join(k for k in plan.split(",") if not k.startswith("cross_entropy_fusion"))
                        e[gpu][v] = simulate(a.control_bin, model, cluster, old_plan, extra)
                    else:
                        e[gpu][v] = simulate(a.bin, model, cluster, plan, extra)
            doc["cases"][name] = e
            h = e["NVIDIA H100 80GB HBM3"]
            print(f"{name:40s} H100 fwd+bwd " + ", ".join(f"{v} {h[v]['fwd_bwd_s']*1e3:7.2f} ms" for v in variants),
                  flush=True)
    write_atomic(a.out, json.dumps(doc, indent=1))


def err(pred, meas):
    return pred / meas - 1.0


def write_atomic(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def finish(out, errs, a):
    """The summary lines of each variant's errors; prints the report and writes it to --out."""
    for k, v in errs.items():
        if v:
            out.append(f"- {k}: median |error| {statistics.median(abs(x) for x in v):.1%}, worst "
                       f"{max(v, key=abs):+.1%} (n = {len(v)})")
    text = "\n".join(out) + "\n"
    print(text)
    if a.out:
        write_atomic(a.out, text)


def cmd_report(a):
    pred = json.load(open(a.predictions))
    if pred.get("set", 1) == 2:
        return report2(a, pred)
    if pred.get("set", 1) in (3, 4):
        return report3(a, pred)
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
    out = ["# Session 39: the fused stack against Megatron-Core + Transformer Engine on one GPU",
           "", f"Predictions: commit {pred['commit']} ({pred['predicted_utc']}), {pred['layers']} layers per case.",
           "GPU busy = the union of kernel, copy and memset intervals of one profiled step (forward + backward); "
           "the fused stack's compute is compared with it, its wall time with Megatron-Core's local-spec host time "
           "(`host`) with the measured step.", "",
           "| case | GPU | measured step ms | GPU busy ms | fused (flash rows) | fused, cuDNN attention | "
           "with local-spec host time, wall | TE host ms per layer |", "|---|---|---:|---:|---:|---:|---:|---:|"] + rows
    out.append("")
    finish(out, errs, a)


def report2(a, pred):
    """Set 2: GPU busy time against each variant's compute prediction, and the kernels' cross entropy."""
    variants = list(pred["variants"])
    rows, errs = [], {v: [] for v in variants}
    for name, e in pred["cases"].items():
        path = os.path.join(a.measured, name + ".json")
        if not os.path.exists(path):
            rows.append(f"| {name} | not measured |" + " |" * (len(variants) + 2))
            continue
        m = json.load(open(path))
        p = e[m["gpu"]]
        busy, wall = m["step"]["gpu_busy_s"], m["step"]["step_s"]
        cells = []
        for v in variants:
            if v not in p:  # cudnn-lease: priced on the measured GPU only
                cells.append("-")
                continue
            x = err(p[v]["compute_s"], busy)
            errs[v].append(x)
            cells.append(f"{p[v]['compute_s']*1e3:.2f} ({x:+.1%})")
        rows.append(f"| {name} | {m['gpu'].replace('NVIDIA ', '')} | {wall*1e3:.2f} | {busy*1e3:.2f} | " +
                    " | ".join(cells) + " |")
    head = " | ".join({"cudnn": "new code, cuDNN attention (primary)", "default": "new code, flash rows",
                       "old": "session 38's binary, flash rows",
                       "cudnn-lease": "cuDNN attention, GEMMs from the lease's calibration"}.get(v, v) for v in variants)
    out = ["# Session 39, second set: the fused stack with cross_entropy_fusion against Megatron-Core + TE", "",
           f"Predictions: commit {pred['commit']} ({pred['predicted_utc']}); `old`: {pred['control_bin']}.",
           "GPU busy = the union of kernel, copy and memset intervals of one profiled step (forward + backward).", "",
           f"| case | GPU | measured step ms | GPU busy ms | {head} |", "|---|---|---:|---:|" + "---:|" * len(variants)]
    out += rows + [""]
    finish(out, errs, a)


def report3(a, pred):
    """Set 3 (MoE): GPU busy time against the compute predictions, the wall time against the prediction with the
    local-spec host time, and TE's measured host time per MoE layer beside the local spec's."""
    local = json.load(open(os.path.join(ROOT, MOE_HOST_COST)))["per_layer_microbatch_s"]["module"]
    rows, errs = [], {"cudnn": [], "default": [], "host": []}
    # Set 4: host times also as a ratio to the control case's on the same lease (its CPU's speed cancels).
    control = os.path.join(a.measured, "qwen3-30b-e16-fp8-tensorwise-1x4096.json")
    control = (json.load(open(control)).get("host_per_layer_s", {}).get("step_s")
               if pred.get("set") == 4 and os.path.exists(control) else None)
    for name, e in pred["cases"].items():
        path = os.path.join(a.measured, name + ".json")
        if not os.path.exists(path):
            rows.append(f"| {name} | not measured |" + " |" * 9)
            continue
        m = json.load(open(path))
        p = e[m["gpu"]]
        busy, wall = m["step"]["gpu_busy_s"], m["step"]["step_s"]
        cells = []
        for v, meas in (("cudnn", busy), ("default", busy)):
            x = err(p[v]["compute_s"], meas)
            errs[v].append(x)
            cells.append(f"{p[v]['compute_s']*1e3:.2f} ({x:+.1%})")
        x = err(p["host"]["fwd_bwd_s"], wall)
        errs["host"].append(x)
        cells.append(f"{p['host']['fwd_bwd_s']*1e3:.2f} ({x:+.1%})")
        host = m.get("host_per_layer_s", {}).get("step_s")
        syncs = m["step"].get("host_syncs", 2) - 2  # less the step's own two torch.cuda.synchronize
        rows.append(f"| {name} | {m['gpu'].replace('NVIDIA ', '')} | {wall*1e3:.2f} | {busy*1e3:.2f} | "
                    + " | ".join(cells) + f" | {syncs / pred['layers']:.1f} | "
                    + ("" if host is None else f"{host*1e3:.2f}") + " | "
                    + ("" if host is None or not control else f"{host / control:.2f}") + " |")
    out = [f"# Set {pred['set']}: the fused stack's MoE layers against Megatron-Core + Transformer Engine on one GPU", "",
           f"Predictions: commit {pred['commit']} ({pred['predicted_utc']}), {pred['layers']} layers per case.",
           "GPU busy = the union of kernel, copy and memset intervals of one profiled step (forward + backward). "
           f"Megatron-Core's local-spec MoE host time per layer ({MOE_HOST_COST}): {local*1e3:.2f} ms.", "",
           "| case | GPU | measured step ms | GPU busy ms | fused, cuDNN attention (primary) | fused, flash rows | "
           "with local-spec host time, wall | host syncs per layer | TE host ms per MoE layer | host / control |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"] + rows + [""]
    finish(out, errs, a)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cases")
    c.add_argument("--set", type=int, choices=sorted(SETS), default=1)
    p = sub.add_parser("predict")
    p.add_argument("--set", type=int, choices=sorted(SETS), default=1)
    p.add_argument("--control-bin", default="", help="set 2: session 38's binary, for the `old` variant")
    p.add_argument("--out", required=True)
    p.add_argument("--bin", default="build-core/cli/scalescope")
    sh = sub.add_parser("shapes")
    sh.add_argument("-o", "--out", required=True)
    sh.add_argument("--bin", default="build-core/cli/scalescope")
    le = sub.add_parser("lease")
    le.add_argument("--predictions", required=True)
    le.add_argument("--profile", required=True, help="the lease's scalescope-calibrate GEMM profile")
    le.add_argument("--gpu", choices=sorted(GPUS), default="NVIDIA H100 80GB HBM3", help="the lease's GPU")
    le.add_argument("-o", "--out", required=True)
    le.add_argument("--bin", default="build-core/cli/scalescope")
    r = sub.add_parser("report")
    r.add_argument("--predictions", required=True)
    r.add_argument("--measured", required=True)
    r.add_argument("--out", default="")
    a = ap.parse_args()
    {"cases": cmd_cases, "predict": cmd_predict, "report": cmd_report, "shapes": cmd_shapes, "lease": cmd_lease}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
