#!/usr/bin/env python3
"""Errors of the blind-check predictions against the measured points, per family, as a validation/REPORT.md
section and JSON.

  report.py --predictions predictions-A.json [predictions-A-h200x4.json ...] --measured DIR/measured
            [--nccl DIR/nccl] [--fabric DIR/fabric.json] [-o section.md] [--json report.json]
The first predictions file is the blind one the goals are judged on; further files (other calibrations) are
extra columns. Error = predicted / measured - 1 (step time: the median step; memory: the predicted total less the
framework overhead against the peak torch.cuda.max_memory_allocated over the ranks). Points at a trace's own
shape on one GPU are anchored there, so they are shown but not counted; learned-routing points are predicted with
the default imbalance and shown with the measured one, not counted either. p90 = the value at rank
round(0.9 (n - 1)) of the sorted |errors|, as validation/programs/blind9.py.
"""
import argparse
import glob
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import points as P  # noqa: E402

GOALS = {"stack": ("trace-driven stacks (gpt-ln, hf-llama: DDP, FSDP2 ZeRO-2/3, TP, PP, TP x DP)", 0.05, 0.10),
         "fp8": ("FP8 (gpt-ln-fp8, torch._scaled_mm tensorwise)", 0.08, None),
         "cp": ("context parallelism (gpt-ln 16k, torch context_parallel)", 0.08, None),
         "ep": ("expert parallelism (MoE, all-to-all; and its data-parallel contrast)", 0.08, None),
         "moe-1gpu": ("MoE on one GPU (issue 21)", None, None),
         "tp-dtensor": ("DTensor TP from one-GPU DTensor traces (gpt-ln, hf-llama; part C)", 0.05, 0.10),
         "tp-dtensor-fake": ("DTensor TP, host timing on a fake 2-rank mesh (gpt-ln, hf-llama; part D)", 0.05, 0.10),
         "tp-dtensor-fake4": ("DTensor TP 4, host timing on a fake 4-rank mesh (gpt-ln, hf-llama; part E)", 0.05,
                              0.10),
         "zero-fake": ("FSDP2 ZeRO-2/3, host timing on a fake 2-/4-rank FSDP2 mesh, lease interference (part F)",
                       0.05, 0.10),
         "ddp-interf": ("DDP with the lease's measured interference (gpt-ln, hf-llama; part F)", 0.05, 0.10),
         "ddp-copies": ("DDP and data-parallel MoE with DDP's gradient copies, new shapes (parts I, J)", 0.05, 0.10)}


def load(path):
    with open(path) as f:
        return json.load(f)


def p90(v):
    q = sorted(v)
    return q[min(len(q) - 1, int(round(0.9 * (len(q) - 1))))]


def anchored(p):
    return p.gpus == 1 and any(t.key == p.stacks[0] and t.mbs == p.mbs and t.seq == p.seq and t.model == p.model
                               for t in P.TRACES)


def fmt_err(e):
    return "" if e is None else f"{100 * e:+.1f}%"


def rows_of(preds, measured):
    rows = []
    for pid, pr in preds[0]["points"].items():
        p = P.by_id(pid)
        m = measured.get(pid)
        row = {"id": pid, "group": p.group, "gpus": p.gpus, "plan": pr.get("plan", p.plan()),
               "anchored": anchored(p), "predicted": [x["points"].get(pid, {}).get("step_time_s") for x in preds],
               "predict_error": pr.get("error")}
        if pr.get("from_bf16_stack"):
            row["from_bf16_stack"] = pr["from_bf16_stack"].get("step_time_s")
        if m:
            mm = m["measured"]
            row.update(measured=mm["step_time_s"], memory_measured=mm["peak_allocated_GiB"], stats=mm.get("stats"))
            row["errors"] = [x / mm["step_time_s"] - 1 if x else None for x in row["predicted"]]
            if pr.get("memory_allocated_GiB") and mm["peak_allocated_GiB"]:
                row["memory_predicted"] = pr["memory_allocated_GiB"]
                row["memory_error"] = pr["memory_allocated_GiB"] / mm["peak_allocated_GiB"] - 1
            if row.get("from_bf16_stack"):
                row["from_bf16_stack_error"] = row["from_bf16_stack"] / mm["step_time_s"] - 1
        rows.append(row)
    return rows


def summarise(rows, group):
    errs = [abs(r["errors"][0]) for r in rows if r["group"] == group and not r["anchored"] and r.get("errors")
            and r["errors"][0] is not None]
    if not errs:
        return None
    return {"n": len(errs), "median": statistics.median(errs), "p90": p90(errs), "max": max(errs)}


def nccl_floors(nccl_dir):
    """Smallest non-zero size's time of every nccl-tests-layout log: the latency floor of its launch mode. nccl-tests
    rounds sizes down to whole elements per rank, so its first rows can hold 0 bytes: calls that move nothing and take
    under a microsecond (session 19's -g N logs), which are no floor of a collective."""
    out = []
    for path in sorted(glob.glob(os.path.join(nccl_dir, "*.log"))):
        first = None
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 9 and not line.startswith("#") and parts[0].isdigit() and int(parts[0]) > 0:
                    first = (int(parts[0]), float(parts[5]))
                    break
        name = os.path.basename(path)[:-4]
        mode = ("one process per GPU (torch.distributed)" if name.startswith("torch-") else
                "one process, one thread drives all GPUs (nccl-tests -g N)")
        if first:
            out.append({"log": name, "mode": mode, "bytes": first[0], "time_us": first[1]})
    return out


