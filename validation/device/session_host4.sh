#!/usr/bin/env bash
# Device session 7, last call (nvidia-h200-x4): does a host-bound step repeat inside one lease? The same DTensor TP
# config (llama-1b, TP=4, mbs 1, gbs 16) timed with no profiler in the process, three times per process, in three
# processes: seq 4096, seq 256, seq 4096 again. Session 7's first call had 1.91 s at seq 4096 where the harness,
# 12 minutes later on the same machine, measured 2.38 s.
# Usage on the device from the repo root: bash validation/device/session_host4.sh  (results -> $OUT)
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
D=/tmp/host4; rm -rf $D; mkdir -p $D/a $D/b $D/c
source validation/device/guard.sh
LOG=$OUT/session.log
{ date -u; nvidia-smi; lscpu | grep -E "Model name|^CPU\(s\)"; uptime; } > $D/environment.txt 2>&1
PS="validation/harness/profile_step.py --timing-only --steps 4 --warmup 2"
C="tp:llama-1b:1:16 tp:llama-1b:1:16 tp:llama-1b:1:16"
for step in "a 4096" "b 256" "c 4096"; do
  set -- $step
  echo "== $(date -u +%T) process $1, seq $2" | tee -a $LOG
  timeout 110 torchrun --nproc-per-node 4 $PS --out $D/$1 --seq $2 --configs $C 2>&1 | grep -v -i warn | grep "wall" | tee -a $LOG
done
uptime | tee -a $LOG
tar czf $OUT/host4.tar.gz -C $D .
