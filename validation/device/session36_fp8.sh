#!/usr/bin/env bash
# Session 36, one H200, one call (about 3 minutes): the blind check of the power-cap model on FP8 training steps
# (validation/session36/predict_power.py; predictions committed in validation/session36/predictions.json before this
# runs).
#  1. which attention and GEMM kernels gpt-ln-fp8 runs here (torch.profiler over one step of 2 layers);
#  2. gpt-ln-fp8 on three gpt-ln models, and one bf16 shape of session 35 again as this lease's reference: 3 warm-up
#     then 40 timed steps back to back, nvidia-smi beside them (run_steps.py measure --smi).
# The tar is rewritten after every program, so a call cut short still returns what ran. Step 1 ran inline; its code
# moved to validation/programs/step_kernels.py after the call (same code; run once on an H200 since: the same kernel
# names).
set -uo pipefail
: "${OUT:?run on the device machine (OUT is its output folder)}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
W=/tmp/fp8; rm -rf "$W"; mkdir -p "$W"
source validation/device/environment.sh
pack() { tar czf "$OUT/fp8-36.tar.gz" -C /tmp fp8; }
record_environment "$W/environment.txt"
python3 validation/programs/step_kernels.py gpt-ln-fp8 validation/programs/gpt-ln-h3072.json --shape 2x2048 --notes \
  --match cudnn,flash,fmha,sdpa,attention,gemm,sm90,cutlass,nvjet > "$W/kernels.txt" 2>&1
pack
for p in fp8-0.5b:gpt-ln-fp8:validation/programs/gpt-ln-0.5b.json:8x2048,4x4096 \
         fp8-h4096:gpt-ln-fp8:validation/programs/gpt-ln-h4096.json:4x2048,2x4096 \
         fp8-h3072:gpt-ln-fp8:validation/programs/gpt-ln-h3072.json:8x1024,2x8192 \
         bf16-h4096-repeat:gpt-ln:validation/programs/gpt-ln-h4096.json:2x4096; do
  IFS=: read -r name program model shapes <<< "$p"
  timeout 240 python3 validation/programs/run_steps.py measure --program $program --model $model --shapes $shapes \
    --steps 40 --smi --out "$W/measured-$name.json" > "$W/measured-$name.log" 2>&1
  echo "measure exit $?" >> "$W/measured-$name.log"
  pack
done
tail -n 30 "$W/kernels.txt"; tail -n 2 "$W"/measured-*.log
