"""Training programs that are not validation/harness, for blind checks of trace-driven predictions (one GPU).

Each program builds its model from a file scalescope also reads, and returns a `step()` that runs one training
step (zero_grad, forward with loss, backward, optimizer step) on one micro-batch of random tokens:
  gpt-ln    a nanoGPT-style GPT written here (validation/programs/gpt-ln-*.json, scalescope's native model format):
            LayerNorm with bias, GELU(tanh) MLP, biases on every linear, no positional embedding, untied head;
            pure bf16 parameters, gradients and AdamW states (torch.optim.AdamW, its default foreach kernels);
            SDPA as PyTorch picks it (cuDNN's fused kernel on H100 / H200, torch 2.11); loss F.cross_entropy on
            the bf16 logits.
  hf-llama  Hugging Face transformers' LlamaForCausalLM from a config.json (attn_implementation="sdpa"): fp32
            parameters, torch.autocast(bfloat16), labels passed to the model (its own shifted, fp32-upcast loss),
            torch.optim.AdamW with its defaults.
  gpt-ln-fp8  gpt-ln with the transformer layers' linears in FP8 (fp8_linear.py: torch._scaled_mm, tensorwise
            dynamic scaling, e4m3 forward / e5m2 gradients); embedding and LM head bf16.
  hf-qwen3, hf-neox  transformers' Qwen3ForCausalLM / GPTNeoXForCausalLM from a config.json, as hf-llama (session 25).
  hf-gpt2   transformers' GPT2LMHeadModel from a config.json as hf-llama, with the config's dropout (session 31).
  hf-qwen3-moe  transformers' Qwen3MoeForCausalLM from a config.json as hf-llama, but bf16 parameters and AdamW states
            (under the same autocast); experts by transformers' grouped_mm (torch's grouped GEMM) (session 26).
  hf-qwen2-moe  transformers' Qwen2MoeForCausalLM as hf-qwen3-moe: routed experts plus a shared expert behind a
            sigmoid gate, biases on q/k/v (session 26).
  moe       a Mixtral-style MoE decoder (moe.py, scalescope native model JSON with the MoE keys): pure bf16, AdamW
            like gpt-ln; experts via torch._grouped_mm; routing from $MOE_ROUTING (balanced, the default, or
            learned).
  *-fsdp    gpt-ln-fsdp, hf-llama-fsdp, moe-fsdp: the program under FSDP2 (ZeRO-3: fsdp_wrap) on a one-process
            group, for the trace that describes its ZeRO-2/3 runs.
  *-fsdpN   the same sharded as on N ranks whose other N-1 are torch's fake process group: rank 0's shards, FSDP2's
            copy-in/copy-out and its collective calls (on a one-process group FSDP2 issues none), no communication;
            for the host-bound timing of ZeRO-2/3 runs on N GPUs.
  *-dtp     gpt-ln-dtp, hf-llama-dtp: the program under DTensor TP (tp_plan) on a one-process mesh, for the trace
            (and host-bound timing) that describes its tensor-parallel runs: DTensor's dispatch runs on the host for
            every operator whatever the mesh size.
  *-dtpN    the same on a mesh of N ranks whose other N-1 are torch's fake process group: rank 0's shards and its
            full DTensor host path (redistributions, functional collectives), the communication itself a no-op.
  harness   validation/harness's Llama (family single: fp32 params + autocast, fused AdamW; or zero3: FSDP2 bf16
            on a one-process group), from validation/models/*.json; for the harness's own traces.
Models are built on the device they run on. validation/blind24 runs the same Programs (make()) on several GPUs.
`layers` (optional) builds the model with fewer layers than its file says (a trace needs a few layers only).
"""
import contextlib
import json
import os
import re
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


