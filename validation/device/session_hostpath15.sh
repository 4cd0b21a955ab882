#!/usr/bin/env bash
# Device session 15, part G of issue 24 (one call on a lent 2-GPU or 4-GPU machine, H100 or H200): what makes the
# slower rank's host path of a real N-rank FSDP2 step slower than the one-process fake-mesh timing scalescope
# predicts it from (session 13: gpt-ln ZeRO-2/3 23-36% too fast; launches of one point 0.075-0.099 s)?
#   (a) process-to-process noise of the host timing  -> host step = median of 3 processes one after another
#   (b) N processes on one host at once (contention) -> host step = median of N concurrent processes
#   (c) the step waits for the slowest of the N ranks -> host step = mean over rounds of the slowest concurrent one
# Each is one --host-step-time for the SAME prediction (one trace, one plan, one calibration); all three are
# written and packed BEFORE any point is measured (validation/blind24/hostpath.py describes the experiment).
#   BUDGET_S=540 bash validation/device/session_hostpath15.sh        (from the repository root, on the device)
#   bash validation/device/session_hostpath15.sh --estimate          (prints the stage estimates, runs nothing)
# In this order (NGPU = 4 if the machine has 4 or more GPUs, else 2; M and n run over {2, NGPU}):
#  0. environment (device_environment), `nvidia-smi topo -m` -> `scalescope import nvidia-smi-topo` node file,
#     lscpu / nproc / uptime into host.txt;
#  1. the fabric part of the calibration (scalescope-calibrate --sections topo,p2p,coll, 45 s);
#  2. ONE one-GPU profiler trace: run_steps.py trace of gpt-ln-fsdp at 8x1024 (its host timing comes from 3.);
#  3. host-bound timings at 1x32 of gpt-ln-fsdpM (FSDP2 on a fake M-rank mesh), per M: concurrent round 1 (M
#     processes at once, process i on GPU i), sequential (run_steps.py measure --processes 3 on GPU 0), concurrent
#     round 2 (interleaved so that drift hits both kinds);
#  4. the PREDICTIONS (hostpath.py predict: 3 imports of the trace per M, one per variant, then scalescope simulate
#     of every point with each), predictions-G.json written and packed before anything in 5. runs;
#  5. the measurements: 3 torchrun launches per world size n, each measuring the 3 points of n (zero3 8x1024,
#     zero3 2x2048, zero2 8x1024), world sizes alternating (n2 L1, n4 L1, n2 L2, ...); a launch that no longer fits
#     the budget is skipped and recorded;
#  6. the report (hostpath.py report): report-G.md and report-G.json.
# Needs devbin/ (carried): scalescope, scalescope-calibrate, COMMIT ($SCALESCOPE names another scalescope). Every
# stage has a timeout and the session a budget (BUDGET_S, default 540 s from the script's start). Everything lands
# in /tmp/hostpath15, packed after every stage into $OUT/hostpath15-TAG.tar.gz, with predictions-G.json and
# report-G.md beside it. BLIND24_CPU_TEST=DIR: the dry run on a CPU (validation/blind24/check_hostpath_cpu.sh).
set -uo pipefail
ESTIMATE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --estimate) ESTIMATE=1; shift ;;
    *) echo "usage: $0 [--estimate]" >&2; exit 2 ;;
  esac
done
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
T0=$(date +%s)
BUDGET=${BUDGET_S:-540}
PY=${PY:-python3}
SS=${SCALESCOPE:-devbin/scalescope}
HP=validation/blind24/hostpath.py
TORCHRUN=torchrun; DEV=cuda; TRACE_ARGS=""; RUN_ARGS=""
HOST_PROCS=3; ROUNDS=2; LAUNCHES=3; HOST_STEPS=20
if [ -n "${BLIND24_CPU_TEST:-}" ]; then  # the dry run on a CPU: tiny model, gloo, 1 process / round / launch, 2 steps
  TORCHRUN="$PY -m torch.distributed.run"; DEV=cpu; TRACE_ARGS="--device cpu"
  RUN_ARGS="--device cpu --tiny --warmup 1 --steps 2"; HOST_PROCS=1; ROUNDS=1; LAUNCHES=1; HOST_STEPS=2
