// Software stacks as data (docs/stack-profile.md): what a framework launches for one transformer layer, the
// embedding, the LM head and the optimizer step, which tensors it keeps, and how long its host takes to issue
// them. One cost model (layer_costs.hpp, memory.hpp) reads a stack profile together with the calibration
// profile (hardware) and the plan; no code path branches on a framework's name.
//
// A stack profile (`scalescope.stack/1`) is either built in (`fused`: Megatron-style fused kernels;
// `pytorch-eager`: plain PyTorch as validation/harness runs it; models/stacks/*.json, compiled into the
// program) or imported from a one-GPU PyTorch profiler trace of the user's own job (`scalescope import
// torch-trace`, calibrate/torch_trace.hpp).
//
// Each phase (layer forward/backward, embedding forward/backward, head forward/backward, optimizer) is a list
// of rows; a row is one kernel or a group of like kernels:
//   gemm       m, n, k, batch (cuBLAS arguments, expressions) and dtype: ComputeModel::gemm
//   attention  batch, heads, kv_heads, head_dim, seq, causal, pass (forward | backward), io bytes:
//              ComputeModel::attention (flash attention; FLOPs 4 b H s^2 d, halved when causal, x2.5 backward)
//   memory     bytes (read + written): ComputeModel::memory_bound, split evenly over `kernels`
//   fixed      time_s, whatever the plan: a kernel the importer could not scale
// Sizes are expressions (expr.hpp) over the symbols of stack_symbols() (model, plan and per-rank widths) and
// the stack's own `vars`. `when` (an expression) drops a row where it is 0. A row with `time_s` is MEASURED at
// the trace's symbol values (the profile's `trace.symbols`): its cost at a plan is
//     time_s x cost(row at the plan) / cost(row at the trace)
// so the user's own kernels set the level and the calibration profile the change with the shape.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scalescope/models/attention_backend.hpp"
#include "scalescope/models/expr.hpp"
#include "scalescope/models/framework_host.hpp"
#include "scalescope/models/model_spec.hpp"
#include "scalescope/models/plan.hpp"
#include "scalescope/sim/error.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::models {

enum class StackPhase : std::uint8_t {
  layer_forward,
  layer_backward,
  embedding_forward,
  embedding_backward,
  head_forward,
  head_backward,
  optimizer
};
inline constexpr int kNumStackPhases = 7;
std::string_view to_string(StackPhase p);

enum class RowKind : std::uint8_t { gemm, attention, memory, fixed };
std::string_view to_string(RowKind k);

struct StackRow {
  std::string name;
  RowKind kind = RowKind::memory;
  /// A measured kernel group the row belongs to (`group`: "ssd_forward", "ssd_backward", "gated_norm_forward",
  /// "gated_norm_backward"): where the profile measured that group (`mamba` rows), the group's rows are scaled to it.
  std::optional<MambaGroup> group;
  Expr when;     ///< empty: always
  Expr kernels;  ///< kernels the row stands for (default 1)
  // gemm
  Expr m, n, k, batch;
  std::string dtype = "compute";  ///< "compute": CostOptions::dtype; else a GEMM dtype
  // attention
  Expr heads, kv_heads, head_dim, seq;  ///< batch is `batch`
  Expr window;  ///< sliding window (`window`, default 0: none): `batch` sequences of `seq` tokens, each query seeing
                ///< at most `window` keys up to itself
  bool causal = true;
  AttentionBackend backend = AttentionBackend::flash;  ///< the kernel the trace ran (`backend`)
  /// The row names its `backend`; a row that does not runs CostOptions::attention_backend (default flash).
  bool backend_named = false;
  /// Attention dropout probability inside the kernel (`dropout`, default 0: none): priced at the profile's rates with
  /// dropout (compute_model.hpp).
  Expr dropout;
  /// Nonzero: the call runs packed documents (or sliding windows) with the varlen kernel (`packed`, default 0).
  Expr packed;
  bool backward = false;  ///< attention pass
  Expr io;                ///< attention bytes moved
  // memory
  Expr bytes;
  bool bandwidth_factor = false;     ///< apply the stack's memory_bandwidth_factor
  /// `scaling: "bytes"`: the kernel's time is linear in its bytes (priced at the sweep's flat top, the largest
  /// row's bandwidth); default `"sweep"`: at the elementwise sweep's bandwidth for the kernel's size. An anchored
  /// row (time_s) moves by the ratio of the two prices: the bytes ratio, or the sweep's time ratio.
  bool linear_in_bytes = false;
  bool selective_recompute = false;  ///< recomputed by Recompute::selective (its forward runs again)
  /// Layer forward rows: issued after the host's synchronisation in an MoE layer (moe_host_sync): the token
  /// dispatch, experts and combine that need the split sizes (`after_sync`, default false). With a host cost
  /// the builder runs them as a task of their own after the synchronisation point.
  bool after_sync = false;
  std::optional<double> time_s;      ///< measured at the trace (see the header comment)
};

