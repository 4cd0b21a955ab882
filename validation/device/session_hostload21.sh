#!/usr/bin/env bash
# Prepared in session 21 for a 4-GPU lease (nvidia-h200-x4; about 300 s):
#   bash validation/device/session_hostload21.sh h200x4
# Question (validation/blind24/session13/README.md, "What remains open"): the host path of a host-bound rank in a real
# multi-process run is about 1.3-1.6x the one-process host-bound timing the trace import takes (gpt-ln ZeRO-3 2x8x1024:
# 0.084 s against the fake mesh's 0.053 s; the MoE program's DP and EP steps -14% and -28% fast; 75 of session 19's 82
# multi-GPU points fast). Is that the other processes on the host (CPU frequency, shared caches, the GPU driver),
# before any communication, or is it the communication itself?
# Method: each program's host-bound shape (1x32, 20 steps, run_steps.py measure) timed
#   alone     4 processes one after another on GPU 0, nothing else running (--processes 4);
#   spin      the same while 3 CPU-bound Python processes spin (one core each);
#   together  4 processes at once, one per GPU (no process group, no communication), twice (8 process medians);
#   alone2    `alone` again (drift over the call).
# Criteria, committed before it runs (per program, medians of the process medians; alone = median of alone+alone2):
#  - other processes explain the gap: together / alone >= 1.20 for both programs; then the trace import should time
#    the host shape with as many concurrent processes as the plan has ranks per host;
#  - they do not: together / alone <= 1.08 for both; then the 1.3-1.6x lies with the communication (NCCL's threads
#    and calls, the ranks waiting for each other);
#  - spin / alone >= 1.15 says the CPU itself (frequency, shared resources) slows a busy host; <= 1.05 with
#    `together` high says the slowdown comes through the GPU driver or PCIe, not the CPU.
# Also recorded: /proc/cpuinfo MHz samples and the load during each condition, lscpu, nvidia-smi.
# Lands in $OUT/hostload21-TAG.tar.gz (repacked after every condition).
set -uo pipefail
TAG=${1:?usage: session_hostload21.sh TAG}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
D=/tmp/hostload21; rm -rf $D; mkdir -p $D
source validation/device/guard.sh
LOG=$D/session.log
device_environment $D/environment.txt
lscpu > $D/lscpu.txt 2>&1
pack() { tar czf $OUT/hostload21-$TAG.tar.gz -C $D . ; }
stamp() { echo "== $(date -u +%T) $*" | tee -a $LOG; }
NGPU=$(nvidia-smi -L | wc -l)
[ "$NGPU" -ge 4 ] || { echo "$0: needs 4 GPUs, found $NGPU" | tee -a $LOG; pack; exit 2; }
MS="python3 validation/programs/run_steps.py measure --shapes 1x32 --steps 20"
cpu_sample() {  # $1: label; the median cpu MHz and the 1-minute load, every 2 s while the condition runs
  while true; do
    echo "$1 $(date +%s) $(awk '/cpu MHz/ {print $4}' /proc/cpuinfo | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)], a[NR]}') $(cut -d' ' -f1 /proc/loadavg)" >> $D/cpu.txt
    sleep 2
  done
}
spin() { python3 -c 'import time
t = time.time() + 300
while time.time() < t: pass' ; }

for P in "gpt-ln validation/programs/gpt-ln-0.5b.json" "moe validation/programs/moe-e16k2.json"; do
  set -- $P; prog=$1; model=$2
  for cond in alone spin together alone2; do
    stamp "$prog $cond"
    cpu_sample "$prog-$cond" & SAMPLER=$!
    case $cond in
      alone|alone2)
        CUDA_VISIBLE_DEVICES=0 timeout 150 $MS --program $prog --model $model --processes 4 \
          --out $D/$prog-$cond.json >> $LOG 2>&1; echo "exit $?" >> $LOG ;;
      spin)
        SP=""; for i in 1 2 3; do spin & SP="$SP $!"; done
        CUDA_VISIBLE_DEVICES=0 timeout 150 $MS --program $prog --model $model --processes 4 \
          --out $D/$prog-$cond.json >> $LOG 2>&1; echo "exit $?" >> $LOG
        kill $SP 2>/dev/null; wait $SP 2>/dev/null ;;
      together)
        for round in 1 2; do
          PIDS=""
          for g in 0 1 2 3; do
            CUDA_VISIBLE_DEVICES=$g timeout 90 $MS --program $prog --model $model \
              --out $D/$prog-$cond-r$round-gpu$g.json >> $LOG 2>&1 & PIDS="$PIDS $!"
          done
          for p in $PIDS; do wait $p; echo "exit $? ($p)" >> $LOG; done
        done ;;
    esac
    kill $SAMPLER 2>/dev/null; wait $SAMPLER 2>/dev/null
    pack
  done
done
stamp "done after $SECONDS s"
pack
