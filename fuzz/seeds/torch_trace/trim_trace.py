#!/usr/bin/env python3
"""Makes the torch_trace fuzz seed: a real Kineto trace (validation/session9/h100/traces/gpt-ln-mbs4-seq768.json.gz,
12 layers, 3 MB) trimmed to what `scalescope import torch-trace` reads, for a 2-layer program: the forward and
backward of layers 2..11 are cut out (by time, on their threads), with the GPU activities their launches made; only
the event fields and args the reader keeps remain, CPU ops only where a launch or an autograd node needs them, kernel
names without their template arguments, the optimizer's first launches and every 16th memory event. The result
(~80 KB, under the fuzz target's -max_len of 128 KiB) imports with --layers 2 (fuzz/torch_trace.cpp).

Usage: trim_trace.py IN.json.gz OUT.json"""
import gzip, json, sys

KEEP_ARGS = ("correlation", "Sequence number", "stream", "Input Dims", "Input type", "Total Allocated", "Bytes",
             "Device Type")
LAUNCH_CATS = ("cuda_runtime", "cuda_driver")
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
OPTIMIZER_LAUNCHES = 24


def short_name(kernel):
    """A kernel's name without template arguments and parameters: 'void at::native::f<...>(...)' -> 'at::native::f'."""
    k = kernel[5:] if kernel.startswith("void ") else kernel
    depth, out = 0, ""
    for ch in k:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            break
        elif depth == 0:
            out += ch
    return out.strip() or kernel[:80]


