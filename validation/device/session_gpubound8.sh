#!/usr/bin/env bash
# Device session 8 (nvidia-h200-x4): where do the GPU-bound runs the model predicts too fast lose their time?
# torch.profiler kernel time by category, per rank, for the main set's largest GPU-bound misses:
#   4 GPUs: TP=4 llama-1b mbs 4 (-11%), TP=2 x DP=2 llama-7b (-12.9%), ZeRO-3 llama-7b (-8.9%);
#   2 GPUs (GPUs 0-1): TP=2 llama-1b mbs 4 (-8%), ZeRO-2 llama-7b (-7.2%);
# plus one kept trace pair (TP=2 llama-1b mbs 4, 2 steps) for per-kernel timing, and a look for an nccl-tests
# binary (issue #3). Results go to $OUT as they are made, so a call cut off at its limit still returns them.
# Usage on the device from the repo root: bash validation/device/session_gpubound8.sh
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
D=/tmp/gpubound8; rm -rf $D; mkdir -p $D/n4 $D/n2 $D/trace  # unpacked into validation/h200-session8/x4/
source validation/device/guard.sh
LOG=$OUT/session.log
device_environment $OUT/environment.txt
{
  echo "== nccl-tests binaries on PATH or disk (issue #3)"
  command -v all_reduce_perf || echo "all_reduce_perf: not on PATH"
  find / -xdev \( -name 'all_reduce_perf*' -o -name 'nccl-tests*' \) 2>/dev/null | head
  python3 -m pip list 2>/dev/null | grep -i -E "nccl|nvidia-" | head -30
} >> $OUT/environment.txt 2>&1
PS="validation/harness/profile_step.py --steps 3 --warmup 3"
step() {  # step NAME TIMEOUT NPROC DEVICES ARGS...
  local name=$1 limit=$2 nproc=$3 devices=$4; shift 4
  echo "== $(date -u +%T) $name" | tee -a $LOG
  CUDA_VISIBLE_DEVICES=$devices timeout $limit torchrun --nproc-per-node $nproc $PS "$@" 2>&1 \
    | grep -v -i warn >> $LOG
  tar czf $OUT/gpubound8.tar.gz --exclude='trace-*rank[0-9].json.gz' -C $D .
}
step n4 250 4 0,1,2,3 --out $D/n4 --configs tp:llama-1b:4:16 tp-dp:llama-7b:1:8 zero3:llama-7b:1:8
step n2 150 2 0,1 --out $D/n2 --configs tp:llama-1b:4:16 zero2:llama-7b:1:8
PS="validation/harness/profile_step.py --steps 2 --warmup 3 --keep-traces"
step trace 70 2 0,1 --out $D/trace --configs tp:llama-1b:4:16
# Keep only the GPU events of the traces (a whole trace is ~100 MB), each with the torch op that launched it. (The
# run of 2026-11-21 used an inline filter without that op; its files in validation/h200-session8/x4/trace/ have 4 columns.)
python3 validation/harness/trace_gpu_ops.py $D/trace 2>&1 | tee -a $LOG
tar czf $OUT/gpubound8.tar.gz -C $D .
uptime | tee -a $LOG
ls -la $OUT
