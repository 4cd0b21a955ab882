#!/usr/bin/env bash
# Fresh Debian machine to a full test run: installs packages, builds with warnings as errors, runs every test,
# then again under the sanitizers with the fuzz targets.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh ci
export QT_QPA_PLATFORM=offscreen
ctest --preset ci -j "$(nproc)"
# The same tests under AddressSanitizer + UndefinedBehaviorSanitizer (clang), and each fuzz target for
# SCALESCOPE_FUZZ_SECONDS over its seed corpus and committed crash reproducers (docs/robustness.md).
bash scripts/build.sh asan
ctest --preset asan -j "$(nproc)"
