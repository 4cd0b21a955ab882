// Exact parameter counts: whole model, per pipeline stage, per tensor-parallel rank.
#include <cassert>

#include "scalescope/models/counts.hpp"

namespace scalescope::models {

namespace {

using i64 = std::int64_t;

i64 norm_params(const ModelSpec& s) {
  return s.norm == NormKind::layernorm ? 2 * i64{s.hidden} : i64{s.hidden};
}

LayerParams layer_params(const ModelSpec& s) {
  const i64 h = s.hidden, q = s.q_dim(), k = s.kv_dim(), f = s.ffn_hidden;
  const i64 fc1_rows = s.ffn == FfnKind::swiglu ? 2 * f : f;
  LayerParams p;
  p.attn_qkv_weight = h * (q + 2 * k);
  p.attn_qkv_bias = s.has_qkv_bias() ? q + 2 * k : 0;
  p.attn_out_weight = q * h;
  p.attn_out_bias = s.bias ? h : 0;
  p.mlp_in_weight = h * fc1_rows;
  p.mlp_in_bias = s.bias ? fc1_rows : 0;
  p.mlp_out_weight = f * h;
  p.mlp_out_bias = s.bias ? h : 0;
  p.norms = 2 * norm_params(s);
  return p;
}

}  // namespace

ParamCounts count_params(const ModelSpec& s) {
  ParamCounts c;
  c.embedding = s.vocab * s.hidden;
  c.positions = s.positional == Positional::learned ? i64{s.seq_len} * s.hidden : 0;
  c.layer = layer_params(s);
  c.layers = s.layers;
  c.final_norm = norm_params(s);
  c.lm_head = s.tied_embeddings ? 0 : s.vocab * s.hidden;
  return c;
}

i64 padded_vocab(i64 vocab, int tp, int multiple) {
  assert(tp > 0 && multiple > 0 && "padded_vocab: tp and multiple must be positive");
  const i64 m = i64{tp} * multiple;
  return (vocab + m - 1) / m * m;
}

std::vector<int> even_layer_split(int layers, int chunks) {
  assert(chunks > 0 && "even_layer_split: chunks must be positive");
  std::vector<int> out(static_cast<std::size_t>(chunks), layers / chunks);
  for (int i = 0; i < layers % chunks; ++i) ++out[static_cast<std::size_t>(i)];
  return out;
}

int PipelineLayout::layers_on_stage(int stage) const {
  int n = 0;
  for (std::size_t c = static_cast<std::size_t>(stage); c < layers_per_chunk.size();
       c += static_cast<std::size_t>(pp)) {
    n += layers_per_chunk[c];
  }
  return n;
}

PipelineLayout even_layout(const ModelSpec& spec, int pp, int vpp) {
  return PipelineLayout{pp, even_layer_split(spec.layers, pp * vpp)};
}

StageParams params_per_tp_rank(const ModelSpec& s, const PipelineLayout& layout, int stage, int tp,
                               int vocab_multiple) {
  assert(layout.pp > 0 && stage >= 0 && stage < layout.pp &&
         "params_per_tp_rank: stage out of range");
  assert(layout.layers_per_chunk.size() % static_cast<std::size_t>(layout.pp) == 0 &&
         "params_per_tp_rank: layers_per_chunk must have pp * vpp entries");
  assert(tp > 0 && s.heads % tp == 0 && s.kv_heads % tp == 0 && s.ffn_hidden % tp == 0 &&
         "params_per_tp_rank: tp must divide heads, kv_heads and ffn_hidden");
  const LayerParams l = layer_params(s);
  // Column-parallel (split): qkv and fc1 with their biases. Row-parallel: out-proj and fc2 weights
  // split, their biases replicated. Norms replicated.
  const i64 layer_rank = (l.attn_qkv_weight + l.attn_qkv_bias + l.attn_out_weight +
                          l.mlp_in_weight + l.mlp_in_bias + l.mlp_out_weight) /
                             tp +
                         l.attn_out_bias + l.mlp_out_bias + l.norms;
  const i64 vocab_rows = padded_vocab(s.vocab, tp, vocab_multiple) / tp;
  const bool first = stage == 0, last = stage == layout.pp - 1;

  StageParams p;
  p.largest_layer = layer_rank;
  p.layers = layer_rank * layout.layers_on_stage(stage);
  if (first) {
    p.embedding = vocab_rows * s.hidden;
    if (s.positional == Positional::learned) p.embedding += i64{s.seq_len} * s.hidden;
  }
  if (last) {
    const ParamCounts c = count_params(s);
    p.head = c.final_norm;
    if (!s.tied_embeddings || layout.pp > 1) p.head += vocab_rows * s.hidden;
  }
  return p;
}

StageParams params_per_stage(const ModelSpec& spec, const PipelineLayout& layout, int stage) {
  return params_per_tp_rank(spec, layout, stage, 1, 1);
}

}  // namespace scalescope::models
