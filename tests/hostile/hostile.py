#!/usr/bin/env python3
"""Hostile-input suite for the `scalescope` CLI: generated bad, hostile and huge inputs for every loader and
output, each asserting the exit code and the message (issue 28). Nothing large is committed: inputs are made
in a temporary folder from the repository's own files.

Usage: hostile.py BIN CLASS [--stats]     (CLASS: one of CLASSES below, or "all")
Prints one line per probe and "N passed, N failed"; --stats adds, per loader, the probes, errors (exit 2),
crashes (a signal or a sanitizer report), and the largest input handled with its time and peak memory.
"""
import json, os, re, signal, stat, subprocess, sys, tempfile, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loaders  # noqa: E402  (the probes of the later loaders: stack profiles, traces, sweeps, flags, topo, pricing)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else "build-ci/cli/scalescope"
CLASS = sys.argv[2] if len(sys.argv) > 2 else "all"
STATS = "--stats" in sys.argv
MODEL = json.load(open(os.path.join(ROOT, "models/catalog/llama3-8b.json")))
CLUSTER = json.load(open(os.path.join(ROOT, "topologies/hgx-h200-8.json")))
HOST = json.load(open(os.path.join(ROOT, "validation/profiles/h200-torch/host_dispatch.json")))
NCCL_LOG = open(os.path.join(ROOT, "tests/data/nccl-tests/all_reduce_g4_h200.log"), encoding="utf-8").read()
PLAN = "tp=2,pp=1,dp=4,mbs=1,gbs=32"
SIM = ["simulate", "--model", "llama3-8b", "--cluster", "hgx-h200-8", "--plan", PLAN]

tmp = tempfile.mkdtemp(prefix="scalescope-hostile-")
results = []  # (loader, ok, rc, input bytes, seconds, max rss KiB, crashed)


def path(name):
    return os.path.join(tmp, name)


def write(name, data):
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path(name), mode) as f:
        f.write(data)
    return path(name)


def with_key(doc, dotted, value):
    """A copy of doc with doc[a][b]... = value (value may be a raw JSON text marker)."""
    d = json.loads(json.dumps(doc))
    cur = d
    keys = dotted.split(".")
    for k in keys[:-1]:
        cur = cur[int(k)] if isinstance(cur, list) else cur[k]
    cur[keys[-1]] = value
    return d


def raw_json(doc, replace=None):
    """JSON text of doc; replace = (marker, raw text) puts literal text (1e400, NaN) where a marker string is."""
    text = json.dumps(doc)
    if replace:
        text = text.replace(json.dumps(replace[0]), replace[1])
    return text


