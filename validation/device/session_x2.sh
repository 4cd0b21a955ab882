#!/usr/bin/env bash
# GPU-machine session 2 (nvidia-h200-x2): the 2-GPU calibration profile and the 2-GPU training points.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export SCALESCOPE_CALIBRATE_BIN=devbin/scalescope-calibrate
R=${OUT:-/tmp/out}/r; mkdir -p "$R"
{ date -u; nvidia-smi; nvidia-smi topo -m; nvidia-smi nvlink -s 2>&1 | head -40; } > "$R/environment.txt" 2>&1
timeout 200 bash calibrate/gpu/run_on_device.sh "$R/h200x2.json" "${BUDGET2:-160}" > "$R/h200x2.stdout" 2>&1
echo "h200x2 exit $?" > "$R/status.txt"
OUT= timeout 320 bash validation/harness/run_all.sh /tmp/h200x2 --sizes "2" --total-budget-s "${HBUDGET:-280}" > "$R/harness.stdout" 2>&1
echo "harness exit $?" >> "$R/status.txt"
tar czf "$R/harness-x2.tar.gz" -C /tmp h200x2
tar czf "${OUT:-/tmp/out}/x2.tar.gz" -C "$R" .
cat "$R/status.txt"; tail -n 5 "$R/h200x2.log"; tail -n 8 "$R/harness.stdout"
