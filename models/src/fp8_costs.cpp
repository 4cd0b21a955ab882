// FP8 casts, transposes and scale updates of a transformer layer, FP8 weight copies and the activations
// FP8 saves (formulas and sources in fp8_costs.hpp).
#include "scalescope/models/fp8_costs.hpp"

#include "scalescope/models/counts.hpp"

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

}  // namespace

LayerCost fp8_layer_cost(const ModelSpec& s, const Plan& p, const ComputeModel& m, int microbatches) {
  LayerCost c;
  if (!p.fp8()) return c;
  const double t = static_cast<double>(p.mbs) * s.seq_len, h = s.hidden, tp = p.tp;
  const double q = static_cast<double>(s.q_dim()) / tp, k = static_cast<double>(s.kv_dim()) / tp;
  const double f = s.ffn_hidden / tp, f1 = s.ffn == FfnKind::swiglu ? 2.0 * f : f;
  const double plain = cast_bytes(p, false), norm = cast_bytes(p, true);
  // Forward: qkv input, out-proj input, fc1 input, fc2 input.
  for (double b : {norm * t * h, plain * t * q, norm * t * h, plain * t * f}) memory_kernel(c.forward, m, Bytes(b));
  // Backward: the output gradients of fc2, fc1, out-proj, qkv (backward order).
  for (double b : {plain * t * h, plain * t * f1, plain * t * h, plain * t * (q + 2.0 * k)}) {
    memory_kernel(c.backward, m, Bytes(b));
  }
  if (p.fp8_recipe == Fp8Recipe::delayed) {  // amax history and scale update: one small kernel each way
    c.forward.add_kernel(m, m.launch_overhead());
    c.backward.add_kernel(m, m.launch_overhead());
  }
  if (!p.fp8_params && microbatches > 0) {
    const double linear = static_cast<double>(count_params(s).layer.matmul_weights()) / tp;
    const double amax = p.fp8_recipe == Fp8Recipe::tensorwise ? 2.0 : 0.0;
    memory_kernel(c.forward, m, Bytes(linear * (4.0 + amax) / microbatches));
  }
  if (p.recompute == Recompute::full) c.recompute = c.forward;
  return c;
}

Bytes fp8_weight_copy_bytes(double linear_params, const Plan& p) {
  return Bytes(p.fp8() && !p.fp8_params ? 2.0 * linear_params : 0.0);
}

Bytes fp8_activation_saving(const ModelSpec& s, const Plan& p) {
  if (!p.fp8() || p.recompute == Recompute::full) return Bytes(0);
  const double sb = static_cast<double>(s.seq_len) * p.mbs, tp = p.tp;
  const double outer = 2.0 * sb * s.hidden / (p.sp ? tp : 1.0);
  const double inner = (sb * static_cast<double>(s.q_dim()) + sb * s.ffn_hidden) / tp;
  return Bytes(outer + inner);
}

double param_gather_bytes_per_element(const Plan& p) { return p.fp8() && p.fp8_params ? 1.0 : 2.0; }

}  // namespace scalescope::models
