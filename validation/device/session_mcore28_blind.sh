#!/usr/bin/env bash
# Session 28, the blind check of validation/megatron/mcore_blind.py on one nvidia-h200 (Megatron-Core 0.16.1
# unpacked from its PyPI wheel into build-lease/mcore and carried):
#   bash validation/device/session_mcore28_blind.sh trace     the traces, host-bound and trace-shape step times of
#                                                             the dense and MoE variants: $OUT/mcore-traces28.tar.gz
#   bash validation/device/session_mcore28_blind.sh measure   every shape, after the predictions are committed:
#                                                             $OUT/mcore-measured28.tar.gz (SHAPES=A,B,...: those)
set -uo pipefail
: "${OUT:?run on the device machine (OUT is its output folder)}"
MODE=${1:?trace or measure}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
[ -d build-lease/mcore/megatron/core ] || { echo "$0: no build-lease/mcore (megatron-core unpacked)" >&2; exit 2; }
export PYTHONPATH=$PWD/build-lease/mcore:$PWD/validation/megatron/shim${PYTHONPATH:+:$PYTHONPATH}
D=/tmp/mcore28-$MODE; rm -rf $D; mkdir -p $D
source validation/device/environment.sh
record_environment $D/environment.txt
case $MODE in trace) NAME=mcore-traces28 ;; measure) NAME=mcore-measured28 ;; *) echo "$0: trace or measure" >&2; exit 2 ;; esac
pack() { tar czf $OUT/$NAME.tar.gz -C $D . ; }
for v in dense moe-grouped; do
  echo "== $(date -u +%T) $MODE $v" | tee -a $D/session.log
  extra=(); [ $MODE = measure ] && [ -n "${SHAPES:-}" ] && extra=(--shapes "$SHAPES")
  timeout 280 python3 validation/megatron/mcore_blind.py $MODE --variant $v --out $D "${extra[@]}" >> $D/$v.log 2>&1
  echo "$v exit $?" | tee -a $D/session.log; tail -3 $D/$v.log; pack
done
