#!/usr/bin/env bash
# Dry run of validation/device/session_hostpath15.sh on a CPU machine, so that the device call does not die on a
# shell or Python error: part G (session 15: is the slower rank's host path of N-rank FSDP2 process noise,
# contention, or the slowest of N?) and part H (session 16: the blind check of the slowest-of-N mechanism, scalescope
# import torch-trace --host-process-times, on gpt-ln and hf-llama). Its numbers mean nothing; it checks the plumbing:
#  1. per part, the whole session script, in its order (environment, calibration, trace(s), host timings,
#     predictions, then the launches, report), with BLIND24_CPU_TEST (tiny gpt-ln / Llama, --device cpu, gloo), a
#     stand-in nvidia-smi that reports NGPU H100s (default 4: both world sizes, the alternating launches), 1
#     sequential process per host timing, 1 concurrent round, 1 launch per world size, 2 steps; a devbin of its own
#     in the work folder (scalescope = $SCALESCOPE). The tiny CPU traces hold no GPU kernels, so their import fails
#     and every prediction is "stack missing": expected here (as check_session_cpu.sh);
#  2. per part, hostpath.py predict and report again on stored GPU traces of the same programs (real models) with
#     step 1's host timings and launches: every import (part G: each variant's --host-step-time; part H: `slowest`
#     with --host-process-times, `seq` with --host-step-time), every simulate, and the report's error tables, with
#     numbers. Part G: session 13 part A's gpt-ln-fsdp-mbs8-seq1024. Part H: the same for gpt-ln and session 13
#     part B's hf-llama-fsdp-mbs4-seq2048 (a program whose trace is not stored is skipped, and said so).
#   bash validation/blind24/check_hostpath_cpu.sh [PYTHON] [SCALESCOPE]
# PYTHON: torch + transformers (default /work/wt-blind24/.venv-torch/bin/python, else .venv-torch/bin/python);
# SCALESCOPE: the CLI (default $SCALESCOPE, else build-ci/cli/scalescope, else build-core/cli/scalescope; part H
# needs one with --host-process-times). HOSTPATH_CPU_NGPU=2|4 (default 4); HOSTPATH_CPU_PARTS (default "G H").
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd); cd "$ROOT" || exit 2
PY=${1:-}; [ -n "$PY" ] || { PY=/work/wt-blind24/.venv-torch/bin/python; [ -x $PY ] || PY=$ROOT/.venv-torch/bin/python; }
SS=${2:-${SCALESCOPE:-}}; [ -n "$SS" ] || { SS=$ROOT/build-ci/cli/scalescope; [ -x $SS ] || SS=$ROOT/build-core/cli/scalescope; }
NG=${HOSTPATH_CPU_NGPU:-4}
PARTS=${HOSTPATH_CPU_PARTS:-G H}
W=/tmp/hostpath15-cpu; rm -rf $W; mkdir -p $W/bin $W/tiny $W/devbin
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
echo "scalescope: $SS; python: $PY; NGPU=$NG; parts: $PARTS"
rc=0
fail() { echo "FAILED: $*"; rc=1; }

for PART in $PARTS; do
if [ $PART = G ]; then D=/tmp/hostpath15; PACK=hostpath15; NPTS=3; else D=/tmp/hostpath-$PART; PACK=hostpath-$PART; NPTS=4; fi
O=$W/out-$PART; mkdir -p $O

echo "== $PART.1. the session script --part $PART (NGPU=$NG, CPU, tiny): $W/session-$PART.log"
t=$(date +%s)
PATH=$W/bin:$PATH OUT=$O PY=$PY SCALESCOPE=$W/devbin/scalescope BLIND24_CPU_TEST=$W/tiny BUDGET_S=1500 \
  OMP_NUM_THREADS=1 bash validation/device/session_hostpath15.sh --part $PART > $W/session-$PART.log 2>&1 \
  || fail "session script --part $PART exit $?"
echo "   $(( $(date +%s) - t )) s"
tail -24 $W/session-$PART.log
ls -la $O
# every stage but the calibration (no GPU) must have passed; every launch must have measured its points
awk -F'\t' '$1 != "calibrate" && $2 != "0" {print "stage failed: " $0; bad=1} END {exit bad}' $D/stages.tsv || rc=1
for f in predictions-$PART.json report-$PART.md $PACK-h100.tar.gz; do [ -s $O/$f ] || fail "no $O/$f"; done
if [ $PART = H ]; then
  head -1 $O/report-H.md | grep -q '^### Issue 24, part H:' || fail "report-H.md title: $(head -1 $O/report-H.md)"
fi
$PY - $D $NG $PART $NPTS <<'PYEOF' || rc=1
import glob, json, os, sys
d, ng, part, npts = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
ms = sorted({2, ng})
p = json.load(open(os.path.join(d, f"predictions-{part}.json")))
bad = []
want = {"G": {"seq", "conc-median", "conc-max"}, "H": {"seq", "slowest"}}[part]
progs = {"G": {"": p["host_timings"]}, "H": p["host_timings"]}[part]
for name, hts in progs.items():
    for m in ms:
        h = hts[str(m)]
        v = h["variants"]
        if set(v) != want:
            bad.append(f"{name} M={m}: host variants {sorted(v)}")
        extra = ""
        if part == "H":
            n_conc = sum(len(r["processes"]) for r in h["conc_rounds"])
            if n_conc != m or len(h["process_times"]) != m + len(h["seq"]["processes"]):
                bad.append(f"{name} M={m}: {n_conc} concurrent, {len(h['process_times'])} pooled timings")
            extra = f"; pooled {len(h['process_times'])} ({h['process_times_from']})"
        print(f"   host {name + ' ' if name else ''}M={m}: " + ", ".join(f"{k} {x:.4f} s" for k, x in v.items()) + extra)
