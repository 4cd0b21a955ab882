// Published NeMo / Megatron-Bridge DGX-H100 training throughput (validation/nemo/h100_published.csv,
// sources in validation/nemo/SOURCES.md) against scalescope's predictions, nothing fitted on the rows.
//
// Each dense row is predicted as NeMo / Megatron-Bridge ran it (nemo_plan; assumptions listed in the
// report): the row's tp, pp, cp, vp (interleaved when > 1), mbs and gbs, dp = gpus / (tp cp pp);
// sequence parallelism with tp > 1; Megatron-Core's distributed optimizer (zero=1) with
// overlap_grad_reduce and overlap_param_gather, buckets of max(40M, 1M dp cp) elements; Megatron-FSDP
// rows (fsdp > 0) as zero=3; userbuffers TP overlap (tp_comm_overlap) with tp > 1; flash attention,
// no recompute; precision=fp8 with delayed scaling for the NeMo 1.0 rows (24.03, 24.07) and
// current (tensorwise) scaling for Megatron-Bridge's FP8-CS rows; gradients reduced in fp32 for NeMo 1.0
// (grad_sync_dtype fp32; bf16 for Nemotron-340B as its config says) and in bf16 for Megatron-Bridge
// (grad_reduce_in_fp32 false in its performance recipes); Llama 3.1 405B with Megatron's
// account_for_embedding/loss_in_pipeline_split as pp_layout "Et|(tt|)*(pp vp - 2)tL".
// MoE rows (status "moe": DeepSeek-V3, Qwen3-30B-A3B, Qwen3-235B-A22B, GPT OSS 120B) add the row's ep with the recipes'
// expert_tensor_parallel_size=1 and their dispatcher (flex: HybridEP for DeepSeek-V3 and Qwen3-30B, alltoall for
// Qwen3-235B; Megatron-Bridge scripts/performance/configs:
// deepseek_workload_base_configs.py, qwen3_workload_base_configs.py), moe_a2a_overlap as the recipe sets it
// (Qwen3-235B on H100: true; the others false), balanced routing (moe_imbalance 1: the recipes train
// dropless with the auxiliary-loss / bias balancing), FP8-blockwise rows with the blockwise recipe, and for
// DeepSeek-V3 the recipe's pipeline layout "Et|(tt|)*30mL" without the multi-token-prediction layer `m`
// (not modelled: the prediction misses that layer). GPT OSS 120B (bf16, Megatron-Bridge
// gpt_oss_workload_base_configs.py H100: ep 8, etp 1, pp 4, the alltoall dispatcher) with its sliding window of 128
// on alternate layers; the recipe's recompute of the layernorms and the MoE activation is not modelled. Nemotron 3
// Nano (a hybrid model of Mamba-2, attention and MoE layers: docs/hybrid.md) with ep from the row and HybridEP (flex),
// FP8 current scaling; the recipe's recompute of the layernorms, its bf16 first and last layers and its CUDA graphs
// of the attention and Mamba layers are not modelled.
// Fine-tuning rows (task sft, lora): SQuAD v1.1 packed into the row's sequence (the pages: "inputs packed to
// 4096 tokens"), priced as packed_doc_tokens = kSquadDocTokens; LoRA rows add lora_rank 32 on qkv (NeMo 1.0's
// default target_modules ["attention_qkv"], adapter_dim 32) or on qkv, proj, fc1 and fc2 (Megatron-Bridge's LoRA
// defaults: target_modules linear_qkv, linear_proj, linear_fc1, linear_fc2, dim 32).
// Cluster: topologies/h100-rail-ndr.json (DGX H100, 8 x 400 Gb/s NDR rail-optimized fabric, as NVIDIA's
// EOS) with ceil(gpus / 8) nodes; datasheet compute and collective parameters unless a calibration
// profile is given.
// Error = predicted / measured tokens per second per GPU - 1.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "scalescope/models/attention_backend.hpp"
#include "scalescope/models/model_spec.hpp"
#include "scalescope/models/plan.hpp"
#include "scalescope/sim/simulator.hpp"

