#!/usr/bin/env bash
# Fresh Debian machine to a full test run: installs packages, builds with warnings as errors, runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# The Python module is built and tested with the venv's Python (nanobind, pytest, matplotlib from PyPI).
bash scripts/python-env.sh
export VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH"
bash scripts/build.sh ci
export QT_QPA_PLATFORM=offscreen
ctest --preset ci -j "$(nproc)"
