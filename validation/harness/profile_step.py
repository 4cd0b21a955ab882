"""Profiles training steps of the harness's plans with torch.profiler: GPU kernel time by category, GPU idle time.

Run with torchrun (one process per GPU), e.g.
  torchrun --nproc-per-node 1 validation/harness/profile_step.py --out /tmp/prof --configs single:llama-1b:1:4
Each config is FAMILY:MODEL:MBS:GBS[:VPP] (model = validation/models/<MODEL>.json; VPP: model chunks per rank,
interleaved only, default 2). Writes <out>/profile-n<N>.json with,
per config and per rank: wall step time, summed kernel time per category (gemm, attention, nccl, optimizer,
elementwise, copy), the GPU busy time (union of kernel intervals) and kernel counts, plus the top kernels.
This is the data the compute model's framework-overhead terms are checked against (not fitted to).

Two passes: first every config's unprofiled wall time (`wall_s_per_step`), before torch.profiler has run in the
process; then every config profiled, followed by unprofiled steps again (`wall_s_per_step_after_profiler`: CUPTI
stays attached after the profiler, so host-bound steps run slower there; before session 7 (2026-11-21) this
script timed them only after the profiler).
"""
import argparse
import collections
import json
import os
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plans  # noqa: E402

CATEGORIES = [  # first match wins
    ("nccl", re.compile(r"nccl", re.I)),
    ("attention", re.compile(r"flash|fmha|attention", re.I)),
    ("gemm", re.compile(r"gemm|nvjet|xmma|cutlass|cublas|sm90_|matmul", re.I)),
    ("optimizer", re.compile(r"adam|multi_tensor|foreach", re.I)),
    ("copy", re.compile(r"memcpy|memset|copy|cat_|CatArray", re.I)),
    ("elementwise", re.compile(r".")),
]


def category(name):
    return next(c for c, rx in CATEGORIES if rx.search(name))


def union_length(intervals):
    total, end = 0.0, -1.0
    for a, b in sorted(intervals):
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return total


