// Per-kernel interference curves (formulas in interference_curves.hpp).
#include "scalescope/models/interference_curves.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "scalescope/sim/statistics.hpp"

namespace scalescope::models {

namespace {

/// Points (x, y) sorted by x; equal x merged into the median of their y.
std::vector<std::pair<double, double>> merged(std::vector<std::pair<double, double>> raw) {
  std::map<double, std::vector<double>> by_x;
  for (const auto& [x, y] : raw) by_x[x].push_back(y);
  std::vector<std::pair<double, double>> out;
  for (auto& [x, ys] : by_x) out.emplace_back(x, median(std::move(ys)));
  return out;
}

std::string format_points(const std::vector<std::pair<double, double>>& pts, bool time_axis) {
  std::string s;
  char buf[64];
  for (const auto& [x, y] : pts) {
    const double v = std::exp(x);
    if (time_axis) {
      std::snprintf(buf, sizeof buf, "%s%.0f us x%.2f", s.empty() ? "" : ", ", v * 1e6, y);
    } else {
      std::snprintf(buf, sizeof buf, "%s%.1fM x%.2f", s.empty() ? "" : ", ", v / 1e6, y);
    }
    s += buf;
  }
  return s.empty() ? "none" : s;
}

}  // namespace

bool counts_as_collective(const InterferenceSample& row) {
  return row.op == "all_gather" || row.op == "reduce_scatter" || row.op == "all_reduce";
}

InterferenceCurves::InterferenceCurves(const std::vector<InterferenceSample>& rows) {
  struct Kernel {
    bool gemm = false;
    double output = 0.0;
    std::vector<double> alone, slowed, slows;
  };
  std::map<std::string, Kernel> kernels;  // by name: deterministic order
  for (const InterferenceSample& r : rows) {
    if (!counts_as_collective(r)) continue;
    Kernel& k = kernels[r.compute];
    k.gemm = r.kernel_class == "gemm";
    k.output = static_cast<double>(r.m) * static_cast<double>(r.n);
    k.alone.push_back(r.compute_alone.value);
    if (r.compute_slowdown) k.slowed.push_back(*r.compute_slowdown);
    if (r.coll_slowdown) k.slows.push_back(*r.coll_slowdown);
  }
  std::vector<std::pair<double, double>> gs, gm, ms, mm;
  for (auto& [name, k] : kernels) {
    const double lt = std::log(median(k.alone));
    if (k.gemm) {
      if (!k.slowed.empty() && k.output > 0.0) gs.emplace_back(std::log(k.output), median(k.slowed));
      if (!k.slows.empty()) gm.emplace_back(lt, median(k.slows));
    } else {
      if (!k.slowed.empty()) ms.emplace_back(lt, median(k.slowed));
      if (!k.slows.empty()) mm.emplace_back(lt, median(k.slows));
    }
  }
  gemm_slowed_.points = merged(std::move(gs));
  gemm_slows_.points = merged(std::move(gm));
  memory_slowed_.points = merged(std::move(ms));
  memory_slows_.points = merged(std::move(mm));
}

double InterferenceCurves::Curve::at(double x) const {
  if (points.empty()) return 1.0;
  if (x <= points.front().first) return points.front().second;
  if (x >= points.back().first) return points.back().second;
  const auto hi = std::upper_bound(points.begin(), points.end(), x,
                                   [](double v, const std::pair<double, double>& p) { return v < p.first; });
  const auto lo = hi - 1;
  const double f = (x - lo->first) / (hi->first - lo->first);
  return lo->second + f * (hi->second - lo->second);
}

bool InterferenceCurves::empty() const {
  return gemm_slowed_.points.empty() && gemm_slows_.points.empty() && memory_slowed_.points.empty() &&
         memory_slows_.points.empty();
}

KernelInterference InterferenceCurves::gemm(double output_elements, Seconds time) const {
  if (!(output_elements > 0.0) || !(time.value > 0.0)) return {};
  return {gemm_slowed_.at(std::log(output_elements)), gemm_slows_.at(std::log(time.value))};
}

KernelInterference InterferenceCurves::attention(std::int64_t batch, std::int64_t heads, std::int64_t seq,
                                                 Seconds time) const {
  const double blocks = static_cast<double>(batch) * static_cast<double>(heads) * std::ceil(static_cast<double>(seq) / 128.0);
  return gemm(32768.0 * blocks, time);
}

KernelInterference InterferenceCurves::memory(Seconds time) const {
  if (!(time.value > 0.0)) return {};
  return {memory_slowed_.at(std::log(time.value)), memory_slows_.at(std::log(time.value))};
}

std::string InterferenceCurves::describe() const {
  return "GEMM slowed by output elements: " + format_points(gemm_slowed_.points, false) +
         "; collective slowed by GEMM time: " + format_points(gemm_slows_.points, true) +
         "; memory-bound slowed by time: " + format_points(memory_slowed_.points, true) +
         "; collective slowed by memory-bound time: " + format_points(memory_slows_.points, true);
}

}  // namespace scalescope::models
