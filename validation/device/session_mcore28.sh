#!/usr/bin/env bash
# Session 28, Megatron-Core host measurement (one nvidia-h200, about 4 minutes): validation/megatron/mcore_moe_host.py
# for the dense, GroupedMLP and SequentialMLP variants of a Qwen3-30B-A3B layer, one process each; a variant that
# fails with torch.compile (Megatron-Core's jit_fuser) runs again with TORCH_COMPILE_DISABLE=1 (recorded in its JSON).
# Megatron-Core 0.16.1 unpacked from its PyPI wheel into build-lease/mcore and carried; run
# `bash validation/device/session_mcore28.sh`: $OUT/mcore28.tar.gz.
set -uo pipefail
: "${OUT:?run on the device machine (OUT is its output folder)}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
[ -d build-lease/mcore/megatron/core ] || { echo "$0: no build-lease/mcore (megatron-core unpacked)" >&2; exit 2; }
D=/tmp/mcore28; rm -rf $D; mkdir -p $D
source validation/device/environment.sh
record_environment $D/environment.txt
LOG=$D/session.log
pack() { tar czf $OUT/mcore28.tar.gz -C $D . ; }
export PYTHONPATH=$PWD/build-lease/mcore:$PWD/validation/megatron/shim${PYTHONPATH:+:$PYTHONPATH}
for v in ${VARIANTS:-dense moe-grouped moe-sequential}; do
  echo "== $(date -u +%T) $v" | tee -a $LOG
  timeout 150 python3 validation/megatron/mcore_moe_host.py --variant $v --out $D/$v.json --trace $D/$v-trace.json.gz \
    >> $D/$v.log 2>&1
  rc=$?
  if [ $rc -ne 0 ]; then
    echo "$v exit $rc; again with TORCH_COMPILE_DISABLE=1" | tee -a $LOG; tail -15 $D/$v.log | tee -a $LOG
    TORCH_COMPILE_DISABLE=1 timeout 150 python3 validation/megatron/mcore_moe_host.py --variant $v --out $D/$v.json \
      --trace $D/$v-trace.json.gz >> $D/$v-nocompile.log 2>&1
    rc=$?
    [ $rc -ne 0 ] && tail -25 $D/$v-nocompile.log | tee -a $LOG
  fi
  echo "$v exit $rc" | tee -a $LOG; pack
done
for v in dense moe-grouped moe-sequential; do
  [ -s $D/$v.json ] && python3 -c "import json,sys; d=json.load(open('$D/$v.json')); print('$v', d['host_per_layer_s'], {k: d['busy'][k] for k in ('step_s','gpu_busy_s','gpu_idle_s','host_syncs_per_layer')})"
done
pack
