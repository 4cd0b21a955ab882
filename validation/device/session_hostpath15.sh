#!/usr/bin/env bash
# Device session of issue 24, parts G (session 15) and H (session 16): the host path of a real N-rank FSDP2 step, one
# call on a lent 2-GPU or 4-GPU machine, H100 or H200 (validation/blind24/hostpath.py describes both experiments).
#   BUDGET_S=540 bash validation/device/session_hostpath15.sh --part H   (from the repository root, on the device)
#   bash validation/device/session_hostpath15.sh --part H --estimate      (prints the stage estimates, runs nothing)
# --part G (the default, session 15): what makes the slower rank's host path of a real N-rank FSDP2 step slower
# than the one-process fake-mesh timing scalescope predicts it from (session 13: gpt-ln ZeRO-2/3 23-36% too fast)?
#   (a) process-to-process noise of the host timing  -> host step = median of 3 processes one after another
#   (b) N processes on one host at once (contention) -> host step = median of N concurrent processes
#   (c) the step waits for the slowest of the N ranks -> host step = mean over rounds of the slowest concurrent one
# Each is one --host-step-time for the SAME prediction (one trace, one plan, one calibration).
# --part H (session 16): the BLIND check of the mechanism chosen after part G: `import torch-trace
# --host-process-times` with every host-bound timing of the M-rank fake-mesh program on this lease (sequential and
# concurrent processes pooled), a plan of N ranks waiting for the expected slowest of N of them ("slowest",
# pre-registered), beside "seq" (the sequential processes' median, a baseline); two programs (gpt-ln bf16 and
# hf-llama mixed), ZeRO-3 and ZeRO-2 at shapes no earlier part measured. Every prediction is written and packed
# BEFORE any point is measured.
# In this order (NGPU = 4 if the machine has 4 or more GPUs, else 2; M and n run over {2, NGPU}):
#  0. environment (device_environment), `nvidia-smi topo -m` -> `scalescope import nvidia-smi-topo` node file,
#     lscpu / nproc / uptime into host.txt;
#  1. the fabric part of the calibration (scalescope-calibrate --sections topo,p2p,coll, 45 s);
#  2. the one-GPU profiler trace(s) (run_steps.py trace, no --host-shape: the host timings are 3.'s): part G
#     gpt-ln-fsdp at 8x1024; part H also hf-llama-fsdp at 4x2048;
#  3. host-bound timings at 1x32 of PROGRAM-fsdpM (FSDP2 on a fake M-rank mesh), per M (2 first), per program:
#     concurrent round 1 (M processes at once, process i on GPU i), sequential (run_steps.py measure --processes
#     HOST_PROCS on GPU 0), concurrent rounds 2.. (interleaved so that drift hits both kinds). Part G: 3 sequential,
#     2 rounds; part H: 2 sequential, 1 round (M=2: 4 timings, M=4: 6 per program), and an M>2 stage runs only if
#     the predictions, one 2-GPU launch and the report still fit after it (else skipped, and the NGPU launches too);
#  4. the PREDICTIONS (hostpath.py predict), predictions-PART.json written and packed before anything in 5. runs;
#  5. the measurements: LAUNCHES torchrun launches per world size n (part G 3, part H 2; $LAUNCHES overrides),
#     each measuring the points of n (part G: zero3 8x1024, zero3 2x2048, zero2 8x1024; part H: gpt-ln zero3 6x1024,
#     hf-llama zero3 3x2048, gpt-ln zero2 4x2048, hf-llama zero2 2x4096), world sizes alternating (n2 L1, n4 L1, n2
#     L2, ...); a launch that no longer fits the budget is skipped and recorded;
#  6. the report (hostpath.py report): report-PART.md and report-PART.json.
# Needs devbin/ (carried): scalescope, scalescope-calibrate, COMMIT ($SCALESCOPE names another scalescope; part H
# needs one with --host-process-times). Every stage has a timeout and the session a budget (BUDGET_S, default 540 s
# from the script's start). Everything lands in /tmp/hostpath15 (part H: /tmp/hostpath-H), packed after every stage
# into $OUT/hostpath15-TAG.tar.gz (part H: $OUT/hostpath-H-TAG.tar.gz), with predictions-PART.json and
# report-PART.md beside it. BLIND24_CPU_TEST=DIR: the dry run on a CPU (validation/blind24/check_hostpath_cpu.sh).
set -uo pipefail
ESTIMATE=0; PART=G
while [ $# -gt 0 ]; do
  case "$1" in
    --estimate) ESTIMATE=1; shift ;;
    --part) PART=${2:-}; shift 2 ;;
    *) echo "usage: $0 [--part G|H] [--estimate]" >&2; exit 2 ;;
  esac
