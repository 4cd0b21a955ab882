#!/usr/bin/env bash
# Prepared in session 19 for the next one-GPU lease (about 470 s; nvidia-h200, or nvidia-h100-x1 with TAG h100):
#   tar xJf build-lease/devbin.txz && bash validation/device/session_clock_shapes20.sh h200
# Hypothesis (validation/session19/README.md): the trace import anchors every kernel at the traced shape, whose clock
# is in its kernel times; a GPU-bound shape that runs at a lower SM clock (the power cap: gpt-ln at 1665-1755 MHz,
# hf-llama at 1920-1965 MHz on H200) has its GEMMs priced too fast by about the clock ratio. The traces and every
# measured shape record their SM clock (run_steps.py --smi), the predictions are written before any shape runs, as
# in every blind set: session_traces9.sh (lease calibration, traces), then session_measure9.sh with set s20 (blind9.py
# SHAPES20: GPU-bound shapes never measured before), 3 processes x 20 steps per shape.
# Criteria, committed before it runs, over the GPU-bound shapes of both programs (blind9.py report's clock table):
#  - the clock explains the GPU-bound error: the Pearson correlation of error and (shape clock / trace clock - 1) is
#    at least +0.6 (n >= 8), and the shapes whose clock is 3% or more below their trace's are predicted faster
#    (more negative error) than those within 1% of it, by 2 points or more in the median;
#  - it does not: the correlation is below +0.3, or the shapes within 1% of the trace's clock are as fast (median
#    error -3% or below) as the rest; then the 3-6% lies elsewhere (the calibration's GEMM rates between shapes).
# Lands in $OUT/traces9-TAG.tar.gz and $OUT/measure9-TAG-s20-mp3.tar.gz.
set -uo pipefail
TAG=${1:?usage: session_clock_shapes20.sh TAG}
export RUN_STEPS_SMI=1
bash validation/device/session_traces9.sh "$TAG" || { echo "$0: session_traces9.sh failed: not measuring" >&2; exit 1; }
BLIND9_SESSION_DIR=/tmp/traces9 MEASURE_PROCS=3 MEASURE_STEPS=20 BLIND9_SET=s20 \
  bash validation/device/session_measure9.sh "$TAG"
