#!/usr/bin/env bash
# Session 25, first call (one nvidia-h200, about 4 minutes): the inputs of the blind check of two programs never
# traced, timed or predicted before (validation/session25/README.md): the lease's calibration at their shapes and ONE
# profiler trace of each, hf-qwen3 at 2x2048 and hf-neox at 4x1024 (blind_traces.sh). Carry build-lease/devbin.txz
# and run `tar xJf build-lease/devbin.txz && bash validation/device/session_traces25.sh`: $OUT/traces25.tar.gz.
exec bash "$(dirname "$0")/blind_traces.sh" 25 hf-qwen3:validation/programs/hf-qwen3-0.6b/config.json:2x2048 \
  hf-neox:validation/programs/hf-pythia-1b/config.json:4x1024
