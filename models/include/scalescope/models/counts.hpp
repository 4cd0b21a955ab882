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
//
// FLOPs per token (a multiply-add is 2 FLOPs; s = sequence length):
//   forward  = per layer 2 * (matmul weights) + attention scores 4*s*q (QK^T and AV; halved if
//   causal)
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

/// Parameters of one transformer layer, by component.
struct LayerParams {
  std::int64_t attn_qkv_weight = 0, attn_qkv_bias = 0, attn_out_weight = 0, attn_out_bias = 0;
  std::int64_t mlp_in_weight = 0, mlp_in_bias = 0;  ///< fc1 (gelu) or gate+up (swiglu)
  std::int64_t mlp_out_weight = 0, mlp_out_bias = 0;
  std::int64_t norms = 0;  ///< both norms of the layer

  std::int64_t attention() const {
    return attn_qkv_weight + attn_qkv_bias + attn_out_weight + attn_out_bias;
  }
  std::int64_t mlp() const { return mlp_in_weight + mlp_in_bias + mlp_out_weight + mlp_out_bias; }
  std::int64_t biases() const { return attn_qkv_bias + attn_out_bias + mlp_in_bias + mlp_out_bias; }
  std::int64_t matmul_weights() const {
    return attn_qkv_weight + attn_out_weight + mlp_in_weight + mlp_out_weight;
  }
  std::int64_t total() const { return attention() + mlp() + norms; }
};

/// Parameters of the whole model, by component.
struct ParamCounts {
  std::int64_t embedding = 0;  ///< vocab x hidden
  std::int64_t positions = 0;  ///< seq_len x hidden when positional == learned
  LayerParams layer;           ///< one layer (all layers are alike)
  int layers = 0;
  std::int64_t final_norm = 0;
  std::int64_t lm_head = 0;  ///< vocab x hidden when untied, 0 when tied

  std::int64_t layers_total() const { return layer.total() * layers; }
  std::int64_t total() const {
    return embedding + positions + layers_total() + final_norm + lm_head;
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
  std::int64_t embedding = 0;  ///< word embedding (+ learned positions) on the first stage
  std::int64_t head = 0;       ///< final norm + LM head on the last stage; with tied embeddings and
                          ///< pp > 1 the last stage keeps its own copy of the embedding (Megatron)
  std::int64_t largest_layer = 0;  ///< parameters of one layer (for ZeRO-3 gather buffers)
  std::int64_t total() const { return layers + embedding + head; }
};

/// How layers sit on stages: layers_per_chunk has pp * vpp entries, chunk c runs on stage c % pp
/// (Megatron's interleaved placement; with vpp = 1 chunk c is stage c).
struct PipelineLayout {
  int pp = 1;
  std::vector<int> layers_per_chunk;
  int vpp() const { return static_cast<int>(layers_per_chunk.size()) / pp; }
  int layers_on_stage(int stage) const;
};
/// The even layout for a plan (vpp chunks per stage).
PipelineLayout even_layout(const ModelSpec& spec, int pp, int vpp = 1);

/// Parameters of pipeline stage `stage` (0-based), whole (tp = 1).
StageParams params_per_stage(const ModelSpec& spec, const PipelineLayout& layout, int stage);
/// Parameters of one tensor-parallel rank of stage `stage`, Megatron-style: qkv and fc1 (and their
/// biases) split by columns, out-proj and fc2 weights by rows with their biases and the norms
/// replicated; embedding and LM head split over the padded vocabulary (padded_vocab(V, tp,
/// vocab_multiple) / tp rows); learned positions replicated. Requires tp to divide heads, kv_heads
/// and ffn_hidden (assert; validate() checks it for plans).
StageParams params_per_tp_rank(const ModelSpec& spec, const PipelineLayout& layout, int stage,
                               int tp, int vocab_multiple = 128);

struct FlopOptions {
  bool attention_scores = true;  ///< count the QK^T and AV matmuls
  bool causal = false;           ///< halve them (a causal kernel skips the masked half); Narayanan
                                 ///< et al. count the full s x s product
  Recompute recompute = Recompute::none;
  int seq_len = 0;  ///< 0: the model's seq_len
};

/// FLOPs per token of one training iteration, split as in the header comment.
struct FlopsPerToken {
  double layer_matmul = 0;     ///< forward, one layer, weight matmuls
  double layer_attention = 0;  ///< forward, one layer, QK^T and AV
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
