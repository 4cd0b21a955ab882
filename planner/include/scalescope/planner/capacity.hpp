// Capacity planning: the smallest node count whose best plan trains a token budget within a number
// of days, its cost, and the predicted scaling curve over node counts with Amdahl / Gustafson fits.
//
//   days(n)  = tokens / tokens_per_s(best plan on n nodes) / 86400
//   cost(n)  = n * gpus_per_node * days(n) * 24 * price_per_gpu_hour
//   speedup(n) = tokens_per_s(n) / tokens_per_s(n0), n0 the smallest node count with a plan; the
//   global batch is fixed, so this is strong scaling (Amdahl); the Gustafson fit of the same points
//   is reported too. Both fits use n / n0.
// Node counts searched: 1, 2, 3, 4, 6, 8, 12, 16, 24, ... (2^k and 3 * 2^k) up to max_nodes, and
// max_nodes itself.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "scalescope/planner/fit.hpp"
#include "scalescope/planner/search.hpp"

namespace scalescope::planner {

struct CapacityRequest {
  double tokens = 0;               ///< training tokens
  double days = 0;                 ///< wall-clock budget
  double price_per_gpu_hour = 2.5;  ///< USD, an assumption unless the user gives one
  int max_nodes = 128;
  int gbs = 0;                     ///< sequences per step (fixed across node counts)
  std::string cluster;             ///< cluster (fabric) name or file, built at each node count
  std::string calibration;         ///< optional (see setup.hpp)
  SearchSpace space;               ///< gpus / gbs are set per node count; the rest is used as given
  int flow_top = 0;                ///< flow confirmation per node count (0: analytical only)
  int threads = 0;
  const std::atomic<bool>* cancel = nullptr;  ///< passed to each search (SearchOptions::cancel)
};

struct CapacityPoint {
  int nodes = 0;
  int gpus = 0;
  std::optional<RankedPlan> best;
  std::vector<std::string> why_none;  ///< explanations when no plan exists
  double days_needed = 0;
  double cost_usd = 0;
  std::optional<double> speedup, efficiency;
};

struct CapacityResult {
  int gpus_per_node = 0;
  std::string gpu_model;
  std::vector<CapacityPoint> curve;  ///< ascending node counts
  std::optional<std::size_t> chosen;  ///< index into curve of the smallest count meeting the deadline
  std::optional<ScalingFit> amdahl, gustafson;
  int base_nodes = 0;
};

std::vector<int> capacity_node_counts(int max_nodes);

/// `progress(nodes)` is called before each node count is searched.
Expected<CapacityResult> plan_capacity(const models::ModelSpec& model, const CapacityRequest& request,
                                       const std::function<void(int)>& progress = {});

}  // namespace scalescope::planner
