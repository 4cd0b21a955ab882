#!/usr/bin/env bash
# Session 13, issue 24: gpt-ln ZeRO-3 on 2 GPUs measured 0.0750-0.0874 s in separate launches on one lease and
# 0.0638-0.0909 s across leases (session_order13.sh). Is it where the ranks' processes run? Three launches as
# torchrun places them, three with each rank pinned to 4 cores of its own (validation/blind24/pin.sh), alternating.
#   bash validation/device/session_pin13.sh        (2+ GPUs; $OUT/pin13.tar.gz)
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
D=/tmp/pin13; rm -rf $D; mkdir -p $D
source validation/device/guard.sh
device_environment $D/environment.txt
lscpu -e > $D/lscpu.txt 2>&1; nvidia-smi topo -m > $D/topo.txt 2>&1
ID=gpt-ln.zero3.n2
for k in 1 2 3; do
  for mode in free pinned; do
    echo "== $(date -u +%T) $mode $k" | tee -a $D/log.txt
    if [ $mode = free ]; then
      timeout -k 10 100 torchrun --standalone --nproc-per-node 2 validation/blind24/run_points.py --part A --gpus 2 \
        --only $ID --out $D/$mode$k >> $D/log.txt 2>&1
    else
      timeout -k 10 100 torchrun --standalone --nproc-per-node 2 --no-python bash validation/blind24/pin.sh --part A \
        --gpus 2 --only $ID --out $D/$mode$k >> $D/log.txt 2>&1
    fi
    echo "exit $?" | tee -a $D/log.txt
    tar czf $OUT/pin13.tar.gz -C $D . 2>/dev/null
  done
done
grep -E "^== |measured +step" $D/log.txt
