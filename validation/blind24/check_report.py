#!/usr/bin/env python3
"""Checks report.py's arithmetic on made-up predictions and measurements whose statistics are derived by hand below
(no torch, no GPU): python3 validation/blind24/check_report.py  (exit 0 and "report: ok", else an AssertionError).
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import points as P  # noqa: E402
import report  # noqa: E402

# Stack group: predicted / measured = 1.10, 0.95, 1.02, 1.30 -> |errors| 0.10, 0.05, 0.02, 0.30; sorted
# 0.02 0.05 0.10 0.30: median (0.05 + 0.10) / 2 = 0.075, p90 = rank round(0.9 * 3) = 3 -> 0.30, max 0.30.
# FP8: 8x1024 is the fp8 trace's own shape on one GPU (anchored: shown, not counted, even at +50%); 4x2048 at
# 0.9 / 1.0 -> 0.10, the only counted one. Memory of gpt-ln.ddp.n2: 2.0 predicted / 2.5 measured - 1 = -0.20.
CASES = {"gpt-ln.ddp.n2": (1.10, 1.0), "gpt-ln.zero3.n2": (0.95, 1.0), "gpt-ln.tp.n2": (1.02, 1.0),
         "gpt-ln.pp-1f1b.n2": (1.30, 1.0), "gpt-ln-fp8.single.8x1024": (1.5, 1.0),
         "gpt-ln-fp8.single.4x2048": (0.9, 1.0)}


def main():
    d = tempfile.mkdtemp(prefix="blind24-report-")
    preds = {"schema": "scalescope.blind24-predictions/1", "part": "A", "gpu": "test", "commit": "abc",
             "predicted_utc": "2026-01-01T00:00:00+00:00", "calibration": "h100-gpu,fabric.json",
             "points": {pid: {"plan": P.by_id(pid).plan(), "step_time_s": p, "memory_allocated_GiB": 2.0}
                        for pid, (p, _) in CASES.items()}}
    with open(os.path.join(d, "predictions.json"), "w") as f:
        json.dump(preds, f)
    os.makedirs(os.path.join(d, "measured"))
    for pid, (_, m) in CASES.items():
        with open(os.path.join(d, "measured", pid + ".json"), "w") as f:
            json.dump({"id": pid, "measured": {"step_time_s": m, "peak_allocated_GiB": 2.5}}, f)
    out = subprocess.run([sys.executable, os.path.join(HERE, "report.py"), "--predictions",
                          os.path.join(d, "predictions.json"), "--measured", os.path.join(d, "measured"),
                          "--json", os.path.join(d, "r.json")], capture_output=True, text=True, check=True).stdout
    with open(os.path.join(d, "r.json")) as f:
        r = json.load(f)
    s = r["summary"]["stack"]
    assert s["n"] == 4 and abs(s["median"] - 0.075) < 1e-12 and abs(s["p90"] - 0.30) < 1e-12, s
    f8 = r["summary"]["fp8"]
    assert f8["n"] == 1 and abs(f8["median"] - 0.10) < 1e-12, f8
    row = next(x for x in r["rows"] if x["id"] == "gpt-ln.ddp.n2")
    assert abs(row["memory_error"] + 0.20) < 1e-12, row
    assert "median |error| 7.5%, p90 30.0%" in out and "NOT met" in out, out
    assert report.p90([0.3, 0.1, 0.2]) == 0.3  # rank round(0.9 * 2) = 2 of 0.1 0.2 0.3
    print("report: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
