#!/usr/bin/env bash
# Fresh Debian machine to a full test run: installs packages, builds with warnings as errors, runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh ci
export QT_QPA_PLATFORM=offscreen
ctest --preset ci -j "$(nproc)"
