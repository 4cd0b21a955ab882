#!/usr/bin/env bash
# Session 27, second and third calls (one nvidia-h200, about 6 minutes each): the blind check of
# validation/session27/README.md, set p27 (hf-phi3 and the 32-layer model priced from its trace) or o27 (hf-olmo2):
# blind_measure.sh's host timing of the traced program, the predictions by the committed code (both memory-row laws:
# "scaling": "bytes" and the sweep's control) before any measured shape, then every shape. The first call's output
# unpacked into build-lease/traces27 and carried with build-lease/devbin.txz; run
# `tar xJf build-lease/devbin.txz && BLIND9_SET=p27 bash validation/device/session_measure27.sh`:
# $OUT/measure27-p27.tar.gz (o27: measure27-o27.tar.gz).
BLIND9_SET=${BLIND9_SET:?p27 or o27} HOST_SHAPES=${HOST_SHAPES:-1x32,1x256} exec bash "$(dirname "$0")/blind_measure.sh" 27
