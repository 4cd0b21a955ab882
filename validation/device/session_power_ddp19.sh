#!/usr/bin/env bash
# Session 19: is the clock at the power cap why data-parallel steps run slower than the model says? (about 200 s,
# nvidia-h200-x2 or -x4; uses GPUs 0-1)
#   bash validation/device/session_power_ddp19.sh        (lands in $OUT/power-ddp19.tar.gz)
# Background. Every DDP point of issue 24 on H200 (sessions 13 and 19, 2 and 4 GPUs, both programs) is predicted
# 5-17% too fast; session 13's rank-0 trace showed the compute kernels of a DDP step 7% slower than one GPU's, of
# which the interference curves (NCCL kernels beside GEMMs) explain a third. Session 19 (validation/session19/) found
# gpt-ln at 8x2048 running at the 700 W cap from its first step (SM 1665 of 1980 MHz, reason 0x4) and hf-llama at
# 4x2048 near it (1920 MHz), and the GEMM's rate falling with the share of the GPU's time it holds. NVLink traffic
# and NCCL kernels draw power too, so a DDP rank may run at a lower clock than the same step alone.
# What runs, for gpt-ln 8x1024 and hf-llama 4x2048, with nvidia-smi sampling GPUs 0 and 1 every 100 ms beside it:
#  1. the step alone on GPU 0 (run_steps.py measure, 60 / 30 timed steps after 3 warm-up ones);
#  2. the same step under DDP on GPUs 0-1 (run_points.py, part A gpt-ln.ddp.n2 / part B hf-llama.ddp.n2, the same
#     timed steps).
# Criteria, committed before it runs, per program, over the samples of GPU 0 drawing more than 60% of the power
# limit (the busy part of each run):
#  - the clock explains DDP's slower kernels: DDP's median SM clock is at least 3% below the lone step's, with the
#    power-cap reason (0x4) set in most DDP samples. Then a power model of the step (GEMM, memory and NCCL/NVLink
#    activity against the cap) belongs in the cost model, and the size to compare is step(DDP)/step(alone) against
#    clock(alone)/clock(DDP).
#  - it does not: the two medians within 1.5%; then DDP's slower kernels are contention (SMs, memory bandwidth), as
#    the interference section measures, and the missing two thirds lie there.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
PY=${PY:-python3}
D=/tmp/power-ddp19; rm -rf $D; mkdir -p $D
source validation/device/guard.sh
device_environment $D/environment.txt
nvidia-smi --query-gpu=index,name,clocks.max.sm,power.limit --format=csv > $D/limits.csv 2>&1
pack() { tar czf $OUT/power-ddp19.tar.gz -C $D . 2>/dev/null; true; }
smi_on() { nvidia-smi -i 0,1 --query-gpu=index,timestamp,clocks.sm,power.draw,clocks_event_reasons.active,utilization.gpu \
             --format=csv,noheader,nounits -lms 100 > $D/smi-$1.csv 2>&1 & SMI=$!; }
smi_off() { kill $SMI 2>/dev/null; wait $SMI 2>/dev/null; }
for p in gpt-ln:validation/programs/gpt-ln-0.5b-h20.json:8x1024:60:A:gpt-ln.ddp.n2 \
         hf-llama:validation/programs/hf-llama-0.9b/config.json:4x2048:30:B:hf-llama.ddp.n2; do
  IFS=: read -r prog model shape steps part point <<< "$p"
  echo "== $(date -u +%T) $prog alone $shape" | tee -a $D/log.txt
  smi_on $prog-alone
  timeout 120 $PY validation/programs/run_steps.py measure --program $prog --model $model --shapes $shape \
    --steps $steps --out $D/alone-$prog.json >> $D/log.txt 2>&1; echo "exit $?" >> $D/log.txt
  smi_off; pack
  echo "== $(date -u +%T) $prog DDP on 2 GPUs ($point)" | tee -a $D/log.txt
  smi_on $prog-ddp
  timeout -k 10 150 torchrun --standalone --nproc-per-node 2 validation/blind24/run_points.py --part $part --gpus 2 \
    --only $point --steps $steps --out $D/ddp-$prog >> $D/log.txt 2>&1; echo "exit $?" >> $D/log.txt
  smi_off; pack
done
$PY validation/clocks/power_ddp.py $D | tee $D/summary.txt
pack; ls -la $OUT
