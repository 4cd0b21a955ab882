// Exact parameter counts: whole model, per pipeline stage, per tensor-parallel rank.
#include <algorithm>
#include <cassert>
#include <utility>

#include "scalescope/models/counts.hpp"

namespace scalescope::models {

namespace {

using i64 = std::int64_t;

i64 norm_params(const ModelSpec& s) {
  return s.norm == NormKind::layernorm ? 2 * i64{s.hidden} : i64{s.hidden};
}

/// An MLP of width f: fc1 (2f rows with swiglu), fc2; `in`/`out` weights and biases.
struct Mlp {
  i64 in = 0, in_bias = 0, out = 0, out_bias = 0;
};
Mlp mlp_params(const ModelSpec& s, i64 f) {
  if (f == 0) return {};
  const i64 h = s.hidden, fc1_rows = s.ffn == FfnKind::swiglu ? 2 * f : f;
  return {h * fc1_rows, s.bias ? fc1_rows : 0, f * h, s.bias ? h : 0};
}

/// One layer: attention (MHA/GQA or MLA), then the dense MLP or (moe) router, shared and routed experts.
LayerParams layer_params(const ModelSpec& s, bool moe) {
  const i64 h = s.hidden, q = s.q_dim(), k = s.kv_dim();
  LayerParams p;
  if (s.mla.enabled()) {
    const MlaSpec& a = s.mla;
    const i64 n = s.heads;
    const i64 q_up = n * a.qk_head_dim();
    p.attn_qkv_weight = (a.q_lora_rank > 0 ? i64{a.q_lora_rank} * q_up : h * q_up) + i64{a.kv_lora_rank} * n *
                                                                                       (a.nope_head_dim + a.v_head_dim);
    p.attn_replicated = (a.q_lora_rank > 0 ? h * a.q_lora_rank : 0) + h * (a.kv_lora_rank + a.rope_head_dim);
    p.attn_out_weight = n * a.v_head_dim * h;
    p.norms = (a.q_lora_rank > 0 ? a.q_lora_rank : 0) + a.kv_lora_rank;  // RMSNorm weights of the latents
  } else {
    p.attn_qkv_weight = h * (q + 2 * k);
    p.attn_qkv_bias = s.has_qkv_bias() ? q + 2 * k : 0;
    p.attn_out_weight = q * h;
  }
  p.attn_out_bias = s.bias ? h : 0;
  p.norms += 2 * norm_params(s) + (!s.qk_norm ? 0 : s.qk_norm_full ? q + k : 2 * i64{s.head_size()});
  const MoeSpec& e = s.moe;
  const Mlp mlp = mlp_params(s, moe ? e.shared_width() : s.ffn_hidden);
  p.mlp_in_weight = mlp.in;
  p.mlp_in_bias = mlp.in_bias;
  p.mlp_out_weight = mlp.out;
  p.mlp_out_bias = mlp.out_bias;
  if (moe) {
    const Mlp one = mlp_params(s, e.ffn_hidden);
    p.expert_weight = one.in + one.in_bias + one.out + one.out_bias;
    p.experts = e.experts;
    p.top_k = e.top_k;
    p.router = h * e.experts + (e.router_bias ? e.experts : 0) + (e.shared_expert_gate ? h : 0);
  }
  return p;
}

/// One layer of a hybrid model's single-block kinds: its block (from the transformer layer's parts) and one norm.
LayerParams hybrid_layer_params(const ModelSpec& s, LayerKind k) {
  if (k == LayerKind::transformer) return layer_params(s, false);
  LayerParams p = layer_params(s, k == LayerKind::moe);
  const i64 norm = norm_params(s);
  switch (k) {
    case LayerKind::mamba: {
      const MambaSpec& mb = s.mamba;
      LayerParams m;
      m.mamba_in_weight = i64{s.hidden} * mb.in_proj_width();
      m.mamba_out_weight = mb.inner() * s.hidden;
      // conv1d weight (c taps) and bias per channel, dt_bias, A_log and D per head, the gated RMSNorm's weight.
      m.mamba_split = mb.conv_channels() * (mb.conv_kernel + 1) + 3 * i64{mb.heads} + mb.inner();
      m.norms = norm;
      return m;
    }
    case LayerKind::attention:  // the transformer layer without its MLP and its second norm
      p.mlp_in_weight = p.mlp_in_bias = p.mlp_out_weight = p.mlp_out_bias = 0;
      p.norms -= norm;
      return p;
    case LayerKind::mlp:
    case LayerKind::moe: {  // the MLP (or MoE block) and its norm, no attention
      LayerParams m = p;
      m.attn_qkv_weight = m.attn_qkv_bias = m.attn_out_weight = m.attn_out_bias = m.attn_replicated = 0;
      m.norms = norm;
      return m;
    }
    case LayerKind::transformer: break;
  }
  return p;
}

/// One layer on one (tp, ep, etp) rank: column-parallel pieces and row-parallel weights split over tp, their
/// row-parallel biases, norms, router and MLA down projections replicated; E / ep routed experts split over etp.
/// Returns {rank total, of it the routed experts}.
std::pair<i64, i64> layer_on_rank(const LayerParams& l, int tp, int ep, int etp) {
  const i64 split = l.attn_qkv_weight + l.attn_qkv_bias + l.attn_out_weight + l.mlp_in_weight + l.mlp_in_bias +
                    l.mlp_out_weight + l.mamba();
  const i64 experts = l.experts > 0 ? l.expert_weight * (l.experts / ep) / etp : 0;
  return {split / tp + l.attn_out_bias + l.mlp_out_bias + l.norms + l.router + l.attn_replicated + experts, experts};
}

}  // namespace

ParamCounts count_params(const ModelSpec& s) {
  ParamCounts c;
  c.embedding = s.vocab * s.hidden;
  c.positions = s.positional == Positional::learned ? i64{s.seq_len} * s.hidden : 0;
  c.layers = s.layers;
  c.moe_layers = s.moe_layers();
  if (s.is_hybrid()) {
    if (s.is_moe()) c.moe_layer = hybrid_layer_params(s, LayerKind::moe);
    c.mamba_layers = s.layers_of_kind(LayerKind::mamba);
    c.attention_layers = s.layers_of_kind(LayerKind::attention);
    c.mlp_layers = s.layers_of_kind(LayerKind::mlp);
    if (c.mamba_layers > 0) c.mamba_layer = hybrid_layer_params(s, LayerKind::mamba);
    if (c.attention_layers > 0) c.attention_layer = hybrid_layer_params(s, LayerKind::attention);
    if (c.mlp_layers > 0) c.mlp_layer = hybrid_layer_params(s, LayerKind::mlp);
  } else {
    c.layer = layer_params(s, false);
    if (s.is_moe()) c.moe_layer = layer_params(s, true);
  }
  c.final_norm = norm_params(s);
  c.lm_head = s.tied_embeddings ? 0 : s.vocab * s.hidden;
  return c;
}

const LayerParams& ParamCounts::of(LayerKind k, bool moe) const {
  switch (k) {
    case LayerKind::mamba: return mamba_layer;
    case LayerKind::attention: return attention_layer;
    case LayerKind::mlp: return mlp_layer;
    case LayerKind::moe: return moe_layer;
    case LayerKind::transformer: break;
  }
  return moe ? moe_layer : layer;
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

int PipelineLayout::first_layer_of_chunk(int chunk) const {
  int first = 0;
  for (int c = 0; c < chunk; ++c) first += layers_per_chunk[static_cast<std::size_t>(c)];
  return first;
}

int PipelineLayout::moe_layers_on_stage(const ModelSpec& spec, int stage) const {
  if (!spec.is_moe()) return 0;
  int n = 0, first = 0;
  for (std::size_t c = 0; c < layers_per_chunk.size(); ++c) {
    if (static_cast<int>(c) % pp == stage) n += spec.moe_layers_in(first, layers_per_chunk[c]);
    first += layers_per_chunk[c];
  }
  return n;
}

int PipelineLayout::kind_layers_on_stage(const ModelSpec& spec, LayerKind kind, int stage) const {
  int n = 0, first = 0;
  for (std::size_t c = 0; c < layers_per_chunk.size(); ++c) {
    if (static_cast<int>(c) % pp == stage) n += spec.layers_of_kind(kind, first, layers_per_chunk[c]);
    first += layers_per_chunk[c];
  }
  return n;
}

PipelineLayout even_layout(const ModelSpec& spec, int pp, int vpp) {
  return PipelineLayout{pp, even_layer_split(spec.layers, pp * vpp)};
}

StageParams params_per_tp_rank(const ModelSpec& s, const PipelineLayout& layout, int stage, int tp,
                               int vocab_multiple, int ep, int etp) {
  assert(layout.pp > 0 && stage >= 0 && stage < layout.pp &&
         "params_per_tp_rank: stage out of range");
  assert(layout.layers_per_chunk.size() % static_cast<std::size_t>(layout.pp) == 0 &&
         "params_per_tp_rank: layers_per_chunk must have pp * vpp entries");
  assert(tp > 0 && s.heads % tp == 0 && s.kv_heads % tp == 0 && s.ffn_hidden % tp == 0 &&
         "params_per_tp_rank: tp must divide heads, kv_heads and ffn_hidden");
  assert(ep > 0 && etp > 0 && (!s.is_moe() || (s.moe.experts % ep == 0 && s.moe.ffn_hidden % etp == 0)) &&
         "params_per_tp_rank: ep must divide experts and etp the expert width");
  const i64 vocab_rows = padded_vocab(s.vocab, tp, vocab_multiple) / tp;
  const bool first = stage == 0, last = stage == layout.pp - 1;

  StageParams p;
  if (s.is_hybrid()) {
    // Each layer of the stage by its kind; `dense_layer` the mean of the model's non-MoE layers (the builder prices
    // them as their mean, layer_costs.hpp).
    const ParamCounts c = count_params(s);
    const auto on_rank = [&](LayerKind k) { return layer_on_rank(c.of(k), tp, ep, etp); };
    const auto moe = s.is_moe() ? on_rank(LayerKind::moe) : std::pair<i64, i64>{0, 0};
    p.moe_layer = moe.first;
    p.moe_layer_experts = moe.second;
    i64 other = 0;
    int others = 0;
    for (LayerKind k : {LayerKind::mamba, LayerKind::attention, LayerKind::mlp}) {
      const int n = s.layers_of_kind(k);
      if (n == 0) continue;
      const i64 one = on_rank(k).first;
      other += one * n;
      others += n;
      p.largest_layer = std::max(p.largest_layer, one);
    }
    p.dense_layer = others > 0 ? (other + others / 2) / others : 0;
    p.largest_layer = std::max(p.largest_layer, moe.first);
    for (LayerKind k : {LayerKind::mamba, LayerKind::attention, LayerKind::mlp, LayerKind::moe}) {
      const int n = layout.kind_layers_on_stage(s, k, stage);
      if (n == 0) continue;
      const auto l = on_rank(k);
      p.layers += l.first * n;
      p.experts += l.second * n;
    }
  } else {
    const auto dense = layer_on_rank(layer_params(s, false), tp, ep, etp);
    const auto moe = s.is_moe() ? layer_on_rank(layer_params(s, true), tp, ep, etp) : std::pair<i64, i64>{0, 0};
    p.dense_layer = dense.first;
    p.moe_layer = moe.first;
    p.moe_layer_experts = moe.second;
    p.largest_layer = std::max(dense.first, moe.first);
    const int n = layout.layers_on_stage(stage), m = layout.moe_layers_on_stage(s, stage);
    p.layers = dense.first * (n - m) + moe.first * m;
    p.experts = moe.second * m;
  }
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

double lora_params_per_layer(const ModelSpec& s, const Plan& p) {
  if (p.lora_rank <= 0) return 0.0;
  const double r = p.lora_rank, h = s.hidden, tp = p.tp;
  const double q = static_cast<double>(s.q_dim()) / tp, k = static_cast<double>(s.kv_dim()) / tp;
  const double f = static_cast<double>(s.ffn_hidden) / tp, fc1 = (s.ffn == FfnKind::swiglu ? 2.0 : 1.0) * f;
  double n = 0.0;
  if (p.lora_modules & kLoraQkv) n += r * (h + q + 2.0 * k);
  if (p.lora_modules & kLoraProj) n += r * (q + h);
  if (p.lora_modules & kLoraFc1) n += r * (h + fc1);
  if (p.lora_modules & kLoraFc2) n += r * (f + h);
  return n;
}

StageParams params_per_stage(const ModelSpec& spec, const PipelineLayout& layout, int stage) {
  return params_per_tp_rank(spec, layout, stage, 1, 1);
}

}  // namespace scalescope::models
