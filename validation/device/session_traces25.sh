#!/usr/bin/env bash
# Session 25, first call (one nvidia-h200, about 4 minutes): the inputs of the blind check of two programs never
# traced, timed or predicted before (validation/session25/README.md): a one-GPU calibration at their shapes (GEMMs of
# devbin/shapes.json, attention with flash and cuDNN) and ONE profiler trace of each, hf-qwen3 at 2x2048 and hf-neox at
# 4x1024. Carry build-lease/devbin.txz (scalescope-calibrate, shapes.json) and begin the command with
# `tar xJf build-lease/devbin.txz && bash validation/device/session_traces25.sh`; everything lands in
# $OUT/traces25.tar.gz (h200-gpu.json, h200-attention.json, traces/), repacked after every step.
set -uo pipefail
: "${OUT:?run on the device machine (OUT is its output folder)}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
export SCALESCOPE_CALIBRATE_BIN=devbin/scalescope-calibrate
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in
  *H200*) ;;
  *) echo "$0: GPU 0 is not an H200: not measuring" >&2; exit 4 ;;
esac
D=/tmp/traces25; rm -rf $D; mkdir -p $D/traces
source validation/device/guard.sh
source validation/device/environment.sh
record_environment $D/environment.txt
python3 -c "import transformers; print('transformers', transformers.__version__)" >> $D/environment.txt 2>&1
LOG=$D/session.log
pack() { tar czf $OUT/traces25.tar.gz -C $D . ; }
stamp() { echo "== $(date -u +%T) $*" | tee -a $LOG; }
T0=$(date +%s)
stamp "calibration (topo, mem, gemm: bf16 grid plus the programs' shapes)"
timeout 200 bash calibrate/gpu/run_on_device.sh $D/h200-gpu.json 170 --gpus 1 --sections topo,mem,gemm \
  --gemm-dtypes bf16 --gemm-shapes devbin/shapes.json >> $LOG 2>&1
echo "calibrate exit $? after $(( $(date +%s) - T0 )) s" | tee -a $LOG; pack
stamp "attention at the programs' shapes (flash, cudnn)"
timeout 150 python3 validation/attention/measure_attention.py $D/h200-attention.json --shapes devbin/shapes.json \
  --backend flash,cudnn >> $LOG 2>&1
echo "attention exit $? after $(( $(date +%s) - T0 )) s" | tee -a $LOG; pack
RS="python3 validation/programs/run_steps.py trace --out $D/traces --smi"
stamp "trace hf-qwen3 2x2048"
timeout 120 $RS --program hf-qwen3 --model validation/programs/hf-qwen3-0.6b/config.json --mbs 2 --seq 2048 \
  --name hf-qwen3-mbs2-seq2048 >> $LOG 2>&1; echo "exit $?" | tee -a $LOG; pack
stamp "trace hf-neox 4x1024"
timeout 120 $RS --program hf-neox --model validation/programs/hf-pythia-1b/config.json --mbs 4 --seq 1024 \
  --name hf-neox-mbs4-seq1024 >> $LOG 2>&1; echo "exit $?" | tee -a $LOG; pack
stamp "done after $(( $(date +%s) - T0 )) s"; pack
tail -25 $LOG; ls -la $D $D/traces
