// Fitting CollectiveParams to measured collectives: bus efficiency from large messages, latencies
// from small ones, the size ramp from the middle (method in fit.hpp).
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>

#include "fit_impl.hpp"

namespace scalescope::calib {

using namespace fitimpl;

namespace {

constexpr double kBeMin = 0.05, kBeMax = 2.0;

/// Least squares for a few unknowns: solves (A^T A) x = A^T y; nullopt when A's columns are
/// (numerically) dependent.
std::optional<std::vector<double>> least_squares(const std::vector<std::vector<double>>& A, const std::vector<double>& y) {
  const std::size_t m = A.empty() ? 0 : A[0].size();
  if (m == 0 || A.size() < m) return std::nullopt;
  std::vector<std::vector<double>> N(m, std::vector<double>(m + 1, 0.0));
  for (std::size_t r = 0; r < A.size(); ++r)
    for (std::size_t i = 0; i < m; ++i) {
      for (std::size_t j = 0; j < m; ++j) N[i][j] += A[r][i] * A[r][j];
      N[i][m] += A[r][i] * y[r];
    }
  double scale = 0.0;
  for (std::size_t i = 0; i < m; ++i) scale = std::max(scale, N[i][i]);
  for (std::size_t c = 0; c < m; ++c) {
    std::size_t piv = c;
    for (std::size_t r = c + 1; r < m; ++r)
      if (std::fabs(N[r][c]) > std::fabs(N[piv][c])) piv = r;
    if (std::fabs(N[piv][c]) <= 1e-9 * scale) return std::nullopt;
    std::swap(N[c], N[piv]);
    for (std::size_t r = 0; r < m; ++r) {
      if (r == c) continue;
      const double f = N[r][c] / N[c][c];
      for (std::size_t j = c; j <= m; ++j) N[r][j] -= f * N[c][j];
    }
  }
  std::vector<double> x(m);
  for (std::size_t i = 0; i < m; ++i) x[i] = N[i][m] / N[i][i];
  return x;
}

/// Non-negative least squares by trying every set of free unknowns (the others at 0): the feasible
/// solution with the smallest squared error. Only for a handful of unknowns.
std::optional<std::vector<double>> nnls_small(const std::vector<std::vector<double>>& A, const std::vector<double>& y) {
  const std::size_t m = A[0].size();
  std::optional<std::vector<double>> best;
  double best_sse = 0.0;
  for (unsigned mask = 1; mask < (1u << m); ++mask) {
    std::vector<std::size_t> cols;
    for (std::size_t j = 0; j < m; ++j)
      if (mask & (1u << j)) cols.push_back(j);
    std::vector<std::vector<double>> sub(A.size(), std::vector<double>(cols.size()));
    for (std::size_t r = 0; r < A.size(); ++r)
      for (std::size_t j = 0; j < cols.size(); ++j) sub[r][j] = A[r][cols[j]];
    auto x = least_squares(sub, y);
    if (!x || std::any_of(x->begin(), x->end(), [](double v) { return v < 0.0; })) continue;
    std::vector<double> full(m, 0.0);
    for (std::size_t j = 0; j < cols.size(); ++j) full[cols[j]] = (*x)[j];
    double sse = 0.0;
    for (std::size_t r = 0; r < A.size(); ++r) {
      double p = 0.0;
      for (std::size_t j = 0; j < m; ++j) p += A[r][j] * full[j];
      sse += (p - y[r]) * (p - y[r]);
    }
    if (!best || sse < best_sse - 1e-15) {
      best = full;
      best_sse = sse;
    }
  }
  return best;
}

struct Fitter {
  const Profile& profile;
  const Cluster& cluster;
  const FitOptions& opt;
  CollectiveParams P;
  std::vector<Sample> samples;
  FitReport report;
  // Rows behind each parameter group, for provenance.
  std::string be_rows, lat_rows, ramp_rows;

  std::vector<std::string> round_notes;  ///< notes of the current round (the last round's are kept)
  void note(std::string s) { round_notes.push_back(std::move(s)); }

  void record(FittedValue v) {
    for (auto& x : report.values)
      if (x.name == v.name) {
        x = std::move(v);
        return;
      }
    report.values.push_back(std::move(v));
  }

