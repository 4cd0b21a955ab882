// One `scalescope capacity` request as a library call: how many nodes train a token budget in a number of
// days, at what cost, with the scaling curve over node counts, and the JSON report the CLI prints with
// --format json. Shared by the CLI and the Python package.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>

#include "scalescope/models/model_spec.hpp"
#include "scalescope/planner/capacity.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::planner {

struct CapacityRunRequest {
  std::string model;   ///< catalog name or file
  std::string tokens;  ///< training tokens: "15T", "300B", "2e12"
  double days = 0;     ///< wall-clock days available
  std::string fabric;  ///< multi-node cluster (node template + fabric), built at each node count
  std::string node;    ///< the fabric's node (checked), or alone: the cluster file used at each node count
  std::optional<double> price;  ///< USD per GPU-hour; absent: 2.50, an assumption
  int max_nodes = 128;
  std::optional<int> gbs, seq;  ///< gbs default: batch_tokens / seq
  double batch_tokens = 4.0 * 1024 * 1024;
  std::string calibration, fix;  ///< fix: plan fields kept fixed, as for `plan`
  int threads = 0;
  const std::atomic<bool>* cancel = nullptr;  ///< when it reads true the search stops with a runtime error
};

struct CapacityRun {
  CapacityRunRequest request;
  models::ModelSpec model;
  double tokens = 0;       ///< request.tokens parsed
  CapacityRequest search;  ///< what was searched (cluster, gbs, price, ...)
  CapacityResult result;
};

/// "15T", "2.5e12", "300B", "7M", "1k" -> number; nullopt when malformed or not positive.
std::optional<double> parse_count(const std::string& s);

/// Checks the request (errors name the option: "--tokens", "--fabric", "--node", ...), loads the model and
/// searches the node counts; `progress(nodes)` is called before each node count is searched.
Expected<CapacityRun> run_capacity(const CapacityRunRequest& request, const std::function<void(int)>& progress = {});

/// `scalescope capacity --format json`: model, seq_len, cluster, tokens, days, gbs, price_per_gpu_hour,
/// price_assumed, chosen_nodes, base_nodes, amdahl, gustafson and curve (one entry per node count).
Json capacity_json(const CapacityRun& run);

}  // namespace scalescope::planner
