#!/usr/bin/env bash
# Second call of a blind check of the trace import (one nvidia-h200): the first call's output (tracesSESSION.tar.gz of
# blind_traces.sh) unpacked into build-lease/tracesSESSION and carried with build-lease/devbin.txz;
#   BLIND9_SET=SET [HOST_SHAPES=1x32,1x256] bash validation/device/blind_measure.sh SESSION
# (the session scripts, e.g. session_measure26.sh, set theirs), after `tar xJf build-lease/devbin.txz && `. In this
# order, on one lease:
#  1. the host-bound timing the import needs (the first of HOST_SHAPES is the primary; median of 5 processes of 20
#     steps) of every traced program of the set (blind9.py programs SET --traced);
#  2. the PREDICTIONS of blind9.py set SET by devbin/scalescope (built from the commit in devbin/COMMIT) from the
#     first call's traces and calibration and that timing, written and packed before anything below runs (with the
#     control of --memory-scaling sweep beside them, from session 26);
#  3. every shape of the set measured (median of 3 processes of 10 timed steps), then the report.
# Everything lands in $OUT/measureSESSION-SET.tar.gz, repacked after every step.
set -uo pipefail
: "${OUT:?run on the device machine (OUT is its output folder)}"
: "${BLIND9_SET:?name the shape set (blind9.py SHAPE_SETS)}"
[ $# -eq 1 ] || { echo "usage: BLIND9_SET=SET $0 SESSION" >&2; exit 2; }
SESSION=$1; SET=$BLIND9_SET; HS=${HOST_SHAPES:-1x32,1x256}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
S=build-lease/traces$SESSION
[ -s $S/h200-gpu.json ] && [ -s $S/h200-attention.json ] || { echo "$0: no $S (the first call's output)" >&2; exit 2; }
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in
  *H200*) ;;
  *) echo "$0: GPU 0 is not an H200: not measuring" >&2; exit 4 ;;
esac
D=/tmp/measure$SESSION; rm -rf $D; mkdir -p $D
source validation/device/guard.sh
source validation/device/environment.sh
record_environment $D/environment.txt
python3 -c "import transformers; print('transformers', transformers.__version__)" >> $D/environment.txt 2>&1
LOG=$D/session.log
pack() { tar czf $OUT/measure$SESSION-$SET.tar.gz -C $D . ; }
stamp() { echo "== $(date -u +%T) $*" | tee -a $LOG; }
RS="python3 validation/programs/run_steps.py measure"
B9="python3 validation/programs/blind9.py"
stamp "1. host-bound timing ($HS, 5 processes)"
$B9 programs $SET --traced | while read -r key program model; do
  timeout 240 $RS --program $program --model $model --shapes $HS --steps 20 --processes 5 \
    --out $D/host-$key.json >> $LOG 2>&1; echo "$key host exit $?" | tee -a $LOG
done
pack
stamp "2. predictions (before any measured shape)"
SCALESCOPE_COMMIT=$(cat devbin/COMMIT) timeout 150 $B9 predict --gpu h200 --scalescope devbin/scalescope \
  --host-dir $D --set $SET --host-shapes $HS --session-dir $S --work $D/stacks --memory-scaling-control \
  -o $D/predictions.json >> $LOG 2>&1
echo "predict exit $?" | tee -a $LOG; pack
[ -s $D/predictions.json ] || { echo "no predictions: not measuring" | tee -a $LOG; tail -30 $LOG; exit 1; }
stamp "3. measurements (3 processes per shape)"
$B9 programs $SET | while read -r key program model; do
  timeout 300 $RS --program $program --model $model --shapes $($B9 shapes $SET $key) --steps 10 --processes 3 \
    --out $D/measured-$key.json >> $LOG 2>&1; echo "$key exit $?" | tee -a $LOG; pack
done
$B9 report --predictions $D/predictions.json --measured-dir $D -o $D/report.md >> $LOG 2>&1; pack
stamp "done"; tail -40 $D/report.md; tail -5 $LOG
