"""Session 38's blind check of the built-in pytorch-eager stack's memory (and step time) on five programs at model
sizes never run before: gpt-ln (pure bf16, fused GELU, bf16 logits) at hidden 2560 with a 32,000-token vocabulary,
transformers' GPT-NeoX at Pythia-410M's size (fp32 parameters under bf16 autocast, fused GELU), transformers' Llama
at TinyLlama-1.1B's size (autocast, SwiGLU, GQA, composed RMSNorm), GPT-2 at GPT-2 large's shape (gelu_new, dropout)
and Qwen3-1.7B (RMSNorm on q and k); every program steps torch.optim.AdamW with its defaults (the foreach
implementation). Two sets of predictions, both committed before the call: predictions-f70d6ab.json (the first three
programs, before the composed-norm / composed-GELU rules) and predictions.json (all five, with them).

  predict  python3 validation/session38/blind_memory.py predict --out validation/session38/predictions.json
           [--bin build-core/cli/scalescope] [--control-bin OLD]: each case on both GPU kinds that may be lent,
           by this commit's stack with optimizer_impl=foreach (primary) and =fused, and, with --control-bin, by an
           older binary (the rules before this session; it knows no optimizer_impl).
  report   python3 validation/session38/blind_memory.py report --predictions validation/session38/predictions.json
           --measured validation/session38/DIR [--out DIR/report.md]
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "validation", "eager_memory"))
import check  # noqa: E402  (the eager stack's prediction of one program shape)

# name: (program, model file, shapes). Shapes run smallest first: the first one's peak is the optimizer step's.
CASES = {
    "gpt-ln-h2560": ("gpt-ln", "validation/programs/gpt-ln-h2560-v32k.json", ["1x256", "2x2048", "4x4096", "4x8192"]),
    "neox-410m": ("hf-neox", "validation/programs/hf-pythia-410m/config.json", ["1x128", "4x2048", "8x2048", "4x8192"]),
    "tinyllama": ("hf-llama", "validation/programs/hf-tinyllama-1.1b/config.json", ["1x128", "2x2048", "4x2048",
                                                                                    "1x8192"]),
    # Added with the composed-norm and composed-GELU rules (the second predictions, before any measurement):
    # transformers' GPT-2 (gelu_new, dropout 0.1) at GPT-2 large's shape, and Qwen3-1.7B (RMSNorm on q and k).
    "gpt2-large": ("hf-gpt2", "validation/programs/hf-gpt2-large/config.json", ["1x128", "4x1024", "2x2048"]),
    "qwen3-1.7b": ("hf-qwen3", "validation/programs/hf-qwen3-1.7b/config.json", ["1x128", "1x2048", "2x2048"]),
}
GPUS = ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]
GiB = 1024 ** 3


def commit():
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()


def cmd_predict(a):
    doc = {"schema": "scalescope.eager-memory-blind/1", "commit": commit(), "control_bin": a.control_bin,
           "predicted_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "primary": "foreach", "cases": {}}
    for name, (prog, model, shapes) in CASES.items():
        for shape in shapes:
            mbs, seq = (int(x) for x in shape.split("x"))
            for gpu in GPUS:
                e = {"program": prog, "model": model, "shape": shape, "gpu": gpu,
                     "foreach": check.predict(a.bin, prog, model, gpu, mbs, seq, 1, "foreach"),
                     "fused": check.predict(a.bin, prog, model, gpu, mbs, seq, 1, "fused")}
                if a.control_bin:
                    # the rules before this session: an older binary, which knows no optimizer_impl
                    e["before"] = check.predict(a.control_bin, prog, model, gpu, mbs, seq, 1, "omit")
                doc["cases"][f"{name} {shape} {gpu}"] = e
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def cmd_report(a):
    pred = json.load(open(a.predictions))
    ways = [w for w in ("foreach", "fused", "before") if any(w in c for c in pred["cases"].values())]
    lines = [f"Predictions by commit {pred['commit']} ({pred['predicted_utc']}); measured in {a.measured}. Error = "
             "predicted / measured - 1 (memory: peak torch.cuda.max_memory_allocated over the timed steps, against "
             "the predicted peak less the model's 2 GiB of CUDA context). Primary: foreach.", "",
             "| case | measured GiB | " + " | ".join(f"{w} GiB | error" for w in ways) + " | measured s | " +
             " | ".join(f"{w} s | error" for w in ways) + " |",
             "|---|---:|" + "---:|---:|" * len(ways) + "---:|" + "---:|---:|" * len(ways)]
    mem = {w: [] for w in ways}
    tim = {w: [] for w in ways}
    for name in CASES:
        path = os.path.join(a.measured, f"measured-{name}.json")
        if not os.path.exists(path):
            continue
        m = json.load(open(path))
        gpu = m["environment"]["gpu"]
        for r in m["rows"]:
            shape = f"{r['micro_batch']}x{r['seq']}"
            c = pred["cases"].get(f"{name} {shape} {gpu}")
            if not c:
                continue
            if "peak_allocated_bytes" not in r:
                lines.append(f"| {name} {shape} | not measured ({r.get('error', 'missing')}) |")
                continue
            gib, t = r["peak_allocated_bytes"] / GiB, r["step_time_s"]
            cells_m, cells_t = [], []
            for w in ways:
                em = c[w]["allocated_GiB"] / gib - 1
                et = c[w]["step_time_s"] / t - 1
                mem[w].append(em)
                tim[w].append(et)
                cells_m.append(f"{c[w]['allocated_GiB']:.2f} | {em:+.1%}")
                cells_t.append(f"{c[w]['step_time_s']:.4f} | {et:+.1%}")
            lines.append(f"| {name} {shape} | {gib:.2f} | " + " | ".join(cells_m) + f" | {t:.4f} | " +
                         " | ".join(cells_t) + " |")
    lines += ["", "| prediction | memory median abs | memory worst | step time median abs | step time worst |",
              "|---|---:|---:|---:|---:|"]
    for w in ways:
        if mem[w]:
            worst_m, worst_t = max(mem[w], key=abs), max(tim[w], key=abs)
            lines.append(f"| {w} | {statistics.median(abs(x) for x in mem[w]):.1%} | {worst_m:+.1%} | "
                         f"{statistics.median(abs(x) for x in tim[w]):.1%} | {worst_t:+.1%} |")
    check.blind_cli.emit("\n".join(lines) + "\n", a.out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("predict")
    p.add_argument("--bin", default=os.path.join(ROOT, "build-core", "cli", "scalescope"))
    p.add_argument("--control-bin", default="")
    p.add_argument("--out", required=True)
    r = sub.add_parser("report")
    r.add_argument("--predictions", required=True)
    r.add_argument("--measured", required=True)
    r.add_argument("--out", default="")
    a = ap.parse_args()
    (cmd_predict if a.cmd == "predict" else cmd_report)(a)


if __name__ == "__main__":
    main()