  std::vector<const Sample*> rows(Range r, const std::function<bool(const Sample&)>& keep) const {
    std::vector<const Sample*> out;
    for (const auto& s : samples)
      if (s.in_fit && range_of(s.bytes, opt) == r && keep(s)) out.push_back(&s);
    return out;
  }

  double& be_ref(CollectiveParams& q, CollOp op, Algorithm a, LinkClass c) const {
    return q.bus_efficiency[static_cast<std::size_t>(idx(op))][static_cast<std::size_t>(idx(a))]
                           [static_cast<std::size_t>(idx(c))];
  }

  // ---- (A) bus efficiency from large messages ---------------------------------------------------
  void fit_bandwidth() {
    std::vector<std::string> parts;
    for (CollOp op : kAllCollOps) {
      for (LinkClass c : kAllLinkClasses) {
        auto big = rows(Range::bandwidth, [&](const Sample& s) { return s.op == op && s.cls == c; });
        if (big.empty()) {
          // Fall back to the largest size of this op if it is at least 1 MiB.
          double largest = 0.0;
          for (const auto& s : samples)
            if (s.in_fit && s.op == op && s.cls == c) largest = std::max(largest, s.bytes);
          if (largest <= 0.0) continue;
          if (largest < 1024.0 * 1024.0) {
            note(std::string(to_string(op)) + " (" + std::string(to_string(c)) + "): no rows of 1 MiB or more; bus "
                 "efficiency keeps its starting value");
            continue;
          }
          big = rows(Range::ramp, [&](const Sample& s) { return s.op == op && s.cls == c && s.bytes == largest; });
          note(std::string(to_string(op)) + " (" + std::string(to_string(c)) + "): no rows >= " +
               size_str(opt.large_min_bytes) + "; bus efficiency fitted on the largest size, " + size_str(largest));
        }
        fit_op_be(op, c, big);
        parts.push_back(describe(big));
      }
    }
    be_rows.clear();
    for (const auto& p : parts) be_rows += (be_rows.empty() ? "" : "; ") + p;
  }

  /// One factor s on the starting bus efficiencies of every algorithm the op can use (all_reduce:
  /// ring and tree keep their datasheet ratio), found so that the model's own choice matches the
  /// rows: median of log(t_model / t_measured) = 0.
  void fit_op_be(CollOp op, LinkClass c, const std::vector<const Sample*>& big) {
    std::vector<Algorithm> algos;
    double smallest = kBeMax, largest = 0.0;
    for (Algorithm a : kAllAlgorithms) {
      if (!algorithm_supports(a, op)) continue;
      algos.push_back(a);
      smallest = std::min(smallest, opt.start.bus_eff(op, a, c));
      largest = std::max(largest, opt.start.bus_eff(op, a, c));
    }
    auto set = [&](CollectiveParams& q, double scale) {
      for (Algorithm a : algos) be_ref(q, op, a, c) = opt.start.bus_eff(op, a, c) * scale;
    };
    auto f = [&](double scale) {
      CollectiveParams q = P;
      set(q, scale);
      const CollectiveModel m(*shape, q);
      std::vector<double> lr;
      for (const Sample* s : big) lr.push_back(std::log(predict(m, *s) / s->t_meas));
      return median(lr);
    };
    const std::string what = std::string(to_string(op)) + " (" + std::string(to_string(c)) + ")";
    const double s_min = kBeMin / smallest, s_max = kBeMax / largest;
    double lo = std::log(s_min), hi = std::log(s_max);
    const double flo = f(s_min), fhi = f(s_max);
    double scale;
    if (std::fabs(flo - fhi) < 1e-9) {
      note(what + ": bus efficiency not identifiable (per-channel caps limit these rows); keeps its value");
      return;
    } else if (flo <= 0.0) {
      scale = s_min;
      note(what + ": bus efficiency clamped at its lower bound (the model is faster than measured even there)");
    } else if (fhi >= 0.0) {
      scale = s_max;
      note(what + ": bus efficiency clamped at its upper bound " + num_str(kBeMax) +
           " (the model is slower than measured even there)");
    } else {
      for (int it = 0; it < 60; ++it) {
        const double mid = 0.5 * (lo + hi);
        if (f(std::exp(mid)) > 0.0) lo = mid;
        else hi = mid;
      }
      scale = std::exp(0.5 * (lo + hi));
    }
    set(P, scale);
    std::string method = "median over the rows of log(t_model / t_measured) = 0 with the model choosing the algorithm "
                         "(bisection in log space)";
    if (algos.size() > 1) method += "; one factor x" + num_str(scale) + " on the starting values of all its algorithms";
    for (Algorithm a : algos)
      record({"bus_efficiency." + std::string(to_string(op)) + "." + std::string(to_string(a)) + "." +
                  std::string(to_string(c)),
              be_ref(P, op, a, c), opt.start.bus_eff(op, a, c), "fraction", describe(big), method});
  }

