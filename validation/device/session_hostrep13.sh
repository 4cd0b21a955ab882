#!/usr/bin/env bash
# Session 13, issue 19: is a host-bound step the same in every process? Session 12's blind check on H100 took
# hf-llama's host-bound timing at 1x32 in one process (0.0980 s) and measured 2x256 and 1x1024 in another (0.081 s:
# predicted +22%). Here 4 processes each time 1x32, 2x256 and 1x1024 (run_steps.py measure, 20 steps, median).
#   bash validation/device/session_hostrep13.sh     (one GPU; $OUT/hostrep13.tar.gz)
set -uo pipefail
export PYTHONUNBUFFERED=1
D=/tmp/hostrep13; rm -rf $D; mkdir -p $D
source validation/device/guard.sh
device_environment $D/environment.txt
for k in 1 2 3 4; do
  echo "== $(date -u +%T) process $k" | tee -a $D/log.txt
  timeout -k 5 40 python3 validation/programs/run_steps.py measure --program hf-llama \
    --model validation/programs/hf-llama-0.9b/config.json --shapes 1x32,2x256,1x1024 --steps 20 \
    --out $D/p$k.json >> $D/log.txt 2>&1
  echo "exit $?" | tee -a $D/log.txt
  tar czf $OUT/hostrep13.tar.gz -C $D . 2>/dev/null
done
python3 - <<'PY'
import json, glob
for f in sorted(glob.glob("/tmp/hostrep13/p*.json")):
    d = json.load(open(f)); print(f, [(r["micro_batch"], r["seq"], round(r["step_time_s"], 4)) for r in d["rows"]])
PY