namespace scalescope::validate {

/// One row of h100_published.csv.
struct NemoRow {
  std::string source, model, task, precision, status;
  int gpus = 0, gbs = 0, mbs = 1, seq = 0, fsdp = 0, tp = 1, pp = 1, cp = 1, vp = 1, ep = 1;
  std::optional<double> tokens_per_s;  ///< per GPU, as published (absent on the long-sequence page)
  double tflops = 0;                   ///< model TFLOP/s per GPU, as published
  bool dense() const { return status == "dense"; }
  bool moe() const { return status == "moe"; }
  bool checked() const { return dense() || moe(); }
};

/// Mean tokens of a SQuAD v1.1 training example as NeMo formats it ("Context: ... Question: ... Answer:" and the
/// answer): a paragraph of about 120 words, a question of about 11 and an answer of about 3, at about 1.3 Llama
/// tokens per word, plus the template and BOS/EOS: about 180. An estimate from the dataset's published statistics
/// (Rajpurkar et al. 2016), not from the rows; attention over 180 tokens is under 1% of a layer's FLOPs, so the
/// prediction hardly depends on it (validation/nemo/README.md).
inline constexpr int kSquadDocTokens = 180;

/// Reads h100_published.csv (errors name the file, line and column).
Expected<std::vector<NemoRow>> load_nemo_rows(const std::filesystem::path& file);

/// The measured tokens/s per GPU: as published, or (long-sequence rows) published TFLOP/s divided by
/// NeMo 1.0's Llama-2 model FLOPs per token (full s x s attention; SOURCES.md).
double measured_tokens_per_s(const NemoRow& row, const models::ModelSpec& spec);

/// The catalog or validation/nemo/models file of a row's model, with the row's sequence length.
Expected<models::ModelSpec> nemo_model(const NemoRow& row, const std::filesystem::path& data_dir);

/// The cross entropy the row's configuration ran (Megatron-Core's cross_entropy_loss_fusion and its implementation):
/// Megatron-Bridge's recipes set it with Transformer Engine's kernel (te); NeMo-Framework-Launcher 24.07's training
/// configs set it (native, the only one Megatron-Core had then) for Llama 3 and Nemotron 8B / 22B and leave it out
/// for GPT-3, Llama 2 and Nemotron-340B, and NeMo 1.0 passes the key through to Megatron-Core, whose default is off
/// (none); the 24.03 long-sequence rows predate the option (none).
models::CrossEntropyFusion nemo_cross_entropy_fusion(const NemoRow& row);

/// The plan as NeMo / Megatron-Bridge ran the row (header comment).
models::Plan nemo_plan(const NemoRow& row, const models::ModelSpec& spec);

/// DeepSeek-V3's own pre-training run (DeepSeek-V3 technical report, arXiv 2412.19437): 180K H800 GPU hours per
/// trillion tokens on 2,048 H800 GPUs, i.e. 10^12 / (180,000 x 3,600) = 1,543.2 tokens/s per GPU; the layout of
/// its section 3.2 (PP 16 with DualPipe, EP 64 over 8 nodes, ZeRO-1 DP 128, no TP), FP8 with 1x128 / 128x128 block
/// scaling, sequence 4096, the batch of 15,360 sequences after the ramp; on topologies/h800-ndr-multiplane.json.
/// Approximations (docs/moe.md): DualPipe as 1F1B with the all-to-alls beside the compute; node-limited routing
/// (at most 4 nodes per token) and FP8 dispatch not modelled (the exchanges are priced larger); no MTP module.
struct DeepSeekV3Check {
  static constexpr double kPublishedTokensPerGpu = 1e12 / (180000.0 * 3600.0);
  std::string plan, compute_source, skipped;
  double predicted = 0, memory_GiB = 0;
  Breakdown breakdown;
  double error() const { return predicted / kPublishedTokensPerGpu - 1.0; }
};
/// The plan of that run.
models::Plan deepseek_v3_report_plan();
/// Predicts it with `calibration` (load_hardware_models; e.g. "h100-gpu": the H800 is the H100's GH100 die).
Expected<DeepSeekV3Check> run_deepseek_v3_check(const std::string& calibration);

struct NemoPoint {
  NemoRow row;
  std::string plan;  ///< to_string(nemo_plan)
  double measured = 0, predicted = 0;  ///< tokens per second per GPU
  double compared = 0;                 ///< predicted with NemoOptions::compare_calibration (0: not run)
  double with_host = 0;                ///< predicted with NemoOptions::host_cost / moe_host_cost (0: not run)
  double memory_GiB = 0;
  bool fits_memory = true;
  Breakdown breakdown;  ///< of the prediction (critical rank)
  std::string skipped;  ///< why there is no prediction
  double error() const { return predicted / measured - 1.0; }
};

struct NemoOptions {
  std::string cluster = "h100-rail-ndr";
  std::string calibration;  ///< optional calibration profile (empty: the cluster's default profile, else the datasheet)
  /// A second prediction of every row with this profile, shown beside the first (e.g. h200x4: measured
  /// kernel rates of the same GH100 die as the H100, until an H100 profile exists).
  std::string compare_calibration;
  /// A third prediction of every dense (`host_cost`) and MoE row (`moe_host_cost`) with the framework's measured host
  /// time per layer (scalescope.host_dispatch/1 files, e.g. validation/nemo/megatron-core-host/): the built-in fused
  /// stack has none, so the main prediction assumes a host that is never behind the GPU.
  std::string host_cost, moe_host_cost;
  /// The attention kernel the rows' Transformer Engine runs: flash (the profile's FlashAttention rows) or cudnn
  /// (cuDNN's fused attention, which TE selects on Hopper from 1.7 on when both are available: validation/session39).
  models::AttentionBackend attention = models::AttentionBackend::flash;
  int threads = 2;
  /// Calibration for the DeepSeek-V3 report check on H800 (empty: not run).
  std::string deepseek_v3_calibration = "h100-gpu";
};

struct NemoValidation {
  std::vector<NemoPoint> points;    ///< the dense and MoE rows
  std::vector<NemoRow> excluded;    ///< rows not checked, with their status
  std::string compute_source, collective_source, compare_source;
  double median_abs_error = 0, worst_error = 0;  ///< over the dense points with a prediction (signed worst)
  double moe_median_abs_error = 0, moe_worst_error = 0;  ///< over the MoE points
  int moe_points = 0;
  double compare_median_abs_error = 0, compare_worst_error = 0;  ///< the same for `compared`
  std::string host_source, moe_host_source;  ///< the host-cost files' framework lines
  double host_median_abs_error = 0, host_worst_error = 0;          ///< dense rows, `with_host`
  double moe_host_median_abs_error = 0, moe_host_worst_error = 0;  ///< MoE rows, `with_host`
  std::optional<DeepSeekV3Check> deepseek_v3;  ///< the report's own run (NemoOptions::deepseek_v3_calibration)
};

/// Predicts every dense and MoE row of `data_dir`/h100_published.csv; progress on stderr.
Expected<NemoValidation> run_nemo_validation(const std::filesystem::path& data_dir, const NemoOptions& options = {});

/// The Markdown report (validation/nemo/REPORT.md).
std::string nemo_report_markdown(const NemoValidation& v, const NemoOptions& options = {});

}  // namespace scalescope::validate
