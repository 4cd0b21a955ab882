#!/usr/bin/env bash
# Session 34, call 3 (about 4 minutes), after the blind check: the kernel sweep again with the kernels of real training
# steps it lacked (power_sweep.py --extended: cuDNN and flash attention at head size 64, a GEMM with a bias + GELU
# epilogue, RMSNorm, GELU, SiLU x mul, softmax, cross entropy, a fused AdamW step). Data for the next model of the
# power cap (docs/power.md); calibrate/profiles/h200-power.json stays the one the blind check used.
set -uo pipefail
: "${OUT:?run on the device machine (OUT is its output folder)}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
W=/tmp/sweep34x; rm -rf "$W"; mkdir -p "$W"
source validation/device/environment.sh
record_environment "$W/environment.txt"
cd validation/clocks
python3 power_sweep.py "$W/sweep-extended.json" --seconds 3 --extended > "$W/sweep.log" 2>&1; echo "sweep exit $?" >> "$W/sweep.log"
cd - > /dev/null
tar czf "$OUT/sweep34x.tar.gz" -C /tmp sweep34x
tail -n 3 "$W/sweep.log"
