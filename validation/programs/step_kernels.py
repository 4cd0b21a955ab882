#!/usr/bin/env python3
"""Names the CUDA kernels of one training step of a program (torch.profiler over the second of two steps) whose
names contain any of the given words: which attention or GEMM kernels PyTorch picked on this GPU.

  python3 validation/programs/step_kernels.py PROGRAM MODEL_FILE --layers 2 --shape 2x2048 --match cudnn,flash
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import programs  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("program")
    p.add_argument("model")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--shape", default="2x2048", help="MBSxSEQ")
    p.add_argument("--match", default="cudnn,flash,fmha,sdpa,attention", help="comma-separated words (any case)")
    p.add_argument("--notes", action="store_true", help="print the program's notes first")
    a = p.parse_args()
    mbs, seq = (int(v) for v in a.shape.split("x"))
    step, vocab, cfg, notes = programs.build(a.program, a.model, a.layers)
    if a.notes:
        print("\n".join(notes))
    x = torch.randint(0, vocab, (mbs, seq), device="cuda")
    y = torch.randint(0, vocab, (mbs, seq), device="cuda")
    with programs.sdpa_context(a.program, x.device):
        step(x, y)
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            step(x, y)
            torch.cuda.synchronize()
    names = sorted({e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})
    words = [w.lower() for w in a.match.split(",") if w]
    print(f"kernels of one {a.program} step ({a.layers} layers of {os.path.basename(a.model)}, {a.shape}) "
          f"matching {','.join(words)}:")
    print("\n".join(n for n in names if any(w in n.lower() for w in words)) or "none matched")


if __name__ == "__main__":
    sys.exit(main())
