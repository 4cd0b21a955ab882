// Compute-cost model: GEMM interpolation over measured shapes, datasheet roofline, attention,
// memory-bound kernels and launch overhead (equations in compute_model.hpp).
#include "scalescope/models/compute_model.hpp"

#include "scalescope/models/attention_tiles.hpp"
#include "scalescope/models/stack_profile.hpp"
#include "scalescope/sim/statistics.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>

namespace scalescope::models {

std::string_view to_string(Provenance p) {
  switch (p) {
    case Provenance::measured: return "measured";
    case Provenance::fitted: return "fitted";
    case Provenance::datasheet: return "datasheet";
    case Provenance::assumed: return "assumed";
  }
  return "?";
}

AttentionShape AttentionShape::span_shape() const {
  if (window <= 0 || !causal) return *this;
  AttentionShape s = *this;
  s.window = 0;
  s.seq = std::min(seq, 2 * window);
  s.batch = std::max<std::int64_t>(1, std::llround(static_cast<double>(batch) * static_cast<double>(seq) /
                                                   static_cast<double>(s.seq)));
  return s;
}

double AttentionShape::forward_flops() const {
  if (window > 0 && causal) return span_shape().forward_flops();
  const double f = 4.0 * static_cast<double>(batch) * static_cast<double>(heads) * static_cast<double>(seq) *
                   static_cast<double>(seq) * static_cast<double>(head_dim);
  return causal ? 0.5 * f : f;
}

namespace {

std::string_view canonical_dtype(std::string_view d) {
  if (d == "fp8_e4m3") return "fp8";
  if (d == "fp8_e4m3_fast") return "fp8_fast";
  return d;
}

bool same_attention_shape(const AttentionSample& a, const AttentionSample& b) {
  const AttentionShape &x = a.shape, &y = b.shape;
  return a.dtype == b.dtype && x.batch == y.batch && x.heads == y.heads && x.kv_heads == y.kv_heads &&
         x.head_dim == y.head_dim && x.seq == y.seq && x.causal == y.causal && x.backend == y.backend &&
         x.window == y.window;
}

}  // namespace

/// The per-backend dropout factors of the rows with dropout that have a twin without (geometric means); the
/// built-in ones where a backend has no pair.
std::array<ComputeModel::DropoutFactor, 3> ComputeModel::measured_dropout_factors(
    const std::vector<AttentionSample>& plain, const std::vector<AttentionSample>& with_dropout,
    std::array<DropoutFactor, 3> factors) {
  std::array<double, 3> fwd{}, bwd{};
  std::array<int, 3> pairs{};
  for (const AttentionSample& d : with_dropout) {
    for (const AttentionSample& a : plain) {
      if (!same_attention_shape(a, d)) continue;
      const auto b = static_cast<std::size_t>(d.shape.backend);
      fwd[b] += std::log(d.forward.value / a.forward.value);
      bwd[b] += std::log(d.backward.value / a.backward.value);
      ++pairs[b];
      break;
    }
  }
  for (std::size_t b = 0; b < factors.size(); ++b) {
    if (pairs[b] > 0) factors[b] = {std::exp(fwd[b] / pairs[b]), std::exp(bwd[b] / pairs[b]), pairs[b]};
  }
  return factors;
}

namespace {

double bytes_per_element(std::string_view dtype) {
  if (dtype == "fp32" || dtype == "tf32") return 4.0;
  if (dtype == "fp8" || dtype == "fp8_fast") return 1.0;
  return 2.0;
}

Expected<bool> check_assumptions(const ComputeAssumptions& a) {
  auto frac = [](double v) { return v > 0.0 && v <= 1.0; };
  if (!frac(a.gemm_efficiency) || !frac(a.fp8_gemm_efficiency) || !frac(a.attention_efficiency) || !frac(a.hbm_efficiency) ||
      !frac(a.elementwise_efficiency)) {
    return input_error("compute model", "", "efficiencies must lie in (0, 1]");
  }
  if (a.launch_overhead.value < 0.0) return input_error("compute model", "", "launch overhead must be >= 0");
  return true;
}

}  // namespace

Expected<ComputeModel> ComputeModel::datasheet(const GpuSpec& gpu, const ComputeAssumptions& a) {
  if (auto ok = check_assumptions(a); !ok) return ok.error();
  if (!gpu.peak.bf16 && !gpu.peak.fp16) {
    return input_error("cluster", "gpu.peak", "GPU '" + gpu.model + "' has no bf16 or fp16 peak; the compute model needs one");
  }
  if (!(gpu.hbm_bandwidth.value > 0.0)) {
    return input_error("cluster", "gpu.hbm_bandwidth", "GPU '" + gpu.model + "' has no HBM bandwidth");
  }
  ComputeModel m;
  m.gpu_name_ = gpu.model;
  m.cluster_gpu_ = gpu.model;
  m.peak_ = gpu.peak;
  m.hbm_datasheet_ = gpu.hbm_bandwidth;
  m.assume_ = a;
  m.hbm_bw_ = gpu.hbm_bandwidth * a.hbm_efficiency;
  m.hbm_prov_ = Provenance::assumed;
  m.elementwise_bw_ = gpu.hbm_bandwidth * a.elementwise_efficiency;
  m.elementwise_prov_ = Provenance::assumed;
  m.launch_ = KernelCost{a.launch_overhead, Provenance::assumed};
  return m;
}

Expected<ComputeModel> ComputeModel::with_profile(const GpuSpec& gpu, ComputeProfile profile,
                                                  const ComputeAssumptions& a) {
  auto base = datasheet(gpu, a);
  if (!base) return base;
  ComputeModel m = std::move(base).value();
  m.profile_source_ = profile.source.empty() ? std::string("<profile>") : profile.source;
  if (!profile.gpu.empty()) m.gpu_name_ = profile.gpu;
  for (auto& g : profile.gemms) {
    if (g.m <= 0 || g.n <= 0 || g.k <= 0 || !(g.time.value > 0.0)) {
      return input_error(m.profile_source_, "", "GEMM samples need positive m, n, k and time");
    }
    g.dtype = std::string(canonical_dtype(g.dtype));
  }
  m.gemms_ = std::move(profile.gemms);
  m.has_fp8_fast_rows_ = std::any_of(m.gemms_.begin(), m.gemms_.end(), [](const GemmSample& g) {
    return g.dtype == "fp8_fast";
  });
  if (profile.hbm_bandwidth) {
    m.hbm_bw_ = *profile.hbm_bandwidth;
    m.hbm_prov_ = Provenance::measured;
    m.elementwise_bw_ = *profile.hbm_bandwidth * (a.elementwise_efficiency / a.hbm_efficiency);
    m.elementwise_prov_ = Provenance::fitted;  // measured copy bandwidth x assumed ratio
  }
  if (profile.elementwise_bandwidth) {
    m.elementwise_bw_ = *profile.elementwise_bandwidth;
    m.elementwise_prov_ = Provenance::measured;
    m.elementwise_curve_ = std::move(profile.elementwise_curve);
  }
  if (profile.launch_overhead) m.launch_ = KernelCost{*profile.launch_overhead, Provenance::measured};
  if (profile.launch_sync) {
    const double issue = profile.launch_overhead ? profile.launch_overhead->value : 0.0;
    m.sync_latency_ = Seconds(std::max(0.0, profile.launch_sync->value - issue));
  }
  for (auto& row : profile.attention) {
    const AttentionShape& sh = row.shape;
    if (sh.batch <= 0 || sh.heads <= 0 || sh.kv_heads <= 0 || sh.head_dim <= 0 || sh.seq <= 0 ||
        !(row.forward.value > 0.0) || !(row.backward.value > 0.0)) {
      return input_error(m.profile_source_, "$.attention", "attention rows need positive sizes and times");
    }
    row.dtype = std::string(canonical_dtype(row.dtype));
  }
  m.dropout_factor_ = {{{1.202, 1.123, 0}, {2.042, 1.201, 0}, {1.202, 1.123, 0}}};  // flash, cudnn, varlen (H200)
  std::vector<AttentionSample> with_dropout;
  for (auto& row : profile.attention) (row.shape.dropout > 0.0 ? with_dropout : m.attention_).push_back(std::move(row));
  m.dropout_factor_ = measured_dropout_factors(m.attention_, with_dropout, m.dropout_factor_);
  m.attention_source_ = profile.attention_source;
  m.mamba_ = std::move(profile.mamba);
  m.mamba_source_ = profile.mamba_source;
  m.power_ = std::move(profile.power);
  std::vector<double> compute, comm;
  for (const auto& row : profile.interference) {
    if (!counts_as_collective(row)) continue;
    if (row.compute_slowdown) compute.push_back(*row.compute_slowdown);
    if (row.coll_slowdown) comm.push_back(*row.coll_slowdown);
  }
  if (!compute.empty() || !comm.empty()) {
    m.curves_ = InterferenceCurves(profile.interference);
    m.interference_ = Interference{compute.empty() ? 1.0 : median(compute), comm.empty() ? 1.0 : median(comm)};
    m.interference_prov_ = Provenance::measured;
    m.interference_source_ = m.profile_source_ + " `interference` (median of " + std::to_string(compute.size()) +
                             " compute and " + std::to_string(comm.size()) + " collective slowdowns)";
  }
  return m;
}

void ComputeModel::set_interference(Interference f, std::string source) {
  interference_ = f;
  curves_ = InterferenceCurves();
  interference_prov_ = Provenance::assumed;
  interference_source_ = std::move(source);
}

FlopsPerSecond ComputeModel::peak(std::string_view dtype) const {
  const std::string_view d = canonical_dtype(dtype);
  if (auto p = peak_.get(d == "fp8_fast" ? std::string_view("fp8") : d)) return *p;
  if (peak_.bf16) return *peak_.bf16;
  assert(peak_.fp16 && "ComputeModel: constructed without a bf16 or fp16 peak");
  return *peak_.fp16;
}

std::optional<KernelCost> ComputeModel::interpolate_gemm(std::int64_t m, std::int64_t n, std::int64_t k,
                                                         std::string_view dtype, double flops, Bytes operands) const {
  constexpr std::size_t kNearest = 4;
  struct Near {
    double d2;
    std::size_t index;
  };
  std::vector<Near> near;
  const double lm = std::log2(static_cast<double>(m)), ln = std::log2(static_cast<double>(n)),
               lk = std::log2(static_cast<double>(k));
  for (std::size_t i = 0; i < gemms_.size(); ++i) {
    const GemmSample& g = gemms_[i];
    if (g.dtype != dtype) continue;
    if (g.m == m && g.n == n && g.k == k) return KernelCost{g.time, Provenance::measured};
    const double dm = lm - std::log2(static_cast<double>(g.m)), dn = ln - std::log2(static_cast<double>(g.n)),
                 dk = lk - std::log2(static_cast<double>(g.k));
    near.push_back({dm * dm + dn * dn + dk * dk, i});
  }
  if (near.empty()) return std::nullopt;
  const std::size_t count = std::min(kNearest, near.size());
  std::partial_sort(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(count), near.end(),
                    [](const Near& a, const Near& b) { return a.d2 != b.d2 ? a.d2 < b.d2 : a.index < b.index; });
  double wsum = 0.0, acc = 0.0;
  for (std::size_t j = 0; j < count; ++j) {
    const GemmSample& g = gemms_[near[j].index];
    const double rate = 2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k) / g.time.value;
    const double w = 1.0 / near[j].d2;
    wsum += w;
    acc += w * std::log(rate);
  }
  const double rate = std::min(std::exp(acc / wsum), peak(dtype).value);
  const double t = std::max(flops / rate, (operands / hbm_bw_).value);
  return KernelCost{Seconds(t), Provenance::fitted};
}

