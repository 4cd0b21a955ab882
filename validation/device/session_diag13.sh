#!/usr/bin/env bash
# Session 13 diagnosis for issue 24 (not a blind check: no predictions, nothing fitted): profiler traces of every
# rank of the 2-GPU points that the 4x H200 parts A and B of session 13 predicted too fast, so that the time the
# model misses can be located kernel by kernel (validation/blind24/session13/README.md).
#   bash validation/device/session_diag13.sh        (2 or 4 GPUs; everything lands in $OUT/diag13.tar.gz)
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
PY=${PY:-python3}
D=/tmp/diag13; rm -rf $D; mkdir -p $D
source validation/device/guard.sh
device_environment $D/environment.txt
pack() { tar czf $OUT/diag13.tar.gz -C $D . 2>/dev/null; true; }
run() {  # run PART IDS: the points timed again (6 steps) and then profiled (2 steps, every rank)
  echo "== $(date -u +%T) part $1: $2" | tee -a $D/log.txt
  timeout -k 10 170 torchrun --standalone --nproc-per-node 2 validation/blind24/run_points.py --part $1 --gpus 2 \
    --only "$2" --out $D/$1 --profile $D/prof >> $D/log.txt 2>&1
  echo "exit $?" | tee -a $D/log.txt; pack
}
run A gpt-ln.ddp.n2,gpt-ln.zero3.n2,gpt-ln.zero2.n2,gpt-ln.pp-gpipe.n2,gpt-ln-cp.alltoall.n2
run B moe.ep.n2,moe.dp.n2,hf-llama.zero3.n2
ls -la $D/prof | tee -a $D/log.txt; pack; ls -la $OUT