def run(loader, args, rc, message, size=0, timeout=60, check=None, max_rss_mib=None):
    """Runs BIN args; passes when the exit code is rc (an int or a tuple of them) and stderr (stdout too for
    exit 0) matches message, and (max_rss_mib) its peak memory stayed below that. Time and peak memory are the
    child's own (wait4)."""
    if not size:  # the largest input file among the arguments
        size = max([os.path.getsize(a) for a in args if a.startswith(tmp) and os.path.isfile(a)] or [0])
    # GNU time reports the child's own peak RSS (a child forked from this Python process would inherit its size).
    timer_cmd = ["/usr/bin/time", "-f", "@@rss %M"] if os.path.exists("/usr/bin/time") else []
    t0 = time.monotonic()
    with tempfile.TemporaryFile() as out_f, tempfile.TemporaryFile() as err_f:
        # A session of its own: a timeout kills the program itself, not only GNU time above it (which left the
        # program running, orphaned).
        p = subprocess.Popen(timer_cmd + [BIN] + args, stdout=out_f, stderr=err_f, stdin=subprocess.DEVNULL, cwd=ROOT,
                             start_new_session=True)
        timer = threading.Timer(timeout, kill_group, (p.pid,))
        timer.start()
        _, status, usage = os.wait4(p.pid, 0)
        timed_out = not timer.is_alive()
        timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
        out_f.seek(0)
        err_f.seek(0)
        out, err = out_f.read().decode("utf-8", "replace"), err_f.read().decode("utf-8", "replace")
    rss_kib = usage.ru_maxrss
    m = re.search(r"@@rss (\d+)\s*$", err)
    if m:
        rss_kib, err = int(m.group(1)), err[:m.start()]
    if "Command terminated by signal" in err or "Command exited with non-zero status" in err:
        err = re.sub(r"Command (terminated by signal|exited with non-zero status) \d+\n?", "", err)
        if got_status_signal(status):
            p.returncode = -got_status_signal(status)
    got_rc = "timeout" if timed_out else p.returncode
    seconds = time.monotonic() - t0
    crashed = timed_out or got_rc < 0 or "Sanitizer" in err or "runtime error:" in err
    wanted = rc if isinstance(rc, tuple) else (rc,)
    ok = got_rc in wanted and re.search(message, err if got_rc != 0 else out + err) is not None and not crashed
    if ok and max_rss_mib is not None and rss_kib > max_rss_mib * 1024:
        ok = False
        err += f"\npeak memory {rss_kib // 1024} MiB, expected below {max_rss_mib} MiB"
    if ok and check:
        why = check(out, err)
        ok = why is None
        err = err + ("" if why is None else "\ncheck failed: " + why)
    results.append((loader, ok, got_rc, size, seconds, rss_kib, crashed))
    label = " ".join(a if len(a) < 60 else a[:57] + "..." for a in args)
    print(("PASS" if ok else "FAIL") + f" [{loader}] rc={got_rc} ({seconds:.2f} s, {rss_kib // 1024} MiB) {label}")
    if not ok:
        print(f"    expected rc {rc} and /{message}/; stderr: {err.strip()[-600:]}")
    return ok


def kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:  # it ended as the timer fired
        pass


def got_status_signal(status):
    """GNU time exits 128+N when its child died of signal N: report that as a signal, as the child's own."""
    code = os.waitstatus_to_exitcode(status)
    return code - 128 if code > 128 else 0


def model_case(name, doc_text, rc, message, loader="model"):
    f = write(name, doc_text)
    run(loader, ["simulate", "--model", f, "--cluster", "hgx-h200-8", "--plan", PLAN], rc, message, len(doc_text))


