#!/usr/bin/env bash
# Device session 6 (nvidia-h200-x4), one call: (1) the interference section for sendrecv only (pipeline-style
# point-to-point beside the same compute kernels as the collectives), (2) the harness's interleaved-1F1B runs on
# 2 and 4 GPUs, predicted and committed before (validation/h200x4-interleaved/predicted-before-measuring.json).
# Run from the repo root with the calibration binary carried in devbin/; everything lands in $OUT/session6.tar.gz.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export SCALESCOPE_CALIBRATE_BIN=devbin/scalescope-calibrate
R=${OUT:-/tmp/out}/r; mkdir -p "$R"
{
  date -u; nvidia-smi; nvidia-smi topo -m
  python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version(), "cuda", torch.version.cuda)'
} > "$R/environment.txt" 2>&1
timeout 150 bash calibrate/gpu/run_on_device.sh "$R/interf-sendrecv.json" 120 --sections interf --ops sendrecv \
  > "$R/interf-sendrecv.stdout" 2>&1
echo "interf sendrecv exit $?" >> "$R/status.txt"
timeout 400 bash validation/harness/run_all.sh validation/h200x4-interleaved --sizes "2 4" --total-budget-s 380 -- \
  --models validation/models/llama-1b.json validation/models/llama-3b.json validation/models/llama-7b.json \
  --families pp-interleaved > "$R/harness.stdout" 2>&1
echo "harness exit $?" >> "$R/status.txt"
cp -r validation/h200x4-interleaved "$R/h200x4-interleaved"
tar czf "${OUT:-/tmp/out}/session6.tar.gz" -C "$R" .
cat "$R/status.txt"; tail -n 25 "$R/harness.stdout"
