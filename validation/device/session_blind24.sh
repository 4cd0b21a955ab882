#!/usr/bin/env bash
# Device session of issue 24 (nvidia-h200-x4 or nvidia-h100-x4, whichever comes): the blind multi-GPU check of
# trace-driven predictions, FP8, context and expert parallelism, and NCCL's launch modes. Two calls, each whole:
#   bash validation/device/session_blind24.sh --part A     gpt-ln families, FP8, CP, NCCL launch modes
#   bash validation/device/session_blind24.sh --part B     hf-llama families, the MoE program (1 GPU, EP, DP)
#   bash validation/device/session_blind24.sh --part C     DTensor TP of gpt-ln and hf-llama from one-GPU DTensor
#                                                          traces (programs.py *-dtp; session 12)
#   bash validation/device/session_blind24.sh --part D     the same with the host timing on a fake 2-rank mesh (*-dtp2)
#   bash validation/device/session_blind24.sh --part E     part D at TP 4 (fake 4-rank mesh, *-dtp4; 4-GPU lease)
#   bash validation/device/session_blind24.sh --part F     ZeRO-2/3 with host timing on a fake FSDP2 mesh (*-fsdp2/4),
#                                                          DDP; the lease's interference measured (interf section)
#   bash validation/device/session_blind24.sh --part A --estimate    (prints the plan and estimates, runs nothing)
#   bash validation/device/session_blind24.sh --part I     DDP and data-parallel MoE at new shapes, predicted with and
#                                                          without DDP's gradient copies (session 21; 2 or 4 GPUs)
#   bash validation/device/session_blind24.sh --part J     part I at other new shapes, copies per parameter tensor,
#                                                          the lease's interference measured (session 21)
#   INTERF_BYTES=26214400 BUDGET_S=540 bash validation/device/session_blind24.sh --part F
#                                                          part F with the interference also at DDP's bucket size
#                                                          (stage 1b; session 19's prepared check, criteria there)
# Each part, in this order (validation/blind24/points.py lists what it runs):
#  0. environment: nvidia-smi, `nvidia-smi topo -m` -> `scalescope import nvidia-smi-topo` node file, GPU kind;
#  1. the fabric part of the calibration on this lease (scalescope-calibrate --sections topo,p2p,coll: one process
#     drives all GPUs, GPU-side timing; it is also launch mode "one process" of stage 6);
#  2. one-GPU profiler traces of the part's programs at their trace shapes, each with the unprofiled host-bound
#     timing (1x32) the importer needs (run_steps.py trace --host-shape);
#  3. the PREDICTIONS of every point (predict.py: imports, then scalescope simulate), by devbin/scalescope of the
#     commit in devbin/COMMIT, written and packed BEFORE any point is measured (no predictions: nothing measured);
#  4-5. the measurements: one process for the one-GPU points, one torchrun per world size (2, 4) for the rest;
#  6. (part A) NCCL launch modes: one process per GPU (torchrun + torch.distributed) and one process driving all
#     GPUs (nccl-tests -g N, built by validation/blind24/build_nccl_tests.sh into devbin/nccl-tests.tar.gz);
#  7. the report (validation/blind24/report.py): section for validation/REPORT.md and JSON.
# Needs devbin/ (carried): scalescope, scalescope-calibrate, COMMIT, nccl-tests/ or nccl-tests.tar.gz (optional). Every stage has a
# timeout and the whole part a budget (BUDGET_S, default 540 s from the script's start); points that no longer fit
# are skipped in their order of importance. Everything lands in $OUT/blind24-PART-TAG.tar.gz, repacked after every
# stage, plus predictions-PART.json and report-PART.md beside it (3 files).
set -uo pipefail
PART=""; ESTIMATE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --part) PART=${2:-}; shift 2 ;;
    --estimate) ESTIMATE=1; shift ;;
    *) echo "usage: $0 --part A|B|C|D|E|F|I|J [--estimate]" >&2; exit 2 ;;
  esac
