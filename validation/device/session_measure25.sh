#!/usr/bin/env bash
# Session 25, second call (one nvidia-h200, about 7 minutes): the blind check of validation/session25/README.md. The
# first call's output (traces25.tar.gz) unpacked into build-lease/traces25 and carried with build-lease/devbin.txz;
# `tar xJf build-lease/devbin.txz && bash validation/device/session_measure25.sh`. In this order, on one lease:
#  1. the host-bound timing the import needs (1x32, the primary, and 1x256; median of 5 processes of 20 steps);
#  2. the PREDICTIONS of blind9.py set n25 by devbin/scalescope (built from the commit in devbin/COMMIT) from the
#     first call's traces and calibration and that timing, written and packed before anything below runs;
#  3. every shape of the set measured (median of 3 processes of 10 timed steps), then the report.
# Everything lands in $OUT/measure25.tar.gz, repacked after every step. BLIND9_SET=m25 HOST_SHAPES=1x32 (the second
# check: steps of several micro-batches) writes $OUT/measure25-m25.tar.gz instead.
set -uo pipefail
: "${OUT:?run on the device machine (OUT is its output folder)}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
S=build-lease/traces25
[ -s $S/h200-gpu.json ] && [ -s $S/h200-attention.json ] || { echo "$0: no $S (the first call's output)" >&2; exit 2; }
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in
  *H200*) ;;
  *) echo "$0: GPU 0 is not an H200: not measuring" >&2; exit 4 ;;
esac
SET=${BLIND9_SET:-n25}; HS=${HOST_SHAPES:-1x32,1x256}
D=/tmp/measure25; rm -rf $D; mkdir -p $D
source validation/device/guard.sh
source validation/device/environment.sh
record_environment $D/environment.txt
python3 -c "import transformers; print('transformers', transformers.__version__)" >> $D/environment.txt 2>&1
LOG=$D/session.log
pack() { tar czf $OUT/measure25${BLIND9_SET:+-$SET}.tar.gz -C $D . ; }
stamp() { echo "== $(date -u +%T) $*" | tee -a $LOG; }
RS="python3 validation/programs/run_steps.py measure"
declare -A MODEL=([hf-qwen3]=validation/programs/hf-qwen3-0.6b/config.json
                  [hf-neox]=validation/programs/hf-pythia-1b/config.json)
stamp "1. host-bound timing ($HS, 5 processes)"
for p in hf-qwen3 hf-neox; do
  timeout 150 $RS --program $p --model ${MODEL[$p]} --shapes $HS --steps 20 --processes 5 \
    --out $D/host-$p.json >> $LOG 2>&1; echo "$p host exit $?" | tee -a $LOG
done
pack
stamp "2. predictions (before any measured shape)"
SCALESCOPE_COMMIT=$(cat devbin/COMMIT) timeout 120 python3 validation/programs/blind9.py predict --gpu h200 \
  --scalescope devbin/scalescope --host-dir $D --set $SET --host-shapes $HS --session-dir $S --work $D/stacks \
  -o $D/predictions.json >> $LOG 2>&1
echo "predict exit $?" | tee -a $LOG; pack
[ -s $D/predictions.json ] || { echo "no predictions: not measuring" | tee -a $LOG; tail -30 $LOG; exit 1; }
stamp "3. measurements (3 processes per shape)"
for p in hf-qwen3 hf-neox; do
  timeout 250 $RS --program $p --model ${MODEL[$p]} --shapes $(python3 validation/programs/blind9.py shapes $SET $p) \
    --steps 10 --processes 3 --out $D/measured-$p.json >> $LOG 2>&1; echo "$p exit $?" | tee -a $LOG; pack
done
python3 validation/programs/blind9.py report --predictions $D/predictions.json --measured-dir $D -o $D/report.md \
  >> $LOG 2>&1; pack
stamp "done"; tail -40 $D/report.md; tail -5 $LOG
