#!/usr/bin/env bash
# Device session 9, first call per GPU kind (nvidia-h100-x1 or nvidia-h200): a one-GPU calibration at the shapes of
# the blind-check programs, and one PyTorch profiler trace of each program at ONE (micro-batch, seq) -- the inputs
# of the predictions that are committed before the second call measures the other shapes (session_measure9.sh).
#   bash validation/device/session_traces9.sh TAG [harness]
# TAG names the outputs (h100, h200). With `harness`, also traces of validation/harness (4 layers of each
# validation model, fp32 + autocast and FSDP2 on one process) for the H200 report. Needs devbin/ (carried):
# scalescope-calibrate and shapes.json (scalescope calibrate shapes, see validation/programs/README.md).
# Everything lands in $OUT/traces9-TAG.tar.gz, repacked after every step so a call cut off still returns it.
set -uo pipefail
TAG=${1:?usage: session_traces9.sh TAG [harness]}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export SCALESCOPE_CALIBRATE_BIN=devbin/scalescope-calibrate
D=/tmp/traces9; rm -rf $D; mkdir -p $D/traces
source validation/device/guard.sh
LOG=$D/session.log
device_environment $D/environment.txt
pack() { tar czf $OUT/traces9-$TAG.tar.gz -C $D . ; }
stamp() { echo "== $(date -u +%T) $*" | tee -a $LOG; }
T0=$(date +%s)

if [ -z "${SKIP_CALIBRATION:-}" ]; then
stamp "calibration (topo, mem, gemm: the bf16 and fp8 grid plus the programs' shapes)"
timeout 260 bash calibrate/gpu/run_on_device.sh $D/$TAG-gpu.json 200 --gpus 1 --sections topo,mem,gemm \
  --gemm-dtypes bf16,fp8_e4m3 --gemm-shapes devbin/shapes.json >> $LOG 2>&1
echo "calibrate exit $? after $(( $(date +%s) - T0 )) s" | tee -a $LOG; pack

stamp "attention at the programs' shapes"
timeout 260 python3 validation/attention/measure_attention.py $D/$TAG-attention.json --shapes devbin/shapes.json \
  --backend flash,cudnn \
  >> $LOG 2>&1
echo "attention exit $? after $(( $(date +%s) - T0 )) s" | tee -a $LOG; pack
fi

RS="python3 validation/programs/run_steps.py trace --out $D/traces${RUN_STEPS_SMI:+ --smi}"  # RUN_STEPS_SMI=1: the clock
stamp "trace gpt-ln 4x768"
timeout 120 $RS --program gpt-ln --model validation/programs/gpt-ln-0.5b.json --mbs 4 --seq 768 \
  --name gpt-ln-mbs4-seq768 >> $LOG 2>&1; echo "exit $?" >> $LOG; pack
stamp "trace hf-llama 2x1536"
timeout 150 $RS --program hf-llama --model validation/programs/hf-llama-0.9b/config.json --mbs 2 --seq 1536 \
  --name hf-llama-mbs2-seq1536 >> $LOG 2>&1; echo "exit $?" >> $LOG; pack

if [ "${2:-}" = harness ]; then
  # T = mbs * 4096 must differ from every width of the model (llama-7b's hidden is 4096: mbs 3 there).
  for spec in llama-1b:1 llama-3b:1 qwen2-1.5b:1 llama-7b:3; do
    m=${spec%%:*}; b=${spec##*:}
    for fam in single zero3; do
      stamp "trace harness-$fam $m ${b}x4096 (4 layers)"
      timeout 90 $RS --program harness-$fam --model validation/models/$m.json --layers 4 --mbs $b --seq 4096 \
        --name harness-$fam-$m-l4-mbs$b-seq4096 >> $LOG 2>&1; echo "exit $?" >> $LOG; pack
    done
  done
fi
stamp "done after $(( $(date +%s) - T0 )) s"; uptime >> $LOG; pack
ls -la $D $D/traces $OUT
