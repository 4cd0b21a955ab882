# Sourced by device session scripts before they measure. A warm machine may still run workers of an earlier call
# that was cut off (session 7's first try left two torchrun workers spinning in NCCL on GPUs 0-1, and every step
# of the next call ran 1.6-2.2x slower): stop leftover harness processes, refuse to measure beside anything else
# on the GPUs (exit 3), and stop the harness processes this script starts when it exits.
pkill -f validation/harness/ 2>/dev/null; sleep 3; pkill -9 -f validation/harness/ 2>/dev/null; sleep 1
if [ -n "$(nvidia-smi --query-compute-apps=pid --format=csv,noheader)" ]; then
  nvidia-smi; echo "$0: GPUs busy with other processes; not measuring" >&2; exit 3
fi
trap 'pkill -f validation/harness/ 2>/dev/null' EXIT

# The machine and software a session measured on, for the record: device_environment FILE
device_environment() {
  { date -u; nvidia-smi; lscpu | grep -E "Model name|^CPU\(s\)"; uptime
    python3 -c 'import torch;print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())'
  } > "$1" 2>&1
}
