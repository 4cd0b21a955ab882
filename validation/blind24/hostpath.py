#!/usr/bin/env python3
"""Part G of issue 24 (session 15): what sets the host path of the slower rank in a real N-rank FSDP2 step?

Session 13 (validation/blind24/session13/README.md, "What remains open"): the host-bound gpt-ln ZeRO-2/3 points
are predicted 23-36% too fast from a one-GPU trace (kernels) plus the host-bound timing of FSDP2 on a fake N-rank
mesh (1x32, one process, GPU idle), and real launches of one point vary 0.075-0.099 s. Session 14: one host-bound
step differs by 14-28% between processes run one after another. Three explanations, each a different
--host-step-time for the SAME scalescope prediction (same trace, same plan, same calibration):
  (a) "seq"          process-to-process noise: the median of 3 processes run one after another on GPU 0
                     (run_steps.py measure --processes 3), as session 14 proposed;
  (b) "conc-median"  N processes on one host at once (contention): M processes of the fake-mesh program at the
                     same time, process i on GPU i, each timed; the median of all their medians over the rounds;
  (c) "conc-max"     the step waits for the slowest of the N ranks: the mean over rounds of the slowest of that
                     round's M concurrent processes.
The session (validation/device/session_hostpath15.sh) runs, in this order: environment and node file, fabric
calibration, ONE one-GPU profiler trace of gpt-ln-fsdp at 8x1024, the host-bound timings (per M in {2, NGPU}:
concurrent round 1, sequential processes, concurrent round 2), then `predict` (the three variants of every point,
written to predictions-G.json and packed) BEFORE any point is measured; then `measure` under torchrun, 3 launches
per world size, alternating world sizes (n2 L1, n4 L1, n2 L2, ...); then `report`.

  hostpath.py vars --ngpu N                 shell assignments for the session script (trace, model, host programs)
  hostpath.py estimate --ngpu N [--launch-s WORLD]   stage estimates (or one launch's estimate, in whole seconds)
  hostpath.py list --ngpu N                 the points and their plans
  hostpath.py host --mode seq|conc --m M [--round R] --out DIR   one host-bound timing stage (JSON into DIR)
  hostpath.py predict --ngpu N --scalescope BIN --traces DIR --host DIR --cluster C --calibration CAL --work DIR -o F
  torchrun --nproc-per-node n hostpath.py measure --ngpu N --launch K --out DIR --deadline UNIX
  hostpath.py report --predictions F --launches DIR -o report-G.md --json report-G.json
Points (ZeRO via FSDP2, gpt-ln, gpt-ln-0.5b-h20, bf16), for n in {2, NGPU}: zero3 8x1024, zero3 2x2048 (a shape no
earlier part measured), zero2 8x1024. run_points.py knows only parts A-F, so `measure` runs these Point objects
itself with run_points.measure (the same timing: barrier, synchronise, slowest rank, median) and families.build.
BLIND24_CPU_TEST=DIR (the session's CPU dry run, check_hostpath_cpu.sh): tiny models written into DIR.
"""
import argparse
import dataclasses
import datetime
import gc
import glob
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
RUN_STEPS = os.path.join(ROOT, "validation", "programs", "run_steps.py")
sys.path.insert(0, HERE)
import points as P  # noqa: E402  (no torch)

HOST_SHAPE = "1x32"
VARIANTS = ("seq", "conc-median", "conc-max")
VARIANT_TEXT = {"seq": "(a) process-to-process noise: median of processes one after another on GPU 0",
                "conc-median": "(b) contention: median of M processes at once, one per GPU",
                "conc-max": "(c) slowest rank: mean over rounds of the slowest of M processes at once"}
# Estimates (s): a gpt-ln launch ~25 s + ~6 s per point, one host-timing process ~15 s, the trace ~35 s, the
# fabric calibration 45 s (its stage: + process start).
LAUNCH_S, POINT_S, HOST_PROCESS_S, TRACE_S, CAL_S = 25.0, 6.0, 15.0, 35.0, 45.0
FIXED_S = {"environment": 5.0, "predict": 15.0, "report": 3.0}
# shapes of every world size: (family, zero, mbs, seq), in measurement order
SHAPES = (("zero3", 3, 8, 1024), ("zero3", 3, 2, 2048), ("zero2", 2, 8, 1024))


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def write_json(path, doc):
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def load(path):
    with open(path) as f:
        return json.load(f)


def cpu_test_dir():
    return os.environ.get("BLIND24_CPU_TEST", "")


def world_sizes(ngpu):
    return sorted({2, ngpu})


