#!/usr/bin/env bash
# Session 32, one H200: does an FP8 GEMM (TE's forward: e4m3, fast accumulation) throttle at the 700 W cap as the
# bf16 GEMM of session 19 does? The same mixes (GEMM share 1, 0.75, 0.5, 0.25, 0 with a memory-bound add, no idle)
# at GPT-3 5B's fc1 shape (8192 tokens x 4096 -> 16384), bf16 and fp8, 5 s per mix. Expectation written before the
# run: the fp8 GEMM draws at least as much power per second as bf16 (twice the math per byte moved), so at G = 1 its
# rate is at most 0.90 of its bursts (bf16 at this shape: near session 19's 0.85).
set -euo pipefail
out="${1:?usage: power_fp8.sh OUTDIR}"
mkdir -p "$out"
cd validation/clocks
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,driver_version --format=csv > "$out/gpu.csv"
for dt in fp8 bf16; do
  python3 power_mix.py "$out/power-mix-$dt.json" --seconds 5 --gemm 8192x4096x16384 --dtype "$dt"
done
