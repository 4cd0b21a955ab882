#!/usr/bin/env python3
"""The H200 report's measured runs (validation/REPORT.md: validation/harness, 1/2/4 H200) priced with stacks
imported from the harness's OWN one-GPU profiler traces instead of the built-in `pytorch-eager` stack (issue 19:
"the existing H200 report regenerated with the harness's own traces as its stack").

  python3 validation/harness_stack_report.py BIN [-o validation/harness-stack/REPORT.md]

Inputs: validation/session9/h200/traces/harness-{single,zero3}-MODEL-l4-*.json.gz, 4 layers of each measured model
at 1x4096 (3x4096 for llama-7b) on one H200 (session 9; `single`: fp32 parameters under autocast, `zero3`: FSDP2 on
one process). Each trace is imported (`scalescope import torch-trace`, --layers 4) into a stack; the stack's
`applies` is narrowed to its own model (`H == hidden`), so one comma-separated `--framework` list gives each run
the stacks of its own model: the `zero3` trace's for ZeRO-2/3 plans, the `single` trace's for the rest. The host
(CPU) cost is the report's measured one (`--host-cost`, as in make_report.py): a profiled trace dilates the host.
No `--eager-bandwidth-factor` (the report's one fitted scalar): the kernels are the traced ones. Nothing is fitted.
The same runs with the report's pricing (built-in `pytorch-eager`, the fitted factor) are shown beside.

  Gradient accumulation: the importer adds the rows of micro-batches 2..m to each stack (docs/stack-profile.md,
  import step 8; session 18). They were first tried here, in session 17, after the plain run showed every
  multi-micro-batch family 3-4% fast, so this report's figure with them is IN-SAMPLE for the mechanism.
  --no-accumulation strips them (REPORT-no-accumulation.md: the figure before them)."""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACES = "validation/session9/h200/traces"
MODELS = {"llama-1b": 1, "llama-3b": 1, "qwen2-1.5b": 1, "llama-7b": 3}  # traced micro-batch at seq 4096
sys.path.insert(0, os.path.join(ROOT, "validation"))


def sh(cmd):
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(" ".join(cmd) + "\n" + r.stderr)
    return r.stdout


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("bin")
    p.add_argument("-o", "--out", default="", help="default validation/harness-stack/REPORT.md "
                   "(REPORT-no-accumulation.md with --no-accumulation)")
    p.add_argument("--work", default="/tmp/harness-stack")
    p.add_argument("--no-accumulation", action="store_true", help="strip the import's gradient-accumulation rows "
                   "(see above)")
    a = p.parse_args()
    a.out = a.out or ("validation/harness-stack/REPORT-no-accumulation.md" if a.no_accumulation
                      else "validation/harness-stack/REPORT.md")
    os.makedirs(a.work, exist_ok=True)
    stacks = []
    for model, mbs in MODELS.items():
        with open(os.path.join(ROOT, "validation/models", model + ".json")) as f:
            mcfg = json.load(f)
        hidden = mcfg["hidden"]
        for fam in ("zero3", "single"):
            name = f"harness-{fam}-{model}-l4-mbs{mbs}-seq4096"
            out = os.path.join(a.work, name + ".json")
            sh([a.bin, "import", "torch-trace", f"{TRACES}/{name}.json.gz", "--model", f"validation/models/{model}.json",
                "--micro-batch", str(mbs), "--seq", "4096", "--layers", "4", "--name", name, "-o", out, "-q"])
            with open(out) as f:
                st = json.load(f)
            st["properties"]["applies"] = f"({st['properties']['applies']}) && H == {hidden}"
            if a.no_accumulation:
                for rows in st["phases"].values():
                    rows[:] = [r for r in rows if not r["name"].startswith("gradient accumulation")]
            with open(out, "w") as f:
                json.dump(st, f, indent=1)
            stacks.append(out)
    from report_sets import SETS, HOST_COST, HOST_COST_OF  # validation/REPORT.md's sets, calibrations, host costs
    with open(os.path.join(ROOT, "validation/eager_bandwidth_factor.json")) as f:
        factor = json.load(f)["factor"]  # the report's fitted scalar, as make_report.py last wrote it
    rows, errs, base_errs, raw_errs = [], [], [], []
    for title, measured, calib in SETS:
        host = HOST_COST_OF.get(measured, HOST_COST)
        common = [a.bin, "scaling", "--measured", measured, "--calibration", calib, "--host-cost", host, "--format", "json"]
        new = json.loads(sh(common + ["--framework", ",".join(stacks)]))["curves"]
        old = json.loads(sh(common + ["--framework", "pytorch-eager", "--eager-bandwidth-factor", repr(factor)]))["curves"]
        raw = json.loads(sh(common + ["--framework", "pytorch-eager", "--eager-bandwidth-factor", "1.0"]))["curves"]
        old_err = {pt["file"]: pt["error"] for c in old for pt in c["points"]}
        raw_err = {pt["file"]: pt["error"] for c in raw for pt in c["points"]}
        seen = set()
        for c in new:
            for pt in c["points"]:
                if pt["file"] in seen:
                    continue
                seen.add(pt["file"])
                errs.append(abs(pt["error"]))
                base_errs.append(abs(old_err[pt["file"]]))
                raw_errs.append(abs(raw_err[pt["file"]]))
                rows.append((title, c["model"], pt["plan"], pt["gpus"], pt["measured_s"], pt["predicted_s"], pt["error"],
                             old_err[pt["file"]]))
        print(f"{title}: {len(seen)} runs", file=sys.stderr)

    def stat(v):
        q = sorted(v)
        return f"median {100 * statistics.median(v):.1f}%, p90 {100 * q[int(round(0.9 * (len(q) - 1)))]:.1f}%, " \
               f"max {100 * max(v):.1f}% (n={len(v)})"
    multi = [e for e, r in zip(errs, rows) if r[3] > 1]
    multi_b = [e for e, r in zip(base_errs, rows) if r[3] > 1]
    title = " without the import's gradient-accumulation rows" if a.no_accumulation else ""
    lines = ["# The H200 report priced with the harness's own traces as its stack" + title + " (issue 19)", "",
             "Generated by `python3 validation/harness_stack_report.py build-ci/cli/scalescope" +
             (" --no-accumulation" if a.no_accumulation else "") + "`; how, in its docstring.", "",
             f"- imported stacks (harness traces, nothing fitted): {stat(errs)}; runs on 2+ GPUs: {stat(multi)}",
             f"- the report's pricing (built-in pytorch-eager, one fitted factor): {stat(base_errs)}; 2+ GPUs: "
             f"{stat(multi_b)}",
             f"- built-in pytorch-eager, nothing fitted (factor 1.0): {stat(raw_errs)}", "",
             "| set | model | plan | GPUs | measured (s) | imported stacks (s) | error | report's error |",
             "|---|---|---|---:|---:|---:|---:|---:|"]
    for t, m, plan, g, ms, ps, e, eb in rows:
        lines.append(f"| {t} | {m} | {plan} | {g} | {ms:.4f} | {ps:.4f} | {100 * e:+.1f}% | {100 * eb:+.1f}% |")
    os.makedirs(os.path.dirname(os.path.join(ROOT, a.out)), exist_ok=True)
    tmp = os.path.join(ROOT, a.out + ".tmp")
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, os.path.join(ROOT, a.out))
    print("\n".join(lines[:6]))


if __name__ == "__main__":
    main()
