#!/usr/bin/env bash
# Measures a sweep's wall time on 1, 2 and 4 MPI ranks (one thread each) and the per-point cost, and checks that
# every run wrote the same bytes. Usage: scripts/sweep-speedup.sh [SPEC] [BUILD_DIR]  (default examples/sweep.json, build-ci)
set -euo pipefail
cd "$(dirname "$0")/.."
SPEC="${1:-examples/sweep.json}"
EXE="${2:-build-ci}/cli/scalescope"
OUT="$(mktemp -d)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
points=$(python3 -c "import json,sys; s=json.load(open('$SPEC')); import math; print(len(s['points']) if 'points' in s else math.prod(len(s.get(k,[''])) for k in ['models','clusters','gpus','global_batches','calibrations','stacks','constraints' if s['mode']=='plan' else 'plans']))")
echo "spec $SPEC: $points points; $(nproc) cores; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
# Wall seconds and CPU seconds (user + system, all ranks) of one command.
t() { /usr/bin/time -f "%e %U %S" -o "$OUT/time" "$@" >/dev/null 2>&1; awk '{printf "%s %.2f", $1, $2 + $3}' "$OUT/time"; }
read -r one one_cpu <<<"$(t "$EXE" sweep "$SPEC" -o "$OUT/np0.csv" --threads 1 -q)"
echo "1 process, 1 thread (no MPI): ${one} s wall, ${one_cpu} s CPU, $(echo "scale=3; $one_cpu / $points" | bc) CPU s per point"
for np in 1 2 4; do
  read -r w cpu <<<"$(t mpirun --oversubscribe -np "$np" "$EXE" sweep "$SPEC" -o "$OUT/np$np.csv" -q)"
  cmp -s "$OUT/np0.csv" "$OUT/np$np.csv" && same=identical || same=DIFFERENT
  echo "mpirun -np $np: ${w} s wall, ${cpu} s CPU (all ranks), speed-up $(echo "scale=2; $one / $w" | bc) (output $same)"
done
rm -rf "$OUT"