# ---------------------------------------------------------------------------------------------------------
def numbers():
    """Integers narrowed or overflowed, numbers no double holds, NaN/inf, absurd but finite values."""
    M = "__X__"
    for key, raw, msg in [("layers", "1e400", r"\$\.?.*numbers must fit a finite double|number overflow"),
                          ("layers", "18446744073709551615", r"layers: expected a positive integer"),
                          ("layers", "4294967297", r"layers: expected a positive integer below 1e9, got 4294967297"),
                          ("layers", "20000", r"layers: expected a positive integer at most 16384, got 20000"),
                          ("layers", "-1", r"layers: expected a positive integer"),
                          ("layers", "1.5", r"layers: expected a positive integer"),
                          ("layers", "NaN", r"malformed JSON"), ("hidden", "Infinity", r"malformed JSON"),
                          ("vocab", str(2 ** 62), r"vocab: expected a positive integer at most 16777216"),
                          ("seq_len", "999999999", r"seq_len: expected a positive integer at most 16777216"),
                          ("heads", "1e308", r"heads: expected a positive integer"),
                          ("hidden", "9223372036854775808", r"hidden: expected a positive integer")]:
        model_case(f"m-{key}-{raw[:12]}.json", raw_json(with_key(MODEL, key, M), (M, raw)), 2, msg)
    for key, raw, msg in [("nodes", "1e400", r"numbers must fit"), ("node.gpus", "4294967304", r"gpus: expected at most 4096"),
                          ("node.gpu.hbm_bandwidth_GBps", "1e308", r"hbm_bandwidth_GBps: expected a number from 1 to 1e\+06 \(plausible range\)"),
                          ("node.gpu.peak_dense_TFLOPS.bf16", "1e-300", r"bf16: expected a number from 0.001 to 1e\+06"),
                          ("node.links.0.per_link_GBps", "0", r"per_link_GBps: expected a number from 0.001"),
                          ("node.links.0.per_link_GBps", "1e308", r"per_link_GBps: expected a number from 0.001 to 1e\+06"),
                          ("node.links.0.latency_us", "1e308", r"latency_us: expected a latency below 1 second")]:
        f = write(f"c-{key}-{raw}.json", raw_json(with_key(CLUSTER, key, M), (M, raw)))
        run("cluster", ["simulate", "--model", "llama3-8b", "--cluster", f, "--plan", PLAN], 2, msg)
    for key, raw, msg in [("per_layer_microbatch_s.module", "1e308", r"module: expected seconds .* in \(0, 1\]"),
                          ("per_layer_microbatch_s.module", "0", r"module: expected a positive number"),
                          ("per_layer_microbatch_s.tensor_parallel", "1e400", r"numbers must fit")]:
        f = write(f"h-{raw}.json", raw_json(with_key(HOST, key, M), (M, raw)))
        run("host cost", SIM + ["--framework", "pytorch-eager", "--host-cost", f], 2, msg)
    for plan, msg in [("tp=1,pp=1,dp=65536,mbs=65536,gbs=1", r"gbs: gbs=1 is not divisible by mbs\*dp=4294967296"),
                      ("tp=65536,pp=65536,dp=65536,gbs=1", r"tp\*cp\*pp\*dp=281474976710656 exceeds"),
                      ("tp=2147483648,gbs=1", r"key 'tp': expected a positive integer"),
                      ("tp=1,gbs=100000000,mbs=1", r"micro-batches per pipeline exceed the limit of 65536"),
                      ("tp=1,gbs=8,bucket_MB=1e400", r"bucket_MB"), ("tp=1,gbs=8,bucket_MB=nan", r"bucket_MB")]:
        run("plan text", ["simulate", "--model", "llama3-8b", "--cluster", "hgx-h200-8", "--plan", plan], 2, msg)
    f = write("plan-huge.json", '{"tp": 1e400, "gbs": 8}')
    run("plan JSON", ["simulate", "--model", "llama3-8b", "--cluster", "hgx-h200-8", "--plan", f], 2, r"numbers must fit")
    f = write("plan-u64.json", '{"tp": 18446744073709551615, "gbs": 8}')
    run("plan JSON", ["simulate", "--model", "llama3-8b", "--cluster", "hgx-h200-8", "--plan", f], 2, r"tp: expected a positive integer")
    run("cluster", ["simulate", "--model", "llama3-8b", "--cluster", "hgx-h200-8", "--plan", "tp=8,dp=125000,gbs=125000",
                    "--gpus", "1000000"], 2, r"expected at most \d+ GPUs|exceeds|cannot connect",
        max_rss_mib=600)  # refused before the 125,000 node copies are built (they took 2.4 GB and 7.7 s before)
    run("cluster", ["simulate", "--model", "llama3-8b", "--cluster", "hgx-h200-8", "--plan", PLAN, "--gpus", "2147483647"],
        2, r"--gpus: expected at most")


