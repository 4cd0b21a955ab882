#!/usr/bin/env bash
# Device session 9, second call per GPU kind (nvidia-h100-x1 or nvidia-h200): the blind check.
#   bash validation/device/session_measure9.sh TAG        (TAG: h100 or h200)
#   BLIND9_SET=s12 bash validation/device/session_measure9.sh TAG    (session 12: the shapes of blind9.py SHAPES12)
#   BLIND9_SET=s15 bash validation/device/session_measure9.sh TAG    (session 15: SHAPES15; the host-bound timing is
#       the median of 5 processes, at 1x32 (the prediction) and 1x256 (reported beside it))
#   MEASURE_PROCS=3 ... (session 16): each measured shape is the median of 3 processes, not one process's timing
#       (a host-bound step differs 14-28% between processes, session 14: the measurement is as noisy as the input)
#   ATTENTION_MAX_SEQ=4096 ... (session 24): also predict with only the calibration's attention rows of at most 4,096
#       tokens, a control for the long-sequence set s24
#   MEASURE_STEPS=20 ...: timed steps per measured shape (default 10), 20 as the host timing times its shapes
#   BLIND9_SESSION_DIR=DIR ...: predict from the traces and calibration session_traces9.sh wrote on THIS lease (DIR
#       holds TAG-gpu.json, TAG-attention.json, traces/) instead of session 9's (another lease: session 16's H200
#       repeat was 3-10% fast on GPU-bound shapes and could not tell lease speed from model error)
# The next H200 check (prepared in session 16), two calls on one nvidia-h200 lease:
#   1. devbin/shapes.json from `scalescope calibrate shapes --model validation/programs/gpt-ln-0.5b.json --model
#      validation/programs/hf-llama-0.9b/config.json --mbs 1 2 4 8 --seq 128 256 512 768 1024 1536 2048 4096` (the
#      grid of session 9), then `bash validation/device/session_traces9.sh h200` (about 130 s in session 9; the attention now with both
#      backends, flash and cudnn, since the programs run cuDNN attention: validation/session16/README.md);
#   2. its traces9-h200.tar.gz unpacked here into build-lease/traces9 and carried: `BLIND9_SESSION_DIR=
#      build-lease/traces9 MEASURE_PROCS=3 MEASURE_STEPS=20 BLIND9_SET=s17 bash validation/device/session_measure9.sh
#      h200` (about 300 s; DIAG_TRACE=1 adds a profiler trace of each program's largest shape after the
#      measurements, about 60 s, to compare the predicted breakdown with the kernels kernel class by class).
# In this order, on one lease (host speed differs between leases, so the host timing and the measurements share one):
#  1. the one unprofiled host-bound timing each program's import needs (1x32, GPU idle);
#  2. the PREDICTIONS, by the committed code (devbin/scalescope built from the commit recorded in them) from the
#     first call's traces and calibration (validation/session9/TAG/) and that timing: $D/predictions.json is written
#     and packed before anything below runs;
#  3. the measurements of every shape of validation/programs/blind9.py SHAPES (never traced or timed before).
# Everything lands in $OUT/measure9-TAG.tar.gz, repacked after every step.
set -uo pipefail
TAG=${1:?usage: session_measure9.sh TAG}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
SET=${BLIND9_SET:-s9}
# The traces and calibration the predictions use are TAG's (validation/session9/TAG/): refuse a lease whose GPU 0 is
# another type (session 15: an `nvidia-h200` call came as the warm H100 and its results had to be discarded).
GPU0=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$TAG:$GPU0" in
  h100:*H100*|h200:*H200*) ;;
  *) echo "$0: TAG $TAG but GPU 0 is '$GPU0': not measuring" >&2; exit 4 ;;
