#!/usr/bin/env python3
"""Blind check of session 9: predictions of two training programs that are not validation/harness (programs.py:
gpt-ln, a nanoGPT-style GPT in pure bf16; hf-llama, transformers' LlamaForCausalLM under autocast) at shapes that
were never traced or timed, from ONE trace of each at one shape plus one unprofiled host-bound timing (1x32).

  blind9.py predict --gpu h100 --scalescope BIN --host-dir DIR [--set s9|s12|s15] [--host-shapes 1x32,1x256] -o predictions.json
      imports each program's trace (validation/session9/GPU/traces/) with its host timing
      (DIR/host-PROGRAM.json, run_steps.py measure --shapes 1x32) and predicts every shape of SHAPES with
        imported: `--framework` the imported stack (issue 19: compute from the user's own trace);
        builtin:  `--framework pytorch-eager` and its built-in host cost per kernel (issue 26: a new GPU's own
                  calibration, no trace; precision=bf16 for the pure-bf16 program);
      both with the GPU's one-GPU calibration (validation/session9/GPU/GPU-gpu.json + GPU-attention.json).
  blind9.py report --gpu h100 --predictions P --measured-dir DIR [-o table.md]
      errors against run_steps.py measure outputs (DIR/measured-PROGRAM.json).
Memory is compared as predicted total minus the fixed framework overhead (2 GiB, memory.hpp) against
torch.cuda.max_memory_allocated, which counts no CUDA context or allocator slack.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

PROGRAMS = {
    "gpt-ln": {"model": "validation/programs/gpt-ln-0.5b.json", "trace": "gpt-ln-mbs4-seq768", "mbs": 4, "seq": 768,
               "precision": "bf16"},
    "hf-llama": {"model": "validation/programs/hf-llama-0.9b/config.json", "trace": "hf-llama-mbs2-seq1536", "mbs": 2,
                 "seq": 1536, "precision": "mixed"},
    # Session 25: two programs never traced, timed or predicted before (transformers' Qwen3 and GPT-NeoX, from the
    # public Qwen3-0.6B and Pythia-1B configs), each traced at 4,096 tokens per micro-batch (validation/session25).
    "hf-qwen3": {"model": "validation/programs/hf-qwen3-0.6b/config.json", "trace": "hf-qwen3-mbs2-seq2048", "mbs": 2,
                 "seq": 2048, "precision": "mixed"},
    "hf-neox": {"model": "validation/programs/hf-pythia-1b/config.json", "trace": "hf-neox-mbs4-seq1024", "mbs": 4,
                "seq": 1024, "precision": "mixed"},
    # Session 26: an MoE program never traced, timed or predicted before (transformers' Qwen3MoeForCausalLM with
    # Qwen3-30B-A3B's layers, bf16 parameters), traced at 2x2048; two variants of its model (top-4 routing, 64
    # experts) run by the same program and priced from the SAME trace and host timing ("stack_of"), never traced.
    # "builtin": the built-in stack beside the import (pytorch-eager has no MoE rows; fused is Megatron-Core's).
    "hf-qwen3-moe": {"model": "validation/programs/hf-qwen3-30b-a3b-l8/config.json", "trace": "hf-qwen3-moe-mbs2-seq2048",
                     "mbs": 2, "seq": 2048, "precision": "bf16", "builtin": "fused"},
    "hf-qwen3-moe-top4": {"model": "validation/programs/hf-qwen3-30b-a3b-l8-top4/config.json", "program": "hf-qwen3-moe",
                          "stack_of": "hf-qwen3-moe", "precision": "bf16", "builtin": "fused"},
    "hf-qwen3-moe-e64": {"model": "validation/programs/hf-qwen3-30b-a3b-l8-e64/config.json", "program": "hf-qwen3-moe",
                         "stack_of": "hf-qwen3-moe", "precision": "bf16", "builtin": "fused"},
    # Session 26, third check: transformers' Qwen2-MoE (8 of Qwen1.5-MoE-A2.7B's layers: 60 experts top-4 and a shared
    # expert), never traced, timed or predicted before; trace, predictions and measurements in one call.
    "hf-qwen2-moe": {"model": "validation/programs/hf-qwen1.5-moe-a2.7b-l8/config.json", "trace": "hf-qwen2-moe-mbs2-seq2048",
                     "mbs": 2, "seq": 2048, "precision": "bf16", "builtin": "fused"},
    # Session 27: two dense programs never traced, timed or predicted before (transformers' Phi3ForCausalLM with 12 of
    # Phi-4-mini's 32 layers, Olmo2ForCausalLM as OLMo-2-0425-1B), fp32 parameters under bf16 autocast, each traced at
    # 2,048 tokens and predicted at up to 8x that (the first blind check of session 26's "scaling": "bytes" rows);
    # Phi-4-mini with all 32 layers priced from the 12-layer trace ("stack_of": a user's smaller run standing for the
    # model they will train).
    "hf-phi3": {"model": "validation/programs/hf-phi4-mini-l12/config.json", "trace": "hf-phi3-mbs1-seq2048", "mbs": 1,
                "seq": 2048, "precision": "mixed"},
    "hf-phi3-l32": {"model": "validation/programs/hf-phi4-mini/config.json", "program": "hf-phi3", "stack_of": "hf-phi3",
                    "precision": "mixed"},
    "hf-olmo2": {"model": "validation/programs/hf-olmo2-0425-1b/config.json", "trace": "hf-olmo2-mbs2-seq1024",
                 "mbs": 2, "seq": 1024, "precision": "mixed"},
    # Session 31: transformers' GPT2LMHeadModel (24 layers, hidden 1024, GPT-2's gelu_new and dropout 0.1), never
    # traced by this project, traced at 3x768 (T = 2304 and s = 768 equal no width); the same model without dropout
    # priced from the SAME trace: the import keeps the kernels its trace ran, so that control is expected too slow
    # by about the dropout's cost (validation/dropout/README.md: 3-4% of the step).
    "hf-gpt2": {"model": "validation/programs/hf-gpt2-medium/config.json", "trace": "hf-gpt2-mbs3-seq768", "mbs": 3,
                "seq": 768, "precision": "mixed"},
    "hf-gpt2-nodrop": {"model": "validation/programs/hf-gpt2-medium-nodrop/config.json", "program": "hf-gpt2",
                       "stack_of": "hf-gpt2", "precision": "mixed"},
}
# Shapes measured in the second call (never traced or timed before the predictions), smallest first.
SHAPES = {
    "gpt-ln": ["1x128", "2x512", "1x2048", "8x1024", "4x2048", "2x4096"],
    "hf-llama": ["1x128", "1x512", "4x512", "2x1024", "1x4096", "8x1024"],
}
# Session 12: shapes never traced, timed or measured before, to check the import again blind after the fixes made on
# session 9's data (validation/session9/h100/measure: optimizer host time, optimizer memory peak).
SHAPES12 = {
    "gpt-ln": ["1x256", "4x256", "2x1024", "16x512", "1x4096", "6x2048"],
    "hf-llama": ["2x256", "1x1024", "8x512", "2x2048", "4x1536", "3x4096"],
}
# Session 15: shapes never traced, timed or measured before (none in SHAPES or SHAPES12), half of them host-bound;
# the host-bound timing is now the median of 5 processes (run_steps.py measure --processes 5; session 14: one
# process's timing varies 14-28%), at the recommended 1x32 (the primary prediction) and at 1x256 (a second timing
# shape, reported beside it: session 14 found 1x32 8-9% slower than host-bound steps of 256-1024 tokens).
SHAPES15 = {
    "gpt-ln": ["1x512", "3x512", "2x1536", "12x512", "1x3072", "5x2048"],
    "hf-llama": ["1x256", "2x512", "1x1536", "3x1024", "6x1024", "2x3072"],
}
# Session 16 (prepared for the next H200 check, never traced, timed or measured in any earlier set): session 16's
# H200 repeat of SHAPES15 missed the goal with session 9's traces of another lease; the next check takes the traces
# and the calibration on the measuring lease (--session-dir) and times every measured shape as the host timing is
# timed (20 steps, median of 3 processes: session_measure9.sh MEASURE_PROCS=3 MEASURE_STEPS=20).
SHAPES16 = {
    "gpt-ln": ["2x256", "1x1024", "6x512", "3x1024", "10x1024", "3x3072"],
    "hf-llama": ["1x384", "3x256", "1x2048", "4x1024", "5x1024", "3x2048"],
}
SHAPES17 = {  # session 17: attention rows timed as GPU time (measure_attention.py); none of these measured before
    "gpt-ln": ["2x384", "1x1536", "5x512", "8x768", "4x3072", "7x2048"],
    "hf-llama": ["2x384", "1x768", "3x768", "6x768", "4x2048", "2x4096"],
}
# Session 18: steps of several micro-batches (MBSxSEQxM: M micro-batches, gradients accumulated, one optimizer step;
# run_steps.py), predicted with the import's gradient-accumulation rows (docs/stack-profile.md); no step of more than
# one micro-batch was measured before.
SHAPES18 = {
    "gpt-ln": ["2x512x4", "1x1024x8", "4x768x3", "8x512x2", "2x2048x4", "6x1024x2"],
    "hf-llama": ["1x512x6", "2x768x4", "4x512x3", "3x1024x2", "1x2048x4", "2x1536x3"],
}
# Session 18, second lease: steps of several micro-batches again, on another host, after the fix of the optimizer
# step's memory peak (models/src/memory.cpp); none of these shapes measured before.
SHAPES19 = {
    "gpt-ln": ["3x512x2", "2x1024x3", "4x1024x2", "12x512x2", "3x2048x2", "1x4096x4"],
    "hf-llama": ["2x512x2", "1x1024x3", "6x512x2", "2x2048x2", "4x1024x3", "1x3072x2"],
}
# Session 19 (prepared for the next lease): one micro-batch per step, GPU-bound shapes from small to large, measured
# with the SM clock beside them (run_steps.py --smi, as the traces): does a shape's error follow its clock against
# the trace shape's clock (validation/session19/README.md; criteria in session_clock_shapes20.sh)? None measured before.
SHAPES20 = {
    "gpt-ln": ["3x768", "6x768", "4x1536", "9x1024", "12x1024", "5x3072"],
    "hf-llama": ["4x768", "5x768", "3x1536", "7x1024", "5x2048", "3x3072"],
}
# Session 24: long sequences (6K-16K tokens), beyond every earlier set and beyond the 4,096-token attention grid; the
# lease's calibration measures attention at these lengths too (devbin/shapes.json with --seq ... 16384), so the
# prediction prices them from rows at their own shapes; `--attention-max-seq 4096` adds a control that sees only the
# rows of at most 4,096 tokens (validation/attention/longseq24: such a grid prices 8K-32K attention 23-65% slow).
SHAPES24 = {
    "gpt-ln": ["1x6144", "1x8192", "2x8192", "1x12288", "3x8192", "1x16384"],
    "hf-llama": ["1x6144", "2x6144", "1x8192", "1x12288", "2x8192", "1x16384"],
}
# Session 24, second check: each program priced from two traces (4x768 or 2x1536, and 2x8192), each shape by the trace
# nearest its tokens per micro-batch (validation/session24/nearest_trace.py); none of these measured before.
SHAPES25 = {
    "gpt-ln": ["3x1536", "2x2560", "3x2560", "1x10240", "2x6144", "4x5120"],
    "hf-llama": ["2x2560", "1x5120", "3x2560", "1x10240", "2x5120", "1x20480"],
}
# Session 25: the two new programs (PROGRAMS above) at 2,048-8,192 tokens per micro-batch, 0.5-2x their traces'; none
# traced, timed or measured before the predictions (validation/session25/README.md).
SHAPES_N25 = {
    "hf-qwen3": ["1x2048", "3x1024", "1x4096", "2x3072", "3x2048", "1x8192"],
    "hf-neox": ["2x1024", "8x512", "2x2048", "6x1024", "3x2048", "4x2048"],
}
# Session 25, second check: the same two programs in steps of several micro-batches (MBSxSEQxM, gradients accumulated:
# the import's accumulation rows, shaped on gpt-ln and hf-llama in session 17), 4,096-16,384 tokens per step at
# GPU-bound micro-batch sizes; priced from the same traces; none measured before.
SHAPES_M25 = {
    "hf-qwen3": ["1x4096x2", "2x3072x2", "1x8192x2", "2x4096x3", "4x2048x2", "1x6144x3"],
    "hf-neox": ["4x1024x2", "2x2048x3", "8x512x4", "4x2048x2", "3x2048x2", "6x1024x3"],
}
# Session 26: the MoE program at 1,024-8,192 tokens per micro-batch (0.25-2x its trace's), and its two model variants
# at the trace's shape and at 8,192 tokens; none traced, timed or measured before the predictions
# (validation/session26/README.md).
SHAPES_Q26 = {
    "hf-qwen3-moe": ["1x1024", "1x2048", "4x1024", "1x4096", "2x4096", "4x2048", "1x8192"],
    "hf-qwen3-moe-top4": ["2x2048", "1x8192"],
    "hf-qwen3-moe-e64": ["2x2048", "1x8192"],
}
# Session 26, second check (after the import's memory fix, validation/session26/README.md): the same program, trace and
# variants at shapes none measured before, larger micro-batches (up to 12,288 tokens: activation-bound memory) and
# steps of two accumulated micro-batches.
SHAPES_M26 = {
    "hf-qwen3-moe": ["3x2048", "1x6144", "2x3072x2", "1x8192x2", "4x2048x2", "1x12288"],
    "hf-qwen3-moe-top4": ["4x2048x2"],
    "hf-qwen3-moe-e64": ["4x2048", "1x12288"],
}
# Session 26, third check: the Qwen2-MoE program at 2,048-16,384 tokens per step (its trace at 2x2048); none traced,
# timed or measured before the predictions.
SHAPES_W26 = {"hf-qwen2-moe": ["1x2048", "4x1024", "1x4096", "2x4096", "1x8192", "4x2048x2"]}
# Session 27 (validation/session27/README.md): the two new programs at 1,024-16,384 tokens per step, 0.5-8x their
# traces' 2,048; none traced, timed or measured before the predictions.
SHAPES_P27 = {"hf-phi3": ["1x1024", "2x2048", "1x4096", "4x2048", "1x8192", "2x4096x2"],
              "hf-phi3-l32": ["1x2048", "1x4096"]}
SHAPES_O27 = {"hf-olmo2": ["1x1024", "4x1024", "2x2048", "1x4096", "2x4096", "4x2048x2", "4x4096"]}
# Session 31 (validation/session31/README.md): GPT-2 at 1,024-8,192 tokens per micro-batch (0.4-3.6x its trace's
# 2,304) and a step of two accumulated micro-batches; its no-dropout variant at two shapes; none measured before.
SHAPES_G31 = {"hf-gpt2": ["1x1024", "4x1024", "2x2048", "8x1024", "4x2048", "2x1024x2"],
              "hf-gpt2-nodrop": ["4x1024", "4x2048"]}
SHAPE_SETS = {"s9": SHAPES, "s12": SHAPES12, "s15": SHAPES15, "s16": SHAPES16, "s17": SHAPES17, "s18": SHAPES18,
              "s19": SHAPES19, "s20": SHAPES20, "s24": SHAPES24, "s25": SHAPES25, "n25": SHAPES_N25,
              "m25": SHAPES_M25, "q26": SHAPES_Q26, "m26": SHAPES_M26, "w26": SHAPES_W26,
              "p27": SHAPES_P27, "o27": SHAPES_O27, "g31": SHAPES_G31}
HOST_SHAPE = "1x32"
CLUSTER = {"h100": "dgx-h100-8", "h200": "hgx-h200-8"}


def run(cmd):
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}\n{r.stderr}")
    return r.stdout, r.stderr


def git_commit():
    if os.environ.get("SCALESCOPE_COMMIT"):  # the device copy of the tree has no .git
        return os.environ["SCALESCOPE_COMMIT"]
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown"


def shape_key(row):
    """A measured row's shape as the sets write it: MBSxSEQ, or MBSxSEQxM for M micro-batches per step."""
    m = row.get("micro_batches", 1)
    return f"{row['micro_batch']}x{row['seq']}" + (f"x{m}" if m > 1 else "")


