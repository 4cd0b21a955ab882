#!/usr/bin/env bash
# GPU-machine session 1 (nvidia-h200-x4): calibration profiles. Run from the repo root with the
# calibration binary carried in devbin/. Everything lands in $OUT/calibrate.tar.gz.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export SCALESCOPE_CALIBRATE_BIN=devbin/scalescope-calibrate
R=${OUT:-/tmp/out}/r; mkdir -p "$R"
{
  date -u; uname -a; nvidia-smi; nvidia-smi topo -m; nvidia-smi nvlink -s 2>&1 | head -80
  python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version(), "cuda", torch.version.cuda)'
  SP=$(python3 -c 'import site;print(site.getsitepackages()[0])'); ls "$SP"/nvidia; pip list 2>/dev/null | grep -i nvidia
} > "$R/environment.txt" 2>&1
# 4-GPU profile: every section; the budget leaves room for the 2-GPU run below.
timeout 470 bash calibrate/gpu/run_on_device.sh "$R/h200x4.json" "${BUDGET4:-400}" > "$R/h200x4.stdout" 2>&1
echo "h200x4 exit $?" >> "$R/status.txt"
# 2-GPU profile on GPUs 0,1 of the same box (collectives, P2P, topology only).
CUDA_VISIBLE_DEVICES=0,1 timeout 110 bash calibrate/gpu/run_on_device.sh "$R/h200x4-gpus01.json" "${BUDGET2:-80}" \
  --gpus 2 --sections topo,p2p,coll > "$R/h200x4-gpus01.stdout" 2>&1
echo "gpus01 exit $?" >> "$R/status.txt"
tar czf "${OUT:-/tmp/out}/calibrate.tar.gz" -C "$R" .
cat "$R/status.txt"; tail -n 30 "$R/h200x4.log" 2>/dev/null
