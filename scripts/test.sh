#!/usr/bin/env bash
# Fresh Debian machine to a full test run: installs packages, builds with warnings as errors, runs every test,
# then builds again with the sanitizers and runs the tests and the fuzz targets under them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# The Python module is built and tested with the venv's Python (nanobind, pytest, matplotlib from PyPI).
bash scripts/python-env.sh
export VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH"
bash scripts/build.sh ci
export QT_QPA_PLATFORM=offscreen
ctest --preset ci -j "$(nproc)"
# The same tests under AddressSanitizer + UndefinedBehaviorSanitizer (clang, preset asan: core libraries, CLI, GoogleTests,
# golden and hostile-input tests, the fuzz targets; no GUI, CUDA or benchmarks; no Python module, which the venv's
# interpreter cannot load with the sanitizer runtime, and no MPI plugin, whose OpenMPI allocations LeakSanitizer reports),
# which also runs each fuzz target for 20 s over its seed corpus and replays the committed crash reproducers
# (docs/robustness.md has the timings: this stage adds about 30 of the 90 minutes CI has on 2 cores).
cmake --preset asan -G Ninja -DSCALESCOPE_BUILD_MPI=OFF -DSCALESCOPE_BUILD_PYTHON=OFF
cmake --build --preset asan -j "$(nproc)"
ctest --preset asan -j "$(nproc)"
