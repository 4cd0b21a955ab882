"""Lists the collectives one training step of a plan family issues (op, dtype, calls, bytes), on CPU/gloo.

Run: python -m torch.distributed.run --standalone --nproc-per-node 2 validation/harness/comm_trace.py zero3 [mbs gbs]
(TRACE_WARMUP=k traces step k+1; default 1.)
The dispatch mode sees c10d ops called by DDP, ZeRO, FSDP2, pipelining and DTensor redistributions made outside a
DTensor op (TP module hooks); it does not see collectives issued inside DTensor op handlers (loss_parallel).
"""
import collections
import os
import sys

import torch
import torch.distributed as dist
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parallel  # noqa: E402
import plans  # noqa: E402

SKIP = ("wait_tensor", "_wrap_tensor_autograd")


class CommLog(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.calls, self.bytes = collections.Counter(), collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = str(func).rsplit(".", 1)[0]
        if "c10d" in name and not name.endswith(SKIP):
            ts = [a for a in tree_leaves((args, kwargs)) if isinstance(a, torch.Tensor)]
            key = (name, str(ts[0].dtype).replace("torch.", "") if ts else "-")
            self.calls[key] += 1
            # bytes of the first tensor argument: the full buffer for all_reduce/broadcast/send/recv and for
            # all-gather (output), the shard for reduce-scatter (output)
            self.bytes[key] += ts[0].numel() * ts[0].element_size() if ts else 0
        return func(*args, **(kwargs or {}))


def main():
    fam = sys.argv[1]
    mbs = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    layout = plans.family_layout(fam, world)
    if layout is None:
        raise SystemExit(f"family {fam} does not exist on {world} ranks")
    tp, pp, dp, zero, sched = layout
    gbs = int(sys.argv[3]) if len(sys.argv) > 3 else mbs * dp * 2
    c = plans.Config(fam, "tiny", "", world, ["strong"], tp, pp, dp, zero, mbs, gbs, sched)
    m = dict(plans.TINY_MODEL)
    g = torch.Generator().manual_seed(1 + (0 if pp > 1 else rank // tp))
    tokens = torch.randint(0, m["vocab"], (gbs // dp, m["seq_len"]), generator=g)
    labels = torch.randint(0, m["vocab"], (gbs // dp, m["seq_len"]), generator=g)
    runner = parallel.build(c, m, parallel.Ctx(torch.device("cpu"), rank, world), tokens, labels)
    for _ in range(int(os.environ.get("TRACE_WARMUP", "1"))):  # lazy init, DDP bucket rebuild, PP shapes
        runner.step()
    log = CommLog()
    with log:
        runner.step()
    if rank == 0:
        print(f"{fam} {c.slug()}: {c.microbatches()} micro-batches per step, tiny model "
              f"({plans.param_count(m)} params, {m['layers']} layers, mbs x seq x hidden = "
              f"{mbs}x{m['seq_len']}x{m['hidden']}); rank 0, step {int(os.environ.get('TRACE_WARMUP', '1')) + 1}:")
        for k in sorted(log.calls):
            print(f"  {k[0]:34s} {k[1]:9s} calls {log.calls[k]:4d}  bytes {log.bytes[k]:10d}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
