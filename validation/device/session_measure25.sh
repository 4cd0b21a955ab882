#!/usr/bin/env bash
# Session 25, second call (one nvidia-h200, about 7 minutes): the blind check of validation/session25/README.md, set
# n25 (blind_measure.sh: host timing, the predictions by the committed code before any measured shape, the shapes).
# The first call's output unpacked into build-lease/traces25 and carried with build-lease/devbin.txz; run
# `tar xJf build-lease/devbin.txz && bash validation/device/session_measure25.sh`: $OUT/measure25-n25.tar.gz.
# BLIND9_SET=m25 HOST_SHAPES=1x32 (the second check: steps of several micro-batches) writes measure25-m25.tar.gz.
BLIND9_SET=${BLIND9_SET:-n25} exec bash "$(dirname "$0")/blind_measure.sh" 25
