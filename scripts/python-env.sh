#!/usr/bin/env bash
# Creates the virtual environment .venv (or $1) with what the Python module's CMake build, tests and example need
# from PyPI (python/requirements-dev.txt). Safe to re-run. Then: . .venv/bin/activate before configuring.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${1:-.venv}"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/pip" install -q --disable-pip-version-check -r python/requirements-dev.txt