/// Memory rules: bytes per rank of one pipeline stage, expressions over stack_memory_symbols().
struct StackMemory {
  Expr weights, grads, optimizer;
  Expr activations_per_layer;  ///< one layer, one micro-batch
  Expr embedding_logits;       ///< may read `activations` (per_layer x layers x inflight)
  Expr recompute_workspace, zero3_gather, framework_copies;
  /// Bytes held at the optimizer step's peak (weights, every gradient, the states and the optimizer's temporaries);
  /// the rank's peak is the larger of it and the forward/backward peak. A measured optimizer_peak_bytes replaces it.
  Expr optimizer_peak;
  /// Elements of the attention score matrix an unfused attention keeps per layer for the backward
  /// (`scores_per_layer`) and makes at the backward's peak (`scores_transient`); 0 unless an import found them.
  /// `scores_persistent`: elements of score-sized buffers kept across steps (Megatron-Core's GlobalMemoryBuffer).
  Expr scores_per_layer, scores_transient, scores_persistent;
  /// Measured anchors (imported stacks): the value at the trace's memory symbols; the rule's value is then
  /// scaled as the rows' times are (measured x rule(plan) / rule(trace)).
  std::optional<double> measured_states, measured_activations_per_layer, measured_rest;
  /// Of the measured activations per layer and rest, the bytes in score-sized tensors: anchored on the score
  /// rules instead (memory.cpp).
  std::optional<double> measured_score_activations_per_layer, measured_score_rest;
  /// Bytes of score-sized buffers kept across steps, not part of the measured states: anchored on scores_persistent.
  std::optional<double> measured_score_persistent;
  /// The optimizer step's peak (allocated bytes, measured), scaled with the states rule; the rank's peak is the
  /// larger of it and the forward/backward peak.
  std::optional<double> measured_optimizer_peak;
};

/// The trace a stack was imported from: the symbol values of its shape, for measured rows.
struct StackTrace {
  /// Symbol values at the trace's shape, by name (stack_base_symbols() and the memory extras); the cost and
  /// memory tables are filled from them at load.
  std::vector<std::pair<std::string, double>> symbols;
  std::string file, gpu, software;
  double step_time_s = 0.0;  ///< unprofiled step time at the trace's shape, if recorded
};

