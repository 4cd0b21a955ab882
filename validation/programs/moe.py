"""A Mixtral-style MoE decoder for the blind checks (program moe), with expert parallelism over all-to-all.

Model (a scalescope native model JSON with the MoE keys, e.g. validation/programs/moe-1.3b.json): token embedding;
per layer RMSNorm -> attention (validation/harness/model.py's Attention: q/k/v/o without bias, RoPE, GQA through
SDPA, causal) -> residual, RMSNorm -> MoE -> residual; final RMSNorm, untied LM head, cross-entropy on the bf16
logits. Pure bf16 parameters (AdamW like gpt-ln: programs.py).
MoE layer (every layer: moe_layer_freq 1, no dense first layers, no shared experts, dropless: capacity_factor 0):
  router    bf16 linear hidden -> experts, softmax in fp32 over all experts, the top_k probabilities renormalised
            to sum to 1 (Mixtral), cast to bf16 as the combine weights;
  routing   `learned`: each token's top_k experts; `balanced`: token t takes experts (t k + j) mod E, j < k (every
            expert gets exactly T k / E tokens), weighted by the router's softmax at those experts (the router
            still runs and gets gradients) -- the load a scalescope prediction with moe_imbalance=1.0 describes;
  dispatch  the T k (token, expert) pairs sorted by expert (stable argsort), token rows gathered in that order;
            with expert parallelism (ep > 1, experts [r E/ep, (r+1) E/ep) on rank r) the per-expert counts are
            exchanged first (all_to_all_single of E counts), then the rows (all_to_all_single with the split
            sizes, which needs the counts on the host: one device-to-host copy per layer), and regrouped by local
            expert;
  experts   SwiGLU: silu(x W1^T) * (x W3^T), then W2^T; three torch._grouped_mm over the local experts (bf16,
            offsets = cumulative tokens per expert; a Python loop of matmuls where _grouped_mm does not run);
  combine   the reverse all_to_all_single, rows back in (token, choice) order, weighted sum over the k choices.
Learned routing records the tokens per expert of every layer (counts summed over steps, read after timing).
"""
import json
import math
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "harness"))
from model import Attention, RMSNorm  # noqa: E402  (validation/harness: the attention the harness measured)

MOE_KEYS = {"experts", "top_k", "moe_ffn_hidden", "shared_experts", "first_dense_layers", "moe_layer_freq",
            "capacity_factor", "router_dtype"}


def load_config(path):
    with open(path) as f:
        cfg = json.load(f)
    missing = (MOE_KEYS | {"layers", "hidden", "heads", "kv_heads", "vocab", "seq_len"}) - set(cfg)
    if missing:
        raise ValueError(f"{path}: missing keys {sorted(missing)}")
    if cfg["shared_experts"] or cfg["first_dense_layers"] or cfg["moe_layer_freq"] != 1 or cfg["capacity_factor"]:
        raise ValueError(f"{path}: moe.py implements shared_experts 0, first_dense_layers 0, moe_layer_freq 1, "
                         f"capacity_factor 0 only")
    if cfg["router_dtype"] != "bf16" or cfg.get("ffn") != "swiglu" or cfg.get("norm") != "rmsnorm":
        raise ValueError(f"{path}: moe.py implements router_dtype bf16, ffn swiglu, norm rmsnorm only")
    return cfg


def grouped_mm_works(device):
    """torch._grouped_mm runs here (bf16: Hopper or newer; torch 2.11 also has a CPU implementation); else the loop
    is used."""
    if not hasattr(torch, "_grouped_mm"):
        return False
    return device.type == "cpu" or (device.type == "cuda" and torch.cuda.get_device_capability(device) >= (9, 0))


