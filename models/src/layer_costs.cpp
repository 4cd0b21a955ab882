// Kernel lists of a transformer layer, the embedding, the LM head and the optimizer step, priced by
// the compute model (formulas in layer_costs.hpp).
#include "scalescope/models/layer_costs.hpp"

#include <algorithm>
#include <cassert>

#include "scalescope/models/counts.hpp"

namespace scalescope::models {

void PhaseCost::add_kernel(const ComputeModel& model, KernelCost c, double kernel_flops, Bytes kernel_bytes) {
  const Seconds t = model.kernel_time(c.time);
  time += t;
  by_provenance[static_cast<std::size_t>(c.provenance)] += t;
  flops += kernel_flops;
  bytes += kernel_bytes;
  by_kind[kernel_bytes.value > 0.0 ? (kernel_flops > 0.0 ? 1 : 2) : 0] += t;
  const Seconds gap = t - c.time;
  slowed_time += c.time * c.interference.slowed + gap;
  slowing_time += c.time * c.interference.slows + gap;
  ++kernels;
}

KernelInterference PhaseCost::interference() const {
  if (!(time.value > 0.0)) return {};
  return {slowed_time / time, slowing_time / time};
}

PhaseCost& PhaseCost::operator+=(const PhaseCost& o) {
  time += o.time;
  flops += o.flops;
  bytes += o.bytes;
  kernels += o.kernels;
  for (std::size_t i = 0; i < by_provenance.size(); ++i) by_provenance[i] += o.by_provenance[i];
  for (std::size_t i = 0; i < by_kind.size(); ++i) by_kind[i] += o.by_kind[i];
  slowed_time += o.slowed_time;
  slowing_time += o.slowing_time;
  return *this;
}

PhaseCost PhaseCost::operator*(double k) const {
  PhaseCost r = *this;
  r.time = time * k;
  r.flops = flops * k;
  r.bytes = bytes * k;
  r.kernels = static_cast<int>(kernels * k + 0.5);
  for (auto& p : r.by_provenance) p = p * k;
  for (auto& p : r.by_kind) p = p * k;
  r.slowed_time = slowed_time * k;
  r.slowing_time = slowing_time * k;
  return r;
}

double grad_bytes_per_element(Precision precision) {
  return precision == Precision::mixed || precision == Precision::fp8 ? 4.0 : 2.0;
}
double grad_bytes_per_element(const Plan& plan) { return plan.grad_reduce_in_fp32 ? grad_bytes_per_element(plan.precision) : 2.0; }

namespace {
/// HBM bytes per parameter of the optimizer step (gradient-norm read + Adam update).
///   mixed: read fp32 grad (norm) 4 + fp32 grad 4, master 4+4, m 4+4, v 4+4, write 16-bit weight 2 = 34
///   fp16:  the same with 16-bit gradients: 2 + 2 + 8 + 8 + 8 + 2 = 30
///   bf16:  read grad (norm) 2 + grad 2, weight 2+2, m 2+2, v 2+2 = 16
double optimizer_bytes_per_param(Precision p) {
  switch (p) {
    case Precision::mixed:
    case Precision::fp8: return 34.0;  // fp8: fp32 master weights and Adam as mixed (FP8 casts: fp8_costs.hpp)
    case Precision::fp16: return 30.0;
    case Precision::bf16: return 16.0;
  }
  return 34.0;
}
}  // namespace

namespace {

using i64 = std::int64_t;

/// Forward GEMM Y[t x out] = X[t x in] W and, for the backward, its dgrad and wgrad.
void linear(PhaseCost* fwd, PhaseCost* bwd, const ComputeModel& m, const std::string& dt, i64 out, i64 t, i64 in) {
  const double f = 2.0 * static_cast<double>(out) * static_cast<double>(t) * static_cast<double>(in);
  if (fwd) fwd->add_kernel(m, m.gemm(out, t, in, dt), f);
  if (bwd) {
    bwd->add_kernel(m, m.gemm(in, t, out, dt), f);
    bwd->add_kernel(m, m.gemm(out, in, t, dt), f);
  }
}

void memory_kernel(PhaseCost& p, const ComputeModel& m, Bytes b) {
  if (b.value > 0.0) p.add_kernel(m, m.memory_bound(b), 0.0, b);
}

/// The eager rows' kernels: each row's bytes split evenly over its kernels.
void eager_kernels(PhaseCost* fwd, PhaseCost* bwd, const ComputeModel& m, const std::vector<EagerRow>& rows) {
  for (const EagerRow& r : rows) {
    for (int i = 0; fwd && i < r.forward_kernels; ++i) {
      const Bytes b = r.forward / static_cast<double>(r.forward_kernels);
      fwd->add_kernel(m, m.eager_memory_bound(b), 0.0, b);
    }
    for (int i = 0; bwd && i < r.backward_kernels; ++i) {
      const Bytes b = r.backward / static_cast<double>(r.backward_kernels);
      bwd->add_kernel(m, m.eager_memory_bound(b), 0.0, b);
    }
  }
}

/// The attention core (scores, softmax, weighted sum) of one layer: forward and backward.
void attention_core(PhaseCost& fwd, PhaseCost& bwd, const ModelSpec& s, const Plan& p, const ComputeModel& m,
                    const CostOptions& o, const LayerIoBytes& io) {
  const std::string& adt = o.attention_dtype.empty() ? o.dtype : o.attention_dtype;
  const double b = p.mbs, seq = s.seq_len, q = static_cast<double>(s.q_dim()) / p.tp;
  if (o.flash_attention) {
    const double flops = 4.0 * b * seq * seq * q * 0.5;  // causal kernel: half of the s x s products
    AttentionShape shape;
    shape.batch = p.mbs;
    shape.heads = s.heads / p.tp;
    shape.kv_heads = std::max<i64>(1, s.kv_heads / p.tp);
    shape.head_dim = s.head_size();
    shape.seq = s.seq_len;
    shape.causal = true;
    fwd.add_kernel(m, m.attention(shape, false, Flops(flops), io.forward.attention, adt), flops,
                   io.forward.attention);
    bwd.add_kernel(m, m.attention(shape, true, Flops(2.5 * flops), io.backward.attention, adt), 2.5 * flops,
                   io.backward.attention);
    return;
  }
  const i64 batch = static_cast<i64>(p.mbs) * (s.heads / p.tp), sl = s.seq_len, d = s.head_size();
  const double gemm_flops = 2.0 * static_cast<double>(batch) * seq * seq * d;
  // Forward: S = Q K^T (s x s, inner d) and O = P V (s x d, inner s).
  fwd.add_kernel(m, m.gemm(sl, sl, d, adt, batch), gemm_flops);
  fwd.add_kernel(m, m.gemm(d, sl, sl, adt, batch), gemm_flops);
  // Backward: dP = dO V^T, dV = P^T dO, dQ = dS K, dK = dS^T Q.
  bwd.add_kernel(m, m.gemm(sl, sl, d, adt, batch), gemm_flops);
  bwd.add_kernel(m, m.gemm(d, sl, sl, adt, batch), gemm_flops);
  bwd.add_kernel(m, m.gemm(d, sl, sl, adt, batch), gemm_flops);
  bwd.add_kernel(m, m.gemm(d, sl, sl, adt, batch), gemm_flops);
  const double scores = static_cast<double>(batch) * seq * seq;
  memory_kernel(fwd, m, Bytes(4.0 * scores));
  memory_kernel(bwd, m, Bytes(6.0 * scores));
  if (o.dropout) {
    memory_kernel(fwd, m, Bytes(5.0 * scores));
    memory_kernel(bwd, m, Bytes(5.0 * scores));
  }
}

}  // namespace

LayerCost layer_cost(const ModelSpec& s, const Plan& p, const ComputeModel& m, const CostOptions& o) {
  assert(p.tp > 0 && p.mbs > 0 && "layer_cost: tp and mbs must be positive");
  const i64 t = i64{p.mbs} * s.seq_len, h = s.hidden, tp = p.tp;
  const i64 q = s.q_dim() / tp, kv = s.kv_dim() / tp, f = s.ffn_hidden / tp;
  const i64 fc1 = s.ffn == FfnKind::swiglu ? 2 * f : f;
  const LayerIoBytes io = layer_io_bytes(s, t, p.tp, p.sp);
  LayerCost c;
  PhaseCost core_f, core_b;
  attention_core(core_f, core_b, s, p, m, o, io);

  if (m.framework() == KernelFramework::pytorch_eager) {
    // GEMMs and attention as below; the memory-bound kernels from the eager byte table.
    linear(&c.forward, &c.backward, m, o.dtype, q + 2 * kv, t, h);
    c.forward += core_f;
    c.backward += core_b;
    linear(&c.forward, &c.backward, m, o.dtype, h, t, q);
    linear(&c.forward, &c.backward, m, o.dtype, fc1, t, h);
    linear(&c.forward, &c.backward, m, o.dtype, h, t, f);
    eager_kernels(&c.forward, &c.backward, m, eager_layer_rows(s, p));
    if (p.recompute == Recompute::full) c.recompute = c.forward;
    return c;
  }
  PhaseCost& F = c.forward;
  memory_kernel(F, m, io.forward.norms * 0.5);
  linear(&F, nullptr, m, o.dtype, q + 2 * kv, t, h);
  memory_kernel(F, m, io.forward.rope);
  F += core_f;
  linear(&F, nullptr, m, o.dtype, h, t, q);
  memory_kernel(F, m, io.forward.residual * 0.5);
  memory_kernel(F, m, io.forward.norms * 0.5);
  linear(&F, nullptr, m, o.dtype, fc1, t, h);
  memory_kernel(F, m, io.forward.activation);
  linear(&F, nullptr, m, o.dtype, h, t, f);
  memory_kernel(F, m, io.forward.residual * 0.5);

  PhaseCost& B = c.backward;
  memory_kernel(B, m, io.backward.residual * 0.5);
  linear(nullptr, &B, m, o.dtype, h, t, f);
  memory_kernel(B, m, io.backward.activation);
  linear(nullptr, &B, m, o.dtype, fc1, t, h);
  memory_kernel(B, m, io.backward.norms * 0.5);
  memory_kernel(B, m, io.backward.residual * 0.5);
  linear(nullptr, &B, m, o.dtype, h, t, q);
  B += core_b;
  memory_kernel(B, m, io.backward.rope);
  linear(nullptr, &B, m, o.dtype, q + 2 * kv, t, h);
  memory_kernel(B, m, io.backward.norms * 0.5);

  switch (p.recompute) {
    case Recompute::none: break;
    case Recompute::full: c.recompute = c.forward; break;
    case Recompute::selective:
      if (!o.flash_attention) c.recompute = core_f;
      break;
  }
  return c;
}

EdgeCost edge_cost(const ModelSpec& s, const Plan& p, const ComputeModel& m, const CostOptions& o) {
  const i64 t = i64{p.mbs} * s.seq_len, h = s.hidden;
  const i64 v = padded_vocab(s.vocab, p.tp, o.vocab_multiple) / p.tp;
  const double td = static_cast<double>(t), hd = static_cast<double>(h), vd = static_cast<double>(v);
  const double hs = hd / (p.sp ? p.tp : 1);  // hidden elements per token this rank holds outside TP regions
  const double g = grad_bytes_per_element(p);
  EdgeCost e;
  if (m.framework() == KernelFramework::pytorch_eager) {
    eager_kernels(&e.embedding_forward, &e.embedding_backward, m, eager_edge_rows(s, p, false, o.vocab_multiple));
    linear(&e.head_forward, &e.head_backward, m, o.dtype, v, t, h);
    eager_kernels(&e.head_forward, &e.head_backward, m, eager_edge_rows(s, p, true, o.vocab_multiple));
    return e;
  }
  memory_kernel(e.embedding_forward, m, Bytes(2.0 * td * hd * 2.0));
  if (s.positional == Positional::learned) memory_kernel(e.embedding_forward, m, Bytes(3.0 * td * hd * 2.0));
  memory_kernel(e.embedding_backward, m, Bytes(td * hd * 4.0 + vd * hd * 2.0));
  memory_kernel(e.embedding_backward, m, Bytes(vd * hd * (2.0 + 2.0 * g)));

  memory_kernel(e.head_forward, m, Bytes(2.0 * td * hs * 2.0));  // final norm
  linear(&e.head_forward, &e.head_backward, m, o.dtype, v, t, h);
  memory_kernel(e.head_forward, m, Bytes(10.0 * td * vd));
  memory_kernel(e.head_backward, m, Bytes(6.0 * td * vd));
  memory_kernel(e.head_backward, m, Bytes(3.0 * td * hs * 2.0));  // final norm backward
  return e;
}

PhaseCost optimizer_cost(double params, Precision precision, const ComputeModel& m) {
  const double per_param = optimizer_bytes_per_param(precision);
  PhaseCost c;
  if (params <= 0.0) return c;
  if (m.framework() == KernelFramework::pytorch_eager) {
    // fused AdamW (torch.optim, fp32 parameters under autocast): 28 bytes per parameter; 16-bit
    // gradients read 2 fewer; pure bf16 half of mixed.
    const double fused = precision == Precision::bf16 ? 14.0 : precision == Precision::fp16 ? 26.0 : 28.0;
    memory_kernel(c, m, Bytes(params * fused));
    return c;
  }
  const double grad = grad_bytes_per_element(precision);
  memory_kernel(c, m, Bytes(params * grad));                    // gradient norm (clipping)
  memory_kernel(c, m, Bytes(params * (per_param - grad)));      // Adam update
  return c;
}

}  // namespace scalescope::models
