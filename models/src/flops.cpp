// FLOPs per token (forward, backward, recompute) and bytes moved by memory-bound ops of a layer.
#include <algorithm>
#include <cassert>

#include "scalescope/models/counts.hpp"

namespace scalescope::models {

FlopsPerToken flops_per_token(const ModelSpec& spec, const FlopOptions& o) {
  const double s = o.attention_span > 0 ? o.attention_span : o.seq_len > 0 ? o.seq_len : spec.seq_len;
  const ParamCounts c = count_params(spec);
  FlopsPerToken f;
  f.layer_matmul = 2.0 * static_cast<double>(c.layer.matmul_weights());
  f.moe_layer_matmul = 2.0 * static_cast<double>(c.moe_layer.active_matmul_weights());
  // QK^T over the qk head dim and AV over the value head dim (both the head size without MLA).
  const double d_qk = spec.head_size(), d_v = spec.mla.enabled() ? spec.mla.v_head_dim : spec.head_size();
  const auto attention = [&](double span) {
    return o.attention_scores ? 2.0 * span * spec.heads * (d_qk + d_v) * (o.causal ? 0.5 : 1.0) : 0.0;
  };
  // Sliding-window layers count spans of 2 x the window, as they are priced (layer_costs.hpp); the average layer.
  const double wf = spec.windowed_layer_fraction();
  f.layer_attention = (1.0 - wf) * attention(s) + wf * attention(sliding_window_span(s, spec.sliding_window));
  f.lm_head = 2.0 * spec.hidden * static_cast<double>(spec.vocab);
  double matmuls = c.dense_layers() * f.layer_matmul + c.moe_layers * f.moe_layer_matmul;
  f.attention_layers = spec.is_hybrid() ? c.attention_layers : spec.layers;
  double scans = 0.0;
  if (spec.is_hybrid()) {
    f.mamba_layer_matmul = 2.0 * static_cast<double>(c.mamba_layer.matmul_weights());
    matmuls += c.mamba_layers * f.mamba_layer_matmul + 2.0 * c.attention_layers * c.attention_layer.matmul_weights() +
               2.0 * c.mlp_layers * c.mlp_layer.matmul_weights();
    if (c.mamba_layers > 0) {
      const MambaSpec& mb = spec.mamba;
      const double n = mb.heads, p = mb.head_dim, N = mb.state, q = mb.chunk, g = mb.groups;
      f.mamba_layer_scan = n * (4.0 * N * p + q * p) + g * q * N;
      scans = c.mamba_layers * f.mamba_layer_scan;
    }
  }
  f.layer_adapters = 2.0 * o.adapter_params;
  const double adapters = spec.layers * f.layer_adapters;
  const double scores = f.attention_layers * f.layer_attention;
  f.forward = matmuls + scores + scans + f.lm_head + adapters;
  // Frozen base weights: input gradients only (one matmul per weight matmul); attention and adapters in full.
  f.backward = o.frozen_base ? matmuls + f.lm_head + 2.0 * (scores + scans + adapters) : 2.0 * f.forward;
  switch (o.recompute) {
    case Recompute::none:
      f.recompute = 0;
      break;
    case Recompute::selective:
      f.recompute = scores;
      break;
    case Recompute::full:
      f.recompute = matmuls + scores + scans + adapters;
      break;
  }
  return f;
}

LayerIoBytes layer_io_bytes(const ModelSpec& spec, std::int64_t tokens, int tp, bool sp, double e) {
  assert(tp > 0 && tokens >= 0 && "layer_io_bytes: tp must be positive and tokens non-negative");
  const double t = static_cast<double>(tokens);
  const double h = spec.hidden / static_cast<double>(sp ? tp : 1);
  const double q = static_cast<double>(spec.q_dim()) / tp;
  const double k = static_cast<double>(spec.kv_dim()) / tp;
  const double f = static_cast<double>(spec.ffn_hidden) / tp;
  const bool swiglu = spec.ffn == FfnKind::swiglu;
  const bool rope = spec.positional == Positional::rope;
  const auto b = [&](double elements) { return Bytes(elements * e * t); };
  LayerIoBytes io;
  io.forward.norms = b(2 * 2 * h);
  io.backward.norms = b(2 * 3 * h);
  io.forward.activation = b(swiglu ? 3 * f : 2 * f);
  io.backward.activation = b(swiglu ? 5 * f : 3 * f);
  io.forward.residual = b(2 * 3 * h);
  io.backward.residual = b(2 * 3 * h);
  io.forward.rope = b(rope ? 2 * (q + k) : 0);
  io.backward.rope = b(rope ? 2 * (q + k) : 0);
  io.forward.attention = b(2 * q + 2 * k);
  io.backward.attention = b(4 * q + 4 * k);
  return io;
}

}  // namespace scalescope::models