  // ---- (B) latencies from small messages --------------------------------------------------------
  void fit_latency() {
    std::vector<std::string> parts;
    for (Algorithm a : kAllAlgorithms) {
      const Protocol p = a == Algorithm::ring || a == Algorithm::tree ? Protocol::LL : Protocol::Simple;
      if (P.proto_eff(a, p) <= 0.0) continue;
      auto small = rows(Range::latency, [&](const Sample& s) { return algorithm_supports(a, s.op); });
      if (small.empty()) continue;
      fit_one_latency(a, p, small);
      parts.push_back(std::string(to_string(a)) + "." + std::string(to_string(p)) + " from " + describe(small));
    }
    lat_rows.clear();
    for (const auto& s : parts) lat_rows += (lat_rows.empty() ? "" : "; ") + s;
  }

  void fit_one_latency(Algorithm a, Protocol p, const std::vector<const Sample*>& small) {
    const auto ai = static_cast<std::size_t>(idx(a)), pi = static_cast<std::size_t>(idx(p));
    const CollectiveModel m(*shape, P);
    // Hop counts per class of each entry: latency with base 0 and hop[c] = 1 us, the others 0.
    std::array<std::unique_ptr<CollectiveModel>, kNumLinkClasses> unit;
    for (LinkClass c : kAllLinkClasses) {
      CollectiveParams q = P;
      q.base_latency_us[ai][pi] = 0.0;
      for (LinkClass c2 : kAllLinkClasses) q.hop_latency_us[static_cast<std::size_t>(idx(c2))][ai][pi] = c2 == c ? 1.0 : 0.0;
      unit[static_cast<std::size_t>(idx(c))] = std::make_unique<CollectiveModel>(*shape, q);
    }
    std::map<const CollEntry*, std::vector<double>> lat;  // per entry: latency estimates (us)
    std::map<const CollEntry*, std::array<double, kNumLinkClasses>> hops;
    std::vector<const CollEntry*> order;
    for (const Sample* s : small) {
      const CollResult r = m.analytical(s->op, *s->ranks, Bytes(s->bytes), a, p);
      if (lat.find(s->entry) == lat.end()) {
        order.push_back(s->entry);
        for (LinkClass c : kAllLinkClasses)
          hops[s->entry][static_cast<std::size_t>(idx(c))] =
              unit[static_cast<std::size_t>(idx(c))]->analytical(s->op, *s->ranks, Bytes(s->bytes), a, p).latency.value * 1e6;
      }
      lat[s->entry].push_back((s->t_meas - (r.time.value - r.latency.value)) * 1e6);
    }
    std::vector<int> cls_cols;  // classes with a non-zero hop count somewhere
    for (LinkClass c : kAllLinkClasses) {
      bool used = false;
      for (const auto* e : order) used = used || hops[e][static_cast<std::size_t>(idx(c))] > 0.0;
      if (used) cls_cols.push_back(idx(c));
    }
    std::vector<std::vector<double>> A;
    std::vector<double> y;
    for (const auto* e : order) {
      std::vector<double> row{1.0};
      for (int c : cls_cols) row.push_back(hops[e][static_cast<std::size_t>(c)]);
      A.push_back(row);
      y.push_back(median(lat[e]));
    }
    const std::string key = std::string(to_string(a)) + "." + std::string(to_string(p));
    const std::string what = describe(small);
    std::optional<std::vector<double>> x;
    if (least_squares(A, y)) x = nnls_small(A, y);
    const double base_before = opt.start.base_latency_us[ai][pi];
    if (x) {
      P.base_latency_us[ai][pi] = (*x)[0];
      record({"base_latency_us." + key, (*x)[0], base_before, "us", what,
              "non-negative least squares of per-group median latency = base + sum_c hops_c x hop_c"});
      for (std::size_t j = 0; j < cls_cols.size(); ++j) {
        const auto ci = static_cast<std::size_t>(cls_cols[j]);
        const std::string cname(to_string(static_cast<LinkClass>(cls_cols[j])));
        P.hop_latency_us[ci][ai][pi] = (*x)[j + 1];
        record({"hop_latency_us." + cname + "." + key, (*x)[j + 1], opt.start.hop_latency_us[ci][ai][pi], "us", what,
                "same least squares as base_latency_us." + key});
      }
    } else {
      // The groups do not separate base from hops (one hop count, e.g. only 2-GPU rows). Tree: its
      // hops take ring's (fitted) per-hop latency of the same protocol and class (NCCL's hwLat gives
      // ring and tree the same LL values), base the rest. Pairwise and p2p: the whole latency goes
      // to base and the hops become 0, so other group sizes keep the measured latency (NCCL issues
      // a group's sends to different peers concurrently).
      const bool tree = a == Algorithm::tree;
      const auto ri = static_cast<std::size_t>(idx(Algorithm::ring));
      std::vector<double> rest;
      for (std::size_t r = 0; r < A.size(); ++r) {
        double h = 0.0;
        for (std::size_t j = 0; j < cls_cols.size(); ++j)
          h += tree ? A[r][j + 1] * P.hop_latency_us[static_cast<std::size_t>(cls_cols[j])][ri][pi] : 0.0;
        rest.push_back(y[r] - h);
      }
      const double base = std::max(0.0, median(rest));
      P.base_latency_us[ai][pi] = base;
      for (int c : cls_cols) {
        const auto ci = static_cast<std::size_t>(c);
        P.hop_latency_us[ci][ai][pi] = tree ? P.hop_latency_us[ci][ri][pi] : 0.0;
        const std::string cname(to_string(static_cast<LinkClass>(c)));
        record({"hop_latency_us." + cname + "." + key, P.hop_latency_us[ci][ai][pi],
                opt.start.hop_latency_us[ci][ai][pi], "us", what,
                "not separable from base_latency_us." + key + " by these rows: " +
                    (tree ? "ring's per-hop latency hop_latency_us." + cname + ".ring." + std::string(to_string(p))
                          : std::string("0 (latency independent of the group size)"))});
      }
      note(key + ": the rows' hop counts do not separate base from per-hop latency; per-hop latency " +
           (tree ? std::string("taken from ring") : std::string("set to 0")) + ", base fitted on the rest");
      record({"base_latency_us." + key, base, base_before, "us", what,
              "median over groups of (median latency - hops x hop latency), hops as said on their rows"});
    }
  }