done
case "$PART" in A|B|C|D|E|F|I|J) ;; *) echo "usage: $0 --part A|B|C|D|E|F|I|J [--estimate]" >&2; exit 2 ;; esac
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
T0=$(date +%s)
BUDGET=${BUDGET_S:-540}
PY=${PY:-python3}
TORCHRUN=torchrun; TRACE_ARGS=""; RUN_ARGS=""; NCCL_ARGS=""
if [ -n "${BLIND24_CPU_TEST:-}" ]; then  # a dry run of this script on a CPU machine (validation/blind24/check_session_cpu.sh)
  TORCHRUN="$PY -m torch.distributed.run"; TRACE_ARGS="--device cpu"
  RUN_ARGS="--device cpu --tiny --warmup 1 --steps 2"; NCCL_ARGS="--device cpu --max-bytes 64K --iters 3"
fi
# Stage estimates (s): from points.py (points' est_s, traces' est_s) plus process starts; printed first.
EST=$($PY validation/blind24/points.py --estimate $PART) || { echo "points.py failed" >&2; exit 2; }
echo "$EST"
[ $ESTIMATE = 1 ] && exit 0

D=/tmp/blind24-$PART; rm -rf $D; mkdir -p $D/traces $D/measured $D/nccl
if [ -n "${BLIND24_CPU_TEST:-}" ]; then
  device_environment() { { date -u; nvidia-smi; $PY -c 'import torch; print("torch", torch.__version__)'; } > "$1" 2>&1; }
else
  source validation/device/guard.sh  # stops leftover harness workers, refuses busy GPUs, device_environment
fi
LOG=$D/session.log
echo "$EST" > $D/estimates.txt
TAG=unknown
pack() { tar czf $OUT/blind24-$PART-$TAG.tar.gz -C $D . 2>/dev/null
         cp $D/predictions-$PART.json $D/report-$PART.md $OUT/ 2>/dev/null; true; }
source validation/device/stages.sh  # left, stage, nvlibs

# 0. environment
device_environment $D/environment.txt
nvidia-smi topo -m > $D/topo.txt 2>&1
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
NGPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
case "$GPU" in
  *H200*) TAG=h200; FROM=hgx-h200-8; GPUCAL=h200-gpu ;;
  *H100*) TAG=h100; FROM=dgx-h100-8; GPUCAL=h100-gpu ;;
  *) TAG=other; FROM=dgx-h100-8; GPUCAL=none ;;
esac
echo "GPU '$GPU' x $NGPU -> tag $TAG, GPU spec from $FROM, GPU calibration $GPUCAL; devbin commit $(cat devbin/COMMIT 2>/dev/null)" | tee -a $LOG
# 4 GPUs measure every point; 2 GPUs (when only nvidia-h200-x2 / h100-x2 are lent) the points up to 2 GPUs.
[ "$NGPU" -ge 2 ] || { echo "need 2 or 4 GPUs, found $NGPU" | tee -a $LOG; pack; exit 3; }
[ "$NGPU" -ge 4 ] && NGPU=4 || NGPU=2
export BLIND24_MAX_GPUS=$NGPU
devbin/scalescope import nvidia-smi-topo $D/topo.txt --gpu-from $FROM --name lent-$TAG-x$NGPU -o $D/node.json >> $LOG 2>&1 \
  || { echo "topology import failed: predicting on $FROM" | tee -a $LOG; cp "topologies/$FROM.json" $D/node.json; }
pack

# 1. fabric calibration (one process, all GPUs; GPU-side timing with host_launch_us beside it); part F also measures
#    the compute-communication interference of this lease (interf), which the predictions then apply
SECTIONS=topo,p2p,coll; CAL_S=45; case $PART in F|J) SECTIONS=topo,p2p,coll,interf; CAL_S=${CAL_S_INTERF:-120} ;; esac
LD_LIBRARY_PATH="$(nvlibs)${LD_LIBRARY_PATH:-}" SCALESCOPE_CALIBRATE_BIN=devbin/scalescope-calibrate \
  stage calibrate $(( CAL_S + 25 )) bash calibrate/gpu/run_on_device.sh $D/fabric.json $CAL_S --sections $SECTIONS
