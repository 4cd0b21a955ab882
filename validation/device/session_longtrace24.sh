#!/usr/bin/env bash
# Session 24, one H200, one call (about 2 minutes): a diagnostic of the blind check's bias (validation/session24:
# every long shape predicted 4-7% fast from traces at 4x768 / 2x1536). One profiler trace of each program at a LONG
# shape of the set, 2x8192, with its SM clock (run_steps.py --smi); validation/session24/longtrace.py then imports
# them and predicts the set's other shapes (measured in the check) from them.
# Reading committed before the call (validation/session24/README.md, "Diagnostic"): if the bias comes from moving a
# short trace to long shapes (the calibration rows' efficiency growing faster with size than the training kernels'),
# the predictions from the 2x8192 traces land within 2% (median) of the measured steps; if it is a cost of the whole
# step (clock, lease), they stay 4-7% fast.
set -uo pipefail
: "${OUT:?run on the device machine (OUT is its output folder)}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
D=/tmp/longtrace24; rm -rf $D; mkdir -p $D/traces
source validation/device/guard.sh
source validation/device/environment.sh
record_environment $D/environment.txt
RS="python3 validation/programs/run_steps.py trace --out $D/traces --smi"
timeout 200 $RS --program gpt-ln --model validation/programs/gpt-ln-0.5b.json --mbs 2 --seq 8192 \
  --name gpt-ln-mbs2-seq8192 >> $D/log.txt 2>&1; echo "gpt-ln exit $?" >> $D/log.txt
timeout 250 $RS --program hf-llama --model validation/programs/hf-llama-0.9b/config.json --mbs 2 --seq 8192 \
  --name hf-llama-mbs2-seq8192 >> $D/log.txt 2>&1; echo "hf-llama exit $?" >> $D/log.txt
tar czf $OUT/longtrace24.tar.gz -C /tmp longtrace24
tail -3 $D/log.txt; ls -la $D/traces