def simulate(bin_, prog, shape, gpu, framework, session, attention=None):
    mbs, seq, *micro = (int(x) for x in shape.split("x"))
    p = PROGRAMS[prog]
    gbs = mbs * (micro[0] if micro else 1)
    plan = f"tp=1,pp=1,dp=1,mbs={mbs},gbs={gbs},seq={seq},precision={p['precision']}"
    attention = attention or f"{session}/{gpu}-attention.json"
    out, err = run([bin_, "simulate", "--model", p["model"], "--cluster", CLUSTER[gpu], "--gpus", "1", "--plan", plan,
                    "--framework", framework, "--calibration", f"{session}/{gpu}-gpu.json,{attention}",
                    "--format", "json"])
    doc = json.loads(out)
    return {"step_time_s": doc["step_time_s"], "memory_allocated_GiB": doc["memory_peak_GiB"] - doc["memory"]["overhead_GiB"],
            "host_wait_s": doc["breakdown"]["host_wait_s"], "warnings": [l for l in err.splitlines() if "warning" in l]}


def import_trace(scalescope, trace, model, mbs, seq, host_step_time_s, host_shape, meta, name, out, extra=()):
    """`scalescope import torch-trace` of one recorded step (TRACE.json.gz with its run_steps.py META) into OUT."""
    run([scalescope, "import", "torch-trace", trace, "--model", model, "--micro-batch", str(mbs), "--seq", str(seq),
         "--host-step-time", str(host_step_time_s), "--host-shape", host_shape, "--step-time",
         str(meta["unprofiled"]["step_time_s"]), "--software", f"torch {meta['environment']['torch']}", "--name", name,
         "-o", out, "-q", *extra])


