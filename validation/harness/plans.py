"""Which configurations the harness measures per world size, in order of importance, with time estimates (no torch)."""
import json
from dataclasses import dataclass, field

WARMUP_STEPS = 3
TIMED_STEPS = 8
# Rough achieved bf16 throughput of one H200 on this model (~40% of 989 TFLOP/s dense), used only to plan the
# time budget; each run rescales its estimates by the measured/estimated ratio of the configs it has finished.
GPU_FLOPS = 380e12
CPU_FLOPS = 2e9  # per gloo rank of the tiny CPU test, same purpose
GPU_CONFIG_OVERHEAD_S = 5.0  # build + shard + first-step lazy init + cleanup
CPU_CONFIG_OVERHEAD_S = 1.5

TINY_MODEL = {"name": "tiny", "layers": 4, "hidden": 128, "heads": 8, "kv_heads": 4, "ffn_hidden": 256,
              "ffn": "swiglu", "norm": "rmsnorm", "bias": False, "vocab": 512, "tied_embeddings": False, "seq_len": 64}

# Family importance when the budget runs short (first = most important).
FAMILY_ORDER = ["single", "ddp", "zero3", "tp", "pp-1f1b", "tp-dp", "zero1", "zero2", "pp-gpipe", "pp-interleaved"]


@dataclass
class Config:
    family: str
    model: str  # model name from the JSON
    model_file: str
    gpus: int
    kinds: list  # "strong" and/or "weak": one measurement can serve both curves (e.g. n=4 where 4*n == 16)
    tp: int = 1
    pp: int = 1
    dp: int = 1
    zero: int = 0
    mbs: int = 1
    gbs: int = 1
    schedule: str = "1f1b"
    tier: int = 0
    vpp: int = 1  # model chunks per pipeline rank (interleaved schedule only)
    est_step_s: float = 0.0
    est_total_s: float = 0.0
    extra: dict = field(default_factory=dict)

    def microbatches(self):
        return self.gbs // (self.mbs * self.dp)

    def plan_string(self):
        return (f"tp={self.tp},pp={self.pp},dp={self.dp},zero={self.zero},mbs={self.mbs},gbs={self.gbs},"
                f"schedule={self.schedule},vpp={self.vpp},recompute=none,sp=0,precision=mixed,bucket_MB=25,overlap=1")

    def slug(self):
        s = f"tp{self.tp}-pp{self.pp}-dp{self.dp}-z{self.zero}-mbs{self.mbs}-gbs{self.gbs}"
        return s + (f"-{self.schedule}" if self.pp > 1 else "") + (f"-vpp{self.vpp}" if self.vpp > 1 else "")

    def filename(self, kind):
        return f"{self.family}-{self.model}-{kind}-n{self.gpus}-{self.slug()}.json"

    def label(self):
        return f"{self.family} {self.model} {'+'.join(self.kinds)} n{self.gpus} {self.slug()}"


