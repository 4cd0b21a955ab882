// Per-rank memory model: weights, gradients and optimizer states (with ZeRO), activations for the
// micro-batches a pipeline schedule keeps in flight, embedding/logits buffers and a fixed overhead.
//
// What a rank holds depends on the software stack, so the byte rules are the stack profile's `memory` section
// (stack_profile.hpp; the built-in ones in models/stacks/*.json, derived in docs/stack-profile.md):
//   fused (Megatron-LM): model states 2 / 4 / 12 bytes per parameter (weights / gradients / optimizer) for
//     mixed precision, 2 / 2 / 12 fp16, 2 / 2 / 4 pure bf16, divided over dp by ZeRO's stages (Rajbhandari et
//     al. 2020): stage 1 the optimizer states, 2 also the gradients, 3 also the weights; activations per layer
//     and micro-batch from Korthikanti et al. 2022 (Table 2: sbh(34 + 5as/h) without recompute, selective and
//     full recompute, sequence parallelism, flash attention's fp32 row statistics instead of the scores);
//     embedding dropout masks and final-norm / LM-head / fp32-logits buffers per in-flight micro-batch.
//   pytorch-eager: what autograd keeps in plain PyTorch with autocast or FSDP2 (validation/harness), measured
//     against torch.cuda.max_memory_allocated.
//   imported stacks: the pytorch-eager rules scaled to the trace's measured allocations (states at the step's
//     start, activations per layer, the rest at the peak).
// In flight (copies of a stage's per-micro-batch activations alive at its peak, m micro-batches):
//   gpipe m; 1f1b min(m, pp - stage); interleaved min(m*vpp, 2(pp - stage - 1) + (vpp - 1)pp + 1) /
//   vpp chunks (Megatron's warm-up count + 1), i.e. L(1 + (p-1)/(p vpp)) layers on the first stage.
// Dense stacks: with cp > 1 the activations and logits are those of the rank's seq_len / cp tokens, the
// model states are sharded over dp x cp (Megatron's distributed optimizer shards over the dp-cp group; the
// fused stack's rules read `dp*cp`), and cp_comm=p2p adds two K/V receive buffers to the working set
// (cp_costs.hpp); precision=fp8 adds the FP8 weight copies to `weights` and keeps FP8 linear inputs
// (fp8_costs.hpp); grad_reduce_in_fp32=false makes the main gradients 2 bytes (the stacks' `g`).
#pragma once

#include <memory>
#include <optional>

#include "scalescope/models/counts.hpp"
#include "scalescope/models/model_spec.hpp"
#include "scalescope/models/plan.hpp"
#include "scalescope/sim/units.hpp"

namespace scalescope::models {

struct StateBytesPerParam {
  double weights = 0, grads = 0, optimizer = 0;
  double total() const { return weights + grads + optimizer; }
};

struct ModelStateBytes {
  Bytes weights, grads, optimizer;
  Bytes total() const { return weights + grads + optimizer; }
};
/// Model states of `params` parameters under ZeRO stage `zero` over `dp` ranks.
ModelStateBytes model_state_bytes(double params, int zero, int dp, StateBytesPerParam per_param);

class StackProfile;  // stack_profile.hpp

struct MemoryOptions {
  /// The software stack whose memory rules apply; null: the built-in `fused` stack.
  std::shared_ptr<const StackProfile> stack;
  bool dropout = true;  ///< Korthikanti's formulas assume dropout (GPT); Llama trains without
  bool flash_attention = false;  ///< true: no s x s score tensors are stored
  /// CUDA context, cuBLAS workspaces, NCCL buffers and caching-allocator slack. Assumed 2 GiB
  /// (about 0.5 context + workspaces, 0.5 NCCL, 1 fragmentation) until calibrated against measured
  /// peaks.
  Bytes framework_overhead = GiB(2.0);
  int vocab_multiple = 128;              ///< Megatron --make-vocab-size-divisible-by
  std::optional<PipelineLayout> layout;  ///< default: layout_of(model, plan) (pipeline_layout.hpp)
};

/// Activation bytes of one layer for one micro-batch on one tensor-parallel rank.
Bytes activation_bytes_per_layer(const ModelSpec& spec, int mbs, int tp, bool sp,
                                 Recompute recompute, const MemoryOptions& options = {});

/// Copies of the stage's per-micro-batch activations alive at its peak (see the header comment).
double inflight_activation_sets(Schedule schedule, int pp, int vpp, int stage, int microbatches);

struct MemoryBreakdown {
  int stage = 0;
  std::int64_t params = 0;  ///< parameters this rank holds before ZeRO sharding
  double inflight = 0;      ///< inflight_activation_sets for this stage
  Bytes weights, grads, optimizer;
  Bytes activations;          ///< per layer x layers of the stage x inflight
  Bytes embedding_logits;     ///< embedding dropout masks (first stage), norm/LM-head/logits (last)
  Bytes recompute_workspace;  ///< transient working set of activation recomputation and of an unfused attention's backward
  Bytes zero3_gather;         ///< ZeRO-3: unsharded weights of two layers
  Bytes framework_copies;     ///< e.g. eager PyTorch: autocast's bf16 weight copies + DDP gradient buckets
  Bytes overhead;             ///< MemoryOptions::framework_overhead
  /// How far the optimizer step's own peak (states, gradients and the optimizer's temporaries, measured by an
  /// imported stack) rises above the parts above; 0 when the forward/backward peak is the higher one.
  Bytes optimizer_step;
  Bytes total() const {
    return weights + grads + optimizer + activations + embedding_logits + recompute_workspace +
           zero3_gather + framework_copies + optimizer_step + overhead;
  }
  bool fits(Bytes capacity) const { return total() <= capacity; }
};

/// Peak bytes on one rank of pipeline stage `stage`. The plan must pass validate() for the model.
MemoryBreakdown memory_per_rank(const ModelSpec& spec, const Plan& plan, int stage,
                                const MemoryOptions& options = {});
/// The stage with the largest peak (the lowest such stage on ties).
MemoryBreakdown peak_memory(const ModelSpec& spec, const Plan& plan,
                            const MemoryOptions& options = {});

}  // namespace scalescope::models