def find_period(names, attention, L):
    """torch_trace_step.cpp's find_period: smallest block repeated L times (holding an attention kernel)."""
    n = len(names)
    for p in range(1, n // L + 1):
        need, run = (L - 1) * p, 0
        for i in range(n - p):
            run = run + 1 if names[i] == names[i + p] else 0
            if run < need:
                continue
            o = i - need + 1
            if o + L * p > n:
                break
            if any(attention) and not any(attention[o:o + p]):
                continue
            return p, o
    raise SystemExit("no layer period")


def main():
    src, dst = sys.argv[1], sys.argv[2]
    doc = json.load(gzip.open(src))
    ev = doc["traceEvents"]
    step = max((e for e in ev if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")),
               key=lambda e: e["ts"])
    t0, t1, main_tid = step["ts"], step["ts"] + step["dur"], step["tid"]
    opt = [(e["ts"], e["ts"] + e["dur"]) for e in ev if e.get("cat") == "user_annotation" and
           e["name"].startswith(("Optimizer.step#", "Optimizer.zero_grad#"))]
    ops = sorted((e for e in ev if e.get("cat") == "cpu_op" and e.get("ph") == "X"), key=lambda e: (e["ts"], -e["dur"]))
    gpu_by_corr = {e["args"]["correlation"]: e for e in ev if e.get("cat") in GPU_CATS and "correlation" in e.get("args", {})}
    launches = sorted((e for e in ev if e.get("cat") in LAUNCH_CATS and e.get("args", {}).get("correlation") in gpu_by_corr
                       and t0 <= e["ts"] <= t1), key=lambda e: e["ts"])

    def around(la):  # innermost and outermost op around a launch on its thread
        chain = [o for o in ops if o["tid"] == la["tid"] and o["ts"] <= la["ts"] <= o["ts"] + o["dur"]]
        return (chain[-1] if chain else None), (chain[0] if chain else None)

    fwd, bwd = [], []
    for la in launches:
        inner, outer = around(la)
        if any(a <= la["ts"] <= b for a, b in opt):
            continue
        if la["tid"] != main_tid or (outer and outer["name"].startswith("autograd::engine::evaluate_function")):
            bwd.append((la, outer))
        else:
            fwd.append((la, inner))
    names = [gpu_by_corr[la["args"]["correlation"]]["name"] for la, _ in fwd]
    attention = ["attention" in (inner["name"] if inner else "") for _, inner in fwd]
    L = 12
    p, o = find_period(names, attention, L)
    starts = [fwd[o + l * p][0]["ts"] if o + l * p < len(fwd) else t1 for l in range(L + 1)]
    cut_fwd = (starts[2], starts[L])  # forward of layers 2..11 on the main thread
    # Backward: each kernel's layer from the forward op of its autograd node (same Sequence number).
    fwd_of_seq = {}
    for op in ops:
        s = op.get("args", {}).get("Sequence number")
        if s is None or op["tid"] != main_tid or not t0 <= op["ts"] <= t1 or op["name"].startswith("autograd::"):
            continue
        if s not in fwd_of_seq or op["ts"] < fwd_of_seq[s]["ts"]:
            fwd_of_seq[s] = op

    def segment(ts):
        if ts < starts[0]:
            return -1
        for l in range(L):
            if ts < starts[l + 1]:
                return l
        return L
    last, first_of = L, {}
    for la, outer in bwd:
        s = outer.get("args", {}).get("Sequence number") if outer else None
        if s in fwd_of_seq:
            last = segment(fwd_of_seq[s]["ts"])
        first_of.setdefault(last, la)
    bwd_tid = first_of[L - 1]["tid"]
    cut_bwd = (first_of[L - 1]["ts"], first_of[1]["ts"])  # backward of layers 11..2 on the backward thread

    def cut(e):
        t = e.get("ts", 0)
        return (e.get("tid") == main_tid and cut_fwd[0] <= t < cut_fwd[1]) or \
               (e.get("tid") == bwd_tid and cut_bwd[0] <= t < cut_bwd[1])
    dropped = {e["args"]["correlation"] for e in ev if e.get("cat") in LAUNCH_CATS and "correlation" in e.get("args", {}) and cut(e)}
    in_opt = [la for la in launches if any(a <= la["ts"] <= b for a, b in opt)]
    dropped |= {la["args"]["correlation"] for la in in_opt[OPTIMIZER_LAUNCHES:]}
    needed, inner_ops, seqs = set(), set(), set()  # ops around a kept launch; innermost ones; autograd nodes used
    for la in launches:
        if la["args"]["correlation"] in dropped or cut(la):
            continue
        chain = [o for o in ops if o["tid"] == la["tid"] and o["ts"] <= la["ts"] <= o["ts"] + o["dur"]]
        needed.update(id(o) for o in chain)
        if chain:
            inner_ops.add(id(chain[-1]))
            if chain[0]["tid"] != main_tid and "Sequence number" in chain[0].get("args", {}):
                seqs.add(chain[0]["args"]["Sequence number"])
    for op in ops:  # the forward ops that made the kept backward kernels' autograd nodes, and the embedding
        if (op["tid"] == main_tid and op.get("args", {}).get("Sequence number") in seqs) or op["name"] == "aten::embedding":
            needed.add(id(op))
            inner_ops.add(id(op))
    memory = 0
    out = []
    for e in ev:
        cat = e.get("cat")
        if cat in ("cpu_op", "user_annotation") + LAUNCH_CATS and cut(e):
            continue
        if cat in GPU_CATS and e.get("args", {}).get("correlation") in dropped:
            continue
        if cat not in ("cpu_op", "user_annotation") + LAUNCH_CATS + GPU_CATS and e.get("name") != "[memory]":
            continue
        if e.get("name") == "[memory]":
            if cut(e) or not t0 <= e["ts"] <= t1:
                continue
            memory += 1
            if memory % 16:
                continue
        if cat == "cpu_op" and id(e) not in needed:
            continue
        if cat in LAUNCH_CATS and e.get("args", {}).get("correlation") in dropped:
            continue
        if not t0 - 1 <= e.get("ts", 0) <= t1 + 1e5:
            continue
        if cat in LAUNCH_CATS and e.get("args", {}).get("correlation") not in gpu_by_corr:
            continue  # launches of nothing the trace recorded
        k = {f: e[f] for f in ("ph", "cat", "name", "tid", "ts", "dur") if f in e}
        k["ts"] = round(k["ts"] - t0 + 1000.0, 1)  # times from the step's start (+1 ms)
        if "dur" in k:
            k["dur"] = round(k["dur"], 1)
        if cat in GPU_CATS:
            k["name"] = short_name(k["name"])
        args = {a: e["args"][a] for a in KEEP_ARGS if a in e.get("args", {})}
        if cat == "cpu_op" and id(e) not in inner_ops:  # only innermost ops' shapes are read
            args = {a: v for a, v in args.items() if a not in ("Input Dims", "Input type")}
        if args:
            k["args"] = args
        out.append(k)
    dev = [{"id": d.get("id", 0), "name": d["name"]} for d in doc.get("deviceProperties", [])][:1]
    with open(dst, "w") as f:
        f.write('{"deviceProperties": ' + json.dumps(dev, separators=(",", ":")) + ',\n"traceEvents": [\n')
        f.write(",\n".join(json.dumps(k, separators=(",", ":")) for k in out))
        f.write("\n]}\n")
    print(f"{len(out)} events of {len(ev)}; period {p}, offset {o}")


if __name__ == "__main__":
    main()