  // ---- (C) size ramp from the middle ------------------------------------------------------------
  /// One multiplicative factor on starting values, searched on the grid 2^(i/8), i = lo..hi.
  struct RampVar {
    std::string name, unit;
    int lo = 0, hi = 0;
    std::function<void(CollectiveParams&, double)> apply;  ///< sets the parameter(s) from start x factor
    std::function<double(const CollectiveParams&)> value;  ///< what the report shows
    double factor = 1.0;
    bool identified = false;  ///< the objective changed along this factor's grid at least once
  };
  std::vector<RampVar> ramp_vars;

  void make_ramp_vars() {
    const CollectiveParams& st = opt.start;
    for (Protocol p : kAllProtocols) {
      const auto pi = static_cast<std::size_t>(idx(p));
      ramp_vars.push_back({"channels.threshold_bytes." + std::string(to_string(p)), "bytes", -40, 40,
                           [&st, pi](CollectiveParams& q, double f) { q.channel_threshold_bytes[pi] = st.channel_threshold_bytes[pi] * f; },
                           [pi](const CollectiveParams& q) { return q.channel_threshold_bytes[pi]; }});
    }
    // Not const: clang (preset asan) treats captures of constant-initialised const locals as unneeded.
    auto LL = static_cast<std::size_t>(idx(Protocol::LL)), LL128 = static_cast<std::size_t>(idx(Protocol::LL128));
    if (st.max_busbw_GBps[LL] > 0.0)
      ramp_vars.push_back({"channels.max_busbw_GBps.LL", "GB/s", -16, 16,
                           [&st, LL](CollectiveParams& q, double f) { q.max_busbw_GBps[LL] = st.max_busbw_GBps[LL] * f; },
                           [LL](const CollectiveParams& q) { return q.max_busbw_GBps[LL]; }});
    if (st.channel_max_GBps[LL128] > 0.0)
      ramp_vars.push_back({"channels.max_GBps.LL128", "GB/s", -16, 16,
                           [&st, LL128](CollectiveParams& q, double f) { q.channel_max_GBps[LL128] = st.channel_max_GBps[LL128] * f; },
                           [LL128](const CollectiveParams& q) { return q.channel_max_GBps[LL128]; }});
    for (Protocol p : {Protocol::LL128, Protocol::Simple}) {
      const auto pi = static_cast<std::size_t>(idx(p));
      ramp_vars.push_back({"latency_scale.ring_tree." + std::string(to_string(p)), "factor", -24, 24,
                           [&st, pi](CollectiveParams& q, double f) {
                             for (Algorithm a : {Algorithm::ring, Algorithm::tree}) {
                               const auto ai = static_cast<std::size_t>(idx(a));
                               q.base_latency_us[ai][pi] = st.base_latency_us[ai][pi] * f;
                               for (std::size_t c = 0; c < kNumLinkClasses; ++c)
                                 q.hop_latency_us[c][ai][pi] = st.hop_latency_us[c][ai][pi] * f;
                             }
                           },
                           nullptr});
    }
  }

