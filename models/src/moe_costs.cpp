// Expert-parallel token exchange sizes (formulas in moe_costs.hpp).
#include "scalescope/models/moe_costs.hpp"

#include <algorithm>
#include <cmath>

namespace scalescope::models {

namespace {

/// Expected distinct bins hit by k draws spread evenly over `bins` bins.
double distinct(double bins, double k) { return bins <= 1.0 ? 1.0 : bins * (1.0 - std::pow(1.0 - 1.0 / bins, k)); }

}  // namespace

double moe_dispatch_copies(const ModelSpec& spec, const Plan& p, int gpus_per_node) {
  if (!spec.is_moe()) return 0.0;
  const double k = spec.moe.top_k;
  if (p.moe_dispatcher != MoeDispatcher::flex) return k;
  const int n = p.ep;
  // The EP group's ranks are etp apart: gpus_per_node / etp of them share a node.
  const int g = std::clamp(std::max(1, gpus_per_node) / p.etp, 1, n);
  const int nodes = (n + g - 1) / g;
  if (nodes <= 1) return std::min(k, distinct(n, k));
  double allowed = nodes;
  const MoeSpec& e = spec.moe;
  if (e.router_groups > 1 && e.router_group_topk < e.router_groups) {
    allowed = std::clamp(std::round(nodes * static_cast<double>(e.router_group_topk) / e.router_groups), 1.0,
                         static_cast<double>(nodes));
  }
  return std::min(k, distinct(allowed, k));
}

}  // namespace scalescope::models
