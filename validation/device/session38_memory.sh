#!/usr/bin/env bash
# Session 38, one GPU (nvidia-h100-x1 or nvidia-h200), one call (about 7 minutes): the blind check of the built-in
# pytorch-eager stack's memory rules (validation/session38/README.md). The predictions were committed before the call
# (validation/session38/predictions.json, by validation/session38/blind_memory.py predict); this script only measures.
# Five programs at model sizes never run before, each at two or three of its predicted shapes (device time was short: several leases could not be started) (the smallest first: its peak is the optimizer
# step's), 3 warm-up and 5 timed steps, nvidia-smi beside. Run `bash validation/device/session38_memory.sh`.
set -uo pipefail
source validation/device/environment.sh
measure_session s38mem  # W=/tmp/s38mem, pack()
STEPS=5 measure_programs 100 \
  gpt-ln-h2560:gpt-ln:validation/programs/gpt-ln-h2560-v32k.json:1x256,4x4096,4x8192 \
  tinyllama:hf-llama:validation/programs/hf-tinyllama-1.1b/config.json:1x128,4x2048,1x8192 \
  qwen3-1.7b:hf-qwen3:validation/programs/hf-qwen3-1.7b/config.json:1x128,2x2048 \
  gpt2-large:hf-gpt2:validation/programs/hf-gpt2-large/config.json:1x128,4x1024,2x2048 \
  neox-410m:hf-neox:validation/programs/hf-pythia-410m/config.json:1x128,8x2048,4x8192
pack
