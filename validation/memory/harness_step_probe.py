"""The harness's own DDP step (validation/harness/parallel.build) with the allocator's counters after every phase,
to find why its DDP runs with gradient accumulation peak ~4 B/param above ddp_probe.py's loop of the same
configuration. Rank 0 prints JSON lines: allocated and peak (GiB) after construction and after each step; the
peak counter is reset once, before the model is built (as train_step.py does).

    python3 -m torch.distributed.run --standalone --nproc-per-node 4 validation/memory/harness_step_probe.py
"""
import json, os, sys

import torch
import torch.distributed as dist

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "harness"))
import parallel, plans  # noqa: E402

GiB = 1024.0 ** 3


def main():
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    dev = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    torch.cuda.set_device(dev)
    ctx = parallel.Ctx(dev, rank, world)
    mfile = os.path.join(HERE, "..", "models", "llama-1b.json")
    mcfg = plans.load_model_json(mfile)
    for fam, zero, mbs, gbs, flash in (("ddp", 0, 1, 16, True), ("ddp", 0, 1, 16, False), ("ddp", 0, 4, 16, True)):
        c = plans.Config(fam, mcfg["name"], mfile, world, ["strong"], 1, 1, world, zero, mbs, gbs, "1f1b", 0)
        local = gbs // world
        tokens = torch.randint(0, mcfg["vocab"], (local, mcfg["seq_len"]), device=dev)
        labels = torch.randint(0, mcfg["vocab"], (local, mcfg["seq_len"]), device=dev)
        torch.cuda.synchronize()
        start = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        runner = parallel.build(c, mcfg, ctx, tokens, labels)
        variant = f"{fam} mbs{mbs} gbs{gbs} " + ("flash forced" if flash else "sdpa default")

        def mark(phase):
            torch.cuda.synchronize()
            if rank == 0:
                print(json.dumps({"variant": variant, "phase": phase,
                                  "allocated_GiB": (torch.cuda.memory_allocated() - start) / GiB,
                                  "peak_GiB": (torch.cuda.max_memory_allocated() - start) / GiB}), flush=True)

        mark("after construction")
        from torch.nn.attention import SDPBackend, sdpa_kernel
        import contextlib
        for step in range(4):
            with (sdpa_kernel(SDPBackend.FLASH_ATTENTION) if flash else contextlib.nullcontext()):
                runner.step()
            mark(f"after step {step}")
        del runner, tokens, labels
        import gc
        gc.collect()
        torch.cuda.empty_cache()
        torch.cuda.synchronize()
        if rank == 0:
            print(json.dumps({"variant": variant, "phase": "after cleanup",
                              "allocated_GiB": (torch.cuda.memory_allocated() - start) / GiB}), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
