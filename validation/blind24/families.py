"""Builds one training step of a blind-check point (points.py) on this process's GPU, for every family.

The program (its model, loss, optimizer, precision) is validation/programs/programs.py's, unchanged; a family only
spreads it, with validation/harness/parallel.py's context and helpers where they apply:
  single        the program on one GPU.
  ddp / dp      DistributedDataParallel (bucket_cap_mb 25), gradients in the parameters' dtype (bf16 for the
                pure-bf16 programs, fp32 for hf-llama); no_sync on all but the last micro-batch.
  zero2 / zero3 FSDP2 (programs.fsdp_wrap): reshard_after_forward False / True.
  tp            Megatron-style DTensor TP: column-parallel q/k/v (gpt-ln: the fused qkv) and gate/up (gpt-ln: fc),
                row-parallel o and down (gpt-ln: proj, fc2), vocabulary-parallel embedding and LM head whose
                sharded logits go into the program's own cross-entropy under loss_parallel; norms replicated, no
                sequence parallelism. hf-llama's attention and MLP inputs become one replicated DTensor
                (PrepareModuleInput) so that the backward all-reduces once per block, as validation/harness does.
  tp-dp         the tp plan on the 'tp' mesh dimension, DDP over 'dp' (harness: _pre_dp_module_transform).
  pp-gpipe/1f1b torch.distributed.pipelining ScheduleGPipe / Schedule1F1B, pp stages of L/pp layers (embedding
                in the first, final norm + head in the last), gbs/mbs micro-batches, the program's loss per
                micro-batch (hf-llama: its own loss_function, under its autocast).
  cp            torch.distributed.tensor.experimental.context_parallel over all ranks (head-tail load balance,
                rotate method allgather or alltoall), inputs and labels sharded along the sequence, gradients
                all-reduced over the CP ranks by DDP.
  ep            the MoE program with experts sharded over all ranks (moe.py all-to-all), dense parameters under
                DDP with the expert parameters left out (expert-data-parallel size 1).
"""
import contextlib
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "programs"))
sys.path.insert(0, os.path.join(HERE, "..", "harness"))
import parallel  # noqa: E402  (validation/harness: Ctx, ddp_kwargs)
import programs  # noqa: E402


class Runner:
    def __init__(self, step, notes, keep, stats=None):
        self.step, self.notes, self.keep = step, notes, keep
        self.stats = stats or (lambda: {})  # called after timing, on every rank (may run collectives)


def micro_batches(x, y, mbs):
    return list(zip(x.split(mbs), y.split(mbs)))


def accumulate(prog, model, opt, micro, no_sync=None, loss_ctx=contextlib.nullcontext):
    """zero_grad, forward/backward of every micro-batch (no_sync() around all but the last), optimizer step. One
    micro-batch runs exactly the program's one-GPU step (no loss scaling kernel)."""
    n = len(micro)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = None
        for i, (x, y) in enumerate(micro):
            sync = no_sync() if (no_sync is not None and i < n - 1) else contextlib.nullcontext()
            with sync, loss_ctx():
                loss = prog.loss(model, x, y)
                (loss / n if n > 1 else loss).backward()
        opt.step()
        return loss.detach()
    return step


def make_program(point, ctx, **kw):
    return programs.make(point.program, point.model, 0, ctx.device, **kw)


def build_single(point, ctx, x, y):
    prog = make_program(point, ctx, routing=point.routing or "balanced")
    opt = prog.optimizer(prog.model.parameters())
    return Runner(accumulate(prog, prog.model, opt, micro_batches(x, y, point.mbs)), prog.notes, [prog, opt],
                  moe_stats(point, prog.model, ctx))


def build_ddp(point, ctx, x, y, group=None, prog=None, ignore=()):
    from torch.nn.parallel import DistributedDataParallel as DDP
    prog = prog or make_program(point, ctx, routing=point.routing or "balanced")
    counters = prog.model.counter_buffer_names() if point.program == "moe" else []
    if ignore or counters:
        DDP._set_params_and_buffers_to_ignore_for_model(prog.model, list(ignore) + counters)
    ddp = DDP(prog.model, bucket_cap_mb=25, process_group=group, **parallel.ddp_kwargs(ctx))
    opt = prog.optimizer(prog.model.parameters())
    notes = prog.notes + ["DDP bucket_cap_mb=25, gradients reduced in the parameters' dtype"
                          + (f", {len(ignore)} expert parameters left out (not reduced)" if ignore else "")
                          + (", the MoE routing counters not broadcast" if counters else "")]
    return Runner(accumulate(prog, ddp, opt, micro_batches(x, y, point.mbs), no_sync=ddp.no_sync), notes,
                  [ddp, prog, opt], moe_stats(point, prog.model, ctx))


