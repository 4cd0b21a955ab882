#!/usr/bin/env bash
# Session 35, one H200, one call (about 8 minutes): the blind check of the power-cap model's second fit (validation/
# session35/predict_power.py; predictions committed in validation/session35/predictions.json before this runs), then
# the extended kernel sweep again on this lease (does the fit carry from one H200 to another?).
#  1. which attention kernel the gpt-ln program runs here (torch.profiler over one step: cuDNN or flash kernel names);
#  2. four gpt-ln models at their shapes, 3 warm-up then 40 timed steps back to back, nvidia-smi beside them;
#  3. power_sweep.py --extended (as session 34's call 3).
# Stages, so that each fits in one device call: `measure` (1-2, about 2.5 minutes on an H200), `sweep` (3, about
# 4 minutes), or nothing for both. Session 35 ran `measure`, then `sweep`. The tar is rewritten after every program,
# so a call cut short still returns what ran. Step 1 ran inline; its code moved to validation/programs/step_kernels.py
# in session 36 (same code; run once on an H200 then: the same kernel names).
set -uo pipefail
STAGE=${1:-all}
case "$STAGE" in measure|sweep|all) ;; *) echo "usage: $0 [measure|sweep|all]" >&2; exit 2;; esac
: "${OUT:?run on the device machine (OUT is its output folder)}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
W=/tmp/blind35; rm -rf "$W"; mkdir -p "$W"
source validation/device/environment.sh
pack() { tar czf "$OUT/blind35.tar.gz" -C /tmp blind35; }
if [ "$STAGE" != sweep ]; then
record_environment "$W/environment.txt"
python3 validation/programs/step_kernels.py gpt-ln validation/programs/gpt-ln-h3072.json --shape 2x2048 \
  > "$W/attention-kernels.txt" 2>&1
measure_gpt_ln 300 gpt-ln-h3072:validation/programs/gpt-ln-h3072.json:4x2048,2x8192,8x1024 \
  gpt-ln-h4096:validation/programs/gpt-ln-h4096.json:2x4096,16x1024 \
  gpt-ln:validation/programs/gpt-ln-0.5b.json:6x4096,24x1024 \
  gpt-ln-h20:validation/programs/gpt-ln-0.5b-h20.json:8x2048,4x4096
fi
if [ "$STAGE" != measure ]; then
record_environment "$W/environment-sweep.txt"
(cd validation/clocks && timeout 420 python3 power_sweep.py "$W/sweep-extended.json" --seconds 3 --extended \
   > "$W/sweep.log" 2>&1; echo "sweep exit $?" >> "$W/sweep.log")
fi
pack
cat "$W/attention-kernels.txt" "$W"/sweep.log 2>/dev/null | tail -n 20; tail -n 2 "$W"/measured-*.log 2>/dev/null
