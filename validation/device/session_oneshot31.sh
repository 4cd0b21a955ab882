#!/usr/bin/env bash
# Session 31, blind check of the trace import on transformers' GPT-2 in ONE call (one nvidia-h200, about 6 minutes;
# validation/session31/README.md, section 3): the lease's calibration at hf-gpt2's shapes and its trace at 3x768
# (blind_traces.sh), then on the same lease its host timing at 1x32, the PREDICTIONS of set g31 by the committed code
# (devbin/COMMIT) before any measured shape, and the shapes (blind_measure.sh). Carry build-lease/devbin.txz
# (shapes.json: validation/session31/calibration-shapes-g31.json) and run
# `tar xJf build-lease/devbin.txz && bash validation/device/session_oneshot31.sh`: $OUT/traces31g.tar.gz and
# $OUT/measure31g-g31.tar.gz.
set -uo pipefail
: "${OUT:?run on the device machine (OUT is its output folder)}"
here=$(dirname "$0")
bash "$here/blind_traces.sh" 31g hf-gpt2:validation/programs/hf-gpt2-medium/config.json:3x768
mkdir -p build-lease/traces31g && tar xzf "$OUT/traces31g.tar.gz" -C build-lease/traces31g
BLIND9_SET=g31 HOST_SHAPES=1x32 bash "$here/blind_measure.sh" 31g
