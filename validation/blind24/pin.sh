#!/usr/bin/env bash
# torchrun --no-python worker: run_points.py with this rank's process pinned to CPU cores of its own
# (PIN_CORES_PER_RANK cores from LOCAL_RANK * PIN_STRIDE; session 13's launch-to-launch variation check).
set -euo pipefail
n=${PIN_CORES_PER_RANK:-4}; stride=${PIN_STRIDE:-8}
first=$(( LOCAL_RANK * stride ))
exec taskset -c "$first-$(( first + n - 1 ))" python3 validation/blind24/run_points.py "$@"
