// Per-rank memory model: weights, gradients and optimizer states (with ZeRO), activations for the
// micro-batches a pipeline schedule keeps in flight, embedding/logits buffers and a fixed overhead.
//
// Model states, bytes per parameter (weights / gradients / optimizer), Adam:
//   mixed + megatron : 2 / 4 / 12 = 18  bf16 weights, fp32 main grads, fp32 master + m + v
//                                        (Megatron-LM distributed-optimizer docs: 18, 6 + 12/d)
//   mixed + deepspeed: 2 / 2 / 12 = 16  fp16/bf16 weights and grads, K = 12 (Rajbhandari et al.
//   2020) mixed + torch_amp: 4 / 4 /  8 = 16  PyTorch autocast: fp32 weights (they are the master
//   copy),
//                                        fp32 grads, fp32 m + v (Megatron docs: 16, 8 + 8/d)
//   bf16 (any)       : 2 / 2 /  4 =  8  pure bf16: bf16 weights, grads, m and v, no fp32 master
//   (assumed)
// ZeRO over dp (Rajbhandari et al. 2020, Psi params, N_d = dp): stage 1 divides the optimizer
// states by N_d, stage 2 also the gradients, stage 3 also the weights: (2+2+K)Psi,
// (2+2)Psi + K Psi/N_d, 2 Psi + (2+K)Psi/N_d, (2+2+K)Psi/N_d for the deepspeed layout.
//
// Activations per layer and micro-batch (Korthikanti et al. 2022, 16-bit values, 1-byte dropout
// masks; s = seq_len, b = mbs, h = hidden, a = heads, t = tp; q, k = query / kv widths, f = ffn):
//   outside the tensor-parallel region (divided by t only with sp):
//     norm inputs 2 * 2sbh, qkv and fc1 inputs 2 * 2sbh, dropout masks 2 * sbh     -> 10 sbh
//   inside it (divided by t): Q, K, V 2sb(q + 2k), out-proj input 2sbq,
//     MLP gelu 2sbf (fc1 out) + 2sbf (gelu out), swiglu 2sb*2f + 2sbf;
//     scores 2as^2b (softmax) + as^2b (mask) + 2as^2b (dropout out)               -> 24 sbh +
//     5as^2b
//   selective recompute drops the score terms; flash attention replaces them by 4asb (fp32 row
//   statistics); full recompute keeps only the layer input 2sbh (/t with sp).
// For GPT (f = 4h, q = k = h) this is Table 2 of the paper: sbh(34 + 5as/h), sbh(10 + 24/t +
// 5as/(ht)), sbh(34/t + 5as/(ht)), sbh(10 + 24/t), sbh(34/t), 2sbh. In flight (copies of a stage's
// per-micro-batch activations alive at its peak, m micro-batches):
//   gpipe m; 1f1b min(m, pp - stage); interleaved min(m*vpp, 2(pp - stage - 1) + (vpp - 1)pp + 1) /
//   vpp chunks (Megatron's warm-up count + 1), i.e. L(1 + (p-1)/(p vpp)) layers on the first stage.
// Buffers: first stage, embedding dropout mask sbh (/t with sp) per in-flight micro-batch; last
// stage, final-norm and LM-head inputs 4sbh (/t with sp) + fp32 logits 4sbV/t per in-flight
// micro-batch (Korthikanti's 4sbh/t (1 + V/h)). Recompute working set: one layer's activations
// without recompute (full) or its score tensors (selective) for one micro-batch. ZeRO-3: two
// layers' unsharded weights (the one in use and the prefetched one).
// Dense stacks: with cp > 1 the activations and logits are those of the rank's seq_len / cp tokens, the
// model states are sharded over dp x cp (Megatron's distributed optimizer shards over the dp-cp group),
// and cp_comm=p2p adds two K/V receive buffers to the working set (cp_costs.hpp); precision=fp8 adds the
// FP8 weight copies to `weights` and keeps FP8 linear inputs (fp8_costs.hpp); grad_reduce_in_fp32=false
// makes the main gradients 2 bytes.
//
// torch_amp, plain PyTorch with autocast (what validation/harness runs without FSDP2: single GPU,
// DDP, ZeRO-1 = ZeroRedundancyOptimizer over DDP, DTensor TP, PP; zero <= 1), counted from what
// autograd keeps (validation/harness/model.py, T = s b tokens of one micro-batch, bytes):
//   per layer: the two RMSNorm inputs of the fp32 residual stream 2 * 4Th; autocast's bf16 copy of
//   the norm output made separately for each of q, k, v, gate, up 5 * 2Th; SDPA's q, k, v, output
//   and fp32 log-sum-exp 2Tq + 2 * 2Tk + 2Tq + 4T heads; the o-projection's contiguous input 2Tq;
//   SwiGLU's gate and up outputs, silu output and product 4 * 2Tf -> 18Th + (6Tq + 4Tk + 8Tf + 4T
//   heads) / t (norms and the autocast copies are replicated under DTensor TP).
//   last stage: final-norm input and its bf16 copy 6Th per in-flight micro-batch; fp32 log-softmax
//   output 4TV/t per in-flight micro-batch plus one transient fp32 logits (or its gradient) 4TV/t.
//   framework copies: autocast's bf16 weight copies (2 B/param, kept for backward) and, with dp > 1,
//   DDP's gradient buckets (4 B/param) plus one more gradient-sized fp32 buffer at the peak (4 B/param):
//   with one micro-batch per step the second bucket set DDP allocates when it rebuilds its buckets at
//   the second iteration (alive through that forward), with gradient accumulation a buffer the harness's
//   step holds from its second step on (validation/memory/README.md; not yet attributed to a tensor).
//   gradients (4 B/param) count only with gradient accumulation (> 1 micro-batch per step): with one
//   micro-batch they appear during backward while the activations are freed.
// torch_amp with zero 2/3 is FSDP2 as the harness runs it (bf16 compute parameters, no autocast): fp32
//   shards 4/dp + fp32 sharded gradients 4/dp + Adam 8/dp per parameter; zero 2 keeps the gathered bf16
//   parameters from forward to backward (+2 B/param), zero 3 holds two layers of them (2 x 2 B x layer
//   params); per layer 8Th (bf16 residual: the two norm inputs and the two saved norm outputs) + the
//   same tensor-parallel terms; last stage 4Th + 4TV per in-flight micro-batch + 4TV.
#pragma once

