#!/usr/bin/env python3
"""Blind check of the host-synchronisation model on Megatron-Core itself (session 28, issue 21).

The program is validation/megatron/mcore_moe_host.py's: Megatron-Core 0.16.1's GPTModel with its local layer spec,
a Qwen3-30B-A3B-shaped layer, dense or MoE (16 experts top-8, GroupedMLP, the alltoall token dispatcher, which
makes the host wait for the GPU in every MoE layer's forward). One training step is forward + backward (no optimizer).

  trace    (device) per variant: the unprofiled step at the trace shape, the host-bound step at --host-shape (the
           GPU idles) and one step under torch.profiler (ProfilerStep schedule, record_shapes, profile_memory):
           OUT/VARIANT-trace.json.gz and OUT/VARIANT-meta.json
  measure  (device) per variant: the step time (median of --steps) and peak allocated memory at each shape, all
           shapes in one process: Megatron-Core's GlobalMemoryBuffer (the unfused attention's score-sized baddbmm
           input) keeps the size of the longest shape run before, so for memory run one shape per process
           (validation/device/session29_memory_blind.sh; validation/session29/README.md)
  predict  (here, before `measure`) `scalescope import torch-trace` of each trace and `scalescope simulate` of each
           shape; with --control also the stack with the host synchronisation taken out (moe_host_sync "ep > 1",
           as every imported stack was before session 28), which is what the model would say without it
  report   predictions against measurements: a Markdown table
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
MODELS = {6: "validation/megatron/qwen3-30b-a3b-e16-l6.json", 12: "validation/megatron/qwen3-30b-a3b-e16-l12.json"}
DENSE_MODELS = {6: "validation/megatron/qwen3-dense-l6.json", 12: "validation/megatron/qwen3-dense-l12.json"}
VARIANTS = ("dense", "moe-grouped")
# The trace shape: 2 sequences whose tokens (5120) and length (2560) equal no model width. Session 28's first traces
# at 1x4096 (T = s = Q = Vu = 4096) could not be read (validation/session28/README.md, "Degenerate trace shapes").
TRACE_SHAPE = "2x2560"
TRACE_LAYERS = 6
# Shapes predicted (MBSxSEQ[@LAYERS]); the trace shape is among them as the in-sample check.
SHAPES = ["1x4096", "1x2048", "2x2048", "4x1024", "2x4096", "1x8192", "1x4096@12"]


def shape_of(s):
    base, _, layers = s.partition("@")
    b, t = (int(x) for x in base.split("x"))
    return b, t, int(layers) if layers else TRACE_LAYERS


def model_file(variant, layers):
    return (DENSE_MODELS if variant == "dense" else MODELS)[layers]


# ---------------------------------------------------------------- device side
def device_setup():
    sys.path.insert(0, HERE)
    import mcore_moe_host as m
    m.init_megatron()
    return m


def step_once(m, model, ids, pos, labels):
    model.zero_grad(set_to_none=True)
    model(ids, pos, None, labels=labels).float().mean().backward()


def timed_steps(m, model, shape, vocab, steps, warmup=3):
    import torch
    ids, pos, labels = m.inputs(*shape, vocab)
    for _ in range(warmup):
        step_once(m, model, ids, pos, labels)
    torch.cuda.synchronize()
    t = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step_once(m, model, ids, pos, labels)
        torch.cuda.synchronize()
        t.append(time.perf_counter() - t0)
    return statistics.median(t), t


def cmd_trace(a):
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule
    m = device_setup()
    b, s, L = shape_of(a.shape)
    hb, hs = (int(x) for x in a.host_shape.split("x"))
    model = m.build(a.variant, L, max(s, hs), a.vocab)
    host, host_all = timed_steps(m, model, (hb, hs), a.vocab, a.steps)
    step, step_all = timed_steps(m, model, (b, s), a.vocab, a.steps)
    ids, pos, labels = m.inputs(b, s, a.vocab)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True, profile_memory=True,
                 schedule=schedule(wait=1, warmup=1, active=1)) as prof:  # as run_steps.py records
        for _ in range(3):
            step_once(m, model, ids, pos, labels)
            torch.cuda.synchronize()
            prof.step()
    raw = os.path.join(a.out, f"{a.variant}-trace.json")  # one trace per variant and output folder
    prof.export_chrome_trace(raw)
    subprocess.run(["gzip", "-f", raw], check=True)
    meta = {"variant": a.variant, "layers": L, "shape": a.shape, "host_shape": a.host_shape,
            "host_step_time_s": host, "host_step_times_s": host_all, "unprofiled": {"step_time_s": step,
                                                                                  "step_times_s": step_all},
            "environment": {"torch": torch.__version__, "megatron_core": __import__("megatron.core").core.__version__,
                            "gpu": torch.cuda.get_device_name(0)},
            "utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    with open(os.path.join(a.out, f"{a.variant}-meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(json.dumps({k: meta[k] for k in ("variant", "host_step_time_s")} | {"step": step}))


def cmd_measure(a):
    import torch
    m = device_setup()
    rows, models = [], {}
    for sh in a.shapes.split(","):
        b, s, L = shape_of(sh)
        if L not in models:
            models.clear()
            torch.cuda.empty_cache()
            models[L] = m.build(a.variant, L, 8192, a.vocab)
        torch.cuda.reset_peak_memory_stats()
        t, ts = timed_steps(m, models[L], (b, s), a.vocab, a.steps)
        rows.append({"shape": sh, "step_time_s": t, "step_times_s": ts,
                     "max_allocated_GiB": torch.cuda.max_memory_allocated() / 2**30})
        print(a.variant, sh, t, flush=True)
    with open(os.path.join(a.out, f"measured-{a.variant}.json"), "w") as f:
        json.dump({"variant": a.variant, "rows": rows, "torch": torch.__version__}, f, indent=1)


# ---------------------------------------------------------------- here
def run(cmd):
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}\n{r.stderr}")
    return r.stdout


def simulate(bin_, model, b, s, stack, calibration):
    plan = f"tp=1,pp=1,dp=1,mbs={b},gbs={b},seq={s},precision=bf16"
    doc = json.loads(run([bin_, "simulate", "--model", model, "--cluster", "hgx-h200-8", "--gpus", "1", "--plan", plan,
                          "--framework", stack, "--calibration", calibration, "--format", "json"]))
    return {"step_time_s": doc["step_time_s"], "host_wait_s": doc["breakdown"]["host_wait_s"],
            "memory_allocated_GiB": doc["memory_peak_GiB"] - doc["memory"]["overhead_GiB"]}


def cmd_predict(a):
    preds = {"schema": "scalescope.mcore-blind-predictions/1", "commit": a.commit, "calibration": a.calibration,
             "predicted_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
             "variants": {}}
    os.makedirs(a.work, exist_ok=True)
    for v in VARIANTS:
        with open(os.path.join(a.traces, f"{v}-meta.json")) as f:
            meta = json.load(f)
        b, s, L = shape_of(meta.get("shape", TRACE_SHAPE))
        stack = os.path.join(a.work, f"stack-mcore-{v}.json")
        run([a.scalescope, "import", "torch-trace", os.path.join(a.traces, f"{v}-trace.json.gz"), "--model",
             model_file(v, L), "--micro-batch", str(b), "--seq", str(s), "--host-step-time",
             str(meta["host_step_time_s"]), "--host-shape", meta["host_shape"], "--step-time",
             str(meta["unprofiled"]["step_time_s"]), "--software",
             f"torch {meta['environment']['torch']}, megatron-core {meta['environment']['megatron_core']}",
             "--name", f"mcore-{v}", "-o", stack, "-q"])
        with open(stack) as f:
            doc = json.load(f)
        control = None
        if doc["properties"].get("moe_host_sync") == "1":  # the same stack without the synchronisation
            doc["properties"]["moe_host_sync"] = "ep > 1"
            control = os.path.join(a.work, f"stack-mcore-{v}-nosync.json")
            with open(control, "w") as f:
                json.dump(doc, f, indent=1)
        rows = []
        for sh in a.shapes.split(","):
            b, s, L = shape_of(sh)
            row = {"shape": sh, "predicted": simulate(a.scalescope, model_file(v, L), b, s, stack, a.calibration)}
            if control:
                row["without_sync"] = simulate(a.scalescope, model_file(v, L), b, s, control, a.calibration)
            rows.append(row)
            print(v, sh, row["predicted"]["step_time_s"], row.get("without_sync", {}).get("step_time_s"), flush=True)
        preds["variants"][v] = {"stack": os.path.relpath(stack, ROOT) if stack.startswith(ROOT) else stack,
                                "host": doc["host"], "properties": doc["properties"], "import_notes":
                                doc["import"]["notes"], "trace_meta": meta, "rows": rows}
    with open(a.o + ".tmp", "w") as f:
        json.dump(preds, f, indent=1)
    os.replace(a.o + ".tmp", a.o)


def cmd_report(a):
    with open(a.predictions) as f:
        preds = json.load(f)
    out = [f"Predictions by commit {preds['commit']} ({preds['predicted_utc']}), calibration {preds['calibration']}.", "",
           "| variant | shape | measured (s) | predicted (s) | error | without the sync (s) | error | predicted host wait (s) |"
           " memory measured / predicted (GiB) |", "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    errs, errs0 = [], []
    for v, pv in preds["variants"].items():
        with open(os.path.join(a.measured_dir, f"measured-{v}.json")) as f:
            meas = {r["shape"]: r for r in json.load(f)["rows"]}
        traced = pv["trace_meta"].get("shape", TRACE_SHAPE)
        for row in pv["rows"]:
            m = meas.get(row["shape"])
            if not m:
                continue
            p = row["predicted"]
            e = p["step_time_s"] / m["step_time_s"] - 1
            w = row.get("without_sync")
            e0 = w["step_time_s"] / m["step_time_s"] - 1 if w else None
            if row["shape"] != traced:
                errs.append((v, abs(e)))
                if e0 is not None:
                    errs0.append(abs(e0))
            out.append(f"| {v} | {row['shape']}{' (trace shape)' if row['shape'] == traced else ''} | "
                       f"{m['step_time_s']:.4f} | {p['step_time_s']:.4f} | {100 * e:+.1f}% | "
                       f"{w['step_time_s']:.4f} | {100 * e0:+.1f}% |" if w else
                       f"| {v} | {row['shape']}{' (trace shape)' if row['shape'] == traced else ''} | "
                       f"{m['step_time_s']:.4f} | {p['step_time_s']:.4f} | {100 * e:+.1f}% | | |")
            out[-1] += f" {p['host_wait_s']:.4f} | {m['max_allocated_GiB']:.2f} / {p['memory_allocated_GiB']:.2f} |"

    def stats(v):
        if not v:
            return "n/a"
        q = sorted(v)
        return f"median {100 * statistics.median(q):.1f}%, max {100 * q[-1]:.1f}% (n={len(q)})"
    out += ["", "Shapes other than the trace's:"]
    for v in preds["variants"]:
        out.append(f"- {v}: |error| {stats([e for w, e in errs if w == v])}")
    if errs0:
        out.append(f"- moe-grouped without the host synchronisation (the model before session 28): |error| {stats(errs0)}")
    text = "\n".join(out) + "\n"
    with open(a.o, "w") as f:
        f.write(text)
    print(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("trace")
    t.add_argument("--variant", choices=VARIANTS, required=True)
    t.add_argument("--shape", default=TRACE_SHAPE, help=f"the traced shape MBSxSEQ (default {TRACE_SHAPE})")
    t.add_argument("--host-shape", default="1x64")
    t.add_argument("--steps", type=int, default=20)
    t.add_argument("--vocab", type=int, default=4096)
    t.add_argument("--out", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--variant", choices=VARIANTS, required=True)
    m.add_argument("--shapes", default=",".join(SHAPES))
    m.add_argument("--steps", type=int, default=15)
    m.add_argument("--vocab", type=int, default=4096)
    m.add_argument("--out", required=True)
    p = sub.add_parser("predict")
    p.add_argument("--scalescope", default="build-core/cli/scalescope")
    p.add_argument("--traces", required=True, help="the trace call's output")
    p.add_argument("--calibration", required=True, help="GPU profile and attention rows, comma-separated")
    p.add_argument("--commit", required=True)
    p.add_argument("--shapes", default=",".join(SHAPES), help="MBSxSEQ[@LAYERS], comma-separated")
    p.add_argument("--work", required=True)
    p.add_argument("-o", required=True)
    r = sub.add_parser("report")
    r.add_argument("--predictions", required=True)
    r.add_argument("--measured-dir", required=True)
    r.add_argument("-o", required=True)
    a = ap.parse_args()
    {"trace": cmd_trace, "measure": cmd_measure, "predict": cmd_predict, "report": cmd_report}[a.cmd](a)


if __name__ == "__main__":
    main()
