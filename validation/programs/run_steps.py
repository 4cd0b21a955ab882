#!/usr/bin/env python3
"""Records a one-GPU PyTorch profiler trace of a training program, or times it at several (micro-batch, seq) shapes.

  run_steps.py trace   --program P --model FILE --mbs B --seq S [--layers N] --out DIR [--name NAME]
                       [--host-shape 1x32 [--host-steps 20]]
      (--host-shape: first the unprofiled host-bound timing the importer needs, in the same process, to
      DIR/NAME.host.json in the format of `measure`; then as follows.)
      3 warm-up steps, 8 unprofiled steps (wall time per step, each step synchronised; the peak of
      torch.cuda.max_memory_allocated over them), then torch.profiler over 3 steps (schedule wait 1, warm-up 1,
      active 1) with activities CPU + CUDA, record_shapes=True, profile_memory=True -- the settings a user would
      pick -- exported with export_chrome_trace to DIR/NAME.json and gzipped. DIR/NAME.meta.json holds the
      program, model, shape, unprofiled step times, peak memory and the software versions.
  run_steps.py measure --program P --model FILE --shapes 1x128,2x512,... --out FILE.json [--steps 10]
      per shape (in the order given, one process, one model): 3 warm-up steps, then --steps steps, each timed by
      wall clock between synchronisations; median and spread, and torch.cuda.max_memory_allocated over the timed
      steps (reset after the warm-up). A shape that runs out of memory is recorded as such.
      --processes N: the same in N processes one after another; each shape's step time is the median of the N
      processes' medians, with every process's median and their spread kept (session 14: one host-bound step
      differs by 14-28% between processes on one idle machine, so one process's timing is a poor host cost).
      trace --host-processes N times --host-shape that way (in its own processes) instead of in the trace's.
  --smi (trace and measure): nvidia-smi samples the GPU every 100 ms beside the run; each measured shape's row, and
      the trace's unprofiled steps in its meta, get "clock": the median SM clock and power of the samples taken
      during their timed steps and the share with the power-cap reason set (validation/clocks/smi.py). The kernel
      times a trace anchors carry the clock of its shape; a shape measured at another clock differs by the ratio on
      its GEMMs (validation/session19/README.md).
Programs: programs.py. Tokens and labels are random (fixed seed), the same batch every step.
"""
import argparse
import functools
import gzip
import json
import os
import shutil
import subprocess
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clocks"))
import programs  # noqa: E402
from smi import Sampler  # noqa: E402  (validation/clocks/smi.py: nvidia-smi beside the timed steps)


def environment():
    cuda = torch.cuda.is_available()
    return {"gpu": torch.cuda.get_device_name(0) if cuda else "cpu", "torch": torch.__version__,
            "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version() if cuda else None,
            "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "host_cpus": os.cpu_count()}


def batch(vocab, mbs, seq, device):
    g = torch.Generator(device=device).manual_seed(1234)
    x = torch.randint(0, vocab, (mbs, seq), generator=g, device=device)
    y = torch.randint(0, vocab, (mbs, seq), generator=g, device=device)
    return x, y


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def parse_shape(text):
    """MBSxSEQ, or MBSxSEQxM for a step of M micro-batches (gradient accumulation, one optimizer step)."""
    parts = [int(v) for v in text.lower().split("x")]
    if len(parts) not in (2, 3) or min(parts) < 1:
        raise SystemExit(f"shape '{text}': expected MBSxSEQ or MBSxSEQxM with positive integers")
    return parts[0], parts[1], parts[2] if len(parts) == 3 else 1


def timed_steps(step, x, y, device, n):
    walls = []
    for _ in range(n):
        sync(device)
        t0 = time.perf_counter()
        step(x, y)
        sync(device)
        walls.append(time.perf_counter() - t0)
    return walls


def summary(walls):
    q = statistics.quantiles(walls, n=10, method="inclusive") if len(walls) > 1 else [walls[0]] * 9
    return {"step_time_s": statistics.median(walls), "step_time_s_p10": q[0], "step_time_s_p90": q[-1],
            "step_times_s": [round(w, 6) for w in walls]}


def write_json(path, doc):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)


def host_timing(a, step, vocab, device, notes):
    """The unprofiled host-bound timing (--host-shape, GPU idle) the importer needs, in the format of `measure`."""
    mbs, seq = (int(v) for v in a.host_shape.lower().split("x"))
    x, y = batch(vocab, mbs, seq, device)
    with programs.sdpa_context(a.program, device):
        timed_steps(step, x, y, device, 3)
        walls = timed_steps(step, x, y, device, a.host_steps)
    doc = {"schema": "scalescope.program-measurement/1", "program": a.program, "model_file": a.model,
           "layers": a.layers or None, "method": f"in the trace's process before it: 3 warm-up steps, then "
           f"{a.host_steps} steps each timed by wall clock between torch.cuda.synchronize() calls; median",
           "notes": notes, "environment": environment(), "rows": [dict(micro_batch=mbs, seq=seq, **summary(walls))]}
    return doc


