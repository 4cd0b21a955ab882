#!/usr/bin/env bash
# Session 30, Megatron-Core's host time per layer at other models' layers (one nvidia-h200, about 6 minutes):
# validation/megatron/mcore_moe_host.py --no-busy for each variant below, one process each (predictions:
# validation/session30/host-predictions.json, committed before this ran). Megatron-Core 0.16.1 unpacked into
# build-lease/mcore and carried; run `bash validation/device/session30_host.sh`: $OUT/host30.tar.gz.
set -uo pipefail
source validation/device/environment.sh
mcore_session host30
# name variant dims (the same names as the predictions)
VARIANTS=(
  "dense-qwen3 dense -"
  "moe16-qwen3 moe-grouped -"
  "moe8-qwen3 moe-grouped experts=8"
  "moe4-qwen3-235b moe-grouped hidden=4096,heads=64,groups=4,moe_ffn=1536,experts=4,topk=4"
  "moe16-gptoss moe-grouped hidden=2880,heads=64,groups=8,kv_channels=64,moe_ffn=2880,experts=16,topk=4"
  "dense-llama2-7b dense hidden=4096,heads=32,groups=32,ffn=11008"
  "dense-llama3-70b-tp4 dense hidden=8192,heads=16,groups=2,ffn=7168"
  "dense-qwen3-again dense -"
)
for line in "${VARIANTS[@]}"; do
  read -r name variant dims <<< "$line"
  [ "$dims" = "-" ] && dims=""
  echo "== $(date -u +%T) $name $variant $dims" | tee -a $LOG
  TORCH_COMPILE_DISABLE=${TORCH_COMPILE_DISABLE:-0} timeout 120 python3 validation/megatron/mcore_moe_host.py \
    --variant $variant --dims "$dims" --no-busy --out $D/$name.json >> $D/$name.log 2>&1
  rc=$?
  echo "$name exit $rc" | tee -a $LOG
  [ $rc -ne 0 ] && tail -20 $D/$name.log | tee -a $LOG
  pack
done
for f in $D/*.json; do
  python3 -c "import json; d=json.load(open('$f')); print('$(basename $f .json)', {k: round(v*1e3,3) for k,v in d['host_per_layer_s'].items()})" | tee -a $LOG
done
pack
