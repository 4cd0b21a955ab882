// FP8 casts, transposes and scale updates of a transformer layer, FP8 weight copies and the activations
// FP8 saves (formulas and sources in fp8_costs.hpp).
#include "scalescope/models/fp8_costs.hpp"

#include <algorithm>
#include <vector>

#include "scalescope/models/counts.hpp"
#include "scalescope/models/stack_profile.hpp"

namespace scalescope::models {

namespace {

/// Bytes per element of one cast (FP8 copy + transpose) under the plan's recipe; `norm_fused`: the
/// tensor is a norm output that delayed scaling casts inside the norm kernel (transpose only).
double cast_bytes(const Plan& p, bool norm_fused) {
  switch (p.fp8_recipe) {
    case Fp8Recipe::delayed: return norm_fused ? 2.0 : 4.0;
    case Fp8Recipe::tensorwise: return 4.0 + 2.0;
    case Fp8Recipe::blockwise: return 4.0 + 2.0 * 4.0 / 128.0;
    case Fp8Recipe::mxfp8: return 4.0 + 2.0 / 32.0;
  }
  return 4.0;
}

void memory_kernel(PhaseCost& c, const ComputeModel& m, Bytes b) {
  if (b.value > 0.0) c.add_kernel(m, m.memory_bound(b), 0.0, b);
}

/// The cast of a tensor of `elements` at `bytes_per_element` (cast_bytes). Transformer Engine's grouped linear
/// (the routed experts) quantizes each local expert's rows apart (split_quantize): `parts` equal kernels, each at
/// the rate of its own size and launch floor. Current scaling (tensorwise) computes a part's amax in a kernel of
/// its own before that part's cast (2 of its bytes per element); the other recipes cast in one kernel.
void cast_kernels(PhaseCost& c, const ComputeModel& m, const Plan& p, double bytes_per_element, double elements,
                  int parts) {
  if (parts == 1) {  // a linear's whole input: one kernel, as before the split (amax included in its bytes)
    memory_kernel(c, m, Bytes(bytes_per_element * elements));
    return;
  }
  const double amax = p.fp8_recipe == Fp8Recipe::tensorwise ? 2.0 : 0.0, part = elements / parts;
  for (int i = 0; i < parts; ++i) {
    if (amax > 0.0) memory_kernel(c, m, Bytes(amax * part));
    memory_kernel(c, m, Bytes((bytes_per_element - amax) * part));
  }
}

}  // namespace

bool fp8_measured_in_stack(const StackProfile& stack) {
  const int slot = stack.symbols().find("fp8");
  const auto& tr = stack.trace_values();
  return slot >= 0 && static_cast<std::size_t>(slot) < tr.size() && tr[static_cast<std::size_t>(slot)] > 0.5;
}

LayerCost fp8_layer_cost_of(const ModelSpec& s, const Plan& p, const ComputeModel& m, int microbatches, LayerKind kind,
                            bool moe_layer) {
  LayerCost c;
  if (!p.fp8() || fp8_measured_in_stack(m.stack_for(s, p))) return c;
  const double t = static_cast<double>(p.mbs) * s.seq_len, h = s.hidden, tp = p.tp;
  const double q = static_cast<double>(s.q_dim()) / tp, k = static_cast<double>(s.kv_dim()) / tp;
  const bool swiglu = s.ffn == FfnKind::swiglu;
  const double plain = cast_bytes(p, false), norm = cast_bytes(p, true);
  const bool moe = kind == LayerKind::moe || (kind == LayerKind::transformer && moe_layer && s.is_moe());
  const bool attention = kind == LayerKind::transformer || kind == LayerKind::attention;
  const bool mlp = kind == LayerKind::transformer || kind == LayerKind::mlp || kind == LayerKind::moe;
  // The MLP GEMMs of the layer: the dense MLP, or the shared experts (t tokens) and the routed experts (x token
  // copies of the rank's experts, moe_costs: Tr top_k etp imbalance) of an MoE layer.
  // `parts`: the kernels each cast of those GEMMs' tensors takes (the rank's E / ep routed experts: one each).
  struct Gemms { double tokens, f; bool norm_input; int parts; };
  std::vector<Gemms> mlps;
  const int local_experts = std::max(1, s.moe.experts / std::max(1, p.ep));
  if (mlp && !moe) {
    mlps.push_back({t, s.ffn_hidden / tp, true, 1});
  } else if (mlp) {
    if (s.moe.shared_width() > 0) mlps.push_back({t, s.moe.shared_width() / tp, true, 1});
    const double x = t / (p.sp ? tp : 1.0) * s.moe.top_k * p.etp * moe_imbalance(s, p);
    mlps.push_back({x, static_cast<double>(s.moe.ffn_hidden) / p.etp, false, local_experts});
  }
  const MambaSpec& mb = s.mamba;
  const double di = static_cast<double>(mb.inner()) / tp, dz = static_cast<double>(mb.in_proj_width()) / tp;
  // Forward: qkv (in_proj) input, out-proj (out_proj) input, then each MLP's fc1 and fc2 inputs.
  if (attention) {
    memory_kernel(c.forward, m, Bytes(norm * t * h));
    memory_kernel(c.forward, m, Bytes(plain * t * q));
  } else if (kind == LayerKind::mamba) {
    memory_kernel(c.forward, m, Bytes(norm * t * h));
    memory_kernel(c.forward, m, Bytes(plain * t * di));
  }
  for (const Gemms& g : mlps) {
    cast_kernels(c.forward, m, p, g.norm_input ? norm : plain, g.tokens * h, g.parts);
    cast_kernels(c.forward, m, p, plain, g.tokens * g.f, g.parts);
  }
  // Backward: the output gradients of fc2 and fc1 of each MLP, then out-proj and qkv (backward order).
  for (const Gemms& g : mlps) {
    cast_kernels(c.backward, m, p, plain, g.tokens * h, g.parts);
    cast_kernels(c.backward, m, p, plain, g.tokens * (swiglu ? 2.0 : 1.0) * g.f, g.parts);
  }
  if (attention) {
    memory_kernel(c.backward, m, Bytes(plain * t * h));
    memory_kernel(c.backward, m, Bytes(plain * t * (q + 2.0 * k)));
  } else if (kind == LayerKind::mamba) {
    memory_kernel(c.backward, m, Bytes(plain * t * h));
    memory_kernel(c.backward, m, Bytes(plain * t * dz));
  }
  if (p.fp8_recipe == Fp8Recipe::delayed) {  // amax history and scale update: one small kernel each way
    c.forward.add_kernel(m, m.launch_overhead());
    c.backward.add_kernel(m, m.launch_overhead());
  }
  if (!p.fp8_params && microbatches > 0) {
    const double linear = fp8_linear_params_of(s, p, kind, moe_layer);
    const double amax = p.fp8_recipe == Fp8Recipe::tensorwise ? 2.0 : 0.0;
    // The routed experts' fc1 and fc2 weights are cast one expert at a time (2 E_r tensors, once per step); the
    // other linear weights as one amortized kernel, as before.
    const double routed = moe && local_experts > 1 ? routed_expert_weights(s, p) : 0.0;
    memory_kernel(c.forward, m, Bytes((linear - routed) * (4.0 + amax) / microbatches));
    if (routed > 0.0) {
      const double fc1 = (swiglu ? 2.0 : 1.0) / (swiglu ? 3.0 : 2.0);  // fc1's share of an expert's weights
      PhaseCost step;
      cast_kernels(step, m, p, 4.0 + amax, routed * fc1, local_experts);
      cast_kernels(step, m, p, 4.0 + amax, routed * (1.0 - fc1), local_experts);
      c.forward += step * (1.0 / microbatches);
    }
  }
  if (p.recompute == Recompute::full) c.recompute = c.forward;
  return c;
}

LayerCost fp8_layer_cost(const ModelSpec& s, const Plan& p, const ComputeModel& m, int microbatches, bool moe_layer) {
  if (!s.is_hybrid()) return fp8_layer_cost_of(s, p, m, microbatches, LayerKind::transformer, moe_layer);
  if (moe_layer) return fp8_layer_cost_of(s, p, m, microbatches, LayerKind::moe);
  return hybrid_dense_layer_mix(s, [&](LayerKind k) { return fp8_layer_cost_of(s, p, m, microbatches, k); });
}

double fp8_linear_params_of(const ModelSpec& s, const Plan& p, LayerKind kind, bool moe_layer) {
  const ParamCounts c = count_params(s);
  const bool moe = kind == LayerKind::moe || (kind == LayerKind::transformer && moe_layer && s.is_moe());
  const LayerParams& l = moe ? c.moe_layer : c.of(kind);
  if (!moe) return static_cast<double>(l.matmul_weights()) / p.tp;
  // Attention and shared experts split over tp; the rank's E / ep routed experts over etp (the router stays bf16).
  return static_cast<double>(l.matmul_weights()) / p.tp + routed_expert_weights(s, p);
}

double routed_expert_weights(const ModelSpec& s, const Plan& p) {
  if (!s.is_moe()) return 0.0;
  const ParamCounts c = count_params(s);
  return static_cast<double>(c.moe_layer.expert_weight) * (s.moe.experts / p.ep) / p.etp;
}

Bytes fp8_weight_copy_bytes(double linear_params, const Plan& p) {
  return Bytes(p.fp8() && !p.fp8_params ? 2.0 * linear_params : 0.0);
}

Bytes fp8_activation_saving(const ModelSpec& s, const Plan& p, bool moe_layer, LayerKind kind) {
  if (!p.fp8() || p.recompute == Recompute::full) return Bytes(0);
  const double sb = static_cast<double>(s.seq_len) * p.mbs, tp = p.tp;
  const double outer = 2.0 * sb * s.hidden / (p.sp ? tp : 1.0);
  const double x = sb / (p.sp ? tp : 1.0) * s.moe.top_k * p.etp * moe_imbalance(s, p);
  const double routed = x * (s.hidden + static_cast<double>(s.moe.ffn_hidden) / p.etp);
  switch (kind) {
    case LayerKind::mamba:  // in_proj's input (the norm output) and out_proj's (the gated norm output)
      return Bytes(outer / 2.0 + sb * static_cast<double>(s.mamba.inner()) / tp);
    case LayerKind::attention: return Bytes(outer / 2.0 + sb * static_cast<double>(s.q_dim()) / tp);
    case LayerKind::mlp: return Bytes(outer / 2.0 + sb * s.ffn_hidden / tp);
    case LayerKind::moe: return Bytes(sb * s.moe.shared_width() / tp + routed);
    case LayerKind::transformer: break;
  }
  if (moe_layer && s.is_moe()) {
    // Attention's out-proj input; the shared experts' fc2 input; the routed experts' permuted inputs and fc2
    // inputs, each kept at 1 byte instead of 2.
    return Bytes(outer / 2.0 + (sb * static_cast<double>(s.q_dim()) + sb * s.moe.shared_width()) / tp + routed);
  }
  const double inner = (sb * static_cast<double>(s.q_dim()) + sb * s.ffn_hidden) / tp;
  return Bytes(outer + inner);
}

double param_gather_bytes_per_element(const Plan& p) { return p.fp8() && p.fp8_params ? 1.0 : 2.0; }

}  // namespace scalescope::models
