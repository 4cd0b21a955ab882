// Parallel training plans (TP/CP/PP/DP/ZeRO, micro-batching, schedule, recompute, precision, overlap
// flags, pipeline layout): parsing and validation. Key names follow Megatron-Core's arguments.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "scalescope/models/model_spec.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::models {

enum class Schedule {
  gpipe,
  one_f_one_b,
  interleaved
};                                               ///< names in files: gpipe | 1f1b | interleaved
enum class Recompute { none, selective, full };  ///< Korthikanti et al. 2022 terms
/// mixed: 16-bit compute with fp32 master weights and fp32 gradients (reduced in fp32; bytes per
/// parameter depend on the framework, see memory.hpp); bf16: pure bf16 weights, gradients and Adam
/// moments, no fp32 master copy; fp16: 16-bit weights and gradients (reduced in 16 bits, as
/// DeepSpeed's fp16 engine and Megatron-LM's fp16 default do) with fp32 master weights and Adam.
/// fp8: precision=mixed (bf16 activations, fp32 master weights and Adam) with the transformer layers'
/// linear GEMMs in FP8 through Transformer Engine (fp8_recipe; LM head and attention stay bf16).
enum class Precision { mixed, bf16, fp16, fp8 };
/// Transformer Engine's FP8 scaling recipes (Megatron --fp8-recipe): delayed (amax history, scales of
/// the previous steps), tensorwise (current scaling: one amax pass over each tensor before its cast),
/// blockwise (1x128 activation and 128x128 weight scales, DeepSeek-V3's), mxfp8 (32-element blocks
/// with e8m0 scales, Blackwell). Costs: fp8_costs.hpp.
enum class Fp8Recipe { delayed, tensorwise, blockwise, mxfp8 };
/// Context-parallel attention (Megatron --cp-comm-type): p2p ring of K/V blocks overlapped with the
/// attention blocks (Transformer Engine's load-balanced ring), a2a (Ulysses: all-to-all of Q, K, V and
/// the output between sequence and head sharding), allgather (K/V all-gathered before attention).
enum class CpComm { p2p, a2a, allgather };
/// MoE token dispatch (Megatron --moe-token-dispatcher-type): alltoall (each rank sends every routed token copy
/// to the EP rank holding its expert, all-to-all over the EP group), allgather (every rank gathers the EP
/// group's tokens and keeps those of its experts; the outputs are reduce-scattered back) or flex (DeepEP /
/// HybridEP: a token crosses the network once per destination node, then is forwarded over NVLink).
enum class MoeDispatcher { alltoall, allgather, flex };
/// How the Adam/AdamW step runs (torch.optim.AdamW's `fused` / `foreach`): fused (one kernel reads the weights,
/// gradients and both moments and writes the three back: torch's fused=True, apex / Transformer Engine FusedAdam,
/// Megatron-Core) or foreach (torch.optim.AdamW's default on CUDA, torch/optim/adam.py _multi_tensor_adam: eight
/// multi-tensor kernels, one of them making a temporary the size of the second moment).
enum class OptimizerImpl { fused, foreach };
/// How the loss over the vocabulary runs (Megatron-Core's --cross-entropy-loss-fusion and
/// --cross-entropy-fusion-impl): none (Megatron-Core's default, tensor_parallel.vocab_parallel_cross_entropy: the
/// logits cast to fp32 and six elementwise and reduction passes over them forward, two backward), native
/// (megatron.core.fusions.fused_cross_entropy: the same steps compiled by torch.compile into four kernels) or te
/// (Transformer Engine's parallel_cross_entropy: one Triton kernel each way over the bf16 logits, the gradient
/// written in their place; Megatron-Bridge's recipes).
enum class CrossEntropyFusion { none, native, te };