fi
EST_ARGS="--processes $HOST_PROCS --rounds $ROUNDS --launches $LAUNCHES"
if [ $ESTIMATE = 1 ]; then
  $PY $HP estimate --ngpu 2 $EST_ARGS && $PY $HP estimate --ngpu 4 $EST_ARGS; exit $?
fi

D=/tmp/hostpath15; rm -rf $D; mkdir -p $D/traces $D/host $D/launches
if [ -n "${BLIND24_CPU_TEST:-}" ]; then
  device_environment() { { date -u; nvidia-smi; $PY -c 'import torch; print("torch", torch.__version__)'; } > "$1" 2>&1; }
else
  source validation/device/guard.sh  # stops leftover harness workers, refuses busy GPUs, device_environment
fi
LOG=$D/session.log
TAG=unknown
pack() { tar czf $OUT/hostpath15-$TAG.tar.gz -C $D . 2>/dev/null
         cp $D/predictions-G.json $D/report-G.md $OUT/ 2>/dev/null; true; }
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
# stage NAME TIMEOUT_S CMD...: runs CMD with min(TIMEOUT_S, budget left - 5) seconds, records the command
# (commands.tsv), its exit and time (stages.tsv), packs.
stage() {
  local name=$1 to=$2; shift 2
  local l=$(( $(left) - 5 )); [ $to -gt $l ] && to=$l
  if [ $to -lt 5 ]; then echo "== SKIP $name: budget spent" | tee -a $LOG; printf '%s\tskipped\t0\n' $name >> $D/stages.tsv; return 1; fi
  echo "== $(date -u +%T) [$(( $(date +%s) - T0 )) s] $name (timeout $to s): $*" | tee -a $LOG
  printf '%s\t%s\t%s\n' "$name" "$(date -u +%FT%TZ)" "$*" >> $D/commands.tsv
  local t=$(date +%s)
  timeout -k 10 $to "$@" >> $LOG 2>&1
  local rc=$?
  printf '%s\t%d\t%d\n' $name $rc $(( $(date +%s) - t )) | tee -a $D/stages.tsv $LOG
  pack; return $rc
}
nvlibs() {  # the CUDA runtime / NCCL of the pip wheels, for the C++ programs
  local sp; sp=$($PY -c 'import site;print(site.getsitepackages()[0])')
  find "$sp/nvidia" -name lib -type d 2>/dev/null | sort | tr '\n' :
}

# 0. environment
device_environment $D/environment.txt
nvidia-smi topo -m > $D/topo.txt 2>&1
{ date -u; echo "nproc: $(nproc)"; uptime; lscpu; } > $D/host.txt 2>&1
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
NGPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
case "$GPU" in
  *H200*) TAG=h200; FROM=hgx-h200-8; GPUCAL=h200-gpu ;;
  *H100*) TAG=h100; FROM=dgx-h100-8; GPUCAL=h100-gpu ;;
  *) TAG=other; FROM=dgx-h100-8; GPUCAL=none ;;
esac
SSC=$(cat "$(dirname "$SS")/COMMIT" 2>/dev/null || echo "unknown (no COMMIT beside $SS)")
echo "GPU '$GPU' x $NGPU -> tag $TAG, GPU spec from $FROM, GPU calibration $GPUCAL; scalescope $SS, commit $SSC" | tee -a $LOG
[ "$NGPU" -ge 2 ] || { echo "need 2 or 4 GPUs, found $NGPU" | tee -a $LOG; pack; exit 3; }
[ "$NGPU" -ge 4 ] && NGPU=4 || NGPU=2
EST=$($PY $HP estimate --ngpu $NGPU $EST_ARGS) || { echo "hostpath.py estimate failed" | tee -a $LOG; pack; exit 2; }
echo "$EST" | tee $D/estimates.txt
VARS=$($PY $HP vars --ngpu $NGPU) || { echo "hostpath.py vars failed" | tee -a $LOG; pack; exit 2; }
eval "$VARS"  # TRACE_PROGRAM TRACE_MODEL TRACE_MBS TRACE_SEQ TRACE_NAME HOST_MODEL MS NS
$SS import nvidia-smi-topo $D/topo.txt --gpu-from $FROM --name lent-$TAG-x$NGPU -o $D/node.json >> $LOG 2>&1 \
  || { echo "topology import failed: predicting on $FROM" | tee -a $LOG; cp "topologies/$FROM.json" $D/node.json; }
