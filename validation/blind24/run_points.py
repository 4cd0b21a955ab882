#!/usr/bin/env python3
"""Measures the blind-check points (points.py) of one part and world size in ONE launch, one point after another.

  torchrun --nproc-per-node N validation/blind24/run_points.py --part A --out DIR --deadline UNIX
  python3 validation/blind24/run_points.py --part B --gpus 1 ...            (the one-GPU points, no torchrun)
Per point: build (families.py), --warmup steps, then --steps steps each started after a barrier and timed by wall
clock between torch.cuda.synchronize() calls on every rank; a step's time is the slowest rank's; the point's time
is the median. Peak torch.cuda.max_memory_allocated (max over ranks) is counted from the end of the warm-up.
A point whose estimate no longer fits before --deadline is skipped (all ranks agree); a point that raises is
recorded as failed and the next one runs. Rank 0 writes DIR/measured/ID.json per point (atomically) and
DIR/summary-PART-nN.json after every point.
--device cpu --tiny runs the same code with gloo on tiny models (check_cpu.sh): a functional check only.
"""
import argparse
import dataclasses
import datetime
import gc
import json
import os
import socket
import statistics
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import points as P  # noqa: E402  (no torch)
import tiny  # noqa: E402


def write_json(path, doc):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def environment(torch, device):
    env = {k: v for k, v in sorted(os.environ.items())
           if k.startswith(("NCCL_", "NVSHMEM_", "TORCH_NCCL", "TORCH_SYMM", "PYTORCH_", "CUDA_VISIBLE", "OMP_NUM"))}
    info = {"hostname": socket.gethostname(), "python": sys.version.split()[0], "torch": torch.__version__,
            "cuda": torch.version.cuda, "env": env}
    if device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(device)
        info["nccl"] = ".".join(map(str, torch.cuda.nccl.version()))
    try:
        import transformers
        info["transformers"] = transformers.__version__
    except ImportError:
        pass
    return info


