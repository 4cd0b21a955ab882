"""Builds one training step per plan family (single, DDP, ZeRO-1/2/3, TP, PP, TP x DP) around the Llama model."""
import contextlib
from dataclasses import dataclass, field

import torch
import torch.distributed as dist
from torch.distributed.tensor import DTensor, Replicate, Shard

from model import Transformer, cross_entropy

LR = 1e-4


@dataclass
class Runner:
    step: object  # callable() -> last micro-batch loss (a tensor, possibly a DTensor or None on non-last PP stages)
    notes: list
    keep: list = field(default_factory=list)  # objects to drop after the config (modules, optimizers, schedules)

    def local_params(self):
        """Parameter elements this rank holds and trains (local shards of DTensors), from its optimizer (the
        TP x DDP transform swaps module attributes, so the optimizer's list is the reliable one)."""
        opt = next(o for o in self.keep if isinstance(o, torch.optim.Optimizer))
        return sum((p.to_local() if isinstance(p, DTensor) else p).numel()
                   for g in opt.param_groups for p in g["params"])


class Ctx:
    """Per-process distributed context; device meshes are created once and reused by every config."""

    def __init__(self, device, rank, world):
        self.device, self.rank, self.world = device, rank, world
        self._meshes = {}

    def mesh(self, shape, names):
        from torch.distributed.device_mesh import init_device_mesh
        key = (shape, names)
        if key not in self._meshes:
            self._meshes[key] = init_device_mesh(self.device.type, shape, mesh_dim_names=names)
        return self._meshes[key]

    def autocast(self):
        return torch.autocast(self.device.type, dtype=torch.bfloat16)


def make_adamw(params, notes):
    """AdamW (fused where supported). DTensor and plain tensors go to separate groups: fused/foreach kernels
    cannot mix them in one call."""
    params = [p for p in params if p.requires_grad]
    dt = [p for p in params if isinstance(p, DTensor)]
    pl = [p for p in params if not isinstance(p, DTensor)]
    groups = [g for g in ({"params": dt}, {"params": pl}) if g["params"]]
    try:
        opt = torch.optim.AdamW(groups, lr=LR, betas=(0.9, 0.95), weight_decay=0.1, fused=True)
        notes.append("optimizer: torch.optim.AdamW(fused=True), fp32 states")
    except (RuntimeError, ValueError) as e:
        opt = torch.optim.AdamW(groups, lr=LR, betas=(0.9, 0.95), weight_decay=0.1, foreach=True)
        notes.append(f"optimizer: torch.optim.AdamW(foreach=True), fused unavailable: {e}")
    return opt


def materialize(model, ctx):
    model.to_empty(device=ctx.device)
    model.init_weights()
    return model


def ddp_kwargs(ctx):
    return {"device_ids": [ctx.device.index]} if ctx.device.type == "cuda" else {}


def accumulation_step(model, opt, micro, ctx, sync_ctx=None, loss_ctx=None, use_autocast=True):
    """Gradient accumulation over micro-batches; `sync_ctx()` (e.g. DDP no_sync) wraps all but the last one."""
    def step():
        opt.zero_grad(set_to_none=True)
        n, loss = len(micro), None
        for i, (x, y) in enumerate(micro):
            sync = sync_ctx() if (sync_ctx is not None and i < n - 1) else contextlib.nullcontext()
            with sync, (loss_ctx() if loss_ctx else contextlib.nullcontext()):
                with ctx.autocast() if use_autocast else contextlib.nullcontext():
                    loss = cross_entropy(model(x), y)
                (loss / n).backward()
        opt.step()
        return loss.detach()
    return step


def split_micro(tokens, labels, mbs):
    return list(zip(tokens.split(mbs), labels.split(mbs)))