def build_fsdp(point, ctx, x, y):
    prog = make_program(point, ctx)
    programs.fsdp_wrap(prog, ctx.mesh((ctx.world,), ("dp",)), point.zero == 3)
    opt = prog.optimizer(prog.model.parameters())
    return Runner(accumulate(prog, prog.model, opt, micro_batches(x, y, point.mbs)), prog.notes, [prog, opt])


tp_plan = programs.tp_plan  # validation/programs/programs.py: also used by the one-GPU -dtp traces


def build_tp(point, ctx, x, y):
    from torch.distributed.tensor.parallel import loss_parallel, parallelize_module
    from torch.nn.parallel import DistributedDataParallel as DDP
    if point.family == "tp":
        tp_mesh, dp_mesh = ctx.mesh((ctx.world,), ("tp",)), None
    else:
        mesh2 = ctx.mesh((point.dp, point.tp), ("dp", "tp"))
        tp_mesh, dp_mesh = mesh2["tp"], mesh2["dp"]
    prog = make_program(point, ctx)
    parallelize_module(prog.model, tp_mesh, tp_plan(prog))
    notes = prog.notes + ["Megatron-style DTensor TP (families.tp_plan), vocabulary-parallel head + loss_parallel"]
    micro = micro_batches(x, y, point.mbs)
    if dp_mesh is None:
        opt = prog.optimizer(prog.model.parameters())
        return Runner(accumulate(prog, prog.model, opt, micro, loss_ctx=loss_parallel), notes, [prog, opt])
    from torch.distributed.tensor.parallel.ddp import _pre_dp_module_transform
    _pre_dp_module_transform(prog.model)
    ddp = DDP(prog.model, process_group=dp_mesh.get_group(), bucket_cap_mb=25, **parallel.ddp_kwargs(ctx))
    opt = prog.optimizer(ddp.parameters())
    notes.append("DDP over the 'dp' mesh dimension (bucket 25 MB) of the TP-local gradients")
    return Runner(accumulate(prog, ddp, opt, micro, no_sync=ddp.no_sync, loss_ctx=loss_parallel), notes,
                  [ddp, prog, opt])


class GptStage(nn.Module):
    """Layers [lo, hi) of a gpt-ln model; the embedding on the first stage, final norm + head on the last."""

    def __init__(self, model, lo, hi, first, last):
        super().__init__()
        self.wte = model.wte if first else None
        self.blocks = nn.ModuleList(list(model.blocks)[lo:hi])
        self.ln_f, self.head = (model.ln_f, model.head) if last else (None, None)

    def forward(self, x):
        if self.wte is not None:
            x = self.wte(x)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_f(x)) if self.head is not None else x


class LlamaStage(nn.Module):
    """Layers [lo, hi) of a transformers LlamaForCausalLM, run through its own LlamaModel.forward (rotary
    embeddings, causal mask, cache as the program has them): input ids on the first stage, hidden states after."""

    def __init__(self, causal_lm, lo, hi, first, last):
        super().__init__()
        self.inner = causal_lm.model
        self.inner.layers = nn.ModuleList(list(self.inner.layers)[lo:hi])
        if not first:
            self.inner.embed_tokens = None
        if not last:
            self.inner.norm = nn.Identity()
        self.lm_head = causal_lm.lm_head if last else None
        self.first = first

    def forward(self, x):
        out = self.inner(input_ids=x) if self.first else self.inner(inputs_embeds=x)
        h = out.last_hidden_state
        return self.lm_head(h) if self.lm_head is not None else h


def build_pp(point, ctx, x, y):
    from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe
    prog = make_program(point, ctx)
    s, pp = ctx.rank, point.pp
    blocks = prog.blocks(prog.model)
    per = len(blocks) // pp
    first, last = s == 0, s == pp - 1
    if prog.name == "gpt-ln":
        stage_mod = GptStage(prog.model, s * per, (s + 1) * per, first, last)

        def loss_fn(logits, target):
            return F.cross_entropy(logits.view(-1, logits.size(-1)), target.view(-1))
        ac = contextlib.nullcontext
    elif prog.name == "hf-llama":
        vocab, hf_loss = prog.vocab, prog.model.loss_function  # transformers' ForCausalLMLoss (a function)
        stage_mod = LlamaStage(prog.model, s * per, (s + 1) * per, first, last)

        def loss_fn(logits, target):
            return hf_loss(logits=logits, labels=target, vocab_size=vocab)

        def ac():
            return torch.autocast(ctx.device.type, dtype=torch.bfloat16)
    else:
        raise ValueError(f"no pipeline stages for program {prog.name}")
    prog.model = None  # the stage keeps only its own layers
    opt = prog.optimizer(stage_mod.parameters())
    cls = ScheduleGPipe if point.schedule == "gpipe" else Schedule1F1B
    stage = PipelineStage(stage_mod, s, pp, ctx.device)
    sched = cls(stage, n_microbatches=point.microbatches(), loss_fn=loss_fn)
    notes = prog.notes + [f"torch.distributed.pipelining {cls.__name__}, {pp} stages of {per} layers, "
                          f"{point.microbatches()} micro-batches"]

    def step():
        opt.zero_grad(set_to_none=True)
        losses = []
        with ac():
            if first:
                sched.step(x)
            elif last:
                sched.step(target=y, losses=losses)
            else:
                sched.step()
        opt.step()
        return torch.stack(losses).mean().detach() if losses else None
    return Runner(step, notes, [sched, stage, stage_mod, opt])