def structure():
    """Deep nesting, wrong types where a loader reads a value, bytes that are not UTF-8, duplicate keys."""
    deep = "[" * 200000 + "]" * 200000
    for loader, args in [("model", ["simulate", "--cluster", "hgx-h200-8", "--plan", PLAN, "--model"]),
                         ("cluster", ["simulate", "--model", "llama3-8b", "--plan", PLAN, "--cluster"]),
                         ("calibration profile", SIM[:-2] + ["--plan", PLAN, "--calibration"]),
                         ("measured runs", ["scaling", "--measured"])]:
        f = write(f"deep-{loader.replace(' ', '_')}.json", deep)
        run(loader, args + [f], 2, r"nested deeper than 128 levels", len(deep))
    obj = '{"a":' * 100000 + "1" + "}" * 100000
    f = write("deep-object.json", obj)
    run("model", ["simulate", "--model", f, "--cluster", "hgx-h200-8", "--plan", PLAN], 2, r"nested deeper than 128", len(obj))
    for key, value, msg in [("name", 5, r"name: expected a string, got 5"), ("layers", "32", r"layers: expected .*got the string"),
                            ("bias", "yes", r"bias: expected true or false"), ("ffn", ["swiglu"], r"ffn: expected one of"),
                            ("tied_embeddings", None, r"tied_embeddings: expected true or false, got null")]:
        model_case(f"type-{key}.json", json.dumps(with_key(MODEL, key, value)), 2, msg)
    model_case("type-root.json", "[1, 2]", 2, r"expected an object, got an array")
    f = write("bad-utf8-raw.json", json.dumps(MODEL).encode().replace(b'"llama3-8b"', b'"\xc3\x28"'))
    run("model", ["simulate", "--model", f, "--cluster", "hgx-h200-8", "--plan", PLAN], 2, r"malformed JSON|UTF-8")
    f = write("cluster-links-obj.json", json.dumps(with_key(CLUSTER, "node.links", {"a": 1})))
    run("cluster", ["simulate", "--model", "llama3-8b", "--cluster", f, "--plan", PLAN], 2, r"links: expected an array")
    f = write("hf-str.json", json.dumps({"model_type": "llama", "hidden_size": "4096"}))
    run("HF config", ["simulate", "--model", f, "--cluster", "hgx-h200-8", "--plan", PLAN], 2, r"hidden_size: expected a positive integer")
    me = sys.modules[__name__]
    loaders.stack_profiles(me)
    loaders.sweeps(me)
    loaders.pricing(me)


def logs():
    """nccl-tests logs: out-of-range integers, long lines, absurd values, bytes that are not UTF-8."""
    out = path("imported.json")
    def imp(name, text, rc, msg, check=None, timeout=60):
        f = write(name, text)
        run("nccl-tests log", ["import", "nccl-tests", f, "-o", out, "--format", "json"], rc, msg,
            len(text) if isinstance(text, str) else len(text), check=check, timeout=timeout)
    imp("rank.log", re.sub(r"Rank  1 ", "Rank 99999999999 ", NCCL_LOG, count=1), 2, r"expected a rank from 0 to 1048575")
    imp("device.log", re.sub(r"device  1 ", "device 4294967296 ", NCCL_LOG, count=1), 2, r"expected a device from 0")
    imp("nthread.log", NCCL_LOG.replace("nThread 1", "nThread 99999999999", 1), 2, r"expected an integer from 0 to 2147483647")
    imp("longline.log", "# " + "a" * 2_000_000 + "\n" + NCCL_LOG, 2, r"line is 2000002 bytes long")
    rows = NCCL_LOG.splitlines()
    i = next(k for k, l in enumerate(rows) if re.match(r"\s+\d+\s+\d+\s+float", l))
    cells = rows[i].split()
    cells[7] = "1e308"  # size count type redop root time algbw busbw ...
    imp("busbw.log", "\n".join(rows[:i] + ["  " + "  ".join(cells)] + rows[i + 1:]) + "\n", 2, r"busbw at most 100000")
    cells[7] = "nan"
    imp("nan.log", "\n".join(rows[:i] + ["  " + "  ".join(cells)] + rows[i + 1:]) + "\n", 2, r"expected a non-negative number for busbw")
    name = re.search(r" on +(\S+) ", NCCL_LOG).group(1).encode()  # every rank's host: a name that is not UTF-8
    host = NCCL_LOG.encode().replace(b" " + name + b" ", b" " + name + b"\xff\xfe ")
    def valid_json(o, e):
        try:
            json.load(open(out, encoding="utf-8"))
            return None if "\ufffd" in open(out, encoding="utf-8").read() else "no U+FFFD in the profile"
        except Exception as ex:  # noqa: BLE001
            return f"profile is not UTF-8 JSON: {ex}"
    imp("utf8.log", host, 0, r"all_reduce", check=valid_json)
    many = "# nothing to see\n" * 3_000_000 + NCCL_LOG  # 51 MB of context lines: linear, bounded memory
    imp("many-lines.log", many, 0, r"all_reduce", timeout=300)  # 22 s under ASan on a loaded machine
    big = path("huge.log")
    with open(big, "wb") as f:
        f.truncate(300 << 20)  # sparse: 300 MiB without writing them
    run("nccl-tests log", ["import", "nccl-tests", big, "-o", out], 2, r"larger than 256 MiB is refused", 300 << 20)
    me = sys.modules[__name__]
    loaders.torch_traces(me)
    loaders.megatron_flags(me)
    loaders.smi_topo(me)


