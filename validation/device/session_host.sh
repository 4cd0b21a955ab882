#!/usr/bin/env bash
# Device session (nvidia-h200-x4): host (CPU dispatch) time per training step of each plan family, measured with a
# short sequence (256) so that the GPU is mostly idle and wall ~ host time; the same configs at seq 4096 for TP.
# Usage on the device from the repo root: bash validation/device/session_host.sh  (results -> $OUT/host.tar.gz)
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
D=/tmp/host; mkdir -p $D/n1 $D/n2 $D/n4 $D/n4full
nvidia-smi > $D/nvidia-smi.txt 2>&1
PS="validation/harness/profile_step.py --steps 3 --warmup 3"
CUDA_VISIBLE_DEVICES=0 timeout 120 torchrun --nproc-per-node 1 $PS --out $D/n1 --seq 256 \
  --configs single:llama-1b:1:16 single:llama-1b:4:16 single:llama-3b:1:8 2>&1 | tee $D/n1.log
CUDA_VISIBLE_DEVICES=0,1 timeout 150 torchrun --nproc-per-node 2 $PS --out $D/n2 --seq 256 \
  --configs tp:llama-1b:1:16 tp:llama-1b:4:16 ddp:llama-1b:1:16 zero3:llama-1b:1:16 pp-1f1b:llama-1b:1:16 2>&1 | tee $D/n2.log
timeout 150 torchrun --nproc-per-node 4 $PS --out $D/n4 --seq 256 \
  --configs tp:llama-1b:1:16 tp:llama-1b:4:16 tp-dp:llama-1b:1:16 ddp:llama-1b:1:16 zero3:llama-1b:1:16 2>&1 | tee $D/n4.log
timeout 150 torchrun --nproc-per-node 4 $PS --out $D/n4full \
  --configs tp:llama-1b:1:16 tp:llama-1b:4:16 tp-dp:llama-1b:1:16 2>&1 | tee $D/n4full.log
tar czf $OUT/host.tar.gz -C $D .