def cmd_predict(a):
    session = a.session_dir or f"validation/session9/{a.gpu}"
    meta_dir = f"{session}/traces"
    host_shapes = a.host_shapes.split(",")
    preds = {"schema": "scalescope.blind-predictions/1", "gpu": a.gpu, "commit": git_commit(), "session_dir": session,
             "predicted_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
             "host_shape": host_shapes[0], "other_host_shapes": host_shapes[1:], "shape_set": a.set, "programs": {}}
    os.makedirs(a.work, exist_ok=True)
    grid = None  # the control: the lease's attention rows of at most --attention-max-seq tokens
    if a.attention_max_seq:
        with open(os.path.join(ROOT, session, f"{a.gpu}-attention.json")) as f:
            doc = json.load(f)
        doc["rows"] = [r for r in doc["rows"] if r["seq"] <= a.attention_max_seq]
        grid = os.path.join(a.work, f"{a.gpu}-attention-le{a.attention_max_seq}.json")
        with open(grid, "w") as f:
            json.dump(doc, f, indent=1)
        preds["attention_max_seq"] = a.attention_max_seq
    imported = {}  # program -> (meta, host rows, stacks per host shape)
    for prog in SHAPE_SETS[a.set]:  # the set's programs
        p = PROGRAMS[prog]
        if "stack_of" in p:  # another model of a traced program: that program's trace, host timing and stacks
            meta, host_rows, stacks = imported[p["stack_of"]]
        else:
            with open(os.path.join(ROOT, meta_dir, p["trace"] + ".meta.json")) as f:
                meta = json.load(f)
            with open(os.path.join(a.host_dir, f"host-{prog}.json")) as f:
                host_rows = {shape_key(r): r for r in json.load(f)["rows"]}
            stacks = {}

            def imported_stack(hs, suffix, extra=()):
                out = os.path.join(a.work, f"stack-{prog}-{a.gpu}{suffix}.json")
                import_trace(a.scalescope, f"{meta_dir}/{p['trace']}.json.gz", p["model"], p["mbs"], p["seq"],
                             host_rows[hs]["step_time_s"], hs, meta, f"{prog}-{a.gpu}", out, extra)
                return out
            for hs in host_shapes:  # one imported stack per host-timing shape; the first is the primary prediction
                if "step_time_s" not in host_rows.get(hs, {}):
                    raise SystemExit(f"{a.host_dir}/host-{prog}.json: no step_time_s for the host shape {hs}")
                stacks[hs] = imported_stack(hs, "" if hs == host_shapes[0] else f"-host{hs}")
            if a.memory_scaling_control:  # the control: every memory row by the sweep, as imports did before
                stacks["sweep"] = imported_stack(host_shapes[0], "-sweep", ("--memory-scaling", "sweep"))
            imported[prog] = (meta, host_rows, stacks)
        stack = stacks[host_shapes[0]]
        builtin = p.get("builtin", "pytorch-eager")
        rows = []
        for shape in SHAPE_SETS[a.set][prog]:
            rows.append({"shape": shape, "imported": simulate(a.scalescope, prog, shape, a.gpu, stack, session),
                         "builtin": simulate(a.scalescope, prog, shape, a.gpu, builtin, session)})
            for hs in host_shapes[1:]:
                rows[-1][f"imported_host_{hs}"] = simulate(a.scalescope, prog, shape, a.gpu, stacks[hs], session)
            if grid:
                rows[-1]["imported_attention_grid"] = simulate(a.scalescope, prog, shape, a.gpu, stack, session, grid)
            if "sweep" in stacks:
                rows[-1]["imported_memory_sweep"] = simulate(a.scalescope, prog, shape, a.gpu, stacks["sweep"], session)
            print(prog, shape, rows[-1]["imported"]["step_time_s"], rows[-1]["builtin"]["step_time_s"], flush=True)
        rel = lambda f: os.path.relpath(f, ROOT) if f.startswith(ROOT) else f  # noqa: E731
        preds["programs"][prog] = {"stack": rel(stack), "host_step_time_s": host_rows[host_shapes[0]]["step_time_s"],
                                   "builtin_framework": builtin, "model": p["model"],
                                   "trace_clock": meta.get("clock"),
                                   "host": {hs: host_rows[hs] for hs in host_shapes},
                                   "stacks": {hs: rel(f) for hs, f in stacks.items()}, "rows": rows}
    with open(a.out + ".tmp", "w") as f:
        json.dump(preds, f, indent=1)
    os.replace(a.out + ".tmp", a.out)