class StackProfile {
 public:
  std::string name;
  std::string description;
  std::string source;  ///< file or "<builtin:NAME>", for provenance
  std::array<std::vector<StackRow>, kNumStackPhases> phases;
  StackMemory memory;
  /// Bytes per element of the residual stream that PP sends and TP collectives of the residual side carry.
  Expr residual_bytes;
  Expr fsdp2;  ///< ZeRO-2/3 as PyTorch FSDP2 (gathers per micro-batch; builder_impl.hpp)
  /// zero=0 as PyTorch DDP with gradient_as_bucket_view=False (its default): each gradient is copied, scaled by
  /// 1/world, into its bucket when it is ready, and the reduced buckets are copied back into the gradients after
  /// the backward (torch/csrc/distributed/c10d/reducer.cpp: copy_grad_to_bucket, finalize_bucket_dense). Default 0.
  Expr ddp_grad_copies;
  /// Parameter tensors per transformer layer (imported traces: their AccumulateGrad nodes per layer): per-tensor
  /// work such as DDP's copies runs as that many kernels of a tensor's size. 0 (default): not known, one kernel.
  Expr grad_tensors_per_layer;
  bool torch_pipelining = false;  ///< interleaved PP as torch.distributed.pipelining's program
  /// zero=1 is Megatron-Core's distributed optimizer (gradient reduce-scatters overlapped with the backward,
  /// optionally parameter all-gathers with the next forward; builder_impl.hpp), not PyTorch's
  /// ZeroRedundancyOptimizer (all-reduce after the backward, all-gather after the step).
  bool distributed_optimizer = false;
  /// The layer phases have rows for MoE layers (when: moe_layer): router, token permutation, grouped expert
  /// GEMMs, shared experts. A stack without them cannot price an MoE model.
  bool moe = false;
  /// Nonzero where the framework's host reads the token dispatcher's split sizes back once per MoE layer's
  /// forward (and again when full recompute reruns it) and issues nothing more until the GPU has routed the
  /// layer's tokens (TaskGraph::mark_host_sync; priced only with a host cost, sim/host_dispatch.hpp). Default
  /// `ep > 1`: a dropless all-to-all of variable splits (torch's all_to_all_single, NCCL) needs the sizes on the
  /// host. `fused`: 1, as Megatron-Core's dispatchers synchronise in every MoE layer, with EP and without.
  Expr moe_host_sync;
  /// The rows and memory rules price fine-tuning plans: LoRA (`frozen` drops the base weights' wgrad rows, adapter
  /// rows on `lora_*`, model states of `P_train`) and packed documents (attention over `doc` tokens). A stack
  /// without it cannot price plans with lora_rank or packed_doc_tokens, nor sliding-window models (their windowed
  /// layers also read `doc`).
  bool fine_tuning = false;
  /// FP8 plans with delayed or tensorwise (current) scaling run the forward (fprop) GEMMs with fast accumulation
  /// and the dgrad / wgrad GEMMs with split accumulation, as Transformer Engine's recipes do (use_split_accumulator
  /// False for fprop) and torchao's float8 defaults; the profile's fp8_e4m3 rows are cuBLASLt's default, split
  /// accumulation (ComputeModel::gemm, dtype "fp8_fast"). Blockwise and MXFP8 recipes keep split accumulation.
  bool fp8_fast_fprop = false;
  /// The layer phases price the single-block layers of hybrid models (docs/hybrid.md): their rows read
  /// `attn_block`, `mlp_block` and `mamba_layer`, and the Mamba-2 mixer has rows. A stack without it cannot price a
  /// model with a hybrid_pattern.
  bool hybrid = false;
  double memory_bandwidth_factor = 1.0;
  std::string memory_bandwidth_factor_source;
  /// Per-kernel cost rule: true: max(t, launch overhead) (the host issues a kernel at most every launch
  /// overhead); false: t + kernel_gap_s (measured gap between back-to-back kernels; the host is modelled
  /// by `host`).
  bool launch_floor = true;
  double kernel_gap_s = 0.0;
  Expr applies;  ///< the plans this stack describes (default: all)
  std::optional<StackTrace> trace;
  std::optional<FrameworkHostCost> host;  ///< measured host cost of the stack's own program
  /// Host time per kernel issued, when the stack gives that instead of `host` (the built-in eager stack: its
  /// per-layer host cost measured on one machine divided by the kernels it issues per layer); predict() turns it
  /// into per-layer, per-edge and per-step costs from the kernel counts of the plan's rows.
  std::optional<double> host_per_kernel_s;
  std::string host_source;

  /// Whether some layer forward row is `after_sync`.
  bool splits_at_host_sync() const;

