// Kernel lists of a transformer layer, the embedding, the LM head and the optimizer step, priced by
// the compute model (formulas in layer_costs.hpp).
#include "scalescope/models/layer_costs.hpp"

#include <algorithm>
#include <array>
#include <cassert>

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "scalescope/models/counts.hpp"
#include "scalescope/models/layer_kernels.hpp"
#include "scalescope/models/stack_profile.hpp"

namespace scalescope::models {

namespace {

/// Kernel counts saturate here (a phase never issues a billion kernels; a stack file's absurd `kernels` must not
/// overflow the int): a + b clamped to [0, 2^30].
constexpr std::int64_t kMaxKernelCount = std::int64_t{1} << 30;
int add_count(int a, std::int64_t b) { return static_cast<int>(std::clamp<std::int64_t>(a + b, 0, kMaxKernelCount)); }

}  // namespace

void PhaseCost::add_kernel(const ComputeModel& model, KernelCost c, double kernel_flops, Bytes kernel_bytes) {
  add_charged(c, model.kernel_time(c.time), kernel_flops, kernel_bytes);
}

KernelInterference PhaseCost::interference() const {
  if (!(time.value > 0.0)) return {};
  return {slowed_time / time, slowing_time / time};
}

PhaseCost& PhaseCost::operator+=(const PhaseCost& o) {
  time += o.time;
  flops += o.flops;
  bytes += o.bytes;
  kernels = add_count(kernels, o.kernels);
  for (std::size_t i = 0; i < by_provenance.size(); ++i) by_provenance[i] += o.by_provenance[i];
  for (std::size_t i = 0; i < by_kind.size(); ++i) by_kind[i] += o.by_kind[i];
  slowed_time += o.slowed_time;
  slowing_time += o.slowing_time;
  energy += o.energy;
  tensor_time += o.tensor_time;
  return *this;
}

PhaseCost PhaseCost::operator*(double k) const {
  PhaseCost r = *this;
  r.time = time * k;
  r.flops = flops * k;
  r.bytes = bytes * k;
  const double n = kernels * k + 0.5;
  r.kernels = n >= 1.0 ? add_count(0, n < static_cast<double>(kMaxKernelCount) ? static_cast<std::int64_t>(n) : kMaxKernelCount) : 0;
  for (auto& p : r.by_provenance) p = p * k;
  for (auto& p : r.by_kind) p = p * k;
  r.slowed_time = slowed_time * k;
  r.slowing_time = slowing_time * k;
  r.energy = energy * k;
  r.tensor_time = tensor_time * k;
  return r;
}

double grad_bytes_per_element(Precision precision) {
  return precision == Precision::mixed || precision == Precision::fp8 ? 4.0 : 2.0;
}
double grad_bytes_per_element(const Plan& plan) { return plan.grad_reduce_in_fp32 ? grad_bytes_per_element(plan.precision) : 2.0; }

void PhaseCost::add_charged(KernelCost c, Seconds t, double kernel_flops, Bytes kernel_bytes) {
  time += t;
  by_provenance[static_cast<std::size_t>(c.provenance)] += t;
  flops += kernel_flops;
  bytes += kernel_bytes;
  by_kind[kernel_bytes.value > 0.0 ? (kernel_flops > 0.0 ? 1 : 2) : 0] += t;
  const Seconds gap = t - c.time;
  slowed_time += c.time * c.interference.slowed + gap;
  slowing_time += c.time * c.interference.slows + gap;
  energy += c.energy;
  if (c.tensor) tensor_time += c.time;
  kernels = add_count(kernels, 1);
}

namespace {

using i64 = std::int64_t;

/// A size expression as a positive integer; 0 when it is not one (NaN, <= 0.5): the row is skipped.
i64 size_of(const Expr& e, const std::vector<double>& v) {
  const double x = e.eval(v);
  if (!(x >= 0.5) || x > 9.2e18) return 0;
  return static_cast<i64>(std::llround(x));
}

/// The kernels of one row at symbol values `v`, each priced by the compute model (no launch floor yet).
struct RowKernels {
  KernelCost cost;  ///< one kernel
  int count = 0;
  double flops = 0.0;  ///< per kernel
  Bytes bytes;         ///< per kernel
  Seconds total() const { return cost.time * static_cast<double>(count); }
};

RowKernels price(const StackRow& r, const std::vector<double>& v, const ComputeModel& m, const StackProfile& st,
                 const CostOptions& o) {
  RowKernels k;
  if (!r.when.empty() && !(r.when.eval(v) != 0.0)) return k;
  const double n = r.kernels.eval(v);
  if (!(n >= 0.5) || n > 1e9) return k;
  k.count = static_cast<int>(std::llround(n));
  switch (r.kind) {
    case RowKind::gemm: {
      const i64 gm = size_of(r.m, v), gn = size_of(r.n, v), gk = size_of(r.k, v), gb = size_of(r.batch, v);
      if (gm == 0 || gn == 0 || gk == 0 || gb == 0) return RowKernels{};
      k.cost = m.gemm(gm, gn, gk, r.dtype == "compute" ? o.dtype : r.dtype == "attention" ? o.attention_type() : r.dtype, gb);
      k.flops = 2.0 * static_cast<double>(gm) * static_cast<double>(gn) * static_cast<double>(gk) *
                static_cast<double>(gb);
      break;
    }
    case RowKind::attention: {
      AttentionShape sh;
      sh.batch = size_of(r.batch, v);
      sh.heads = size_of(r.heads, v);
      sh.kv_heads = size_of(r.kv_heads, v);
      sh.head_dim = size_of(r.head_dim, v);
      sh.seq = size_of(r.seq, v);
      sh.window = r.window.empty() ? 0 : size_of(r.window, v);
      sh.causal = r.causal;
      sh.backend = !r.packed.empty() && r.packed.eval(v) != 0.0 ? AttentionBackend::varlen
                   : r.backend_named                            ? r.backend
                                                                : o.attention_backend;
      if (!r.dropout.empty()) {
        const double p = r.dropout.eval(v);
        sh.dropout = std::isfinite(p) && p > 0.0 ? std::min(p, 1.0) : 0.0;
      }
      if (sh.batch == 0 || sh.heads == 0 || sh.kv_heads == 0 || sh.head_dim == 0 || sh.seq == 0) return RowKernels{};
      k.flops = sh.forward_flops() * (r.backward ? 2.5 : 1.0);
      const double io = r.io.eval(v);
      k.bytes = Bytes(std::isfinite(io) && io > 0.0 ? io : 0.0);
      k.cost = m.attention(sh, r.backward, Flops(k.flops), k.bytes, o.attention_type());
      break;
    }
    case RowKind::memory: {
      const double b = r.bytes.eval(v);
      if (!(b > 0.0) || !std::isfinite(b)) return RowKernels{};
      k.bytes = Bytes(b / static_cast<double>(k.count));
      k.cost = r.bandwidth_factor ? m.memory_bound(k.bytes, st.memory_bandwidth_factor,
                                                   !st.memory_bandwidth_factor_source.empty())
               : r.linear_in_bytes ? m.memory_bound_linear(k.bytes)
                                   : m.memory_bound(k.bytes);
      break;
    }
    case RowKind::fixed:
      k.cost = KernelCost{Seconds(r.time_s.value_or(0.0) / static_cast<double>(k.count)), Provenance::measured};
      break;
  }
  return k;
}

/// Rows of at most this many kernels are added kernel by kernel (the sums of every real stack, bit for bit); larger
/// ones in closed form.
constexpr int kExactKernels = 4096;

/// Which rows add_rows adds.
enum class RowSet { all, selective_recompute, before_sync, after_sync };

/// One row priced as a phase charges it: its kernels (scaled to the trace's measured time where the row has one) and
/// the time each is charged on the stream. count 0: the row does not run.
struct ChargedRow {
  RowKernels k;
  Seconds charged;
};
/// Per MambaGroup, the factor its rows' modelled time takes (mamba_group_scales); 1: unscaled.
using GroupScales = std::array<double, kNumMambaGroups>;
constexpr GroupScales kUnscaled{1.0, 1.0, 1.0, 1.0};

ChargedRow charge(const StackRow& r, const std::vector<double>& v, const ComputeModel& m, const StackProfile& st,
                  const CostOptions& o, const GroupScales& scales = kUnscaled) {
  ChargedRow c{price(r, v, m, st, o), Seconds(0)};
  RowKernels& k = c.k;
  if (k.count == 0) return c;
  if (r.group && scales[static_cast<std::size_t>(*r.group)] != 1.0) {
    // The profile measured this kernel group: the measured time sets the level, the rows the change with the shape.
    k.cost.time = k.cost.time * scales[static_cast<std::size_t>(*r.group)];
    k.cost.provenance = Provenance::measured;
  }
  if (r.time_s && r.kind != RowKind::fixed && !st.trace_values().empty()) {
    // Measured at the trace: the user's kernels set the level, the model the change with the shape.
    const RowKernels at_trace = price(r, st.trace_values(), m, st, o);
    if (at_trace.count > 0 && at_trace.total().value > 0.0) {
      const double scale = *r.time_s / at_trace.total().value;
      k.cost.time = k.cost.time * scale;
      k.cost.provenance = Provenance::measured;
      k.cost.tensor = false;  // timed at the trace's own clock: the power cap does not stretch it again (docs/power.md)
    }
  }
  c.charged = st.launch_floor ? m.kernel_time(k.cost.time) : k.cost.time + Seconds(st.kernel_gap_s);
  return c;
}

/// Adds the rows of `rows` that are in `which`.
void add_rows(PhaseCost& out, const std::vector<StackRow>& rows, const std::vector<double>& v, const ComputeModel& m,
              const StackProfile& st, const CostOptions& o, RowSet which = RowSet::all,
              const GroupScales& scales = kUnscaled) {
  for (const StackRow& r : rows) {
    if (which == RowSet::selective_recompute && !r.selective_recompute) continue;
    if (which == RowSet::before_sync && r.after_sync) continue;
    if (which == RowSet::after_sync && !r.after_sync) continue;
    const ChargedRow c = charge(r, v, m, st, o, scales);
    const RowKernels& k = c.k;
    if (k.count == 0) continue;
    if (k.count <= kExactKernels) {
      for (int i = 0; i < k.count; ++i) out.add_charged(k.cost, c.charged, k.flops, k.bytes);
    } else {  // in closed form: a stack's `kernels` (up to 1e9) must not set the time a prediction takes
      PhaseCost one;
      one.add_charged(k.cost, c.charged, k.flops, k.bytes);
      out += one * static_cast<double>(k.count);
    }
  }
}

const std::vector<StackRow>& rows(const StackProfile& st, StackPhase p) {
  return st.phases[static_cast<std::size_t>(p)];
}

}  // namespace

namespace {

/// The forward's options: its GEMMs (and a recompute of them) may accumulate differently (CostOptions::forward_dtype).
CostOptions forward_options(const CostOptions& o) {
  CostOptions fwd = o;
  if (!o.forward_dtype.empty()) {
    fwd.attention_dtype = o.attention_type();
    fwd.dtype = o.forward_dtype;
  }
  return fwd;
}

/// log(a / b)^2, the distance of two sizes.
double log_gap(double a, double b) {
  const double l = std::log(a / b);
  return l * l;
}

/// The factor each Mamba-2 kernel group of a Mamba-2 layer's rows takes: the profile's measured time over the rows'
/// modelled time, both at the measured shape nearest the layer's (log distance over tokens, heads, head dim, groups,
/// state and chunk of the rank); 1 for a group without a measurement (docs/hybrid.md).
GroupScales mamba_group_scales(const ModelSpec& s, const Plan& p, const ComputeModel& m, const StackProfile& st,
                               const CostOptions& o) {
  GroupScales scales = kUnscaled;
  const std::vector<MambaSample>& samples = m.mamba_samples();
  if (samples.empty() || !s.mamba.enabled()) return scales;
  const MambaSpec& mb = s.mamba;
  const double tokens = static_cast<double>(p.mbs) * s.seq_len, tp = p.tp;
  const MambaSample* best = nullptr;
  double best_d = 0.0;
  for (const MambaSample& x : samples) {
    const double d = log_gap(tokens, static_cast<double>(x.batch * x.seq)) + log_gap(mb.heads / tp, x.heads) +
                     log_gap(mb.head_dim, x.head_dim) + log_gap(std::max(1.0, mb.groups / tp), x.groups) +
                     log_gap(mb.state, x.state) + log_gap(mb.chunk, x.chunk);
    if (!best || d < best_d) best = &x, best_d = d;
  }
  // The rows at the measured shape: one rank (tp 1) running its heads and groups, x.batch sequences of x.seq tokens.
  ModelSpec at = s;
  at.seq_len = static_cast<int>(best->seq);
  at.mamba = MambaSpec{best->heads, best->head_dim, best->state, best->groups, mb.conv_kernel, best->chunk};
  Plan q = p;
  q.tp = 1;
  q.sp = false;
  q.cp = 1;
  q.mbs = static_cast<int>(best->batch);
  const std::vector<double> v = st.bind(at, q, o.flash_attention, o.dropout, o.vocab_multiple, 0.0, false, false,
                                        LayerKind::mamba);
  GroupScales modelled{};
  for (StackPhase ph : {StackPhase::layer_forward, StackPhase::layer_backward}) {
    for (const StackRow& r : st.phases[static_cast<std::size_t>(ph)]) {
      if (!r.group) continue;
      const RowKernels k = price(r, v, m, st, o);
      modelled[static_cast<std::size_t>(*r.group)] += k.total().value;
    }
  }
  for (std::size_t g = 0; g < scales.size(); ++g) {
    if (best->seconds[g] > 0.0 && modelled[g] > 0.0) scales[g] = best->seconds[g] / modelled[g];
  }
  return scales;
}

/// One layer's rows bound to the plan: the stack, its symbol values, the forward's options and the measured groups'
/// scales (one_layer and layer_kernel_lines price the same rows from it).
struct BoundLayer {
  const StackProfile& st;
  std::vector<double> v;
  CostOptions fwd;
  GroupScales scales;
};
BoundLayer bind_layer(const ModelSpec& s, const Plan& p, const ComputeModel& m, const CostOptions& o, bool moe_layer,
                      bool windowed, LayerKind kind) {
  const StackProfile& st = m.stack_for(s, p);
  return {st, st.bind(s, p, o.flash_attention, o.dropout, o.vocab_multiple, 0.0, moe_layer, windowed, kind),
          forward_options(o), kind == LayerKind::mamba ? mamba_group_scales(s, p, m, st, o) : kUnscaled};
}

LayerCost one_layer(const ModelSpec& s, const Plan& p, const ComputeModel& m, const CostOptions& o, bool moe_layer,
                    bool windowed, LayerKind kind = LayerKind::transformer) {
  const BoundLayer b = bind_layer(s, p, m, o, moe_layer, windowed, kind);
  const StackProfile& st = b.st;
  const std::vector<double>& v = b.v;
  const CostOptions& fwd = b.fwd;
  const GroupScales& scales = b.scales;
  LayerCost c;
  add_rows(c.forward, rows(st, StackPhase::layer_forward), v, m, st, fwd, RowSet::all, scales);
  add_rows(c.backward, rows(st, StackPhase::layer_backward), v, m, st, o, RowSet::all, scales);
  switch (p.recompute) {
    case Recompute::none: break;
    case Recompute::full: c.recompute = c.forward; break;
    case Recompute::selective:
      add_rows(c.recompute, rows(st, StackPhase::layer_forward), v, m, st, fwd, RowSet::selective_recompute, scales);
      break;
  }
  if (st.splits_at_host_sync()) {
    add_rows(c.forward_before_sync, rows(st, StackPhase::layer_forward), v, m, st, fwd, RowSet::before_sync, scales);
    add_rows(c.forward_after_sync, rows(st, StackPhase::layer_forward), v, m, st, fwd, RowSet::after_sync, scales);
  }
  return c;
}

LayerCost mix(const std::vector<std::pair<double, LayerCost>>& parts) {
  LayerCost c;
  for (const auto& [w, l] : parts) {
    c.forward += l.forward * w;
    c.backward += l.backward * w;
    c.recompute += l.recompute * w;
    c.forward_before_sync += l.forward_before_sync * w;
    c.forward_after_sync += l.forward_after_sync * w;
  }
  return c;
}

}  // namespace

LayerCost hybrid_dense_layer_mix(const ModelSpec& s, const std::function<LayerCost(LayerKind)>& cost_of) {
  std::vector<std::pair<double, LayerCost>> parts;
  int others = 0;
  for (LayerKind k : {LayerKind::mamba, LayerKind::attention, LayerKind::mlp}) others += s.layers_of_kind(k);
  for (LayerKind k : {LayerKind::mamba, LayerKind::attention, LayerKind::mlp}) {
    const int n = s.layers_of_kind(k);
    if (n > 0) parts.emplace_back(static_cast<double>(n) / others, cost_of(k));
  }
  if (parts.size() == 1) return parts.front().second;
  return mix(parts);
}

LayerCost layer_cost(const ModelSpec& s, const Plan& p, const ComputeModel& m, const CostOptions& o, bool moe_layer) {
  assert(p.tp > 0 && p.mbs > 0 && "layer_cost: tp and mbs must be positive");
  if (s.is_hybrid()) {
    // One block per layer: an MoE layer is its 'E' block; the other layers are priced as the model's mean of its
    // Mamba, attention and MLP layers (exact in each stage's sum when its layers hold the model's mix; docs/hybrid.md).
    if (moe_layer) return one_layer(s, p, m, o, true, false, LayerKind::moe);
    return hybrid_dense_layer_mix(s, [&](LayerKind k) { return one_layer(s, p, m, o, false, false, k); });
  }
  const double f = s.windowed_layer_fraction();
  if (f <= 0.0) return one_layer(s, p, m, o, moe_layer, false);
  // Sliding-window models: the average layer, (1 - f) global and f windowed (the builder prices every layer alike;
  // exact in each stage's sum when its layers hold the model's mix).
  const LayerCost w = one_layer(s, p, m, o, moe_layer, true);
  if (f >= 1.0) return w;
  return mix({{1.0 - f, one_layer(s, p, m, o, moe_layer, false)}, {f, w}});
}

std::vector<KernelLine> layer_kernel_lines(const ModelSpec& s, const Plan& p, const ComputeModel& m,
                                           const CostOptions& o, LayerKind kind, bool moe_layer) {
  const BoundLayer b = bind_layer(s, p, m, o, moe_layer, s.windowed_layer_fraction() > 0.0, kind);
  std::vector<KernelLine> out;
  const auto add = [&](const char* phase, StackPhase ph, const CostOptions& opt) {
    for (const StackRow& r : rows(b.st, ph)) {
      const ChargedRow c = charge(r, b.v, m, b.st, opt, b.scales);
      if (c.k.count == 0) continue;
      const double n = c.k.count;
      out.push_back({phase, r.name, r.kind, c.k.count, c.charged * n, c.k.cost.time * n, c.k.flops * n,
                     c.k.bytes * n, c.k.cost.provenance});
    }
  };
  add("forward", StackPhase::layer_forward, b.fwd);
  add("backward", StackPhase::layer_backward, o);
  return out;
}

std::vector<LayerKindUse> layer_kinds_of(const ModelSpec& s) {
  std::vector<LayerKindUse> out;
  const int moe = s.moe_layers();
  if (!s.is_hybrid()) {
    if (s.layers - moe > 0) out.push_back({LayerKind::transformer, false, s.layers - moe, "transformer layer"});
    if (moe > 0) out.push_back({LayerKind::transformer, true, moe, "MoE transformer layer"});
    return out;
  }
  const std::pair<LayerKind, const char*> kinds[] = {{LayerKind::mamba, "Mamba-2 layer"},
                                                     {LayerKind::attention, "attention layer"},
                                                     {LayerKind::mlp, "MLP layer"},
                                                     {LayerKind::moe, "MoE layer"}};
  for (const auto& [k, label] : kinds) {
    const int n = s.layers_of_kind(k);
    if (n > 0) out.push_back({k, k == LayerKind::moe, n, label});
  }
  return out;
}

EdgeCost edge_cost(const ModelSpec& s, const Plan& p, const ComputeModel& m, const CostOptions& o) {
  const StackProfile& st = m.stack_for(s, p);
  const std::vector<double> v = st.bind(s, p, o.flash_attention, o.dropout, o.vocab_multiple);
  EdgeCost e;
  add_rows(e.embedding_forward, rows(st, StackPhase::embedding_forward), v, m, st, o);
  add_rows(e.embedding_backward, rows(st, StackPhase::embedding_backward), v, m, st, o);
  add_rows(e.head_forward, rows(st, StackPhase::head_forward), v, m, st, o);
  add_rows(e.head_backward, rows(st, StackPhase::head_backward), v, m, st, o);
  return e;
}

PhaseCost optimizer_cost(double params, const ModelSpec& s, const Plan& p, const ComputeModel& m,
                         const CostOptions& o) {
  PhaseCost c;
  if (!(params > 0.0)) return c;
  const StackProfile& st = m.stack_for(s, p);
  const std::vector<double> v = st.bind(s, p, o.flash_attention, o.dropout, o.vocab_multiple, params);
  add_rows(c, rows(st, StackPhase::optimizer), v, m, st, o);
  return c;
}

}  // namespace scalescope::models
