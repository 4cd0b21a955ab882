#!/usr/bin/env bash
# Session 26, first call (one nvidia-h200, about 4 minutes): the inputs of the blind check of an MoE program never
# traced, timed or predicted before (validation/session26/README.md): a one-GPU calibration at its shapes (GEMMs of
# devbin/shapes.json, attention with flash and cuDNN) and ONE profiler trace of hf-qwen3-moe (transformers'
# Qwen3MoeForCausalLM, Qwen3-30B-A3B's layers, 8 of them) at 2x2048. Carry build-lease/devbin.txz
# (scalescope-calibrate, shapes.json) and begin the command with
# `tar xJf build-lease/devbin.txz && bash validation/device/session_traces26.sh`; everything lands in
# $OUT/traces26.tar.gz (h200-gpu.json, h200-attention.json, traces/), repacked after every step.
set -uo pipefail
: "${OUT:?run on the device machine (OUT is its output folder)}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
export SCALESCOPE_CALIBRATE_BIN=devbin/scalescope-calibrate
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in
  *H200*) ;;
  *) echo "$0: GPU 0 is not an H200: not measuring" >&2; exit 4 ;;
esac
D=/tmp/traces26; rm -rf $D; mkdir -p $D/traces
source validation/device/guard.sh
source validation/device/environment.sh
record_environment $D/environment.txt
python3 -c "import transformers; print('transformers', transformers.__version__)" >> $D/environment.txt 2>&1
LOG=$D/session.log
pack() { tar czf $OUT/traces26.tar.gz -C $D . ; }
stamp() { echo "== $(date -u +%T) $*" | tee -a $LOG; }
T0=$(date +%s)
stamp "calibration (topo, mem, gemm: bf16 grid plus the program's shapes)"
timeout 200 bash calibrate/gpu/run_on_device.sh $D/h200-gpu.json 170 --gpus 1 --sections topo,mem,gemm \
  --gemm-dtypes bf16 --gemm-shapes devbin/shapes.json >> $LOG 2>&1
echo "calibrate exit $? after $(( $(date +%s) - T0 )) s" | tee -a $LOG; pack
stamp "attention at the program's shapes (flash, cudnn)"
timeout 150 python3 validation/attention/measure_attention.py $D/h200-attention.json --shapes devbin/shapes.json \
  --backend flash,cudnn >> $LOG 2>&1
echo "attention exit $? after $(( $(date +%s) - T0 )) s" | tee -a $LOG; pack
RS="python3 validation/programs/run_steps.py trace --out $D/traces --smi"
stamp "trace hf-qwen3-moe 2x2048"
timeout 180 $RS --program hf-qwen3-moe --model validation/programs/hf-qwen3-30b-a3b-l8/config.json --mbs 2 --seq 2048 \
  --name hf-qwen3-moe-mbs2-seq2048 >> $LOG 2>&1; echo "exit $?" | tee -a $LOG; pack
stamp "done after $(( $(date +%s) - T0 )) s"; pack
tail -25 $LOG; ls -la $D $D/traces