/// How one training iteration is split over tp * cp * pp * dp GPUs.
struct Plan {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int cp = 1;  ///< context parallelism: the sequence split over cp ranks (Megatron --context-parallel-size)
  CpComm cp_comm = CpComm::p2p;
  int zero = 0;  ///< ZeRO stage 0..3 over the dp group
  int mbs = 1;   ///< micro-batch size (sequences)
  int gbs = 1;   ///< global batch size (sequences per iteration)
  Schedule schedule = Schedule::one_f_one_b;
  int vpp = 1;  ///< model chunks per pipeline stage (interleaved schedule)
  Recompute recompute = Recompute::none;
  bool sp = false;  ///< Megatron sequence parallelism (needs tp > 1)
  Precision precision = Precision::mixed;
  Fp8Recipe fp8_recipe = Fp8Recipe::delayed;  ///< precision=fp8 only
  bool fp8_params = false;  ///< FP8 primary weights (Megatron --fp8-param-gather): no bf16 weight copy
  /// Gradients accumulated and reduced in fp32 (Megatron-Core DDP grad_reduce_in_fp32); false: in the
  /// 16-bit compute dtype (NeMo's performance recipes). precision=bf16 and fp16 always reduce 16 bits.
  bool grad_reduce_in_fp32 = true;
  double bucket_MB = 25.0;  ///< gradient bucket size in MiB (PyTorch DDP default 25)
  /// Overlap the gradient reduction with the backward pass (Megatron --overlap-grad-reduce; PyTorch DDP
  /// always does). Text form also accepts the older name `overlap`.
  bool overlap = true;
  /// zero >= 1: all-gather the updated parameters bucket by bucket during the next forward instead of
  /// after the optimizer step (Megatron --overlap-param-gather; needs overlap_grad_reduce).
  bool overlap_param_gather = false;
  /// Split the TP/SP all-gathers and reduce-scatters into chunks pipelined with their GEMMs
  /// (Megatron --tp-comm-overlap, Transformer Engine userbuffers; needs sp).
  bool tp_comm_overlap = false;
  /// Uneven pipelines (Megatron --decoder-first/last-pipeline-num-layers): layers of the first / last
  /// stage, 0 = even split; the other stages share the rest evenly.
  int first_stage_layers = 0;
  int last_stage_layers = 0;
  /// Megatron --pipeline-model-parallel-layout: one entry per virtual stage separated by '|', 't' a
  /// transformer layer, 'E' the embedding (first entry), 'L' the loss (last entry), "x*n" and
  /// "(...)*n" repeat, commas are cosmetic. Empty: even layout (or first/last_stage_layers).
  std::string pp_layout;
  /// Sequence length of the run (Megatron's --seq-length); 0: the model's seq_len. with_plan_seq() applies it.
  int seq = 0;
  /// Expert parallelism (MoE models; Megatron-Core --expert-model-parallel-size, --expert-tensor-parallel-size):
  /// the routed experts are split over ep ranks, each expert over etp ranks, inside the tp*cp*dp ranks of a
  /// pipeline stage (expert rank order etp-ep-edp; the expert-data-parallel size edp = tp*cp*dp / (ep*etp)
  /// reduces the experts' gradients). builder.hpp says what runs.
  int ep = 1;
  int etp = 1;
  MoeDispatcher moe_dispatcher = MoeDispatcher::alltoall;
  /// Tokens of the busiest expert over the mean (max/mean tokens per expert, >= 1); 0: the capacity factor when
  /// the model has one (tokens padded to capacity), else 1.0 (balanced routing; validate() notes it).
  double moe_imbalance = 0.0;
  /// Hide the dispatch/combine all-to-alls under computation (DeepSeek's DualPipe, Megatron-Core's
  /// --overlap-moe-expert-parallel-comm): they run beside the layers' compute instead of in its path.
  bool moe_a2a_overlap = false;
  /// LoRA fine-tuning (Megatron-Bridge / NeMo `peft=lora`, its `dim`): the base weights frozen (no weight-gradient
  /// GEMMs, gradients, optimizer states or gradient reduction for them), a rank-`lora_rank` adapter pair
  /// (A: in x r, B: r x out) beside each linear module of `lora_modules`, the only trained parameters. 0: full training.
  int lora_rank = 0;
  /// The linear modules with adapters, a mask of kLora* (text form "qkv+proj+fc1+fc2", Megatron-Bridge's default
  /// target_modules; NeMo 1.0's default was "qkv").
  int lora_modules = 0xF;
  /// Packed sequences (NeMo's packed SFT: documents concatenated into each sequence, attention kept inside each
  /// document through cu_seqlens): the mean document length in tokens; attention then costs (seq / doc) causal
  /// attentions of `doc` tokens instead of one of `seq`. 0: every sequence is one document.
  int packed_doc_tokens = 0;
  /// The optimizer step's kernels (read by stacks that price them: pytorch-eager; an imported stack's trace holds
  /// its own optimizer's kernels and peak).
  OptimizerImpl optimizer_impl = OptimizerImpl::fused;
  /// The vocabulary-parallel cross entropy's kernels (read by the fused stack; Megatron-Core's default: none).
  CrossEntropyFusion cross_entropy_fusion = CrossEntropyFusion::none;

  /// tp * cp * pp * dp, computed at 64 bits and saturated at INT_MAX (validate() bounds it far below).
  int gpus() const {
    const long long g = static_cast<long long>(tp) * cp * pp * dp;
    return g > 2147483647LL ? 2147483647 : static_cast<int>(g);
  }
  /// Micro-batches per pipeline per iteration: gbs / (mbs * dp) (the product at 64 bits).
  int num_microbatches() const { return static_cast<int>(gbs / (static_cast<long long>(mbs) * dp)); }
  bool fp8() const { return precision == Precision::fp8; }
  /// Expert-data-parallel size: the ranks of a stage that hold the same experts (tp*cp*dp / (ep*etp)).
  int edp() const { return static_cast<int>(static_cast<long long>(tp) * cp * dp / (static_cast<long long>(ep) * etp)); }
  bool operator==(const Plan&) const = default;
};