  void apply_ramp(CollectiveParams& q) const {
    for (const auto& v : ramp_vars) v.apply(q, v.factor);
  }

  double ramp_objective(const std::vector<const Sample*>& mid) {
    CollectiveParams q = P;
    apply_ramp(q);
    const CollectiveModel m(*shape, q);
    double sum = 0.0;
    for (const Sample* s : mid) {
      const double l = std::log(predict(m, *s) / s->t_meas);
      sum += l * l;
    }
    return sum;
  }

  void search(RampVar& v, const std::vector<const Sample*>& mid) {
    const double current = v.factor;
    double best = current, best_obj = ramp_objective(mid), lowest = best_obj, highest = best_obj;
    for (int i = v.lo; i <= v.hi; ++i) {
      v.factor = std::pow(2.0, i / 8.0);
      const double obj = ramp_objective(mid);
      lowest = std::min(lowest, obj);
      highest = std::max(highest, obj);
      const bool closer = std::fabs(std::log(v.factor / current)) < std::fabs(std::log(best / current));
      if (obj < best_obj * (1.0 - 1e-12) || (obj <= best_obj * (1.0 + 1e-12) && closer)) {
        best = v.factor;
        best_obj = obj;
      }
    }
    v.factor = best;
    if (highest - lowest > 1e-9 * std::max(1.0, lowest)) v.identified = true;
  }

  void fit_ramp() {
    const auto mid = rows(Range::ramp, [](const Sample&) { return true; });
    if (mid.empty()) {
      note("no rows between " + size_str(opt.small_max_bytes) + " and " + size_str(opt.large_min_bytes) +
           ": channel parameters and LL128/Simple latencies keep their starting values");
      return;
    }
    if (ramp_vars.empty()) make_ramp_vars();
    for (int sweep = 0; sweep < 2; ++sweep)
      for (auto& v : ramp_vars) search(v, mid);
    for (auto& v : ramp_vars)
      if (!v.identified) v.factor = 1.0;
    apply_ramp(P);
    ramp_rows = describe(mid);
    const std::string method = "coordinate descent on sum of log(t_model / t_measured)^2 over the rows (factors 2^(i/8))";
    ramp_fitted.clear();
    for (const auto& v : ramp_vars) {
      if (!v.identified) continue;
      ramp_fitted.push_back(v.name);
      CollectiveParams before = opt.start;
      v.apply(before, 1.0);
      record({v.name, v.value ? v.value(P) : v.factor, v.value ? v.value(before) : 1.0, v.unit, ramp_rows,
              v.unit == "factor" ? method + "; multiplies the starting base and hop latencies of ring and tree" : method});
    }
  }

  void note_unidentified_ramp() {
    for (const auto& v : ramp_vars)
      if (!v.identified)
        report.notes.push_back(v.name + ": changing it does not change the predictions of the " +
                               size_str(opt.small_max_bytes) + ".." + size_str(opt.large_min_bytes) +
                               " rows (not identifiable here); keeps its starting value");
  }
  std::vector<std::string> ramp_fitted;
  /// A model whose cached rank groups every trial model starts from (built once, see warm()).
  std::unique_ptr<CollectiveModel> shape;

