#!/usr/bin/env bash
# Device session (nvidia-h200-x2): torch.profiler breakdown of single-GPU and 2-GPU training steps of the harness.
# Usage on the device from the repo root: bash validation/device/session_profile.sh  (results -> $OUT/profile.tar.gz)
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
D=/tmp/prof; mkdir -p $D
nvidia-smi > $D/nvidia-smi.txt 2>&1
python3 -c 'import torch;print(torch.__version__, torch.version.cuda, torch.cuda.nccl.version())' > $D/versions.txt 2>&1
CUDA_VISIBLE_DEVICES=0 timeout 200 torchrun --nproc-per-node 1 validation/harness/profile_step.py --out $D \
  --configs single:llama-1b:1:16 single:llama-1b:2:16 single:llama-1b:4:16 single:llama-3b:1:8 2>&1 | tee $D/n1.log
timeout 220 torchrun --nproc-per-node 2 validation/harness/profile_step.py --out $D \
  --configs tp:llama-1b:1:16 tp:llama-1b:2:16 ddp:llama-1b:2:16 zero3:llama-1b:2:16 pp-1f1b:llama-1b:2:16 \
  tp:llama-3b:1:8 2>&1 | tee $D/n2.log
tar czf $OUT/profile.tar.gz -C $D .
