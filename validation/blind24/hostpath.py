#!/usr/bin/env python3
"""Parts G and H of issue 24 (sessions 15 and 16): the host path of a real N-rank FSDP2 step.

Part G (session 15, --part G, the default; validation/blind24/session15/README.md): what sets the host path of the
slower rank? Session 13 (validation/blind24/session13/README.md, "What remains open"): the host-bound gpt-ln
ZeRO-2/3 points are predicted 23-36% too fast from a one-GPU trace (kernels) plus the host-bound timing of FSDP2 on
a fake N-rank mesh (1x32, one process, GPU idle), and real launches of one point vary 0.075-0.099 s. Session 14: one
host-bound step differs by 14-28% between processes run one after another. Three explanations, each a different
--host-step-time for the SAME scalescope prediction (same trace, same plan, same calibration):
  (a) "seq"          process-to-process noise: the median of 3 processes run one after another on GPU 0
                     (run_steps.py measure --processes 3), as session 14 proposed;
  (b) "conc-median"  N processes on one host at once (contention): M processes of the fake-mesh program at the
                     same time, process i on GPU i, each timed; the median of all their medians over the rounds;
  (c) "conc-max"     the step waits for the slowest of the N ranks: the mean over rounds of the slowest of that
                     round's M concurrent processes.
Part G's answer: no contention; (c) nearest. From it, scalescope models the wait for the slowest rank without a
per-plan timing: `import torch-trace --host-process-times T1,...,TK` keeps every process's host-bound timing and a
plan of N ranks waits for the expected slowest of N draws from them (docs/stack-profile.md). Chosen after part G's
measurements, so part G's figures for it are in-sample (session15/posthoc.py).

Part H (--part H): the BLIND check of that slowest-of-N mechanism, on a new lease, two programs and shapes no
earlier part measured, every prediction written and packed before any point is measured. Variants:
  "slowest"  (pre-registered, primary) ONE import per program and mesh size M with --host-process-times = ALL the
             lease's host-bound timings at 1x32 of that M's fake-mesh program (the sequential processes and every
             concurrent round's processes pooled, as session15/posthoc.py pools them), no --host-step-time;
  "seq"      (baseline) --host-step-time = the median of the sequential processes (part G's variant (a)).
The concurrent rounds are still run and recorded raw (they feed "slowest"); part G's conc-median / conc-max are not
predicted. Programs: gpt-ln (gpt-ln-0.5b-h20, bf16; trace gpt-ln-fsdp at 8x1024; fake-mesh programs
gpt-ln-fsdp2/4) and hf-llama (hf-llama-0.9b, precision mixed; trace hf-llama-fsdp at 4x2048; hf-llama-fsdp2/4).
Points per program and n in {2, NGPU}: zero3 and zero2 at shapes no earlier part (points.py A-F, part G) measured:
gpt-ln zero3 6x1024, zero2 4x2048; hf-llama zero3 3x2048, zero2 2x4096. Budget (~540 s on 4 GPUs): 2 sequential
processes and 1 concurrent round per (program, M), 2 launches per world size; the M=2 host timings of both
programs come first, and every launch of 2 GPUs before the launch of NGPU of its round, so that both programs get
their n=2 points first if the budget runs short.

The session (validation/device/session_hostpath15.sh --part G|H) runs, in this order: environment and node file,
fabric calibration, the one-GPU profiler trace(s) (part G: gpt-ln-fsdp at 8x1024; part H: also hf-llama-fsdp at
4x2048), the host-bound timings (per M in {2, NGPU}, per program: concurrent round 1, sequential processes,
concurrent rounds 2..), then `predict` (every variant of every point, written to predictions-PART.json and packed)
BEFORE any point is measured; then `measure` under torchrun, launches alternating world sizes (n2 L1, n4 L1, n2 L2,
...); then `report`.

  hostpath.py vars --part P --ngpu N        shell assignments for the session script (MS, NS, PROGRAMS, ...)
  hostpath.py traces --part P               the traces: STAGE KEY PROGRAM MODEL MBS SEQ NAME, tab-separated
  hostpath.py estimate --part P --ngpu N [--launch-s WORLD | --stage-s STAGE | --host-m-s M | --reserve-s]
                                            stage estimates (or one launch's / one stage's / M's host timings' /
                                            the predictions + a 2-GPU launch + the report)
  hostpath.py list --part P --ngpu N        the points and their plans
  hostpath.py host --part P --program PROG --mode seq|conc --m M [--round R] --out DIR   one host timing stage
  hostpath.py predict --part P --ngpu N --scalescope BIN --traces DIR --host DIR --cluster C --calibration CAL
                      --work DIR -o F
  torchrun --nproc-per-node n hostpath.py measure --part P --ngpu N --launch K --out DIR --deadline UNIX
  hostpath.py report --predictions F --launches DIR -o report-P.md --json report-P.json   (part from F)
Part G's points (ZeRO via FSDP2, gpt-ln, gpt-ln-0.5b-h20, bf16), for n in {2, NGPU}: zero3 8x1024, zero3 2x2048 (a
shape no earlier part measured), zero2 8x1024. run_points.py knows only parts A-F, so `measure` runs these Point
objects itself with run_points.measure (the same timing: barrier, synchronise, slowest rank, median) and
families.build.
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
PARTS = ("G", "H")
VARIANTS_OF = {"G": ("seq", "conc-median", "conc-max"), "H": ("slowest", "seq")}
VARIANTS = VARIANTS_OF["G"]
VARIANT_TEXT = {"seq": "(a) process-to-process noise: median of processes one after another on GPU 0",
                "conc-median": "(b) contention: median of M processes at once, one per GPU",
                "conc-max": "(c) slowest rank: mean over rounds of the slowest of M processes at once"}
VARIANT_TEXT_H = {"slowest": "(pre-registered) the slowest of N: --host-process-times = every host-bound timing of "
                             "the fake-mesh program on this lease (sequential and concurrent processes pooled); a "
                             "plan of N ranks waits for the expected slowest of N of them",
                  "seq": "(baseline) --host-step-time = the median of the processes one after another on GPU 0"}
# Estimates (s): a gpt-ln launch ~25 s + ~6 s per point, one host-timing process ~15 s, the trace ~35 s, the
# fabric calibration 45 s (its stage: + process start).
LAUNCH_S, POINT_S, HOST_PROCESS_S, TRACE_S, CAL_S = 25.0, 6.0, 15.0, 35.0, 45.0
FIXED_S = {"environment": 5.0, "predict": 15.0, "report": 3.0}
# shapes of every world size: (family, zero, mbs, seq), in measurement order
SHAPES = (("zero3", 3, 8, 1024), ("zero3", 3, 2, 2048), ("zero2", 2, 8, 1024))
# Part H's estimates (s), from part G's stages on 4x H100 (session15/G/stages.tsv) where it measured them: the
# calibration's stage took 17 s (the calibration itself stays a 45-s run; points.FIXED_S counts its stage 25 s); a
# launch of 3 gpt-ln points 23-26 s at 2 and 4 GPUs, of which the points ~6 s (first ~4.5 s, then ~1 s): process
# start ~18 s, counted 22; the gpt-ln-fsdp trace 16 s (counted 25); a gpt-ln host-timing process ~15 s (3 one after
# another 43-46 s, 2-4 at once 13-17 s). hf-llama, not timed by part G: a host-timing process 20-25 s (counted 25),
# its trace 40-50 s (counted 45; session 13's hf-llama-fsdp trace with its host timing took 21 s), a point ~6 s
# (session 13 F: 1.3-2.1 s, the first of a launch up to 6.6 s).
H_CAL_S, H_LAUNCH_START_S = 25.0, 22.0
H_FIXED_S = {"environment": 5.0, "predict": 15.0, "report": 3.0}


@dataclasses.dataclass(frozen=True)
class Prog:
    """One program of a part: its one-GPU trace (kernels), the precision of its points, its estimates, its shapes."""
    name: str  # programs.py name of the points (gpt-ln, hf-llama); the fake-mesh program is trace.program + M
    trace: P.Trace  # trace.est_s: its trace stage (s)
    precision: str
    host_process_s: float  # one host-timing process: start + timing (s)
    point_s: float  # one point in a launch (s)
    shapes: tuple  # (family, zero, mbs, seq) in measurement order


PROGS = {
    "G": (Prog("gpt-ln", P.Trace("gpt-ln-fsdp", "G", "gpt-ln-fsdp", P.GPT, 8, 1024, TRACE_S), "bf16", HOST_PROCESS_S,
               POINT_S, SHAPES),),
    # part H: shapes no earlier part measured (points.py parts A, B, F: gpt-ln zero3 4x1024 8x1024 16x1024 4x2048,
    # zero2 4x1024 8x1024; hf-llama zero3 2x2048 4x2048 8x1024, zero2 2x2048 4x2048; part G: gpt-ln zero3 8x1024
    # 2x2048, zero2 8x1024). gpt-ln zero2 4x2048: part F measured zero3 (not zero2) at 4x2048.
    "H": (Prog("gpt-ln", P.Trace("gpt-ln-fsdp", "H", "gpt-ln-fsdp", P.GPT, 8, 1024, 25.0), "bf16", 15.0, 5.0,
               (("zero3", 3, 6, 1024), ("zero2", 2, 4, 2048))),
          Prog("hf-llama", P.Trace("hf-llama-fsdp", "H", "hf-llama-fsdp", P.LLAMA, 4, 2048, 45.0), "mixed", 25.0, 6.0,
               (("zero3", 3, 3, 2048), ("zero2", 2, 2, 4096)))),
}


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


def prog(part, name=None):
    """The Prog of a part by name (default: the part's first program)."""
    ps = PROGS[part]
    if name is None:
        return ps[0]
    for p in ps:
        if p.name == name:
            return p
    raise SystemExit(f"part {part} has no program {name} (it has {', '.join(p.name for p in ps)})")


def trace(part="G", name=None):
    """A program's one one-GPU trace: its program under FSDP2 on a one-process group (its kernels), no host timing
    of its own."""
    t = prog(part, name).trace
    if cpu_test_dir():
        import tiny
        t = tiny.trace(t, cpu_test_dir())
    return t


def host_model(part="G", name=None):
    return trace(part, name).model


def host_program(part, name, m):
    """The fake-mesh program of mesh size m (gpt-ln-fsdp2, hf-llama-fsdp4, ...)."""
    return f"{prog(part, name).trace.program}{m}"


def host_prefix(part, name):
    """Host-timing file names: part G's as session 15 wrote them (seq-m2.json), part H's with the program
    (seq-hf-llama-m2.json)."""
    return "" if part == "G" else f"{name}-"


def stack_key(m, variant, part="G", name=None):
    return f"{prog(part, name).trace.key}-m{m}-{variant}"


def points(ngpu, tiny_dir=None, part="G"):
    """The points of every world size (2, NGPU), measurement order within a world size (part H: the programs
    alternate, zero3 of both first)."""
    out = []
    for n in world_sizes(ngpu):
        if part == "G":
            order = [(prog("G"), sh) for sh in SHAPES]
        else:
            ps = PROGS[part]
            order = [(pr, pr.shapes[i]) for i in range(max(len(x.shapes) for x in ps)) for pr in ps
                     if i < len(pr.shapes)]
        for pr, (family, zero, mbs, seq) in order:
            p = P.Point(f"{pr.name}.{family}-hp.n{n}.{mbs}x{seq}", part=part, group="zero-hostpath",
                        program=pr.name, family=family, model=pr.trace.model, stacks=[f"{pr.trace.key}-m{n}"],
                        gpus=n, mbs=mbs, seq=seq, gbs=mbs * n, dp=n, zero=zero, precision=pr.precision,
                        est_s=pr.point_s)
            if tiny_dir:
                import tiny
                p = tiny.point(p, tiny_dir)
            out.append(p)
    return out


def stage_estimates(ngpu, processes=3, rounds=2, launches=3, part="G"):
    """[(stage, seconds)] in the order the session runs them."""
    if part == "H":
        return stage_estimates_h(ngpu, processes, rounds, launches)
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


def stage_estimates_h(ngpu, processes=2, rounds=1, launches=2):
    """Part H: the stage names are the session script's (trace-KEY, host-PROG-mM-conc-rR, host-PROG-mM-seq)."""
    out = [("environment", H_FIXED_S["environment"]), ("calibrate", H_CAL_S)]
    out += [(f"trace-{pr.trace.key}", pr.trace.est_s) for pr in PROGS["H"]]
    for m in world_sizes(ngpu):
        for pr in PROGS["H"]:
            for r in range(1, rounds + 1):
                out.append((f"host-{pr.name}-m{m}-conc-r{r}", pr.host_process_s))
                if r == 1:
                    out.append((f"host-{pr.name}-m{m}-seq", processes * pr.host_process_s))
    out.append(("predict", H_FIXED_S["predict"]))
    for k in range(1, launches + 1):
        for n in world_sizes(ngpu):
            out.append((f"measure-n{n}-L{k}", launch_estimate(n, "H")))
    out.append(("report", H_FIXED_S["report"]))
    return out


def launch_estimate(n, part="G"):
    """A launch of world size n: process start (part G: points.LAUNCH_S, 25 s at 2, 30 s at 4; part H: 22 s) and
    its points."""
    if part == "H":
        return H_LAUNCH_START_S + sum(pr.point_s * len(pr.shapes) for pr in PROGS["H"])
    return P.LAUNCH_S.get(n, LAUNCH_S) + POINT_S * len(SHAPES)


def reserve_estimate(part="G"):
    """What a 2-GPU blind check needs after the host timings: the predictions, one launch of 2 GPUs, the report."""
    fixed = H_FIXED_S if part == "H" else FIXED_S
    return fixed["predict"] + launch_estimate(2, part) + fixed["report"]


# ---------------------------------------------------------------------------------------------- host timings


def run_logged(cmd, env=None):
    print("$ " + " ".join(shlex.quote(c) for c in cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, cwd=ROOT, env=env).returncode


def host_seq(a):
    """(a) run_steps.py measure --processes N on GPU 0: processes one after another (the tool's median of medians)."""
    pfx, program = host_prefix(a.part, a.program), host_program(a.part, a.program, a.m)
    raw = os.path.join(a.out, f"seq-{pfx}m{a.m}.measure.json")
    cmd = [sys.executable, RUN_STEPS, "measure", "--program", program, "--model", a.model, "--shapes",
           HOST_SHAPE, "--steps", str(a.steps), "--processes", str(a.processes), "--out", raw, "--device", a.device]
    env = dict(os.environ)
    if a.device == "cuda":
        env["CUDA_VISIBLE_DEVICES"] = "0"
    t0 = now_utc()
    rc = run_logged(cmd, env)
    doc = {"schema": "scalescope.hostpath-host/1", "mode": "seq", "m": a.m, "program": program,
           "shape": HOST_SHAPE, "command": ("CUDA_VISIBLE_DEVICES=0 " if a.device == "cuda" else "") + " ".join(cmd),
           "exit": rc, "started_utc": t0, "finished_utc": now_utc()}
    if rc == 0 and os.path.exists(raw):
        m = load(raw)
        row = m["rows"][0]
        per = row.get("step_time_s_processes") or [round(row["step_time_s"], 6)]
        doc.update(step_time_s=row["step_time_s"], processes=per, process_spread=round(max(per) / min(per), 4),
                   measurement=m)
    write_json(os.path.join(a.out, f"seq-{pfx}m{a.m}.json"), doc)
    print(json.dumps({k: doc.get(k) for k in ("mode", "m", "exit", "step_time_s", "processes")}), flush=True)
    return 0 if "step_time_s" in doc else 1


def host_conc(a):
    """(b)/(c) one round: M processes of the fake-mesh program at once, process i on GPU i (CUDA_VISIBLE_DEVICES=i),
    each to its own file. They wait for each other after their warm-up (a file barrier), so that the timed steps
    of all M overlap, and each keeps stepping (untimed) until all M have finished their timed steps."""
    pfx, program = host_prefix(a.part, a.program), host_program(a.part, a.program, a.m)
    barrier = os.path.join(a.out, f".barrier-{pfx}m{a.m}-r{a.round}")
    os.makedirs(barrier, exist_ok=True)
    for f in glob.glob(os.path.join(barrier, "*")):
        os.remove(f)
    procs, cmds, outs = [], [], []
    t0 = now_utc()
    for i in range(a.m):
        out = os.path.join(a.out, f"conc-{pfx}m{a.m}-r{a.round}-p{i}.json")
        cmd = [sys.executable, os.path.abspath(__file__), "worker", "--program", program, "--model",
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
           "program": program, "shape": HOST_SHAPE, "commands": cmds, "exits": rcs, "started_utc": t0,
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
    write_json(os.path.join(a.out, f"conc-{pfx}m{a.m}-r{a.round}.json"), doc)
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


def host_timings(host_dir, ms, part="G", name=None):
    """Per M: each variant's host timing and every raw value it comes from. Part G: the three --host-step-time
    values. Part H: "seq" (--host-step-time, the sequential processes' median) and "slowest" (the median of
    "process_times", every process of the sequential stage and of every concurrent round pooled, as
    session15/posthoc.py pools them; its import takes them all as --host-process-times)."""
    pfx = host_prefix(part, name or prog(part).name)
    out = {}
    for m in ms:
        rec = {"variants": {}, "errors": {}}
        if part != "G":
            rec["program"] = host_program(part, name, m)
        seq_path = os.path.join(host_dir, f"seq-{pfx}m{m}.json")
        seq = load(seq_path) if os.path.exists(seq_path) else None
        rec["seq"] = ({k: seq.get(k) for k in ("command", "exit", "started_utc", "finished_utc", "step_time_s",
                                                "processes", "process_spread")} if seq else None)
        if seq and seq.get("step_time_s"):
            rec["variants"]["seq"] = seq["step_time_s"]
        else:
            rec["errors"]["seq"] = "no sequential host timing"
        rounds = []
        found = {}
        for path in glob.glob(os.path.join(host_dir, f"conc-{pfx}m{m}-r*.json")):  # a round's, not its processes'
            r = re.fullmatch(rf"conc-{re.escape(pfx)}m{m}-r(\d+)\.json", os.path.basename(path))
            if r:
                found[int(r.group(1))] = path
        for _, path in sorted(found.items()):
            c = load(path)
            rounds.append({k: c.get(k) for k in ("round", "commands", "exits", "started_utc", "finished_utc",
                                                  "processes", "median", "max", "min", "process_spread", "overlap_s",
                                                  "overlap_fraction", "barrier_timed_out")})
        rec["conc_rounds"] = rounds
        if part != "G":
            pooled = list((seq or {}).get("processes") or []) + [v for r in rounds for v in (r.get("processes") or [])]
            pooled = [v for v in pooled if v is not None]  # a process that died leaves None
            rec["process_times"] = pooled
            rec["process_times_from"] = (f"{len((seq or {}).get('processes') or [])} sequential + "
                                         + " + ".join(f"round {r['round']}: "
                                                      f"{len([v for v in (r.get('processes') or []) if v is not None])}"
                                                      for r in rounds))
            if len(pooled) >= 2:
                rec["variants"]["slowest"] = statistics.median(pooled)  # the host step it implies
                rec["process_spread"] = round(max(pooled) / min(pooled), 4)
            else:
                rec["errors"]["slowest"] = f"{len(pooled)} host timing(s): --host-process-times needs 2 or more"
            out[str(m)] = rec
            continue
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
    a.program = a.program or prog(a.part).name
    prog(a.part, a.program)  # known?
    a.model = a.model or host_model(a.part, a.program)
    os.makedirs(a.out, exist_ok=True)
    return host_seq(a) if a.mode == "seq" else host_conc(a)


# ---------------------------------------------------------------------------------------------- predictions


def import_stack(a, t, meta, m, variant, host_s, part="G", name=None, process_times=None):
    """predict.py import_trace's command with this variant's --host-step-time, or (process_times) with every
    process's timing as --host-process-times and no --host-step-time (their median sets it)."""
    key = stack_key(m, variant, part, name)
    stack = os.path.join(a.work, f"stack-{key}.json")
    host = (["--host-process-times", ",".join(str(v) for v in process_times)] if process_times
            else ["--host-step-time", str(host_s)])
    cmd = [a.scalescope, "import", "torch-trace", os.path.join(a.traces, t.name() + ".json.gz"), "--model", t.model,
           "--micro-batch", str(t.mbs), "--seq", str(t.seq), "--step-time", str(meta["unprofiled"]["step_time_s"]),
           "--software", f"torch {meta['environment']['torch']}", "--name", key,
           *host, "--host-shape", HOST_SHAPE, "-o", stack, "-q"]
    import predict
    rc, out, err = predict.run(cmd)
    rec = {"command": " ".join(cmd), "exit": rc, "stderr": err[-4000:], "trace": t.name(), "m": m, "variant": variant,
           "unprofiled_step_time_s": meta["unprofiled"]["step_time_s"], "host_step_time_s": host_s}
    if process_times:
        rec["host_process_times"] = list(process_times)
    if rc == 0:
        rec["stack"] = stack
    return rec


def predict_variants(a, p, rec, variants, stacks, key_of):
    """Every variant's prediction of point p with the stack imported for it (stacks[key_of(v)]), into rec's
    "variants" and "step_time_s"; returns the variants predicted."""
    import predict
    done = []
    for v in variants:
        key = key_of(v)
        stack = stacks[key].get("stack")
        if not stack:
            rec["variants"][v] = {"error": f"stack missing: {key}"}
            continue
        rec["variants"][v] = predict.simulate(a, p, [stack])
        if "step_time_s" in rec["variants"][v]:
            rec["step_time_s"][v] = rec["variants"][v]["step_time_s"]
            done.append(v)
    return done


def write_predictions(a, doc, variants):
    """Writes the predictions document and says how many (point, variant) predictions it holds."""
    write_json(a.out, doc)
    n_ok = sum(1 for r in doc["points"].values() for v in variants if v in r["step_time_s"])
    print(f"{n_ok} of {len(doc['points']) * len(variants)} (point, variant) predictions", file=sys.stderr)
    return 0


def cmd_predict(a):
    if a.part == "H":
        return cmd_predict_h(a)
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
        predict_variants(a, p, rec, VARIANTS, doc["stacks"], lambda v: stack_key(p.gpus, v))
        doc["points"][p.id] = rec
        print(f"{p.id:32s} " + " ".join(f"{v} {rec['step_time_s'].get(v, 'ERROR')}" for v in VARIANTS),
              file=sys.stderr, flush=True)
    return write_predictions(a, doc, VARIANTS)


def slowest_factor(sim):
    """host_slowest_of_ranks among a prediction's inputs (1 or absent: no process_samples / one rank)."""
    try:
        for i in sim["provenance"]["compute"]["inputs"]:
            if i.get("name") == "host_slowest_of_ranks":
                return i.get("value")
    except (KeyError, TypeError):
        pass
    return None


def cmd_predict_h(a):
    """Part H: per program and mesh size M, one import per variant ("slowest": every host timing of M's fake-mesh
    program as --host-process-times; "seq": the sequential processes' median as --host-step-time), then every point
    of that program and world size M with each. Written before any point is measured."""
    import predict
    os.makedirs(a.work, exist_ok=True)
    ms = world_sizes(a.ngpu)
    variants = VARIANTS_OF["H"]
    doc = {"schema": "scalescope.hostpath-predictions/1", "part": "H", "gpu": a.gpu, "ngpu": a.ngpu,
           "commit": predict.commit(a.scalescope), "predicted_utc": now_utc(), "scalescope": a.scalescope,
           "cluster": a.cluster, "calibration": a.calibration, "host_shape": HOST_SHAPE, "variants": VARIANT_TEXT_H,
           "primary_variant": "slowest", "programs": {}, "traces": {}, "host_timings": {}, "stacks": {},
           "points": {}}
    if a.commands and os.path.exists(a.commands):
        with open(a.commands) as f:
            doc["session_commands"] = [line.rstrip("\n") for line in f if line.strip()]
    for pr in PROGS["H"]:
        t = trace("H", pr.name)
        doc["programs"][pr.name] = {"trace": t.name(), "precision": pr.precision, "model": pr.trace.model,
                                    "host_programs": {str(m): host_program("H", pr.name, m) for m in ms}}
        rec_t = {"name": t.name(), "key": t.key, "program": t.program, "model": t.model, "mbs": t.mbs, "seq": t.seq}
        meta_path = os.path.join(a.traces, t.name() + ".meta.json")
        meta = load(meta_path) if os.path.exists(meta_path) else None
        if meta:
            rec_t.update(unprofiled_step_time_s=meta["unprofiled"]["step_time_s"], environment=meta.get("environment"))
        doc["traces"][pr.name] = rec_t
        hts = host_timings(a.host, ms, "H", pr.name)
        doc["host_timings"][pr.name] = hts
        for m in ms:
            h = hts[str(m)]
            for v in variants:
                key = stack_key(m, v, "H", pr.name)
                hv = h["variants"].get(v)
                if meta is None:
                    doc["stacks"][key] = {"exit": None, "error": "no trace (its recording failed or was skipped)"}
                elif hv is None:
                    doc["stacks"][key] = {"exit": None, "error": h["errors"].get(v, "no timing")}
                else:
                    doc["stacks"][key] = import_stack(a, t, meta, m, v, hv, "H", pr.name,
                                                      h["process_times"] if v == "slowest" else None)
                print(f"import {key}: exit {doc['stacks'][key]['exit']}", file=sys.stderr, flush=True)
    for p in points(a.ngpu, cpu_test_dir() or None, "H"):
        rec = {"plan": p.plan(), "program": p.program, "gpus": p.gpus, "group": p.group, "family": p.family,
               "mbs": p.mbs, "seq": p.seq, "model": p.model, "precision": p.precision, "variants": {},
               "step_time_s": {}, "host_slowest_of_ranks": {}}
        for v in predict_variants(a, p, rec, variants, doc["stacks"], lambda v: stack_key(p.gpus, v, "H", p.program)):
            rec["host_slowest_of_ranks"][v] = slowest_factor(rec["variants"][v])
        doc["points"][p.id] = rec
        print(f"{p.id:34s} " + " ".join(f"{v} {rec['step_time_s'].get(v, 'ERROR')}" for v in variants),
              file=sys.stderr, flush=True)
    return write_predictions(a, doc, variants)


# ---------------------------------------------------------------------------------------------- measurement


def cmd_measure(a):
    """One torchrun launch: this world size's points one after another (run_points.measure), into DIR/measured."""
    import run_points as RP
    world = int(os.environ.get("WORLD_SIZE", "1"))
    pts = [p for p in points(a.ngpu, part=a.part) if p.gpus == world]
    deadline = a.deadline or time.time() + 600
    import torch
    import torch.distributed as dist
    import families
    import parallel
    device, rank = RP.init_group(torch, dist, a.device, world, a.pg_timeout_s)
    ctx = parallel.Ctx(device, rank, world)
    if a.tiny:
        import tiny
        pts = [tiny.point(p, os.path.join(a.out, "tiny-models")) for p in pts]
    env = RP.environment(torch, device)
    summary_path = os.path.join(a.out, "summary.json")
    summary = {"part": a.part, "gpus": world, "launch": a.launch, "environment": env, "warmup": a.warmup,
               "steps": a.steps, "started_utc": now_utc(),
               "points": {p.id: {"status": "pending", "est_s": p.est_s} for p in pts}}
    if rank == 0:
        RP.log(f"part {a.part} n={world} launch {a.launch}: {len(pts)} points, "
               f"{deadline - time.time():.0f} s to the deadline")
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
    part = preds.get("part", "G")
    variants = VARIANTS_OF[part]
    meas, summaries = launches_of(a.launches)
    rows = []
    for pid, pr in preds["points"].items():
        ls = meas.get(pid, [])
        row = {"id": pid, "gpus": pr["gpus"], "family": pr["family"], "shape": f"{pr['mbs']}x{pr['seq']}",
               "plan": pr["plan"], "predicted": {v: pr["step_time_s"].get(v) for v in variants},
               "launches": ls}
        if part != "G":
            row["program"] = pr["program"]
            row["host_slowest_of_ranks"] = pr.get("host_slowest_of_ranks", {})
        if ls:
            st = [x["step_time_s"] for x in ls]
            row.update(measured_median=statistics.median(st), measured_min=min(st), measured_max=max(st),
                       launch_spread=max(st) / min(st))
            row["errors"] = {v: (x / row["measured_median"] - 1 if x else None) for v, x in row["predicted"].items()}
        rows.append(row)
    summary = {}
    groups = (("all", lambda r: True),)
    if part != "G":
        groups += tuple((name, (lambda name: lambda r: r["program"] == name)(name)) for name in preds["programs"])
    groups += tuple((f"n{n}", (lambda n: lambda r: r["gpus"] == n)(n)) for n in world_sizes(preds["ngpu"]))
    for v in variants:
        for label, sel in groups:
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
    text = (markdown if part == "G" else markdown_h)(preds, rows, summary, skipped)
    if a.out:
        with open(a.out + ".tmp", "w") as f:
            f.write(text)
        os.replace(a.out + ".tmp", a.out)
    if a.json:
        doc = {"schema": "scalescope.hostpath-report/1", "predictions": a.predictions,
               "commit": preds["commit"], "predicted_utc": preds["predicted_utc"], "rows": rows,
               "summary": summary, "host_timings": preds["host_timings"], "launches": summaries,
               "skipped_stages": skipped}
        if part != "G":
            doc = {"part": part, "primary_variant": preds.get("primary_variant"), **doc}
        write_json(a.json, doc)
    print(text)
    return 0


def f4(x):
    return "n/a" if x is None else f"{x:.4f}"


def pct(x):
    return "n/a" if x is None else f"{100 * x:+.1f}%"


def point_tables(rows, summary, variants, primary=None):
    """The per-point table (launches, their median and spread, each variant's prediction and error) and the error
    summary per variant (the pre-registered one marked), as markdown lines."""
    L = ["", "Per point: every launch's step time (median of its steps, slowest rank), their median and max/min; "
         "each variant's prediction and its signed error against the median of the launches.", "",
         "| point | launches (s) | median | max/min | " + " | ".join(f"{v} | err" for v in variants) + " |",
         "|---|---|---:|---:|" + "---:|---:|" * len(variants)]
    for r in rows:
        ls = ", ".join(f"{x['step_time_s']:.4f}" for x in r["launches"]) or "not measured"
        errs = r.get("errors", {})
        L.append(f"| {r['id']} | {ls} | {f4(r.get('measured_median'))} | "
                 f"{'n/a' if 'launch_spread' not in r else format(r['launch_spread'], '.3f')} | "
                 + " | ".join(f"{f4(r['predicted'][v])} | {pct(errs.get(v))}" for v in variants) + " |")
    L += ["", "| variant | points | n | median abs error | p90 abs error | max | mean signed |",
          "|---|---|---:|---:|---:|---:|---:|"]
    for v in variants:
        for label, s in summary.get(v, {}).items():
            L.append(f"| {v}{' (pre-registered)' if v == primary else ''} | {label} | {s['n']} | "
                     f"{100 * s['median_abs']:.1f}% | {100 * s['p90_abs']:.1f}% | {100 * s['max_abs']:.1f}% | "
                     f"{100 * s['mean_signed']:+.1f}% |")
    if not summary:
        L.append("| (no point both predicted and measured) | | | | | | |")
    return L


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
    L += point_tables(rows, summary, VARIANTS)
    if skipped:
        L += ["", "Skipped (budget): " + ", ".join(skipped)]
    return "\n".join(L) + "\n"


def markdown_h(preds, rows, summary, skipped):
    variants = VARIANTS_OF["H"]
    L = [f"### Issue 24, part H: blind check of the slowest-of-N host path of N-rank FSDP2 ({preds.get('gpu', '')}), "
         f"predictions by commit {preds['commit']} ({preds['predicted_utc']}), calibration `{preds['calibration']}`",
         "",
         "The mechanism chosen after part G (session 15): `import torch-trace --host-process-times` keeps every "
         "process's host-bound timing, and a plan of N ranks waits for the expected slowest of N of them. Here it "
         "predicts, before any point ran, programs and shapes no earlier part measured. Per program one one-GPU "
         "trace (kernels); per program and mesh size M the host-bound timings at "
         f"{preds['host_shape']} of the fake M-rank FSDP2 program on this lease; two variants of the same "
         "prediction:", ""]
    L += [f"- `{v}`: {t}" for v, t in preds["variants"].items()]
    L += ["", "| program | trace | unprofiled step (s) | precision |", "|---|---|---:|---|"]
    for name, t in preds["traces"].items():
        L.append(f"| {name} | {t['name']} | {f4(t.get('unprofiled_step_time_s'))} | "
                 f"{preds['programs'][name]['precision']} |")
    # the expected slowest of N from the points' predictions (the same for every point of a program and n)
    factor = {}
    for r in rows:
        f = (r.get("host_slowest_of_ranks") or {}).get("slowest")
        if f is not None:
            factor[(r["program"], str(r["gpus"]))] = f
    L += ["", "Host-bound timings (s): the sequential processes (one after another on GPU 0), each concurrent "
          "round's processes (M at once, process i on GPU i; overlap of their timed steps), all of them pooled "
          "(`slowest`'s --host-process-times), and the expected-slowest factor scalescope applied at n = M:", "",
          "| program | M | seq: processes | seq median | conc round: processes (overlap) | pooled: n, median, "
          "max/min | slowest-of-M factor |", "|---|---:|---|---:|---|---|---:|"]
    for name, hts in preds["host_timings"].items():
        for m, h in hts.items():
            seq = h.get("seq") or {}
            rounds = "; ".join(f"r{r['round']}: " + ", ".join(f4(x) for x in (r.get("processes") or []))
                               + (f" ({100 * r['overlap_fraction']:.0f}%)" if r.get("overlap_fraction") is not None
                                  else "") for r in h.get("conc_rounds", [])) or "none"
            pooled = h.get("process_times") or []
            pool = (f"{len(pooled)}, {f4(statistics.median(pooled))}, {max(pooled) / min(pooled):.3f}" if pooled
                    else "none")
            fac = factor.get((name, m))
            L.append(f"| {name} | {m} | {', '.join(f4(x) for x in (seq.get('processes') or [])) or 'none'} | "
                     f"{f4(h['variants'].get('seq'))} | {rounds} | {pool} | "
                     f"{'n/a' if fac is None else format(fac, '.3f')} |")
    L += point_tables(rows, summary, variants, preds.get("primary_variant"))
    missing = [pid for pid, r in preds["points"].items() if not r["step_time_s"]]
    if missing:
        why = {pid: "; ".join(str(x.get("error", ""))[:120] for x in preds["points"][pid]["variants"].values())
               for pid in missing}
        L += ["", "Not predicted: " + ", ".join(f"{pid} ({why[pid]})" for pid in missing)]
    if skipped:
        L += ["", "Skipped (budget): " + ", ".join(skipped)]
    return "\n".join(L) + "\n"


# ---------------------------------------------------------------------------------------------- main


# Part defaults of the session: host-timing processes one after another per (program, M), concurrent rounds per
# (program, M), launches per world size.
DEFAULTS = {"G": {"processes": 3, "rounds": 2, "launches": 3}, "H": {"processes": 2, "rounds": 1, "launches": 2}}


def cmd_vars(a):
    t = trace(a.part)
    kv = {"TRACE_PROGRAM": t.program, "TRACE_MODEL": t.model, "TRACE_MBS": t.mbs, "TRACE_SEQ": t.seq,
          "TRACE_NAME": t.name(), "HOST_MODEL": t.model, "MS": " ".join(str(m) for m in world_sizes(a.ngpu)),
          "NS": " ".join(str(n) for n in world_sizes(a.ngpu))}
    if a.part != "G":
        kv["PROGRAMS"] = " ".join(pr.name for pr in PROGS[a.part])
    for k, v in kv.items():
        print(f"{k}={shlex.quote(str(v))}")
    return 0


def cmd_traces(a):
    """The session's trace stages: STAGE KEY PROGRAM MODEL MBS SEQ NAME (tab-separated), part G's stage `trace`."""
    for pr in PROGS[a.part]:
        t = trace(a.part, pr.name)
        stage = "trace" if a.part == "G" else f"trace-{t.key}"
        print("\t".join(str(x) for x in (stage, t.key, t.program, t.model, t.mbs, t.seq, t.name())))
    return 0


def cmd_estimate(a):
    for k, v in DEFAULTS[a.part].items():
        if getattr(a, k) is None:
            setattr(a, k, v)
    if a.launch_s:
        print(int(launch_estimate(a.launch_s, a.part)))
        return 0
    if a.reserve_s:
        print(int(reserve_estimate(a.part)))
        return 0
    stages = stage_estimates(a.ngpu, a.processes, a.rounds, a.launches, a.part)
    if a.host_m_s:
        print(int(sum(sec for name, sec in stages if name.startswith("host-") and f"m{a.host_m_s}-" in name)))
        return 0
    if a.stage_s:
        found = [sec for name, sec in stages if name == a.stage_s]
        if not found:
            print(f"no stage {a.stage_s} in part {a.part} at NGPU={a.ngpu}", file=sys.stderr)
            return 2
        print(int(found[0]))
        return 0
    total = 0.0
    print(f"# part {a.part}, NGPU={a.ngpu}: stage estimates (s)")
    for name, sec in stages:
        total += sec
        print(f"#   {name:{30 if a.part != 'G' else 22}s} {sec:6.0f}   cumulative {total:6.0f}")
    if a.part == "G":
        print(f"# part G, NGPU={a.ngpu}: {len(points(a.ngpu))} points x {a.launches} launches, estimated {total:.0f} s")
    else:
        hosts = ", ".join(f"M={m}: {a.processes} + {a.rounds * m}" for m in world_sizes(a.ngpu))
        print(f"# part {a.part}, NGPU={a.ngpu}: {len(points(a.ngpu, part=a.part))} points "
              f"({', '.join(pr.name for pr in PROGS[a.part])}) x {a.launches} launches; host timings per program "
              f"(sequential + concurrent): {hosts}; estimated {total:.0f} s")
    return 0


def cmd_list(a):
    for pr in PROGS[a.part]:
        t = trace(a.part, pr.name)
        print(f"trace {a.part} {t.key} {t.program} {t.mbs}x{t.seq} {t.model}")
    for p in points(a.ngpu, part=a.part):
        print(f"{a.part} {p.gpus} {p.group} {p.id:30s} {p.plan()}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    def part_arg(s):
        s.add_argument("--part", choices=PARTS, default="G", help="G (session 15, default) or H (the blind check "
                       "of the slowest-of-N host path)")

    s = sub.add_parser("vars")
    part_arg(s)
    s.add_argument("--ngpu", type=int, choices=[2, 4], required=True)
    s = sub.add_parser("traces")
    part_arg(s)
    s = sub.add_parser("estimate")
    part_arg(s)
    s.add_argument("--ngpu", type=int, choices=[2, 4], default=4)
    s.add_argument("--processes", type=int, default=None, help="default: part G 3, part H 2")
    s.add_argument("--rounds", type=int, default=None, help="default: part G 2, part H 1")
    s.add_argument("--launches", type=int, default=None, help="default: part G 3, part H 2")
    s.add_argument("--launch-s", type=int, default=0, help="print one launch's estimate at this world size")
    s.add_argument("--stage-s", default="", help="print this stage's estimate")
    s.add_argument("--host-m-s", type=int, default=0, help="print the estimate of all host-timing stages of this M")
    s.add_argument("--reserve-s", action="store_true", help="print the predictions + one 2-GPU launch + report")
    s = sub.add_parser("list")
    part_arg(s)
    s.add_argument("--ngpu", type=int, choices=[2, 4], default=4)
    s = sub.add_parser("host", help="one host-bound timing stage")
    part_arg(s)
    s.add_argument("--program", default="", help="the points' program (gpt-ln, hf-llama; default: the part's first)")
    s.add_argument("--mode", choices=["seq", "conc"], required=True)
    s.add_argument("--m", type=int, required=True, help="the fake mesh's size (PROGRAM-fsdpM); conc: processes at once")
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
    part_arg(s)
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
    part_arg(s)
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
    s = sub.add_parser("report", help="part from the predictions")
    s.add_argument("--predictions", required=True)
    s.add_argument("--launches", required=True, help="folder of the launches (nN-LK/measured/ID.json)")
    s.add_argument("--stages", default="", help="the session's stages.tsv (skipped launches)")
    s.add_argument("-o", "--out", default="")
    s.add_argument("--json", default="")
    a = ap.parse_args()
    return {"vars": cmd_vars, "traces": cmd_traces, "estimate": cmd_estimate, "list": cmd_list, "host": cmd_host,
            "worker": worker, "predict": cmd_predict, "measure": cmd_measure, "report": cmd_report}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