meas = glob.glob(os.path.join(d, "launches", "n*-L*", "measured", "*.json"))
if len(meas) != npts * len(ms):
    bad.append(f"{len(meas)} measured point files, expected {npts * len(ms)}")
if len(p["points"]) != npts * len(ms):
    bad.append(f"{len(p['points'])} points predicted, expected {npts * len(ms)}")
print(f"   {len(p['points'])} points predicted (stack missing expected: CPU trace), {len(meas)} measured")
t_pred = p["predicted_utc"]
t_meas = min(json.load(open(f))["measured_utc"] for f in meas) if meas else "9999"
if not t_pred <= t_meas:
    bad.append(f"predictions {t_pred} after the first measurement {t_meas}")
for b in bad:
    print("   FAILED:", b)
sys.exit(1 if bad else 0)
PYEOF

echo "== $PART.2. predict + report on stored GPU traces with step $PART.1's host timings and launches"
mkdir -p $W/gpu-traces-$PART
if [ $PART = G ]; then
  STORED="validation/blind24/session13/A/traces/gpt-ln-fsdp-mbs8-seq1024"
else
  STORED="validation/blind24/session13/A/traces/gpt-ln-fsdp-mbs8-seq1024 validation/blind24/session13/B/traces/hf-llama-fsdp-mbs4-seq2048"
fi
HAVE=""
for s in $STORED; do
  if [ -s $s.json.gz ] && [ -s $s.meta.json ]; then cp $s.json.gz $s.meta.json $W/gpu-traces-$PART/; HAVE="$HAVE $(basename $s)"
  else echo "   no stored trace $s: its program is not checked with numbers"; fi
done
echo "   stored GPU traces:$HAVE"
$PY validation/blind24/hostpath.py predict --part $PART --ngpu $NG --scalescope $W/devbin/scalescope \
  --traces $W/gpu-traces-$PART --host $D/host --cluster $D/node.json --calibration h100-gpu \
  --gpu "stored H200 traces, CPU host timings" --work $W/stacks-$PART --commands $D/commands.tsv \
  -o $W/predictions-$PART.json > $W/predict2-$PART.log 2>&1 || fail "predict --part $PART exit $?"
tail -12 $W/predict2-$PART.log
$PY validation/blind24/hostpath.py report --predictions $W/predictions-$PART.json --launches $D/launches \
  --stages $D/stages.tsv -o $W/report-$PART.md --json $W/report-$PART.json > $W/report2-$PART.log 2>&1 \
  || fail "report --part $PART exit $?"
cat $W/report-$PART.md
$PY - $W/predictions-$PART.json $W/report-$PART.json "$HAVE" <<'PYEOF' || rc=1
import json, sys
p, r, have = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3].split()
part = p.get("part", "G")
variants = {"G": ("seq", "conc-median", "conc-max"), "H": ("slowest", "seq")}[part]
bad = []
if part == "G":
    pts = list(p["points"].values())
else:  # the points of the programs whose trace is stored
    stored = [name for name, t in p["traces"].items() if t["name"] in have]
    pts = [x for x in p["points"].values() if x["program"] in stored]
    print(f"   programs with a stored GPU trace: {stored}")
    if len(stored) != len(have):
        bad.append(f"stored traces {have}, programs {stored}")
    for x in pts:  # the slowest-of-N factor: a number for the slowest variant (n >= 2; below 1 where the
        f = x.get("host_slowest_of_ranks", {})  # samples lie mostly below their median), absent or 1 for seq
        if not isinstance(f.get("slowest"), (int, float)) or f["slowest"] == 1.0:
            bad.append(f"{x['plan']}: slowest-of-N factor {f.get('slowest')}")
        if f.get("seq") not in (None, 1, 1.0):
            bad.append(f"{x['plan']}: seq factor {f.get('seq')}")
    for name, t in p["traces"].items():
        for m, h in p["host_timings"][name].items():
            st = p["stacks"].get(f"{t['key']}-m{m}-slowest", {})
            if t["name"] in have and "--host-process-times" not in st.get("command", ""):
                bad.append(f"{name} M={m}: slowest import without --host-process-times: {st.get('command')}")
            if t["name"] in have and "--host-step-time" in st.get("command", ""):
                bad.append(f"{name} M={m}: slowest import with --host-step-time")
n = sum(1 for x in pts for v in variants if v in x["step_time_s"])
want = len(variants) * len(pts)
print(f"   {n} of {want} (point, variant) predictions from the GPU traces; report variants: {sorted(r['summary'])}; "
      f"groups: {sorted({g for s in r['summary'].values() for g in s})}")
if n != want or len(r["summary"]) != len(variants):
    bad.append(f"{n} of {want} predictions, report variants {sorted(r['summary'])}")
for b in bad:
    print("   FAILED:", b)
sys.exit(1 if bad else 0)
PYEOF
done
[ $rc = 0 ] && echo "== check_hostpath_cpu ($PARTS, NGPU=$NG): OK" || echo "== check_hostpath_cpu ($PARTS, NGPU=$NG): FAILED"
exit $rc
