"""Measures real training steps of every plan family for one world size (one torchrun), within a time budget."""
import argparse
import datetime
import gc
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plans  # noqa: E402  (pure Python: --list works without torch)

DEFAULT_MODELS = ["validation/models/llama-1b.json", "validation/models/llama-3b.json"]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", default="validation/h200x4", help="output folder (points go to <out>/measured/)")
    p.add_argument("--models", nargs="+", default=DEFAULT_MODELS, help="native model JSON files, main one first")
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda", help="cpu = gloo test run")
    p.add_argument("--tiny", action="store_true", help="tiny model (4 layers, hidden 128) for CPU tests")
    p.add_argument("--time-budget-s", type=float, default=480.0, help="budget from --start-unix (default: now)")
    p.add_argument("--start-unix", type=float, default=None, help="when the budget started (set by run_all.sh)")
    p.add_argument("--families", default="", help="comma list to keep (default all), e.g. ddp,zero3")
    p.add_argument("--max-tier", type=int, default=4, help="0 = main points only ... 4 = everything")
    p.add_argument("--only-model", default="", help="keep only the configurations of this model name (e.g. llama-7b)")
    p.add_argument("--warmup", type=int, default=plans.WARMUP_STEPS)
    p.add_argument("--steps", type=int, default=plans.TIMED_STEPS)
    p.add_argument("--cluster", default=None, help="cluster name written to each point (default hgx-h200-4)")
    p.add_argument("--pg-timeout-s", type=int, default=90, help="NCCL/gloo collective timeout (hang guard)")
    p.add_argument("--resume", action="store_true", help="continue after a crash from <out>/runs/n<N>-summary.json")
    p.add_argument("--list", action="store_true", help="print the configurations and estimates, run nothing")
    p.add_argument("--gpus", type=int, default=None, help="world size for --list (default WORLD_SIZE or 1)")
    return p.parse_args()


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def write_json(path, doc):
    """Atomic write: a killed run never leaves a half-written file."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def load_models(args):
    if args.tiny:
        path = os.path.join(args.out, "models", "tiny.json")
        if int(os.environ.get("RANK", "0")) == 0:
            write_json(path, plans.TINY_MODEL)
        return [(dict(plans.TINY_MODEL), path)]
    return [(plans.load_model_json(p), p) for p in args.models]


def configs_for(n, models, args):
    fams = [f for f in args.families.split(",") if f]
    cs = plans.build_configs(n, models, fams, cpu=args.device == "cpu")
    return [c for c in cs if c.tier <= args.max_tier and (not args.only_model or c.model == args.only_model)]


def environment(torch, device):
    env = {k: v for k, v in sorted(os.environ.items())
           if k.startswith(("NCCL_", "NVSHMEM_", "TORCH_NCCL", "TORCH_SYMM", "PYTORCH_", "CUDA_VISIBLE", "OMP_NUM"))}
    info = {"hostname": socket.gethostname(), "env": env, "python": sys.version.split()[0]}
    if device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(device)
        try:
            q = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                               capture_output=True, text=True, timeout=20)
            info["driver"] = q.stdout.strip().splitlines()[0] if q.returncode == 0 and q.stdout.strip() else None
        except (OSError, subprocess.TimeoutExpired):
            info["driver"] = None
    else:
        info["gpu"], info["driver"] = None, None
    return info


def probe_sdpa(torch, device, mcfg):
    """Forces flash attention when it runs here with GQA; otherwise expands K/V; otherwise default backend."""
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from model import Attention
    hd, h, kv = mcfg["hidden"] // mcfg["heads"], mcfg["heads"], mcfg["kv_heads"]
    dt = torch.bfloat16
    for expand in (False, True):
        try:
            q = torch.randn(1, h, 256, hd, device=device, dtype=dt, requires_grad=True)
            k = torch.randn(1, kv, 256, hd, device=device, dtype=dt, requires_grad=True)
            k2 = k.repeat_interleave(h // kv, dim=1) if expand else k
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                F.scaled_dot_product_attention(q, k2, k2, is_causal=True, enable_gqa=not expand).sum().backward()
            Attention.expand_kv = expand
            note = "flash attention forced (sdpa_kernel FLASH_ATTENTION), " + (
                "K/V expanded to all heads (repeat_interleave)" if expand else "GQA via enable_gqa=True")
            return (lambda: sdpa_kernel([SDPBackend.FLASH_ATTENTION])), note
        except RuntimeError:
            continue
    import contextlib
    return contextlib.nullcontext, "SDPA default backend selection (flash not available for this shape)"


class Budget:
    def __init__(self, start, budget_s):
        self.deadline = start + budget_s
        self.ratios = []  # measured / estimated wall per finished config

    def correction(self):
        return min(3.0, max(0.5, statistics.median(self.ratios))) if self.ratios else 1.0

    def left(self):
        return self.deadline - time.time()


def resume_summary(fresh, path, budget):
    """Continues a world size whose process died: keeps finished configs, marks the one it died in failed."""
    old = plans.load_json(path)
    if [r["label"] for r in old["configs"]] != [r["label"] for r in fresh["configs"]]:
        return fresh  # different config list (other arguments): start over
    for r in old["configs"]:
        if r["status"] == "running":
            r.update(status="failed", reason="the process died during this config (crash, NCCL timeout or kill)")
        if r["status"] == "measured" and r.get("wall_s"):
            budget.ratios.append(r["wall_s"] / r["est_total_s"])
    old["launches"] = old.get("launches", 1) + 1
    return old


def main():
    args = parse_args()
    models = load_models(args)
    if args.list:
        n = args.gpus or int(os.environ.get("WORLD_SIZE", "1"))
        cs = configs_for(n, models, args)
        print(f"# n={n}: {len(cs)} configurations, {args.warmup} warm-up + {args.steps} timed steps each; models: "
              + ", ".join(f"{m['name']} ({plans.param_count(m):,} params)" for m, _ in models))
        total = plans.print_table(cs, args.time_budget_s)
        print(f"# estimated total {total:.0f} s for n={n} (budget {args.time_budget_s:.0f} s)")
        return 0
    start = args.start_unix or time.time()
    import torch
    import torch.distributed as dist
    import parallel
    rank, world = int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29511")
    if args.device == "cuda":
        torch.cuda.set_device(local)
        device = torch.device("cuda", local)
        dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=args.pg_timeout_s), device_id=device,
                                rank=rank, world_size=world)
    else:
        device = torch.device("cpu")
        dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=args.pg_timeout_s), rank=rank,
                                world_size=world)
    ctx = parallel.Ctx(device, rank, world)
    cuda = device.type == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    configs = configs_for(world, models, args)
    budget = Budget(start, args.time_budget_s)
    env = environment(torch, device)
    sdpa_ctx, sdpa_note = probe_sdpa(torch, device, models[0][0])
    cluster = args.cluster or ("hgx-h200-4" if cuda else "cpu-gloo-test")
    framework = {"torch": torch.__version__, "cuda": torch.version.cuda,
                 "nccl": ".".join(map(str, torch.cuda.nccl.version())) if cuda else None,
                 "backend": dist.get_backend()}
    summary_path = os.path.join(args.out, "runs", f"n{world}-summary.json")
    summary = {"gpus": world, "cluster": cluster, "device": env["gpu"] or "cpu", "budget_s": args.time_budget_s,
               "started_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "warmup_steps": args.warmup, "timed_steps": args.steps, "sdpa": sdpa_note, "launches": 1,
               "configs": [{"label": c.label(), "tier": c.tier, "status": "pending",
                            "est_total_s": round(c.est_total_s, 1)} for c in configs]}
    if args.resume and os.path.exists(summary_path):
        summary = resume_summary(summary, summary_path, budget)
    if rank == 0:
        log(f"n={world}: {len(configs)} configs, budget {budget.left():.0f} s left; {sdpa_note}")
        write_json(summary_path, summary)
    mfiles = {m["name"]: (m, path) for m, path in models}

    def save():
        if rank == 0:
            write_json(summary_path, summary)

    for i, c in enumerate(configs):
        rec = summary["configs"][i]
        if rec["status"] != "pending":
            continue
        est = c.est_total_s * budget.correction()
        if parallel.all_max(1.0 if est > budget.left() else 0.0, ctx):
            rec.update(status="skipped", reason=f"budget: estimated {est:.0f} s, {budget.left():.0f} s left")
            if rank == 0:
                log(f"skip {c.label()}: {rec['reason']}")
            save()
            continue
        t_cfg = time.time()
        rec["status"] = "running"  # stays so if the process dies here; --resume then marks it failed
        save()
        runner = None
        try:
            mcfg = mfiles[c.model][0]
            runner, point = run_config(c, mcfg, ctx, args, budget, sdpa_ctx, sync, torch, dist, parallel)
            if point is None:
                rec.update(status="skipped", reason=runner)
            else:
                files = []
                for kind in c.kinds:
                    doc = point_doc(c, kind, mfiles[c.model], cluster, framework, env, point,
                                    runner.notes + [sdpa_note], args)
                    files.append(os.path.join(args.out, "measured", c.filename(kind)))
                    if rank == 0:
                        write_json(files[-1], doc)
                rec.update(status="measured", files=files, step_time_s=point["step_time_s"],
                           peak_allocated_GiB=point["peak_allocated_GiB"])
        except Exception as e:  # one failing config must not stop the others
            rec.update(status="failed", reason=f"{type(e).__name__}: {e}"[:2000])
            log(f"rank {rank}: FAILED {c.label()}: {type(e).__name__}: {e}\n{traceback.format_exc()}")
        runner = None
        gc.collect()
        if cuda:
            torch.cuda.empty_cache()
        wall = time.time() - t_cfg
        rec["wall_s"] = round(wall, 1)
        if rec["status"] == "measured":
            budget.ratios.append(wall / c.est_total_s)
        if rank == 0:
            left_mem = torch.cuda.memory_allocated(device) / 2**30 if cuda else 0.0
            log(f"[{i + 1}/{len(configs)}] {c.label()}: {rec['status']} {rec.get('reason', '')}"
                f"{' step %.4f s' % rec['step_time_s'] if 'step_time_s' in rec else ''}, wall {wall:.1f} s "
                f"(est {c.est_total_s:.1f}), {budget.left():.0f} s left, {left_mem:.2f} GiB still allocated")
        save()
    if rank == 0:
        summary["finished_utc"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        write_json(summary_path, summary)
        counts = {s: sum(r["status"] == s for r in summary["configs"]) for s in ("measured", "skipped", "failed")}
        log(f"n={world} done: {counts}")
    dist.barrier()
    dist.destroy_process_group()
    return 0


def run_config(c, mcfg, ctx, args, budget, sdpa_ctx, sync, torch, dist, parallel):
    """Builds, warms up and times one config. Returns (runner, point) or (skip reason, None)."""
    cuda = ctx.device.type == "cuda"
    # data-parallel replica index: TP ranks of one replica share data; PP stages see the whole global batch
    dp_rank = 0 if c.pp > 1 else ctx.rank // c.tp
    local_batch = c.gbs // c.dp
    g = torch.Generator(device=ctx.device).manual_seed(1234 + dp_rank)
    shape = (local_batch, mcfg["seq_len"])
    tokens = torch.randint(0, mcfg["vocab"], shape, generator=g, device=ctx.device)
    labels = torch.randint(0, mcfg["vocab"], shape, generator=g, device=ctx.device)
    # What earlier configurations of this process (and this one's batch) left allocated: the peak counter includes
    # it, so each point also records the peak above it (peak_allocated_above_start_GiB, max over ranks).
    start_alloc = torch.cuda.memory_allocated(ctx.device) if cuda else 0
    if cuda:
        torch.cuda.reset_peak_memory_stats(ctx.device)
    runner = parallel.build(c, mcfg, ctx, tokens, labels)
    warm = []
    with sdpa_ctx():
        for _ in range(args.warmup):
            dist.barrier()
            t0 = time.perf_counter()
            runner.step()
            sync()
            warm.append(time.perf_counter() - t0)
    est_step = max(warm[1:]) if len(warm) > 1 else (warm[0] if warm else 0.0)
    need = est_step * args.steps + 1.0
    if parallel.all_max(1.0 if need > budget.left() else 0.0, ctx):
        return f"budget after warm-up: {args.steps} steps of {est_step:.2f} s, {budget.left():.0f} s left", None
    walls, events, loss = [], [], None
    with sdpa_ctx():
        for _ in range(args.steps):
            dist.barrier()
            sync()
            e0 = torch.cuda.Event(enable_timing=True) if cuda else None
            e1 = torch.cuda.Event(enable_timing=True) if cuda else None
            if cuda:
                e0.record()
            t0 = time.perf_counter()
            loss = runner.step()
            if cuda:
                e1.record()
            sync()
            walls.append(time.perf_counter() - t0)
            events.append((e0, e1))
    # the step time is the slowest rank's time for each step (every step starts after a barrier)
    t = torch.tensor(walls, dtype=torch.float64, device=ctx.device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    steps = [round(x, 6) for x in t.tolist()]
    ev = [round(a.elapsed_time(b) / 1000.0, 6) for a, b in events] if cuda else None
    alloc = parallel.all_max(torch.cuda.max_memory_allocated(ctx.device) if cuda else 0, ctx) / 2**30
    resv = parallel.all_max(torch.cuda.max_memory_reserved(ctx.device) if cuda else 0, ctx) / 2**30
    above = parallel.all_max((torch.cuda.max_memory_allocated(ctx.device) - start_alloc) if cuda else 0, ctx) / 2**30
    at_start = parallel.all_max(start_alloc, ctx) / 2**30
    final_loss = parallel.all_max(parallel.local_loss(loss), ctx)
    n_local = torch.zeros(ctx.world, dtype=torch.float64, device=ctx.device)
    n_local[ctx.rank] = runner.local_params()
    dist.all_reduce(n_local)
    med = statistics.median(steps)
    q = statistics.quantiles(steps, n=10, method="inclusive")
    point = {"step_time_s": med, "step_time_s_p10": q[0], "step_time_s_p90": q[-1], "step_times_s": steps,
             "step_time_s_cuda_events_rank0": statistics.median(ev) if ev else None,
             "step_times_s_cuda_events_rank0": ev, "peak_allocated_GiB": round(alloc, 3),
             "peak_reserved_GiB": round(resv, 3), "peak_allocated_above_start_GiB": round(above, 3),
             "allocated_at_start_GiB": round(at_start, 3), "tokens_per_s": c.gbs * mcfg["seq_len"] / med,
             "warmup_step_times_s_rank0": [round(x, 6) for x in warm], "final_loss": final_loss,
             "params_per_rank": [int(x) for x in n_local.tolist()]}
    return runner, point


def point_doc(c, kind, model, cluster, framework, env, point, notes, args):
    m, path = model
    return {"schema": "scalescope.measured/1", "model": m, "model_file": path, "plan": c.plan_string(),
            "cluster": cluster, "gpus": c.gpus, "family": c.family, "scaling": kind,
            "framework": dict(framework, implementation_notes="; ".join(notes),
                              harness=f"validation/harness/train_step.py: {args.warmup} warm-up + {args.steps} "
                                      f"timed steps, barrier before each, step = zero_grad + all micro-batches "
                                      f"forward/backward + optimizer step, random tokens"),
            "measured": point, "environment": env,
            "measured_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}


if __name__ == "__main__":
    sys.exit(main())
