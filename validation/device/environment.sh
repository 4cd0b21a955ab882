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

# mcore_session NAME: the set-up of a Megatron-Core session script (session 30 on): checks that megatron-core is
# unpacked in build-lease/mcore (carried), exports the lease's NCCL settings and PYTHONPATH, makes D=/tmp/NAME with
# its environment.txt, LOG=$D/session.log, and pack(), which tars $D into $OUT/NAME.tar.gz.
mcore_session() {
  : "${OUT:?run on the device machine (OUT is its output folder)}"
  export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
  [ -d build-lease/mcore/megatron/core ] || { echo "$0: no build-lease/mcore (megatron-core unpacked)" >&2; exit 2; }
  D=/tmp/$1; rm -rf "$D"; mkdir -p "$D"
  record_environment "$D/environment.txt"
  LOG=$D/session.log
  PACK_NAME=$1
  pack() { tar czf "$OUT/$PACK_NAME.tar.gz" -C "$D" . ; }
  export PYTHONPATH=$PWD/build-lease/mcore:$PWD/validation/megatron/shim${PYTHONPATH:+:$PYTHONPATH}
}
