// Ranking a given list of plans the way the search ranks its candidates: validity, the memory model,
// the symmetric analytical simulation and the same total order (planner/search.hpp). Used where the
// plans are fixed in advance, e.g. to check the planner's choice among configurations that were
// measured (`scalescope validate vtrain-planner`).
#pragma once

#include <string>
#include <vector>

#include "scalescope/models/builder.hpp"
#include "scalescope/planner/search.hpp"

namespace scalescope::planner {

struct RankOptions {
  /// How the framework runs the plans (the search uses flash attention and no dropout).
  models::CostOptions costs;
  /// One compute task per layer and one collective per TP operation (exact collective latencies).
  bool per_layer_tasks = false;
  int threads = 0;  ///< 0: std::thread::hardware_concurrency()
};

/// A plan the ranking refused, and why ("invalid: ...", "out of memory: ...", "failed: ...").
struct RejectedPlan {
  models::Plan plan;
  std::string reason;
};

struct PlanRanking {
  std::vector<RankedPlan> ranked;  ///< best first (ascending analytical step time, then plan fields)
  std::vector<RejectedPlan> rejected;  ///< in input order
};

/// Ranks `plans` (each must use at most the cluster's GPUs). Deterministic for any thread count.
PlanRanking rank_plans(const models::ModelSpec& model, const std::vector<models::Plan>& plans, const Cluster& cluster,
                       const CollectiveModel& collectives, const models::ComputeModel& compute,
                       const RankOptions& options = {});

}  // namespace scalescope::planner
