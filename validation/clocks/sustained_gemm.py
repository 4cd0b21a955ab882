#!/usr/bin/env python3
"""Does a GPU keep its clock under sustained load? A bf16 GEMM (the head GEMM of gpt-ln at 7x2048: 14336 x 1600 x
50304) timed in 50 ms bursts, as scalescope-calibrate times its rows, and then back to back for SECONDS seconds,
while `nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu -lms 100` logs beside it. Writes OUT.json:
the GEMM's time per call in each 0.5 s window and the nvidia-smi samples.

  python3 validation/clocks/sustained_gemm.py OUT.json [--seconds 20]

Question (session 17): the blind check's GPU-bound shapes are 3-6% too fast on H100 and H200 while the kernels are
priced from short calibration bursts; a clock that falls under a training step's sustained load would do that."""
import argparse
import json
import subprocess
import time

import torch


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--seconds", type=float, default=20)
    a = p.parse_args()
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,"
                            "clocks_throttle_reasons.active", "--format=csv,noheader,nounits", "-lms", "100"],
                           stdout=subprocess.PIPE, text=True)
    x = torch.randn(14336, 1600, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(1600, 50304, device="cuda", dtype=torch.bfloat16)
    for _ in range(5):
        x @ w
    torch.cuda.synchronize()
    time.sleep(3)  # idle: the clock back up before the bursts

    def window(n):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(n):
            x @ w
        e.record()
        torch.cuda.synchronize()
        return s.elapsed_time(e) * 1e-3 / n

    one = window(3)
    n50 = max(1, int(0.05 / one))
    bursts = []
    for _ in range(5):  # calibration-style: 50 ms bursts with idle between them
        bursts.append(window(n50))
        time.sleep(0.5)
    t0, windows = time.time(), []
    n500 = max(1, int(0.5 / one))
    while time.time() - t0 < a.seconds:  # sustained, as a training step's GPU-bound stretch
        windows.append({"t_s": round(time.time() - t0, 2), "s_per_call": window(n500)})
    smi.terminate()
    samples = smi.communicate()[0].strip().splitlines()
    flops = 2 * 14336 * 1600 * 50304
    doc = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "gemm": "14336x1600 @ 1600x50304 bf16",
           "burst_s_per_call": bursts, "burst_TFLOPS": [flops / t / 1e12 for t in bursts],
           "sustained": windows, "sustained_TFLOPS": [flops / w_["s_per_call"] / 1e12 for w_ in windows],
           "nvidia_smi": samples}
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
    print("burst TFLOPS", [round(v) for v in doc["burst_TFLOPS"]])
    print("sustained TFLOPS", [round(v) for v in doc["sustained_TFLOPS"]])
    print("\n".join(samples[::10]))


if __name__ == "__main__":
    main()