def build_cp(point, ctx, x, y):
    from torch.distributed.tensor.experimental import context_parallel
    from torch.distributed.tensor.experimental._attention import set_rotate_method
    from torch.nn.parallel import DistributedDataParallel as DDP
    mesh = ctx.mesh((ctx.world,), ("cp",))
    set_rotate_method(point.cp_rotate)
    prog = make_program(point, ctx)
    ddp = DDP(prog.model, bucket_cap_mb=25, process_group=mesh.get_group(), **parallel.ddp_kwargs(ctx))
    opt = prog.optimizer(prog.model.parameters())
    notes = prog.notes + [f"context_parallel over {ctx.world} ranks, rotate method {point.cp_rotate}, head-tail "
                          "load balance; DDP (bucket 25 MB) all-reduces the gradients over the CP ranks"]

    sdpa = F.scaled_dot_product_attention

    def step():
        opt.zero_grad(set_to_none=True)
        xb, yb = x.clone(), y.clone()  # context_parallel shards its buffers in place
        try:
            with context_parallel(mesh, buffers=[xb, yb], buffer_seq_dims=[1, 1], no_restore_buffers={xb, yb}):
                loss = prog.loss(ddp, xb, yb)
                loss.backward()
        except BaseException:
            # torch 2.11's context_parallel has no try/finally around its yield: an exception inside leaves SDPA
            # patched and the DTensor CP handlers on, which would break every later point of this launch.
            if F.scaled_dot_product_attention is not sdpa:
                from torch.distributed.tensor.experimental._context_parallel import _attention as cpa
                cpa._disable_context_parallel_dispatcher_impl()
            raise
        opt.step()
        return loss.detach()
    return Runner(step, notes, [ddp, prog, opt])


def build_ep(point, ctx, x, y):
    prog = make_program(point, ctx, routing=point.routing, ep_group=dist.group.WORLD)
    return build_ddp(point, ctx, x, y, prog=prog, ignore=prog.model.expert_param_names())


def moe_stats(point, model, ctx):
    """Learned routing: max / mean tokens per expert per layer (counts summed over ranks and steps), and for EP
    the max / mean tokens per rank."""
    if point.program != "moe" or point.routing != "learned":
        return None

    def stats():
        counts = torch.stack([c.to(torch.float64) for c in model.routing_stats()])  # (layers, E)
        if dist.is_initialized() and ctx.world > 1:
            dist.all_reduce(counts)
        per_expert = (counts.max(1).values / counts.mean(1)).tolist()
        out = {"expert_max_over_mean_per_layer": [round(v, 4) for v in per_expert],
               "assignments_counted": int(counts[0].sum().item())}  # steps x tokens x top_k x ranks
        if point.ep > 1:
            per_rank = counts.view(counts.shape[0], point.ep, -1).sum(2)
            out["rank_max_over_mean_per_layer"] = [round(v, 4) for v in
                                                   (per_rank.max(1).values / per_rank.mean(1)).tolist()]
        return out
    return stats


BUILDERS = {"single": build_single, "ddp": build_ddp, "dp": build_ddp, "zero2": build_fsdp, "zero3": build_fsdp,
            "tp": build_tp, "tp-dp": build_tp, "pp-gpipe": build_pp, "pp-1f1b": build_pp, "cp": build_cp,
            "ep": build_ep}


def local_batch(point, ctx, vocab):
    """This rank's tokens and labels: the data-parallel replica's gbs/dp sequences (TP ranks of a replica, PP
    stages and CP ranks share theirs: CP shards it afterwards)."""
    dp_rank = ctx.rank // point.tp if point.family in ("ddp", "dp", "zero2", "zero3", "tp-dp", "ep") else 0
    n = point.gbs if point.pp > 1 else point.gbs // point.dp
    g = torch.Generator(device=ctx.device).manual_seed(1234 + dp_rank)
    x = torch.randint(0, vocab, (n, point.seq), generator=g, device=ctx.device)
    y = torch.randint(0, vocab, (n, point.seq), generator=g, device=ctx.device)
    return x, y


def vocab_of(model_file):
    """The vocabulary of a native model JSON (vocab) or an HF config.json (vocab_size)."""
    import json
    with open(model_file) as f:
        d = json.load(f)
    return d["vocab"] if "vocab" in d else d["vocab_size"]


def build(point, ctx):
    x, y = local_batch(point, ctx, vocab_of(point.model))
    return BUILDERS[point.family](point, ctx, x, y)
