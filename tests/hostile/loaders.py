"""Hostile inputs for the loaders added after the first suite (hostile.py calls these with itself as `h`): stack
profiles and their expressions, PyTorch traces, sweep specs and journals, Megatron flags files, nvidia-smi topo
text and a measured set's pricing.json. Each probe asserts the exit code and the message (file, field,
expectation); inputs are generated in h.tmp from the repository's own files."""
import gzip, json, os, re, shutil, stat

PLAN_SIM = ["--model", "llama3-8b", "--cluster", "hgx-h200-8", "--plan", "tp=2,pp=1,dp=4,mbs=1,gbs=32"]
GPT_LN = "validation/programs/gpt-ln-0.5b.json"
SEED_TRACE = "fuzz/seeds/torch_trace/gpt-ln-2layers.json"  # a real trace trimmed to 2 layers (trim_trace.py)


def _stack(h):
    return json.load(open(os.path.join(h.ROOT, "models/stacks/pytorch-eager.json")))


def stack_profiles(h):
    """Stack profiles (--framework FILE) and the expression language their sizes are written in."""
    S = _stack(h)
    def sim(name, text, rc, msg, **kw):
        f = h.write(name, text)
        h.run("stack profile", ["simulate"] + PLAN_SIM + ["--framework", f], rc, msg, **kw)
    row = "phases.layer_forward.0"
    first = S["phases"]["layer_forward"][0]
    size_key = next(k for k in ("bytes", "m") if k in first)
    cases = [
        ("schema", json.dumps(h.with_key(S, "schema", "scalescope.stack/9")), r"\$\.schema: expected \"scalescope\.stack/1\""),
        ("unknown-key", json.dumps(h.with_key(S, "phasez", {})), r"unknown key 'phasez'|phasez"),
        ("unknown-symbol", json.dumps(h.with_key(S, f"{row}.{size_key}", "2*T*Hx")),
         r"\$\.phases\.layer_forward\[0\]\." + size_key + r": in expression \"2\*T\*Hx\": unknown name 'Hx'"),
        ("syntax", json.dumps(h.with_key(S, f"{row}.{size_key}", "2*(T")), r"expected '\)' at column"),
        ("long-expr", json.dumps(h.with_key(S, f"{row}.{size_key}", "+".join(["T"] * 3000))),
         r"expected an expression of at most 4096 characters"),
        ("deep-expr", json.dumps(h.with_key(S, f"{row}.{size_key}", "(" * 100 + "T" + ")" * 100)),
         r"nested deeper than 64 levels"),
        ("kernels-type", json.dumps(h.with_key(S, f"{row}.kernels", [1])), r"kernels: expected an expression"),
        ("time-negative", json.dumps(h.with_key(S, f"{row}.time_s", -1)), r"time_s: expected a non-negative number"),
        ("bw-factor-zero", json.dumps(h.with_key(S, "properties.memory_bandwidth_factor", 0)),
         r"memory_bandwidth_factor: expected a positive number"),
        ("kernel-gap", json.dumps(h.with_key(S, "properties.kernel_gap_s", -0.5)), r"kernel_gap_s: expected a non-negative"),
        ("var-self", json.dumps(h.with_key(S, "vars", [["x", "x+1"]])), r"unknown name 'x'"),
        ("trace-symbol", json.dumps(h.with_key(S, "trace", {"symbols": {"nope": 1}})),
         r"\$\.trace\.symbols\.nope: expected a model, plan or memory symbol name"),
    ]
    for name, text, msg in cases:
        sim(f"stack-{name}.json", text, 2, msg)
    M = "__X__"
    sim("stack-1e400.json", h.raw_json(h.with_key(S, f"{row}.kernels", M), (M, "1e400")), 2, r"numbers must fit")
    deep = '{"schema": "scalescope.stack/1", "vars": ' + "[" * 100000 + "]" * 100000 + "}"
    sim("stack-deep.json", deep, 2, r"nested deeper than 128 levels")
    # A size no model has (1e300 bytes per kernel, 1e9 kernels of a row): a bounded run, and a result only if sane.
    big = h.with_key(S, f"{row}.kernels", 1e9)
    sim("stack-kernels-1e9.json", json.dumps(big), (0, 1, 2), r".", timeout=120, check=_sane_or_refused)
    sim("stack-bytes-1e300.json", json.dumps(h.with_key(S, f"{row}.{size_key}", "1e300*T")), (0, 1, 2), r".",
        check=_sane_or_refused)
    sim("stack-div0.json", json.dumps(h.with_key(S, f"{row}.{size_key}", "T/(H-H)")), (0, 1, 2), r".",
        check=_sane_or_refused)


