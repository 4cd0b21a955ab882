"""Where a profiled multi-GPU step spends its time, from a torch.profiler Chrome trace (run_points.py --profile or a
one-GPU trace of run_steps.py): kernel time by class per optimizer step, the GPU's idle gaps and the host calls
(session 13's diagnosis of issue 24, validation/blind24/session13/README.md). No dependencies beyond Python.

    python3 validation/blind24/diag_trace.py TRACE.json.gz [TRACE2.json.gz ...]
    python3 validation/blind24/diag_trace.py --pair RANK0.json.gz RANK1.json.gz   (which rank's host sets the pace:
        the CPU launch time of each NCCL kernel on both ranks, matched by order; the ranks share the host clock)
"""
import collections
import gzip
import json
import sys


def kernel_class(name):
    n = name.lower()
    if "nccl" in n:
        return "nccl"
    if any(s in n for s in ("nvjet", "gemm", "cutlass", "sm90_xmma")):
        return "gemm"
    if any(s in n for s in ("sdpa", "flash", "fmha")):
        return "attention"
    if "multi_tensor_apply" in n:
        return "optimizer (foreach)"
    if any(s in n for s in ("copy", "cat", "split")):
        return "copy/cat/split"
    return "other elementwise"


def union_ms(intervals):
    total, cur = 0.0, None
    for a, b in sorted(intervals):
        if cur is None or a > cur[1]:
            if cur:
                total += cur[1] - cur[0]
            cur = [a, b]
        else:
            cur[1] = max(cur[1], b)
    return (total + (cur[1] - cur[0] if cur else 0.0)) / 1e3


def analyse(path):
    events = [e for e in json.load(gzip.open(path))["traceEvents"] if e.get("ph") == "X"]
    kernels = sorted((e for e in events if e.get("cat") == "kernel"), key=lambda e: e["ts"])
    if not kernels:
        return f"{path}: no GPU kernels"
    steps = max(1, sum(1 for e in events if e.get("cat") in ("cpu_op", "user_annotation")
                       and e["name"].startswith("Optimizer.step#")))
    span = (kernels[-1]["ts"] + kernels[-1]["dur"] - kernels[0]["ts"]) / 1e3
    busy = union_ms([(e["ts"], e["ts"] + e["dur"]) for e in kernels])
    gaps, end = [], kernels[0]["ts"] + kernels[0]["dur"]
    for e in kernels[1:]:
        if e["ts"] > end:
            gaps.append(e["ts"] - end)
        end = max(end, e["ts"] + e["dur"])
    out = [f"{path}: {steps} optimizer step(s); kernels from first to last {span:.1f} ms, busy {busy:.1f} ms, "
           f"idle {span - busy:.1f} ms"]
    for lo, hi in ((0, 50), (50, 200), (200, 1000), (1000, float("inf"))):
        g = [x for x in gaps if lo <= x < hi]
        out.append(f"  idle gaps {lo}-{hi} us: {len(g)}, {sum(g) / 1e3:.1f} ms")
    by, count = collections.defaultdict(float), collections.Counter()
    for e in kernels:
        by[kernel_class(e["name"])] += e["dur"] / 1e3
        count[kernel_class(e["name"])] += 1
    out.append("  kernel time per step (ms, kernels):")
    for k in sorted(by):
        out.append(f"    {k:20s} {by[k] / steps:8.2f}  ({count[k] // steps})")
    host = collections.defaultdict(float)
    for e in events:
        if e.get("cat") in ("cpu_op", "cuda_runtime", "cuda_driver") and any(
                s in e["name"] for s in ("record_param_comms", "c10d::", "Optimizer.step#", "cudaMemcpyAsync",
                                         "Synchronize")):
            host[e["name"][:60]] += e["dur"] / 1e3
    out.append("  host (CPU) time per step (ms):")
    for k, v in sorted(host.items(), key=lambda kv: -kv[1])[:8]:
        out.append(f"    {v / steps:8.2f}  {k}")
    return "\n".join(out)


def nccl_launches(path):
    """[(CPU launch us, kernel duration us, name)] of the NCCL kernels of a trace, in GPU order."""
    events = [e for e in json.load(gzip.open(path))["traceEvents"] if e.get("ph") == "X"]
    launch = {e["args"].get("correlation"): e["ts"] for e in events
              if e.get("cat") in ("cuda_runtime", "cuda_driver") and "args" in e}
    kernels = sorted((e for e in events if e.get("cat") == "kernel" and "nccl" in e["name"].lower()),
                     key=lambda e: e["ts"])
    return [(launch.get(k["args"].get("correlation")), k["dur"], k["name"]) for k in kernels]


def collective_skew(path0, path1):
    a, b = nccl_launches(path0), nccl_launches(path1)
    pairs = [(x, y) for x, y in zip(a, b) if x[0] is not None and y[0] is not None and x[2] == y[2]]
    late0 = sum(max(0.0, x[0] - y[0]) for x, y in pairs) / 1e3
    late1 = sum(max(0.0, y[0] - x[0]) for x, y in pairs) / 1e3
    return "\n".join([
        f"{len(pairs)} collectives matched (of {len(a)} / {len(b)})",
        f"  rank 0 launched later by {late0:.1f} ms in all, rank 1 later by {late1:.1f} ms",
        f"  NCCL kernel time (includes waiting for the other rank): rank 0 {sum(x[1] for x in a) / 1e3:.1f} ms, "
        f"rank 1 {sum(y[1] for y in b) / 1e3:.1f} ms"])


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if sys.argv[1] == "--pair":
        print(collective_skew(sys.argv[2], sys.argv[3]))
        sys.exit(0)
    for p in sys.argv[1:]:
        print(analyse(p))