class _AllToAll(torch.autograd.Function):
    """all_to_all_single of rows with split sizes; the backward sends the gradients back the same way."""

    @staticmethod
    def forward(ctx, x, out_splits, in_splits, group):
        ctx.splits, ctx.group = (out_splits, in_splits), group
        out = x.new_empty((sum(out_splits), x.shape[1]))
        dist.all_to_all_single(out, x.contiguous(), out_splits, in_splits, group=group)
        return out

    @staticmethod
    def backward(ctx, g):
        out_splits, in_splits = ctx.splits
        gi = g.new_empty((sum(in_splits), g.shape[1]))
        dist.all_to_all_single(gi, g.contiguous(), in_splits, out_splits, group=ctx.group)
        return gi, None, None, None


class Experts(nn.Module):
    def __init__(self, n, h, f, grouped):
        super().__init__()
        self.grouped = grouped
        self.w1 = nn.Parameter(torch.empty(n, f, h))  # gate
        self.w3 = nn.Parameter(torch.empty(n, f, h))  # up
        self.w2 = nn.Parameter(torch.empty(n, h, f))  # down

    def forward(self, x, counts):
        """x: rows sorted by local expert; counts: (n,) int64 rows per expert (on the device)."""
        if self.grouped:
            offs = torch.cumsum(counts, 0, dtype=torch.int32)
            g = torch._grouped_mm(x, self.w1.transpose(-2, -1), offs=offs)
            u = torch._grouped_mm(x, self.w3.transpose(-2, -1), offs=offs)
            return torch._grouped_mm(F.silu(g) * u, self.w2.transpose(-2, -1), offs=offs)
        outs, start = [], 0
        for e, c in enumerate(counts.tolist()):
            xe = x[start:start + c]
            outs.append((F.silu(xe @ self.w1[e].t()) * (xe @ self.w3[e].t())) @ self.w2[e].t())
            start += c
        return torch.cat(outs) if outs else x[:0]