  /// Cost symbols: stack_base_symbols() followed by the stack's `vars`.
  const SymbolTable& symbols() const { return table_; }
  /// Memory symbols: symbols(), then stack_memory_extra_symbols(), then the memory section's `vars`.
  const SymbolTable& memory_symbols() const { return memory_table_; }

  /// Cost symbol values for `spec` under `plan` (vars evaluated); `moe_layer`: the layer priced is an MoE layer.
  /// `windowed_layer`: the layer attends over the model's sliding window (`doc` is then at most 2 x the window).
  /// `kind`: the layer's kind (LayerKind::moe implies moe_layer); transformer for every layer of a model without a
  /// hybrid_pattern.
  std::vector<double> bind(const ModelSpec& spec, const Plan& plan, bool flash_attention, bool dropout,
                           int vocab_multiple, double optimizer_params = 0.0, bool moe_layer = false,
                           bool windowed_layer = false, LayerKind kind = LayerKind::transformer) const;
  /// Memory symbol values: `cost` (from bind()) extended by the stage's memory symbols (vars evaluated).
  struct StageValues {
    double params = 0, largest_layer_params = 0, layers = 0, inflight = 0, activations = 0;
    double expert_params = 0;  ///< of params: routed experts (sharded over the expert-data-parallel ranks)
    double trainable_params = 0;  ///< of params: those trained (all of them; LoRA: the adapters only)
    bool first = false, last = false;
  };
  std::vector<double> bind_memory(std::vector<double> cost, const StageValues& stage) const;
  /// The cost symbols at the trace (empty without one).
  const std::vector<double>& trace_values() const { return trace_values_; }
  /// The memory symbols at the trace (empty without memory anchors).
  const std::vector<double>& trace_memory_values() const { return trace_memory_values_; }
  bool applies_to(const ModelSpec& spec, const Plan& plan) const;
  /// The tokens per micro-batch (`T` = b s) the stack was traced at; 0 for a stack without a trace.
  double traced_tokens() const;

 private:
  friend Expected<StackProfile> stack_from_json(const Json&, const std::string&);
  void eval_vars(std::vector<double>& values, const std::vector<std::pair<int, Expr>>& vars) const;

  SymbolTable table_, memory_table_;
  std::vector<std::pair<int, Expr>> vars_, memory_vars_;  ///< slot, expression; evaluated in order
  std::vector<double> trace_values_, trace_memory_values_;
};

/// Names every stack expression may use (docs/stack-profile.md), in slot order.
const std::vector<std::string>& stack_base_symbols();
/// Names only the memory section may use besides those (P, P_layer_max, L_stage, inflight, stage_first,
/// stage_last, activations, P_exp).
const std::vector<std::string>& stack_memory_extra_symbols();

/// Reads a `scalescope.stack/1` document; `file` names it in errors.
Expected<StackProfile> stack_from_json(const Json& doc, const std::string& file);
/// A built-in name (`fused`, `megatron` (= fused), `pytorch-eager`, `pytorch-eager-autocast`) or a file.
Expected<std::shared_ptr<const StackProfile>> load_stack(std::string_view name_or_path);
/// Several stacks, comma-separated: which one prices a plan is select_stack's rule.
Expected<std::vector<std::shared_ptr<const StackProfile>>> load_stacks(std::string_view names_or_paths);
/// The first stack of `stacks` that applies to `plan`; when that one is imported (has a trace), the applicable
/// imported stack traced nearest the plan's tokens per micro-batch (|log T / T_trace|, ties to the earlier); or an
/// input error naming the plan.
Expected<std::shared_ptr<const StackProfile>> select_stack(
    const std::vector<std::shared_ptr<const StackProfile>>& stacks, const ModelSpec& spec, const Plan& plan);
/// The JSON document of a built-in stack (e.g. to start an imported stack from its memory rules).
Expected<Json> builtin_stack_document(std::string_view name);
/// Names of the built-in stacks.
std::vector<std::string> builtin_stack_names();
/// The built-in `fused` stack (the default everywhere a stack is not given).
std::shared_ptr<const StackProfile> default_stack();

}  // namespace scalescope::models
