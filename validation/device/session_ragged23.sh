#!/usr/bin/env bash
# Session 23, one H200, one call (about 30 s): does cuDNN's fused attention (Transformer Engine's kernel) get cheaper
# on packed documents? (validation/attention/measure_ragged.py; the two readings are in its docstring and in
# validation/attention/packed23/README.md, "Ragged cuDNN", both committed before this ran.)
set -uo pipefail
: "${OUT:?run on the device machine (OUT is its output folder)}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
W=/tmp/ragged23
mkdir -p "$W"
source validation/device/environment.sh
record_environment "$W/environment.txt"
python3 -c "import torch; print('cudnn', torch.backends.cudnn.version())" >> "$W/environment.txt" 2>&1
python3 validation/attention/measure_ragged.py "$W/ragged-measured.json" 2> "$W/log.txt"
echo "exit $?" >> "$W/log.txt"
tar czf "$OUT/ragged23.tar.gz" -C /tmp ragged23
tail -8 "$W/log.txt"