pack

# 1. fabric calibration (one process, all GPUs; GPU-side timing)
LD_LIBRARY_PATH="$(nvlibs)${LD_LIBRARY_PATH:-}" SCALESCOPE_CALIBRATE_BIN=devbin/scalescope-calibrate \
  stage calibrate 70 bash calibrate/gpu/run_on_device.sh $D/fabric.json 45 --sections topo,p2p,coll
CAL=$GPUCAL; [ -s $D/fabric.json ] && CAL="$GPUCAL,$D/fabric.json"

# 2. the one-GPU trace (no --host-shape: the host timings are stage 3's)
stage trace 120 $PY validation/programs/run_steps.py trace --program $TRACE_PROGRAM --model $TRACE_MODEL \
  --mbs $TRACE_MBS --seq $TRACE_SEQ --out $D/traces --name $TRACE_NAME $TRACE_ARGS

# 3. host-bound timings at 1x32: per M, concurrent round 1, sequential processes, concurrent rounds 2..
for M in $MS; do
  for R in $(seq 1 $ROUNDS); do
    stage host-m$M-conc-r$R 90 $PY $HP host --mode conc --m $M --round $R --steps $HOST_STEPS --model $HOST_MODEL \
      --device $DEV --out $D/host
    [ $R = 1 ] && stage host-m$M-seq $(( HOST_PROCS * 40 + 20 )) $PY $HP host --mode seq --m $M \
      --processes $HOST_PROCS --steps $HOST_STEPS --model $HOST_MODEL --device $DEV --out $D/host
  done
done

# 4. predictions, before anything is measured
SCALESCOPE_COMMIT="$SSC" stage predict 90 $PY $HP predict --ngpu $NGPU --scalescope $SS --traces $D/traces \
  --host $D/host --cluster $D/node.json --calibration "$CAL" --gpu "$GPU x $NGPU" --work $D/stacks \
  --commands $D/commands.tsv -o $D/predictions-G.json
[ -s $D/predictions-G.json ] || { echo "no predictions: not measuring" | tee -a $LOG; pack; exit 1; }
pack

# 5. measurements: LAUNCHES launches per world size, alternating world sizes; each launch needs its process start
#    and one point before the budget (less RESERVE for the report), else it is skipped and recorded
RESERVE=10
for L in $(seq 1 $LAUNCHES); do
  for n in $NS; do
    est=$($PY $HP estimate --launch-s $n)
    l=$(( $(left) - RESERVE ))
    if [ $l -lt $(( est - 12 )) ]; then  # less than the process start and one point
      echo "== SKIP measure-n$n-L$L: $l s left, launch estimated $est s" | tee -a $LOG $D/launches/skipped.txt
      printf 'measure-n%s-L%s\tskipped\t0\n' $n $L >> $D/stages.tsv
      continue
    fi
    to=$(( est * 2 + 30 )); [ $to -gt $l ] && to=$l
    stage measure-n$n-L$L $to $TORCHRUN --standalone --nproc-per-node $n $HP measure --ngpu $NGPU --launch $L \
      --out $D/launches/n$n-L$L --deadline $(( $(date +%s) + l )) $RUN_ARGS
  done
done

# 6. report
$PY $HP report --predictions $D/predictions-G.json --launches $D/launches --stages $D/stages.tsv \
  -o $D/report-G.md --json $D/report-G.json >> $LOG 2>&1 || echo "report failed" | tee -a $LOG
echo "== done after $(( $(date +%s) - T0 )) s" | tee -a $LOG; uptime >> $LOG; cat $D/stages.tsv
pack; ls -la $OUT
