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
    # argv: "gbs=N" runs only the harness's DDP step at mbs 1 and that global batch (one variant per process: a
    # clean start); "loop" swaps in the minimal loop of ddp_probe.py around the same build.
    only_gbs = next((int(a.split("=")[1]) for a in sys.argv[1:] if a.startswith("gbs=")), None)
    loop = "loop" in sys.argv[1:]
    variants = (("ddp", 0, 1, 16, True), ("ddp", 0, 1, 16, False), ("ddp", 0, 4, 16, True))
    if only_gbs:
        variants = (("ddp", 0, 1, only_gbs, True),)
    for fam, zero, mbs, gbs, flash in variants:
        c = plans.Config(fam, mcfg["name"], mfile, world, ["strong"], 1, 1, world, zero, mbs, gbs, "1f1b", 0)
        local = gbs // world
        tokens = torch.randint(0, mcfg["vocab"], (local, mcfg["seq_len"]), device=dev)
        labels = torch.randint(0, mcfg["vocab"], (local, mcfg["seq_len"]), device=dev)
        torch.cuda.synchronize()
        start = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        runner = parallel.build(c, mcfg, ctx, tokens, labels)
        variant = f"{fam} mbs{mbs} gbs{gbs} " + ("flash forced" if flash else "sdpa default") + (" minimal loop" if loop else "")
        if loop:  # the same modules and optimizer, stepped by ddp_probe.py's loop instead of the harness's closure
            import contextlib as _cl
            ddp, opt = runner.keep[0], runner.keep[2]
            micro = list(zip(tokens.split(mbs), labels.split(mbs)))

            def minimal_step():
                opt.zero_grad(set_to_none=True)
                for i, (x, y) in enumerate(micro):
                    sync = ddp.no_sync() if i < len(micro) - 1 else _cl.nullcontext()
                    with sync:
                        with torch.autocast("cuda", dtype=torch.bfloat16):
                            loss = parallel.cross_entropy(ddp(x), y)
                        (loss / len(micro)).backward()
                opt.step()
            runner.step = minimal_step

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
