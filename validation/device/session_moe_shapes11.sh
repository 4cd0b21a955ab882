#!/usr/bin/env bash
# Device session 11, third call (nvidia-h100-x1): the H100's GEMM rates at the shapes of the MoE models NVIDIA's
# Megatron-Bridge tables train (routers, one routed expert at its tokens per expert for ep 8-64, shared experts, the
# attention and dense linears at tp 1 and 2), bf16 and fp8, so that `validate nemo` prices the MoE rows from measured
# rates instead of the dense profile's extrapolation (docs/moe.md). Needs devbin/ (carried): scalescope and
# scalescope-calibrate of one commit.
#   bash validation/device/session_moe_shapes11.sh
# Everything lands in $OUT/moe-shapes11.tar.gz (the profile directory, the log, the environment).
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export SCALESCOPE_DATA_DIR=$PWD
REPO=$PWD
source validation/device/guard.sh
W=/tmp/moe-shapes11; rm -rf $W; mkdir -p $W; cd $W
LOG=$W/session.log
device_environment $W/environment.txt
echo "devbin commit $(cat $REPO/devbin/COMMIT)" >> $W/environment.txt
export PATH=$REPO/devbin:$PATH
SP=$(python3 -c 'import site;print(site.getsitepackages()[0])')
export LD_LIBRARY_PATH="$(find "$SP/nvidia" -name lib -type d | sort | tr '\n' :)${LD_LIBRARY_PATH:-}"
pack() { tar czf $OUT/moe-shapes11.tar.gz -C $W . ; }
echo "== $(date -u +%T) calibrate run" | tee -a $LOG
t0=$(date +%s)
timeout 420 scalescope calibrate run --model qwen3-30b-a3b --model qwen3-235b-a22b --model deepseek-v3 \
  --model mixtral-8x7b --mbs 1,2 --tp 1,2 --ep 8,16,32,64 --dtypes bf16,fp8_e4m3 -o h100-moe \
  --time-budget-s 360 >> $LOG 2>&1
echo "calibrate run exit $? after $(( $(date +%s) - t0 )) s" | tee -a $LOG
ls -la $W/h100-moe >> $LOG 2>&1
pack