def tp_plan(model, tp_mesh):
    """Megatron-style TP: column-parallel q/k/v/gate/up, row-parallel o/down (one all-reduce after attention and
    one after the MLP in forward); each block's attention and MLP input becomes one replicated DTensor
    (PrepareModuleInput) so the backward sums the q/k/v (gate/up) input-gradient partials first and all-reduces
    once per block, as Megatron's fused column-parallel layers do. Vocab-parallel embedding (all-reduce of its
    output) and vocab-parallel head whose sharded logits go into a vocab-parallel cross-entropy (loss_parallel).
    Norms replicated; no sequence parallelism."""
    from torch.distributed.tensor.parallel import (ColwiseParallel, PrepareModuleInput, RowwiseParallel,
                                                   parallelize_module)
    plan = {"tok_embeddings": RowwiseParallel(input_layouts=Replicate(), output_layouts=Replicate()),
            "output": ColwiseParallel(output_layouts=Shard(-1), use_local_output=False)}
    for i in model.layers:
        plan[f"layers.{i}.attn"] = PrepareModuleInput(input_layouts=(Replicate(), None, None),
                                                      desired_input_layouts=(Replicate(), None, None),
                                                      use_local_output=False)
        plan[f"layers.{i}.mlp"] = PrepareModuleInput(input_layouts=(Replicate(),),
                                                     desired_input_layouts=(Replicate(),), use_local_output=False)
        for name in ("attn.q_proj", "attn.k_proj", "attn.v_proj", "mlp.gate_proj", "mlp.up_proj"):
            plan[f"layers.{i}.{name}"] = ColwiseParallel()
        for name in ("attn.o_proj", "mlp.down_proj"):
            plan[f"layers.{i}.{name}"] = RowwiseParallel()
    parallelize_module(model, tp_mesh, plan)
    return model