def clock_lines(preds, measured_dir):
    """When the trace and the measured shapes carry their SM clock (run_steps.py --smi): each GPU-bound shape's error
    beside its clock relative to the trace's, and their correlation (the criteria of session_clock_shapes20.sh)."""
    pts = []
    for prog, pp in preds["programs"].items():
        tc = (pp.get("trace_clock") or {}).get("sm_MHz_median")
        with open(os.path.join(measured_dir, f"measured-{prog}.json")) as f:
            meas = {shape_key(r): r for r in json.load(f)["rows"]}
        for row in pp["rows"]:
            m = meas.get(row["shape"], {})
            mc = (m.get("clock") or {}).get("sm_MHz_median")
            if not tc or not mc or "step_time_s" not in m:
                continue
            pred = row["imported"]
            if pred["host_wait_s"] >= 0.1 * pred["step_time_s"]:
                continue  # host-bound: the clock is not what sets its pace
            pts.append((prog, row["shape"], pred["step_time_s"] / m["step_time_s"] - 1, mc / tc - 1, mc, tc))
    if not pts:
        return []
    out = ["", "GPU-bound shapes (predicted host wait under 10%) against their SM clock (nvidia-smi median over the "
           "timed steps) relative to the trace shape's:", "", "| program | shape | error | clock / trace clock | "
           "clock (MHz) | trace clock (MHz) |", "|---|---|---:|---:|---:|---:|"]
    out += [f"| {p} | {sh} | {100 * e:+.1f}% | {100 * r:+.1f}% | {mc:.0f} | {tc:.0f} |" for p, sh, e, r, mc, tc in pts]
    if len(pts) >= 3:
        es, rs = [p[2] for p in pts], [p[3] for p in pts]
        me, mr = statistics.mean(es), statistics.mean(rs)
        sxy = sum((e - me) * (r - mr) for e, r in zip(es, rs))
        sx, sy = sum((r - mr) ** 2 for r in rs), sum((e - me) ** 2 for e in es)
        corr = sxy / (sx * sy) ** 0.5 if sx > 0 and sy > 0 else float("nan")
        out.append(f"\n- Pearson correlation of error and relative clock: {corr:+.2f} (n={len(pts)})")
    return out


