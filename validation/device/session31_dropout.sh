#!/usr/bin/env bash
# Session 31, one H200, one call (a few minutes): transformers' GPT-2 trained with and without dropout at two shapes
# (validation/dropout/README.md; the predictions were committed before the call: validation/dropout/predictions.json).
set -uo pipefail
: "${OUT:?run on the device machine (OUT is its output folder)}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
W=/tmp/dropout31; rm -rf "$W"; mkdir -p "$W"
source validation/device/environment.sh
record_environment "$W/environment.txt"
python3 -c "import transformers; print('transformers', transformers.__version__)" >> "$W/environment.txt" 2>&1
args=()
for f in validation/dropout/configs/*.json; do n=$(basename "$f" .json); args+=(--config "$n:$f"); done
python3 validation/dropout/gpt2_dropout.py "$W/measured.json" "${args[@]}" --steps 20 --warmup 5 2> "$W/log.txt"
echo "measure exit $?" >> "$W/log.txt"
# The attention kernels alone at the two shapes, with and without dropout (the kernels' dropout factors at these
# shapes; a diagnostic beside the check, not used by its predictions).
python3 validation/attention/measure_attention.py "$W/attention.json" --shapes validation/dropout/attention_shapes.json \
  --backend flash,cudnn 2>> "$W/log.txt"
echo "attention exit $?" >> "$W/log.txt"
tar czf "$OUT/dropout31.tar.gz" -C /tmp dropout31
tail -8 "$W/log.txt"
