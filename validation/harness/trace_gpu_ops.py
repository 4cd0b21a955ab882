"""Shrinks torch.profiler chrome traces (profile_step.py --keep-traces) to their GPU events, each with the CPU op
that launched it, so that a trace of ~100 MB comes back from a device machine in ~1 MB.

  python3 validation/harness/trace_gpu_ops.py DIR    # every DIR/trace-*.json.gz -> DIR/trace-*-gpu.json.gz

Each output: {"source", "columns": [name, ts_us, dur_us, stream, cpu_op], "events": [...]}. cpu_op is the innermost
torch op (cpu_op event) whose External id the kernel's launch carries (linked by the launch's correlation id), or
"" where the trace has none (NCCL kernels launched from the process group's own stream, memcpy by the runtime).
The whole trace is deleted after its GPU events are written.
"""
import glob
import gzip
import json
import os
import sys


def gpu_ops(events):
    op_of_external = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "cpu_op" and "External id" in e.get("args", {}):
            op_of_external[e["args"]["External id"]] = e["name"]
    external_of_launch = {}
    for e in events:
        a = e.get("args", {})
        if e.get("ph") == "X" and e.get("cat") == "cuda_runtime" and "correlation" in a:
            external_of_launch[a["correlation"]] = a.get("External id")
    out = []
    for e in events:
        if e.get("ph") != "X" or e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        ext = external_of_launch.get(e.get("args", {}).get("correlation"))
        out.append([e["name"][:160], e["ts"], e["dur"], e.get("tid"), op_of_external.get(ext, "")])
    return out


def main():
    for path in sorted(glob.glob(os.path.join(sys.argv[1], "trace-*.json.gz"))):
        if path.endswith("-gpu.json.gz"):
            continue
        with gzip.open(path) as f:
            gpu = gpu_ops(json.load(f)["traceEvents"])
        out = path.replace(".json.gz", "-gpu.json.gz")
        with gzip.open(out, "wt") as f:
            json.dump({"source": os.path.basename(path), "columns": ["name", "ts_us", "dur_us", "stream", "cpu_op"],
                       "events": gpu}, f)
        os.remove(path)
        print(out, len(gpu), "GPU events,", sum(1 for g in gpu if g[4]), "with their CPU op")


if __name__ == "__main__":
    main()
