#!/usr/bin/env bash
# Packs devbin/ (scalescope, scalescope-calibrate, COMMIT, shapes.json, nccl-tests.tar.gz: the binaries the device
# scripts run, built here from one commit) into build-lease/devbin.tgz, which a device call carries instead of
# devbin/ itself. Why: a call sends the tracked tree plus what it carries, at most 64 MiB, and at session 18 the
# tracked tree was 61 MB and devbin/ 7 MB; compressed it is 3 MB.
#   bash validation/device/pack_devbin.sh
# then, in the device call: carry ["build-lease/devbin.tgz"] and begin the command with
#   tar xzf build-lease/devbin.tgz && ...
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -x devbin/scalescope ] || { echo "$0: no devbin/scalescope: build it (strip -o devbin/scalescope build-ci/cli/scalescope)" >&2; exit 2; }
[ -s devbin/COMMIT ] || { echo "$0: no devbin/COMMIT: write the commit the binaries were built from" >&2; exit 2; }
mkdir -p build-lease
tar czf build-lease/devbin.tgz.tmp devbin
mv build-lease/devbin.tgz.tmp build-lease/devbin.tgz
tracked=$(git ls-files -z | du -cb --files0-from=- | tail -1 | cut -f1)
packed=$(stat -c %s build-lease/devbin.tgz)
echo "build-lease/devbin.tgz: $packed bytes (devbin of commit $(cut -c1-7 devbin/COMMIT)); tracked tree $tracked bytes;" \
     "together $(( (tracked + packed) / 1048576 )) of 64 MiB"
