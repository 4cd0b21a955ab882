#!/usr/bin/env bash
# Session 37, call 2 (one H100 or H200, about 3 minutes): how long must a GEMM-dense phase last for the power cap to
# act on it alone? power_mix.py's GEMM and add alternate in cycles of 2 ms to 1 s (--block-ms) at GEMM shares 0.75
# and 0.5, FP8 (TE's forward GEMM) and bf16, at 8192x4096x16384. The expectation, committed before this runs, is in
# validation/session37/README.md ("Call 2").
set -uo pipefail
source validation/device/environment.sh
measure_session window37  # W=/tmp/window37, pack()
cd validation/clocks
for dt in fp8 bf16; do
  for ms in 2 5 20 50 200 1000; do
    timeout 40 python3 power_mix.py "$W/window-$dt-$ms.json" --seconds 4 --gemm 8192x4096x16384 --dtype $dt \
      --block-ms $ms --shares 0.75,0.5 > "$W/window-$dt-$ms.log" 2>&1
    echo "exit $?" >> "$W/window-$dt-$ms.log"
  done
  pack
done
cd - > /dev/null
pack
grep -h "mix G" "$W"/window-*.log