def _sane_or_refused(out, err):
    m = re.search(r"MFU\s+([\d.]+)\s*%", out)
    if m and float(m.group(1)) > 100.0:
        return f"MFU {m.group(1)}%"
    return None


def torch_traces(h):
    """`import torch-trace`: malformed, deep, huge tokens, a large generated trace, absurd options."""
    seed = open(os.path.join(h.ROOT, SEED_TRACE)).read()
    out = h.path("stack-imported.json")
    def imp(name, data, rc, msg, size=0, options=None, **kw):
        f = h.write(name, data) if data is not None else name
        opts = {"--micro-batch": "4", "--seq": "768", "--layers": "2"}
        opts.update(options or {})
        h.run("torch trace", ["import", "torch-trace", f, "--model", GPT_LN, "-q", "-o", out] +
              [x for kv in opts.items() for x in kv], rc, msg, size, **kw)
    imp("trace-ok.json", seed, 0, r"wrote .*stack-imported\.json")
    imp("trace-cut.json", seed[: len(seed) // 2], 2, r"trace-cut\.json: malformed JSON at byte \d+")
    imp("trace-deep.json", '{"traceEvents": ' + "[" * 200000 + "]" * 200000 + "}", 2, r"nested deeper than 128 levels")
    imp("trace-token.json", '{"traceEvents": [{"name": "' + "k" * (3 << 20) + '"}]}', 2,
        r"string or number longer than 1 MiB")
    imp("trace-empty.json", '{"traceEvents": []}', 2, r"\$\.traceEvents: expected a Chrome trace with a traceEvents")
    imp("trace-gz-bad.json.gz", b"\x1f\x8b\x08\x00" + b"\x00" * 64, 2, r"trace-gz-bad\.json\.gz: ")
    imp("trace-ints.json", seed.replace('"correlation":', '"correlation":1e300,"x":', 5), (0, 2), r".")
    ok = h.path("trace-ok.json")
    imp(ok, None, 2, r"--layers: expected 0 \(the model's\) to 16384", options={"--layers": "99999999"})
    imp(ok, None, 2, r"--micro-batch: expected the traced step's micro-batch size \(1 to 1048576\)",
        options={"--micro-batch": "0"})
    imp(ok, None, 2, r"--host-step-time: expected seconds in \(0, 3600\)",
        options={"--host-step-time": "1e308", "--host-shape": "1x32"})
    # A large trace: the seed's step repeated (each copy shifted in time, its own ProfilerStep#); the importer
    # streams it, keeps what it needs and analyses the last step.
    doc = json.loads(seed)
    events, span = doc["traceEvents"], max(e["ts"] + e.get("dur", 0) for e in doc["traceEvents"]) + 1000.0
    copies = 400
    big = h.path("trace-large.json.gz")
    with gzip.open(big, "wt", compresslevel=1) as f:
        f.write('{"deviceProperties": ' + json.dumps(doc["deviceProperties"]) + ', "traceEvents": [\n')
        for c in range(copies):
            for i, e in enumerate(events):
                e2 = dict(e, ts=round(e["ts"] + c * span, 1))
                if e2["name"].startswith("ProfilerStep#"):
                    e2["name"] = f"ProfilerStep#{c}"
                if "args" in e2 and "correlation" in e2["args"]:
                    e2["args"] = dict(e2["args"], correlation=e2["args"]["correlation"] + c * 1_000_000)
                f.write(("" if c == 0 and i == 0 else ",\n") + json.dumps(e2, separators=(",", ":")))
        f.write("\n]}\n")
    imp(big, None, 0, r"wrote ", size=len(seed) * copies, timeout=600)
    fifo = h.path("trace.fifo")
    os.mkfifo(fifo)
    imp(fifo, None, 2, r"trace\.fifo: is a FIFO \(named pipe\), expected a regular trace file", timeout=20)
    imp("/dev/zero", None, 2, r"/dev/zero: is a character device", timeout=20)
    imp(h.tmp, None, 2, r"is a folder")


def sweeps(h):
    """Sweep specs and journals: hostile specs, planted links, special files, torn and foreign journals."""
    spec = {"format": "scalescope.sweep/1", "mode": "simulate", "models": ["llama3-8b"], "clusters": ["hgx-h200-8"],
            "gpus": [8], "global_batches": [32, 64], "plans": ["tp=2,pp=1,mbs=1"]}
    def sweep(name, doc_text, rc, msg, out="sweep-out.csv", **kw):
        f = h.write(name, doc_text)
        h.run("sweep spec/journal", ["sweep", f, "-o", h.path(out), "-q", "--threads", "1"], rc, msg, **kw)
    sweep("sweep-deep.json", '{"format": ' + "[" * 100000 + "]" * 100000 + "}", 2, r"nested deeper than 128 levels")
    sweep("sweep-gpus.json", json.dumps(dict(spec, gpus=[-8])), 2, r"\$\.gpus\[0\]: expected a positive integer")
    sweep("sweep-big.json", json.dumps(dict(spec, gpus=list(range(1, 2002)), global_batches=list(range(1, 5001)))), 2,
          r"sweep-big\.json: .*the product has 10005000 points, more than 10,000,000")
    sweep("sweep-key.json", json.dumps(dict(spec, modles=["x"])), 2, r"unknown key 'modles'|modles")
    sweep("sweep-ok.json", json.dumps(spec), 0, r"", out="ok.csv",
          check=lambda o, e: None if open(h.path("ok.csv")).read().count("\n") == 3 else "expected a header and 2 rows")
    base = h.path("journal.csv")
    journal = base + ".partial"
    def with_journal(name, make, rc, msg, after=None):
        for p in (journal, base):
            if os.path.lexists(p):
                os.remove(p)
        make()
        h.run("sweep spec/journal", ["sweep", h.path("sweep-ok.json"), "-o", base, "-q", "--threads", "1"], rc, msg,
              timeout=30, check=after)
    victim = h.write("victim-journal.txt", "precious\n")
    with_journal("link", lambda: os.symlink(victim, journal), 2, r"journal\.csv\.partial: is a symbolic link",
                 after=lambda o, e: None if open(victim).read() == "precious\n" else "the link's target was written")
    with_journal("fifo", lambda: os.mkfifo(journal), 2, r"journal\.csv\.partial: is not a regular file")
    def write_journal(text):
        return lambda: open(journal, "w").write(text)
    with_journal("array", write_journal("[1]\n" + json.dumps({"point": 0, "rows": []}) + "\n"), 2,
                 r"journal\.csv\.partial: line 1: the journal belongs to another sweep spec or version \(fingerprint \?")
    with_journal("deep", write_journal("[" * 1000 + "]" * 1000 + "\n{}\n"), 2,
                 r"line 1: not a JSON line \(malformed JSON: nested deeper than 128 levels")
    with_journal("huge", lambda: open(journal, "wb").truncate(300 << 20), 2, r"larger than 256 MiB is refused")


def megatron_flags(h):
    """--plan-from-megatron FILE: special files, size, absurd values."""
    def flags(target, rc, msg, **kw):
        h.run("megatron flags", ["simulate", "--model", "llama3-8b", "--cluster", "hgx-h200-8", "--nodes", "1",
                                 "--plan-from-megatron", target], rc, msg, **kw)
    fifo = h.path("flags.fifo")
    os.mkfifo(fifo)
    flags(fifo, 2, r"flags\.fifo: is a FIFO \(named pipe\), expected a regular Megatron flags file", timeout=20)
    flags("/dev/zero", 2, r"/dev/zero: is a character device", timeout=20)
    big = h.write("flags-big.sh", "--bf16 " * 300000)
    flags(big, 2, r"flags-big\.sh: is 2100000 bytes; a Megatron flags file larger than 1 MiB is refused")
    flags(h.write("flags-tp.sh", "--tensor-model-parallel-size 99999999999 --bf16\n"), 2,
          r"--tensor-model-parallel-size: expected an integer")
    flags(h.write("flags-ok.sh", "--tensor-model-parallel-size 2 --micro-batch-size 1 --global-batch-size 32 --bf16\n"),
          0, r".")


def smi_topo(h):
    """import nvidia-smi-topo FILE: special files, size, garbage."""
    def topo(target, rc, msg, **kw):
        h.run("nvidia-smi topo", ["import", "nvidia-smi-topo", target, "--gpu-from", "hgx-h200-8"], rc, msg, **kw)
    topo("/dev/zero", 2, r"/dev/zero: is a character device, expected a regular nvidia-smi topo text file", timeout=20)
    fifo = h.path("topo.fifo")
    os.mkfifo(fifo)
    topo(fifo, 2, r"topo\.fifo: is a FIFO", timeout=20)
    big = h.path("topo-big.txt")
    with open(big, "wb") as f:
        f.truncate(100 << 20)
    topo(big, 2, r"larger than 64 MiB is refused", size=100 << 20)
    topo(h.write("topo-garbage.txt", "\x00\xff" * 5000 + "\n" + "GPU0\t" * 100000 + "\n"), 2, r"topo-garbage\.txt")
    raw = os.path.join(h.ROOT, "calibrate/profiles/raw")
    env = next((os.path.join(raw, d, "environment.txt") for d in sorted(os.listdir(raw))
                if os.path.exists(os.path.join(raw, d, "environment.txt"))), None)
    if env:
        text = open(env, encoding="utf-8", errors="replace").read()
        topo(h.write("topo-gpus.txt", re.sub(r"GPU0", "GPU99999999999", text, count=1)), (0, 2), r".")


def pricing(h):
    """A measured set's pricing.json (scaling --measured DIR)."""
    src = os.path.join(h.ROOT, "validation/h200x4/measured")
    run_file = sorted(f for f in os.listdir(src) if f.endswith(".json") and f != "pricing.json")[0]
    good = json.load(open(os.path.join(src, "pricing.json")))
    def measured(name, text, rc, msg, factor=None):
        d = h.path(f"measured-{name}")
        os.makedirs(d)
        shutil.copy(os.path.join(src, run_file), d)
        with open(os.path.join(d, "pricing.json"), "w") as f:
            f.write(text)
        if factor is not None:
            with open(os.path.join(d, "factor.json"), "w") as f:
                f.write(factor)
        h.run("pricing.json", ["scaling", "--measured", d], rc, msg)
    measured("schema", json.dumps(dict(good, schema="x")), 2, r"pricing\.json: \$\.schema: expected \"scalescope\.measured_pricing/1\"")
    measured("key", json.dumps(dict(good, calibraton="h200x4")), 2, r"pricing\.json: .*calibraton")
    measured("type", json.dumps(dict(good, framework=5)), 2, r"pricing\.json: \$\.framework: expected a string, got 5")
    measured("deep", '{"schema": ' + "[" * 100000 + "]" * 100000 + "}", 2, r"pricing\.json: .*nested deeper than 128")
    measured("factor-dev", json.dumps(dict(good, eager_bandwidth_factor_file="/dev/zero")), 2, r"/dev/zero: is a character device")
    measured("factor-big", json.dumps(dict(good, eager_bandwidth_factor_file="factor.json")), 2,
             r"factor\.json: \$\.factor: expected a bandwidth factor in \(0, 10\]", factor='{"factor": 1e308}')
    measured("factor-missing", json.dumps(dict(good, eager_bandwidth_factor_file="nope.json")), 2, r"nope\.json: file does not exist")
