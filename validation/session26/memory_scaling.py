#!/usr/bin/env python3
"""How a trace's memory-bound kernels grow with the tokens, against the laws the import could scale them by
(validation/session26/README.md, "Why GPU-bound shapes come out fast"). In-sample analysis, nothing fitted: the two
programs traced at a short and a long shape on the same H200 lease in session 24 (gpt-ln 4x768 and 2x8192, hf-llama
2x1536 and 2x8192: 5.3x the tokens), imported by scalescope, their memory rows matched by phase, name and occurrence.

  python3 validation/session26/memory_scaling.py [--scalescope build-core/cli/scalescope]

Laws, each from the short trace's row time tA to the long shape (bytes from the row's expression at each trace's
symbols, per kernel of the row):
  sweep     tA * t_sweep(bB) / t_sweep(bA): the import's law today (ComputeModel::memory_bound), t_sweep the lease's
            back-to-back elementwise sweep (h200-gpu.json memory.elementwise), which includes each kernel's fixed
            in-stream cost;
  linear    tA * bB / bA;
  duration  tA * (t_sweep(bB) - g) / (t_sweep(bA) - g), g the sweep's own per-kernel intercept (affine through its two
            smallest rows of at least 50 MB; through the two largest it is 0.8 us: the sweep is not affine): a trace's kernel durations (CUPTI) exclude what the sweep's g is, since the
            importer prices the gaps between kernels apart (kernel_gap_s).
"""
import argparse
import collections
import json
import math
import os
import re
import subprocess
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
S24 = "validation/session24"
PAIRS = [("gpt-ln", "validation/programs/gpt-ln-0.5b.json", (4, 768), (2, 8192)),
         ("hf-llama", "validation/programs/hf-llama-0.9b/config.json", (2, 1536), (2, 8192))]


def trace_of(prog, mbs, seq):
    d = "traces9-h200-s24/traces" if seq < 8192 else "longtrace-h200/traces"
    return f"{S24}/{d}/{prog}-mbs{mbs}-seq{seq}.json.gz"


def c_expr(e):
    """A stack expression in Python: C's `a ? b : c` (not nested in these rows) and `&&`, `||`."""
    e = e.replace("&&", " and ").replace("||", " or ")
    m = re.fullmatch(r"(.*)\((.*)\?(.*):(.*)\)(.*)", e)
    return f"{m[1]}(({m[3]}) if ({m[2]}) else ({m[4]})){m[5]}" if m else e


def value(expr, sym):
    return eval(c_expr(expr), {"__builtins__": {}, "max": max, "min": min}, dict(sym))  # noqa: S307 (our own files)


def sweep_of(profile):
    pts = sorted((r["bytes"], r["time_us"] * 1e-6) for r in profile["memory"]["elementwise"])
    big = [p for p in pts if p[0] >= 50e6][:2]
    slope = (big[1][1] - big[0][1]) / (big[1][0] - big[0][0])
    g = big[0][1] - slope * big[0][0]

    def t(n):
        if n <= pts[0][0]:
            return pts[0][1]
        if n >= pts[-1][0]:
            return pts[-1][1] * n / pts[-1][0]
        for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
            if x0 <= n <= x1:
                f = (math.log(n) - math.log(x0)) / (math.log(x1) - math.log(x0))
                return math.exp(math.log(y0) + f * (math.log(y1) - math.log(y0)))
    return t, g


def rows(stack, phase):
    seen, out = collections.Counter(), {}
    for r in stack["phases"].get(phase, []):
        if r.get("kind") != "memory":
            continue
        seen[r["name"]] += 1
        out[(r["name"], seen[r["name"]])] = r
    return out


def family(name):
    if "Memset" in name:
        return "memset"
    if "reduce_kernel" in name:
        return "reduction"
    return "elementwise"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scalescope", default=os.path.join(ROOT, "build-core", "cli", "scalescope"))
    a = ap.parse_args()
    with open(os.path.join(ROOT, f"{S24}/traces9-h200-s24/h200-gpu.json")) as f:
        t_sweep, g = sweep_of(json.load(f))
    laws = {"sweep": lambda ta, ba, bb: ta * t_sweep(bb) / t_sweep(ba),
            "linear": lambda ta, ba, bb: ta * bb / ba,
            "duration": lambda ta, ba, bb: ta * max(t_sweep(bb) - g, 1e-7) / max(t_sweep(ba) - g, 1e-7)}
    print(f"sweep intercept g = {g * 1e6:.2f} us per kernel (h200-gpu.json of {S24}/traces9-h200-s24)\n")
    print("| program | phase | family | rows | short trace (ms) | long trace (ms) | " +
          " | ".join(laws) + " |\n|---|---|---|---:|---:|---:|" + "---:|" * len(laws))
    with tempfile.TemporaryDirectory() as tmp:
        for prog, model, (ma, sa_), (mb, sb_) in PAIRS:
            stacks = []
            for mbs, seq in ((ma, sa_), (mb, sb_)):
                out = os.path.join(tmp, f"{prog}-{seq}.json")
                subprocess.run([a.scalescope, "import", "torch-trace", trace_of(prog, mbs, seq), "--model", model,
                                "--micro-batch", str(mbs), "--seq", str(seq), "-o", out, "-q"], cwd=ROOT, check=True,
                               capture_output=True)
                with open(out) as f:
                    stacks.append(json.load(f))
            A, B = stacks
            for phase in ("layer_forward", "layer_backward"):
                ra, rb = rows(A, phase), rows(B, phase)
                acc = collections.defaultdict(collections.Counter)
                for key, x in ra.items():
                    y = rb.get(key)
                    if not y or "time_s" not in x or "time_s" not in y:
                        continue
                    try:
                        k = x.get("kernels", 1)
                        ba = value(x["bytes"], A["trace"]["symbols"]) / k
                        bb = value(y["bytes"], B["trace"]["symbols"]) / k
                    except (SyntaxError, NameError, ZeroDivisionError):
                        continue
                    for fam in (family(key[0]), "all"):
                        c = acc[fam]
                        c["rows"] += 1
                        c["A"] += x["time_s"]
                        c["B"] += y["time_s"]
                        for law, f in laws.items():
                            c[law] += f(x["time_s"], ba, bb)
                for fam in ("elementwise", "reduction", "memset", "all"):
                    c = acc.get(fam)
                    if not c:
                        continue
                    print(f"| {prog} | {phase[6:]} | {fam} | {c['rows']} | {1e3 * c['A']:.3f} | {1e3 * c['B']:.3f} | " +
                          " | ".join(f"{100 * (c[law] / c['B'] - 1):+.1f}%" for law in laws) + " |")


if __name__ == "__main__":
    main()
