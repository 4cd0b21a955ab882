// One `scalescope collective` request as a library call: predicted NCCL collective times over a size
// sweep (nccl-tests semantics), and the JSON report the CLI prints with --format json. Shared by the CLI
// and the Python package, so their numbers are the same.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "scalescope/sim/cluster.hpp"
#include "scalescope/sim/collective.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::planner {

struct CollectiveRequest {
  std::string cluster;            ///< topologies/ name or JSON file
  std::optional<int> nodes;       ///< nodes to build the cluster with (default: the file's)
  std::string op;                 ///< all_reduce, all_gather, ... (coll_op_choices())
  int gpus = 0;                   ///< ranks 0..gpus-1 take part
  std::string sizes = "8:1G";     ///< MIN:MAX or SIZE, K/M/G suffixes (powers of 2)
  int step_factor = 2;            ///< size multiplier per row
  std::string calibration;        ///< collective-parameters JSON or calibration profile; empty: datasheet
  std::string fidelity = "analytical";  ///< analytical | flow
  std::string algorithm, protocol;      ///< forced choices; empty: the model's
  bool params_only = false;  ///< stop once the parameters are loaded (--print-params): no op, cluster or GPUs needed
};

/// One row of the sweep: the buffer after nccl-tests rounding and its predicted cost.
struct CollectiveRow {
  double bytes = 0, count = 0;  ///< count: per-rank for all_gather / reduce_scatter / alltoall, as nccl-tests
  CollResult result;
  bool empty = false;  ///< 0 bytes after rounding: NCCL returns at once
};

struct CollectiveRun {
  CollectiveRequest request;
  CollectiveParams params;
  std::optional<Cluster> cluster;  ///< absent with params_only
  CollOp op = CollOp::all_reduce;
  int nodes_used = 0;  ///< nodes the first `gpus` GPUs span
  std::vector<CollectiveRow> rows;
};

/// Checks the request (errors name the option: "--op", "--sizes", "--gpus", ...), loads the cluster and the
/// parameters and predicts every size. Bad input comes back as an input error naming the file and JSON path.
Expected<CollectiveRun> run_collective(const CollectiveRequest& request);

/// The parameters' provenance in report order: (key, source) for base_latency_us, hop_latency_us,
/// protocol_efficiency, link_efficiency, bus_efficiency, channels.
std::vector<std::pair<std::string, std::string>> collective_parameter_sources(const CollectiveParams& params);

/// A row's algorithm / protocol name ("none" for an empty row).
std::string row_algorithm(const CollectiveRow& row);
std::string row_protocol(const CollectiveRow& row);

/// `scalescope collective --format json`: header (cluster, nodes, gpus_per_node, op, gpus, fidelity, data_type,
/// calibration, parameters) and rows (bytes, count, time_us, algbw_GBps, busbw_GBps, algorithm, protocol,
/// channels, bottleneck).
Json collective_json(const CollectiveRun& run);

}  // namespace scalescope::planner
