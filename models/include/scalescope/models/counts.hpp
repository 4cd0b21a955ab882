// Exact parameter counts (whole model, per pipeline stage, per tensor-parallel rank), FLOPs per
// token and bytes moved by the memory-bound operations of a layer.
//
// Parameters of one layer (h = hidden, q = heads*head_dim, k = kv_heads*head_dim, f = ffn_hidden):
//   attention  qkv: h*(q + 2k) [+ q + 2k bias]       out: q*h [+ h bias]
//   mlp  gelu: h*f + f*h [+ f + h bias]    swiglu: 2*h*f (gate, up) + f*h [+ 2f + h bias]
//   norms: 2 per layer, layernorm 2h (weight, bias), rmsnorm h (weight)
// plus the word embedding V*h, learned positions seq_len*h, the final norm, and the LM head V*h
// when it is not tied to the embedding. For GPT (f = 4h, biases, layernorm) a layer has
// 12h^2 + 13h parameters, as in Narayanan et al. 2021, eq. (2).
// qk_norm (Qwen3) adds 2 d per layer (an RMSNorm weight over each query and each key head); with qk_norm_full
// (OLMo 2) q + k (one RMSNorm over the whole query and the whole key projection).
// Multi-head latent attention (DeepSeek-V2/V3; r_q, r_kv LoRA ranks, n heads, d_n / d_r / d_v nope, rope and
// value head dims): q_down h r_q + norm r_q, q_up r_q n (d_n + d_r) (without r_q: h n (d_n + d_r)),
// kv_down h (r_kv + d_r) + norm r_kv, kv_up r_kv n (d_n + d_v), out n d_v h.
// MoE layers (MoeSpec; e = ffn one expert's width, E experts, k top_k): router h E (+ E score-correction
// bias, + h for Qwen2-MoE's shared-expert gate), E routed experts of (2 or 3) h e each, the shared experts as
// one MLP of their total width. A token activates the router, the shared experts and k routed experts:
// active = total - (E - k) x one expert (Mixtral 8x7B: 46.70B total, 12.88B active; DeepSeek-V3: 671B, 37B).
// Hybrid models (ModelSpec::hybrid_pattern) have one block per layer, each with its own norm: a Mamba-2 layer
// (MambaSpec; d_i inner, G groups, N state, n heads, c conv taps) in_proj h (2 d_i + 2 G N + n), conv1d
// (d_i + 2 G N)(c + 1) with its bias, dt_bias, A_log and D (3 n), the gated RMSNorm's d_i weights, out_proj d_i h;
// an attention layer (qkv, out); an MLP layer (fc1, fc2); an MoE layer (router, shared and routed experts).
//
// FLOPs per token (a multiply-add is 2 FLOPs; s = sequence length):
//   forward  = per layer 2 * (matmul weights a token activates) + attention scores 2*s*heads*(d_qk + d_v)
//   (QK^T and AV; 4*s*q without MLA; halved if causal; only in layers with attention)
//              + per Mamba-2 layer the chunked scan (SSD, Dao & Gu 2024 section 6; P head dim, Q chunk):
//   n (2 N P [chunk states] + 2 N P [outputs from the states] + Q P [within the chunk, causal half])
//   + G Q N [C B^T of each chunk, causal half]
//              + LM head 2*h*V
//   backward = 2 * forward (every term is a matmul: gradients for inputs and for weights)
//   recompute: full = one more forward of the layers (not of the LM head);
//              selective = the attention-score part of the layers' forward only (Korthikanti 2022)
// For GPT with full recompute this is Narayanan et al. 2021, eq. (3), divided by B*s tokens:
//   96 l h^2 (1 + s/(6h) + V/(16 l h)).
#pragma once

#include <cstdint>
#include <vector>

#include "scalescope/models/model_spec.hpp"
#include "scalescope/models/plan.hpp"
#include "scalescope/sim/units.hpp"