def measure_in_processes(program, model, layers, shapes, steps, device, n, tmp_dir, smi=False):
    """`measure` of `shapes` in n processes one after another: each shape's step time is the median of the n
    processes' medians; every process's median and their max/min are kept."""
    os.makedirs(tmp_dir, exist_ok=True)
    docs = []
    for k in range(n):
        tmp = os.path.join(tmp_dir, f".measure-{os.getpid()}-{k}.json")
        cmd = [sys.executable, os.path.abspath(__file__), "measure", "--program", program, "--model", model,
               "--shapes", shapes, "--steps", str(steps), "--out", tmp, "--device", device] + (["--smi"] if smi else [])
        if layers:
            cmd += ["--layers", str(layers)]
        subprocess.run(cmd, check=True)
        with open(tmp) as f:
            docs.append(json.load(f))
        os.remove(tmp)
        if os.path.exists(tmp + ".smi.csv"):
            os.remove(tmp + ".smi.csv")
    doc = docs[0]
    for i, row in enumerate(doc["rows"]):
        per = [d["rows"][i].get("step_time_s") for d in docs]
        if any(v is None for v in per):  # out of memory in some process: keep the first process's row
            continue
        row["step_time_s"] = statistics.median(per)
        row["step_time_s_processes"] = [round(v, 6) for v in per]
        row["process_spread"] = round(max(per) / min(per), 4)
        row.pop("step_times_s", None)
        row.pop("step_time_s_p10", None)
        row.pop("step_time_s_p90", None)
        clocks = [d["rows"][i].get("clock") for d in docs]
        if all(clocks):
            row["clock"] = {"sm_MHz_median": statistics.median(c["sm_MHz_median"] for c in clocks),
                            "power_W_median": statistics.median(c["power_W_median"] for c in clocks),
                            "power_cap_share": statistics.median(c["power_cap_share"] for c in clocks),
                            "processes": clocks}
    if n > 1:
        doc["method"] = (f"in {n} processes one after another, each: " + doc["method"] +
                         f"; the median of the {n} processes' medians (step_time_s_processes: each one's)")
    return doc


def host_timing_of(a, program):
    """The host-bound timing of a program in its own processes (--host-program: one process holds one default
    process group, and a -dtpN program's is a fake one of N ranks; --host-processes N: the median of N)."""
    doc = measure_in_processes(program, a.model, a.layers, a.host_shape, a.host_steps, a.device,
                               max(1, a.host_processes), a.out)
    doc["method"] = f"run_steps.py measure of program {program} in its own process(es) before the trace: " + \
        doc["method"]
    return doc


def cmd_trace(a, device):
    own_process = a.host_shape and not a.host_program and a.host_processes <= 0
    host = host_timing_of(a, a.host_program or a.program) if a.host_shape and not own_process else None
    step, vocab, cfg, notes = programs.build(a.program, a.model, a.layers, device)
    if own_process:
        host = host_timing(a, step, vocab, device, notes)
    x, y = batch(vocab, a.mbs, a.seq, device)
    name = a.name or f"{a.program}-mbs{a.mbs}-seq{a.seq}"
    micro = a.micro_batches
    if micro > 1:  # a step of several micro-batches (gradient accumulation), for diagnosis: the importer wants one
        notes = notes + [f"traced step of {micro} micro-batches (gradients accumulated)"]
        step = functools.partial(step, micro=micro)
    with programs.sdpa_context(a.program, device):
        timed_steps(step, x, y, device, 3)
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        sampler = None
        if a.smi:
            os.makedirs(a.out, exist_ok=True)
            sampler = Sampler(os.path.join(a.out, name + ".smi.csv"))
        t0 = time.time()
        walls = timed_steps(step, x, y, device, 8)
        t1 = time.time()
        clock = None
        if sampler:
            sampler.stop()
            clock = sampler.window(t0, t1)
        peak = torch.cuda.max_memory_allocated(device) if device.type == "cuda" else 0
        acts = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA]
                                                        if device.type == "cuda" else [])
        sched = torch.profiler.schedule(wait=1, warmup=1, active=1)
        with torch.profiler.profile(activities=acts, schedule=sched, record_shapes=True,
                                    profile_memory=True) as prof:
            for _ in range(3):
                step(x, y)
                prof.step()
        sync(device)
    os.makedirs(a.out, exist_ok=True)
    raw = os.path.join(a.out, name + ".json")
    prof.export_chrome_trace(raw)
    with open(raw, "rb") as f_in, gzip.open(raw + ".gz", "wb", compresslevel=6) as f_out:
        shutil.copyfileobj(f_in, f_out)
    os.remove(raw)
    meta = {"schema": "scalescope.trace-recording/1", "program": a.program, "model_file": a.model,
            "layers": a.layers or None, "micro_batch": a.mbs, "seq": a.seq, "micro_batches": micro,
            "trace": name + ".json.gz",
            "unprofiled": summary(walls), "peak_allocated_bytes": peak, "notes": notes,
            "clock": clock,
            "host": {"shape": a.host_shape, "step_time_s": host["rows"][0]["step_time_s"],
                     "file": name + ".host.json", "program": a.host_program or a.program} if host else None,
            "profiler": "activities CPU+CUDA, record_shapes=True, profile_memory=True, schedule(wait=1, warmup=1, "
                        "active=1), export_chrome_trace", "environment": environment()}
    write_json(os.path.join(a.out, name + ".meta.json"), meta)
    if host:
        write_json(os.path.join(a.out, name + ".host.json"), host)
    print(json.dumps({k: meta[k] for k in ("program", "micro_batch", "seq", "unprofiled")}), flush=True)


