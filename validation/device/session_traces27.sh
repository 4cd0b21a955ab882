#!/usr/bin/env bash
# Session 27, first call (one nvidia-h200, about 4 minutes): the inputs of the blind check of two dense programs never
# traced, timed or predicted before (validation/session27/README.md): the lease's calibration at their shapes and ONE
# profiler trace of each at 2,048 tokens: hf-phi3 (transformers' Phi3ForCausalLM, 12 of Phi-4-mini's layers) at
# 1x2048 and hf-olmo2 (Olmo2ForCausalLM, OLMo-2-0425-1B) at 2x1024 (blind_traces.sh). Carry build-lease/devbin.txz
# (shapes.json: validation/session27/calibration-shapes.json) and run
# `tar xJf build-lease/devbin.txz && bash validation/device/session_traces27.sh`: $OUT/traces27.tar.gz.
exec bash "$(dirname "$0")/blind_traces.sh" 27 \
  hf-phi3:validation/programs/hf-phi4-mini-l12/config.json:1x2048 \
  hf-olmo2:validation/programs/hf-olmo2-0425-1b/config.json:2x1024
