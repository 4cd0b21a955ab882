"""Host (CPU) time of one torch.distributed collective call, as a training step pays it (session 13, issue 24).

A one-GPU trace of a program has none of its collectives' host path; session 13's profiles of host-bound FSDP2,
DDP and MoE steps on 2 GPUs show that path in the step. This measures it without the profiler: N calls of each
collective issued back to back (async_op=False, as FSDP2, DDP's hooks and MoE all-to-all issue them: the call
enqueues on the NCCL stream and returns), the CPU clock around the loop divided by N, for small and larger tensors,
then the GPU drained. Run under torchrun, one process per GPU:

    torchrun --nproc-per-node 2 validation/blind24/collective_host_cost.py OUT.json
"""
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist


def host_us(fn, calls, reps=5):
    """Median over reps of the CPU time per call of `calls` back-to-back calls (GPU drained between reps)."""
    out = []
    for _ in range(reps):
        torch.cuda.synchronize()
        dist.barrier()
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        out.append((time.perf_counter() - t) / calls * 1e6)
        torch.cuda.synchronize()
    return statistics.median(out)


def main():
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    rows = []
    for numel in (1024, 1 << 20):  # 2 KiB and 2 MiB of bf16 per rank
        x = torch.ones(numel, dtype=torch.bfloat16, device="cuda")
        big = torch.empty(numel * world, dtype=torch.bfloat16, device="cuda")
        a2a = torch.ones(numel * world, dtype=torch.bfloat16, device="cuda")
        ops = {"all_reduce": lambda: dist.all_reduce(x),
               "all_gather_into_tensor": lambda: dist.all_gather_into_tensor(big, x),
               "reduce_scatter_tensor": lambda: dist.reduce_scatter_tensor(x, big),
               "all_to_all_single": lambda: dist.all_to_all_single(big, a2a)}
        for name, fn in ops.items():
            for _ in range(20):
                fn()  # warm-up (communicator and algorithm set-up)
            calls = 200 if numel <= 1024 else 50
            us = host_us(fn, calls)
            worst = torch.tensor([us], device="cuda")
            dist.all_reduce(worst, op=dist.ReduceOp.MAX)
            rows.append({"op": name, "bytes_per_rank": numel * 2, "calls": calls, "host_us_per_call_rank0": round(us, 2),
                         "host_us_per_call_max_rank": round(worst.item(), 2)})
            if rank == 0:
                print(json.dumps(rows[-1]), flush=True)
    if rank == 0:
        doc = {"schema": "scalescope.collective-host-cost/1", "world": world, "torch": torch.__version__,
               "nccl": ".".join(map(str, torch.cuda.nccl.version())), "gpu": torch.cuda.get_device_name(),
               "method": __doc__.split("\n\n")[1].replace("\n", " "), "rows": rows}
        with open(sys.argv[1], "w") as f:
            json.dump(doc, f, indent=1)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