done
case "$PART" in G|H) ;; *) echo "--part G or H, not '$PART'" >&2; exit 2 ;; esac
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
T0=$(date +%s)
BUDGET=${BUDGET_S:-540}
PY=${PY:-python3}
SS=${SCALESCOPE:-devbin/scalescope}
HP=validation/blind24/hostpath.py
TORCHRUN=torchrun; DEV=cuda; TRACE_ARGS=""; RUN_ARGS=""
if [ $PART = G ]; then HOST_PROCS=3; ROUNDS=2; LAUNCHES=${LAUNCHES:-3}; else HOST_PROCS=2; ROUNDS=1; LAUNCHES=${LAUNCHES:-2}; fi
HOST_STEPS=20
if [ -n "${BLIND24_CPU_TEST:-}" ]; then  # the dry run on a CPU: tiny model, gloo, 1 process / round / launch, 2 steps
  TORCHRUN="$PY -m torch.distributed.run"; DEV=cpu; TRACE_ARGS="--device cpu"
  RUN_ARGS="--device cpu --tiny --warmup 1 --steps 2"; HOST_PROCS=1; ROUNDS=1; LAUNCHES=1; HOST_STEPS=2
fi
EST_ARGS="--part $PART --processes $HOST_PROCS --rounds $ROUNDS --launches $LAUNCHES"
if [ $ESTIMATE = 1 ]; then
  $PY $HP estimate --ngpu 2 $EST_ARGS && $PY $HP estimate --ngpu 4 $EST_ARGS; exit $?
fi

if [ $PART = G ]; then D=/tmp/hostpath15; PACK=hostpath15; else D=/tmp/hostpath-$PART; PACK=hostpath-$PART; fi
rm -rf $D; mkdir -p $D/traces $D/host $D/launches
if [ -n "${BLIND24_CPU_TEST:-}" ]; then
  device_environment() { { date -u; nvidia-smi; $PY -c 'import torch; print("torch", torch.__version__)'; } > "$1" 2>&1; }
else
  source validation/device/guard.sh  # stops leftover harness workers, refuses busy GPUs, device_environment
fi
LOG=$D/session.log
TAG=unknown
pack() { tar czf $OUT/$PACK-$TAG.tar.gz -C $D . 2>/dev/null
         cp $D/predictions-$PART.json $D/report-$PART.md $OUT/ 2>/dev/null; true; }
source validation/device/stages.sh  # left, stage, nvlibs

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
if [ $PART != G ] && ! $SS import torch-trace --help 2>&1 | grep -q -- --host-process-times; then
  echo "$SS has no import torch-trace --host-process-times (part $PART's variant slowest): not starting" | tee -a $LOG
  pack; exit 2
fi
[ "$NGPU" -ge 4 ] && NGPU=4 || NGPU=2
EST=$($PY $HP estimate --ngpu $NGPU $EST_ARGS) || { echo "hostpath.py estimate failed" | tee -a $LOG; pack; exit 2; }
echo "$EST" | tee $D/estimates.txt
VARS=$($PY $HP vars --part $PART --ngpu $NGPU) || { echo "hostpath.py vars failed" | tee -a $LOG; pack; exit 2; }
PROGRAMS=""
eval "$VARS"  # TRACE_PROGRAM TRACE_MODEL TRACE_MBS TRACE_SEQ TRACE_NAME HOST_MODEL MS NS (part H: PROGRAMS)
mapfile -t TRACES < <($PY $HP traces --part $PART) \
  || { echo "hostpath.py traces failed" | tee -a $LOG; pack; exit 2; }
$SS import nvidia-smi-topo $D/topo.txt --gpu-from $FROM --name lent-$TAG-x$NGPU -o $D/node.json >> $LOG 2>&1 \
  || { echo "topology import failed: predicting on $FROM" | tee -a $LOG; cp "topologies/$FROM.json" $D/node.json; }
pack

# 1. fabric calibration (one process, all GPUs; GPU-side timing)
LD_LIBRARY_PATH="$(nvlibs)${LD_LIBRARY_PATH:-}" SCALESCOPE_CALIBRATE_BIN=devbin/scalescope-calibrate \
  stage calibrate 70 bash calibrate/gpu/run_on_device.sh $D/fabric.json 45 --sections topo,p2p,coll
CAL=$GPUCAL; [ -s $D/fabric.json ] && CAL="$GPUCAL,$D/fabric.json"

# 2. the one-GPU trace(s) (no --host-shape: the host timings are stage 3's); part G's stage is `trace`
for line in "${TRACES[@]}"; do
  IFS=$'\t' read -r tstage tkey tprog tmodel tmbs tseq tname <<< "$line"
  stage $tstage 120 $PY validation/programs/run_steps.py trace --program $tprog --model $tmodel \
    --mbs $tmbs --seq $tseq --out $D/traces --name $tname $TRACE_ARGS
done

