#!/usr/bin/env bash
# Session 29, blind check 4 of validation/megatron/mcore_blind.py on one nvidia-h200 (Megatron-Core 0.16.1 unpacked
# from its PyPI wheel into build-lease/mcore and carried): every shape measured in a process of its own, so no shape
# holds the GlobalMemoryBuffer a longer one left (validation/session29/README.md), after the predictions are committed:
#   SHAPES=A,B,... bash validation/device/session29_memory_blind.sh      ->  $OUT/mcore-measured29.tar.gz
set -uo pipefail
: "${OUT:?run on the device machine (OUT is its output folder)}"
: "${SHAPES:?the shapes to measure, MBSxSEQ[@LAYERS] comma-separated}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
[ -d build-lease/mcore/megatron/core ] || { echo "$0: no build-lease/mcore (megatron-core unpacked)" >&2; exit 2; }
export PYTHONPATH=$PWD/build-lease/mcore:$PWD/validation/megatron/shim${PYTHONPATH:+:$PYTHONPATH}
D=/tmp/mcore29; rm -rf $D; mkdir -p $D
source validation/device/environment.sh
record_environment $D/environment.txt
pack() { tar czf $OUT/mcore-measured29.tar.gz -C $D . ; }
for v in dense moe-grouped; do
  for sh in ${SHAPES//,/ }; do
    mkdir -p $D/one/$v-$sh
    echo "== $(date -u +%T) $v $sh" | tee -a $D/session.log
    timeout 120 python3 validation/megatron/mcore_blind.py measure --variant $v --shapes $sh --out $D/one/$v-$sh \
      >> $D/$v.log 2>&1
    echo "$v $sh exit $?" | tee -a $D/session.log
  done
  # One measured-<variant>.json of every shape, in the order given (as `measure` writes it).
  python3 - "$D" "$v" "$SHAPES" <<'PY'
import json, os, sys
d, v, shapes = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
rows, torch = [], None
for sh in shapes:
    f = os.path.join(d, "one", f"{v}-{sh}", f"measured-{v}.json")
    if os.path.exists(f):
        doc = json.load(open(f))
        rows += doc["rows"]
        torch = doc["torch"]
json.dump({"variant": v, "rows": rows, "torch": torch, "one_process_per_shape": True},
          open(os.path.join(d, f"measured-{v}.json"), "w"), indent=1)
PY
  pack
done
