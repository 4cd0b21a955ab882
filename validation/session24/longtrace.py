#!/usr/bin/env python3
"""Session 24 diagnostic: predicts the blind check's long shapes (blind9.py set s24) from profiler traces taken AT a
long shape (2x8192, validation/device/session_longtrace24.sh) instead of the check's short ones, with the check's
lease calibration (traces9-h200-s24/) and host timings (blind19-h200-s24/host-*.json), the import and simulate
commands blind9.py uses; prints the errors against the check's measurements (blind19-h200-s24/measured-*.json).
  python3 validation/session24/longtrace.py [--scalescope build-ci/cli/scalescope] [--traces DIR]"""
import argparse
import json
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "validation", "programs"))
import blind9  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scalescope", default=os.path.join(ROOT, "build-ci", "cli", "scalescope"))
    p.add_argument("--traces", default=os.path.join(HERE, "longtrace-h200", "traces"))
    a = p.parse_args()
    check = os.path.join(HERE, "blind19-h200-s24")
    session = os.path.relpath(os.path.join(HERE, "traces9-h200-s24"), ROOT)
    work = tempfile.mkdtemp(prefix="longtrace24-")
    print("| program | shape | measured (s) | from the 2x8192 trace (s) | error | from the short trace (blind) | error |")
    print("|---|---|---:|---:|---:|---:|---:|")
    errors, blind = [], []
    preds = json.load(open(os.path.join(check, "predictions.json")))
    for prog, prog_def in blind9.PROGRAMS.items():
        name = f"{prog}-mbs2-seq8192"
        meta = json.load(open(os.path.join(a.traces, name + ".meta.json")))
        host = {blind9.shape_key(r): r for r in json.load(open(os.path.join(check, f"host-{prog}.json")))["rows"]}
        stack = os.path.join(work, f"stack-{prog}.json")
        blind9.import_trace(a.scalescope, os.path.join(a.traces, name + ".json.gz"), prog_def["model"], 2, 8192,
                            host["1x32"]["step_time_s"], "1x32", meta, f"{prog}-h200-2x8192", stack)
        measured = {blind9.shape_key(r): r for r in json.load(open(os.path.join(check, f"measured-{prog}.json")))["rows"]}
        blind_rows = {r["shape"]: r for r in preds["programs"][prog]["rows"]}
        for shape in blind9.SHAPE_SETS["s24"][prog]:
            t = measured[shape]["step_time_s"]
            pred = blind9.simulate(a.scalescope, prog, shape, "h200", stack, session)["step_time_s"]
            b = blind_rows[shape]["imported"]["step_time_s"]
            own = " (the trace's own shape)" if shape == "2x8192" else ""
            if not own:
                errors.append(pred / t - 1)
                blind.append(b / t - 1)
            print(f"| {prog} | {shape}{own} | {t:.4f} | {pred:.4f} | {100 * (pred / t - 1):+.1f}% | {b:.4f} | "
                  f"{100 * (b / t - 1):+.1f}% |")
        print(f"| {prog} | unprofiled 2x8192 step of the trace call | {meta['unprofiled']['step_time_s']:.4f} | | | | |")
    med = lambda v: 100 * statistics.median(abs(e) for e in v)  # noqa: E731
    print(f"\nother shapes (n={len(errors)}): from the 2x8192 traces median |error| {med(errors):.1f}% (signed "
          f"{100 * statistics.median(errors):+.1f}%); from the short traces (the blind check) {med(blind):.1f}% "
          f"(signed {100 * statistics.median(blind):+.1f}%)")


if __name__ == "__main__":
    main()
