#!/usr/bin/env python3
"""Predicts every point of a part (points.py) with scalescope BEFORE any of them is measured.

  predict.py --part A --scalescope devbin/scalescope --traces DIR --cluster node.json --calibration CAL \\
             --work DIR -o predictions-A.json
1. imports each trace of the part (run_steps.py trace: DIR/NAME.json.gz, its .meta.json with the unprofiled step
   time and its .host.json with the host-bound timing) with `scalescope import torch-trace` into a stack profile;
2. simulates every point: `scalescope simulate --model M --cluster C --plan PLAN --framework STACKS
   --calibration CAL --format json`, STACKS = the imported stacks the point names (the program's plain trace and,
   for ZeRO-2/3, its FSDP2 trace: each plan takes the first stack that applies);
   FP8 points are also predicted from the bf16 trace with the same fp8 plan ("from_bf16_stack": scalescope's
   FP8 rules on top of a bf16 trace), for comparison;
3. writes the predictions with the commit of the binary (devbin/COMMIT or $SCALESCOPE_COMMIT), the commands and
   the calibration. A point scalescope refuses is recorded with its error; the others still run.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import points as P  # noqa: E402


def run(cmd, timeout=120):
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout, r.stderr


def commit(bin_):
    if os.environ.get("SCALESCOPE_COMMIT"):
        return os.environ["SCALESCOPE_COMMIT"]
    f = os.path.join(os.path.dirname(os.path.abspath(bin_)), "COMMIT")
    if os.path.exists(f):
        with open(f) as fh:
            return fh.read().strip()
    rc, out, _ = run(["git", "rev-parse", "HEAD"])
    return out.strip() if rc == 0 else "unknown"


def import_trace(a, t):
    with open(os.path.join(a.traces, t.name() + ".meta.json")) as f:
        meta = json.load(f)
    stack = os.path.join(a.work, f"stack-{t.key}.json")
    cmd = [a.scalescope, "import", "torch-trace", os.path.join(a.traces, t.name() + ".json.gz"), "--model", t.model,
           "--micro-batch", str(t.mbs), "--seq", str(t.seq), "--step-time", str(meta["unprofiled"]["step_time_s"]),
           "--software", f"torch {meta['environment']['torch']}", "--name", t.key, "-o", stack, "-q"]
    cmd[-3:-3] = a.import_args.split()
    if meta.get("host"):
        cmd[-3:-3] = ["--host-step-time", str(meta["host"]["step_time_s"]), "--host-shape", meta["host"]["shape"]]
    rc, out, err = run(cmd)
    rec = {"command": " ".join(cmd), "exit": rc, "stderr": err[-4000:], "trace": t.name(),
           "unprofiled_step_time_s": meta["unprofiled"]["step_time_s"],
           "host_step_time_s": meta["host"]["step_time_s"] if meta.get("host") else None}
    if rc == 0:
        rec["stack"] = os.path.relpath(stack, ROOT) if stack.startswith(ROOT) else stack
    return rec


def simulate(a, p, stacks, model=None):
    cmd = [a.scalescope, "simulate", "--model", model or p.model, "--cluster", a.cluster, "--plan", p.plan(),
           "--framework", ",".join(stacks), "--calibration", a.calibration, "--format", "json"]
    rc, out, err = run(cmd)
    rec = {"command": " ".join(cmd), "exit": rc, "warnings": [l for l in err.splitlines() if "warning" in l.lower()]}
    if rc != 0:
        rec["error"] = err.strip()[-2000:]
        return rec
    d = json.loads(out)
    rec.update(step_time_s=d["step_time_s"], memory_peak_GiB=d["memory_peak_GiB"],
               memory_allocated_GiB=d["memory_peak_GiB"] - d["memory"]["overhead_GiB"],
               fits_memory=d.get("fits_memory"), breakdown=d.get("breakdown"), provenance=d.get("provenance"))
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", required=True, choices=["A", "B", "C", "D", "E", "F", "I", "J"])
    ap.add_argument("--scalescope", default=os.path.join(ROOT, "devbin", "scalescope"))
    ap.add_argument("--traces", required=True, help="folder of run_steps.py trace outputs")
    ap.add_argument("--cluster", required=True, help="cluster (the node file imported from nvidia-smi topo -m)")
    ap.add_argument("--calibration", required=True, help="scalescope --calibration (e.g. h100-gpu,fabric.json)")
    ap.add_argument("--gpu", default="", help="GPU name, for the record")
    ap.add_argument("--work", required=True, help="where the stacks go")
    ap.add_argument("--import-args", default="", help="extra `import torch-trace` arguments, space-separated (part I's "
                    "baseline: --ddp-bucket-view)")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    doc = {"schema": "scalescope.blind24-predictions/1", "part": a.part, "gpu": a.gpu, "commit": commit(a.scalescope),
           "predicted_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "scalescope": a.scalescope, "cluster": a.cluster, "calibration": a.calibration, "stacks": {}, "points": {}}
    ts = P.traces(a.part)
    if os.environ.get("BLIND24_CPU_TEST"):  # the session script's dry run on a CPU: its tiny traces
        import tiny
        ts = [tiny.trace(t, os.environ["BLIND24_CPU_TEST"]) for t in ts]
    for t in ts:
        if not os.path.exists(os.path.join(a.traces, t.name() + ".meta.json")):
            doc["stacks"][t.key] = {"exit": None, "error": "no trace (its recording failed)"}
            continue
        doc["stacks"][t.key] = import_trace(a, t)
        print(f"import {t.key}: exit {doc['stacks'][t.key]['exit']}", file=sys.stderr, flush=True)
    max_gpus = int(os.environ.get("BLIND24_MAX_GPUS", "4"))  # the lease's GPUs (session script)
    for p in P.points(a.part):
        if p.gpus > max_gpus:
            doc["points"][p.id] = {"plan": p.plan(), "gpus": p.gpus, "group": p.group,
                                   "error": f"not run: needs {p.gpus} GPUs, the lease has {max_gpus}"}
            continue
        stacks = [doc["stacks"].get(k, {}).get("stack") for k in p.stacks]
        if not all(stacks):
            doc["points"][p.id] = {"plan": p.plan(), "error": f"stack missing: {p.stacks}"}
            continue
        rec = dict(plan=p.plan(), gpus=p.gpus, group=p.group, **simulate(a, p, stacks))
        if p.precision == "fp8" and doc["stacks"].get("gpt-ln", {}).get("stack"):
            rec["from_bf16_stack"] = simulate(a, p, [doc["stacks"]["gpt-ln"]["stack"]])
        doc["points"][p.id] = rec
        print(f"{p.id:36s} {rec.get('step_time_s', 'ERROR')}", file=sys.stderr, flush=True)
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, a.out)
    bad = [k for k, r in doc["points"].items() if "step_time_s" not in r]
    print(f"{len(doc['points']) - len(bad)} of {len(doc['points'])} points predicted"
          + (f"; not: {', '.join(bad)}" if bad else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
