#!/usr/bin/env bash
# Prepared in session 18 for the next one-GPU lease (about 200 s; nvidia-h200, and nvidia-h100-x1 when lent):
#   bash validation/device/session_clocks19.sh TAG        (TAG: h200 or h100)
# Session 18 confirmed on H200 that a back-to-back GEMM runs 15% below its burst rate at the 700 W cap
# (validation/session18/README.md). This measures what a model of it needs, and whether real training steps feel it:
#  1. (h100 only) validation/clocks/sustained_gemm.py, the run session 18 could not make on an H100;
#  2. validation/clocks/power_mix.py: a training-size GEMM and a memory-bound add mixed at 100/75/50/25/0% GEMM time,
#     no idle, 6 s each: the rate of each class relative to its bursts, SM clock and power;
#  3. a sustained training step: run_steps.py measure of gpt-ln 8x2048 and hf-llama 4x2048, 3 warm-up steps then 150
#     timed back to back, nvidia-smi sampled beside it (every step's time is kept).
# Committed before it runs (session 18), for each program of 3:
#  - the clock matters for training steps: the median of steps 101-150 is at least 2% slower than the median of
#    steps 1-10, with the SM clock of those late steps below the maximum and the power-cap reason (0x4) set;
#  - it does not: the two medians within 1% (then the 3-6% GPU-bound error of the blind checks lies elsewhere).
# And for 2: if the GEMM keeps at least 97% of its burst rate at 50% GEMM time while it loses 10% or more at 100%,
# the power model must weigh kernel classes (power by class), not apply one factor to GEMMs.
# Lands in $OUT/clocks19-TAG.tar.gz.
set -uo pipefail
TAG=${1:?usage: session_clocks19.sh TAG}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
D=/tmp/clocks19; rm -rf $D; mkdir -p $D
source validation/device/guard.sh
device_environment $D/environment.txt
{ nproc; lscpu | grep "Model name"; } > $D/host.txt 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $D/limits.csv 2>&1
pack() { tar czf $OUT/clocks19-$TAG.tar.gz -C $D . ; }
if [ "$TAG" = h100 ]; then
  timeout 120 python3 validation/clocks/sustained_gemm.py $D/sustained-$TAG.json --seconds 8 > $D/sustained.log 2>&1
  echo "sustained exit $?" >> $D/sustained.log; pack
fi
timeout 150 python3 validation/clocks/power_mix.py $D/mix-$TAG.json --seconds 6 > $D/mix.log 2>&1
echo "mix exit $?" >> $D/mix.log; pack
for p in gpt-ln:validation/programs/gpt-ln-0.5b.json:8x2048 hf-llama:validation/programs/hf-llama-0.9b/config.json:4x2048; do
  IFS=: read -r prog model shape <<< "$p"
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.active --format=csv,noheader,nounits \
    -lms 200 > $D/smi-$prog.csv 2>&1 &
  SMI=$!
  timeout 120 python3 validation/programs/run_steps.py measure --program $prog --model $model --shapes $shape \
    --steps 150 --out $D/steps-$prog.json > $D/steps-$prog.log 2>&1
  echo "steps exit $?" >> $D/steps-$prog.log
  kill $SMI 2>/dev/null; wait $SMI 2>/dev/null
  python3 - "$D/steps-$prog.json" <<'PY' >> $D/steps-$prog.log 2>&1
import json, statistics, sys
r = json.load(open(sys.argv[1]))["rows"][0]
t = r["step_times_s"]
early, late = statistics.median(t[:10]), statistics.median(t[100:150])
print(f"steps 1-10 median {early:.5f} s, steps 101-150 median {late:.5f} s: late/early {late / early:.4f}")
PY
  pack
done
cat $D/*.log