def cmd_measure(a, device):
    if a.processes > 1:
        write_json(a.out, measure_in_processes(a.program, a.model, a.layers, a.shapes, a.steps, a.device,
                                               a.processes, os.path.dirname(os.path.abspath(a.out)), a.smi))
        return
    step, vocab, cfg, notes = programs.build(a.program, a.model, a.layers, device)
    rows, windows = [], []
    sampler = Sampler(a.out + ".smi.csv") if a.smi else None
    for text in a.shapes.split(","):
        mbs, seq, micro = parse_shape(text)
        row = {"micro_batch": mbs, "seq": seq}
        if micro > 1:
            row["micro_batches"] = micro
        try:
            x, y = batch(vocab, mbs, seq, device)
            run = functools.partial(step, micro=micro)  # every program's step takes its micro-batches per step
            with programs.sdpa_context(a.program, device):
                timed_steps(run, x, y, device, 3)
                if device.type == "cuda":
                    torch.cuda.reset_peak_memory_stats(device)
                t0 = time.time()
                walls = timed_steps(run, x, y, device, a.steps)
                windows.append((row, t0, time.time()))
            row.update(summary(walls))
            if device.type == "cuda":
                row["peak_allocated_bytes"] = torch.cuda.max_memory_allocated(device)
        except torch.cuda.OutOfMemoryError as e:
            row["error"] = f"out of memory: {str(e)[:300]}"
        x = y = None
        if device.type == "cuda":
            torch.cuda.empty_cache()
        rows.append(row)
        print(json.dumps({k: row.get(k) for k in ("micro_batch", "seq", "micro_batches", "step_time_s",
                                                   "peak_allocated_bytes", "error")}), flush=True)
    if sampler:
        sampler.stop()
        for row, t0, t1 in windows:
            row["clock"] = sampler.window(t0, t1)
    doc = {"schema": "scalescope.program-measurement/1", "program": a.program, "model_file": a.model,
           "layers": a.layers or None, "method": f"3 warm-up steps, then {a.steps} steps each timed by wall clock "
           "between torch.cuda.synchronize() calls; median; peak torch.cuda.max_memory_allocated over the timed steps",
           "notes": notes, "environment": environment(), "rows": rows}
    write_json(a.out, doc)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["trace", "measure"])
    p.add_argument("--program", required=True)
    p.add_argument("--model", required=True, help="the program's model file (scalescope native JSON or HF config)")
    p.add_argument("--layers", type=int, default=0, help="build with this many layers (default: the file's)")
    p.add_argument("--mbs", type=int, default=1)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--micro-batches", type=int, default=1, help="trace: a step of this many micro-batches (gradient "
                   "accumulation; for diagnosis, the importer takes a one-micro-batch step)")
    p.add_argument("--shapes", default="", help="measure: MBSxSEQ[xM],... e.g. 1x128,2x512,4x512x4 (xM: M "
                   "micro-batches per optimizer step, gradients accumulated)")
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--host-shape", default="", help="trace: also time this MBSxSEQ unprofiled first (e.g. 1x32)")
    p.add_argument("--host-steps", type=int, default=20)
    p.add_argument("--host-program", default="", help="trace: time --host-shape with this program instead (e.g. "
                   "gpt-ln-dtp2 beside a gpt-ln-dtp trace: DTensor's host path at TP 2, on this GPU)")
    p.add_argument("--processes", type=int, default=1, help="measure: in this many processes, the median of "
                   "theirs (host-bound steps vary from process to process)")
    p.add_argument("--host-processes", type=int, default=0, help="trace: time --host-shape in this many processes "
                   "of its own (median) instead of in the trace's process")
    p.add_argument("--smi", action="store_true", help="record the SM clock and power of the timed steps "
                   "(nvidia-smi every 100 ms; see the module's help)")
    p.add_argument("--out", required=True)
    p.add_argument("--name", default="")
    p.add_argument("--device", default="cuda")
    a = p.parse_args()
    if a.processes < 1 or a.host_processes < 0:
        p.error("--processes must be at least 1 and --host-processes at least 0")
    device = torch.device(a.device)
    if device.type == "cuda":
        device = torch.device("cuda", device.index or 0)
        torch.cuda.set_device(device)
    (cmd_trace if a.mode == "trace" else cmd_measure)(a, device)


if __name__ == "__main__":
    main()