def trace():
    """The one one-GPU trace: gpt-ln under FSDP2 on a one-process group (its kernels), no host timing of its own."""
    t = P.Trace("gpt-ln-fsdp", "G", "gpt-ln-fsdp", P.GPT, 8, 1024, TRACE_S)
    if cpu_test_dir():
        import tiny
        t = tiny.trace(t, cpu_test_dir())
    return t


def host_model():
    return trace().model


def stack_key(m, variant):
    return f"gpt-ln-fsdp-m{m}-{variant}"


def points(ngpu, tiny_dir=None):
    """The points of every world size (2, NGPU), measurement order within a world size."""
    out = []
    for n in world_sizes(ngpu):
        for family, zero, mbs, seq in SHAPES:
            p = P.Point(f"gpt-ln.{family}-hp.n{n}.{mbs}x{seq}", part="G", group="zero-hostpath", program="gpt-ln",
                        family=family, model=P.GPT, stacks=[f"gpt-ln-fsdp-m{n}"], gpus=n, mbs=mbs, seq=seq,
                        gbs=mbs * n, dp=n, zero=zero, precision="bf16", est_s=POINT_S)
            if tiny_dir:
                import tiny
                p = tiny.point(p, tiny_dir)
            out.append(p)
    return out


def stage_estimates(ngpu, processes=3, rounds=2, launches=3):
    """[(stage, seconds)] in the order the session runs them."""
    out = [("environment", FIXED_S["environment"]), ("calibrate", CAL_S), ("trace", TRACE_S)]
    for m in world_sizes(ngpu):
        for r in range(1, rounds + 1):
            out.append((f"host-m{m}-conc-r{r}", HOST_PROCESS_S))  # M processes at once: one process's time
            if r == 1:
                out.append((f"host-m{m}-seq", processes * HOST_PROCESS_S))
    out.append(("predict", FIXED_S["predict"]))
    for k in range(1, launches + 1):
        for n in world_sizes(ngpu):
            out.append((f"measure-n{n}-L{k}", launch_estimate(n)))
    out.append(("report", FIXED_S["report"]))
    return out


def launch_estimate(n):
    """A launch of world size n: process start (points.LAUNCH_S: 25 s at 2, 30 s at 4) and its points."""
    return P.LAUNCH_S.get(n, LAUNCH_S) + POINT_S * len(SHAPES)


# ---------------------------------------------------------------------------------------------- host timings