def measure(p, ctx, args, torch, dist, families, parallel):
    """Builds, warms up and times one point on every rank; returns the record (every rank)."""
    cuda = ctx.device.type == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    start_alloc = torch.cuda.memory_allocated(ctx.device) if cuda else 0
    err = None
    try:
        runner = families.build(p, ctx)
    except Exception as e:  # agree before any step's collectives, so that the other ranks do not hang in them
        err = e
    if parallel.all_max(1.0 if err else 0.0, ctx):
        raise err or RuntimeError("another rank failed to build this point")
    warm = []
    for _ in range(args.warmup):
        dist.barrier()
        t0 = time.perf_counter()
        runner.step()
        sync()
        warm.append(time.perf_counter() - t0)
    if cuda:
        torch.cuda.reset_peak_memory_stats(ctx.device)
    walls, loss = [], None
    for _ in range(args.steps):
        dist.barrier()
        sync()
        t0 = time.perf_counter()
        loss = runner.step()
        sync()
        walls.append(time.perf_counter() - t0)
    t = torch.tensor(walls, dtype=torch.float64, device=ctx.device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    steps = [round(v, 6) for v in t.tolist()]
    q = statistics.quantiles(steps, n=10, method="inclusive") if len(steps) > 1 else steps * 9
    peak = parallel.all_max(torch.cuda.max_memory_allocated(ctx.device) if cuda else 0, ctx) / 2**30
    rec = {"step_time_s": statistics.median(steps), "step_time_s_p10": q[0], "step_time_s_p90": q[-1],
           "step_times_s": steps, "warmup_step_times_s_rank0": [round(v, 6) for v in warm],
           "peak_allocated_GiB": round(peak, 4),
           "allocated_at_start_GiB": round(parallel.all_max(start_alloc, ctx) / 2**30, 4),
           "final_loss": parallel.all_max(parallel.local_loss(loss), ctx), "notes": runner.notes,
           "stats": runner.stats()}
    if args.profile:  # after the timed steps: a profiler trace of 2 steps on every rank (diagnosis, not timing)
        from torch.profiler import ProfilerActivity, profile
        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
        dist.barrier()
        with profile(activities=acts, record_shapes=True) as prof:
            for _ in range(2):
                dist.barrier()
                runner.step()
                sync()
        os.makedirs(args.profile, exist_ok=True)
        path = os.path.join(args.profile, f"{p.id}.rank{dist.get_rank()}.json")
        prof.export_chrome_trace(path)
        import gzip
        import shutil
        with open(path, "rb") as fi, gzip.open(path + ".gz", "wb") as fo:
            shutil.copyfileobj(fi, fo)
        os.remove(path)
    return rec


def init_group(torch, dist, device_kind, world, pg_timeout_s):
    """This launch's default process group (NCCL on this rank's GPU, gloo on a CPU): returns (device, rank)."""
    rank, local = int(os.environ.get("RANK", "0")), int(os.environ.get("LOCAL_RANK", "0"))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29521")
    timeout = datetime.timedelta(seconds=pg_timeout_s)
    if device_kind == "cuda":
        torch.cuda.set_device(local)
        device = torch.device("cuda", local)
        dist.init_process_group("nccl", timeout=timeout, device_id=device, rank=rank, world_size=world)
    else:
        device = torch.device("cpu")
        dist.init_process_group("gloo", timeout=timeout, rank=rank, world_size=world)
    return device, rank

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", required=True, choices=["A", "B", "C", "D", "E", "F", "I", "J"])
    ap.add_argument("--gpus", type=int, default=None, help="world size (default WORLD_SIZE or 1)")
    ap.add_argument("--only", default="", help="comma list of point ids (default: all of the part and world size)")
    ap.add_argument("--out", default="", help="output folder (required unless --list)")
    ap.add_argument("--deadline", type=float, default=None, help="unix time by which to finish (default +600 s)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    ap.add_argument("--tiny", action="store_true", help="tiny models and short sequences (CPU checks)")
    ap.add_argument("--pg-timeout-s", type=int, default=120)
    ap.add_argument("--resume", action="store_true", help="continue a launch that died (DIR/summary-*.json)")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--profile", default="", help="after timing each point, write a profiler trace of 2 steps of "
                    "every rank into this folder (ID.rankR.json.gz)")
    a = ap.parse_args()
    world = a.gpus or int(os.environ.get("WORLD_SIZE", "1"))
    pts = P.points(a.part, gpus=world, ids=set(a.only.split(",")) if a.only else None)
    if a.list:
        for p in pts:
            print(f"{p.id:36s} est {p.est_s:4.0f} s  {p.plan()}")
        print(f"# {len(pts)} points, estimated {sum(p.est_s for p in pts):.0f} s")
        return 0
    if not a.out:
        ap.error("--out is required")
    deadline = a.deadline or time.time() + 600
    import torch
    import torch.distributed as dist
    import families
    import parallel
    device, rank = init_group(torch, dist, a.device, world, a.pg_timeout_s)
    ctx = parallel.Ctx(device, rank, world)
    if a.tiny:
        pts = [tiny.point(p, os.path.join(a.out, "tiny-models")) for p in pts]
    env = environment(torch, device)
    summary_path = os.path.join(a.out, f"summary-{a.part}-n{world}.json")
    summary = {"part": a.part, "gpus": world, "environment": env, "warmup": a.warmup, "steps": a.steps,
               "started_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "points": {p.id: {"status": "pending", "est_s": p.est_s} for p in pts}}
    if a.resume and os.path.exists(summary_path):  # a launch that died: keep what it did, the point it died in failed
        with open(summary_path) as f:
            old = json.load(f)["points"]
        for pid, r in old.items():
            if pid in summary["points"] and r["status"] != "pending":
                summary["points"][pid] = r if r["status"] != "running" else dict(
                    r, status="failed", reason="the launch died in this point (crash, NCCL timeout or kill)")
    if rank == 0:
        log(f"part {a.part} n={world}: {len(pts)} points, {deadline - time.time():.0f} s to the deadline")
        write_json(summary_path, summary)
    for i, p in enumerate(pts):
        rec = summary["points"][p.id]
        if rec["status"] != "pending":
            continue
        left = deadline - time.time()
        rec["status"] = "running"
        if rank == 0:
            write_json(summary_path, summary)
        if parallel.all_max(1.0 if p.est_s > left else 0.0, ctx):
            rec.update(status="skipped", reason=f"deadline: estimated {p.est_s:.0f} s, {left:.0f} s left")
        else:
            t0 = time.time()
            try:
                m = measure(p, ctx, a, torch, dist, families, parallel)
                doc = {"schema": "scalescope.blind24-measured/1", "id": p.id, "plan": p.plan(),
                       "point": dataclasses.asdict(p), "gpus": world, "device": env.get("gpu", "cpu"),
                       "method": f"{a.warmup} warm-up steps, then {a.steps} steps, each after a barrier, timed by wall "
                                 "clock between synchronisations on every rank; step = slowest rank; median",
                       "measured": m, "environment": env,
                       "measured_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
                if rank == 0:
                    write_json(os.path.join(a.out, "measured", p.id + ".json"), doc)
                rec.update(status="measured", step_time_s=m["step_time_s"], peak_allocated_GiB=m["peak_allocated_GiB"])
            except Exception as e:  # one failing point must not stop the others
                rec.update(status="failed", reason=f"{type(e).__name__}: {e}"[:2000])
                log(f"rank {rank}: FAILED {p.id}: {type(e).__name__}: {e}\n{traceback.format_exc()}")
            rec["wall_s"] = round(time.time() - t0, 1)
        gc.collect()
        if device.type == "cuda":
            torch.cuda.empty_cache()
        if rank == 0:
            log(f"[{i + 1}/{len(pts)}] {p.id}: {rec['status']} {rec.get('reason', '')}"
                f"{' step %.4f s' % rec['step_time_s'] if 'step_time_s' in rec else ''} wall {rec.get('wall_s', 0)} s"
                f" (est {p.est_s:.0f}), {deadline - time.time():.0f} s left")
            write_json(summary_path, summary)
    if rank == 0:
        summary["finished_utc"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        write_json(summary_path, summary)
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
