"""Training programs that are not validation/harness, for blind checks of trace-driven predictions (one GPU).

Each program builds its model from a file scalescope also reads, and returns a `step()` that runs one training
step (zero_grad, forward with loss, backward, optimizer step) on one micro-batch of random tokens:
  gpt-ln    a nanoGPT-style GPT written here (validation/programs/gpt-ln-*.json, scalescope's native model format):
            LayerNorm with bias, GELU(tanh) MLP, biases on every linear, no positional embedding, untied head;
            pure bf16 parameters, gradients and AdamW states (torch.optim.AdamW, its default foreach kernels);
            flash SDPA; loss F.cross_entropy on the bf16 logits.
  hf-llama  Hugging Face transformers' LlamaForCausalLM from a config.json (attn_implementation="sdpa"): fp32
            parameters, torch.autocast(bfloat16), labels passed to the model (its own shifted, fp32-upcast loss),
            torch.optim.AdamW with its defaults.
  harness   validation/harness's Llama (family single: fp32 params + autocast, fused AdamW; or zero3: FSDP2 bf16
            on a one-process group), from validation/models/*.json; for the harness's own traces.
`layers` (optional) builds the model with fewer layers than its file says (a trace needs a few layers only).
"""
import contextlib
import json
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))


class GptBlock(nn.Module):
    def __init__(self, h, heads, f):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(h)
        self.qkv = nn.Linear(h, 3 * h)
        self.proj = nn.Linear(h, h)
        self.ln2 = nn.LayerNorm(h)
        self.fc = nn.Linear(h, f)
        self.fc2 = nn.Linear(f, h)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(h, dim=-1)
        q, k, v = (t.view(b, s, self.heads, h // self.heads).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).contiguous().view(b, s, h))
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


def build_gpt_ln(model_file, layers, device):
    cfg = _load(model_file)
    if layers:
        cfg["layers"] = layers
    torch.manual_seed(0)
    model = GptLn(cfg).to(device=device, dtype=torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95), weight_decay=0.1)

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        loss = model(x, y)
        loss.backward()
        opt.step()
        return loss.detach()
    return step, cfg["vocab"], cfg, ["pure bf16 params/grads/AdamW (foreach)", "loss on bf16 logits"]


def build_hf_llama(config_file, layers, device):
    from transformers import AutoModelForCausalLM, LlamaConfig
    cfg = LlamaConfig.from_json_file(config_file)
    if layers:
        cfg.num_hidden_layers = layers
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation="sdpa").to(device=device, dtype=torch.float32)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ac = torch.autocast(device.type, dtype=torch.bfloat16)

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        with ac:
            loss = model(input_ids=x, labels=y).loss
        loss.backward()
        opt.step()
        return loss.detach()
    import transformers
    notes = [f"transformers {transformers.__version__} LlamaForCausalLM, sdpa", "fp32 params, bf16 autocast",
             "torch.optim.AdamW defaults"]
    return step, cfg.vocab_size, cfg.to_dict(), notes


def build_harness(family, model_file, layers, device):
    sys.path.insert(0, os.path.join(HERE, "..", "harness"))
    import parallel
    import plans
    import torch.distributed as dist
    if not dist.is_initialized():
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29517")
        backend = "nccl" if device.type == "cuda" else "gloo"
        dist.init_process_group(backend, rank=0, world_size=1, **({"device_id": device} if device.type == "cuda" else {}))
    mcfg = plans.load_model_json(model_file)
    if layers:
        mcfg["layers"] = layers
    ctx = parallel.Ctx(device, 0, 1)
    zero = 3 if family == "zero3" else 0
    holder = {}

    def step(x, y):
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
    if program == "gpt-ln":
        return build_gpt_ln(model_file, layers, device)
    if program == "hf-llama":
        return build_hf_llama(model_file, layers, device)
    if program in ("harness-single", "harness-zero3"):
        return build_harness(program.split("-")[1], model_file, layers, device)
    raise SystemExit(f"unknown program '{program}' (gpt-ln, hf-llama, harness-single, harness-zero3)")


def sdpa_context(program, device):
    """The harness forces flash attention (as its measurements did); the other programs keep PyTorch's own choice."""
    if device.type != "cuda" or not program.startswith("harness"):
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel
    return sdpa_kernel(SDPBackend.FLASH_ATTENTION)
