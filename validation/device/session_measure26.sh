#!/usr/bin/env bash
# Session 26, second call (one nvidia-h200, about 6 minutes): the blind check of validation/session26/README.md, set
# q26 (blind_measure.sh: host timing of the traced program, the predictions by the committed code before any measured
# shape, every shape of the program and of its two model variants). The first call's output unpacked into
# build-lease/traces26 and carried with build-lease/devbin.txz; run
# `tar xJf build-lease/devbin.txz && bash validation/device/session_measure26.sh`: $OUT/measure26-q26.tar.gz.
# BLIND9_SET=m26 HOST_SHAPES=1x32 (the second check, after the memory fix) writes measure26-m26.tar.gz.
BLIND9_SET=${BLIND9_SET:-q26} exec bash "$(dirname "$0")/blind_measure.sh" 26