KernelCost ComputeModel::gemm(std::int64_t m, std::int64_t n, std::int64_t k, std::string_view dtype_in,
                              std::int64_t batch) const {
  assert(m > 0 && n > 0 && k > 0 && batch > 0 && "ComputeModel::gemm: sizes must be positive");
  const std::string_view dtype = canonical_dtype(dtype_in);
  if (dtype == "fp8_fast" && !has_fp8_fast_rows_) {  // the split-accumulation price, sped up (header comment)
    KernelCost c = gemm(m, n, k, "fp8", batch);
    c.time = c.time / kFp8FastAccumulationSpeedup;
    return c;
  }
  const double dm = static_cast<double>(m), dn = static_cast<double>(n), dk = static_cast<double>(k);
  const double flops = 2.0 * dm * dn * dk;
  const Bytes operands(bytes_per_element(dtype) * (dm * dk + dk * dn + dm * dn));
  KernelCost c;
  if (auto measured = interpolate_gemm(m, n, k, dtype, flops, operands)) {
    c = KernelCost{measured->time * static_cast<double>(batch), measured->provenance};
  } else {
    const double eff = dtype == "fp8" ? assume_.fp8_gemm_efficiency : assume_.gemm_efficiency;
    const double compute = flops / (peak(dtype).value * eff);
    const double memory = (operands / hbm_bw_).value;
    c = KernelCost{Seconds(std::max(compute, memory) * static_cast<double>(batch)), Provenance::assumed};
  }
  c.interference = curves_.gemm(static_cast<double>(batch) * dm * dn, c.time);
  c.tensor = true;
  c.energy = gemm_energy(dtype, c.time.value, flops * static_cast<double>(batch));
  return c;
}

