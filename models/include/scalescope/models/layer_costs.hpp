// Compute time of the pieces a training task graph is made of, on one tensor-parallel rank for one
// micro-batch: a transformer layer (forward, backward, recompute), the embedding, the LM head with
// its loss, and the optimizer step; each is a list of kernels priced by ComputeModel.
//
// Kernels of one layer (t = mbs * seq tokens, h hidden, q / k query / kv widths, f ffn, tp ranks;
// cuBLAS (m, n, k) of Y = X W: forward (out, t, in), dgrad (in, t, out), wgrad (out, in, t)):
//   GEMMs: qkv (q + 2k)/tp x h, out-proj h x q/tp, fc1 f/tp (swiglu 2f/tp) x h, fc2 h x f/tp;
//          backward = dgrad + wgrad of each.
//   attention core, flash: one kernel of 4 t s q/tp FLOPs x 1/2 (the causal kernel skips the masked
//          half), IO from layer_io_bytes; backward 2.5x the forward FLOPs (FlashAttention-2: 5 matmuls
//          against 2). Not flash (Megatron 2021): batched GEMMs QK^T and AV (b*heads/tp of s x s x d),
//          backward 4 of them, plus fused scale-mask-softmax (fwd 4 bytes per score element, bwd 6)
//          and, with dropout, dropout (fwd 5 bytes per element: read, write, 1-byte mask; bwd 5).
//   memory-bound: 2 norms, activation, 2 residual adds, RoPE (when the model uses it), bytes from
//          layer_io_bytes (counts.hpp). Bias adds are fused into GEMM epilogues.
// Recompute: full = the whole forward again before the backward; selective = the attention core
//   forward again (nothing with flash attention: its backward kernel already recomputes the scores).
// Embedding: forward gathers t rows (read + write t h 2 bytes; + learned positions 3 t h 2);
//   backward: dense gradient of the vocab shard (zero-fill and index-add, t h 4 + V/tp h 2) plus
//   accumulation into the gradient buffer (V/tp h (2 + 2g): read the bf16 gradient, read and write
//   the buffer of g bytes per element).
// LM head: final norm, logits GEMM V/tp x h, vocab-parallel cross entropy in fp32 (fwd: read bf16
//   logits, write fp32 exp and softmax: t V/tp 10 bytes; bwd: read softmax, write bf16 dlogits:
//   t V/tp 6 bytes); backward dgrad + wgrad of the logits GEMM and the final-norm backward.
// Optimizer (Adam, multi-tensor): bytes per parameter held by the rank after ZeRO sharding,
//   mixed precision: 4 (gradient-norm read of the fp32 grad) + 16 read (grad, master, m, v) + 12
//   written (master, m, v) + 2 (bf16 weight copy) = 34; bf16: 2 + 8 read + 6 written = 16.
// Every kernel costs ComputeModel::kernel_time (never less than the launch overhead).
//
// Software stacks (stack_profile.hpp). Which memory-bound kernels a layer runs, and how many bytes each moves,
// depends on the software stack: the kernel lists above are the built-in `fused` stack
// (models/stacks/fused.json); plain PyTorch eager training issues many more (models/stacks/pytorch-eager.json:
// autocast casts, fp32 norms and residual stream, FSDP2 copies, ~768 KB per token per layer for llama-1b
// against 242 KB fused); a stack imported from a trace lists the user's own kernels with their measured times.
// layer_cost() and edge_cost() evaluate the compute model's stack: each row's kernels priced by the
// ComputeModel (GEMM, attention, memory-bound) at the plan's symbol values, measured rows scaled from the
// trace's shape (stack_profile.hpp), each kernel charged max(t, launch overhead) (launch_floor) or t + the
// stack's measured gap between kernels.
#pragma once

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "scalescope/models/compute_model.hpp"
#include "scalescope/models/model_spec.hpp"
#include "scalescope/models/plan.hpp"
#include "scalescope/sim/units.hpp"

namespace scalescope::models {

/// A sum of kernels: time, executed FLOPs, HBM bytes of the memory-bound kernels, and the time
/// split by the provenance of each kernel's cost.
struct PhaseCost {
  Seconds time;
  double flops = 0.0;
  Bytes bytes;
  int kernels = 0;
  std::array<Seconds, kNumProvenances> by_provenance{};
  /// Time by kernel kind: 0 GEMM (FLOPs, no bytes), 1 attention (FLOPs and bytes), 2 memory-bound (bytes only).
  std::array<Seconds, 3> by_kind{};
  /// Sums of each kernel's time x its KernelInterference factors (a launch gap, where the host is
  /// slower than the kernel, counts with factor 1): interference() divides them by time.
  Seconds slowed_time, slowing_time;
  /// The kernels' energy beyond the GPU's idle draw (J; KernelCost::energy, 0 without a power model), and the
  /// device time of the tensor-core kernels among them that the power cap stretches (KernelCost::tensor).
  double energy = 0.0;
  Seconds tensor_time;

