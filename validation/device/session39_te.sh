#!/usr/bin/env bash
# Session 39 (issue 20): Megatron-Core 0.16.1 with Transformer Engine 2.20.2 on one GPU, the cases of
# validation/session39/te_check.py (predictions committed before this runs), each in its own process:
# validation/megatron/mcore_te_step.py's step time, GPU busy time and kernels, and for the Llama 2 cases the host time
# per layer. The bundle (build-lease/te/site.tar.xz, made here by validation/device/te_bundle.sh) is carried:
#   run: bash validation/device/session39_te.sh   (carry build-lease/te)   ->   $OUT/te39.tar.gz
# SET=2 runs the second set (te_check.py --set 2), SET="3 2" the third then the second; CASES="name ..." runs some
# of them; EXTRA_ARGS is added to every case's arguments (e.g. "--sustain 60"). CALIBRATE=1 first times the
# cases' GEMMs with scalescope-calibrate (carry build-lease/devbin.txz too; validation/session39/gemm-shapes.json):
# $D/lease-gemm.json, the lease's own GEMM rates. About 4 minutes on an H100, 2 more with CALIBRATE=1.
set -uo pipefail
: "${OUT:?run on the device machine (OUT is its output folder)}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
[ -s build-lease/te/site.tar.xz ] || { echo "$0: no build-lease/te/site.tar.xz (validation/device/te_bundle.sh)" >&2; exit 2; }
D=/tmp/te39; rm -rf $D; mkdir -p $D/site $D/traces
source validation/device/environment.sh
record_environment $D/environment.txt
# Results and logs in one file, the profiled steps' traces in another (it may pass the 16 MiB a file can bring back).
pack() { tar czf $OUT/te39.tar.gz -C $D --exclude ./site --exclude ./traces . ; tar czf $OUT/te39-traces.tar.gz -C $D traces ; }
tar xJf build-lease/te/site.tar.xz -C $D/site || { echo "bundle did not unpack" | tee $D/session.log; pack; exit 3; }
# Transformer Engine looks for cuDNN, NVRTC and cuRAND in the system first: point it at the lease's torch wheels' own
# (cuDNN: mcore_te_step.py points it at the file torch loaded).
NV=$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(os.path.dirname(torch.__file__)), "nvidia"))')
export NVRTC_HOME=$NV/cu13 CURAND_HOME=$NV/cu13
# cuDNN loads its sub-libraries by name: find torch's 9.19 before the system's 9.14 (/usr/lib/x86_64-linux-gnu).
export LD_LIBRARY_PATH=$NV/cudnn/lib:$NV/cu13/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
{ echo "cuDNN files:"; timeout 20 find / -xdev -name "libcudnn.so*" 2>/dev/null | head -20
  python3 -c "import torch; print('torch cudnn', torch.backends.cudnn.version()); \
print([l.split()[-1] for l in open('/proc/self/maps') if 'libcudnn.so' in l][:1])"; } >> $D/environment.txt 2>&1
export PYTHONPATH=$D/site${PYTHONPATH:+:$PYTHONPATH}
LOG=$D/session.log
python3 -c "import sys; sys.path.insert(0, 'validation/megatron'); import mcore_te_step, torch, transformer_engine, \
transformer_engine.pytorch as te, megatron.core as mc; print('cudnn', torch.backends.cudnn.version(), mcore_te_step.CUDNN_LIBRARY); \
print('te', transformer_engine.__version__, 'mcore', mc.__version__, 'torch', torch.__version__, \
'fp8', te.is_fp8_available())" 2>&1 | tail -20 | tee -a $LOG
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "import failed" | tee -a $LOG; pack; exit 4; }
if [ "${CALIBRATE:-0}" = 1 ]; then
  echo "== $(date -u +%T) scalescope-calibrate, the cases' GEMMs" | tee -a $LOG
  tar xJf build-lease/devbin.txz && cp devbin/COMMIT $D/devbin-commit.txt
  SCALESCOPE_CALIBRATE_BIN=devbin/scalescope-calibrate timeout 300 bash calibrate/gpu/run_on_device.sh \
    $D/lease-gemm.json "${CAL_BUDGET:-200}" --gpus 1 --sections gemm --gemm-grid none --gemm-dtypes bf16,fp8_e4m3,fp8_e4m3_fast \
    --gemm-shapes validation/session39/gemm-shapes.json > /dev/null 2>&1
  echo "scalescope-calibrate exit $?" | tee -a $LOG
  tail -3 $D/lease-gemm.log 2>/dev/null | tee -a $LOG
  pack
fi
# SET may name several sets ("3 2"): run in that order. A case is not started once the call has run STOP_AFTER
# seconds (default 480: a call may last 600), so that what ran still comes back.
: > $D/cases.txt
for set in ${SET:-1}; do python3 validation/session39/te_check.py cases --set "$set" >> $D/cases.txt; done
while read -r name args; do
  if [ -n "${CASES:-}" ] && [[ " $CASES " != *" $name "* ]]; then continue; fi
  if [ "$SECONDS" -gt "${STOP_AFTER:-480}" ]; then echo "== $name not started: $SECONDS s into the call" | tee -a $LOG; continue; fi
  echo "== $(date -u +%T) $name" | tee -a $LOG
  # shellcheck disable=SC2086
  timeout 200 python3 validation/megatron/mcore_te_step.py $args ${EXTRA_ARGS:-} --out $D/$name.json \
    --trace $D/traces/$name-trace.json.gz > $D/$name.log 2>&1 < /dev/null
  rc=$?
  echo "$name exit $rc" | tee -a $LOG
  [ $rc -ne 0 ] && tail -25 $D/$name.log | tee -a $LOG
  grep -E "^(llama|gpt3|nemotron|qwen3|gpt-oss)|host per layer|^sustained" $D/$name.log | tee -a $LOG
  pack
done < $D/cases.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv >> $D/environment.txt 2>&1
pack
