#!/usr/bin/env bash
# Session 28, last call (one nvidia-h200, about 2 minutes): the traces of the two blind checks that failed, taken again
# at shapes where no size coincides with another (validation/session28/README.md, "Degenerate trace shapes"):
# Megatron-Core's dense and MoE programs at 2x2560 (their first traces at 1x4096 had T = s) and hf-olmo2 at 2x1536
# (its first at 2x1024 had T = hidden = 2048). Carry build-lease/mcore; run
# `bash validation/device/session_retrace28.sh`: $OUT/retrace28.tar.gz.
set -uo pipefail
: "${OUT:?run on the device machine (OUT is its output folder)}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
D=/tmp/retrace28; rm -rf $D; mkdir -p $D/mcore $D/traces
source validation/device/environment.sh
record_environment $D/environment.txt
pack() { tar czf $OUT/retrace28.tar.gz -C $D . ; }
for v in dense moe-grouped; do
  echo "== $(date -u +%T) mcore $v 2x2560" | tee -a $D/session.log
  PYTHONPATH=$PWD/build-lease/mcore:$PWD/validation/megatron/shim timeout 200 python3 validation/megatron/mcore_blind.py \
    trace --variant $v --shape 2x2560 --out $D/mcore >> $D/mcore-$v.log 2>&1
  echo "$v exit $?" | tee -a $D/session.log; pack
done
echo "== $(date -u +%T) hf-olmo2 2x1536" | tee -a $D/session.log
timeout 180 python3 validation/programs/run_steps.py trace --out $D/traces --smi --program hf-olmo2 \
  --model validation/programs/hf-olmo2-0425-1b/config.json --mbs 2 --seq 1536 --name hf-olmo2-mbs2-seq1536 >> $D/olmo2.log 2>&1
echo "olmo2 exit $?" | tee -a $D/session.log; pack
ls -la $D $D/mcore $D/traces
