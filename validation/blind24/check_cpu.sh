#!/usr/bin/env bash
# CPU check of the blind-check programs before device time is spent on them (gloo, tiny models): every point of
# both parts on world sizes 1, 2 and 4, the one-GPU trace path of every traced program, the families against the
# one-process program (check_equivalence.py), the NCCL launch-mode log writer and its import by
# `scalescope import nccl-tests`.
#   bash validation/blind24/check_cpu.sh [PYTHON] [SCALESCOPE]
# PYTHON: a Python with torch and transformers (default .venv-torch/bin/python, git-ignored: `python3 -m venv
# .venv-torch && .venv-torch/bin/pip install torch==2.11.0 transformers==5.17.0`); SCALESCOPE: the CLI (default
# build-core/cli/scalescope). What the CPU cannot run is reported, not hidden: context parallelism (torch's ring
# attention dispatches only the CUDA flash / efficient / cuDNN SDPA kernels), torch._scaled_mm and torch._grouped_mm
# (the FP8 and MoE programs fall back to the same arithmetic in fp32 / a loop of matmuls on the CPU).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd); cd "$ROOT"
PY=${1:-$ROOT/.venv-torch/bin/python}
SS=${2:-$ROOT/build-core/cli/scalescope}
W=${CHECK_DIR:-/tmp/blind24-cpu}; rm -rf $W; mkdir -p $W
export OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1
fail=0
run() { local name=$1; shift; echo "== $name: $*"; if "$@" > $W/$name.log 2>&1; then echo "   ok"; else echo "   FAILED (exit $?), $W/$name.log:"; tail -30 $W/$name.log; fail=1; fi; }

# Tiny models of every kind (tiny.TINY), for the traces.
$PY - "$W" <<'EOF'
import json, os, sys
sys.path.insert(0, "validation/blind24")
import tiny
w = sys.argv[1]
for k, cfg in tiny.TINY.items():
    if k == "moe":
        cfg = dict(cfg, experts=8, top_k=2)
    json.dump(cfg, open(os.path.join(w, f"{k}.json"), "w"))
EOF
for spec in gpt-ln:gpt gpt-ln-fsdp:gpt gpt-ln-fp8:gpt hf-llama:llama hf-llama-fsdp:llama moe:moe; do
  prog=${spec%%:*}; m=${spec##*:}
  run trace-$prog $PY validation/programs/run_steps.py trace --device cpu --program $prog --model $W/$m.json \
    --mbs 2 --seq 32 --out $W/traces --name $prog --host-shape 1x16 --host-steps 3
done
for part in A B; do
  run points-$part-n1 $PY validation/blind24/run_points.py --part $part --gpus 1 --device cpu --tiny --warmup 1 \
    --steps 2 --out $W/run
  for n in 2 4; do
    run points-$part-n$n $PY -m torch.distributed.run --standalone --nproc-per-node $n \
      validation/blind24/run_points.py --part $part --device cpu --tiny --warmup 1 --steps 2 --out $W/run
  done
done
# Which points measured on the CPU, which failed (context parallelism is expected to: CUDA SDPA kernels only).
$PY - "$W/run" <<'EOF'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/summary-*.json")):
    d = json.load(open(f))
    for pid, r in d["points"].items():
        print(f"{f.split('/')[-1]:22s} {pid:36s} {r['status']:9s} {r.get('reason', '')[:150]}")
EOF
for n in 2 4; do  # the families compute the one-process program's loss and gradients
  run equivalence-n$n $PY -m torch.distributed.run --standalone --nproc-per-node $n validation/blind24/check_equivalence.py
  grep -E "PASS|FAIL" $W/equivalence-n$n.log
done
run nccl-modes $PY -m torch.distributed.run --standalone --nproc-per-node 4 validation/blind24/nccl_modes.py \
  --device cpu --out $W/nccl --max-bytes 64K --warmup 1 --iters 3
if [ -x "$SS" ]; then
  for f in $W/nccl/*.log; do run import-$(basename $f .log) $SS import nccl-tests $f -o ${f%.log}.json; done
fi
run report-arithmetic $PY validation/blind24/check_report.py
exit $fail
