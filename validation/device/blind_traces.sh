#!/usr/bin/env bash
# First call of a blind check of the trace import (one nvidia-h200, about 4 minutes): the lease's one-GPU calibration
# at the programs' shapes (GEMMs of devbin/shapes.json, attention with flash and cuDNN) and ONE profiler trace of each
# program at one shape.
#   bash validation/device/blind_traces.sh SESSION PROGRAM:MODEL:MBSxSEQ ...
# (the session scripts, e.g. session_traces26.sh, name theirs). Carry build-lease/devbin.txz (scalescope-calibrate,
# shapes.json) and begin the command with `tar xJf build-lease/devbin.txz && `; everything lands in
# $OUT/tracesSESSION.tar.gz (h200-gpu.json, h200-attention.json, traces/), repacked after every step.
set -uo pipefail
: "${OUT:?run on the device machine (OUT is its output folder)}"
[ $# -ge 2 ] || { echo "usage: $0 SESSION PROGRAM:MODEL:MBSxSEQ ..." >&2; exit 2; }
SESSION=$1; shift
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
export SCALESCOPE_CALIBRATE_BIN=devbin/scalescope-calibrate
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in
  *H200*) ;;
  *) echo "$0: GPU 0 is not an H200: not measuring" >&2; exit 4 ;;
esac
D=/tmp/traces$SESSION; rm -rf $D; mkdir -p $D/traces
source validation/device/guard.sh
source validation/device/environment.sh
record_environment $D/environment.txt
python3 -c "import transformers; print('transformers', transformers.__version__)" >> $D/environment.txt 2>&1
LOG=$D/session.log
pack() { tar czf $OUT/traces$SESSION.tar.gz -C $D . ; }
stamp() { echo "== $(date -u +%T) $*" | tee -a $LOG; }
T0=$(date +%s)
stamp "calibration (topo, mem, gemm: bf16 grid plus the programs' shapes)"
timeout 200 bash calibrate/gpu/run_on_device.sh $D/h200-gpu.json 170 --gpus 1 --sections topo,mem,gemm \
  --gemm-dtypes bf16 --gemm-shapes devbin/shapes.json >> $LOG 2>&1
echo "calibrate exit $? after $(( $(date +%s) - T0 )) s" | tee -a $LOG; pack
stamp "attention at the programs' shapes (flash, cudnn)"
timeout 150 python3 validation/attention/measure_attention.py $D/h200-attention.json --shapes devbin/shapes.json \
  --backend flash,cudnn >> $LOG 2>&1
echo "attention exit $? after $(( $(date +%s) - T0 )) s" | tee -a $LOG; pack
for spec in "$@"; do
  IFS=: read -r program model shape <<< "$spec"
  stamp "trace $program $shape"
  timeout 180 python3 validation/programs/run_steps.py trace --out $D/traces --smi --program $program --model $model \
    --mbs ${shape%x*} --seq ${shape#*x} --name $program-mbs${shape%x*}-seq${shape#*x} >> $LOG 2>&1
  echo "exit $?" | tee -a $LOG; pack
done
stamp "done after $(( $(date +%s) - T0 )) s"; pack
tail -25 $LOG; ls -la $D $D/traces
