#!/usr/bin/env bash
# Session 37, one H100 (nvidia-h100-x1), one call (about 8 minutes): the H100's own power cap, measured and checked
# blind (validation/session37/README.md). Carry build-lease/devbin.txz (scalescope of the commit the predictions
# script is at) and run `tar xJf build-lease/devbin.txz && bash validation/device/session37_h100.sh`.
#  1. the GPU's limits; power_sweep.py --extended (docs/power.md; about 4 minutes);
#  2. on the lease, by the committed code: `scalescope calibrate import-power` of that sweep into
#     build-lease/h100-power-s37.json, then validation/session37/predict_power.py's predictions, BEFORE any step;
#  3. the four gpt-ln programs at eight shapes never timed, 3 warm-up and 40 timed steps each, nvidia-smi beside;
#  4. development data, after the check: FP8 GEMMs with fast and split accumulation at the NeMo rows' shapes
#     (validation/session32/fp8_accum.py), and power_mix.py's FP8 and bf16 mixes (checks of the fit, never fitted).
# The tar is rewritten after every part, so a call cut short still returns what ran. (Its set-up moved into
# environment.sh's measure_session after call 1 ran, the same steps.)
set -uo pipefail
[ -x devbin/scalescope ] || { echo "$0: no devbin/scalescope (tar xJf build-lease/devbin.txz first)" >&2; exit 2; }
export SCALESCOPE_DATA_DIR=$PWD  # profiles, topologies and catalog of this checkout for devbin/scalescope
source validation/device/environment.sh
measure_session h100s37  # W=/tmp/h100s37, pack()
cp devbin/COMMIT "$W/devbin-commit.txt"
q=index,name,clocks.max.sm,clocks.max.mem,power.limit,power.default_limit,power.max_limit,memory.total,vbios_version
nvidia-smi --query-gpu=$q --format=csv > "$W/limits.csv" 2>&1
nvidia-smi -q -d POWER,CLOCK,PERFORMANCE > "$W/smi-q.txt" 2>&1
# 1. the sweep
(cd validation/clocks && timeout 360 python3 power_sweep.py "$W/sweep-extended.json" --seconds 3 --extended \
   > "$W/sweep.log" 2>&1; echo "sweep exit $?" >> "$W/sweep.log")
pack
# 2. the fit and the predictions, before any step
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
mkdir -p build-lease
python3 - "$gpu" > build-lease/h100-power-s37.json <<'PY'
import datetime, json, sys
print(json.dumps({"schema": "scalescope.calibration/1", "provenance": "measured",
                  "created_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                  "gpus": [{"index": 0, "name": sys.argv[1]}]}, indent=1))
PY
devbin/scalescope calibrate import-power "$W/sweep-extended.json" --into build-lease/h100-power-s37.json \
  > "$W/import-power.txt" 2>&1; echo "import-power exit $?" >> "$W/import-power.txt"
cp build-lease/h100-power-s37.json "$W/h100-power-s37.json"
timeout 120 python3 validation/session37/predict_power.py devbin/scalescope -o "$W/predictions.json" \
  > "$W/predict.log" 2>&1; echo "predict exit $?" >> "$W/predict.log"
pack
# 3. the steps
python3 validation/programs/step_kernels.py gpt-ln validation/programs/gpt-ln-h3072.json --shape 2x2048 \
  > "$W/attention-kernels.txt" 2>&1
measure_gpt_ln 200 gpt-ln-h3072:validation/programs/gpt-ln-h3072.json:3x4096,12x1024 \
  gpt-ln-h4096:validation/programs/gpt-ln-h4096.json:6x2048,3x4096 \
  gpt-ln:validation/programs/gpt-ln-0.5b.json:12x2048,3x8192 \
  gpt-ln-h20:validation/programs/gpt-ln-0.5b-h20.json:6x4096,24x1024
# 4. development data
timeout 90 python3 validation/session32/fp8_accum.py "$W/fp8_accum-h100.json" > "$W/fp8_accum.log" 2>&1
echo "fp8_accum exit $?" >> "$W/fp8_accum.log"
pack
(cd validation/clocks && for dt in fp8 bf16; do
   timeout 75 python3 power_mix.py "$W/mix-$dt.json" --seconds 4 --gemm 8192x4096x16384 --dtype $dt \
     > "$W/mix-$dt.log" 2>&1
   echo "mix $dt exit $?" >> "$W/mix-$dt.log"
 done)
pack
cat "$W/limits.csv" "$W/import-power.txt" "$W/attention-kernels.txt" 2>/dev/null | head -n 40
tail -n 2 "$W"/predict.log "$W"/measured-*.log "$W"/fp8_accum.log "$W"/mix-*.log 2>/dev/null