namespace scalescope::models {

/// Parameters of one transformer layer (dense or MoE), by component.
struct LayerParams {
  /// attn_qkv_weight: the projections tensor parallelism splits by columns (MLA: q_up or q, kv_up);
  /// attn_replicated: MLA's down projections, which Megatron-Core keeps whole on every TP rank.
  std::int64_t attn_qkv_weight = 0, attn_qkv_bias = 0, attn_out_weight = 0, attn_out_bias = 0;
  std::int64_t attn_replicated = 0;
  /// The dense MLP (dense layers) or the shared experts (MoE layers; 0 without them).
  std::int64_t mlp_in_weight = 0, mlp_in_bias = 0;  ///< fc1 (gelu) or gate+up (swiglu)
  std::int64_t mlp_out_weight = 0, mlp_out_bias = 0;
  std::int64_t norms = 0;  ///< both norms of the layer (+ MLA's latent norms, qk norms)
  std::int64_t router = 0;         ///< MoE router h x E (+ bias, + shared-expert gate)
  /// A Mamba-2 mixer (hybrid models): in_proj (column-parallel) and out_proj (row-parallel) weights, and the
  /// vectors tensor parallelism splits with the heads (conv1d weight and bias, dt_bias, A_log, D, the gated norm).
  std::int64_t mamba_in_weight = 0, mamba_out_weight = 0, mamba_split = 0;
  std::int64_t expert_weight = 0;  ///< one routed expert (fc1 + fc2)
  int experts = 0, top_k = 0;      ///< routed experts of the layer and per token (0 in a dense layer)

  std::int64_t attention() const {
    return attn_qkv_weight + attn_qkv_bias + attn_out_weight + attn_out_bias + attn_replicated;
  }
  std::int64_t mlp() const { return mlp_in_weight + mlp_in_bias + mlp_out_weight + mlp_out_bias; }
  std::int64_t mamba() const { return mamba_in_weight + mamba_out_weight + mamba_split; }
  std::int64_t routed() const { return expert_weight * experts; }
  std::int64_t biases() const { return attn_qkv_bias + attn_out_bias + mlp_in_bias + mlp_out_bias; }
  /// Weight matrices a dense layer runs (MoE layer: attention and shared experts, no router or routed experts).
  std::int64_t matmul_weights() const {
    return attn_qkv_weight + attn_out_weight + attn_replicated + mlp_in_weight + mlp_out_weight + mamba_in_weight +
           mamba_out_weight;
  }
  /// Weight matrices one token runs through: matmul_weights + router + top_k routed experts.
  std::int64_t active_matmul_weights() const { return matmul_weights() + router + expert_weight * top_k; }
  std::int64_t total() const { return attention() + mlp() + mamba() + norms + router + routed(); }
  /// Parameters one token uses.
  std::int64_t active() const { return total() - routed() + expert_weight * top_k; }
};

/// Parameters of the whole model, by component.
struct ParamCounts {
  std::int64_t embedding = 0;  ///< vocab x hidden
  std::int64_t positions = 0;  ///< seq_len x hidden when positional == learned
  LayerParams layer;           ///< one dense transformer layer (every layer of a dense model)
  LayerParams moe_layer;       ///< one MoE layer (MoE models; of a hybrid model, its 'E' block)
  /// Hybrid models: one layer of each single-block kind ('M', '*', '-') and how many the model has.
  LayerParams mamba_layer, attention_layer, mlp_layer;
  int layers = 0;
  int moe_layers = 0;          ///< of `layers`
  int mamba_layers = 0, attention_layers = 0, mlp_layers = 0;  ///< of `layers` (hybrid models)
  std::int64_t final_norm = 0;
  std::int64_t lm_head = 0;  ///< vocab x hidden when untied, 0 when tied