def family_layout(family, n):
    """(tp, pp, dp, zero, schedule) of a family on n GPUs, or None when the family does not exist there."""
    if n == 1:
        return (1, 1, 1, 0, "1f1b") if family == "single" else None
    return {"ddp": (1, 1, n, 0, "1f1b"), "zero1": (1, 1, n, 1, "1f1b"), "zero2": (1, 1, n, 2, "1f1b"),
            "zero3": (1, 1, n, 3, "1f1b"), "tp": (n, 1, 1, 0, "1f1b"), "pp-gpipe": (1, n, 1, 0, "gpipe"),
            "pp-1f1b": (1, n, 1, 0, "1f1b"), "pp-interleaved": (1, n, 1, 0, "interleaved"),
            "tp-dp": (2, 1, n // 2, 0, "1f1b") if n == 4 else None}.get(family)


def valid(c, m):
    # Interleaved (Megatron's and torch's Interleaved1F1B with whole rounds): every chunk the same number of
    # layers, and micro-batches in whole rounds of pp.
    interleaved_ok = c.vpp == 1 or (c.microbatches() % c.pp == 0 and c.microbatches() >= c.pp)
    return (m["heads"] % c.tp == 0 and m["kv_heads"] % c.tp == 0 and m["ffn_hidden"] % c.tp == 0
            and m["vocab"] % c.tp == 0 and m["layers"] % (c.pp * c.vpp) == 0 and c.gbs % (c.mbs * c.dp) == 0
            and c.microbatches() >= 1 and interleaved_ok)


def step_flops(c, m):
    """Training FLOPs of one step: 3x forward; forward = 2 x matmul params + causal attention 2*s*h per layer/token."""
    h, s = m["hidden"], m["seq_len"]
    hd, kv = h // m["heads"], m["kv_heads"]
    per_layer = 2 * h * h + 2 * h * kv * hd + 3 * h * m["ffn_hidden"]
    fwd_per_token = 2 * (m["layers"] * per_layer + h * m["vocab"]) + 2 * s * h * m["layers"]
    return 3 * fwd_per_token * s * c.gbs


def family_factor(c):
    """Assumed slowdown over ideal linear scaling (communication, smaller GEMMs, pipeline bubble)."""
    f = {"single": 1.0, "ddp": 1.05, "zero1": 1.1, "zero2": 1.1, "zero3": 1.15, "tp": 1.0 + 0.15 * (c.tp - 1),
         "tp-dp": 1.2}.get(c.family, 1.05)
    if c.pp > 1:
        m = c.microbatches()
        f *= (m + (c.pp - 1) / c.vpp) / m
    return f


def estimate(c, m, cpu):
    flops = CPU_FLOPS if cpu else GPU_FLOPS
    c.est_step_s = step_flops(c, m) / (c.gpus * flops) * family_factor(c)
    overhead = CPU_CONFIG_OVERHEAD_S if cpu else GPU_CONFIG_OVERHEAD_S
    # the first warm-up step costs about two steps (allocator growth, cuBLAS/flash init, shape inference)
    c.est_total_s = overhead + (WARMUP_STEPS + 1 + TIMED_STEPS) * c.est_step_s
    return c


def build_configs(n, models, families=None, cpu=False):
    """Configs for world size n in measurement order. models: list of (model_json_dict, model_file)."""
    fams = [f for f in FAMILY_ORDER if family_layout(f, n) and (not families or f in families)]
    big = models[0]
    out, seen = [], {}

    def add(tier, model, fam, kind, mbs, gbs, vpp=None):
        m, path = model
        tp, pp, dp, zero, sched = family_layout(fam, n)
        vpp = vpp or (2 if sched == "interleaved" else 1)
        c = Config(fam, m["name"], path, n, [kind], tp, pp, dp, zero, mbs, gbs, sched, tier, vpp)
        if not valid(c, m):
            return
        key = (fam, m["name"], c.slug())
        if key in seen:  # same run serves both scaling curves
            if kind not in seen[key].kinds:
                seen[key].kinds.append(kind)
            return
        seen[key] = c
        out.append(estimate(c, m, cpu))

    strong_gbs = 16
    # tier 0: every family, main micro-batch, strong (gbs 16) then weak (4 sequences per GPU)
    for kind, gbs in (("strong", strong_gbs), ("weak", 4 * n)):
        for fam in fams:
            add(0, big, fam, kind, 2, gbs)
    # tier 1: micro-batch sweep where it matters most (bubble, TP message size, ZeRO-3 gathers per micro-batch)
    for fam in ["single", "pp-1f1b", "tp", "zero3", "pp-interleaved"]:
        for mbs in (1, 4):
            if fam in fams:
                add(1, big, fam, "strong", mbs, strong_gbs)
    # tier 2: one sequence per GPU: least compute per byte communicated (the most communication-bound points)
    for fam in ["single", "ddp", "zero3", "tp", "tp-dp"]:
        if fam in fams:
            add(2, big, fam, "weak", 1, n)
    # tier 3: the larger model, fixed global batch of 8 sequences, micro-batch 1
    for model in models[1:]:
        for fam in ["single", "ddp", "zero3", "tp", "pp-1f1b", "tp-dp", "pp-interleaved"]:
            if fam in fams:
                add(3, model, fam, "strong", 1, 8)
    # tier 4: the rest of the sweeps
    for fam in ["ddp", "tp-dp", "pp-gpipe"]:
        for mbs in (1, 4):
            if fam in fams:
                add(4, big, fam, "strong", mbs, strong_gbs)
    for fam in ["zero1", "zero2"]:
        if fam in fams:
            add(4, big, fam, "weak", 1, n)
    for model in models[1:]:
        for fam in ["zero1", "zero2", "pp-gpipe"]:
            if fam in fams:
                add(4, model, fam, "strong", 1, 8)
    # interleaved with more chunks per rank (vpp 4): smaller bubble, more sends
    if "pp-interleaved" in fams:
        add(4, big, "pp-interleaved", "strong", 2, strong_gbs, vpp=4)
    return out


def print_table(configs, budget_s=None, file=None):
    total, lines = 0.0, []
    for i, c in enumerate(configs):
        total += c.est_total_s
        mark = "" if budget_s is None or total <= budget_s else "  (beyond budget unless earlier ones run faster)"
        lines.append(f"{i:3d} t{c.tier} {c.family:9s} {c.model:9s} {'+'.join(c.kinds):12s} {c.slug():40s} "
                     f"m={c.microbatches():2d} est step {c.est_step_s:7.3f} s  config {c.est_total_s:6.1f} s  "
                     f"cum {total:7.1f} s{mark}")
    print("\n".join(lines), file=file)
    return total


def load_json(path):
    with open(path) as f:
        return json.load(f)


MODEL_KEYS = {"name", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "ffn", "norm", "bias", "vocab",
              "tied_embeddings", "seq_len"}


def load_model_json(path):
    """Reads a native model JSON and checks that the harness's model implements exactly what it describes."""
    cfg = load_json(path)
    unknown, missing = set(cfg) - MODEL_KEYS, MODEL_KEYS - set(cfg)
    if unknown or missing:
        raise ValueError(f"{path}: unknown keys {sorted(unknown)}, missing keys {sorted(missing)}")
    if cfg["ffn"] != "swiglu" or cfg["norm"] != "rmsnorm" or cfg["bias"] or cfg["tied_embeddings"]:
        raise ValueError(f"{path}: the harness implements only swiglu, rmsnorm, no bias, untied embeddings")
    if cfg["hidden"] % cfg["heads"] or cfg["heads"] % cfg["kv_heads"]:
        raise ValueError(f"{path}: hidden must be divisible by heads and heads by kv_heads")
    return cfg


def param_count(cfg):
    """Exact parameter count of validation/harness/model.py's Transformer (embedding + layers + final norm + head)."""
    h, hd = cfg["hidden"], cfg["hidden"] // cfg["heads"]
    attn = h * cfg["heads"] * hd * 2 + h * cfg["kv_heads"] * hd * 2  # q, o + k, v
    mlp = 3 * h * cfg["ffn_hidden"]  # gate, up, down
    layer = attn + mlp + 2 * h  # two RMSNorm weights
    return cfg["vocab"] * h * 2 + cfg["layers"] * layer + h