def run_logged(cmd, env=None):
    print("$ " + " ".join(shlex.quote(c) for c in cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, cwd=ROOT, env=env).returncode


def host_seq(a):
    """(a) run_steps.py measure --processes N on GPU 0: processes one after another (the tool's median of medians)."""
    raw = os.path.join(a.out, f"seq-m{a.m}.measure.json")
    cmd = [sys.executable, RUN_STEPS, "measure", "--program", f"gpt-ln-fsdp{a.m}", "--model", a.model, "--shapes",
           HOST_SHAPE, "--steps", str(a.steps), "--processes", str(a.processes), "--out", raw, "--device", a.device]
    env = dict(os.environ)
    if a.device == "cuda":
        env["CUDA_VISIBLE_DEVICES"] = "0"
    t0 = now_utc()
    rc = run_logged(cmd, env)
    doc = {"schema": "scalescope.hostpath-host/1", "mode": "seq", "m": a.m, "program": f"gpt-ln-fsdp{a.m}",
           "shape": HOST_SHAPE, "command": ("CUDA_VISIBLE_DEVICES=0 " if a.device == "cuda" else "") + " ".join(cmd),
           "exit": rc, "started_utc": t0, "finished_utc": now_utc()}
    if rc == 0 and os.path.exists(raw):
        m = load(raw)
        row = m["rows"][0]
        per = row.get("step_time_s_processes") or [round(row["step_time_s"], 6)]
        doc.update(step_time_s=row["step_time_s"], processes=per, process_spread=round(max(per) / min(per), 4),
                   measurement=m)
    write_json(os.path.join(a.out, f"seq-m{a.m}.json"), doc)
    print(json.dumps({k: doc.get(k) for k in ("mode", "m", "exit", "step_time_s", "processes")}), flush=True)
    return 0 if "step_time_s" in doc else 1


def host_conc(a):
    """(b)/(c) one round: M processes of the fake-mesh program at once, process i on GPU i (CUDA_VISIBLE_DEVICES=i),
    each to its own file. They wait for each other after their warm-up (a file barrier), so that the timed steps
    of all M overlap, and each keeps stepping (untimed) until all M have finished their timed steps."""
    barrier = os.path.join(a.out, f".barrier-m{a.m}-r{a.round}")
    os.makedirs(barrier, exist_ok=True)
    for f in glob.glob(os.path.join(barrier, "*")):
        os.remove(f)
    procs, cmds, outs = [], [], []
    t0 = now_utc()
    for i in range(a.m):
        out = os.path.join(a.out, f"conc-m{a.m}-r{a.round}-p{i}.json")
        cmd = [sys.executable, os.path.abspath(__file__), "worker", "--program", f"gpt-ln-fsdp{a.m}", "--model",
               a.model, "--shape", HOST_SHAPE, "--steps", str(a.steps), "--index", str(i), "--m", str(a.m),
               "--barrier", barrier, "--out", out, "--device", a.device]
        env = dict(os.environ)
        if a.device == "cuda":
            env["CUDA_VISIBLE_DEVICES"] = str(i)
        cmds.append((f"CUDA_VISIBLE_DEVICES={i} " if a.device == "cuda" else "") + " ".join(cmd))
        outs.append(out)
        print("$ " + cmds[-1], file=sys.stderr, flush=True)
        procs.append(subprocess.Popen(cmd, cwd=ROOT, env=env))
    rcs = [p.wait() for p in procs]
    doc = {"schema": "scalescope.hostpath-host/1", "mode": "conc", "m": a.m, "round": a.round,
           "program": f"gpt-ln-fsdp{a.m}", "shape": HOST_SHAPE, "commands": cmds, "exits": rcs, "started_utc": t0,
           "finished_utc": now_utc(), "files": [os.path.basename(o) for o in outs]}
    per, windows, workers = [], [], []
    for o in outs:
        if not os.path.exists(o):
            per.append(None)
            continue
        w = load(o)
        workers.append(w)
        per.append(w["rows"][0]["step_time_s"])
        windows.append(w["concurrent"]["window_unix"])
    doc["processes"] = [round(v, 6) if v is not None else None for v in per]
    ok = [v for v in per if v is not None]
    if len(ok) == a.m:
        doc.update(median=statistics.median(ok), max=max(ok), min=min(ok), process_spread=round(max(ok) / min(ok), 4))
        lo, hi = max(w[0] for w in windows), min(w[1] for w in windows)
        mean_len = statistics.mean(w[1] - w[0] for w in windows)
        # the fraction of a timed window during which all M processes were in their timed steps
        doc["overlap_s"] = round(max(0.0, hi - lo), 4)
        doc["overlap_fraction"] = round(max(0.0, hi - lo) / mean_len, 4) if mean_len > 0 else None
        doc["barrier_timed_out"] = any(w["concurrent"]["barrier_timed_out"] for w in workers)
    doc["workers"] = workers
    write_json(os.path.join(a.out, f"conc-m{a.m}-r{a.round}.json"), doc)
    print(json.dumps({k: doc.get(k) for k in ("mode", "m", "round", "exits", "processes", "overlap_fraction")}),
          flush=True)
    return 0 if len(ok) == a.m else 1


def wait_files(d, prefix, m, timeout_s):
    """Waits until files prefix-0 .. prefix-(m-1) exist in d; returns (seconds waited, timed out)."""
    t0 = time.perf_counter()
    while True:
        if all(os.path.exists(os.path.join(d, f"{prefix}-{i}")) for i in range(m)):
            return time.perf_counter() - t0, False
        if time.perf_counter() - t0 > timeout_s:
            return time.perf_counter() - t0, True
        time.sleep(0.002)


def touch(d, name):
    with open(os.path.join(d, name), "w") as f:
        f.write(f"{os.getpid()} {time.time()}\n")


def worker(a):
    """One concurrent process: run_steps.py measure's timing (3 warm-up steps, then --steps steps each timed by wall
    clock between synchronisations, median) of one shape, with a barrier between the warm-up and the timed steps."""
    sys.path.insert(0, os.path.dirname(RUN_STEPS))
    import torch
    import programs
    import run_steps as R
    device = torch.device(a.device)
    if device.type == "cuda":
        device = torch.device("cuda", device.index or 0)
        torch.cuda.set_device(device)
    step, vocab, cfg, notes = programs.build(a.program, a.model, 0, device)
    mbs, seq = (int(v) for v in a.shape.lower().split("x"))
    x, y = R.batch(vocab, mbs, seq, device)
    with programs.sdpa_context(a.program, device):
        R.timed_steps(step, x, y, device, 3)
        touch(a.barrier, f"ready-{a.index}")
        waited, timed_out = wait_files(a.barrier, "ready", a.m, a.barrier_timeout_s)
        R.timed_steps(step, x, y, device, 2)  # after the wait: two more untimed steps, all M now stepping
        t0 = time.time()
        walls = R.timed_steps(step, x, y, device, a.steps)
        t1 = time.time()
        touch(a.barrier, f"done-{a.index}")
        extra, t_end = 0, time.perf_counter() + a.barrier_timeout_s
        while (not all(os.path.exists(os.path.join(a.barrier, f"done-{i}")) for i in range(a.m))
               and time.perf_counter() < t_end):
            step(x, y)
            extra += 1
        R.sync(device)
    doc = {"schema": "scalescope.program-measurement/1", "program": a.program, "model_file": a.model, "layers": None,
           "method": f"one of {a.m} processes at once: 3 warm-up steps, a file barrier (all {a.m} warmed up), 2 "
                     f"untimed steps, then {a.steps} steps each timed by wall clock between torch.cuda.synchronize() "
                     "calls; median; then untimed steps until all have finished their timed steps",
           "notes": notes, "environment": R.environment(), "rows": [dict(micro_batch=mbs, seq=seq, **R.summary(walls))],
           "concurrent": {"index": a.index, "m": a.m, "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
                          "pid": os.getpid(), "barrier_wait_s": round(waited, 4), "barrier_timed_out": timed_out,
                          "window_unix": [t0, t1], "untimed_steps_after": extra}}
    write_json(a.out, doc)
    print(json.dumps({"index": a.index, "step_time_s": doc["rows"][0]["step_time_s"], "waited_s": round(waited, 3)}),
          flush=True)
    return 0


def host_timings(host_dir, ms):
    """Per M: the three --host-step-time values and every raw value they come from."""
    out = {}
    for m in ms:
        rec = {"variants": {}, "errors": {}}
        seq_path = os.path.join(host_dir, f"seq-m{m}.json")
        seq = load(seq_path) if os.path.exists(seq_path) else None
        rec["seq"] = ({k: seq.get(k) for k in ("command", "exit", "started_utc", "finished_utc", "step_time_s",
                                                "processes", "process_spread")} if seq else None)
        if seq and seq.get("step_time_s"):
            rec["variants"]["seq"] = seq["step_time_s"]
        else:
            rec["errors"]["seq"] = "no sequential host timing"
        rounds = []
        found = {}
        for path in glob.glob(os.path.join(host_dir, f"conc-m{m}-r*.json")):  # a round's file, not its processes'
            r = re.fullmatch(rf"conc-m{m}-r(\d+)\.json", os.path.basename(path))
            if r:
                found[int(r.group(1))] = path
        for _, path in sorted(found.items()):
            c = load(path)
            rounds.append({k: c.get(k) for k in ("round", "commands", "exits", "started_utc", "finished_utc",
                                                  "processes", "median", "max", "min", "process_spread", "overlap_s",
                                                  "overlap_fraction", "barrier_timed_out")})
        rec["conc_rounds"] = rounds
        full = [r for r in rounds if r.get("max") is not None]  # rounds where every process finished
        if full:
            rec["variants"]["conc-median"] = statistics.median(v for r in full for v in r["processes"])
            rec["variants"]["conc-max"] = statistics.mean(r["max"] for r in full)
            rec["conc_rounds_used"] = [r["round"] for r in full]
        else:
            rec["errors"]["conc-median"] = rec["errors"]["conc-max"] = "no complete concurrent round"
        out[str(m)] = rec
    return out


def cmd_host(a):
    a.model = a.model or host_model()
    os.makedirs(a.out, exist_ok=True)
    return host_seq(a) if a.mode == "seq" else host_conc(a)


# ---------------------------------------------------------------------------------------------- predictions


def import_stack(a, t, meta, m, variant, host_s):
    """predict.py import_trace's command with this variant's --host-step-time."""
    stack = os.path.join(a.work, f"stack-{stack_key(m, variant)}.json")
    cmd = [a.scalescope, "import", "torch-trace", os.path.join(a.traces, t.name() + ".json.gz"), "--model", t.model,
           "--micro-batch", str(t.mbs), "--seq", str(t.seq), "--step-time", str(meta["unprofiled"]["step_time_s"]),
           "--software", f"torch {meta['environment']['torch']}", "--name", stack_key(m, variant),
           "--host-step-time", str(host_s), "--host-shape", HOST_SHAPE, "-o", stack, "-q"]
    import predict
    rc, out, err = predict.run(cmd)
    rec = {"command": " ".join(cmd), "exit": rc, "stderr": err[-4000:], "trace": t.name(), "m": m, "variant": variant,
           "unprofiled_step_time_s": meta["unprofiled"]["step_time_s"], "host_step_time_s": host_s}
    if rc == 0:
        rec["stack"] = stack
    return rec


def cmd_predict(a):
    import predict
    os.makedirs(a.work, exist_ok=True)
    t = trace()
    ms = world_sizes(a.ngpu)
    doc = {"schema": "scalescope.hostpath-predictions/1", "part": "G", "gpu": a.gpu, "ngpu": a.ngpu,
           "commit": predict.commit(a.scalescope), "predicted_utc": now_utc(), "scalescope": a.scalescope,
           "cluster": a.cluster, "calibration": a.calibration, "host_shape": HOST_SHAPE,
           "variants": VARIANT_TEXT, "trace": {"name": t.name(), "program": t.program, "model": t.model,
                                               "mbs": t.mbs, "seq": t.seq},
           "host_timings": host_timings(a.host, ms), "stacks": {}, "points": {}}
    if a.commands and os.path.exists(a.commands):
        with open(a.commands) as f:
            doc["session_commands"] = [line.rstrip("\n") for line in f if line.strip()]
    meta_path = os.path.join(a.traces, t.name() + ".meta.json")
    meta = load(meta_path) if os.path.exists(meta_path) else None
    if meta:
        doc["trace"].update(unprofiled_step_time_s=meta["unprofiled"]["step_time_s"],
                            environment=meta.get("environment"))
    for m in ms:
        for v in VARIANTS:
            key = stack_key(m, v)
            h = doc["host_timings"][str(m)]["variants"].get(v)
            if meta is None:
                doc["stacks"][key] = {"exit": None, "error": "no trace (its recording failed)"}
            elif h is None:
                doc["stacks"][key] = {"exit": None, "error": doc["host_timings"][str(m)]["errors"].get(v, "no timing")}
            else:
                doc["stacks"][key] = import_stack(a, t, meta, m, v, h)
            print(f"import {key}: exit {doc['stacks'][key]['exit']}", file=sys.stderr, flush=True)
    for p in points(a.ngpu, cpu_test_dir() or None):
        rec = {"plan": p.plan(), "gpus": p.gpus, "group": p.group, "family": p.family, "mbs": p.mbs, "seq": p.seq,
               "model": p.model, "variants": {}, "step_time_s": {}}
        for v in VARIANTS:
            stack = doc["stacks"][stack_key(p.gpus, v)].get("stack")
            if not stack:
                rec["variants"][v] = {"error": f"stack missing: {stack_key(p.gpus, v)}"}
                continue
            rec["variants"][v] = predict.simulate(a, p, [stack])
            if "step_time_s" in rec["variants"][v]:
                rec["step_time_s"][v] = rec["variants"][v]["step_time_s"]
        doc["points"][p.id] = rec
        print(f"{p.id:32s} " + " ".join(f"{v} {rec['step_time_s'].get(v, 'ERROR')}" for v in VARIANTS),
              file=sys.stderr, flush=True)
    write_json(a.out, doc)
    n_ok = sum(1 for r in doc["points"].values() for v in VARIANTS if v in r["step_time_s"])
    print(f"{n_ok} of {len(doc['points']) * len(VARIANTS)} (point, variant) predictions", file=sys.stderr)
    return 0


# ---------------------------------------------------------------------------------------------- measurement


def cmd_measure(a):
    """One torchrun launch: this world size's points one after another (run_points.measure), into DIR/measured."""
    import run_points as RP
    world = int(os.environ.get("WORLD_SIZE", "1"))
    pts = [p for p in points(a.ngpu) if p.gpus == world]
    deadline = a.deadline or time.time() + 600
    import torch
    import torch.distributed as dist
    import families
    import parallel
    rank, local = int(os.environ.get("RANK", "0")), int(os.environ.get("LOCAL_RANK", "0"))
    timeout = datetime.timedelta(seconds=a.pg_timeout_s)
    if a.device == "cuda":
        torch.cuda.set_device(local)
        device = torch.device("cuda", local)
        dist.init_process_group("nccl", timeout=timeout, device_id=device, rank=rank, world_size=world)
    else:
        device = torch.device("cpu")
        dist.init_process_group("gloo", timeout=timeout, rank=rank, world_size=world)
    ctx = parallel.Ctx(device, rank, world)
    if a.tiny:
        import tiny
        pts = [tiny.point(p, os.path.join(a.out, "tiny-models")) for p in pts]
    env = RP.environment(torch, device)
    summary_path = os.path.join(a.out, "summary.json")
    summary = {"part": "G", "gpus": world, "launch": a.launch, "environment": env, "warmup": a.warmup,
               "steps": a.steps, "started_utc": now_utc(),
               "points": {p.id: {"status": "pending", "est_s": p.est_s} for p in pts}}
    if rank == 0:
        RP.log(f"part G n={world} launch {a.launch}: {len(pts)} points, {deadline - time.time():.0f} s to the deadline")
        write_json(summary_path, summary)
    for i, p in enumerate(pts):
        rec = summary["points"][p.id]
        left = deadline - time.time()
        if parallel.all_max(1.0 if p.est_s > left else 0.0, ctx):
            rec.update(status="skipped", reason=f"deadline: estimated {p.est_s:.0f} s, {left:.0f} s left")
        else:
            t0 = time.time()
            rec["status"] = "running"
            if rank == 0:
                write_json(summary_path, summary)
            try:
                m = RP.measure(p, ctx, a, torch, dist, families, parallel)
                doc = {"schema": "scalescope.blind24-measured/1", "id": p.id, "plan": p.plan(),
                       "point": dataclasses.asdict(p), "gpus": world, "launch": a.launch,
                       "device": env.get("gpu", "cpu"),
                       "method": f"{a.warmup} warm-up steps, then {a.steps} steps, each after a barrier, timed by wall "
                                 "clock between synchronisations on every rank; step = slowest rank; median",
                       "measured": m, "environment": env, "measured_utc": now_utc()}
                if rank == 0:
                    write_json(os.path.join(a.out, "measured", p.id + ".json"), doc)
                rec.update(status="measured", step_time_s=m["step_time_s"], peak_allocated_GiB=m["peak_allocated_GiB"])
            except Exception as e:  # one failing point must not stop the others
                rec.update(status="failed", reason=f"{type(e).__name__}: {e}"[:2000])
                RP.log(f"rank {rank}: FAILED {p.id}: {type(e).__name__}: {e}\n{traceback.format_exc()}")
            rec["wall_s"] = round(time.time() - t0, 1)
        gc.collect()
        if device.type == "cuda":
            torch.cuda.empty_cache()
        if rank == 0:
            RP.log(f"[{i + 1}/{len(pts)}] {p.id}: {rec['status']} {rec.get('reason', '')}"
                   f"{' step %.4f s' % rec['step_time_s'] if 'step_time_s' in rec else ''}"
                   f" wall {rec.get('wall_s', 0)} s"
                   f", {deadline - time.time():.0f} s left")
            write_json(summary_path, summary)
    if rank == 0:
        summary["finished_utc"] = now_utc()
        write_json(summary_path, summary)
    dist.barrier()
    dist.destroy_process_group()
    return 0


# ---------------------------------------------------------------------------------------------- report


def p90(v):
    q = sorted(v)
    return q[min(len(q) - 1, int(round(0.9 * (len(q) - 1))))]


def launches_of(launch_dir):
    """{point id: [(launch folder, step time)]} in launch order, and the launch folders' summaries."""
    out, summaries = {}, {}
    dirs = sorted(glob.glob(os.path.join(launch_dir, "n*-L*")),
                  key=lambda d: (int(os.path.basename(d).split("-L")[1]), int(os.path.basename(d)[1:].split("-")[0])))
    for d in dirs:
        name = os.path.basename(d)
        if os.path.exists(os.path.join(d, "summary.json")):
            s = load(os.path.join(d, "summary.json"))
            summaries[name] = {pid: {k: r.get(k) for k in ("status", "step_time_s", "reason", "wall_s")}
                               for pid, r in s["points"].items()}
            summaries[name]["_started_utc"] = s.get("started_utc")
        for f in sorted(glob.glob(os.path.join(d, "measured", "*.json"))):
            m = load(f)
            out.setdefault(m["id"], []).append({"launch": name, "step_time_s": m["measured"]["step_time_s"],
                                                "step_times_s": m["measured"]["step_times_s"],
                                                "measured_utc": m.get("measured_utc")})
    return out, summaries


def cmd_report(a):
    preds = load(a.predictions)
    meas, summaries = launches_of(a.launches)
    rows = []
    for pid, pr in preds["points"].items():
        ls = meas.get(pid, [])
        row = {"id": pid, "gpus": pr["gpus"], "family": pr["family"], "shape": f"{pr['mbs']}x{pr['seq']}",
               "plan": pr["plan"], "predicted": {v: pr["step_time_s"].get(v) for v in VARIANTS},
               "launches": ls}
        if ls:
            st = [x["step_time_s"] for x in ls]
            row.update(measured_median=statistics.median(st), measured_min=min(st), measured_max=max(st),
                       launch_spread=max(st) / min(st))
            row["errors"] = {v: (x / row["measured_median"] - 1 if x else None) for v, x in row["predicted"].items()}
        rows.append(row)
    summary = {}
    for v in VARIANTS:
        for label, sel in (("all", lambda r: True),) + tuple(
                (f"n{n}", (lambda n: lambda r: r["gpus"] == n)(n)) for n in world_sizes(preds["ngpu"])):
            e = [r["errors"][v] for r in rows if sel(r) and r.get("errors") and r["errors"].get(v) is not None]
            if e:
                ab = [abs(x) for x in e]
                summary.setdefault(v, {})[label] = {"n": len(e), "median_abs": statistics.median(ab),
                                                    "p90_abs": p90(ab), "max_abs": max(ab),
                                                    "mean_signed": statistics.mean(e)}
    skipped = []
    if a.stages and os.path.exists(a.stages):
        with open(a.stages) as f:
            skipped = [line.split("\t")[0] for line in f if "\tskipped" in line]
    text = markdown(preds, rows, summary, skipped)
    if a.out:
        with open(a.out + ".tmp", "w") as f:
            f.write(text)
        os.replace(a.out + ".tmp", a.out)
    if a.json:
        write_json(a.json, {"schema": "scalescope.hostpath-report/1", "predictions": a.predictions,
                            "commit": preds["commit"], "predicted_utc": preds["predicted_utc"], "rows": rows,
                            "summary": summary, "host_timings": preds["host_timings"], "launches": summaries,
                            "skipped_stages": skipped})
    print(text)
    return 0


def f4(x):
    return "n/a" if x is None else f"{x:.4f}"


def pct(x):
    return "n/a" if x is None else f"{100 * x:+.1f}%"


def markdown(preds, rows, summary, skipped):
    L = [f"### Issue 24, part G: the host path of N-rank FSDP2 ({preds.get('gpu', '')}), predictions by commit "
         f"{preds['commit']} ({preds['predicted_utc']}), calibration `{preds['calibration']}`", "",
         f"One one-GPU trace ({preds['trace']['name']}, unprofiled step "
         f"{f4(preds['trace'].get('unprofiled_step_time_s'))} s); the same prediction with three --host-step-time "
         f"values at {preds['host_shape']} (programs gpt-ln-fsdpM, fake M-rank mesh):", ""]
    L += [f"- `{v}`: {t}" for v, t in preds["variants"].items()]
    L += ["", "Host-bound timings (s):", "",
          "| M | seq: processes | seq median | conc round: processes (overlap) | conc median | conc mean of max |",
          "|---:|---|---:|---|---:|---:|"]
    for m, h in preds["host_timings"].items():
        seq = h.get("seq") or {}
        rounds = "; ".join(f"r{r['round']}: " + ", ".join(f4(x) for x in (r.get("processes") or []))
                           + (f" ({100 * r['overlap_fraction']:.0f}%)" if r.get("overlap_fraction") is not None else "")
                           for r in h.get("conc_rounds", []))
        L.append(f"| {m} | {', '.join(f4(x) for x in (seq.get('processes') or []))} | {f4(h['variants'].get('seq'))} "
                 f"| {rounds} | {f4(h['variants'].get('conc-median'))} | {f4(h['variants'].get('conc-max'))} |")
    L += ["", "Per point: every launch's step time (median of its steps, slowest rank), their median and max/min; "
          "each variant's prediction and its signed error against the median of the launches.", "",
          "| point | launches (s) | median | max/min | " + " | ".join(f"{v} | err" for v in VARIANTS) + " |",
          "|---|---|---:|---:|" + "---:|---:|" * len(VARIANTS)]
    for r in rows:
        ls = ", ".join(f"{x['step_time_s']:.4f}" for x in r["launches"]) or "not measured"
        errs = r.get("errors", {})
        L.append(f"| {r['id']} | {ls} | {f4(r.get('measured_median'))} | "
                 f"{'n/a' if 'launch_spread' not in r else format(r['launch_spread'], '.3f')} | "
                 + " | ".join(f"{f4(r['predicted'][v])} | {pct(errs.get(v))}" for v in VARIANTS) + " |")
    L += ["", "| variant | points | n | median abs error | p90 abs error | max | mean signed |",
          "|---|---|---:|---:|---:|---:|---:|"]
    for v in VARIANTS:
        for label, s in summary.get(v, {}).items():
            L.append(f"| {v} | {label} | {s['n']} | {100 * s['median_abs']:.1f}% | {100 * s['p90_abs']:.1f}% | "
                     f"{100 * s['max_abs']:.1f}% | {100 * s['mean_signed']:+.1f}% |")
    if not summary:
        L.append("| (no point both predicted and measured) | | | | | | |")
    if skipped:
        L += ["", "Skipped (budget): " + ", ".join(skipped)]
    return "\n".join(L) + "\n"


# ---------------------------------------------------------------------------------------------- main


def cmd_vars(a):
    t = trace()
    kv = {"TRACE_PROGRAM": t.program, "TRACE_MODEL": t.model, "TRACE_MBS": t.mbs, "TRACE_SEQ": t.seq,
          "TRACE_NAME": t.name(), "HOST_MODEL": t.model, "MS": " ".join(str(m) for m in world_sizes(a.ngpu)),
          "NS": " ".join(str(n) for n in world_sizes(a.ngpu))}
    for k, v in kv.items():
        print(f"{k}={shlex.quote(str(v))}")
    return 0


def cmd_estimate(a):
    if a.launch_s:
        print(int(launch_estimate(a.launch_s)))
        return 0
    total = 0.0
    print(f"# part G, NGPU={a.ngpu}: stage estimates (s)")
    for name, sec in stage_estimates(a.ngpu, a.processes, a.rounds, a.launches):
        total += sec
        print(f"#   {name:22s} {sec:6.0f}   cumulative {total:6.0f}")
    print(f"# part G, NGPU={a.ngpu}: {len(points(a.ngpu))} points x {a.launches} launches, estimated {total:.0f} s")
    return 0


def cmd_list(a):
    t = trace()
    print(f"trace G {t.key} {t.program} {t.mbs}x{t.seq} {t.model}")
    for p in points(a.ngpu):
        print(f"G {p.gpus} {p.group} {p.id:30s} {p.plan()}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("vars")
    s.add_argument("--ngpu", type=int, choices=[2, 4], required=True)
    s = sub.add_parser("estimate")
    s.add_argument("--ngpu", type=int, choices=[2, 4], default=4)
    s.add_argument("--processes", type=int, default=3)
    s.add_argument("--rounds", type=int, default=2)
    s.add_argument("--launches", type=int, default=3)
    s.add_argument("--launch-s", type=int, default=0, help="print one launch's estimate at this world size")
    s = sub.add_parser("list")
    s.add_argument("--ngpu", type=int, choices=[2, 4], default=4)
    s = sub.add_parser("host", help="one host-bound timing stage")
    s.add_argument("--mode", choices=["seq", "conc"], required=True)
    s.add_argument("--m", type=int, required=True, help="the fake mesh's size (gpt-ln-fsdpM); conc: processes at once")
    s.add_argument("--round", type=int, default=1)
    s.add_argument("--processes", type=int, default=3, help="seq: processes one after another")
    s.add_argument("--steps", type=int, default=20)
    s.add_argument("--model", default="")
    s.add_argument("--device", default="cuda")
    s.add_argument("--out", required=True, help="folder")
    s = sub.add_parser("worker", help="(internal) one of the concurrent processes")
    for k in ("--program", "--model", "--shape", "--barrier", "--out"):
        s.add_argument(k, required=True)
    s.add_argument("--steps", type=int, default=20)
    s.add_argument("--index", type=int, required=True)
    s.add_argument("--m", type=int, required=True)
    s.add_argument("--barrier-timeout-s", type=float, default=45.0, help="longest wait for the others "
                   "(a process that died leaves its round incomplete: not used)")
    s.add_argument("--device", default="cuda")
    s = sub.add_parser("predict")
    s.add_argument("--ngpu", type=int, choices=[2, 4], required=True)
    s.add_argument("--scalescope", default=os.path.join(ROOT, "devbin", "scalescope"))
    s.add_argument("--traces", required=True)
    s.add_argument("--host", required=True, help="folder of the host timings (host --out)")
    s.add_argument("--cluster", required=True)
    s.add_argument("--calibration", required=True)
    s.add_argument("--gpu", default="")
    s.add_argument("--work", required=True)
    s.add_argument("--commands", default="", help="the session's command log (kept in the predictions)")
    s.add_argument("-o", "--out", required=True)
    s = sub.add_parser("measure", help="under torchrun: one launch")
    s.add_argument("--ngpu", type=int, choices=[2, 4], required=True)
    s.add_argument("--launch", type=int, required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--deadline", type=float, default=None)
    s.add_argument("--warmup", type=int, default=3)
    s.add_argument("--steps", type=int, default=6)
    s.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    s.add_argument("--tiny", action="store_true")
    s.add_argument("--pg-timeout-s", type=int, default=120)
    s.add_argument("--profile", default="", help=argparse.SUPPRESS)  # run_points.measure reads it
    s = sub.add_parser("report")
    s.add_argument("--predictions", required=True)
    s.add_argument("--launches", required=True, help="folder of the launches (nN-LK/measured/ID.json)")
    s.add_argument("--stages", default="", help="the session's stages.tsv (skipped launches)")
    s.add_argument("-o", "--out", default="")
    s.add_argument("--json", default="")
    a = ap.parse_args()
    return {"vars": cmd_vars, "estimate": cmd_estimate, "list": cmd_list, "host": cmd_host, "worker": worker,
            "predict": cmd_predict, "measure": cmd_measure, "report": cmd_report}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
