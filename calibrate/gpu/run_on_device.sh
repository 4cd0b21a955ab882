#!/usr/bin/env bash
# Runs scalescope-calibrate on a GPU machine, from the repository root, against the CUDA runtime,
# NCCL and cuBLAS of the machine's pip wheels (nvidia-cuda-runtime, nvidia-nccl-cu13, nvidia-cublas).
#
# Usage: calibrate/gpu/run_on_device.sh OUTPUT.json [TIME_BUDGET_S] [more scalescope-calibrate options]
#   e.g. calibrate/gpu/run_on_device.sh "$OUT/h200x4.json" 480
#        calibrate/gpu/run_on_device.sh "$OUT/smoke.json" 60 --quick
# The binary is build-gpu/calibrate/gpu/scalescope-calibrate unless SCALESCOPE_CALIBRATE_BIN names
# another. stderr (progress) is also written to OUTPUT with .log instead of .json. The exit status
# is the program's (0 ok, 1 GPU/runtime failure with a partial profile, 2 bad options), or 1 when
# this script cannot start it.
set -u

out="${1:-}"
if [ -z "$out" ]; then
  echo "usage: $0 OUTPUT.json [TIME_BUDGET_S] [scalescope-calibrate options...]" >&2
  exit 2
fi
budget="${2:-480}"
shift
[ $# -gt 0 ] && shift
bin="${SCALESCOPE_CALIBRATE_BIN:-build-gpu/calibrate/gpu/scalescope-calibrate}"
log="${out%.json}.log"
[ "$log" = "$out" ] && log="$out.log"

# Keep NVLink multicast off: a program using it can take a shared host's GPUs out of service.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
# NCCL prints its warnings (the reason behind a failed call) only when asked to.
export NCCL_DEBUG="${NCCL_DEBUG:-WARN}"

if SP=$(python3 -c 'import site;print(site.getsitepackages()[0])' 2>/dev/null) && [ -d "$SP/nvidia" ]; then
  export LD_LIBRARY_PATH="$(find "$SP/nvidia" -name lib -type d | sort | tr '\n' :)${LD_LIBRARY_PATH:-}"
else
  echo "run_on_device: WARNING: no pip nvidia packages found (python3 site-packages: ${SP:-none}); using the system libraries" >&2
fi

echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) $(hostname) $(nproc) CPUs"
echo "== nvidia-smi"
nvidia-smi || echo "run_on_device: WARNING: nvidia-smi failed (exit $?)"
echo "== nvidia-smi topo -m"
nvidia-smi topo -m || echo "run_on_device: WARNING: nvidia-smi topo -m failed (exit $?)"
echo "== LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
echo "== binary: $bin"
if [ ! -x "$bin" ]; then
  echo "run_on_device: ERROR: $bin is missing or not executable (carry the build folder, or set SCALESCOPE_CALIBRATE_BIN)" >&2
  exit 1
fi
echo "== ldd $bin"
ldd "$bin"
if ldd "$bin" | grep -q "not found"; then
  echo "run_on_device: ERROR: shared libraries not found (see ldd above)" >&2
  exit 1
fi

mkdir -p "$(dirname "$out")" || { echo "run_on_device: ERROR: cannot create $(dirname "$out")" >&2; exit 1; }
echo "== $bin -o $out --time-budget-s $budget $* (progress also in $log)"
rc=0
{
  "$bin" -o "$out" --time-budget-s "$budget" "$@" 2>&1 1>&3 3>&- | tee "$log" >&2 3>&-
  rc=${PIPESTATUS[0]}
} 3>&1
echo "== scalescope-calibrate exit status $rc; profile: $out; log: $log"
if [ ! -s "$out" ]; then
  echo "run_on_device: ERROR: no profile was written to $out" >&2
  [ "$rc" -eq 0 ] && rc=1
fi
exit "$rc"