# 3. host-bound timings at 1x32: per M (2 first), per program, concurrent round 1, sequential processes, concurrent
#    rounds 2.. Part H: a stage of M > 2 only if the predictions, a 2-GPU launch and the report still fit after it
SKIP_M=""
if [ $PART = G ]; then HOSTPROGS=gpt-ln; else HOSTPROGS=$PROGRAMS; RESERVE_N2=$($PY $HP estimate --part $PART --reserve-s); fi
host_fits() {  # host_fits M STAGE: part G always; part H: M = 2, or the stage's estimate + RESERVE_N2 fit the budget
  [ $PART = G ] || [ $1 = 2 ] && return 0
  if [[ " $SKIP_M " == *" $1 "* ]]; then printf '%s\tskipped\t0\n' $2 >> $D/stages.tsv; return 1; fi
  local need=$(( $($PY $HP estimate $EST_ARGS --ngpu $NGPU --stage-s $2) + RESERVE_N2 )) l=$(left)
  [ $l -ge $need ] && return 0
  echo "== SKIP $2: $l s left, it and the 2-GPU blind check need $need s (no launch of $1 GPUs either)" | tee -a $LOG
  printf '%s\tskipped\t0\n' $2 >> $D/stages.tsv
  SKIP_M="$SKIP_M $1"; return 1
}
for M in $MS; do
  if [ $PART != G ] && [ $M != 2 ]; then  # all of M's host timings first, then each stage (host_fits)
    need=$(( $($PY $HP estimate $EST_ARGS --ngpu $NGPU --host-m-s $M) + RESERVE_N2 ))
    if [ $(left) -lt $need ]; then
      echo "== SKIP the host timings of M=$M: $(left) s left, they and the 2-GPU blind check need $need s" | tee -a $LOG
      SKIP_M="$SKIP_M $M"
    fi
  fi
  for HPROG in $HOSTPROGS; do
    if [ $PART = G ]; then SP=""; HARGS="--model $HOST_MODEL"; else SP="$HPROG-"; HARGS="--part $PART --program $HPROG"; fi
    for R in $(seq 1 $ROUNDS); do
      host_fits $M host-${SP}m$M-conc-r$R && stage host-${SP}m$M-conc-r$R 90 $PY $HP host --mode conc --m $M \
        --round $R --steps $HOST_STEPS $HARGS --device $DEV --out $D/host
      [ $R = 1 ] && host_fits $M host-${SP}m$M-seq && stage host-${SP}m$M-seq $(( HOST_PROCS * 40 + 20 )) $PY $HP \
        host --mode seq --m $M --processes $HOST_PROCS --steps $HOST_STEPS $HARGS --device $DEV --out $D/host
    done
  done
done

# 4. predictions, before anything is measured
SCALESCOPE_COMMIT="$SSC" stage predict 90 $PY $HP predict --part $PART --ngpu $NGPU --scalescope $SS \
  --traces $D/traces --host $D/host --cluster $D/node.json --calibration "$CAL" --gpu "$GPU x $NGPU" \
  --work $D/stacks --commands $D/commands.tsv -o $D/predictions-$PART.json
[ -s $D/predictions-$PART.json ] || { echo "no predictions: not measuring" | tee -a $LOG; pack; exit 1; }
pack

# 5. measurements: LAUNCHES launches per world size, alternating world sizes (2 GPUs first); each launch needs its
#    process start and one point before the budget (less RESERVE for the report), else it is skipped and recorded;
#    part H measures no world size whose host timings were skipped (nothing predicts it)
RESERVE=10
for L in $(seq 1 $LAUNCHES); do
  for n in $NS; do
    if [[ " $SKIP_M " == *" $n "* ]]; then
      echo "== SKIP measure-n$n-L$L: host timings of M=$n skipped (budget), no prediction" | tee -a $LOG $D/launches/skipped.txt
      printf 'measure-n%s-L%s\tskipped\t0\n' $n $L >> $D/stages.tsv
      continue
    fi
    est=$($PY $HP estimate --part $PART --launch-s $n)
    l=$(( $(left) - RESERVE ))
    if [ $l -lt $(( est - 12 )) ]; then  # less than the process start and one point
      echo "== SKIP measure-n$n-L$L: $l s left, launch estimated $est s" | tee -a $LOG $D/launches/skipped.txt
      printf 'measure-n%s-L%s\tskipped\t0\n' $n $L >> $D/stages.tsv
      continue
    fi
    to=$(( est * 2 + 30 )); [ $to -gt $l ] && to=$l
    stage measure-n$n-L$L $to $TORCHRUN --standalone --nproc-per-node $n $HP measure --part $PART --ngpu $NGPU \
      --launch $L --out $D/launches/n$n-L$L --deadline $(( $(date +%s) + l )) $RUN_ARGS
  done
done

# 6. report
$PY $HP report --predictions $D/predictions-$PART.json --launches $D/launches --stages $D/stages.tsv \
  -o $D/report-$PART.md --json $D/report-$PART.json >> $LOG 2>&1 || echo "report failed" | tee -a $LOG
echo "== done after $(( $(date +%s) - T0 )) s" | tee -a $LOG; uptime >> $LOG; cat $D/stages.tsv
pack; ls -la $OUT
