# Sourced by the device session scripts: record_environment FILE writes what a measurement ran on (UTC time, the GPU,
# its driver, maximum SM clock and power limit, Python / torch / CUDA, the host CPU) to FILE.
record_environment() {
  {
    date -u +%Y-%m-%dT%H:%M:%SZ
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv
    python3 -c "import torch, sys; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda)"
    lscpu | grep -E "Model name|^CPU\(s\)"
    # The host's speed at a framework's work (host times per layer differ between leases' CPUs).
    timeout 60 python3 "$(dirname "${BASH_SOURCE[0]}")/host_probe.py"
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

# measure_session NAME: the set-up of a one-GPU measurement script (session 37 on): exports the lease's NCCL settings,
# makes W=/tmp/NAME with its environment.txt, refuses to measure beside another process on the GPU (exit 3), and
# defines pack(), which tars $W into $OUT/NAME.tar.gz beside and then renames it, so that a call stopped at its time
# limit mid-tar still returns the last whole one.
measure_session() {
  : "${OUT:?run on the device machine (OUT is its output folder)}"
  export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
  W=/tmp/$1; rm -rf "$W"; mkdir -p "$W"
  record_environment "$W/environment.txt"
  if [ -n "$(nvidia-smi --query-compute-apps=pid --format=csv,noheader)" ]; then
    nvidia-smi; echo "$0: the GPU is busy with other processes; not measuring" >&2; exit 3
  fi
  PACK_NAME=$1
  pack() {
    tar czf "$OUT/$PACK_NAME.part.tgz" -C /tmp "$PACK_NAME" && mv "$OUT/$PACK_NAME.part.tgz" "$OUT/$PACK_NAME.tar.gz"
  }
}

# measure_programs TIMEOUT NAME:PROGRAM:MODEL:SHAPES...: run_steps.py measure of each program (validation/programs) for
# its model at its shapes, 3 warm-up and $STEPS (default 40) timed steps, nvidia-smi beside them, into
# $W/measured-NAME.json and .log; pack() after each.
measure_programs() {
  local limit=$1 p name prog model shapes; shift
  for p in "$@"; do
    IFS=: read -r name prog model shapes <<< "$p"
    timeout "$limit" python3 validation/programs/run_steps.py measure --program "$prog" --model "$model" \
      --shapes "$shapes" --steps "${STEPS:-40}" --smi --out "$W/measured-$name.json" > "$W/measured-$name.log" 2>&1
    echo "measure exit $?" >> "$W/measured-$name.log"
    pack
  done
}

# measure_gpt_ln TIMEOUT NAME:MODEL:SHAPES...: measure_programs of the gpt-ln program.
measure_gpt_ln() {
  local limit=$1 p name model shapes args=(); shift
  for p in "$@"; do
    IFS=: read -r name model shapes <<< "$p"
    args+=("$name:gpt-ln:$model:$shapes")
  done
  measure_programs "$limit" "${args[@]}"
}
