#!/usr/bin/env bash
# The one command to run on a GPU machine (from the repo root): measures every plan family for n = 1, 2, 4 in a budget.
set -uo pipefail

usage() {
  cat <<'EOF'
usage: validation/harness/run_all.sh [OUT_DIR] [--dry-run|--list] [--total-budget-s S] [--sizes "1 2 4"]
                                     [--device cuda|cpu] [--python PY] [-- extra train_step.py args]
  OUT_DIR            output folder (default validation/h200x4): measured/*.json, runs/*-summary.json, logs/*.log
  --dry-run, --list  print the configurations per world size with time estimates; run nothing
  --total-budget-s   wall-clock budget for all world sizes together, process starts included (default 450)
  --sizes            world sizes to run (default: those of 1 2 4 that fit the visible GPUs)
  --device cpu       gloo test run with the tiny model (no GPU needed)
  After the run, if $OUT is set, everything under OUT_DIR is packed into $OUT/harness.tar.gz.
  Extra args after -- go to train_step.py, e.g. -- --families ddp,zero3 --max-tier 0 --steps 8
EOF
}

OUT_DIR=validation/h200x4
TOTAL=450
DRY=0
DEVICE=cuda
SIZES=""
PY=${PYTHON:-python3}
EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run|--list) DRY=1 ;;
    --total-budget-s) TOTAL=$2; shift ;;
    --sizes) SIZES=$2; shift ;;
    --device) DEVICE=$2; shift ;;
    --python) PY=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; EXTRA=("$@"); break ;;
    -*) echo "run_all.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) OUT_DIR=$1 ;;
  esac
  shift
done

# Multicast (NVLS) must stay off on the lent machines.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
HERE=$(cd "$(dirname "$0")" && pwd)
T0=$(date +%s)

if [ "$DEVICE" = cpu ]; then
  EXTRA=(--device cpu --tiny ${EXTRA[@]+"${EXTRA[@]}"})
  NGPU=4
elif [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
  NGPU=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
else
  NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
fi
if [ -z "$SIZES" ]; then
  for n in 1 2 4; do [ "$n" -le "$NGPU" ] && SIZES="$SIZES $n"; done
fi
if [ -z "${SIZES// /}" ]; then
  echo "run_all.sh: no GPU visible (nvidia-smi -L found $NGPU); use --device cpu for a test run" >&2
  exit 1
fi

# Share of the remaining budget per world size (larger worlds have more families and matter most).
weight() { case "$1" in 1) echo 18 ;; 2) echo 37 ;; 4) echo 45 ;; *) echo $((10 * $1)) ;; esac; }
# start-up (python + torch import + process-group init) per world size, counted inside each budget
echo "run_all.sh: sizes [$SIZES ], total budget ${TOTAL}s, output $OUT_DIR" >&2

if [ "$DRY" = 1 ]; then
  wsum=0; for n in $SIZES; do wsum=$((wsum + $(weight "$n"))); done
  for n in $SIZES; do
    b=$((TOTAL * $(weight "$n") / wsum))
    "$PY" "$HERE/train_step.py" --list --gpus "$n" --time-budget-s "$b" --out "$OUT_DIR" ${EXTRA[@]+"${EXTRA[@]}"}
    echo "# n=$n gets ~${b}s of the ${TOTAL}s budget, of which ~20s go to process start and NCCL init"
  done
  exit 0
fi

mkdir -p "$OUT_DIR/logs" "$OUT_DIR/runs" "$OUT_DIR/measured"
if [ "$DEVICE" = cuda ]; then
  { nvidia-smi; nvidia-smi topo -m; nvidia-smi -q -d CLOCK,POWER; } > "$OUT_DIR/logs/nvidia-smi.txt" 2>&1
fi
env | grep -E '^(NCCL_|NVSHMEM_|TORCH_|PYTORCH_|CUDA_VISIBLE)' | sort > "$OUT_DIR/logs/env.txt"

status=0
read -r -a sizes <<< "$SIZES"
for i in "${!sizes[@]}"; do
  n=${sizes[$i]}
  now=$(date +%s)
  left=$((T0 + TOTAL - now))
  wsum=0; for m in "${sizes[@]:$i}"; do wsum=$((wsum + $(weight "$m"))); done
  b=$((left * $(weight "$n") / wsum))
  if [ "$b" -lt 30 ]; then
    echo "run_all.sh: n=$n skipped: only ${b}s of budget left" | tee -a "$OUT_DIR/logs/run_all.log" >&2
    continue
  fi
  echo "run_all.sh: n=$n with ${b}s budget ($left s left in total)" | tee -a "$OUT_DIR/logs/run_all.log" >&2
  # A crash or NCCL timeout ends the process; relaunch with --resume (skips what is done) while time is left.
  # Hard guard: a hung process cannot eat the next world size's time; finished points are already on disk.
  : > "$OUT_DIR/logs/harness-n$n.log"
  attempt=0
  while :; do
    resume=(); [ "$attempt" -gt 0 ] && resume=(--resume)
    timeout -k 10 $((b + 45 - $(date +%s) + now)) "$PY" -m torch.distributed.run --standalone --nproc-per-node "$n" \
      "$HERE/train_step.py" --out "$OUT_DIR" --time-budget-s "$b" --start-unix "$now" ${resume[@]+"${resume[@]}"} \
      ${EXTRA[@]+"${EXTRA[@]}"} 2>&1 | tee -a "$OUT_DIR/logs/harness-n$n.log"
    rc=${PIPESTATUS[0]}
    attempt=$((attempt + 1))
    echo "run_all.sh: n=$n launch $attempt exit $rc after $(( $(date +%s) - now ))s" | tee -a "$OUT_DIR/logs/run_all.log" >&2
    [ "$rc" -eq 0 ] && break
    [ $((now + b - $(date +%s))) -lt 40 ] || [ "$attempt" -ge 3 ] && break
    echo "run_all.sh: n=$n relaunching with --resume" | tee -a "$OUT_DIR/logs/run_all.log" >&2
  done
  [ "$rc" -ne 0 ] && status=1
done

points=$(find "$OUT_DIR/measured" -maxdepth 1 -name '*.json' | wc -l)
echo "run_all.sh: done in $(( $(date +%s) - T0 ))s; $points points in $OUT_DIR/measured" \
  | tee -a "$OUT_DIR/logs/run_all.log" >&2
if [ -n "${OUT:-}" ]; then
  tar -czf "$OUT/harness.tar.gz" -C "$(dirname "$OUT_DIR")" "$(basename "$OUT_DIR")" && echo "packed $OUT/harness.tar.gz" >&2
fi
exit $status
