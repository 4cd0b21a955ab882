#!/usr/bin/env python3
"""Session 24, second blind check (set s25 of validation/programs/blind9.py): each program priced from TWO imported
traces, the short one of the first check (gpt-ln 4x768, hf-llama 2x1536: traces9-h200-s24/traces) and the long
one of its diagnostic (2x8192: longtrace-h200/traces); `--framework short.json,long.json` lets each shape take the
stack traced nearest its tokens per micro-batch (ComputeModel::stack_for). Also each trace alone, for comparison.
Calibration: the first check's lease (traces9-h200-s24); host timing: its 1x32 timing (blind19-h200-s24).
  nearest_trace.py predict -o validation/session24/blind19-h200-s25/predictions.json   (offline, committed before measuring)
  nearest_trace.py report --dir validation/session24/blind19-h200-s25                 (after measured-*.json came back)"""
import argparse
import datetime
import json
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "validation", "programs"))
import blind9  # noqa: E402

SESSION = "validation/session24/traces9-h200-s24"
TRACES = {"short": (SESSION + "/traces", {"gpt-ln": (4, 768), "hf-llama": (2, 1536)}),
          "long": ("validation/session24/longtrace-h200/traces", {"gpt-ln": (2, 8192), "hf-llama": (2, 8192)})}
VARIANTS = {"nearest": ("short", "long"), "short": ("short",), "long": ("long",)}


def predict(a):
    work = a.work or tempfile.mkdtemp(prefix="blind25-")
    host_dir = os.path.join(ROOT, "validation/session24/blind19-h200-s24")
    out = {"schema": "scalescope.blind-predictions/1", "gpu": "h200", "commit": blind9.git_commit(),
           "predicted_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "shape_set": "s25", "calibration": SESSION, "primary": "nearest", "programs": {}}
    for prog, p in blind9.PROGRAMS.items():
        host = {blind9.shape_key(r): r for r in json.load(open(os.path.join(host_dir, f"host-{prog}.json")))["rows"]}
        stacks = {}
        for tag, (folder, shapes) in TRACES.items():
            mbs, seq = shapes[prog]
            name = f"{prog}-mbs{mbs}-seq{seq}"
            meta = json.load(open(os.path.join(ROOT, folder, name + ".meta.json")))
            stacks[tag] = os.path.join(work, f"stack-{prog}-{tag}.json")
            blind9.import_trace(a.scalescope, f"{folder}/{name}.json.gz", p["model"], mbs, seq,
                                host["1x32"]["step_time_s"], "1x32", meta, f"{prog}-{tag}", stacks[tag])
        rows = []
        for shape in blind9.SHAPE_SETS["s25"][prog]:
            row = {"shape": shape}
            for variant, tags in VARIANTS.items():
                row[variant] = blind9.simulate(a.scalescope, prog, shape, "h200", ",".join(stacks[t] for t in tags),
                                               SESSION)
            rows.append(row)
            print(prog, shape, {v: round(row[v]["step_time_s"], 4) for v in VARIANTS}, flush=True)
        out["programs"][prog] = {"rows": rows}
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out + ".tmp", "w") as f:
        json.dump(out, f, indent=1)
    os.replace(a.out + ".tmp", a.out)


def report(a):
    preds = json.load(open(os.path.join(a.dir, "predictions.json")))
    lines = [f"Predictions by commit {preds['commit'][:7]} at {preds['predicted_utc']}; each shape the median of its "
             "measured processes.", "",
             "| program | shape | measured (s) | nearest trace (s) | error | short trace only | error | long trace only "
             "| error |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    errs = {v: [] for v in VARIANTS}
    for prog, pp in preds["programs"].items():
        meas = {blind9.shape_key(r): r for r in json.load(open(os.path.join(a.dir, f"measured-{prog}.json")))["rows"]}
        for row in pp["rows"]:
            m = meas.get(row["shape"], {})
            if "step_time_s" not in m:
                lines.append(f"| {prog} | {row['shape']} | {m.get('error', 'not measured')} |")
                continue
            t = m["step_time_s"]
            cells = []
            for v in VARIANTS:
                e = row[v]["step_time_s"] / t - 1
                errs[v].append(e)
                cells.append(f"{row[v]['step_time_s']:.4f} | {100 * e:+.1f}%")
            lines.append(f"| {prog} | {row['shape']} | {t:.4f} | " + " | ".join(cells) + " |")

    def stats(v):
        return (blind9.error_stats([abs(e) for e in v]).rstrip(")") +
                f", signed median {100 * statistics.median(v):+.1f}%)" if v else "n/a")
    lines += [""] + [f"- {v}: {stats(e)}" for v, e in errs.items()]
    text = "\n".join(lines) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    print(text)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    pr = sub.add_parser("predict")
    pr.add_argument("--scalescope", default=os.path.join(ROOT, "build-ci", "cli", "scalescope"))
    pr.add_argument("--work", default="")
    pr.add_argument("-o", "--out", required=True)
    rp = sub.add_parser("report")
    rp.add_argument("--dir", required=True)
    rp.add_argument("-o", "--out", default="")
    a = p.parse_args()
    os.chdir(ROOT)
    (predict if a.cmd == "predict" else report)(a)


if __name__ == "__main__":
    main()
