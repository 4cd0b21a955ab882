#!/usr/bin/env bash
# Session 26, third check in ONE call (one nvidia-h200, about 5 minutes; validation/session26/README.md): the lease's
# calibration at hf-qwen2-moe's shapes and its trace at 2x2048 (blind_traces.sh), then on the same lease its host
# timing at 1x32, the PREDICTIONS of set w26 by the committed code before any measured shape, and the shapes
# (blind_measure.sh). Carry build-lease/devbin.txz (shapes.json: validation/session26/calibration-shapes-w26.json)
# and run `tar xJf build-lease/devbin.txz && bash validation/device/session_oneshot26.sh`: $OUT/traces26w.tar.gz and
# $OUT/measure26w-w26.tar.gz.
set -uo pipefail
: "${OUT:?run on the device machine (OUT is its output folder)}"
here=$(dirname "$0")
bash "$here/blind_traces.sh" 26w hf-qwen2-moe:validation/programs/hf-qwen1.5-moe-a2.7b-l8/config.json:2x2048
mkdir -p build-lease/traces26w && tar xzf "$OUT/traces26w.tar.gz" -C build-lease/traces26w
BLIND9_SET=w26 HOST_SHAPES=1x32 bash "$here/blind_measure.sh" 26w
