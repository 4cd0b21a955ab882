#!/usr/bin/env bash
# Keeps the working tree a device call sends under its 64 MiB limit. A call sends the tracked tree (what is checked
# out) plus what it carries; at session 21 the tracked files were 63.5 MB and a call carrying devbin.txz (1.9 MB) was
# refused as "larger than 64 MiB". The raw profiler traces of earlier sessions (validation/**/traces, diag traces and
# profiles, about 25 MB) are records, not inputs of any device script, so a sparse checkout leaves them out of the
# working tree while the device works; the two traces the tests read stay.
#   bash validation/device/slim_tree.sh          leave the old profiler traces out of the working tree
#   bash validation/device/slim_tree.sh --undo   check everything out again (before running the tests)
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ "${1:-}" = --undo ]; then
  git sparse-checkout disable
  echo "$0: every tracked file checked out again"
  exit 0
fi
git sparse-checkout set --no-cone '/*' \
  '!/validation/blind24/session1[1-8]/**/*.json.gz' \
  '!/validation/h200x4-interleaved/profile/*.json.gz' \
  '!/validation/session17/**/diag-traces/*' \
  '!/validation/session9/*/traces/*.json.gz' \
  '!/validation/session1[7-8]/*/traces/*.json.gz' \
  '!/validation/session24/*/traces/*.json.gz' \
  '!/validation/session25/*/traces/*.json.gz' \
  '/validation/session9/h100/traces/gpt-ln-mbs4-seq768.json.gz'
present=$(git ls-files -t | awk '$1 == "H" {print substr($0, 3)}' | tr '\n' '\0' | du -cb --files0-from=- | tail -1 | cut -f1)
echo "$0: $(git ls-files -t | grep -c '^S') tracked files left out; the working tree's tracked files: $present bytes" \
     "(undo with --undo before running the tests)"
