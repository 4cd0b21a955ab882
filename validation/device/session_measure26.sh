#!/usr/bin/env bash
# Session 26, second call (one nvidia-h200, about 6 minutes): the blind check of validation/session26/README.md. The
# first call's output (traces26.tar.gz) unpacked into build-lease/traces26 and carried with build-lease/devbin.txz;
# `tar xJf build-lease/devbin.txz && bash validation/device/session_measure26.sh`. In this order, on one lease:
#  1. the host-bound timing the import needs (1x32, the primary, and 1x256; median of 5 processes of 20 steps) of the
#     traced program (hf-qwen3-moe with the traced model);
#  2. the PREDICTIONS of blind9.py set q26 by devbin/scalescope (built from the commit in devbin/COMMIT) from the
#     first call's trace and calibration and that timing, written and packed before anything below runs;
#  3. every shape of the set measured (median of 3 processes of 10 timed steps), then the report.
# Everything lands in $OUT/measure26.tar.gz, repacked after every step. BLIND9_SET=m26 HOST_SHAPES=1x32 (the second
# check, after the memory fix) writes $OUT/measure26-m26.tar.gz instead.
set -uo pipefail
: "${OUT:?run on the device machine (OUT is its output folder)}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
S=build-lease/traces26
[ -s $S/h200-gpu.json ] && [ -s $S/h200-attention.json ] || { echo "$0: no $S (the first call's output)" >&2; exit 2; }
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in
  *H200*) ;;
  *) echo "$0: GPU 0 is not an H200: not measuring" >&2; exit 4 ;;
esac
SET=${BLIND9_SET:-q26}; HS=${HOST_SHAPES:-1x32,1x256}
D=/tmp/measure26; rm -rf $D; mkdir -p $D
source validation/device/guard.sh
source validation/device/environment.sh
record_environment $D/environment.txt
python3 -c "import transformers; print('transformers', transformers.__version__)" >> $D/environment.txt 2>&1
LOG=$D/session.log
pack() { tar czf $OUT/measure26${BLIND9_SET:+-$SET}.tar.gz -C $D . ; }
stamp() { echo "== $(date -u +%T) $*" | tee -a $LOG; }
RS="python3 validation/programs/run_steps.py measure"
B9="python3 validation/programs/blind9.py"
stamp "1. host-bound timing ($HS, 5 processes)"
timeout 240 $RS --program hf-qwen3-moe --model validation/programs/hf-qwen3-30b-a3b-l8/config.json --shapes $HS \
  --steps 20 --processes 5 --out $D/host-hf-qwen3-moe.json >> $LOG 2>&1; echo "host exit $?" | tee -a $LOG
pack
stamp "2. predictions (before any measured shape)"
SCALESCOPE_COMMIT=$(cat devbin/COMMIT) timeout 150 $B9 predict --gpu h200 --scalescope devbin/scalescope \
  --host-dir $D --set $SET --host-shapes $HS --session-dir $S --work $D/stacks -o $D/predictions.json >> $LOG 2>&1
echo "predict exit $?" | tee -a $LOG; pack
[ -s $D/predictions.json ] || { echo "no predictions: not measuring" | tee -a $LOG; tail -30 $LOG; exit 1; }
stamp "3. measurements (3 processes per shape)"
$B9 programs $SET | while read -r key program model; do
  timeout 300 $RS --program $program --model $model --shapes $($B9 shapes $SET $key) --steps 10 --processes 3 \
    --out $D/measured-$key.json >> $LOG 2>&1; echo "$key exit $?" | tee -a $LOG; pack
done
$B9 report --predictions $D/predictions.json --measured-dir $D -o $D/report.md >> $LOG 2>&1; pack
stamp "done"; tail -40 $D/report.md; tail -5 $LOG