KernelCost ComputeModel::attention(Flops flops, Bytes io, std::string_view dtype) const {
  const double compute = flops.value / (peak(dtype).value * assume_.attention_efficiency);
  const double memory = (io / elementwise_bw_).value;
  return KernelCost{Seconds(std::max(compute, memory)), Provenance::assumed};
}

std::optional<KernelCost> ComputeModel::interpolate_attention(const AttentionShape& sh, bool backward,
                                                              std::string_view dtype, double flops, Bytes io) const {
  constexpr std::size_t kNearest = 4;
  struct Near {
    double d2;
    std::size_t index;
  };
  // Rows are placed by their span shape (a windowed shape by the causal attentions it is priced like).
  auto point = [](const AttentionShape& shape) {
    const AttentionShape a = shape.span_shape();
    return std::array<double, 3>{std::log2(static_cast<double>(a.batch * a.heads)),
                                 std::log2(static_cast<double>(a.seq)), std::log2(static_cast<double>(a.head_dim))};
  };
  // The rows of the shape's own kernel when there are any of this dtype and causality; a varlen call without varlen
  // rows takes the flash rows (the same FlashAttention kernels, batched: validation/attention/packed22); else every row.
  const auto has_rows = [&](AttentionBackend b) {
    return std::any_of(attention_.begin(), attention_.end(), [&](const AttentionSample& a) {
      return a.dtype == dtype && a.shape.causal == sh.causal && a.shape.backend == b;
    });
  };
  const AttentionBackend backend =
      sh.backend == AttentionBackend::varlen && !has_rows(AttentionBackend::varlen) ? AttentionBackend::flash : sh.backend;
  const bool own_backend = has_rows(backend);
  // Varlen rows price causal shapes by the tiles FlashAttention-2 computes (attention_tiles.hpp): a rate of tile work,
  // so that documents of 180 tokens cost the whole blocks they occupy and windows the blocks they touch. Other rows
  // price by FLOPs, a windowed shape as its span shape (the caller's `flops` are those of the span shape).
  const bool tiled = own_backend && backend == AttentionBackend::varlen && sh.causal;
  const AttentionShape target = tiled ? sh : sh.span_shape();
  auto work = [&](const AttentionShape& a) {
    return tiled ? tiled_attention_work(a.batch, a.heads, a.seq, a.window, a.head_dim, backward)
                 : a.forward_flops() * (backward ? 2.5 : 1.0);
  };
  const double target_work = tiled ? work(target) : flops;
  auto rate_of = [&](const AttentionSample& a) { return work(a.shape) / (backward ? a.backward : a.forward).value; };
  const auto x = point(target);
  std::vector<Near> near;
  for (std::size_t i = 0; i < attention_.size(); ++i) {
    const AttentionSample& a = attention_[i];
    if (a.dtype != dtype || a.shape.causal != sh.causal) continue;
    if (own_backend && a.shape.backend != backend) continue;
    if (a.shape.batch == target.batch && a.shape.heads == target.heads && a.shape.kv_heads == target.kv_heads &&
        a.shape.head_dim == target.head_dim && a.shape.seq == target.seq && a.shape.window == target.window) {
      return KernelCost{Seconds(target_work / rate_of(a)), Provenance::measured};
    }
    const auto y = point(a.shape);
    double d2 = 0.0;
    for (std::size_t j = 0; j < 3; ++j) d2 += (x[j] - y[j]) * (x[j] - y[j]);
    near.push_back({d2, i});
  }
  if (near.empty()) return std::nullopt;
  const std::size_t count = std::min(kNearest, near.size());
  std::partial_sort(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(count), near.end(),
                    [](const Near& a, const Near& b) { return a.d2 != b.d2 ? a.d2 < b.d2 : a.index < b.index; });
  // Rows at the same point (d = 0, e.g. other kv heads) take all the weight.
  const bool same_point = near[0].d2 == 0.0;
  double wsum = 0.0, acc = 0.0;
  for (std::size_t j = 0; j < count; ++j) {
    if (same_point && near[j].d2 > 0.0) break;
    const double w = same_point ? 1.0 : 1.0 / near[j].d2;
    wsum += w;
    acc += w * std::log(rate_of(attention_[near[j].index]));
  }
  const double rate = std::min(std::exp(acc / wsum), peak(dtype).value);
  return KernelCost{Seconds(std::max(target_work / rate, (io / elementwise_bw_).value)), Provenance::fitted};
}

