#!/usr/bin/env python3
"""Summary of validation/device/session_hostload21.sh: per program, the host-bound step (1x32) alone, beside three
spinning CPU processes, and in four processes at once (one per GPU), with the verdict of the criteria committed in
the session script's header before it ran.

    python3 validation/blind24/hostload_summary.py DIR [--json OUT.json]      (DIR: what the session script wrote)

alone = the median of the process medians of `alone` and `alone2` (4 + 4 processes one after another on GPU 0);
spin = the median of its 4 process medians; together = the median of the 8 process medians of the two rounds."""
import argparse
import glob
import json
import os
import statistics


def process_medians(path):
    """The process medians of a run_steps.py measure file (one or --processes N), [] if missing or failed."""
    try:
        with open(path) as f:
            row = json.load(f)["rows"][0]
    except (OSError, ValueError, KeyError, IndexError):
        return []
    if "step_time_s_processes" in row:
        return list(row["step_time_s_processes"])
    return [row["step_time_s"]] if row.get("step_time_s") is not None else []


def cpu_mhz(directory, label):
    """Median of the median-core MHz samples taken while condition `label` ran (cpu.txt), or None."""
    vals = []
    try:
        with open(os.path.join(directory, "cpu.txt")) as f:
            for line in f:
                p = line.split()
                if len(p) >= 4 and p[0] == label:
                    vals.append(float(p[2]))
    except (OSError, ValueError):
        return None
    return statistics.median(vals) if vals else None


def verdict(ratios_together, ratios_spin):
    t = [r for r in ratios_together if r is not None]
    s = [r for r in ratios_spin if r is not None]
    if len(t) < 2:
        return "not enough data"
    if all(r >= 1.20 for r in t):
        v = "other processes explain the gap (together / alone >= 1.20 for both programs)"
    elif all(r <= 1.08 for r in t):
        v = "they do not (together / alone <= 1.08 for both): the gap lies with the communication"
    else:
        v = "between the criteria (neither >= 1.20 nor <= 1.08 for both programs)"
    if s and all(r >= 1.15 for r in s):
        v += "; spinning CPUs slow it too (spin / alone >= 1.15): the CPU itself"
    elif s and all(r <= 1.05 for r in s) and all(r >= 1.20 for r in t):
        v += "; spinning CPUs do not (spin / alone <= 1.05): through the GPU driver or PCIe, not the CPU"
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    rows, rt, rs = [], [], []
    for prog in ("gpt-ln", "moe"):
        alone = process_medians(os.path.join(a.dir, f"{prog}-alone.json")) + \
            process_medians(os.path.join(a.dir, f"{prog}-alone2.json"))
        spin = process_medians(os.path.join(a.dir, f"{prog}-spin.json"))
        together = [m for p in sorted(glob.glob(os.path.join(a.dir, f"{prog}-together-r*-gpu*.json")))
                    for m in process_medians(p)]
        med = {k: (statistics.median(v) if v else None) for k, v in
               (("alone", alone), ("spin", spin), ("together", together))}
        r_t = med["together"] / med["alone"] if med["alone"] and med["together"] else None
        r_s = med["spin"] / med["alone"] if med["alone"] and med["spin"] else None
        rt.append(r_t)
        rs.append(r_s)
        rows.append({"program": prog, "alone_s": med["alone"], "spin_s": med["spin"], "together_s": med["together"],
                     "together_over_alone": r_t, "spin_over_alone": r_s,
                     "alone_processes": alone, "spin_processes": spin, "together_processes": together,
                     "cpu_MHz": {c: cpu_mhz(a.dir, f"{prog}-{c}") for c in ("alone", "spin", "together", "alone2")}})
    fmt = lambda v, d=4: "-" if v is None else f"{v:.{d}f}"  # noqa: E731
    print("| program | alone (s, n) | spin (s, n) | together (s, n) | together / alone | spin / alone | "
          "process spread alone / together |")
    print("|---|---|---|---|---:|---:|---|")
    for r in rows:
        spread = lambda v: "-" if len(v) < 2 else f"{max(v) / min(v):.2f}"  # noqa: E731
        print(f"| {r['program']} | {fmt(r['alone_s'])} ({len(r['alone_processes'])}) | {fmt(r['spin_s'])} "
              f"({len(r['spin_processes'])}) | {fmt(r['together_s'])} ({len(r['together_processes'])}) | "
              f"{fmt(r['together_over_alone'], 3)} | {fmt(r['spin_over_alone'], 3)} | "
              f"{spread(r['alone_processes'])} / {spread(r['together_processes'])} |")
    v = verdict(rt, rs)
    print(f"\nVerdict: {v}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rows": rows, "verdict": v}, f, indent=1)


if __name__ == "__main__":
    main()
