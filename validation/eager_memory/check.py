"""Peak allocated memory of the built-in pytorch-eager stack against every committed one-GPU measurement of a
training program that is not validation/harness (validation/programs/programs.py, run_steps.py measure).

Every `scalescope.program-measurement/1` file under validation/ is read; each (program, model, GPU, shape) is one
point, its measured peak the median of torch.cuda.max_memory_allocated over the files that measured it. The
prediction is `scalescope simulate --framework pytorch-eager` at that shape on one GPU, its peak less the model's
fixed 2 GiB of CUDA context (memory.overhead_GiB, which the caching allocator does not count).

    python3 validation/eager_memory/check.py [--bin build-core/cli/scalescope] [--report FILE] [--json FILE]
        [--optimizer-impl foreach|fused|omit]
"""
import argparse
import collections
import glob
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "validation"))
import blind_cli  # noqa: E402  (emit: print a report and write it)
GiB = 1024 ** 3
# The programs the built-in eager stack describes (one GPU, no FSDP2 / DTensor wrapping) and their plan precision:
# gpt-ln is pure bf16 (no autocast), the transformers programs fp32 parameters under bf16 autocast.
PRECISION = {"gpt-ln": "bf16", "hf-llama": "mixed", "hf-qwen3": "mixed", "hf-neox": "mixed", "hf-phi3": "mixed",
             "hf-olmo2": "mixed", "hf-gpt2": "mixed"}
CLUSTER = {"NVIDIA H200": "hgx-h200-8", "NVIDIA H100 80GB HBM3": "dgx-h100-8"}


def points():
    """(program, model, gpu, mbs, seq, micro_batches) -> ([measured peaks in bytes], [files], [step times])."""
    out = collections.defaultdict(lambda: ([], [], []))
    for f in sorted(glob.glob(os.path.join(ROOT, "validation", "**", "*.json"), recursive=True)):
        try:
            with open(f) as fh:
                d = json.load(fh)
        except (ValueError, UnicodeDecodeError):
            continue
        if not isinstance(d, dict) or d.get("schema") != "scalescope.program-measurement/1":
            continue
        prog, model, gpu = d.get("program"), d.get("model_file"), d.get("environment", {}).get("gpu")
        if prog not in PRECISION or gpu not in CLUSTER or d.get("layers") or not os.path.exists(
                os.path.join(ROOT, model or "")):
            continue
        for r in d.get("rows", []):
            if r.get("peak_allocated_bytes"):
                peaks, files, times = out[(prog, model, gpu, r["micro_batch"], r["seq"], r.get("micro_batches", 1))]
                peaks.append(r["peak_allocated_bytes"])
                files.append(os.path.relpath(f, ROOT))
                if r.get("step_time_s"):
                    times.append(r["step_time_s"])
    return out


def predict(bin_, prog, model, gpu, mbs, seq, micro, optimizer="foreach"):
    """The built-in eager stack's prediction. Every program here steps torch.optim.AdamW with its defaults: the
    foreach implementation (plan key optimizer_impl)."""
    plan = f"tp=1,pp=1,dp=1,mbs={mbs},gbs={mbs * micro},seq={seq},precision={PRECISION[prog]}" + (
        f",optimizer_impl={optimizer}" if optimizer != "omit" else "")
    r = subprocess.run([bin_, "simulate", "--model", model, "--cluster", CLUSTER[gpu], "--gpus", "1", "--plan", plan,
                        "--framework", "pytorch-eager", "--format", "json"], cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        return {"error": r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}"}
    d = json.loads(r.stdout)
    m = d["memory"]
    return {"allocated_GiB": d["memory_peak_GiB"] - m["overhead_GiB"], "step_time_s": d["step_time_s"],
            "parts_GiB": {k[:-4]: v for k, v in m.items() if k.endswith("_GiB") and k != "overhead_GiB" and v}}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build-core", "cli", "scalescope"))
    ap.add_argument("--report", help="write the markdown table here")
    ap.add_argument("--json", help="write every point here")
    ap.add_argument("--optimizer-impl", default="foreach", choices=["foreach", "fused", "omit"],
                    help="the plan's optimizer_impl (omit: no key, for a binary older than it)")
    a = ap.parse_args()
    rows, errs, terrs = [], collections.defaultdict(list), collections.defaultdict(list)
    for key, (peaks, files, times) in sorted(points().items()):
        prog, model, gpu, mbs, seq, micro = key
        meas = statistics.median(peaks) / GiB
        p = predict(a.bin, *key, a.optimizer_impl)
        row = {"program": prog, "model": model, "gpu": gpu, "shape": f"{mbs}x{seq}" + (f"x{micro}" if micro > 1 else ""),
               "measured_GiB": round(meas, 3), "files": sorted(set(files)), **p}
        if "allocated_GiB" in p:
            row["error"] = p["allocated_GiB"] / meas - 1
            errs[(prog, model)].append(row["error"])
            if times:
                row["measured_step_time_s"] = statistics.median(times)
                row["step_time_error"] = p["step_time_s"] / row["measured_step_time_s"] - 1
                terrs[(prog, model)].append(row["step_time_error"])
        rows.append(row)
    lines = ["| program | model | points | memory: median error | min | max | step time: median error | min | max |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for (prog, model), e in sorted(errs.items()):
        t = terrs[(prog, model)] or [float("nan")]
        lines.append(f"| {prog} | {os.path.relpath(model, 'validation/programs')} | {len(e)} | "
                     f"{statistics.median(e):+.1%} | {min(e):+.1%} | {max(e):+.1%} | "
                     f"{statistics.median(t):+.1%} | {min(t):+.1%} | {max(t):+.1%} |")
    allabs = [abs(x) for e in errs.values() for x in e]
    tabs = [abs(x) for e in terrs.values() for x in e]
    lines.append(f"\nAll {len(allabs)} points: memory median |error| {statistics.median(allabs):.1%}, worst "
                 f"{max(allabs):.1%}; step time (the shipped profile of the point's GPU, whatever clock it ran at) "
                 f"median |error| {statistics.median(tabs):.1%}, worst {max(tabs):.1%}.")
    blind_cli.emit("\n".join(lines) + "\n", a.report)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