class GptBlock(nn.Module):
    def __init__(self, h, heads, f):
        super().__init__()
        self.head_dim = h // heads
        self.ln1 = nn.LayerNorm(h)
        self.qkv = nn.Linear(h, 3 * h)
        self.proj = nn.Linear(h, h)
        self.ln2 = nn.LayerNorm(h)
        self.fc = nn.Linear(h, f)
        self.fc2 = nn.Linear(f, h)

    def forward(self, x):
        b, s, _ = x.shape
        # chunk(3) and -1 heads: under tensor parallelism (validation/blind24) qkv's output is this rank's 3h/tp
        # columns, read as q, k, v of heads/tp heads; on one GPU the same views as split(h) (no other kernel).
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        q, k, v = (t.view(b, s, -1, self.head_dim).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).contiguous().view(b, s, -1))
        return x + self.fc2(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GptLn(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        h, v = cfg["hidden"], cfg["vocab"]
        self.wte = nn.Embedding(v, h)
        self.blocks = nn.ModuleList(GptBlock(h, cfg["heads"], cfg["ffn_hidden"]) for _ in range(cfg["layers"]))
        self.ln_f = nn.LayerNorm(h)
        self.head = nn.Linear(h, v, bias=False)

    def forward(self, idx, targets):
        x = self.wte(idx)
        for blk in self.blocks:
            x = blk(x)
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def _load(path):
    with open(path) as f:
        return json.load(f)


class Program:
    """One training program, so that one-GPU steps and the multi-GPU families of validation/blind24 share it:
    `model` (built on `device`), `loss(model, x, y)` (forward and loss, under the program's autocast if any),
    `optimizer(params)`, `blocks(model)` (its transformer layers, for FSDP units and pipeline stages)."""

    def __init__(self, name, model, cfg, vocab, notes, loss, optimizer, blocks, precision):
        self.name, self.model, self.cfg, self.vocab, self.notes = name, model, cfg, vocab, notes
        self.loss, self.optimizer, self.blocks, self.precision = loss, optimizer, blocks, precision


def param_groups(params):
    """DTensor and plain parameters in separate groups: foreach/fused kernels cannot mix them in one call."""
    from torch.distributed.tensor import DTensor
    params = [p for p in params if p.requires_grad]
    dt = [p for p in params if isinstance(p, DTensor)]
    pl = [p for p in params if not isinstance(p, DTensor)]
    return [g for g in ({"params": dt}, {"params": pl}) if g["params"]]


def make_gpt_ln(model_file, layers, device, fp8=False):
    cfg = _load(model_file)
    if layers:
        cfg["layers"] = layers
    torch.manual_seed(0)
    with torch.device(device):  # initialised where it runs (the same parameters' layout as building on the CPU)
        model = GptLn(cfg).to(dtype=torch.bfloat16)
    notes = ["pure bf16 params/grads/AdamW (foreach)", "loss on bf16 logits"]
    if fp8:
        import fp8_linear
        n = fp8_linear.convert_blocks(model.blocks)
        notes.append(f"FP8: {n} linears of the transformer layers (qkv, proj, fc, fc2) as fp8_linear.Float8Linear "
                     f"({fp8_linear.RECIPE}); embedding and LM head bf16")

    def optimizer(params):
        return torch.optim.AdamW(param_groups(params), lr=3e-4, betas=(0.9, 0.95), weight_decay=0.1)
    return Program("gpt-ln-fp8" if fp8 else "gpt-ln", model, cfg, cfg["vocab"], notes, lambda m, x, y: m(x, y),
                   optimizer, lambda m: list(m.blocks), "fp8" if fp8 else "bf16")


def _hf_program(name, arch, cfg, layers, device, blocks, dtype=torch.float32):
    """A Hugging Face causal LM from its config `cfg` (class `arch`): `dtype` parameters (fp32 unless said) under bf16
    autocast, SDPA, labels passed to the model (its own shifted, fp32-upcast loss), torch.optim.AdamW with its
    defaults. An MoE model runs its experts with transformers' grouped_mm implementation (its default: torch's
    grouped GEMM; with fp32 weights ATen's fallback, a host-synchronised loop of one GEMM per expert)."""
    from transformers import AutoModelForCausalLM
    if layers:
        cfg.num_hidden_layers = layers
    torch.manual_seed(0)
    kw = {"experts_implementation": "grouped_mm"} if getattr(cfg, "num_experts", 0) else {}
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(cfg, attn_implementation="sdpa", **kw).to(dtype=dtype)
    model.train()

    def loss(m, x, y):
        with torch.autocast(device.type, dtype=torch.bfloat16):
            return m(input_ids=x, labels=y).loss

    def optimizer(params):
        return torch.optim.AdamW(param_groups(params), lr=1e-4)
    import transformers
    notes = [f"transformers {transformers.__version__} {arch}, sdpa",
             ("fp32" if dtype == torch.float32 else "bf16") + " params, bf16 autocast", "torch.optim.AdamW defaults"]
    if kw:
        notes.append(f"experts: {model.config._experts_implementation}")
    return Program(name, model, cfg.to_dict(), cfg.vocab_size, notes, loss, optimizer, blocks,
                   "mixed" if dtype == torch.float32 else "bf16")


def make_hf_llama(config_file, layers, device):
    from transformers import LlamaConfig
    return _hf_program("hf-llama", "LlamaForCausalLM", LlamaConfig.from_json_file(config_file), layers, device,
                       lambda m: list(m.model.layers))


# Other Hugging Face causal LMs, built from a config.json as hf-llama is: first run in session 25's blind check
# (validation/session25); hf-qwen3-moe (session 26) with bf16 parameters, as transformers 5 loads an MoE checkpoint
# (dtype "auto") and as its experts' grouped GEMM needs (validation/session26).
# hf-phi3 and hf-olmo2 first run in session 27's blind check (validation/session27).
HF_PROGRAMS = {"hf-qwen3": "Qwen3ForCausalLM", "hf-neox": "GPTNeoXForCausalLM", "hf-qwen3-moe": "Qwen3MoeForCausalLM",
               "hf-qwen2-moe": "Qwen2MoeForCausalLM", "hf-phi3": "Phi3ForCausalLM", "hf-olmo2": "Olmo2ForCausalLM",
               "hf-gpt2": "GPT2LMHeadModel"}
HF_DTYPES = {"hf-qwen3-moe": torch.bfloat16, "hf-qwen2-moe": torch.bfloat16}


def make_hf(name, config_file, layers, device):
    from transformers import AutoConfig
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a local config.json only: nothing from a hub
    cfg = AutoConfig.from_pretrained(os.path.dirname(os.path.abspath(config_file)))
    if cfg.architectures != [HF_PROGRAMS[name]]:
        raise SystemExit(f"{config_file}: {name} runs {HF_PROGRAMS[name]}, the file names {cfg.architectures}")
    # GPT-2's blocks are transformer.h (session 31); the others' base_model.layers.
    return _hf_program(name, HF_PROGRAMS[name], cfg, layers, device,
                       lambda m: list(m.base_model.h if name == "hf-gpt2" else m.base_model.layers),
                       HF_DTYPES.get(name, torch.float32))


def make_moe(model_file, layers, device, routing=None, ep_group=None):
    import moe
    cfg = moe.load_config(model_file)
    if layers:
        cfg["layers"] = layers
    torch.manual_seed(0)
    model = moe.MoeLM(cfg, device, routing=routing or os.environ.get("MOE_ROUTING", "balanced"), ep_group=ep_group)

    def optimizer(params):
        return torch.optim.AdamW(param_groups(params), lr=3e-4, betas=(0.9, 0.95), weight_decay=0.1)
    return Program("moe", model, cfg, cfg["vocab"], model.notes(), lambda m, x, y: m(x, y), optimizer,
                   lambda m: list(m.layers), "bf16")


def make(program, model_file, layers=0, device=None, routing=None, ep_group=None):
    """The Program of a name: gpt-ln, gpt-ln-fp8, hf-llama, moe (the -fsdp variants wrap these: fsdp_wrap).
    routing / ep_group: the MoE program's routing mode (default $MOE_ROUTING or balanced) and expert-parallel
    group (None: every expert on this rank); the other programs have neither."""
    device = device or torch.device("cuda")
    base = re.sub(r"-(fsdp\d*|dtp\d*)$", "", program)
    if base in ("gpt-ln", "gpt-ln-fp8"):
        return make_gpt_ln(model_file, layers, device, fp8=base == "gpt-ln-fp8")
    if base == "hf-llama":
        return make_hf_llama(model_file, layers, device)
    if base == "moe":
        return make_moe(model_file, layers, device, routing, ep_group)
    if base in HF_PROGRAMS:
        return make_hf(base, model_file, layers, device)
    raise SystemExit(f"unknown program '{program}'")


def fsdp_wrap(prog, mesh, reshard_after_forward):
    """FSDP2 (fully_shard) per transformer layer and the root, as users shard these programs: the pure-bf16 ones
    (gpt-ln, moe) with FSDP2's default policy (bf16 all-gather and reduce-scatter), hf-llama with
    MixedPrecisionPolicy(param bf16, reduce fp32) under its own autocast (fp32 sharded parameters and AdamW)."""
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    kw = {"mesh": mesh, "reshard_after_forward": reshard_after_forward}
    if prog.precision == "mixed":
        kw["mp_policy"] = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for block in prog.blocks(prog.model):
        fully_shard(block, **kw)
    fully_shard(prog.model, **kw)
    prog.notes.append(f"FSDP2 fully_shard per layer + root, reshard_after_forward={reshard_after_forward}" +
                      (", MixedPrecisionPolicy(param bf16, reduce fp32)" if "mp_policy" in kw else
                       ", bf16 parameters: bf16 all-gather and reduce-scatter"))
    return prog


def tp_plan(prog):
    """Megatron-style DTensor TP of gpt-ln and hf-llama (validation/blind24/families.py's tp family): column-parallel
    q/k/v (gpt-ln: the fused qkv) and gate/up (gpt-ln: fc), row-parallel o and down (gpt-ln: proj, fc2),
    vocabulary-parallel embedding and LM head (sharded logits: the loss runs under loss_parallel)."""
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import ColwiseParallel, PrepareModuleInput, RowwiseParallel
    vocab_in = RowwiseParallel(input_layouts=Replicate(), output_layouts=Replicate())
    head = ColwiseParallel(output_layouts=Shard(-1), use_local_output=False)
    if prog.name == "gpt-ln":
        plan = {"wte": vocab_in, "head": head}
        for i in range(len(prog.model.blocks)):
            plan.update({f"blocks.{i}.qkv": ColwiseParallel(), f"blocks.{i}.proj": RowwiseParallel(),
                         f"blocks.{i}.fc": ColwiseParallel(), f"blocks.{i}.fc2": RowwiseParallel()})
        return plan
    if prog.name == "hf-llama":
        plan = {"model.embed_tokens": vocab_in, "lm_head": head}
        rep = {"hidden_states": Replicate()}
        for i in range(len(prog.model.model.layers)):
            p = f"model.layers.{i}."
            plan[p + "self_attn"] = PrepareModuleInput(input_kwarg_layouts=rep, desired_input_kwarg_layouts=rep,
                                                       use_local_output=False)
            plan[p + "mlp"] = PrepareModuleInput(input_layouts=(Replicate(),), desired_input_layouts=(Replicate(),),
                                                 use_local_output=False)
            for name in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "mlp.gate_proj", "mlp.up_proj"):
                plan[p + name] = ColwiseParallel()
            for name in ("self_attn.o_proj", "mlp.down_proj"):
                plan[p + name] = RowwiseParallel()
        return plan
    raise ValueError(f"no TP plan for program {prog.name}")


def init_one_process_group(device):
    import torch.distributed as dist
    if not dist.is_initialized():
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29517")
        backend = "nccl" if device.type == "cuda" else "gloo"
        dist.init_process_group(backend, rank=0, world_size=1, **({"device_id": device} if device.type == "cuda" else {}))


def dtensor_mesh(n, device):
    """A 1-D device mesh of n ranks on this one GPU (DTensor TP, FSDP2): n = 1 a real one-process group; n > 1 torch's
    fake process group (torch.testing._internal.distributed.fake_pg, the backend torchtitan's dry runs use), this process rank 0.
    On a mesh of one rank DTensor skips every redistribution, so its collectives' host path only shows with n > 1."""
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    if n == 1:
        init_one_process_group(device)
    elif not dist.is_initialized():
        from torch.testing._internal.distributed.fake_pg import FakeStore
        dist.init_process_group("fake", rank=0, world_size=n, store=FakeStore())
    return init_device_mesh(device.type, (n,))


def build_program(program, model_file, layers, device):
    prog = make(program, model_file, layers, device)
    fsdp = re.search(r"-fsdp(\d*)$", program)
    if fsdp:  # ZeRO-3 on one GPU: the trace of FSDP2's own kernels (-fsdp: a one-process group), or its host path
        # sharded as on N ranks (-fsdpN: the other N-1 a fake process group; FSDP2 skips its collectives on one rank)
        n = int(fsdp.group(1) or 1)
        fsdp_wrap(prog, dtensor_mesh(n, device), True)
        if n > 1:
            prog.notes.append(f"FSDP2 mesh of {n} whose other ranks are a fake process group (this process is rank 0: "
                              "its shards, FSDP2's copy-in/out and collective calls, no communication)")
    loss_ctx = contextlib.nullcontext
    dtp = re.search(r"-dtp(\d*)$", program)
    if dtp:  # DTensor TP on one GPU: the trace and host cost of DTensor's own dispatch
        from torch.distributed.tensor.parallel import loss_parallel, parallelize_module
        parallelize_module(prog.model, dtensor_mesh(int(dtp.group(1) or 1), device), tp_plan(prog))
        prog.notes.append(f"DTensor TP (tp_plan) on a mesh of {int(dtp.group(1) or 1)}" +
                          (" whose other ranks are a fake process group (this process is rank 0: its shards, "
                           "DTensor's redistributions and collective calls, no communication)" if dtp.group(1) else
                           " (one process)") + ", loss under loss_parallel")
        loss_ctx = loss_parallel
    model, opt = prog.model, prog.optimizer(prog.model.parameters())

    def step(x, y, micro=1):
        opt.zero_grad(set_to_none=True)
        for _ in range(micro):  # gradient accumulation: micro-batches 2..micro add into .grad (the first hands over)
            with loss_ctx():  # the backward too, as the tp family runs it (families.accumulate)
                loss = prog.loss(model, x, y)
                loss.backward()
        opt.step()
        return loss.detach()
    return step, prog.vocab, prog.cfg, prog.notes


def build_harness(family, model_file, layers, device):
    sys.path.insert(0, os.path.join(HERE, "..", "harness"))
    import parallel
    import plans
    init_one_process_group(device)
    mcfg = plans.load_model_json(model_file)
    if layers:
        mcfg["layers"] = layers
    ctx = parallel.Ctx(device, 0, 1)
    zero = 3 if family == "zero3" else 0
    holder = {}

    def step(x, y, micro=1):
        if micro != 1:
            raise SystemExit("the harness families build their own step: no --shapes MBSxSEQxM for them")
        key = tuple(x.shape)
        if key not in holder:  # the harness builds its step around one batch
            holder.clear()
            c = plans.Config(family=family, model=mcfg["name"], model_file=model_file, gpus=1, kinds=["strong"],
                             zero=zero, mbs=x.shape[0], gbs=x.shape[0])
            holder[key] = parallel.build(c, mcfg, ctx, x, y)
        return holder[key].step()
    return step, mcfg["vocab"], mcfg, [f"validation/harness family {family} on one GPU"]


def build(program, model_file, layers=0, device=None):
    """Returns (step(x, y), vocab, config dict, notes)."""
    device = device or torch.device("cuda")
    if program in ("harness-single", "harness-zero3"):
        return build_harness(program.split("-")[1], model_file, layers, device)
    return build_program(program, model_file, layers, device)


def sdpa_context(program, device):
    """The harness forces flash attention (as its measurements did); the other programs keep PyTorch's own choice."""
    if device.type != "cuda" or not program.startswith("harness"):
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel
    return sdpa_kernel(SDPBackend.FLASH_ATTENTION)