esac
D=/tmp/measure9; rm -rf $D; mkdir -p $D
source validation/device/guard.sh
LOG=$D/session.log
device_environment $D/environment.txt
git -C . rev-parse HEAD >> $D/environment.txt 2>/dev/null || true
pack() { tar czf $OUT/measure9-$TAG-$SET${MEASURE_PROCS:+-mp$MEASURE_PROCS}.tar.gz -C $D . ; }
stamp() { echo "== $(date -u +%T) $*" | tee -a $LOG; }
RS="python3 validation/programs/run_steps.py measure${RUN_STEPS_SMI:+ --smi}"  # RUN_STEPS_SMI=1: clocks per shape

HOST_SHAPES=1x32; HOST_PROC=""; HT=1
case $SET in s15|s16|s17|s18|s19|s20|s24) HOST_SHAPES=1x32,1x256; HOST_PROC="--processes 5"; HT=2 ;; esac
stamp "1. host-bound timing ($HOST_SHAPES $HOST_PROC)"
timeout $(( 120 * HT )) $RS --program gpt-ln --model validation/programs/gpt-ln-0.5b.json --shapes $HOST_SHAPES \
  --steps 20 $HOST_PROC --out $D/host-gpt-ln.json >> $LOG 2>&1
timeout $(( 150 * HT )) $RS --program hf-llama --model validation/programs/hf-llama-0.9b/config.json \
  --shapes $HOST_SHAPES --steps 20 $HOST_PROC --out $D/host-hf-llama.json >> $LOG 2>&1
pack

stamp "2. predictions (before any measured shape)"
SCALESCOPE_COMMIT=$(cat devbin/COMMIT) timeout 120 python3 validation/programs/blind9.py predict --gpu $TAG --scalescope devbin/scalescope --host-dir $D \
  --set $SET --host-shapes $HOST_SHAPES ${BLIND9_SESSION_DIR:+--session-dir $BLIND9_SESSION_DIR} --work $D/stacks \
  ${ATTENTION_MAX_SEQ:+--attention-max-seq $ATTENTION_MAX_SEQ} \
  -o $D/predictions.json >> $LOG 2>&1
echo "predict exit $?" | tee -a $LOG
pack
[ -s $D/predictions.json ] || { echo "no predictions: not measuring" | tee -a $LOG; exit 1; }

MP=${MEASURE_PROCS:-1}; MARGS="--steps ${MEASURE_STEPS:-10}"; [ $MP -gt 1 ] && MARGS="$MARGS --processes $MP"
stamp "3. measurements ($MP process(es) per shape)"
timeout $(( 200 * MP * ${MEASURE_STEPS:-10} / 10 )) $RS --program gpt-ln --model validation/programs/gpt-ln-0.5b.json \
  --shapes $(python3 validation/programs/blind9.py shapes $SET gpt-ln) \
  $MARGS --out $D/measured-gpt-ln.json >> $LOG 2>&1; pack
timeout $(( 260 * MP * ${MEASURE_STEPS:-10} / 10 )) $RS --program hf-llama --model validation/programs/hf-llama-0.9b/config.json \
  --shapes $(python3 validation/programs/blind9.py shapes $SET hf-llama) \
  $MARGS --out $D/measured-hf-llama.json >> $LOG 2>&1; pack
if [ -n "${DIAG_TRACE:-}" ]; then  # after every measurement: where the GPU-bound error sits, kernel class by class
  for prog in gpt-ln hf-llama; do   # (session 16: GPU-bound shapes 3-11% fast on H200, growing with seq)
    shape=$(python3 validation/programs/blind9.py shapes $SET $prog | tr ',' '\n' | tail -1)
    model=validation/programs/gpt-ln-0.5b.json; [ $prog = hf-llama ] && model=validation/programs/hf-llama-0.9b/config.json
    stamp "diagnostic trace $prog $shape"
    timeout 150 python3 validation/programs/run_steps.py trace --program $prog --model $model --mbs ${shape%x*} \
      --seq ${shape#*x} --out $D/diag-traces --name $prog-mbs${shape%x*}-seq${shape#*x} >> $LOG 2>&1; pack
  done
fi
stamp "done"; uptime >> $LOG; pack
python3 validation/programs/blind9.py report --predictions $D/predictions.json --measured-dir $D | tee -a $LOG
pack; ls -la $D $OUT
