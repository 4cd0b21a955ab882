#!/usr/bin/env bash
# Session 30, the spread of Megatron-Core's host time per layer from process to process (one nvidia-h200, about 5
# minutes): validation/megatron/mcore_moe_host.py --no-busy, the dense and the MoE (GroupedMLP) Qwen3-30B-A3B layer,
# REPEATS processes each, one after another. Megatron-Core 0.16.1 unpacked into build-lease/mcore and carried; run
# `bash validation/device/session30_samples.sh`: $OUT/samples30.tar.gz.
set -uo pipefail
source validation/device/environment.sh
mcore_session samples30
for i in $(seq 1 ${REPEATS:-6}); do
  for v in dense moe-grouped; do
    echo "== $(date -u +%T) $v process $i" | tee -a $LOG
    timeout 100 python3 validation/megatron/mcore_moe_host.py --variant $v --no-busy --out $D/$v-$i.json >> $D/$v-$i.log 2>&1
    echo "$v $i exit $?" | tee -a $LOG
  done
  pack
done
for f in $D/*.json; do
  python3 -c "import json; d=json.load(open('$f')); print('$(basename $f .json)', {k: round(v*1e3,3) for k,v in d['host_per_layer_s'].items()})" | tee -a $LOG
done
pack