  /// Dense transformer layers (0 in a hybrid model).
  int dense_layers() const { return layers - moe_layers - mamba_layers - attention_layers - mlp_layers; }
  /// One layer of kind `k` (`moe`: an MoE transformer layer).
  const LayerParams& of(LayerKind k, bool moe = false) const;
  std::int64_t layers_total() const {
    return layer.total() * dense_layers() + moe_layer.total() * moe_layers + mamba_layer.total() * mamba_layers +
           attention_layer.total() * attention_layers + mlp_layer.total() * mlp_layers;
  }
  std::int64_t total() const {
    return embedding + positions + layers_total() + final_norm + lm_head;
  }
  /// Parameters one token uses (MoE: the top_k routed experts of each MoE layer; = total() for dense models).
  std::int64_t active() const {
    return total() - (moe_layer.total() - moe_layer.active()) * moe_layers;
  }
  /// Everything but embedding, positions and LM head (the "non-embedding" count of scaling laws).
  std::int64_t non_embedding() const { return layers_total() + final_norm; }
};

ParamCounts count_params(const ModelSpec& spec);

/// The vocabulary as Megatron-LM stores it: rounded up to a multiple of `multiple` * tp
/// (--make-vocab-size-divisible-by, default 128). multiple = 1 pads only to a multiple of tp.
std::int64_t padded_vocab(std::int64_t vocab, int tp, int multiple);

/// `layers` split into `chunks` pipeline chunks as evenly as possible (earlier chunks get the extra
/// layer when it does not divide).
std::vector<int> even_layer_split(int layers, int chunks);

/// Parameters held by one pipeline stage (and, with tp > 1, by one tensor-parallel rank of it).
struct StageParams {
  std::int64_t layers = 0;     ///< transformer layers of this stage
  /// Of `layers`: the routed experts' parameters (E / ep experts of each MoE layer, / etp), which are reduced
  /// and sharded over the expert-data-parallel group, not over dp x cp.
  std::int64_t experts = 0;
  std::int64_t embedding = 0;  ///< word embedding (+ learned positions) on the first stage
  std::int64_t head = 0;       ///< final norm + LM head on the last stage; with tied embeddings and
                          ///< pp > 1 the last stage keeps its own copy of the embedding (Megatron)
  std::int64_t largest_layer = 0;  ///< parameters of one layer (for ZeRO-3 gather buffers)
  std::int64_t dense_layer = 0;    ///< one dense layer on this rank (hybrid: the mean of the model's non-MoE layers)
  std::int64_t moe_layer = 0;      ///< one MoE layer on this rank, routed experts included
  std::int64_t moe_layer_experts = 0;  ///< of moe_layer: the routed experts
  std::int64_t total() const { return layers + embedding + head; }
};

/// How layers sit on stages: layers_per_chunk has pp * vpp entries, chunk c runs on stage c % pp
/// (Megatron's interleaved placement; with vpp = 1 chunk c is stage c).
struct PipelineLayout {
  int pp = 1;
  std::vector<int> layers_per_chunk;
  int vpp() const { return static_cast<int>(layers_per_chunk.size()) / pp; }
  int layers_on_stage(int stage) const;
  /// MoE layers of `spec` on pipeline stage `stage` (0 for dense models).
  int moe_layers_on_stage(const ModelSpec& spec, int stage) const;
  /// Layers of kind `kind` (ModelSpec::layer_kind) on pipeline stage `stage`.
  int kind_layers_on_stage(const ModelSpec& spec, LayerKind kind, int stage) const;
  /// Index of the first layer of chunk (virtual stage) `chunk`.
  int first_layer_of_chunk(int chunk) const;
};
/// The even layout for a plan (vpp chunks per stage).
PipelineLayout even_layout(const ModelSpec& spec, int pp, int vpp = 1);

/// Parameters of pipeline stage `stage` (0-based), whole (tp = 1).
StageParams params_per_stage(const ModelSpec& spec, const PipelineLayout& layout, int stage);
/// Parameters of one tensor-parallel rank of stage `stage`, Megatron-style: qkv and fc1 (and their
/// biases) split by columns, out-proj and fc2 weights by rows with their biases and the norms
/// replicated; embedding and LM head split over the padded vocabulary (padded_vocab(V, tp,
/// vocab_multiple) / tp rows); learned positions replicated. MoE layers: router and MLA down projections
/// replicated, shared experts split like the MLP, E / ep routed experts each split over etp ranks. Requires tp
/// to divide heads, kv_heads and ffn_hidden, ep to divide experts and etp the expert width (assert; validate()
/// checks it for plans).
StageParams params_per_tp_rank(const ModelSpec& spec, const PipelineLayout& layout, int stage,
                               int tp, int vocab_multiple = 128, int ep = 1, int etp = 1);

/// LoRA adapter parameters of one transformer layer on one tensor-parallel rank (Plan::lora_rank r, lora_modules):
/// r (in + out) per adapted linear module at the widths the rank computes with: qkv h -> (q + 2k)/tp and fc1
/// h -> (2 or 1) f/tp (column-parallel: A whole, B split), proj q/tp -> h and fc2 f/tp -> h (row-parallel: A
/// split, B whole). 0 without LoRA. Megatron-Bridge splits the whole-width factor over TP as well; the difference
/// is r h (1 - 1/tp) per module, below 0.5% of a layer for r <= 64.
double lora_params_per_layer(const ModelSpec& spec, const Plan& plan);

struct FlopOptions {
  bool attention_scores = true;  ///< count the QK^T and AV matmuls
  bool causal = false;           ///< halve them (a causal kernel skips the masked half); Narayanan
                                 ///< et al. count the full s x s product
  Recompute recompute = Recompute::none;
  int seq_len = 0;  ///< 0: the model's seq_len
  /// Tokens a query attends over: packed documents (Plan::packed_doc_tokens) attend inside their document. 0: seq_len.
  int attention_span = 0;
  /// LoRA: frozen base weights (their weight gradients are not computed: the backward of the weight matmuls and
  /// the LM head is one matmul, the input gradient, instead of two) and `adapter_params` per layer (whole layer,
  /// tp = 1) trained in full.
  bool frozen_base = false;
  double adapter_params = 0.0;
};

/// FLOPs per token of one training iteration, split as in the header comment.
struct FlopsPerToken {
  double layer_matmul = 0;     ///< forward, one dense layer, weight matmuls
  double moe_layer_matmul = 0;  ///< forward, one MoE layer, the weight matmuls a token runs (top_k experts)
  double layer_attention = 0;  ///< forward, one layer with attention, QK^T and AV
  double mamba_layer_matmul = 0;  ///< forward, one Mamba-2 layer, in_proj and out_proj
  double mamba_layer_scan = 0;    ///< forward, one Mamba-2 layer, the chunked scan (header comment)
  int attention_layers = 0;       ///< layers with attention (every layer but a hybrid model's M, - and E)
  double layer_adapters = 0;   ///< forward, one layer, LoRA adapter matmuls
  double lm_head = 0;          ///< forward, logits
  double forward = 0;          ///< all layers + LM head
  double backward = 0;
  double recompute = 0;
  double total() const { return forward + backward + recompute; }
};
FlopsPerToken flops_per_token(const ModelSpec& spec, const FlopOptions& options = {});

/// Bytes read + written by the memory-bound operations of one layer for `tokens` tokens on one
/// tensor-parallel rank (e = bytes per element, 2 for bf16; q, k as above, f = ffn_hidden):
///   norms        fwd 2 * 2h e (read x, write y)          bwd 2 * 3h e (read x, dy; write dx)
///   activation   gelu fwd 2f e, bwd 3f e; swiglu fwd 3f e (read gate, up; write), bwd 5f e
///   residual     fwd 2 * 3h e (read a, b; write a+b)     bwd 2 * 3h e (dx = dy + dy_branch at each
///   fork) rope         fwd 2(q+k) e (read and write q, k)       bwd 2(q+k) e attention
///   flash-attention IO at its minimum: fwd reads q, k, v and writes o: (2q + 2k) e;
///                bwd reads q, k, v, o, do and writes dq, dk, dv: (4q + 4k) e
/// Matmul operands and bias adds are left to the GEMM model (bias adds are fused into epilogues).
/// q, k, f terms are divided by tp; h terms by tp only with sequence parallelism.
struct LayerIo {
  Bytes norms, activation, residual, rope, attention;
  Bytes total() const { return norms + activation + residual + rope + attention; }
};
struct LayerIoBytes {
  LayerIo forward, backward;
};
LayerIoBytes layer_io_bytes(const ModelSpec& spec, std::int64_t tokens, int tp = 1, bool sp = false,
                            double bytes_per_element = 2.0);

}  // namespace scalescope::models