CAL=$GPUCAL; [ -s $D/fabric.json ] && CAL="$GPUCAL,$D/fabric.json"
# 1b. (part F, INTERF_BYTES=N) the interference again with collectives of N bytes, into a copy of the fabric profile,
#     and every point predicted with both (the report's second error column). Prepared in session 19: DDP steps run
#     8-9% slower than alone at the same clock, and its 25 MiB bf16 buckets took 0.49 ms each beside the backward
#     against 0.11-0.14 ms alone, while the interf section measures 256 MiB collectives. Criteria, committed before
#     it runs (INTERF_BYTES=26214400): the bucket-size interference explains DDP's gap if the DDP points' median
#     |error| with it is at most 4% while with the default run it stays 6% or more; it does not if the two medians
#     are within 1.5 points of each other.
if [ $PART = F ] && [ -n "${INTERF_BYTES:-}" ] && [ -s $D/fabric.json ]; then
  LD_LIBRARY_PATH="$(nvlibs)${LD_LIBRARY_PATH:-}" SCALESCOPE_CALIBRATE_BIN=devbin/scalescope-calibrate \
    stage interf-bytes 110 bash calibrate/gpu/run_on_device.sh $D/interf-bytes.json 80 --sections topo,interf \
    --ops all_reduce,all_gather,reduce_scatter --max-bytes $INTERF_BYTES
  cp $D/fabric.json $D/fabric-interf-bytes.json
  stage import-interf-bytes 20 devbin/scalescope calibrate import-section interference $D/interf-bytes.json \
    --into $D/fabric-interf-bytes.json || rm -f $D/fabric-interf-bytes.json
fi

# 2. traces (+ host-bound timing)
while IFS=$'\t' read -r key prog model mbs seq hostprog envs; do
  stage trace-$key 120 env $envs $PY validation/programs/run_steps.py trace --program $prog --model $model \
    --mbs $mbs --seq $seq --out $D/traces --name $key-mbs$mbs-seq$seq --host-shape 1x32 $TRACE_ARGS \
    $([ "$hostprog" != "$prog" ] && echo --host-program $hostprog)
done < <($PY validation/blind24/points.py --traces $PART)

# 3. predictions, before anything is measured
SCALESCOPE_COMMIT=$(cat devbin/COMMIT 2>/dev/null || echo unknown) stage predict 90 $PY validation/blind24/predict.py \
  --part $PART --scalescope devbin/scalescope --traces $D/traces --cluster $D/node.json --calibration "$CAL" \
  --gpu "$GPU x $NGPU" --work $D/stacks -o $D/predictions-$PART.json
[ -s $D/predictions-$PART.json ] || { echo "no predictions: not measuring" | tee -a $LOG; pack; exit 1; }
if [ $TAG = h200 ]; then  # the shipped 4x H200 profile (an earlier lease), for comparison only
  SCALESCOPE_COMMIT=$(cat devbin/COMMIT 2>/dev/null || echo unknown) stage predict-h200x4 40 $PY \
    validation/blind24/predict.py --part $PART --scalescope devbin/scalescope --traces $D/traces --cluster $D/node.json \
    --calibration h200x4 --gpu "$GPU x $NGPU" --work $D/stacks-h200x4 -o $D/predictions-$PART-h200x4.json
fi

if [ $PART = I ] || [ $PART = J ]; then  # the baseline: the stacks imported without DDP's copies (--ddp-bucket-view)
  SCALESCOPE_COMMIT=$(cat devbin/COMMIT 2>/dev/null || echo unknown) stage predict-bucket-view 60 $PY \
    validation/blind24/predict.py --part $PART --scalescope devbin/scalescope --traces $D/traces --cluster $D/node.json \
    --calibration "$CAL" --gpu "$GPU x $NGPU" --work $D/stacks-bucket-view --import-args=--ddp-bucket-view \
    -o $D/predictions-$PART-bucket-view.json
