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
// Frameworks (ComputeModel::framework()). The memory-bound bytes above are those of FUSED training
// (Megatron-LM: fused RMSNorm / RoPE / SwiGLU / cross entropy, bf16 activations and weights, the fp32
// main-grad accumulated by the wgrad GEMM). Plain PyTorch eager training, as validation/harness runs it,
// issues many more: KernelFramework::pytorch_eager replaces them by the byte table below, counted by hand from
// validation/harness/model.py and parallel.py (GEMMs and flash attention unchanged). Per token of one
// micro-batch on one tp rank (H hidden, replicated over tp since the harness has no sequence parallel;
// Q, K query / kv widths and F ffn per rank; a = residual-stream bytes, b = 2 (bf16); c = a + b, one
// fp32 -> bf16 cast or its backward):
//   mode autocast (zero=0/1: bf16 autocast over fp32 parameters): a = 4, c = 6
//   mode FSDP2 bf16 (zero=2/3: fully_shard, MixedPrecisionPolicy(param bf16, reduce fp32), no autocast;
//     reshard_after_forward for zero=3 only): a = 2, c = 0
//   row                 forward               backward
//   norms (2, fp32)     2 x 2a H              2 x 5a H (input grad: read dy, x, write dx; weight grad)
//   residual (2)        2 x (2a + b) H        2 x (c + 3a) H (branch grad cast; dx = dy + norm-path dx)
//   linear input casts  5 c H (q, k, v, gate, up)  5 c H + 3 x 3a H (sum of the casts' grads; FSDP2: 3 x 3b H)
//   rope (q and k)      10 b (Q + K) + cos/sin casts 4 s d (4 + b) per micro-batch   10 b (Q + K)
//   layout copies       -                     2 b (Q + K) (RoPE grads to (b, s, heads*d) for the dgrads)
//   activation swiglu   5 b F (silu, mul)     9 b F (mul backward x 2, silu backward)
//   weights, per parameter of the rank's linears and per micro-batch:
//     autocast          6 (cast to bf16)      18 (cast the bf16 wgrad back: 6; accumulate into .grad: 12)
//     FSDP2, n shards   6/n + 4 (all-gather copy-in cast of the fp32 shard, copy-out)
//                       (zero=3: 6/n + 4 again) + 6 (reduce-scatter copy-in to fp32) + 12/n (accumulate
//                       into the sharded fp32 grad); the root unit (embedding, head) is never resharded
//                       after forward, so it gathers once.
//   LM head: final norm 2a H / 5a H; input cast c H / c H; cross_entropy(logits.float()) per vocab
//     column on the rank: fwd (b + 4) + 8, bwd 4 + 12 + (4 + b); head weight as the layers' weights.
//   Embedding (parameter dtype a): fwd 2a H; bwd 3a H per token + a V H (zero-filled dense grad) + 12 V H
//     (autocast: accumulation into .grad; FSDP2: the root unit's gather and reduce traffic) per micro-batch.
//   Optimizer: torch.optim.AdamW(fused=True): 28 bytes per parameter (read grad, param, m, v; write
//     param, m, v), no gradient clipping and no bf16 weight copy (autocast casts per forward).
// For llama-1b (h 2048, q 2048, kv 512, ffn 8192) this is 768 KB per token per layer (fwd 268 KB, bwd
// 500 KB) plus 1.46 GB of weight traffic per layer and micro-batch, against 242 KB for fused training.
#pragma once

#include <array>
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

  /// The kernels' time-weighted interference factors ({1, 1} when empty).
  KernelInterference interference() const;

  /// Adds one kernel of device cost `c` (charged max(c.time, launch overhead)).
  void add_kernel(const ComputeModel& model, KernelCost c, double kernel_flops = 0.0, Bytes kernel_bytes = Bytes(0));
  PhaseCost& operator+=(const PhaseCost& o);
  PhaseCost operator*(double k) const;
};

struct CostOptions {
  bool flash_attention = true;  ///< false: Megatron 2021 attention (materialised scores)
  bool dropout = false;         ///< dropout kernels on the scores (only without flash attention)
  std::string dtype = "bf16";   ///< GEMM data type
  std::string attention_dtype;  ///< attention data type; empty: `dtype` (FP8 plans keep bf16 attention)
  int vocab_multiple = 128;     ///< Megatron --make-vocab-size-divisible-by
};

struct LayerCost {
  PhaseCost forward, backward, recompute;
};
/// One transformer layer, one micro-batch of plan.mbs sequences, one tensor-parallel rank.
LayerCost layer_cost(const ModelSpec& spec, const Plan& plan, const ComputeModel& model, const CostOptions& options = {});

struct EdgeCost {
  PhaseCost embedding_forward, embedding_backward, head_forward, head_backward;
};
/// Embedding (first stage) and final norm + LM head + loss (last stage), one micro-batch, one tp rank.
EdgeCost edge_cost(const ModelSpec& spec, const Plan& plan, const ComputeModel& model, const CostOptions& options = {});

/// One row of the eager-PyTorch byte table (header comment): bytes read + written by a group of
/// memory-bound kernels per micro-batch on one tp rank, and how many kernels carry them.
struct EagerRow {
  std::string name;
  Bytes forward, backward;
  int forward_kernels = 0, backward_kernels = 0;
};
/// The rows of one transformer layer (mode from plan.zero: 3 = FSDP2 bf16, else autocast).
std::vector<EagerRow> eager_layer_rows(const ModelSpec& spec, const Plan& plan);
/// The rows of the LM head with its loss (head = true) or of the embedding (head = false).
std::vector<EagerRow> eager_edge_rows(const ModelSpec& spec, const Plan& plan, bool head, int vocab_multiple = 128);

/// Bytes per element of the eager-PyTorch residual stream, which pipeline stages send each other: 4
/// under autocast (zero 0/1: fp32 parameters, the residual stays fp32), 2 under FSDP2 bf16 (zero 2/3).
double eager_residual_bytes(const Plan& plan);

/// Gradient bytes per element: 4 (fp32 main grads) for mixed precision and fp8, 2 for bf16 and fp16.
double grad_bytes_per_element(Precision precision);
/// The same for a plan: 2 when it accumulates and reduces gradients in 16 bits (grad_reduce_in_fp32=false).
double grad_bytes_per_element(const Plan& plan);

/// Adam step over the `params` parameters this rank updates (already divided by dp under ZeRO); with
/// KernelFramework::pytorch_eager the fused torch AdamW (28 bytes per parameter, one kernel).
PhaseCost optimizer_cost(double params, Precision precision, const ComputeModel& model);

}  // namespace scalescope::models
