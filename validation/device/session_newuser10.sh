#!/usr/bin/env bash
# Device session 10 (nvidia-h100-x1): the new user's path on a GPU type from an empty directory, timed, as
# docs/calibration.md tells it: one command calibrates the GPU at the shapes of the user's model, and the next
# simulates with that calibration. Needs devbin/ (carried): scalescope (stripped) and scalescope-calibrate next to it.
#   bash validation/device/session_newuser10.sh
# Everything lands in $OUT/newuser10.tar.gz (the directory the user worked in, every command's output and time).
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export SCALESCOPE_DATA_DIR=$PWD  # the built-in files (topologies, catalog, attention script) of this checkout
REPO=$PWD
source validation/device/guard.sh
W=/tmp/newuser; rm -rf $W; mkdir -p $W; cd $W
LOG=$W/session.log
device_environment $W/environment.txt
export PATH=$REPO/devbin:$PATH
# This machine has CUDA, cuBLAS and NCCL only as PyTorch's pip wheels (a user's machine has them installed).
SP=$(python3 -c 'import site;print(site.getsitepackages()[0])')
export LD_LIBRARY_PATH="$(find "$SP/nvidia" -name lib -type d | sort | tr '\n' :)${LD_LIBRARY_PATH:-}"
pack() { tar czf $OUT/newuser10.tar.gz -C $W . ; }
step() {  # step NAME COMMAND...: runs it, records its time and exit status
  local name=$1; shift
  echo "== $(date -u +%T) $name: $*" | tee -a $LOG
  local t0=$(date +%s%N)
  "$@" > $W/$name.out 2> >(tee -a $LOG >&2)
  local rc=$?
  printf '%s exit %d after %.1f s\n' "$name" $rc "$(( ($(date +%s%N) - t0) / 1000000 ))e-3" | tee -a $LOG $W/times.txt
  pack
}
cp $REPO/validation/programs/hf-llama-0.9b/config.json $W/config.json
step calibrate scalescope calibrate run --model config.json --mbs 1,2,4 --seq 256,1024,2048 -o h100 \
  --time-budget-s 150
ls -la $W/h100 >> $LOG
# The user's own framework: one profiler trace of their program at one shape, imported as a stack profile.
step trace python3 $REPO/validation/programs/run_steps.py trace --program hf-llama --model config.json --mbs 2 \
  --seq 1024 --out $W/trace --name hf-llama-2x1024
# The profiler slows the host 1.2-3.3x: one unprofiled host-bound step (1x32) tells the importer by how much.
step host python3 $REPO/validation/programs/run_steps.py measure --program hf-llama --model config.json \
  --shapes 1x32 --steps 10 --out $W/host.json
HOST=$(python3 -c "import json;print(json.load(open('$W/host.json'))['rows'][0]['step_time_s'])")
STEP=$(python3 -c "import json;print(json.load(open('$W/trace/hf-llama-2x1024.meta.json'))['unprofiled']['step_time_s'])")
step import scalescope import torch-trace trace/hf-llama-2x1024.json.gz --model config.json --micro-batch 2 \
  --seq 1024 --host-step-time $HOST --host-shape 1x32 --step-time $STEP -o my-stack.json
for shape in 1x256 2x1024; do
  b=${shape%x*}; s=${shape#*x}; PLAN=tp=1,pp=1,dp=1,mbs=$b,gbs=$b,seq=$s
  for fw in my-stack.json pytorch-eager; do
    tag=$(basename $fw .json)
    step simulate-$tag-$shape scalescope simulate --model config.json --cluster dgx-h100-8 --gpus 1 --plan $PLAN \
      --calibration h100 --framework $fw --format json
  done
  step simulate-datasheet-$shape scalescope simulate --model config.json --cluster dgx-h100-8 --gpus 1 \
    --plan $PLAN --calibration none --framework my-stack.json --format json
done
# The program's measured steps at those shapes (validation/programs, the blind check's runner), for the record.
step measure python3 $REPO/validation/programs/run_steps.py measure --program hf-llama --model config.json \
  --shapes 1x256,2x1024 --steps 10 --out $W/measured.json
echo "== done $(date -u +%T)" | tee -a $LOG; uptime >> $LOG; pack
ls -la $W $OUT