KernelCost ComputeModel::attention(const AttentionShape& shape, bool backward, Flops flops, Bytes io,
                                   std::string_view dtype) const {
  auto measured = interpolate_attention(shape, backward, canonical_dtype(dtype), flops.value, io);
  KernelCost c = measured ? *measured : attention(flops, io, dtype);
  if (shape.dropout > 0.0) c.time = c.time * attention_dropout_factor(shape.backend, backward);
  const AttentionShape span = shape.span_shape();
  c.interference = curves_.attention(span.batch, span.heads, span.seq, c.time);
  c.tensor = true;
  if (power_) {
    const PowerClass& flash = power_->attention_flash.measured() ? power_->attention_flash : power_->gemm_bf16;
    const PowerClass& cls =
        shape.backend == AttentionBackend::cudnn && power_->attention_cudnn.measured() ? power_->attention_cudnn : flash;
    c.energy = cls.energy(c.time.value, flops.value);
  }
  return c;
}

double ComputeModel::gemm_energy(std::string_view dtype_in, double seconds, double flops) const {
  if (!power_) return 0.0;
  const std::string_view dtype = canonical_dtype(dtype_in);
  const bool fp8 = dtype == "fp8" || dtype == "fp8_fast";
  if (fp8 && power_->gemm_fp8.measured()) return power_->gemm_fp8.energy(seconds, flops);
  if (dtype == "bf16" || dtype == "fp16") return power_->gemm_bf16.energy(seconds, flops);
  PowerClass scaled = power_->gemm_bf16;  // header comment
  scaled.joules_per_unit *= peak("bf16").value / peak(dtype).value;
  return scaled.energy(seconds, flops);
}

