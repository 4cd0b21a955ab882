#!/usr/bin/env bash
# Fresh Debian machine to first prediction: installs packages, builds, runs the default job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh default
exec bash scripts/default-job.sh
