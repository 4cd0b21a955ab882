#!/usr/bin/env bash
# Session 34, one H200, call 1 (about 4 minutes): what each kernel class draws (validation/clocks/power_sweep.py) and
# the GEMM + add mixes at the power cap in bf16 and FP8 (power_mix.py), the calibration of the power model
# (docs/power.md); and, as development data, session 19's two sustained training steps with their clock and power.
# The blind training steps are measured in call 2, after their predictions are committed.
set -uo pipefail
: "${OUT:?run on the device machine (OUT is its output folder)}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
W=/tmp/power34; rm -rf "$W"; mkdir -p "$W"
source validation/device/environment.sh
record_environment "$W/environment.txt"
nvidia-smi --query-gpu=index,name,clocks.max.sm,power.limit,power.default_limit,power.max_limit --format=csv > "$W/limits.csv" 2>&1
cd validation/clocks
python3 power_sweep.py "$W/sweep.json" --seconds 3 > "$W/sweep.log" 2>&1; echo "sweep exit $?" >> "$W/sweep.log"
python3 power_mix.py "$W/mix-bf16.json" --seconds 5 --gemm 8192x4096x16384 --dtype bf16 > "$W/mix-bf16.log" 2>&1
echo "mix bf16 exit $?" >> "$W/mix-bf16.log"
python3 power_mix.py "$W/mix-fp8.json" --seconds 5 --gemm 8192x4096x16384 --dtype fp8 > "$W/mix-fp8.log" 2>&1
echo "mix fp8 exit $?" >> "$W/mix-fp8.log"
cd - > /dev/null
# Development data (seen before the model is written; not the blind check): session 19's two sustained steps again,
# with the clock and power of their timed steps.
for p in gpt-ln:validation/programs/gpt-ln-0.5b.json:8x2048 hf-llama:validation/programs/hf-llama-0.9b/config.json:4x2048; do
  IFS=: read -r prog model shape <<< "$p"
  timeout 150 python3 validation/programs/run_steps.py measure --program $prog --model $model --shapes $shape \
    --steps 60 --smi --out "$W/steps-$prog.json" > "$W/steps-$prog.log" 2>&1
  echo "steps exit $?" >> "$W/steps-$prog.log"
done
tar czf "$OUT/power34.tar.gz" -C /tmp power34
tail -3 "$W/sweep.log" "$W/mix-bf16.log" "$W/mix-fp8.log"
