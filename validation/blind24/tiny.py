"""Tiny models of every kind the blind check runs, for its CPU checks (gloo): the same code on small shapes."""
import dataclasses
import json
import os

import points as P


def write_json(path, doc):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)


TINY = {
    "gpt": {"name": "gpt-tiny", "layers": 4, "hidden": 64, "heads": 4, "kv_heads": 4, "ffn_hidden": 128, "ffn": "gelu",
            "norm": "layernorm", "bias": True, "vocab": 512, "tied_embeddings": False, "seq_len": 256,
            "positional": "none"},
    "llama": {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
              "intermediate_size": 128, "num_attention_heads": 8, "num_key_value_heads": 4, "num_hidden_layers": 4,
              "vocab_size": 512, "max_position_embeddings": 256, "rms_norm_eps": 1e-05, "rope_theta": 10000.0,
              "hidden_act": "silu", "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False,
              "torch_dtype": "float32"},
    "moe": {"layers": 2, "hidden": 64, "heads": 4, "kv_heads": 2, "ffn_hidden": 32, "ffn": "swiglu",
            "norm": "rmsnorm", "bias": False, "vocab": 512, "tied_embeddings": False, "seq_len": 256,
            "positional": "rope", "moe_ffn_hidden": 32, "shared_experts": 0, "first_dense_layers": 0,
            "moe_layer_freq": 1, "capacity_factor": 0, "router_dtype": "bf16"},
}


def point(p, d):
    """The point on a tiny model of the same kind (written into d), short sequences: for CPU checks."""
    if p.model in (P.GPT, P.GPT_CP):
        cfg, name = dict(TINY["gpt"]), "gpt-tiny.json"
    elif p.model == P.LLAMA:
        cfg, name = dict(TINY["llama"]), "llama-tiny.json"
    else:
        with open(p.model) as f:
            real = json.load(f)
        cfg = dict(TINY["moe"], experts=real["experts"], top_k=real["top_k"], name=f"moe-tiny-{real['experts']}")
        name = f"moe-tiny-e{real['experts']}k{real['top_k']}.json"
    path = os.path.join(d, name)
    write_json(path, cfg)
    return dataclasses.replace(p, model=path, seq=64 if p.family == "cp" else 32, est_s=2.0)


def trace(t, d):
    """A trace of the part on its tiny model, short sequences (the session script's CPU dry run)."""
    p = point(P.Point("t", t.part, "stack", t.program.replace("-fsdp", ""), "single", t.model, [t.key], 1, t.mbs,
                      t.seq, t.mbs), d)
    return dataclasses.replace(t, model=p.model, mbs=2, seq=p.seq)
