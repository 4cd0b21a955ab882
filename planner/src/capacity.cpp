// Capacity planning over node counts (formulas in capacity.hpp).
#include "scalescope/planner/capacity.hpp"

#include <algorithm>

#include "scalescope/planner/setup.hpp"

namespace scalescope::planner {

std::vector<int> capacity_node_counts(int max_nodes) {
  std::vector<int> out;
  for (long p = 1; p <= max_nodes; p *= 2) {
    out.push_back(static_cast<int>(p));
    if (3 * p / 2 > p && 3 * p / 2 <= max_nodes && p >= 2) out.push_back(static_cast<int>(3 * p / 2));
  }
  if (max_nodes >= 1) out.push_back(max_nodes);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Expected<CapacityResult> plan_capacity(const models::ModelSpec& model, const CapacityRequest& rq,
                                       const std::function<void(int)>& progress) {
  if (!(rq.tokens > 0)) return input_error("", "--tokens", "expected a positive token count");
  if (!(rq.days > 0)) return input_error("", "--days", "expected a positive number of days");
  if (rq.max_nodes < 1) return input_error("", "--max-nodes", "expected a positive node count");
  if (rq.gbs < 1) return input_error("", "--gbs", "expected a positive global batch size");
  if (!(rq.price_per_gpu_hour >= 0)) return input_error("", "--price-gpu-hour", "expected a non-negative price");
  CapacityResult res;
  for (int nodes : capacity_node_counts(rq.max_nodes)) {
    if (progress) progress(nodes);
    ClusterOptions co;
    co.nodes = nodes;
    auto setup = load_setup(rq.cluster, co, rq.calibration);
    if (!setup) return setup.error();
    const EvalSetup& s = **setup;
    res.gpus_per_node = s.cluster.gpus_per_node();
    res.gpu_model = s.cluster.gpu_spec().model;
    SearchSpace space = rq.space;
    space.gpus = s.cluster.num_gpus();
    space.gbs = rq.gbs;
    SearchOptions so;
    so.top = 1;
    so.flow_top = rq.flow_top;
    so.threads = rq.threads;
    so.cancel = rq.cancel;
    auto found = search(model, s.cluster, s.collectives, s.compute, space, so);
    if (!found) return found.error();
    CapacityPoint pt;
    pt.nodes = nodes;
    pt.gpus = space.gpus;
    if (found->ranked.empty()) {
      pt.why_none = found->explanations;
    } else {
      pt.best = found->ranked.front();
      const double seconds = rq.tokens / pt.best->tokens_per_s;
      pt.days_needed = seconds / 86400.0;
      pt.cost_usd = pt.gpus * seconds / 3600.0 * rq.price_per_gpu_hour;
    }
    res.curve.push_back(std::move(pt));
  }
  // Speedups relative to the smallest node count with a plan, then the fits.
  const CapacityPoint* base = nullptr;
  std::vector<SpeedupPoint> pts;
  for (std::size_t i = 0; i < res.curve.size(); ++i) {
    CapacityPoint& p = res.curve[i];
    if (!p.best) continue;
    if (!base) base = &p;
    const double rel = static_cast<double>(p.nodes) / base->nodes;
    p.speedup = p.best->tokens_per_s / base->best->tokens_per_s;
    p.efficiency = *p.speedup / rel;
    pts.push_back({rel, *p.speedup});
    if (!res.chosen && p.days_needed <= rq.days) res.chosen = i;
  }
  if (base) res.base_nodes = base->nodes;
  res.amdahl = fit_amdahl(pts);
  res.gustafson = fit_gustafson(pts);
  return res;
}

}  // namespace scalescope::planner