  void warm() {
    shape = std::make_unique<CollectiveModel>(cluster, P);
    const CollEntry* last = nullptr;
    for (const auto& s : samples)
      if (s.entry != last) {
        (void)shape->analytical(s.op, *s.ranks, Bytes(s.bytes));  // builds the patterns of every algorithm of the op
        last = s.entry;
      }
  }
};

std::string joined_ops(const std::vector<Sample>& samples) {
  std::vector<const Sample*> in;
  for (const auto& s : samples)
    if (s.in_fit) in.push_back(&s);
  return describe(in);
}

}  // namespace

Expected<FitResult> fit_collective_params(const Profile& profile, const Cluster& cluster, const FitOptions& options) {
  Fitter f{profile, cluster, options, options.start, {}, {}, {}, {}, {}, {}, {}, {}, {}};
  for (auto& c : f.P.size_efficiency) c = {};  // (A)-(C) fit the model without curves; (D) fits them
  f.P.sendrecv_distinct_peers = {};
  f.report.profile = profile.name();
  f.samples = collect_samples(profile, cluster, options, f.report.notes);
  const bool any = std::any_of(f.samples.begin(), f.samples.end(), [](const Sample& s) { return s.in_fit; });
  if (!any)
    return input_error(profile.file, "collectives",
                       "no usable collective rows" +
                           std::string(options.groups.empty() && options.ops.empty() ? "" : " for the chosen --fit-groups / ops") +
                           " (entries must be a model op, pass their check, and fit the cluster)");
  f.warm();
  for (int round = 0; round < 2; ++round) {
    f.round_notes.clear();
    f.fit_bandwidth();
    f.fit_latency();
    f.fit_ramp();
  }
  f.report.notes.insert(f.report.notes.end(), f.round_notes.begin(), f.round_notes.end());
  std::string size_rows;
  fit_size_efficiency(*f.shape, f.P, f.samples, f.report.values, size_rows);
  const std::string from = "fitted from " + profile.name() + " (" + joined_ops(f.samples) + ")";
  CollectiveParams& P = f.P;
  if (!f.be_rows.empty())
    P.bus_efficiency_source = from + ": bus efficiency of the ops measured, from " + f.be_rows +
                              "; other entries: " + options.start.bus_efficiency_source;
  std::string scaled, channels;
  for (const auto& name : f.ramp_fitted) {
    if (name.rfind("latency_scale.ring_tree.", 0) == 0) scaled += (scaled.empty() ? "" : " and ") + name.substr(24);
    else channels += (channels.empty() ? "" : ", ") + name.substr(9);
  }
  if (!scaled.empty()) scaled = "; ring/tree " + scaled + " scaled from " + f.ramp_rows;
  if (!f.lat_rows.empty() || !scaled.empty()) {
    P.base_latency_source = from + ": " + f.lat_rows + scaled + "; other entries: " + options.start.base_latency_source;
    P.hop_latency_source = from + ": same rows as base_latency_us; other entries: " + options.start.hop_latency_source;
  }
  if (!channels.empty())
    P.channels_source = from + ": " + channels + " from " + f.ramp_rows + "; other entries: " + options.start.channels_source;
  if (!size_rows.empty() && size_rows != "no rows")
    P.size_efficiency_source = from + ": efficiency by size from " + size_rows;
  f.note_unidentified_ramp();
  // Identical notes (e.g. one per sendrecv_pair entry) once, with a count.
  std::vector<std::pair<std::string, int>> counted;
  for (const auto& n : f.report.notes) {
    auto it = std::find_if(counted.begin(), counted.end(), [&](const auto& c) { return c.first == n; });
    if (it == counted.end()) counted.emplace_back(n, 1);
    else ++it->second;
  }
  f.report.notes.clear();
  for (const auto& [n, k] : counted) f.report.notes.push_back(k == 1 ? n : n + " [" + std::to_string(k) + " entries]");
  f.report.residuals = collective_residuals(profile, cluster, P, options);
  return FitResult{P, std::move(f.report)};
}

}  // namespace scalescope::calib
