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
Programs: programs.py. Tokens and labels are random (fixed seed), the same batch every step.
"""
import argparse
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
import programs  # noqa: E402


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


def host_timing_of(a, program):
    """The host-bound timing of another program (--host-program), in its own process: one process holds one
    default process group, and a -dtpN program's is a fake one of N ranks."""
    tmp = os.path.join(a.out, f".host-{os.getpid()}.json")
    os.makedirs(a.out, exist_ok=True)
    cmd = [sys.executable, os.path.abspath(__file__), "measure", "--program", program, "--model", a.model,
           "--shapes", a.host_shape, "--steps", str(a.host_steps), "--out", tmp, "--device", a.device]
    if a.layers:
        cmd += ["--layers", str(a.layers)]
    subprocess.run(cmd, check=True)
    with open(tmp) as f:
        doc = json.load(f)
    os.remove(tmp)
    doc["method"] = f"run_steps.py measure of program {program} in its own process before the trace: " + doc["method"]
    return doc


def cmd_trace(a, device):
    host = host_timing_of(a, a.host_program) if a.host_shape and a.host_program else None
    step, vocab, cfg, notes = programs.build(a.program, a.model, a.layers, device)
    if a.host_shape and not a.host_program:
        host = host_timing(a, step, vocab, device, notes)
    x, y = batch(vocab, a.mbs, a.seq, device)
    with programs.sdpa_context(a.program, device):
        timed_steps(step, x, y, device, 3)
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        walls = timed_steps(step, x, y, device, 8)
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
    name = a.name or f"{a.program}-mbs{a.mbs}-seq{a.seq}"
    raw = os.path.join(a.out, name + ".json")
    prof.export_chrome_trace(raw)
    with open(raw, "rb") as f_in, gzip.open(raw + ".gz", "wb", compresslevel=6) as f_out:
        shutil.copyfileobj(f_in, f_out)
    os.remove(raw)
    meta = {"schema": "scalescope.trace-recording/1", "program": a.program, "model_file": a.model,
            "layers": a.layers or None, "micro_batch": a.mbs, "seq": a.seq, "trace": name + ".json.gz",
            "unprofiled": summary(walls), "peak_allocated_bytes": peak, "notes": notes,
            "host": {"shape": a.host_shape, "step_time_s": host["rows"][0]["step_time_s"],
                     "file": name + ".host.json", "program": a.host_program or a.program} if host else None,
            "profiler": "activities CPU+CUDA, record_shapes=True, profile_memory=True, schedule(wait=1, warmup=1, "
                        "active=1), export_chrome_trace", "environment": environment()}
    write_json(os.path.join(a.out, name + ".meta.json"), meta)
    if host:
        write_json(os.path.join(a.out, name + ".host.json"), host)
    print(json.dumps({k: meta[k] for k in ("program", "micro_batch", "seq", "unprofiled")}), flush=True)


def cmd_measure(a, device):
    step, vocab, cfg, notes = programs.build(a.program, a.model, a.layers, device)
    rows = []
    for text in a.shapes.split(","):
        mbs, seq = (int(v) for v in text.lower().split("x"))
        row = {"micro_batch": mbs, "seq": seq}
        try:
            x, y = batch(vocab, mbs, seq, device)
            with programs.sdpa_context(a.program, device):
                timed_steps(step, x, y, device, 3)
                if device.type == "cuda":
                    torch.cuda.reset_peak_memory_stats(device)
                walls = timed_steps(step, x, y, device, a.steps)
            row.update(summary(walls))
            if device.type == "cuda":
                row["peak_allocated_bytes"] = torch.cuda.max_memory_allocated(device)
        except torch.cuda.OutOfMemoryError as e:
            row["error"] = f"out of memory: {str(e)[:300]}"
        x = y = None
        if device.type == "cuda":
            torch.cuda.empty_cache()
        rows.append(row)
        print(json.dumps({k: row.get(k) for k in ("micro_batch", "seq", "step_time_s", "peak_allocated_bytes",
                                                   "error")}), flush=True)
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
    p.add_argument("--shapes", default="", help="measure: MBSxSEQ,... e.g. 1x128,2x512")
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--host-shape", default="", help="trace: also time this MBSxSEQ unprofiled first (e.g. 1x32)")
    p.add_argument("--host-steps", type=int, default=20)
    p.add_argument("--host-program", default="", help="trace: time --host-shape with this program instead (e.g. "
                   "gpt-ln-dtp2 beside a gpt-ln-dtp trace: DTensor's host path at TP 2, on this GPU)")
    p.add_argument("--out", required=True)
    p.add_argument("--name", default="")
    p.add_argument("--device", default="cuda")
    a = p.parse_args()
    device = torch.device(a.device)
    if device.type == "cuda":
        device = torch.device("cuda", device.index or 0)
        torch.cuda.set_device(device)
    (cmd_trace if a.mode == "trace" else cmd_measure)(a, device)


if __name__ == "__main__":
    main()