def analyse(trace_path, steps):
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    kern = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    by_cat, count_cat = collections.Counter(), collections.Counter()
    by_name = collections.Counter()
    for e in kern:
        c = category(e["name"])
        by_cat[c] += e["dur"]
        count_cat[c] += 1
        by_name[e["name"][:120]] += e["dur"]
    busy = union_length([(e["ts"], e["ts"] + e["dur"]) for e in kern])
    cpu_ops = sum(1 for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op")
    launches = sum(1 for e in events if e.get("ph") == "X" and e.get("cat") == "cuda_runtime"
                   and "Launch" in e.get("name", ""))
    per = 1e-6 / steps  # us in the trace -> s per step
    return {"kernel_s_per_step": {c: round(v * per, 6) for c, v in sorted(by_cat.items())},
            "kernels_per_step": {c: round(v / steps, 1) for c, v in sorted(count_cat.items())},
            "gpu_busy_s_per_step": round(busy * per, 6),
            "cpu_ops_per_step": round(cpu_ops / steps, 1), "launches_per_step": round(launches / steps, 1),
            "top_kernels_s_per_step": [[n, round(v * per, 6)] for n, v in by_name.most_common(25)]}


def median6(xs):
    """The median (upper for an even count) rounded to 1 us."""
    return round(sorted(xs)[len(xs) // 2], 6)


def timed_steps(torch, dist, runner, steps):
    """Wall time of each of `steps` training steps, every one started in step across ranks."""
    walls = []
    for _ in range(steps):
        dist.barrier()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        runner.step()
        torch.cuda.synchronize()
        walls.append(time.perf_counter() - t0)
    return walls


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--configs", nargs="+", required=True, help="FAMILY:MODEL:MBS:GBS[:VPP] ...")
    p.add_argument("--keep-traces", action="store_true",
                   help="also write each rank's chrome trace to <out>/trace-<config>-rank<R>.json.gz")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--steps", type=int, default=3, help="timed steps per pass (unprofiled, profiled, after)")
    p.add_argument("--timing-only", action="store_true",
                   help="time the unprofiled steps only (pass 1); no torch.profiler, no kernel breakdown")
    p.add_argument("--seq", type=int, default=None,
                   help="override the model's seq_len (short sequences leave the GPU idle: wall ~ host time)")
    args = p.parse_args()
    import datetime
    import torch
    import torch.distributed as dist
    import parallel
    import train_step
    rank, world = int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29513")
    torch.cuda.set_device(local)
    device = torch.device("cuda", local)
    dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=120), device_id=device, rank=rank,
                            world_size=world)
    ctx = parallel.Ctx(device, rank, world)
    results = []
    probe = {}

    def build(spec):
        """The runner of one FAMILY:MODEL:MBS:GBS[:VPP] spec (None when the family does not fit this world)."""
        fam, model_name, mbs, gbs, *rest = spec.split(":")
        mfile = f"validation/models/{model_name}.json"
        mcfg = plans.load_model_json(mfile)
        if args.seq:
            mcfg = dict(mcfg, seq_len=args.seq)
        layout = plans.family_layout(fam, world)
        if layout is None:
            return None, None, None
        tp, pp, dp, zero, sched = layout
        vpp = int(rest[0]) if rest else (2 if sched == "interleaved" else 1)
        c = plans.Config(fam, mcfg["name"], mfile, world, ["strong"], tp, pp, dp, zero, int(mbs), int(gbs), sched,
                         vpp=vpp)
        if not probe:
            probe["ctx"], probe["note"] = train_step.probe_sdpa(torch, device, mcfg)
        dp_rank = 0 if c.pp > 1 else ctx.rank // c.tp
        g = torch.Generator(device=device).manual_seed(1234 + dp_rank)
        shape = (c.gbs // c.dp, mcfg["seq_len"])
        tokens = torch.randint(0, mcfg["vocab"], shape, generator=g, device=device)
        labels = torch.randint(0, mcfg["vocab"], shape, generator=g, device=device)
        runner = parallel.build(c, mcfg, ctx, tokens, labels)
        with probe["ctx"]():
            for _ in range(args.warmup):
                runner.step()
        torch.cuda.synchronize()
        dist.barrier()
        return runner, c, mcfg

    def record(spec, c, mcfg):
        return {"config": spec, "plan": c.plan_string(), "rank": rank, "seq_len": mcfg["seq_len"]}

    def publish(rec, line):
        """Gathers every rank's record of one config into `results`; rank 0 prints line(its own record)."""
        gathered = [None] * world
        dist.all_gather_object(gathered, rec)
        if rank == 0:
            results.append(gathered)
            print(f"{rec['config']}: {line(gathered[0])}", file=sys.stderr, flush=True)

    # Pass 1: unprofiled wall time of every config, before torch.profiler has run in this process. Once the
    # profiler has run, CUPTI stays attached (kineto does not finalize it) and every later kernel launch costs more
    # host time, 10-20% by pytorch/pytorch#144455; host-bound steps would be timed slow.
    plain = {}  # config index -> unprofiled step times (a config may be listed more than once)
    for i, spec in enumerate(args.configs):
        runner, c, mcfg = build(spec)
        if runner is None:
            continue
        with probe["ctx"]():
            plain[i] = timed_steps(torch, dist, runner, args.steps)
        if args.timing_only:
            publish(dict(record(spec, c, mcfg), wall_s_per_step=median6(plain[i]),
                         wall_s_steps=[round(w, 6) for w in plain[i]]),
                    lambda r0: f"wall {r0['wall_s_per_step']:.4f} s (steps {r0['wall_s_steps']})")
        runner = None
        torch.cuda.empty_cache()
    from torch.profiler import ProfilerActivity, profile
    # Pass 2: profiled steps, then unprofiled steps again (after the profiler: the CUPTI overhead, for the record).
    for i, spec in enumerate(args.configs if not args.timing_only else []):
        runner, c, mcfg = build(spec)
        if runner is None:
            continue
        with probe["ctx"]():
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                walls = timed_steps(torch, dist, runner, args.steps)
            after = timed_steps(torch, dist, runner, args.steps)
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
            path = tmp.name
        prof.export_chrome_trace(path)
        rec = dict(record(spec, c, mcfg), wall_s_per_step_profiled=median6(walls), wall_s_per_step=median6(plain[i]),
                   wall_s_per_step_after_profiler=median6(after))
        rec.update(analyse(path, args.steps))
        if args.keep_traces:
            import gzip
            import shutil
            os.makedirs(args.out, exist_ok=True)
            name = spec.replace(":", "-")
            with open(path, "rb") as src, gzip.open(os.path.join(args.out, f"trace-{name}-rank{rank}.json.gz"), "wb") as dst:
                shutil.copyfileobj(src, dst)
        os.unlink(path)
        publish(rec, lambda r0: f"wall {r0['wall_s_per_step']:.4f} s (after the profiler "
                                f"{r0['wall_s_per_step_after_profiler']:.4f} s), busy {r0['gpu_busy_s_per_step']:.4f} s, "
                                f"{r0['kernel_s_per_step']}")
        runner = None
        torch.cuda.empty_cache()
    if rank == 0:
        os.makedirs(args.out, exist_ok=True)
        doc = {"gpu": torch.cuda.get_device_name(device), "torch": torch.__version__, "world": world,
               "sdpa": probe.get("note"), "steps": args.steps, "results": results}
        with open(os.path.join(args.out, f"profile-n{world}.json"), "w") as f:
            json.dump(doc, f, indent=1)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
