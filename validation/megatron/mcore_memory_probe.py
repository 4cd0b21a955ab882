#!/usr/bin/env python3
"""Where Megatron-Core's memory beyond one step's allocations sits (session 29's third blind check: every shape's
torch.cuda.max_memory_allocated 1.5-3 GiB above the prediction, by an amount that grows with the longest sequence the
measuring process had run).

On the device, one process, the dense 6-layer model of mcore_blind.py (built for sequences up to 8,192 as `measure`
builds it), the shapes in order (default 1x2048, 1x7168, 1x2048): for each, 3 steps as `measure` runs them, and
  - torch.cuda.memory_allocated() just before the first step's zero_grad and after the last step (what persists),
  - the peak over the 3 steps (reset before them),
  - with torch.cuda.memory._record_memory_history on, the largest blocks still allocated after the shape's steps that
    were allocated during them, with the Python frames that allocated them.
Writes probe.json to --out.

  python3 validation/megatron/mcore_memory_probe.py --out DIR [--shapes 1x2048,1x7168,1x2048]
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--shapes", default="1x2048,1x7168,1x2048")
    ap.add_argument("--vocab", type=int, default=4096)
    ap.add_argument("--top", type=int, default=12, help="largest persisting blocks listed per shape")
    a = ap.parse_args()
    import torch
    sys.path.insert(0, HERE)
    import mcore_moe_host as m
    m.init_megatron()
    model = m.build("dense", 6, 8192, a.vocab)
    gib = 2.0 ** 30
    rows = []
    for sh in a.shapes.split(","):
        b, s = (int(x) for x in sh.split("x"))
        ids, pos, labels = m.inputs(b, s, a.vocab)
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        torch.cuda.memory._record_memory_history(max_entries=200000)
        for _ in range(3):
            model.zero_grad(set_to_none=True)
            model(ids, pos, None, labels=labels).float().mean().backward()
        torch.cuda.synchronize()
        model.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        snap = torch.cuda.memory._snapshot()
        torch.cuda.memory._record_memory_history(enabled=None)
        blocks = []
        for seg in snap["segments"]:
            for blk in seg["blocks"]:
                if blk["state"] != "active_allocated":
                    continue
                frames = [f"{f['filename'].split('site-packages/')[-1]}:{f['line']} {f['name']}"
                          for f in blk.get("frames", []) if f.get("filename", "").endswith(".py")]
                blocks.append({"bytes": blk["size"], "frames": frames[:8]})
        blocks.sort(key=lambda x: -x["bytes"])
        row = {"shape": sh, "allocated_before_GiB": before / gib,
               "allocated_after_GiB": torch.cuda.memory_allocated() / gib,
               "max_allocated_GiB": torch.cuda.max_memory_allocated() / gib,
               "largest_after": [x for x in blocks if x["frames"]][:a.top],
               "blocks_after_with_frames_GiB": sum(x["bytes"] for x in blocks if x["frames"]) / gib}
        rows.append(row)
        print(sh, {k: round(v, 3) for k, v in row.items() if k.endswith("GiB")}, flush=True)
    with open(os.path.join(a.out, "probe.json"), "w") as f:
        json.dump({"rows": rows, "torch": torch.__version__}, f, indent=1)


if __name__ == "__main__":
    main()