def files():
    """Special files read or written: FIFO, device, folder, symlink loop, symlinked output, missing folder."""
    fifo = path("fifo.json")
    os.mkfifo(fifo)
    run("model", ["simulate", "--model", fifo, "--cluster", "hgx-h200-8", "--plan", PLAN], 2, r"is a FIFO", timeout=20)
    run("trace output", SIM + ["--trace", fifo], 2, r"is a FIFO \(named pipe\); results are written only to regular files")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced"
    os.symlink(path("loop2.json"), path("loop1.json"))
    os.symlink(path("loop1.json"), path("loop2.json"))
    run("cluster", ["simulate", "--model", "llama3-8b", "--plan", PLAN, "--cluster", path("loop1.json")], 2, r"symbolic link loop")
    run("model", ["simulate", "--model", "/dev/zero", "--cluster", "hgx-h200-8", "--plan", PLAN], 2, r"character device", timeout=20)
    run("model", ["simulate", "--model", tmp + "/", "--cluster", "hgx-h200-8", "--plan", PLAN], 2, r"is a folder")
    victim = write("victim.txt", "precious\n")
    os.symlink(victim, path("planted.json"))
    run("profile output", ["import", "nccl-tests", os.path.join(ROOT, "tests/data/nccl-tests/all_reduce_g4_h200.log"),
                           "-o", path("planted.json")], 2, r"is a symbolic link")
    assert open(victim).read() == "precious\n", "the symlink's target was overwritten"
    run("profile output", ["import", "nccl-tests", os.path.join(ROOT, "tests/data/nccl-tests/all_reduce_g4_h200.log"),
                           "-o", path("no/such/folder/p.json")], 2, r"folder .* does not exist")
    run("profile output", ["import", "nccl-tests", os.path.join(ROOT, "tests/data/nccl-tests/all_reduce_g4_h200.log"),
                           "-o", "-", "--format", "csv"], 0, r'"schema": "scalescope.calibration/1"')
    run("fit output", ["calibrate", "fit", "h200x4", "--cluster", "hgx-h200-4", "-o", "/dev/null"], 2,
        r"character device; results are written only")
    big = path("huge.json")
    with open(big, "wb") as f:
        f.truncate(300 << 20)
    run("model", ["simulate", "--model", big, "--cluster", "hgx-h200-8", "--plan", PLAN], 2, r"larger than 256 MiB", 300 << 20)


