#!/usr/bin/env bash
# Dry run of validation/device/session_hostpath15.sh (part G of issue 24: is the slower rank's host path of N-rank
# FSDP2 process noise, contention, or the slowest of N?) on a CPU machine, so that the device call does not die on
# a shell or Python error. Its numbers mean nothing; it checks the plumbing only:
#  1. the whole session script, in its order (environment, calibration, trace, host timings, predictions, then the
#     launches, report), with BLIND24_CPU_TEST (tiny gpt-ln, --device cpu, gloo), a stand-in nvidia-smi that reports
#     NGPU H100s (default 4: both world sizes, the alternating launches), 1 process per host variant, 1 concurrent
#     round, 1 launch per world size, 2 steps; a devbin of its own in the work folder (scalescope = this checkout's
#     CLI). The tiny CPU trace holds no GPU kernels, so its import fails and every prediction is "stack missing":
#     expected here (as check_session_cpu.sh);
#  2. hostpath.py predict and report again on a stored GPU trace of the same program (session 13 part A's
#     gpt-ln-fsdp-mbs8-seq1024, real model) with step 1's host timings and launches: the import with each variant's
#     --host-step-time, every simulate, and the report's error tables, with numbers.
#   bash validation/blind24/check_hostpath_cpu.sh [PYTHON] [SCALESCOPE]
# PYTHON: torch + transformers (default /work/wt-blind24/.venv-torch/bin/python, else .venv-torch/bin/python);
# SCALESCOPE: the CLI (default build-ci/cli/scalescope, else build-core/cli/scalescope). HOSTPATH_CPU_NGPU=2|4.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd); cd "$ROOT" || exit 2
PY=${1:-}; [ -n "$PY" ] || { PY=/work/wt-blind24/.venv-torch/bin/python; [ -x $PY ] || PY=$ROOT/.venv-torch/bin/python; }
SS=${2:-}; [ -n "$SS" ] || { SS=$ROOT/build-ci/cli/scalescope; [ -x $SS ] || SS=$ROOT/build-core/cli/scalescope; }
NG=${HOSTPATH_CPU_NGPU:-4}
W=/tmp/hostpath15-cpu; rm -rf $W; mkdir -p $W/bin $W/out $W/tiny $W/devbin
cat > $W/bin/nvidia-smi <<SMI
#!/usr/bin/env bash
N=$NG
SMI
cat >> $W/bin/nvidia-smi <<'SMI'
case "$*" in
  "topo -m") printf '\t'; for i in $(seq 0 $((N - 1))); do printf 'GPU%d\t' $i; done; printf 'CPU Affinity\tNUMA Affinity\tGPU NUMA ID\n'
    for i in $(seq 0 $((N - 1))); do l="GPU$i"; for j in $(seq 0 $((N - 1))); do [ $i = $j ] && l="$l\t X " || l="$l\tNV18"; done
      printf "$l\t0-63\t0\t\tN/A\n"; done
    printf '\nLegend:\n\n  X    = Self\n  NV#  = Connection traversing a bonded set of # NVLinks\n' ;;
  *query-gpu=name*) for i in $(seq 1 $N); do echo "NVIDIA H100 80GB HBM3"; done ;;
  *query-compute-apps*) ;;
  *) echo "stand-in nvidia-smi (validation/blind24/check_hostpath_cpu.sh)" ;;
esac
SMI
chmod +x $W/bin/nvidia-smi
ln -s "$SS" $W/devbin/scalescope
git rev-parse HEAD > $W/devbin/COMMIT
rc=0
fail() { echo "FAILED: $*"; rc=1; }

echo "== 1. the session script (NGPU=$NG, CPU, tiny): $W/session.log"
t=$(date +%s)
PATH=$W/bin:$PATH OUT=$W/out PY=$PY SCALESCOPE=$W/devbin/scalescope BLIND24_CPU_TEST=$W/tiny BUDGET_S=1500 \
  OMP_NUM_THREADS=1 bash validation/device/session_hostpath15.sh > $W/session.log 2>&1 || fail "session script exit $?"
echo "   $(( $(date +%s) - t )) s"
tail -22 $W/session.log
D=/tmp/hostpath15
ls -la $W/out
# every stage but the calibration (no GPU) must have passed; every launch must have measured its points
awk -F'\t' '$1 != "calibrate" && $2 != "0" {print "stage failed: " $0; bad=1} END {exit bad}' $D/stages.tsv || rc=1
for f in predictions-G.json report-G.md hostpath15-h100.tar.gz; do [ -s $W/out/$f ] || fail "no $W/out/$f"; done
$PY - $D $NG <<'EOF' || rc=1
import glob, json, os, sys
d, ng = sys.argv[1], int(sys.argv[2])
ms = sorted({2, ng})
p = json.load(open(os.path.join(d, "predictions-G.json")))
bad = []
for m in ms:
    v = p["host_timings"][str(m)]["variants"]
    if set(v) != {"seq", "conc-median", "conc-max"}:
        bad.append(f"M={m}: host variants {sorted(v)}")
    print(f"   host M={m}: " + ", ".join(f"{k} {x:.4f} s" for k, x in v.items()))
meas = glob.glob(os.path.join(d, "launches", "n*-L*", "measured", "*.json"))
if len(meas) != 3 * len(ms):
    bad.append(f"{len(meas)} measured point files, expected {3 * len(ms)}")
print(f"   {len(p['points'])} points predicted (stack missing expected: CPU trace), {len(meas)} measured")
t_pred = p["predicted_utc"]
t_meas = min(json.load(open(f))["measured_utc"] for f in meas) if meas else "9999"
if not t_pred <= t_meas:
    bad.append(f"predictions {t_pred} after the first measurement {t_meas}")
for b in bad:
    print("   FAILED:", b)
sys.exit(1 if bad else 0)
EOF

echo "== 2. predict + report on a stored GPU trace (session 13 A, gpt-ln-fsdp 8x1024) with step 1's host timings"
S13=validation/blind24/session13/A/traces
mkdir -p $W/gpu-traces
cp $S13/gpt-ln-fsdp-mbs8-seq1024.json.gz $S13/gpt-ln-fsdp-mbs8-seq1024.meta.json $W/gpu-traces/
$PY validation/blind24/hostpath.py predict --ngpu $NG --scalescope $W/devbin/scalescope --traces $W/gpu-traces \
  --host $D/host --cluster $D/node.json --calibration h100-gpu --gpu "stored H200 trace, CPU host timings" \
  --work $W/stacks --commands $D/commands.tsv -o $W/predictions-G.json > $W/predict2.log 2>&1 || fail "predict exit $?"
tail -8 $W/predict2.log
$PY validation/blind24/hostpath.py report --predictions $W/predictions-G.json --launches $D/launches \
  --stages $D/stages.tsv -o $W/report-G.md --json $W/report-G.json > $W/report2.log 2>&1 || fail "report exit $?"
cat $W/report-G.md
$PY - $W/predictions-G.json $W/report-G.json <<'EOF' || rc=1
import json, sys
p, r = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
n = sum(len(x["step_time_s"]) for x in p["points"].values())
want = 3 * len(p["points"])
print(f"   {n} of {want} (point, variant) predictions from the GPU trace; report variants: {sorted(r['summary'])}")
sys.exit(0 if n == want and len(r["summary"]) == 3 else 1)
EOF
[ $rc = 0 ] && echo "== check_hostpath_cpu: OK" || echo "== check_hostpath_cpu: FAILED"
exit $rc