const std::shared_ptr<const StackProfile>& ComputeModel::stack() const {
  static const std::shared_ptr<const StackProfile> fused = default_stack();
  return stacks_.empty() ? fused : stacks_.front();
}

const StackProfile& ComputeModel::stack_for(const ModelSpec& spec, const Plan& plan) const {
  if (stacks_.empty()) return *stack();
  auto chosen = select_stack(stacks_, spec, plan);
  return chosen ? **chosen : *stack();
}

bool ComputeModel::has_stack_for(const ModelSpec& spec, const Plan& plan) const {
  if (stacks_.empty()) return true;
  for (const auto& s : stacks_)
    if (s->applies_to(spec, plan)) return true;
  return false;
}

BytesPerSecond ComputeModel::elementwise_bw_at(Bytes bytes) const {
  const auto& c = elementwise_curve_;
  if (c.size() < 2 || !(bytes.value > 0.0)) return elementwise_bw_;
  const double scale = elementwise_bw_.value / c.back().second.value;  // the sweep's largest row is elementwise_bw_
  if (bytes.value <= c.front().first.value) return BytesPerSecond(c.front().second.value * scale);
  if (bytes.value >= c.back().first.value) return elementwise_bw_;
  const auto hi = std::upper_bound(c.begin(), c.end(), bytes.value, [](double b, const auto& r) { return b < r.first.value; });
  const auto lo = hi - 1;
  const double f = std::log(bytes.value / lo->first.value) / std::log(hi->first.value / lo->first.value);
  const double bw = std::exp(std::log(lo->second.value) + f * (std::log(hi->second.value) - std::log(lo->second.value)));
  return BytesPerSecond(bw * scale);
}