def fabric_floors(path):
    d = load(path)
    out = []
    for c in d.get("collectives", []):
        if c["op"] in ("all_reduce", "all_gather", "reduce_scatter", "alltoall") and c.get("rows"):
            r = c["rows"][0]
            out.append({"op": c["op"], "nranks": c["nranks"], "bytes": r["bytes"], "time_us": r["time_us"],
                        "host_launch_us": r.get("host_launch_us")})
    return out


def markdown(preds, rows, summary, floors, fabric):
    p0 = preds[0]
    def label(x):  # the calibration's files, and the variant the file name gives (predictions-PART-VARIANT.json)
        cal = ",".join(os.path.basename(c) for c in x.get("calibration", "?").split(","))
        stem = os.path.basename(x.get("_file", "")).split(".")[0]
        variant = stem.split("-", 2)[2] if stem.count("-") >= 2 else ""
        return cal + (f"; {variant}" if variant and variant != cal else "")
    cols = " | ".join(f"predicted ({label(x)}) | error" for x in preds)
    lines = [f"### Issue 24, part {p0['part']}: {p0.get('gpu', '')}, predictions by commit {p0['commit']} "
             f"({p0['predicted_utc']}), calibration `{p0['calibration']}`", "",
             f"| point | GPUs | plan | measured (s) | {cols} | memory measured / predicted (GiB) |",
             "|---|---:|---|---:|" + "---:|---:|" * len(preds) + "---|"]
    for r in sorted(rows, key=lambda r: (r["group"], r["id"])):
        tag = " (trace shape)" if r["anchored"] else ""
        if "measured" not in r:
            lines.append(f"| {r['id']}{tag} | {r['gpus']} | `{r['plan']}` | not measured |" + " |" * (2 * len(preds) + 1))
            continue
        pe = " | ".join(f"{x:.4f} | {fmt_err(e)}" if x else f"{(r.get('predict_error') or 'n/a')[:80]} | n/a"
                        for x, e in zip(r["predicted"], r["errors"]))
        mem = f"{r['memory_measured']:.2f} / " + (f"{r['memory_predicted']:.2f} ({fmt_err(r['memory_error'])})"
                                                  if "memory_predicted" in r else "n/a")
        lines.append(f"| {r['id']}{tag} | {r['gpus']} | `{r['plan']}` | {r['measured']:.4f} | {pe} | {mem} |")
    lines.append("")
    for g, s in summary.items():
        name, med, q90 = GOALS.get(g, (g, None, None))
        if not s:
            lines.append(f"- {name}: no blind point measured and predicted")
            continue
        goal = ""
        if med is not None:
            ok = s["median"] <= med and (q90 is None or s["p90"] <= q90)
            goal = f"; goal median <= {100 * med:.0f}%" + (f", p90 <= {100 * q90:.0f}%" if q90 else "") + \
                   (": met" if ok else ": NOT met")
        lines.append(f"- {name}: median |error| {100 * s['median']:.1f}%, p90 {100 * s['p90']:.1f}%, max "
                     f"{100 * s['max']:.1f}% (n={s['n']}){goal}")
    fams = {}
    for r in rows:
        if r.get("errors") and r["errors"][0] is not None and not r["anchored"]:
            fams.setdefault(f"{r['id'].split('.')[0]} {P.by_id(r['id']).family}", []).append(abs(r["errors"][0]))
    if fams:
        lines.append("- per program and family, median |error|: " + ", ".join(
            f"{k} {100 * statistics.median(v):.1f}% (n={len(v)})" for k, v in sorted(fams.items())))
    fp8 = [r for r in rows if r.get("from_bf16_stack_error") is not None]
    if fp8:
        e = [abs(r["from_bf16_stack_error"]) for r in fp8]
        lines.append(f"- FP8 predicted from the bf16 trace with the fp8 plan instead: median |error| "
                     f"{100 * statistics.median(e):.1f}% (n={len(e)})")
    for r in rows:
        if r.get("stats"):
            lines.append(f"- {r['id']}: measured routing {json.dumps(r['stats'])}")
    if floors or fabric:
        lines += ["", "NCCL latency floor (smallest size) per launch mode:", "",
                  "| mode | test | bytes | time (us) | host launch (us) |", "|---|---|---:|---:|---:|"]
        lines += [f"| {f['mode']} | {f['log']} | {f['bytes']} | {f['time_us']:.2f} | |" for f in floors]
        lines += [f"| one process, one thread, GPU-side (scalescope-calibrate coll) | {f['op']} n={f['nranks']} | "
                  f"{f['bytes']} | {f['time_us']:.2f} | {f['host_launch_us'] or ''} |" for f in fabric]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--predictions", nargs="+", required=True)
    ap.add_argument("--measured", required=True, help="folder of run_points.py outputs (ID.json)")
    ap.add_argument("--nccl", default="", help="folder of nccl-tests-layout logs")
    ap.add_argument("--fabric", default="", help="scalescope-calibrate profile of this lease (coll)")
    ap.add_argument("-o", "--out", default="")
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    preds = [dict(load(p), _file=p) for p in a.predictions]
    measured = {os.path.basename(f)[:-5]: load(f) for f in glob.glob(os.path.join(a.measured, "*.json"))}
    rows = rows_of(preds, measured)
    summary = {g: summarise(rows, g) for g in GOALS if any(r["group"] == g for r in rows)}
    floors = nccl_floors(a.nccl) if a.nccl and os.path.isdir(a.nccl) else []
    fabric = fabric_floors(a.fabric) if a.fabric and os.path.exists(a.fabric) else []
    text = markdown(preds, rows, summary, floors, fabric)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"predictions": a.predictions, "commit": preds[0]["commit"], "rows": rows, "summary": summary,
                       "nccl_floors": floors, "fabric_floors": fabric}, f, indent=1)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
