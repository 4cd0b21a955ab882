# Sourced by the device session scripts: record_environment FILE writes what a measurement ran on (UTC time, the GPU,
# its driver, maximum SM clock and power limit, Python / torch / CUDA, the host CPU) to FILE.
record_environment() {
  {
    date -u +%Y-%m-%dT%H:%M:%SZ
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv
    python3 -c "import torch, sys; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda)"
    lscpu | grep -E "Model name|^CPU\(s\)"
  } > "$1" 2>&1
}
