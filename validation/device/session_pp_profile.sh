#!/usr/bin/env bash
# Device session 6b (nvidia-h200-x4): why interleaved 1F1B (torch ScheduleInterleaved1F1B) measured slower than
# 1F1B on 4 GPUs. torch.profiler traces of both (llama-1b, mbs 2, gbs 16) on every rank -> $OUT/ppprof.tar.gz.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
D=/tmp/ppprof; mkdir -p $D
nvidia-smi > $D/nvidia-smi.txt 2>&1
timeout 300 torchrun --nproc-per-node 4 validation/harness/profile_step.py --out $D --steps 2 --warmup 3 --keep-traces \
  --configs pp-1f1b:llama-1b:2:16 pp-interleaved:llama-1b:2:16:2 pp-interleaved:llama-1b:4:16:2 2>&1 | tee $D/run.log
tar czf $OUT/ppprof.tar.gz -C $D .
ls -la $D