#include <optional>

#include "scalescope/models/counts.hpp"
#include "scalescope/models/model_spec.hpp"
#include "scalescope/models/plan.hpp"
#include "scalescope/sim/units.hpp"

namespace scalescope::models {

enum class Framework { megatron, deepspeed, torch_amp };
std::string_view to_string(Framework f);

struct StateBytesPerParam {
  double weights = 0, grads = 0, optimizer = 0;
  double total() const { return weights + grads + optimizer; }
};
StateBytesPerParam state_bytes_per_param(Precision precision, Framework framework);

struct ModelStateBytes {
  Bytes weights, grads, optimizer;
  Bytes total() const { return weights + grads + optimizer; }
};
/// Model states of `params` parameters under ZeRO stage `zero` over `dp` ranks.
ModelStateBytes model_state_bytes(double params, int zero, int dp, StateBytesPerParam per_param);

struct MemoryOptions {
  Framework framework = Framework::megatron;
  bool dropout = true;  ///< Korthikanti's formulas assume dropout (GPT); Llama trains without
  bool flash_attention = false;  ///< true: no s x s score tensors are stored
  /// CUDA context, cuBLAS workspaces, NCCL buffers and caching-allocator slack. Assumed 2 GiB
  /// (about 0.5 context + workspaces, 0.5 NCCL, 1 fragmentation) until calibrated against measured
  /// peaks.
  Bytes framework_overhead = GiB(2.0);
  int vocab_multiple = 128;              ///< Megatron --make-vocab-size-divisible-by
  std::optional<PipelineLayout> layout;  ///< default: even_layout(model, pp, vpp)
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
  Bytes recompute_workspace;  ///< transient working set of activation recomputation
  Bytes zero3_gather;         ///< ZeRO-3: unsharded weights of two layers
  Bytes framework_copies;     ///< torch_amp: autocast's bf16 weight copies + DDP gradient buckets
  Bytes overhead;             ///< MemoryOptions::framework_overhead
  Bytes total() const {
    return weights + grads + optimizer + activations + embedding_logits + recompute_workspace +
           zero3_gather + framework_copies + overhead;
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
