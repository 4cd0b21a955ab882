#!/usr/bin/env python3
"""Errors of the committed predictions against measured.json (session 24): prints the Markdown tables of README.md.
  python3 validation/attention/longseq24/evaluate.py"""
import json
import os
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))


def load(name):
    with open(os.path.join(HERE, name)) as f:
        return json.load(f)


def key(r):
    return (r["backend"], r["heads"], r["seq"], bool(r.get("causal", True)))


def main():
    measured = {key(r): r for r in load("measured.json")["rows"]}
    sets = [("shipped h200-gpu grid (<= 4,096 tokens)",
             load("predictions-h200-gpu-flash.json")["rows"] + load("predictions-h200-gpu-cudnn.json")["rows"]),
            ("session 16's H100 rows", load("predictions-h100-rows.json")["rows"])]
    for title, rows in sets:
        print(f"\n{title}\n\n| kernel | heads x seq | fwd pred / meas us | error | bwd pred / meas us | error |")
        print("|---|---|---:|---:|---:|---:|")
        long_errors, all_errors = [], []
        for p in rows:
            m = measured[key(dict(p, causal=True))]
            errs = []
            for pas in ("fwd", "bwd"):
                e = p[f"predicted_{pas}_s"] / m[f"{pas}_s"] - 1
                errs.append(e)
            all_errors += errs
            if p["seq"] >= 8192:
                long_errors += errs
            print(f"| {p['backend']} | {p['heads']} x {p['seq']} | {1e6 * p['predicted_fwd_s']:.0f} / "
                  f"{1e6 * m['fwd_s']:.0f} | {100 * errs[0]:+.1f}% | {1e6 * p['predicted_bwd_s']:.0f} / "
                  f"{1e6 * m['bwd_s']:.0f} | {100 * errs[1]:+.1f}% |")
        med = statistics.median(abs(e) for e in long_errors)
        print(f"\nmedian |error|, shapes of 8,192 tokens or more: {100 * med:.1f}% ({len(long_errors)} times); "
              f"all: {100 * statistics.median(abs(e) for e in all_errors):.1f}% ({len(all_errors)} times)")
    print("\nunmasked against causal (the same shape; rate = FLOPs / time, causal FLOPs halved)\n")
    print("| kernel | heads x seq | fwd TFLOP/s unmasked / causal | ratio | bwd | ratio |")
    print("|---|---|---:|---:|---:|---:|")
    for k, m in measured.items():
        if k[3]:
            continue
        c = measured[(k[0], k[1], k[2], True)]
        print(f"| {k[0]} | {k[1]} x {k[2]} | {m['fwd_TFLOPS']:.0f} / {c['fwd_TFLOPS']:.0f} | "
              f"{m['fwd_TFLOPS'] / c['fwd_TFLOPS']:.2f} | {m['bwd_TFLOPS']:.0f} / {c['bwd_TFLOPS']:.0f} | "
              f"{m['bwd_TFLOPS'] / c['bwd_TFLOPS']:.2f} |")


if __name__ == "__main__":
    main()
