// The planner tab's non-Qt core: one plan search made exactly as `scalescope plan` makes it, plus a
// throughput-vs-GPUs sweep (the best plan at each GPU count, as `scalescope plan --gpus G --top 1
// --flow-top 0` ranks it) with an Amdahl fit; runs on a worker thread, reports progress, cancellable.
//
// Sweep GPU counts: 1, 2, 4, ... up to one node, then whole nodes 1, 2, 3, 4, 6, 8, 12, ...
// (planner::capacity_node_counts) up to the searched node count. The global batch is fixed, so the
// curve is strong scaling: speedup(n) = tokens_per_s(n) / tokens_per_s(n0), n0 the smallest GPU
// count with a plan, fitted with Amdahl's S(x) = 1 / (s + (1 - s) / x), x = n / n0 (planner/fit.hpp).
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "scalescope/planner/fit.hpp"
#include "scalescope/planner/search.hpp"
#include "scalescope/sim/error.hpp"

namespace scalescope::gui {

struct PlannerRequest {
  std::string model = "llama3-8b";  ///< catalog name or file
  std::string cluster = "hgx-h200-8";
  int nodes = 0;       ///< 0: the cluster file's node count (as `plan` without --nodes)
  int gbs = 8;
  std::string calibration;  ///< empty: datasheet
  std::string fix;          ///< "--fix" text, e.g. "tp=8,schedule=1f1b"
  int top = 10;
  int flow_top = 3;
  int max_mbs = 8;
  int threads = 0;
  bool sweep = true;  ///< also compute the throughput-vs-GPUs sweep
};

struct SweepPoint {
  int gpus = 0;
  std::optional<planner::RankedPlan> best;  ///< none: no plan at this GPU count
  std::string why_none;
  std::optional<double> speedup;  ///< relative to the first point with a plan
};

struct PlannerOutcome {
  PlannerRequest request;
  std::string header;  ///< "llama3-8b (seq 8192) on 8 GPUs of hgx-h200-8 (1 node(s) x 8 H200 ...), gbs 8"
  std::string collective_source, compute_source;
  int gpus = 0;
  double gpu_memory_GiB = 0;
  planner::SearchResult result;
  std::vector<SweepPoint> sweep;
  int sweep_base_gpus = 0;
  std::optional<planner::ScalingFit> amdahl;
};

/// Progress: (stage text, done, total) for the stage, called from the worker thread.
using PlannerProgress = std::function<void(const std::string&, long, long)>;

/// GPU counts of the sweep for a cluster with `gpus_per_node` GPUs per node and `nodes` nodes.
std::vector<int> sweep_gpu_counts(int gpus_per_node, int nodes);

/// Runs the search (and the sweep when asked). `cancel` (may be null) stops it between plans: the
/// result is then a runtime error whose message contains "cancelled". Thread-safe (no shared state).
Expected<PlannerOutcome> run_planner(const PlannerRequest& request, const std::atomic<bool>* cancel,
                                     const PlannerProgress& progress = {});

}  // namespace scalescope::gui
