#!/usr/bin/env bash
# Packs devbin/ (scalescope, scalescope-calibrate, COMMIT, shapes.json, nccl-tests.tar.gz: the binaries the device
# scripts run, built here from one commit) into build-lease/devbin.txz, which a device call carries instead of
# devbin/ itself. Why: a call sends the tracked tree plus what it carries, at most 64 MiB, and at session 18 the
# tracked tree was 61 MB and devbin/ 7 MB; compressed it is 3 MB.
#   bash validation/device/pack_devbin.sh
# then, in the device call: carry ["build-lease/devbin.txz"] and begin the command with
#   tar xJf build-lease/devbin.txz && ...
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -x devbin/scalescope ] || { echo "$0: no devbin/scalescope: build it (strip -o devbin/scalescope build-ci/cli/scalescope)" >&2; exit 2; }
[ -s devbin/COMMIT ] || { echo "$0: no devbin/COMMIT: write the commit the binaries were built from" >&2; exit 2; }
mkdir -p build-lease
# xz, and nccl-tests as its binaries rather than their .tar.gz (xz compresses them 15% better than gzip): at session 19
# devbin/ with nccl-tests packs into 2.3 MB, against 5.7 MB with gzip, which no longer fitted beside the tree.
[ -d devbin/nccl-tests ] || [ ! -s devbin/nccl-tests.tar.gz ] || tar xzf devbin/nccl-tests.tar.gz -C devbin
tar cJf build-lease/devbin.txz.tmp --exclude=devbin/nccl-tests.tar.gz devbin
mv build-lease/devbin.txz.tmp build-lease/devbin.txz
rm -f build-lease/devbin.tgz
tracked=$(git ls-files -t | awk '$1 == "H" {print substr($0, 3)}' | tr '\n' '\0' | du -cb --files0-from=- | tail -1 | cut -f1)
packed=$(stat -c %s build-lease/devbin.txz)
echo "build-lease/devbin.txz: $packed bytes (devbin of commit $(cut -c1-7 devbin/COMMIT)); tracked tree $tracked bytes;" \
     "together $(( (tracked + packed) / 1048576 )) of 64 MiB"
# Session 21: a call at 62 MiB by this count was refused as larger than 64 MiB (the device tool counts otherwise).
[ $(( (tracked + packed) / 1048576 )) -lt 56 ] || echo "$0: near the limit: bash validation/device/slim_tree.sh" \
  "leaves the old profiler traces out of the working tree for the device calls (--undo afterwards)"
