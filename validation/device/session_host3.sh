#!/usr/bin/env bash
# Device session 7 (nvidia-h200-x4): is the host (CPU dispatch) cost a property of the machine kind?
# 1. The seq-256 host cost again, timed with no torch.profiler in the process (profile_step.py --timing-only).
#    Until now the unprofiled steps were timed AFTER the profiler had run, when CUPTI stays attached
#    (pytorch/pytorch#144455). A first attempt of this session (profiling too) ran out of time; its log showed
#    tp:llama-1b:1:16 on 4 GPUs at seq 4096: 1.912 s before the profiler, 2.547 s after it.
# 2. The TP family of the harness again (validation/harness/run_all.sh --families tp), in the same lease, so that
#    the host cost of (1) and the runs it predicts come from one machine.
# Usage on the device from the repo root: bash validation/device/session_host3.sh  (results -> $OUT)
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
D=/tmp/host3; rm -rf $D /tmp/tp; mkdir -p $D/n1 $D/n2 $D/n4
source validation/device/guard.sh
LOG=$OUT/session.log
{ date -u; nvidia-smi; python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())'
  lscpu | grep -E "Model name|^CPU\(s\)|MHz"; uname -r; uptime; } > $D/environment.txt 2>&1
PS="validation/harness/profile_step.py --timing-only --steps 5 --warmup 3 --seq 256"
CUDA_VISIBLE_DEVICES=0 timeout 60 torchrun --nproc-per-node 1 $PS --out $D/n1 \
  --configs single:llama-1b:1:16 single:llama-3b:1:8 2>&1 | grep -v Warning | tee -a $LOG
CUDA_VISIBLE_DEVICES=0,1 timeout 80 torchrun --nproc-per-node 2 $PS --out $D/n2 \
  --configs tp:llama-1b:1:16 ddp:llama-1b:1:16 2>&1 | grep -v Warning | tee -a $LOG
timeout 80 torchrun --nproc-per-node 4 $PS --out $D/n4 \
  --configs tp:llama-1b:1:16 tp-dp:llama-1b:1:16 2>&1 | grep -v Warning | tee -a $LOG
tar czf $OUT/host3.tar.gz -C $D .
OUT= timeout 330 bash validation/harness/run_all.sh /tmp/tp --sizes "2 4" --total-budget-s 300 -- --families tp 2>&1 \
  | grep -v Warning | tail -n 60 | tee -a $LOG
tar czf $OUT/tp.tar.gz -C /tmp tp
uptime | tee -a $LOG
