#!/usr/bin/env bash
# Session 34, one H200, call 2 (about 4 minutes): the power-cap model's blind check (validation/session34/
# predict_power.py; predictions committed in validation/session34/predictions.json before this runs). Each program at
# its shapes, 3 warm-up then 40 timed steps back to back, with nvidia-smi beside them (run_steps.py --smi).
set -uo pipefail
: "${OUT:?run on the device machine (OUT is its output folder)}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
W=/tmp/blind34; rm -rf "$W"; mkdir -p "$W"
source validation/device/environment.sh
record_environment "$W/environment.txt"
python3 -c "import transformers; print('transformers', transformers.__version__)" >> "$W/environment.txt" 2>&1
for p in gpt-ln:validation/programs/gpt-ln-0.5b.json:4x4096,16x2048:gpt-ln \
         gpt-ln:validation/programs/gpt-ln-h4096.json:4x2048,8x2048:gpt-ln-h4096 \
         hf-llama:validation/programs/hf-llama-0.9b/config.json:8x2048,2x4096:hf-llama; do
  IFS=: read -r prog model shapes name <<< "$p"
  timeout 240 python3 validation/programs/run_steps.py measure --program $prog --model $model --shapes $shapes \
    --steps 40 --smi --out "$W/measured-$name.json" > "$W/measured-$name.log" 2>&1
  echo "measure exit $?" >> "$W/measured-$name.log"
done
tar czf "$OUT/blind34.tar.gz" -C /tmp blind34
tail -2 "$W"/measured-*.log
