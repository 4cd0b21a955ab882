#!/usr/bin/env bash
# Session 18, one nvidia-h200 lease (about 250 s): where the host-bound steps of several micro-batches lose time.
#   bash validation/device/session_accum18.sh
# The blind check of set s18 (validation/session18/) predicted the GPU-bound steps of 2-8 micro-batches within
# -4..+2% but the host-bound ones 9-15% fast. For each program of blind9.py: the host-bound shape 1x32 with 1, 2 and
# 4 micro-batches per step and 2x512 with 1 and 4 (3 processes one after another, each timing every shape: the
# differences are per process), then a profiler trace of a 4-micro-batch step at 2x512 (run_steps.py trace
# --micro-batches) to see which host work the later micro-batches add. Lands in $OUT/accum18.tar.gz.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
D=/tmp/accum18; rm -rf $D; mkdir -p $D/traces
source validation/device/guard.sh
device_environment $D/environment.txt
{ nproc; lscpu | grep "Model name"; } > $D/host.txt 2>&1
LOG=$D/session.log
pack() { tar czf $OUT/accum18.tar.gz -C $D . ; }
for p in gpt-ln:validation/programs/gpt-ln-0.5b.json hf-llama:validation/programs/hf-llama-0.9b/config.json; do
  prog=${p%%:*}; model=${p#*:}
  echo "== $(date -u +%T) $prog timings" | tee -a $LOG
  timeout 200 python3 validation/programs/run_steps.py measure --program $prog --model $model \
    --shapes 1x32,1x32x2,1x32x4,2x512,2x512x4 --steps 20 --processes 3 --out $D/host-$prog.json >> $LOG 2>&1
  pack
  echo "== $(date -u +%T) $prog trace 2x512, 4 micro-batches" | tee -a $LOG
  timeout 120 python3 validation/programs/run_steps.py trace --program $prog --model $model --mbs 2 --seq 512 \
    --micro-batches 4 --out $D/traces --name $prog-mbs2-seq512-m4 >> $LOG 2>&1
  pack
done
echo "== $(date -u +%T) done" | tee -a $LOG; pack; ls -la $D $D/traces
