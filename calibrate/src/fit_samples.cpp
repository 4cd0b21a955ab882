// The collective fit's samples (measured rows mapped onto the cluster), residuals and descriptions.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "fit_impl.hpp"
#include "scalescope/sim/statistics.hpp"

namespace scalescope::calib {

using namespace fitimpl;

namespace fitimpl {

Range range_of(double bytes, const FitOptions& o) {
  if (bytes <= o.small_max_bytes) return Range::latency;
  if (bytes >= o.large_min_bytes) return Range::bandwidth;
  return Range::ramp;
}

const char* range_name(Range r) {
  switch (r) {
    case Range::latency: return "latency";
    case Range::ramp: return "ramp";
    case Range::bandwidth: return "bandwidth";
  }
  return "?";
}

std::vector<Sample> collect_samples(const Profile& profile, const Cluster& cluster, const FitOptions& o,
                                    std::vector<std::string>& notes) {
  std::vector<Sample> out;
  const CollectiveModel probe(cluster, o.start);
  for (const auto& e : profile.collectives) {
    const std::string what = e.op + " on " + std::to_string(e.nranks) + " GPUs";
    const auto op = e.coll_op();
    if (!op) {
      notes.push_back(what + ": not used (the model has no one-way pair operation)");
      continue;
    }
    if (e.check.rfind("FAILED", 0) == 0) {
      notes.push_back(what + ": not used (correctness check " + e.check + ")");
      continue;
    }
    if (e.nranks < 2 || e.rows.empty()) continue;
    auto ranks = cluster_ranks(e, cluster);
    if (!ranks) {
      notes.push_back(what + ": not used (" + ranks.error().message + ")");
      continue;
    }
    auto shared = std::make_shared<const std::vector<int>>(std::move(ranks).value());
    const bool op_ok = o.ops.empty() || std::find(o.ops.begin(), o.ops.end(), e.op) != o.ops.end();
    const bool group_ok = o.groups.empty() || std::find(o.groups.begin(), o.groups.end(), e.nranks) != o.groups.end();
    const LinkClass cls = probe.analytical(*op, *shared, Bytes(1024.0)).link_class;
    for (const auto& r : e.rows) {
      Sample s;
      s.entry = &e;
      s.op = *op;
      s.ranks = shared;
      s.n = e.nranks;
      s.bytes = r.bytes;
      s.t_meas = r.time_us * 1e-6;
      s.cls = cls;
      s.in_fit = op_ok && group_ok;
      out.push_back(std::move(s));
    }
  }
  return out;
}

double predict(const CollectiveModel& model, const Sample& s, std::optional<Algorithm> a, std::optional<Protocol> p) {
  return model.analytical(s.op, *s.ranks, Bytes(s.bytes), a, p).time.value;
}

std::string size_str(double b) {
  char buf[64];
  const double units[] = {1.0, 1024.0, 1024.0 * 1024.0, 1024.0 * 1024.0 * 1024.0, 1024.0 * 1024.0 * 1024.0 * 1024.0};
  const char* names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  for (int i = 4; i >= 0; --i) {
    const double v = b / units[i];
    if (v >= 1.0 && std::floor(v) == v) {
      std::snprintf(buf, sizeof buf, "%.0f %s", v, names[i]);
      return buf;
    }
  }
  for (int i = 4; i >= 1; --i) {
    if (b / units[i] >= 1.0) {
      std::snprintf(buf, sizeof buf, "~%.3g %s", b / units[i], names[i]);
      return buf;
    }
  }
  std::snprintf(buf, sizeof buf, "%.0f B", b);
  return buf;
}

std::string num_str(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string describe(const std::vector<const Sample*>& rows) {
  if (rows.empty()) return "no rows";
  std::vector<std::string> ops;
  std::set<int> ns;
  double lo = rows.front()->bytes, hi = lo;
  for (const Sample* s : rows) {
    const std::string op(to_string(s->op));
    if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
    ns.insert(s->n);
    lo = std::min(lo, s->bytes);
    hi = std::max(hi, s->bytes);
  }
  std::string out;
  for (const auto& op : ops) out += (out.empty() ? "" : ", ") + op;
  out += " on n=";
  bool first = true;
  for (int n : ns) {
    out += (first ? "" : ",") + std::to_string(n);
    first = false;
  }
  out += ": " + size_str(lo) + ".." + size_str(hi) + " (" + std::to_string(rows.size()) + " rows)";
  return out;
}

double median(std::vector<double> xs) { return xs.empty() ? 0.0 : scalescope::median(std::move(xs)); }

}  // namespace fitimpl

double median_abs(std::vector<double> xs) {
  for (double& x : xs) x = std::fabs(x);
  return median(std::move(xs));
}

Expected<std::vector<int>> cluster_ranks(const CollEntry& e, const Cluster& cluster) {
  const int cg = cluster.gpus_per_node();
  const int nodes = e.nodes.value_or(1);
  const int per = e.gpus_per_node.value_or(e.nranks);
  if (nodes * per != e.nranks) return input_error("", "", "nodes x gpus_per_node does not equal nranks");
  if (per > cg)
    return input_error("", "", std::to_string(per) + " GPUs per node do not fit a node of cluster '" + cluster.name() +
                                   "' (" + std::to_string(cg) + " GPUs per node)");
  if (nodes > cluster.num_nodes())
    return input_error("", "", std::to_string(nodes) + " nodes needed, cluster '" + cluster.name() + "' has " +
                                   std::to_string(cluster.num_nodes()) + " (use --nodes)");
  std::vector<int> out;
  for (int i = 0; i < nodes; ++i)
    for (int j = 0; j < per; ++j) out.push_back(i * cg + j);
  return out;
}

int nodes_needed(const Profile& profile, int cluster_gpus_per_node) {
  int need = 1;
  for (const auto& e : profile.collectives) {
    if (e.gpus_per_node && *e.gpus_per_node > cluster_gpus_per_node) continue;  // cannot fit anyway
    need = std::max(need, e.nodes.value_or(1));
  }
  return need;
}

std::vector<RowResidual> collective_residuals(const Profile& profile, const Cluster& cluster,
                                              const CollectiveParams& params, const FitOptions& options) {
  std::vector<std::string> ignored;
  FitOptions o = options;
  o.start = params;
  const auto samples = collect_samples(profile, cluster, o, ignored);
  const CollectiveModel model(cluster, params);
  std::vector<RowResidual> out;
  for (const auto& s : samples) {
    const CollResult r = model.analytical(s.op, *s.ranks, Bytes(s.bytes));
    RowResidual x;
    x.op = std::string(to_string(s.op));
    x.nranks = s.n;
    x.bytes = s.bytes;
    x.measured_us = s.t_meas * 1e6;
    x.predicted_us = r.time.value * 1e6;
    const double f = busbw_factor(s.op, s.n);
    x.measured_busbw_GBps = s.bytes / s.t_meas * f / 1e9;
    x.predicted_busbw_GBps = s.bytes / r.time.value * f / 1e9;
    x.algorithm = std::string(to_string(r.algorithm));
    x.protocol = std::string(to_string(r.protocol));
    x.range = range_name(range_of(s.bytes, options));
    x.in_fit = s.in_fit;
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace scalescope::calib
