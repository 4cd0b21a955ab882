#!/usr/bin/env bash
# The device machines take at most 64 MiB of working tree per call (tracked files travel whether the command needs
# them or not; /work/.library/device/README.md), and the tracked tree is larger (79 MiB at session 36, most of it the
# multi-GPU checks' profiler traces). `park` moves the folders no device script reads out of the checkout, `restore`
# moves them back; git sees them as deleted in between, so commit nothing while parked.
#
#   bash scripts/device-park.sh park      # before a device call
#   bash scripts/device-park.sh restore   # right after it
# SCALESCOPE_PARK_MORE="folder ..." parks more (a call that carries a large bundle); `restore` moves back what `park`
# recorded in $PARK/folders.txt, whatever the environment says then.
set -euo pipefail
cd "$(dirname "$0")/.."
PARK=${SCALESCOPE_PARK_DIR:-/tmp/scalescope-parked}
FOLDERS=(validation/blind24 validation/session17)  # traces and reports only: no device script reads them
# shellcheck disable=SC2206
FOLDERS+=(${SCALESCOPE_PARK_MORE:-})
case "${1:-}" in
  park)
    [ -e "$PARK" ] && { echo "$0: $PARK exists: restore first" >&2; exit 1; }
    mkdir -p "$PARK/validation"
    for f in "${FOLDERS[@]}"; do mv "$f" "$PARK/$f"; echo "$f" >> "$PARK/folders.txt"; done
    echo "parked ${FOLDERS[*]} in $PARK; run '$0 restore' after the device call" ;;
  restore)
    [ -d "$PARK" ] || { echo "$0: nothing parked in $PARK" >&2; exit 1; }
    [ -s "$PARK/folders.txt" ] || { echo "$0: $PARK/folders.txt missing: move its folders back by hand" >&2; exit 1; }
    mapfile -t FOLDERS < "$PARK/folders.txt"
    for f in "${FOLDERS[@]}"; do
      if [ -e "$f" ]; then echo "$0: $f exists in the checkout; leaving $PARK/$f" >&2; exit 1; fi
      mv "$PARK/$f" "$f"
    done
    rm -rf "$PARK"; echo "restored ${FOLDERS[*]}" ;;
  *) echo "usage: $0 park|restore" >&2; exit 2 ;;
esac
