#!/usr/bin/env bash
# Session 26, first call (one nvidia-h200, about 4 minutes): the inputs of the blind check of an MoE program never
# traced, timed or predicted before (validation/session26/README.md): the lease's calibration at its shapes and ONE
# profiler trace of hf-qwen3-moe (transformers' Qwen3MoeForCausalLM, 8 of Qwen3-30B-A3B's layers) at 2x2048
# (blind_traces.sh). Carry build-lease/devbin.txz and run
# `tar xJf build-lease/devbin.txz && bash validation/device/session_traces26.sh`: $OUT/traces26.tar.gz.
exec bash "$(dirname "$0")/blind_traces.sh" 26 hf-qwen3-moe:validation/programs/hf-qwen3-30b-a3b-l8/config.json:2x2048