KernelCost ComputeModel::memory_bound(Bytes bytes, double factor, bool fitted) const {
  assert(factor > 0.0 && "memory_bound: the bandwidth factor must be positive");
  const Provenance p = fitted ? weaker(elementwise_prov_, Provenance::fitted) : elementwise_prov_;
  const Seconds t = bytes / (elementwise_bw_at(bytes) * factor);
  return with_energy(KernelCost{t, p, curves_.memory(t)}, bytes);
}

KernelCost ComputeModel::memory_bound(Bytes bytes) const {
  const Seconds t = bytes / elementwise_bw_at(bytes);
  return with_energy(KernelCost{t, elementwise_prov_, curves_.memory(t)}, bytes);
}

KernelCost ComputeModel::memory_bound_linear(Bytes bytes) const {
  const Seconds t = bytes / elementwise_bw_;
  return with_energy(KernelCost{t, elementwise_prov_, curves_.memory(t)}, bytes);
}

KernelCost ComputeModel::with_energy(KernelCost c, Bytes bytes) const {
  if (power_) c.energy = power_->memory.energy(c.time.value, bytes.value);
  return c;
}

double ComputeModel::attention_dropout_factor(AttentionBackend backend, bool backward) const {
  const DropoutFactor& f = dropout_factor_[static_cast<std::size_t>(backend)];
  return backward ? f.backward : f.forward;
}

std::int64_t ComputeModel::longest_attention_seq() const {
  std::int64_t longest = 0;
  for (const AttentionSample& a : attention_) {
    if (a.shape.backend != AttentionBackend::varlen) longest = std::max(longest, a.shape.span_shape().seq);
  }
  return longest;
}