class MoeLayer(nn.Module):
    def __init__(self, cfg, ep_group, grouped, routing):
        super().__init__()
        self.E, self.k, self.routing = cfg["experts"], cfg["top_k"], routing
        self.group = ep_group
        self.ep = dist.get_world_size(ep_group) if ep_group is not None else 1
        if self.E % self.ep:
            raise ValueError(f"experts {self.E} not divisible by ep {self.ep}")
        self.router = nn.Linear(cfg["hidden"], self.E, bias=False)
        self.experts = Experts(self.E // self.ep, cfg["hidden"], cfg["moe_ffn_hidden"], grouped)
        self.register_buffer("tokens_per_expert", torch.zeros(self.E, dtype=torch.int64), persistent=False)

    def route(self, x):
        probs = torch.softmax(self.router(x).float(), dim=-1)  # (T, E)
        if self.routing == "balanced":
            T = x.shape[0]
            idx = (torch.arange(T * self.k, device=x.device) % self.E).view(T, self.k)
            top = probs.gather(1, idx)
        else:
            top, idx = probs.topk(self.k, dim=-1)
        return idx, (top / top.sum(-1, keepdim=True)).to(x.dtype)

    def forward(self, x):
        b, s, h = x.shape
        x = x.reshape(-1, h)
        idx, w = self.route(x)
        flat = idx.reshape(-1)
        order = torch.argsort(flat, stable=True)
        counts = torch.bincount(flat, minlength=self.E)
        if self.routing == "learned":
            self.tokens_per_expert += counts.detach()
        rows = x.index_select(0, order // self.k)  # (T k, h), sorted by global expert
        if self.ep == 1:
            y = self.experts(rows, counts)
        else:
            el = self.E // self.ep
            recv = torch.empty_like(counts)
            dist.all_to_all_single(recv, counts, group=self.group)  # recv[s * el + e]: rows from rank s for e
            both = torch.stack([counts.view(self.ep, el).sum(1), recv.view(self.ep, el).sum(1)]).tolist()
            in_splits, out_splits = both
            got = _AllToAll.apply(rows, out_splits, in_splits, self.group)  # ordered by (source, local expert)
            local_e = torch.arange(el, device=x.device).repeat(self.ep).repeat_interleave(
                recv, output_size=sum(out_splits))  # no second device-to-host copy
            regroup = torch.argsort(local_e, stable=True)
            y_local = self.experts(got.index_select(0, regroup), recv.view(self.ep, el).sum(0))
            y_got = y_local.index_select(0, torch.argsort(regroup))
            y = _AllToAll.apply(y_got, in_splits, out_splits, self.group)
        y = y.index_select(0, torch.argsort(order)).view(-1, self.k, h)  # (T, k, h) in token order
        return (y * w.unsqueeze(-1)).sum(1).view(b, s, h)


class Block(nn.Module):
    def __init__(self, cfg, ep_group, grouped, routing):
        super().__init__()
        self.attn_norm = RMSNorm(cfg["hidden"])
        self.attn = Attention(cfg)
        self.mlp_norm = RMSNorm(cfg["hidden"])
        self.moe = MoeLayer(cfg, ep_group, grouped, routing)

    def forward(self, x, cos, sin):
        x = x + self.attn(self.attn_norm(x), cos, sin)
        return x + self.moe(self.mlp_norm(x))


class MoeLM(nn.Module):
    """The whole model, pure bf16, initialised on `device`. ep_group: the expert-parallel process group (None: all
    experts here). Expert parameters are named *.moe.experts.* (expert_param_names)."""

    def __init__(self, cfg, device, routing="balanced", ep_group=None):
        super().__init__()
        if routing not in ("balanced", "learned"):
            raise ValueError(f"routing '{routing}': expected balanced or learned")
        self.cfg, self.routing = cfg, routing
        self.grouped = grouped_mm_works(device)
        with torch.device(device):
            self.tok_embeddings = nn.Embedding(cfg["vocab"], cfg["hidden"])
            self.layers = nn.ModuleList(Block(cfg, ep_group, self.grouped, routing) for _ in range(cfg["layers"]))
            self.norm = RMSNorm(cfg["hidden"])
            self.output = nn.Linear(cfg["hidden"], cfg["vocab"], bias=False)
            hd = cfg["hidden"] // cfg["heads"]
            inv = 1.0 / (10000.0 ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd))
            freqs = torch.outer(torch.arange(cfg["seq_len"], dtype=torch.float32), inv)
            emb = torch.cat((freqs, freqs), dim=-1)
            self.register_buffer("rope_cos", emb.cos(), persistent=False)
            self.register_buffer("rope_sin", emb.sin(), persistent=False)
        self._init_weights()
        self.to(torch.bfloat16)

    @torch.no_grad()
    def _init_weights(self):
        for name, p in self.named_parameters():
            if name.endswith("norm.weight"):
                p.fill_(1.0)
            else:
                std = 0.02 / math.sqrt(2 * self.cfg["layers"]) if name.endswith(("o_proj.weight", "w2")) else 0.02
                p.normal_(0.0, std)

    def expert_param_names(self):
        return [n for n, _ in self.named_parameters() if ".moe.experts." in n]

    def counter_buffer_names(self):
        """The routing counters: each rank's own (DDP must not broadcast rank 0's over them)."""
        return [n for n, _ in self.named_buffers() if n.endswith("tokens_per_expert")]

    def notes(self):
        c = self.cfg
        return [f"MoE {c['experts']} experts top-{c['top_k']}, expert ffn {c['moe_ffn_hidden']}, routing "
                f"{self.routing}", "pure bf16 params/grads/AdamW (foreach)", "experts: " +
                ("torch._grouped_mm" if self.grouped else "a loop of matmuls (no _grouped_mm here)"),
                "dispatch/combine: all_to_all_single with split sizes (counts exchanged first)"]

    def forward(self, idx, targets):
        x = self.tok_embeddings(idx)
        s = x.shape[1]
        cos, sin = self.rope_cos[:s], self.rope_sin[:s]
        for layer in self.layers:
            x = layer(x, cos, sin)
        logits = self.output(self.norm(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    def routing_stats(self):
        """Learned routing: per layer max / mean tokens per expert (global counts, summed over this rank's steps;
        the caller sums them over data-parallel ranks first)."""
        return [layer.moe.tokens_per_expert for layer in self.layers]