def results_sanity():
    """Results no one should trust stop with an error; calibrate fit output is a collective-parameters file."""
    params = path("params.json")
    run("fit output", ["calibrate", "fit", "h200x4", "--cluster", "hgx-h200-4", "-o", params], 0, r".")
    for cmd in (SIM + ["--calibration", params], ["collective", "--cluster", "hgx-h200-4", "--op", "all_reduce", "--gpus", "4",
                                                  "--sizes", "1M:16M", "--calibration", params],
                ["plan", "--model", "llama3-8b", "--cluster", "hgx-h200-8", "--gpus", "8", "--gbs", "32", "--calibration", params]):
        run("collective params", cmd, 0, r".")
    f = write("params-zero.json", json.dumps({"schema": "scalescope.collective_params/1", "link_efficiency": {"nvlink": 0}}))
    run("collective params", SIM + ["--calibration", f], 2, r"nvlink: expected")
    # seq_len at its limit: a result is printed only when it is sane (MFU <= 100%, finite step time).
    f = write("seq-limit.json", json.dumps(with_key(MODEL, "seq_len", 1 << 24)))
    def sane(o, e):
        m = re.search(r"MFU\s+([\d.]+)\s*%", o)
        return None if (m is None or float(m.group(1)) <= 100.0) else f"MFU {m.group(1)}%"
    run("model", ["simulate", "--model", f, "--cluster", "hgx-h200-8", "--plan", "tp=8,pp=1,dp=1,mbs=1,gbs=1"],
        (0, 1), r".", check=sane)  # a result (exit 0) must be sane; an implausible one is refused (exit 1)