std::vector<SourcedValue> ComputeModel::inputs() const {
  const std::string sheet = "cluster GPU '" + cluster_gpu_ + "' datasheet";
  std::vector<SourcedValue> out;
  out.push_back({"peak_bf16", peak("bf16").value / 1e12, "TFLOP/s", Provenance::datasheet, sheet});
  out.push_back({"hbm_bandwidth_datasheet", to_GBps(hbm_datasheet_), "GB/s", Provenance::datasheet, sheet});
  std::size_t measured = 0;
  for (const auto& g : gemms_) measured += g.dtype == "bf16" ? 1 : 0;
  if (measured > 0) {
    out.push_back({"gemm_shapes_bf16", static_cast<double>(measured), "shapes", Provenance::measured,
                   profile_source_ + " (log-space inverse-distance interpolation, 4 nearest shapes)"});
  } else {
    out.push_back({"gemm_efficiency", assume_.gemm_efficiency, "fraction of peak", Provenance::assumed,
                   "public cuBLAS large-GEMM measurements reach about 0.7-0.8 of peak"});
  }
  if (peak_.fp8) {  // used by precision=fp8 plans
    std::size_t fp8 = 0;
    for (const auto& g : gemms_) fp8 += g.dtype == "fp8" ? 1 : 0;
    if (fp8 > 0) {
      out.push_back({"gemm_shapes_fp8", static_cast<double>(fp8), "shapes", Provenance::measured,
                     profile_source_ + " fp8_e4m3 rows (precision=fp8 GEMMs; same interpolation)"});
    } else {
      out.push_back({"fp8_gemm_efficiency", assume_.fp8_gemm_efficiency, "fraction of fp8 peak", Provenance::assumed,
                     "median fp8_e4m3 rate of GH100 shapes >= 2048 measured by this project (h200x4 profile)"});
    }
    std::size_t fast = 0;
    for (const auto& g : gemms_) fast += g.dtype == "fp8_fast" ? 1 : 0;
    if (fast > 0) {
      out.push_back({"gemm_shapes_fp8_fast", static_cast<double>(fast), "shapes", Provenance::measured,
                     profile_source_ + " fp8_e4m3_fast rows (fast accumulation: FP8 forward GEMMs of stacks with "
                                       "fp8_fast_fprop; same interpolation)"});
    } else {
      out.push_back({"fp8_fast_accumulation_speedup", kFp8FastAccumulationSpeedup, "x split-accumulation time",
                     Provenance::fitted,
                     "median of 16 shapes on one H200, validation/session32 (not this GPU); FP8 forward GEMMs of "
                     "stacks with fp8_fast_fprop"});
    }
  }
  if (!attention_.empty()) {
    out.push_back({"attention_shapes", static_cast<double>(attention_.size()), "shapes", Provenance::measured,
                   profile_source_ + " `attention` (" + attention_source_ +
                       "; fwd and bwd rates interpolated in log space, 4 nearest shapes)"});
  } else {
    out.push_back({"attention_efficiency", assume_.attention_efficiency, "fraction of peak", Provenance::assumed,
                   "FlashAttention-2 (Dao 2023): 50-73% of A100 peak forward, less backward"});
  }
  if (!mamba_.empty()) {
    out.push_back({"mamba_shapes", static_cast<double>(mamba_.size()), "shapes", Provenance::measured,
                   profile_source_ + " `mamba` (" + mamba_source_ +
                       "; each Mamba-2 kernel group's modelled bytes scaled to the nearest measured shape, docs/hybrid.md)"});
  }
  for (const auto& [b, kernel] : {std::pair{AttentionBackend::flash, "flash"}, std::pair{AttentionBackend::cudnn, "cudnn"}}) {
    const DropoutFactor& f = dropout_factor_[static_cast<std::size_t>(b)];
    const std::string name = std::string("attention_dropout_factor_") + kernel;
    char backward[32];
    std::snprintf(backward, sizeof backward, "%.3f", f.backward);
    out.push_back({name, f.forward, "x time forward", f.measured_pairs > 0 ? Provenance::measured : Provenance::fitted,
                   (f.measured_pairs > 0 ? profile_source_ + " `attention` rows with dropout (" +
                                               std::to_string(f.measured_pairs) + " pairs)"
                                         : std::string("one H200, validation/attention/dropout24 (not this GPU)")) +
                       "; backward x" + backward + "; models with attention_dropout > 0 only"});
  }
  out.push_back({"hbm_bandwidth", to_GBps(hbm_bw_), "GB/s", hbm_prov_,
                 hbm_prov_ == Provenance::measured ? profile_source_
                                                   : "datasheet x assumed 0.85 (copy kernels reach 80-90%)"});
  out.push_back({"elementwise_bandwidth", to_GBps(elementwise_bw_), "GB/s", elementwise_prov_,
                 elementwise_prov_ == Provenance::measured ? profile_source_
                 : elementwise_prov_ == Provenance::fitted ? "measured HBM bandwidth x assumed 0.7/0.85"
                                                           : "datasheet HBM x assumed 0.7"});
  if (elementwise_curve_.size() >= 2) {
    auto percent = [&](double bytes) {
      return std::to_string(std::lround(100.0 * elementwise_bw_at(Bytes(bytes)).value / elementwise_bw_.value));
    };
    out.push_back({"elementwise_sweep", static_cast<double>(elementwise_curve_.size()), "sizes", Provenance::measured,
                   profile_source_ + " `memory.elementwise`: a memory-bound kernel moves its bytes at the sweep's "
                   "bandwidth for its size (log-log interpolation): 10 MB kernels " + percent(1e7) + "%, 100 MB " +
                   percent(1e8) + "% of the bandwidth above"});
  }
  const StackProfile& st = *stack();
  out.push_back({"stack", 1.0, "flag", st.trace ? Provenance::measured : Provenance::assumed,
                 st.name + " (" + st.source + ")" + (st.trace ? ": kernels measured in " + st.trace->file +
                                                                    (st.trace->gpu.empty() ? "" : " on " + st.trace->gpu)
                                                              : ": kernel list counted by hand")});
  if (st.memory_bandwidth_factor != 1.0 || !st.memory_bandwidth_factor_source.empty()) {
    out.push_back({"memory_bandwidth_factor", st.memory_bandwidth_factor, "fraction of elementwise bandwidth",
                   st.memory_bandwidth_factor_source.empty() ? Provenance::assumed : Provenance::fitted,
                   st.memory_bandwidth_factor_source.empty() ? "given without a stated source"
                                                             : st.memory_bandwidth_factor_source});
  }
  if (power_) {
    const std::string src = profile_source_ + " `power` (" + power_->source + ", docs/power.md)";
    out.push_back({"power_idle", power_->idle_w, "W", Provenance::measured, src});
    out.push_back({"power_capped", power_->capped_w, "W", Provenance::measured, src});
    const std::pair<const char*, const PowerClass*> classes[] = {
        {"gemm_bf16", &power_->gemm_bf16}, {"gemm_fp8", &power_->gemm_fp8},
        {"attention_flash", &power_->attention_flash}, {"attention_cudnn", &power_->attention_cudnn},
        {"memory", &power_->memory}};
    for (const auto& [name, cls] : classes) {
      if (!cls->measured()) continue;
      const bool bytes = cls == &power_->memory;
      char text[96];
      std::snprintf(text, sizeof text, " + %.3g pJ per %s (%d kernels)", cls->joules_per_unit * 1e12,
                    bytes ? "byte" : "FLOP", cls->kernels);
      out.push_back({std::string("power_") + name, cls->watts, "W while running", Provenance::fitted, src + ": " +
                     text});
    }
  }
  out.push_back({"launch_overhead", to_us(launch_.time), "us", launch_.provenance,
                 launch_.provenance == Provenance::measured ? profile_source_
                                                            : "kernel launch + PyTorch eager dispatch, a few us each"});
  const std::string interference_src =
      interference_source_.empty() ? "none measured: communication beside compute is assumed free" : interference_source_;
  out.push_back({"interference_compute_slowdown", interference_.compute_slowdown, "x", interference_prov_,
                 interference_src});
  out.push_back({"interference_comm_slowdown", interference_.comm_slowdown, "x", interference_prov_, interference_src});
  if (!curves_.empty()) {
    out.push_back({"interference_per_kernel", 1.0, "flag", Provenance::measured,
                   profile_source_ + " `interference`, per kernel (interference_curves.hpp; the medians above apply "
                                     "only to tasks without kernels): " + curves_.describe()});
  }
  if (host_cost_) {
    const std::string src = host_cost_->source + " (" + host_cost_->framework + ")";
    out.push_back({"host_per_layer_microbatch_module", host_cost_->module.value * 1e3, "ms", Provenance::measured, src});
    out.push_back({"host_per_layer_microbatch_tensor_parallel", host_cost_->tensor_parallel.value * 1e3, "ms",
                   Provenance::measured, src});
    for (const auto& [processes, cost] : host_cost_->tensor_parallel_by_processes) {
      out.push_back({"host_per_layer_microbatch_tensor_parallel_" + std::to_string(processes) + "_processes",
                     cost.value * 1e3, "ms", Provenance::measured, src});
    }
    if (host_cost_->per_local_expert.value > 0.0) {
      out.push_back({"host_per_moe_layer_microbatch_local_expert", host_cost_->per_local_expert.value * 1e3, "ms",
                     Provenance::measured, src});
    }
  }
  return out;
}

}  // namespace scalescope::models
