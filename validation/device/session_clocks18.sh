#!/usr/bin/env bash
# Prepared in session 17 for the next one-GPU lease (nvidia-h200, then nvidia-h100-x1; about 60 s each):
#   bash validation/device/session_clocks18.sh TAG
# Does the GPU's clock (and a GEMM's rate) fall with the busy fraction? validation/clocks/sustained_gemm.py: a bf16
# GEMM in calibration-style 50 ms bursts, then at duty cycles of 25/50/75/100% for 8 s each, with nvidia-smi's SM
# clock, power and clock-event reasons sampled every 100 ms beside it. Why: validation/session17/README.md ("Left")
# and validation/harness-stack/REPORT.md (long steps 4-6% too fast, short ones within 1%).
# Lands in $OUT/clocks-TAG.tar.gz.
# Committed before it runs (session 17), what would confirm the hypothesis and what would rule it out, on each GPU:
#  - confirmed: the median rate at 100% duty is at least 3% below the 50 ms bursts' median, at 25% duty within 1% of
#    the bursts, the SM clock falling with the duty cycle and a power-cap clock-event reason set at 100%;
#  - ruled out: the rate at 100% duty within 1% of the bursts (then the 3-6% of the blind checks is elsewhere: look
#    at the GEMM rows' shapes against the traced kernels' next).
set -uo pipefail
TAG=${1:?usage: session_clocks18.sh TAG}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
D=/tmp/clocks; rm -rf $D; mkdir -p $D
source validation/device/guard.sh
device_environment $D/environment.txt
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.applications.graphics,power.limit,power.max_limit --format=csv \
  > $D/limits.csv 2>&1
timeout 120 python3 validation/clocks/sustained_gemm.py $D/sustained-$TAG.json --seconds 8 > $D/log.txt 2>&1
echo "exit $?" >> $D/log.txt
tar czf $OUT/clocks-$TAG.tar.gz -C $D .
cat $D/limits.csv $D/log.txt