def build(cfg, mcfg, ctx, tokens, labels):
    """Returns a Runner for `cfg` (plans.Config). tokens/labels: this data-parallel replica's batch (PP: global)."""
    fam, notes = cfg.family, []
    if fam in ("single", "ddp", "zero1"):
        with torch.device("meta"):
            model = Transformer(mcfg)
        materialize(model, ctx)
        notes.append("fp32 master params, bf16 autocast compute (residual stream fp32), fp32 grads")
        if fam == "single":
            opt = make_adamw(model.parameters(), notes)
            step = accumulation_step(model, opt, split_micro(tokens, labels, cfg.mbs), ctx)
            return Runner(step, notes, [model, opt])
        from torch.nn.parallel import DistributedDataParallel as DDP
        ddp = DDP(model, bucket_cap_mb=25, **ddp_kwargs(ctx))
        notes.append("DDP bucket_cap_mb=25 (first bucket 1 MiB), fp32 gradient all-reduce overlapped with "
                     "backward, no_sync on all but the last micro-batch")
        if fam == "ddp":
            opt = make_adamw(ddp.parameters(), notes)
        else:
            from torch.distributed.optim import ZeroRedundancyOptimizer
            opt = ZeroRedundancyOptimizer(ddp.parameters(), optimizer_class=torch.optim.AdamW, lr=LR,
                                          betas=(0.9, 0.95), weight_decay=0.1, fused=True)
            notes.append("ZeRO-1: torch ZeroRedundancyOptimizer(AdamW fused) over DDP: grads still fully "
                         "all-reduced (fp32), each rank steps its parameter shard, then every shard's fp32 "
                         "parameters are broadcast from their owner")
        step = accumulation_step(ddp, opt, split_micro(tokens, labels, cfg.mbs), ctx, sync_ctx=ddp.no_sync)
        return Runner(step, notes, [ddp, model, opt])

    if fam in ("zero2", "zero3"):
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
        mesh = ctx.mesh((ctx.world,), ("dp",))
        mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        raf = fam == "zero3"
        with torch.device("meta"):
            model = Transformer(mcfg)
        for layer in model.layers.values():
            fully_shard(layer, mesh=mesh, reshard_after_forward=raf, mp_policy=mp)
        fully_shard(model, mesh=mesh, reshard_after_forward=raf, mp_policy=mp)
        materialize(model, ctx)
        opt = make_adamw(model.parameters(), notes)
        notes.append(f"FSDP2 fully_shard per transformer block + root (embedding, final norm, head), "
                     f"reshard_after_forward={raf}, MixedPrecisionPolicy(param bf16, reduce fp32), no autocast: "
                     f"bf16 all-gather of params, fp32 reduce-scatter of grads every micro-batch, fp32 sharded "
                     f"master params and AdamW states")
        step = accumulation_step(model, opt, split_micro(tokens, labels, cfg.mbs), ctx, use_autocast=False)
        return Runner(step, notes, [model, opt])

    if fam in ("tp", "tp-dp"):
        from torch.distributed.tensor.parallel import loss_parallel
        if fam == "tp":
            tp_mesh, dp_mesh = ctx.mesh((ctx.world,), ("tp",)), None
        else:
            mesh2 = ctx.mesh((cfg.dp, cfg.tp), ("dp", "tp"))
            tp_mesh, dp_mesh = mesh2["tp"], mesh2["dp"]
        with torch.device("meta"):
            model = Transformer(mcfg)
        tp_plan(model, tp_mesh)
        materialize(model, ctx)
        notes.append("Megatron-style TP via DTensor parallelize_module: q/k/v/gate/up ColwiseParallel, o/down "
                     "RowwiseParallel, embedding vocab-parallel (RowwiseParallel), head vocab-parallel "
                     "(ColwiseParallel, logits sharded) + loss_parallel cross-entropy, norms replicated, sp off; "
                     "bf16 autocast with fp32 params")
        micro = split_micro(tokens, labels, cfg.mbs)
        if dp_mesh is None:
            opt = make_adamw(model.parameters(), notes)
            step = accumulation_step(model, opt, micro, ctx, loss_ctx=loss_parallel)
            return Runner(step, notes, [model, opt])
        from torch.distributed.tensor.parallel.ddp import _pre_dp_module_transform
        from torch.nn.parallel import DistributedDataParallel as DDP
        _pre_dp_module_transform(model)
        ddp = DDP(model, process_group=dp_mesh.get_group(), bucket_cap_mb=25, **ddp_kwargs(ctx))
        opt = make_adamw(ddp.parameters(), notes)
        notes.append("DP over the 'dp' mesh dimension with DDP (bucket 25 MB, fp32 all-reduce of each rank's "
                     "TP-local gradient shards, no_sync on all but the last micro-batch)")
        step = accumulation_step(ddp, opt, micro, ctx, sync_ctx=ddp.no_sync, loss_ctx=loss_parallel)
        return Runner(step, notes, [ddp, model, opt])

    if fam in ("pp-gpipe", "pp-1f1b", "pp-interleaved"):
        from torch.distributed.pipelining import (PipelineStage, Schedule1F1B, ScheduleGPipe,
                                                  ScheduleInterleaved1F1B)
        # cfg.pp * cfg.vpp model chunks of `per` layers; rank s holds chunks s, s + pp, ... (Megatron's
        # interleaved assignment): chunk 0 (embedding) on rank 0, the last chunk (norm + head) on rank pp - 1.
        chunks = cfg.pp * cfg.vpp
        per = mcfg["layers"] // chunks
        s = ctx.rank
        mine = [s + k * cfg.pp for k in range(cfg.vpp)]
        parts = []
        for c in mine:
            with torch.device("meta"):
                part = Transformer(mcfg, c * per, (c + 1) * per)
            materialize(part, ctx)
            parts.append(part)
        opt = make_adamw([p for part in parts for p in part.parameters()], notes)
        stages = [PipelineStage(part, c, chunks, ctx.device) for part, c in zip(parts, mine)]
        if fam == "pp-interleaved":
            sched_cls = ScheduleInterleaved1F1B
            sched = sched_cls(stages, n_microbatches=cfg.microbatches(), loss_fn=cross_entropy)
        else:
            sched_cls = ScheduleGPipe if fam == "pp-gpipe" else Schedule1F1B
            sched = sched_cls(stages[0], n_microbatches=cfg.microbatches(), loss_fn=cross_entropy)
        notes.append(f"torch.distributed.pipelining {sched_cls.__name__}, {cfg.pp} ranks x {cfg.vpp} chunk(s) of "
                     f"{per} layers (rank r holds chunks r, r + pp, ...; embedding in chunk 0, final norm + head in "
                     f"the last), {cfg.microbatches()} micro-batches, bf16 autocast with fp32 params: the residual "
                     f"stream sent between stages is fp32 (mbs x seq x hidden x 4 bytes per send, forward "
                     f"activations and backward gradients)")
        last = s == cfg.pp - 1

        def step():
            opt.zero_grad(set_to_none=True)
            losses = []
            with ctx.autocast():
                if s == 0:
                    sched.step(tokens)
                elif last:
                    sched.step(target=labels, losses=losses)
                else:
                    sched.step()
            opt.step()
            return torch.stack(losses).mean().detach() if losses else None
        return Runner(step, notes, [sched, *stages, *parts, opt])
    raise ValueError(f"unknown family {fam}")


def local_loss(loss):
    if loss is None:
        return float("-inf")
    if isinstance(loss, DTensor):
        loss = loss.full_tensor()
    return float(loss)


def all_max(value, ctx):
    t = torch.tensor([float(value)], dtype=torch.float64, device=ctx.device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return float(t.item())
