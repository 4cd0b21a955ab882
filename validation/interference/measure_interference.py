#!/usr/bin/env python3
"""How much compute slows down beside NCCL traffic on the same GPUs (compute-communication interference).

Two GPUs (torchrun --nproc-per-node 2). For each compute kernel kind (bf16 GEMM 8192^3, a bf16 GEMM of
llama-1b's FFN shape, an fp32 elementwise add of 1 GiB, a bf16 copy of 1 GiB) and each collective
(all_gather of 2 x 512 MiB bf16, reduce_scatter of 2 x 512 MiB fp32 as FSDP2 issues them, all_reduce of 1 GiB),
the compute kernel is timed with CUDA events:
  alone:   N back-to-back launches on the compute stream, nothing else on the GPU;
  beside:  the same N launches while the collective loops on a second stream (started first, so the whole
           compute window overlaps NCCL traffic; checked: the collective loop outlasts the compute window).
Also the collective alone and beside the compute, so both sides of the interference are measured.
Median of 5 repetitions of each window. Writes JSON lines to stdout (rank 0).
"""
import json, os, statistics, sys, time
import torch
import torch.distributed as dist

REPS = 5


def timed(fn, n, stream):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(stream):
        start.record(stream)
        for _ in range(n):
            fn()
        end.record(stream)
    return start, end


def main():
    rank = int(os.environ["RANK"])
    dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl", device_id=dev)
    world = dist.get_world_size()
    comp, comm = torch.cuda.Stream(), torch.cuda.Stream()

    a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    x = torch.randn(4096, 2048, device=dev, dtype=torch.bfloat16)        # llama-1b tokens x hidden (mbs 1)
    w = torch.randn(2048, 8192, device=dev, dtype=torch.bfloat16)        # its fc1 weight
    f1 = torch.randn(256 * 1024 * 1024, device=dev, dtype=torch.float32)  # 1 GiB
    f2 = torch.randn_like(f1)
    h1 = torch.randn(512 * 1024 * 1024, device=dev, dtype=torch.bfloat16)  # 1 GiB
    h2 = torch.empty_like(h1)
    compute = {
        "gemm_bf16_8192": (lambda: torch.mm(a, b), 20, 2 * 8192**3),
        "gemm_bf16_llama1b_fc1": (lambda: torch.mm(x, w), 200, 2 * 4096 * 2048 * 8192),
        "add_fp32_1GiB": (lambda: torch.add(f1, f2), 20, 3 * f1.numel() * 4),
        "copy_bf16_1GiB": (lambda: h2.copy_(h1), 20, 2 * h1.numel() * 2),
    }
    ag_in = torch.randn(256 * 1024 * 1024, device=dev, dtype=torch.bfloat16)   # 512 MiB shard
    ag_out = torch.empty(world * ag_in.numel(), device=dev, dtype=torch.bfloat16)
    rs_in = torch.randn(world * 128 * 1024 * 1024, device=dev, dtype=torch.float32)
    rs_out = torch.empty(128 * 1024 * 1024, device=dev, dtype=torch.float32)
    ar = torch.randn(256 * 1024 * 1024, device=dev, dtype=torch.float32)
    colls = {
        "all_gather_bf16_2x512MiB": lambda: dist.all_gather_into_tensor(ag_out, ag_in),
        "reduce_scatter_fp32_2x512MiB": lambda: dist.reduce_scatter_tensor(rs_out, rs_in),
        "all_reduce_fp32_1GiB": lambda: dist.all_reduce(ar),
    }

    def window(kind, coll, loops):
        """(compute ms per launch, collective ms per call), either side None when not run."""
        res_c, res_n = [], []
        for _ in range(REPS):
            torch.cuda.synchronize()
            dist.barrier()
            ev_n = timed(colls[coll], loops, comm) if coll else None
            ev_c = None
            if kind:
                fn, n, _ = compute[kind]
                ev_c = timed(fn, n, comp)
            torch.cuda.synchronize()
            if ev_c:
                res_c.append(ev_c[0].elapsed_time(ev_c[1]) / compute[kind][1])
            if ev_n:
                res_n.append(ev_n[0].elapsed_time(ev_n[1]) / loops)
                if ev_c:  # did the collective loop cover the whole compute window?
                    covered.append(ev_n[0].elapsed_time(ev_n[1]) >= ev_c[0].elapsed_time(ev_c[1]))
        return (statistics.median(res_c) if res_c else None, statistics.median(res_n) if res_n else None)

    def agreed(n):
        # every rank must issue the same number of collectives: take the largest wish
        t = torch.tensor([n], device=dev, dtype=torch.int64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return int(t.item())

    # warm up every kernel and communicator path
    for k in compute:
        window(k, None, 0)
    for c in colls:
        window(None, c, 3)
    out, covered = [], []
    coll_alone = {c: window(None, c, 10)[1] for c in colls}
    for k, (fn, n, work) in compute.items():
        alone = window(k, None, 0)[0]
        for c in colls:
            loops = agreed(max(4, int(2.0 * alone * n / coll_alone[c]) + 2))  # outlast the compute window
            covered.clear()
            beside, coll_beside = window(k, c, loops)
            out.append({"compute": k, "collective": c, "compute_alone_ms": alone, "compute_beside_ms": beside,
                        "compute_slowdown": beside / alone, "collective_alone_ms": coll_alone[c],
                        "collective_beside_ms": coll_beside, "collective_slowdown": coll_beside / coll_alone[c],
                        "compute_rate_alone": work / (alone * 1e-3), "collective_loops": loops,
                        "collective_covered_compute_window": all(covered)})
    if rank == 0:
        env = {"torch": torch.__version__, "cuda": torch.version.cuda, "nccl": ".".join(map(str, torch.cuda.nccl.version())),
               "gpu": torch.cuda.get_device_name(dev), "world": world,
               "NCCL_NVLS_ENABLE": os.environ.get("NCCL_NVLS_ENABLE"), "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        print(json.dumps({"environment": env}))
        for r in out:
            print(json.dumps(r))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