std::string_view to_string(Schedule s);
std::string_view to_string(Recompute r);
std::string_view to_string(Precision p);
std::string_view to_string(Fp8Recipe r);
std::string_view to_string(CpComm c);
std::string_view to_string(MoeDispatcher d);
std::string_view to_string(OptimizerImpl o);
std::string_view to_string(CrossEntropyFusion c);

/// LoRA target modules (Plan::lora_modules bits), in text-form order.
inline constexpr int kLoraQkv = 1, kLoraProj = 2, kLoraFc1 = 4, kLoraFc2 = 8;
/// "qkv+proj+fc1+fc2" for the bits set ("" for none).
std::string lora_modules_text(int mask);

/// The routing imbalance a plan prices (Plan::moe_imbalance's default rule; 1 for dense models).
double moe_imbalance(const ModelSpec& spec, const Plan& plan);

/// `spec` with the plan's sequence length (Plan::seq) when it sets one.
ModelSpec with_plan_seq(const ModelSpec& spec, const Plan& plan);

/// Parses "tp=8,pp=4,dp=32,zero=1,mbs=1,gbs=1536,schedule=1f1b". Keys: plan_keys() (the fields of
/// Plan); gbs is required, the others default as in Plan. Booleans: true/false/1/0. Errors name the key:
/// "--plan: key 'pp': expected a positive integer, got 'x'". `source` replaces "--plan".
Expected<Plan> parse_plan(std::string_view text, const std::string& source = "--plan");
/// The same keys as a JSON object (numbers, strings and booleans as in the text form).
Expected<Plan> plan_from_json(const Json& json, const std::string& file);
/// The plan object at `at`, inside a larger document (a GUI session, a sweep): errors name the cursor's path
/// ("FILE: $.plan.tp: ..."). Throws ErrorException, so call it inside catch_errors.
Plan read_plan(const JsonCursor& at);
Expected<Plan> load_plan(const std::filesystem::path& file);
/// A path to a JSON plan file (ends in .json or exists) or the text form.
Expected<Plan> parse_plan_or_file(std::string_view text_or_path);

/// Text form with every key, in plan_keys() order (seq only when set, pp_layout only when not empty, the MoE
/// keys only when not their defaults);
/// parse_plan(to_string(p)) == p.
std::string to_string(const Plan& p);
Json to_json(const Plan& p);
/// The keys of the text and JSON forms, in order.
const std::vector<std::string>& plan_keys();

/// Limits validate() enforces: GPUs one plan spans, and micro-batches per pipeline per iteration
/// (the task graph holds tasks per micro-batch; 65,536 is far beyond any real gradient accumulation).
inline constexpr long long kMaxPlanGpus = 1LL << 24;
inline constexpr int kMaxMicrobatches = 65536;

/// What a valid plan still deserves a remark about (fewer GPUs used than available, ZeRO with
/// dp=1...).
struct PlanCheck {
  std::vector<std::string> notes;
};

/// Rejects plans that cannot run, naming the rule: tp divides heads, kv_heads and ffn_hidden (the
/// vocabulary is padded, Megatron-style, so it need not divide); the pipeline layout places every layer
/// (pipeline_layout.hpp: pp*vpp divides layers, or first/last_stage_layers, or pp_layout); gbs divisible
/// by mbs*dp; interleaved needs pp > 1, vpp > 1 and microbatches % pp == 0 (Megatron's rule), vpp > 1
/// needs interleaved; cp: 2*cp divides seq_len (a2a: tp*cp divides heads); sp needs tp > 1 and tp to
/// divide seq_len / cp; FP8 keys need precision=fp8, the overlap flags Megatron-LM's prerequisites; zero
/// in 0..3; tp*cp*pp*dp <= kMaxPlanGpus (products at 64 bits), gbs/(mbs*dp) <= kMaxMicrobatches;
/// tp*cp*pp*dp <= gpus_available (fewer is allowed with a note; gpus_available <= 0 skips this). MoE: ep and etp
/// need an MoE model, ep divides experts, etp the expert width, ep*etp divides tp*cp*dp, tp > 1 needs sp (Megatron
/// rule), moe_imbalance >= 1 and at most the capacity factor.
/// seq_len is the plan's seq when set. Errors have file "plan" and the key as path, e.g. "plan: tp: tp=3
/// does not divide heads=32".
Expected<PlanCheck> validate(const Plan& plan, const ModelSpec& model, int gpus_available);

}  // namespace scalescope::models
