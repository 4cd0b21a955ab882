"""Where eager PyTorch DDP's memory goes: allocated / peak bytes at each phase of a training step.

Runs the harness's llama-1b (validation/harness/model.py, autocast bf16, fp32 params, fused AdamW) with and without
DDP, with and without gradient accumulation, and with DDP's gradient_as_bucket_view on and off, on every rank of a
torchrun job. One JSON line per (variant, phase) from rank 0. Purpose: the memory model counts DDP as 4 B/param of
buckets, and measured DDP peaks are ~3x that above a single GPU's (validation/REPORT.md, "Peak memory per GPU").

    python3 -m torch.distributed.run --standalone --nproc-per-node 2 validation/memory/ddp_probe.py
"""
import contextlib, json, os, sys

import torch
import torch.distributed as dist
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from model import Transformer, cross_entropy  # noqa: E402

GiB = 1024.0 ** 3
CFG = json.load(open(os.path.join(os.path.dirname(__file__), "..", "models", "llama-1b.json")))


def main():
    # --from-build: reset the peak once, before the model is built, and record every step (as the harness counts).
    from_build = "--from-build" in sys.argv
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    dev = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    torch.cuda.set_device(dev)
    torch.backends.cuda.enable_flash_sdp(True)
    out = []

    def mark(variant, phase):
        torch.cuda.synchronize()
        rec = {"variant": variant, "phase": phase, "allocated_GiB": torch.cuda.memory_allocated() / GiB,
               "peak_GiB": torch.cuda.max_memory_allocated() / GiB}
        if rank == 0:
            print(json.dumps(rec), flush=True)
        out.append(rec)

    for ddp_mode in ("none", "ddp", "ddp-bucket-view"):
        for micro in (1, 4):
            variant = f"{ddp_mode}/m{micro}" + ("/from-build" if from_build else "")
            if from_build:
                torch.cuda.reset_peak_memory_stats()
            with torch.device("meta"):
                model = Transformer(CFG)
            model.to_empty(device=dev)
            model.init_weights()
            net = model
            if ddp_mode != "none":
                net = torch.nn.parallel.DistributedDataParallel(
                    model, device_ids=[dev.index], bucket_cap_mb=25,
                    gradient_as_bucket_view=ddp_mode == "ddp-bucket-view")
            opt = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.95), weight_decay=0.1, fused=True)
            if from_build:
                mark(variant, "after construction")
            tokens = torch.randint(0, CFG["vocab"], (micro, CFG["seq_len"]), device=dev)
            for step in range(3):  # step 0-1 warm-up (lazy Adam states, DDP bucket rebuild); step 2 recorded
                if not from_build:
                    torch.cuda.reset_peak_memory_stats()
                rec = step == 2 or from_build
                if rec:
                    mark(variant, f"step {step} start")
                opt.zero_grad(set_to_none=True)
                for i in range(micro):
                    x = tokens[i:i + 1]
                    sync = net.no_sync() if (ddp_mode != "none" and i < micro - 1) else contextlib.nullcontext()
                    with sync:
                        with torch.autocast("cuda", dtype=torch.bfloat16):
                            loss = cross_entropy(net(x), x)
                        if rec:
                            mark(variant, f"after forward {i}")
                        (loss / micro).backward()
                        if rec:
                            mark(variant, f"after backward {i}")
                opt.step()
                if rec:
                    mark(variant, f"step {step} after optimizer step")
            del net, model, opt, tokens, loss
            torch.cuda.empty_cache()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
