"""Llama-style decoder in plain PyTorch (RMSNorm, SwiGLU, GQA + RoPE, flash SDPA), built from a native model JSON."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return F.rms_norm(x, (x.shape[-1],), self.weight, self.eps)


def apply_rope(x, cos, sin):
    """x: (b, heads, s, d); cos/sin: (s, d). Rotate-half RoPE as in Llama (HF layout)."""
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class Attention(nn.Module):
    expand_kv = False  # set once per process by the SDPA probe when flash attention cannot take GQA directly

    def __init__(self, cfg):
        super().__init__()
        h, heads, kv = cfg["hidden"], cfg["heads"], cfg["kv_heads"]
        self.head_dim = h // heads
        self.q_proj = nn.Linear(h, heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(h, kv * self.head_dim, bias=False)
        self.v_proj = nn.Linear(h, kv * self.head_dim, bias=False)
        self.o_proj = nn.Linear(heads * self.head_dim, h, bias=False)

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        # -1 for the head count: under tensor parallelism each rank holds heads/tp and kv_heads/tp.
        q = self.q_proj(x).view(b, s, -1, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, -1, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, -1, self.head_dim).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if self.expand_kv:
            k = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)
            v = v.repeat_interleave(q.shape[1] // v.shape[1], dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=not self.expand_kv)
        return self.o_proj(y.transpose(1, 2).reshape(b, s, -1))


class SwiGLU(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        h, f = cfg["hidden"], cfg["ffn_hidden"]
        self.gate_proj = nn.Linear(h, f, bias=False)
        self.up_proj = nn.Linear(h, f, bias=False)
        self.down_proj = nn.Linear(f, h, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.attn_norm = RMSNorm(cfg["hidden"])
        self.attn = Attention(cfg)
        self.mlp_norm = RMSNorm(cfg["hidden"])
        self.mlp = SwiGLU(cfg)

    def forward(self, x, cos, sin):
        x = x + self.attn(self.attn_norm(x), cos, sin)
        return x + self.mlp(self.mlp_norm(x))


class Transformer(nn.Module):
    """Full model, or one pipeline stage of it when built with a layer range (embedding first, norm+head last)."""

    def __init__(self, cfg, first_layer=0, last_layer=None):
        super().__init__()
        L = cfg["layers"]
        last_layer = L if last_layer is None else last_layer
        self.cfg = cfg
        self.tok_embeddings = nn.Embedding(cfg["vocab"], cfg["hidden"]) if first_layer == 0 else None
        # ModuleDict keyed by the global layer index so names stay the same in every pipeline stage.
        self.layers = nn.ModuleDict({str(i): Block(cfg) for i in range(first_layer, last_layer)})
        self.norm = RMSNorm(cfg["hidden"]) if last_layer == L else None
        self.output = nn.Linear(cfg["hidden"], cfg["vocab"], bias=False) if last_layer == L else None
        hd = cfg["hidden"] // cfg["heads"]
        self.register_buffer("rope_cos", torch.empty(cfg["seq_len"], hd), persistent=False)
        self.register_buffer("rope_sin", torch.empty(cfg["seq_len"], hd), persistent=False)

    @torch.no_grad()
    def init_weights(self):
        """Initialises after `to_empty` (the model is built on the meta device, then sharded, then materialised)."""
        hd = self.rope_cos.shape[1]
        inv_freq = 1.0 / (10000.0 ** (torch.arange(0, hd, 2, dtype=torch.float32, device=self.rope_cos.device) / hd))
        t = torch.arange(self.rope_cos.shape[0], dtype=torch.float32, device=self.rope_cos.device)
        freqs = torch.outer(t, inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.rope_cos.copy_(emb.cos())
        self.rope_sin.copy_(emb.sin())
        for name, p in self.named_parameters():
            local = p.to_local() if hasattr(p, "to_local") else p  # DTensor shards: init the local part
            if name.endswith("norm.weight"):
                local.fill_(1.0)
            else:
                local.normal_(0.0, 0.02 if "o_proj" not in name and "down_proj" not in name
                              else 0.02 / math.sqrt(2 * self.cfg["layers"]))

    def forward(self, x):
        h = self.tok_embeddings(x) if self.tok_embeddings is not None else x
        s = h.shape[1]
        cos, sin = self.rope_cos[:s], self.rope_sin[:s]
        for layer in self.layers.values():
            h = layer(h, cos, sin)
        if self.output is not None:
            h = self.output(self.norm(h))
        return h


def cross_entropy(logits, labels):
    """Mean token cross-entropy over the vocabulary, computed in fp32 (as practitioners do under bf16)."""
    return F.cross_entropy(logits.float().flatten(0, 1), labels.flatten(0, 1))