  /// The kernels' time-weighted interference factors ({1, 1} when empty).
  KernelInterference interference() const;

  /// Adds one kernel of device cost `c` (charged max(c.time, launch overhead)).
  void add_kernel(const ComputeModel& model, KernelCost c, double kernel_flops = 0.0, Bytes kernel_bytes = Bytes(0));
  /// Adds one kernel of device cost `c` charged `charged` on its stream (>= c.time: launch floor or gap).
  void add_charged(KernelCost c, Seconds charged, double kernel_flops, Bytes kernel_bytes);
  PhaseCost& operator+=(const PhaseCost& o);
  PhaseCost operator*(double k) const;
};

struct CostOptions {
  bool flash_attention = true;  ///< false: Megatron 2021 attention (materialised scores)
  /// The fused attention kernel of stack rows that name no `backend` (`--attention cudnn`: cuDNN's, which PyTorch's
  /// SDPA picks on H100 / H200 and Transformer Engine runs; default FlashAttention).
  AttentionBackend attention_backend = AttentionBackend::flash;
  bool dropout = false;         ///< dropout kernels on the scores (only without flash attention)
  std::string dtype = "bf16";   ///< GEMM data type
  std::string attention_dtype;  ///< attention data type; empty: `dtype` (FP8 plans keep bf16 attention)
  /// Data type of the layer's forward GEMMs (and their recompute); empty: `dtype`. "fp8_fast" where the stack runs
  /// FP8 fprop GEMMs with fast accumulation (StackProfile::fp8_fast_fprop).
  std::string forward_dtype;
  int vocab_multiple = 128;     ///< Megatron --make-vocab-size-divisible-by

  /// The data type of the attention kernels (and of a stack's `"dtype": "attention"` GEMM rows).
  const std::string& attention_type() const { return attention_dtype.empty() ? dtype : attention_dtype; }
};

struct LayerCost {
  PhaseCost forward, backward, recompute;
  /// The forward split at the host's synchronisation (StackRow::after_sync), empty unless the stack's rows say
  /// where it is (StackProfile::splits_at_host_sync): the rows before it and those after. `forward` is priced
  /// as before, whole.
  PhaseCost forward_before_sync, forward_after_sync;
};
/// One transformer layer, one micro-batch of plan.mbs sequences, one tensor-parallel rank; `moe_layer`: an MoE
/// layer of an MoE model (the stack's rows with `when: moe_layer`), else a dense layer.
/// Hybrid models (ModelSpec::hybrid_pattern): `moe_layer` prices an 'E' layer; otherwise the model's mean of its
/// Mamba-2, attention and MLP layers.
LayerCost layer_cost(const ModelSpec& spec, const Plan& plan, const ComputeModel& model, const CostOptions& options = {},
                     bool moe_layer = false);
/// The mean of a hybrid model's non-MoE layers ('M', '*', '-'), each kind weighted by its share of them, from the cost
/// of one layer of each kind (layer_cost, fp8_layer_cost).
LayerCost hybrid_dense_layer_mix(const ModelSpec& spec, const std::function<LayerCost(LayerKind)>& cost_of);

struct EdgeCost {
  PhaseCost embedding_forward, embedding_backward, head_forward, head_backward;
};
/// Embedding (first stage) and final norm + LM head + loss (last stage), one micro-batch, one tp rank.
EdgeCost edge_cost(const ModelSpec& spec, const Plan& plan, const ComputeModel& model, const CostOptions& options = {});

/// Gradient bytes per element: 4 (fp32 main grads) for mixed precision and fp8, 2 for bf16 and fp16.
double grad_bytes_per_element(Precision precision);
/// The same for a plan: 2 when it accumulates and reduces gradients in 16 bits (grad_reduce_in_fp32=false).
double grad_bytes_per_element(const Plan& plan);

/// The stack's optimizer step over the `params` parameters this rank updates (already divided by dp under ZeRO):
/// built in, Adam at 34 bytes per parameter mixed (fused) or torch's fused AdamW at 28 (pytorch-eager).
PhaseCost optimizer_cost(double params, const ModelSpec& spec, const Plan& plan, const ComputeModel& model,
                         const CostOptions& options = {});

}  // namespace scalescope::models