fi
if [ -s $D/fabric-interf-bytes.json ]; then  # 1b's profile: the interference at INTERF_BYTES
  SCALESCOPE_COMMIT=$(cat devbin/COMMIT 2>/dev/null || echo unknown) stage predict-interf-bytes 60 $PY \
    validation/blind24/predict.py --part $PART --scalescope devbin/scalescope --traces $D/traces --cluster $D/node.json \
    --calibration "$GPUCAL,$D/fabric-interf-bytes.json" --gpu "$GPU x $NGPU" --work $D/stacks-interf-bytes \
    -o $D/predictions-$PART-interf-bytes.json
fi

# 4-5. measurements: one launch per world size; a launch that dies is resumed once if time is left
RP="validation/blind24/run_points.py --part $PART --out $D"
measure_n() {  # measure_n N: this world size's points, leaving 70% of the estimated time of the stages after it
  local n=$1 launcher reserve dl
  [ "$($PY $RP --gpus $n --list | tail -1 | awk '{print $2}')" = 0 ] && return 0
  reserve=$(( $($PY validation/blind24/points.py --after $PART measure-n$n) * 7 / 10 ))
  [ $n = 1 ] && launcher="$PY" || launcher="$TORCHRUN --standalone --nproc-per-node $n"
  for try in 1 2; do
    dl=$(( $(date +%s) + $(left) - reserve ))
    stage measure-n$n-try$try $(( $(left) - reserve + 30 )) $launcher $RP --gpus $n --deadline $dl $RUN_ARGS \
      $([ $try = 2 ] && echo --resume) && break
    [ $(( $(left) - reserve )) -gt 40 ] || break  # a launch that died: resume once if time is left
  done
}
measure_n 1
measure_n 2
[ $NGPU -ge 4 ] && measure_n 4

# 6. NCCL launch modes (part A)
if [ $PART = A ]; then
  stage nccl-per-process 60 $TORCHRUN --standalone --nproc-per-node $NGPU validation/blind24/nccl_modes.py --out $D/nccl \
    $NCCL_ARGS
  if [ -x devbin/nccl-tests/all_reduce_perf ] || [ -s devbin/nccl-tests.tar.gz ]; then
    rm -rf /tmp/nccl-tests
    if [ -x devbin/nccl-tests/all_reduce_perf ]; then cp -r devbin/nccl-tests /tmp/; else tar xzf devbin/nccl-tests.tar.gz -C /tmp; fi
    cp /tmp/nccl-tests/BUILD $D/nccl/nccl-tests-BUILD
    for n in $(seq 2 2 $NGPU); do for op in all_reduce all_gather reduce_scatter alltoall; do
      LD_LIBRARY_PATH="$(nvlibs)${LD_LIBRARY_PATH:-}" stage nccltests-$op-g$n 25 bash -c \
        "echo '\$ ${op}_perf -b 8 -e 1G -f 2 -g $n' > $D/nccl/nccltests-$op-g$n.log; /tmp/nccl-tests/${op}_perf -b 8 -e 1G -f 2 -g $n >> $D/nccl/nccltests-$op-g$n.log 2>&1"
    done; done
  else
    echo "no devbin/nccl-tests/ or devbin/nccl-tests.tar.gz: the nccl-tests -g N mode is not measured" | tee -a $LOG
  fi
  for f in $D/nccl/*.log; do
    devbin/scalescope import nccl-tests $f -o ${f%.log}.profile.json >> $LOG 2>&1 || echo "import failed: $f" | tee -a $LOG
  done
  pack
fi

# 7. report
PREDS=$D/predictions-$PART.json; [ -s $D/predictions-$PART-h200x4.json ] && PREDS="$PREDS $D/predictions-$PART-h200x4.json"
[ -s $D/predictions-$PART-interf-bytes.json ] && PREDS="$PREDS $D/predictions-$PART-interf-bytes.json"
[ -s $D/predictions-$PART-bucket-view.json ] && PREDS="$PREDS $D/predictions-$PART-bucket-view.json"
$PY validation/blind24/report.py --predictions $PREDS --measured $D/measured --nccl $D/nccl --fabric $D/fabric.json \
  -o $D/report-$PART.md --json $D/report-$PART.json >> $LOG 2>&1
echo "== done after $(( $(date +%s) - T0 )) s" | tee -a $LOG; uptime >> $LOG; cat $D/stages.tsv
pack; ls -la $OUT