def temp_file_open(pid, folder, name):
    """True while process pid holds a temporary file of `name` open in `folder`: an unnamed O_TMPFILE inode
    (/proc shows "FOLDER/#INODE (deleted)") or a ".NAME.tmp.*" file (write_file_atomic's two kinds)."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith(folder + "/#") or os.path.basename(target).startswith("." + name + ".tmp"):
            return True
    return False


def run_measured(args):
    """Runs args to completion (exit 0 required); returns its seconds and its own peak RSS in KiB (wait4)."""
    t0 = time.monotonic()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    _, status, usage = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{args} exited {os.waitstatus_to_exitcode(status)}")
    return time.monotonic() - t0, usage.ru_maxrss


def kill_during_write(args, target, old, kills):
    """Runs args `kills` times; each time SIGKILLs it as soon as its temporary file for `target` is open (polled
    every 0.2 ms), i.e. during the write. Returns the texts found after each kill, how many kills landed during a
    write, and the stray temporary files seen."""
    folder, name = os.path.dirname(target), os.path.basename(target)
    found, landed, strays = [], 0, []
    for _ in range(kills):
        with open(target, "w") as f:
            f.write(old)
        p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
        during = False
        while p.poll() is None:
            if temp_file_open(p.pid, folder, name):
                p.send_signal(signal.SIGKILL)
                during = True
                break
            time.sleep(0.0002)
        p.wait()
        landed += during and p.returncode == -signal.SIGKILL
        found.append(open(target).read())
        strays += [n for n in os.listdir(folder) if n.startswith("." + name)]
    return found, landed, strays


def writes():
    """A run killed mid-write leaves the old file intact and no temporary file; a killed sweep resumes to the
    bytes of an uninterrupted one."""
    trace = path("trace.json")
    args = [BIN, "simulate", "--model", "llama3-70b", "--cluster", "hgx-h200-8", "--nodes", "4", "--plan",
            "tp=8,pp=4,dp=1,mbs=1,gbs=256", "--per-layer-tasks", "--trace", trace]
    full, full_rss = run_measured(args)
    new_text = open(trace).read()
    found, landed, strays = kill_during_write(args, trace, "OLD\n", 8)
    ok = all(t in ("OLD\n", new_text) for t in found) and not strays and landed >= 6
    results.append(("trace output", ok, 0, len(new_text), full, full_rss, False))
    print(("PASS" if ok else "FAIL") + f" [trace output] {landed} of 8 SIGKILLs landed while the {len(new_text)}-byte trace"
          f" was being written (its temporary file open): old file found {found.count('OLD' + chr(10))}x, new"
          f" {found.count(new_text)}x, anything else {sum(t not in ('OLD' + chr(10), new_text) for t in found)}x;"
          f" stray temporary files {strays}")

    # Sweep: killed while appending to its journal (some points done, not all), then resumed to the end.
    spec = {"format": "scalescope.sweep/1", "mode": "simulate", "models": ["llama3-8b"], "clusters": ["hgx-h200-8"],
            "gpus": [8, 16, 32, 64], "global_batches": [32, 64, 128, 256, 512], "plans": ["tp=2,pp=1,mbs=1", "tp=1,pp=2,mbs=1"]}
    spec_file = write("sweep-kill.json", json.dumps(spec))
    ref, out = path("sweep-ref.csv"), path("sweep-kill.csv")
    run_sweep = [BIN, "sweep", spec_file, "-q", "--threads", "1", "-o"]
    sweep_s, sweep_rss = run_measured(run_sweep + [ref])
    points = len(spec["gpus"]) * len(spec["global_batches"]) * len(spec["plans"])
    with open(out, "w") as f:
        f.write("OLD\n")
    journal, mid, kills = out + ".partial", 0, 0
    while True:  # 4 kills, each once the run has appended a point to the journal; then it runs to completion
        p = subprocess.Popen(run_sweep + [out], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
        seen = None
        while p.poll() is None and kills < 4:
            try:
                n = open(journal, "rb").read().count(b"\n")
            except OSError:
                n = 0
            if seen is None:
                seen = max(n, 1)  # the header line alone is no point done
            if n > seen:
                p.send_signal(signal.SIGKILL)
                kills += 1
                mid += 1 < n < points + 1
                break
            time.sleep(0.001)
        p.wait()
        if p.returncode == 0:
            break
        if open(out).read() != "OLD\n" or kills > 3 * points:
            break
    same = open(out).read() == open(ref).read()
    stray = [n for n in os.listdir(tmp) if n.startswith(".sweep-kill")]
    ok = same and kills == 4 and mid == 4 and not stray and not os.path.exists(journal)
    results.append(("sweep output", ok, 0, os.path.getsize(ref), sweep_s, sweep_rss, False))
    print(("PASS" if ok else "FAIL") + f" [sweep output] {kills} SIGKILLs of a {points}-point sweep ({mid} with the journal"
          f" part-written), resumed each time: the output is byte-identical to an uninterrupted run: {same};"
          f" old file kept until the end; journal removed; stray temporary files {stray}")


CLASSES = {"numbers": numbers, "structure": structure, "logs": logs, "files": files, "results": results_sanity,
           "writes": writes}


def main():
    for name, fn in CLASSES.items():
        if CLASS in ("all", name):
            fn()
    passed = sum(1 for r in results if r[1])
    failed = len(results) - passed
    if STATS:
        print("\nloader | probes | errors (exit 2) | crashes | largest input handled: bytes, exit, time, peak RSS |"
              " largest input read through (exit 0): bytes, time, peak RSS | slowest probe: time, peak RSS")
        by = {}
        for loader, ok, rc, size, sec, rss, crashed in results:
            by.setdefault(loader, []).append((ok, rc, size, sec, rss, crashed))
        for loader, rs in sorted(by.items()):
            big = max(rs, key=lambda r: r[2])
            done = [r for r in rs if r[1] == 0]
            whole = max(done, key=lambda r: r[2]) if done else None
            slow = max(rs, key=lambda r: r[3])
            print(f"{loader} | {len(rs)} | {sum(1 for r in rs if r[1] == 2)} | {sum(1 for r in rs if r[5])} | "
                  f"{big[2]} bytes, exit {big[1]}, {big[3]:.2f} s, {big[4] / 1024:.0f} MiB | " +
                  (f"{whole[2]} bytes, {whole[3]:.2f} s, {whole[4] / 1024:.0f} MiB" if whole else "-") +
                  f" | {slow[3]:.2f} s, {slow[4] / 1024:.0f} MiB")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        subprocess.run(["rm", "-rf", tmp])
