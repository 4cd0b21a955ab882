#!/usr/bin/env bash
# Dry run of validation/device/session_blind24.sh on a CPU machine, so that a device call does not die on a shell
# or Python error: every stage runs (tiny models, gloo, a stand-in nvidia-smi that reports 4 H100s with the
# NVLink matrix of the lent 4x H200 box), with devbin/scalescope the CLI of this checkout. The traces hold no GPU
# kernels, so their import fails and every prediction is recorded as "stack missing": that is expected here.
#   bash validation/blind24/check_session_cpu.sh [PYTHON] [SCALESCOPE]     (defaults as check_cpu.sh)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd); cd "$ROOT"
PY=${1:-$ROOT/.venv-torch/bin/python}
SS=${2:-$ROOT/build-core/cli/scalescope}
W=/tmp/blind24-session-cpu; rm -rf $W; mkdir -p $W/bin $W/out $W/tiny
cat > $W/bin/nvidia-smi <<'SMI'
#!/usr/bin/env bash
case "$*" in
  "topo -m") printf '\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n'
    for i in 0 1 2 3; do l="GPU$i"; for j in 0 1 2 3; do [ $i = $j ] && l="$l\t X " || l="$l\tNV18"; done
      printf "$l\t0-63\t0\t\tN/A\n"; done
    printf '\nLegend:\n\n  X    = Self\n  NV#  = Connection traversing a bonded set of # NVLinks\n' ;;
  *query-gpu=name*) for i in 0 1 2 3; do echo "NVIDIA H100 80GB HBM3"; done ;;
  *query-compute-apps*) ;;
  *) echo "stand-in nvidia-smi (validation/blind24/check_session_cpu.sh)" ;;
esac
SMI
chmod +x $W/bin/nvidia-smi
mkdir -p devbin
[ -e devbin/scalescope ] || ln -s "$SS" devbin/scalescope
[ -e devbin/COMMIT ] || git rev-parse HEAD > devbin/COMMIT
rc=0
for part in ${BLIND24_PARTS:-A B C}; do
  echo "== part $part"
  PATH=$W/bin:$PATH OUT=$W/out PY=$PY BLIND24_CPU_TEST=$W/tiny BUDGET_S=1500 OMP_NUM_THREADS=1 \
    bash validation/device/session_blind24.sh --part $part > $W/session-$part.log 2>&1 || rc=1
  tail -25 $W/session-$part.log
done
ls -la $W/out
exit $rc