def error_stats(v):
    """'median m%, p90 p%, max x% (n=N)' of |errors| v (fractions)."""
    if not v:
        return "n/a"
    q = sorted(v)
    p90 = q[min(len(q) - 1, int(round(0.9 * (len(q) - 1))))]
    return f"median {100 * statistics.median(v):.1f}%, p90 {100 * p90:.1f}%, max {100 * max(v):.1f}% (n={len(v)})"


def cmd_report(a):
    with open(a.predictions) as f:
        preds = json.load(f)
    builtins = {pp.get("builtin_framework", "pytorch-eager") for pp in preds["programs"].values()}
    builtin = "built-in eager" if builtins == {"pytorch-eager"} else "built-in " + "/".join(sorted(builtins))
    lines = [f"| program | shape | measured (s) | imported stack (s) | error | {builtin} (s) | error | "
             f"memory measured (GiB) | imported (GiB) | error |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    errs = {"imported": [], "builtin": [], "memory": []}
    variants = {hs: [] for hs in preds.get("other_host_shapes", [])}  # imported with another host-timing shape
    grid_errors = []  # imported, attention priced from the rows of at most attention_max_seq tokens
    sweep_errors = []  # imported with every memory row moved by the sweep (the control of --memory-scaling-control)
    for prog, pp in preds["programs"].items():
        with open(os.path.join(a.measured_dir, f"measured-{prog}.json")) as f:
            meas = {shape_key(r): r for r in json.load(f)["rows"]}
        for row in pp["rows"]:
            m = meas.get(row["shape"])
            if not m or "step_time_s" not in m:
                lines.append(f"| {prog} | {row['shape']} | {m.get('error', 'not measured') if m else 'not measured'} |")
                continue
            t = m["step_time_s"]
            e_i = row["imported"]["step_time_s"] / t - 1
            e_b = row["builtin"]["step_time_s"] / t - 1
            mem = m.get("peak_allocated_bytes", 0) / 2**30
            e_m = row["imported"]["memory_allocated_GiB"] / mem - 1 if mem else float("nan")
            errs["imported"].append(abs(e_i))
            errs["builtin"].append(abs(e_b))
            errs["memory"].append(abs(e_m))
            for hs, v in variants.items():
                v.append(row[f"imported_host_{hs}"]["step_time_s"] / t - 1)
            if "imported_attention_grid" in row:
                grid_errors.append(row["imported_attention_grid"]["step_time_s"] / t - 1)
            if "imported_memory_sweep" in row:
                sweep_errors.append(row["imported_memory_sweep"]["step_time_s"] / t - 1)
            lines.append(f"| {prog} | {row['shape']} | {t:.4f} | {row['imported']['step_time_s']:.4f} | {100 * e_i:+.1f}% | "
                         f"{row['builtin']['step_time_s']:.4f} | {100 * e_b:+.1f}% | {mem:.2f} | "
                         f"{row['imported']['memory_allocated_GiB']:.2f} | {100 * e_m:+.1f}% |")

    stats = error_stats
    lines += ["", f"- imported stack, step time: {stats(errs['imported'])}",
              f"- {builtin.replace('built-in eager', 'built-in pytorch-eager')}, step time: {stats(errs['builtin'])}",
              f"- imported stack, peak allocated memory: {stats(errs['memory'])}"]
    for hs, v in variants.items():
        lines.append(f"- imported stack with the host timing at {hs} instead of {preds.get('host_shape', HOST_SHAPE)}"
                     f", step time: {stats([abs(e) for e in v])} (signed: "
                     + ", ".join(f"{100 * e:+.1f}%" for e in v) + ")")
    if grid_errors:
        lines.append(f"- imported stack with attention rows of at most {preds['attention_max_seq']} tokens only, step "
                     f"time: {stats([abs(e) for e in grid_errors])} (signed: "
                     + ", ".join(f"{100 * e:+.1f}%" for e in grid_errors) + ")")
    if sweep_errors:
        lines.append(f"- imported stack with every memory row moved by the sweep (--memory-scaling sweep, imports before "
                     f"session 26), step time: {stats([abs(e) for e in sweep_errors])} (signed: "
                     + ", ".join(f"{100 * e:+.1f}%" for e in sweep_errors) + ")")
    lines += clock_lines(preds, a.measured_dir)
    text = "\n".join(lines) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    print(text)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    pr = sub.add_parser("predict")
    pr.add_argument("--gpu", required=True, choices=sorted(CLUSTER))
    pr.add_argument("--scalescope", default=os.path.join(ROOT, "build-ci", "cli", "scalescope"))
    pr.add_argument("--host-dir", required=True)
    pr.add_argument("--set", default="s9", choices=sorted(SHAPE_SETS), help="the shapes to predict (s9: session 9's, "
                    "s12: session 12's, s15: session 15's, s16: prepared in session 16, s17: session 17's, "
                    "s18, s19: session 18's steps of several micro-batches, s20: GPU-bound shapes with their "
                    "clocks, prepared in session 19, s24: long sequences, session 24; n25, m25: two new programs, session 25; "
                    "q26, m26: an MoE program and two variants of its model, w26: a second MoE program, session 26)")
    pr.add_argument("--host-shapes", default=HOST_SHAPE, help="comma list of host-timing shapes in DIR/host-PROGRAM.json"
                    "; the first predicts (\"imported\"), the others are reported beside it")
    pr.add_argument("--session-dir", default="", help="the traces (DIR/traces/) and one-GPU calibration "
                    "(DIR/GPU-gpu.json, DIR/GPU-attention.json) to predict from, as session_traces9.sh writes them "
                    "(default validation/session9/GPU: session 9's, another lease)")
    pr.add_argument("--attention-max-seq", type=int, default=0, help="also predict with only the calibration's "
                    "attention rows of at most this many tokens (\"imported_attention_grid\", a control)")
    pr.add_argument("--memory-scaling-control", action="store_true", help="also import each trace with "
                    "--memory-scaling sweep (every memory row by the sweep, as before session 26) and predict with it "
                    "(\"imported_memory_sweep\", reported beside the primary)")
    pr.add_argument("--work", default="/tmp/blind9")
    pr.add_argument("-o", "--out", required=True)
    ps = sub.add_parser("programs", help="print a set's programs, one line each: KEY PROGRAM MODEL (PROGRAM: what "
                        "run_steps.py --program runs, the key unless the entry names another)")
    ps.add_argument("set", choices=sorted(SHAPE_SETS))
    ps.add_argument("--traced", action="store_true", help="only the programs with a trace of their own (not stack_of)")
    sh = sub.add_parser("shapes", help="print a set's shapes of one program, comma-separated")
    sh.add_argument("set", choices=sorted(SHAPE_SETS))
    sh.add_argument("program", choices=sorted(PROGRAMS))
    rp = sub.add_parser("report")
    rp.add_argument("--predictions", required=True)
    rp.add_argument("--measured-dir", required=True)
    rp.add_argument("-o", "--out", default="")
    a = p.parse_args()
    if a.cmd == "programs":
        for key in SHAPE_SETS[a.set]:
            if not (a.traced and "stack_of" in PROGRAMS[key]):
                print(key, PROGRAMS[key].get("program", key), PROGRAMS[key]["model"])
        return 0
    if a.cmd == "shapes":
        print(",".join(SHAPE_SETS[a.set][a.program]))
        return 0
    (cmd_predict if a.cmd == "predict" else cmd_report)(a)


if __name__ == "__main__":
    sys.exit(main())
