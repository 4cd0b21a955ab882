#!/usr/bin/env python3
"""The host's speed at what a training framework's host does, recorded beside every lease measurement: host time per
layer (scalescope.host_dispatch/1) measured on one lease's CPU is compared with another's through these two numbers.

  op     the host time of one small PyTorch CUDA op (torch.add into a preallocated 1-element tensor, launched and not
         waited for): dispatcher, autograd-free launch, the CUDA driver's launch call; median of 7 runs of 20,000
  loop   the time of a pure-Python loop of 1,000,000 additions (the interpreter alone), median of 7 runs
Prints one line: `host probe: op_us=... loop_ms=... cpu=...`."""
import platform
import statistics
import time

import torch


def main():
    x = torch.zeros(1, device="cuda")
    y = torch.empty_like(x)
    for _ in range(2000):  # warm-up: the kernel is loaded, the caching allocator has its blocks
        torch.add(x, 1, out=y)
    torch.cuda.synchronize()
    op = []
    for _ in range(7):
        a = time.perf_counter()
        for _ in range(20000):
            torch.add(x, 1, out=y)
        op.append((time.perf_counter() - a) / 20000 * 1e6)
        torch.cuda.synchronize()
    loop = []
    for _ in range(7):
        a = time.perf_counter()
        s = 0
        for i in range(1000000):
            s += i
        loop.append((time.perf_counter() - a) * 1e3)
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")),
               platform.processor())
    print(f"host probe: op_us={statistics.median(op):.2f} loop_ms={statistics.median(loop):.1f} cpu={cpu!r}")


if __name__ == "__main__":
    main()
