#!/usr/bin/env bash
# Session 13, issue 24: does a point's measured step depend on the points measured before it in the same process?
# gpt-ln ZeRO-3 on 2 GPUs measured 0.0909 s right after gpt-ln DDP (part A and the diagnosis, two leases) but
# 0.0638 s after hf-llama DDP points (part F). Here each point runs in a launch of its own, and again after DDP.
#   bash validation/device/session_order13.sh        (2+ GPUs; $OUT/order13.tar.gz)
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
D=/tmp/order13; rm -rf $D; mkdir -p $D
source validation/device/guard.sh
device_environment $D/environment.txt
k=0
run() {  # run PART IDS: one launch measuring IDS in this order
  k=$((k + 1))
  echo "== $(date -u +%T) launch $k, part $1: $2" | tee -a $D/log.txt
  timeout -k 10 120 torchrun --standalone --nproc-per-node 2 validation/blind24/run_points.py --part $1 --gpus 2 \
    --only "$2" --out $D/launch$k >> $D/log.txt 2>&1
  echo "exit $?" | tee -a $D/log.txt
  tar czf $OUT/order13.tar.gz -C $D . 2>/dev/null
}
run A gpt-ln.zero3.n2
run A gpt-ln.zero2.n2
run A gpt-ln.pp-1f1b.n2
run F gpt-ln.zero3-fake.n2.8x1024
run A gpt-ln.ddp.n2,gpt-ln.zero3.n2
run F hf-llama.ddp-interf.n2.2x2048,gpt-ln.zero3-fake.n2.8x1024
grep -E "measured +step" $D/log.txt
