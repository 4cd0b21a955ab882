#!/usr/bin/env bash
# Session 24, one H200, one call (about 5 minutes): the measurements of the second blind check (validation/session24,
# "Second check"): blind9.py set s25, each shape the median of 3 processes of 10 timed steps, after the predictions
# (validation/session24/blind19-h200-s25/predictions.json) were committed; this script refuses to run without them.
set -uo pipefail
: "${OUT:?run on the device machine (OUT is its output folder)}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
P=validation/session24/blind19-h200-s25/predictions.json
[ -s $P ] || { echo "$0: no $P: the predictions come first" >&2; exit 1; }
D=/tmp/blind25; rm -rf $D; mkdir -p $D
source validation/device/guard.sh
source validation/device/environment.sh
record_environment $D/environment.txt
cp $P $D/
pack() { tar czf $OUT/blind25.tar.gz -C /tmp blind25 ; }
RS="python3 validation/programs/run_steps.py measure --steps 10 --processes 3"
timeout 270 $RS --program gpt-ln --model validation/programs/gpt-ln-0.5b.json \
  --shapes $(python3 validation/programs/blind9.py shapes s25 gpt-ln) --out $D/measured-gpt-ln.json >> $D/log.txt 2>&1
echo "gpt-ln exit $?" >> $D/log.txt; pack
timeout 300 $RS --program hf-llama --model validation/programs/hf-llama-0.9b/config.json \
  --shapes $(python3 validation/programs/blind9.py shapes s25 hf-llama) --out $D/measured-hf-llama.json >> $D/log.txt 2>&1
echo "hf-llama exit $?" >> $D/log.txt; pack
python3 validation/session24/nearest_trace.py report --dir $D | tail -5
