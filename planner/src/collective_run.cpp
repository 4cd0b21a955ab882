// `scalescope collective` as a library call: request checks, the size sweep, the predictions and the JSON report.
#include "scalescope/planner/collective_run.hpp"

#include <cmath>
#include <cstdint>
#include <tuple>

#include "scalescope/calibrate/fit.hpp"

namespace scalescope::planner {

namespace {

constexpr double kTypeSize = 4.0;  // nccl-tests' default data type, float

/// "8", "64K", "1M", "1G" (powers of two, as nccl-tests -b/-e); nullopt if malformed.
std::optional<double> parse_size(const std::string& s) {
  if (s.empty()) return std::nullopt;
  std::size_t digits = 0;
  while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') ++digits;
  if (digits == 0 || digits > 15) return std::nullopt;
  double v = std::stod(s.substr(0, digits));
  const std::string suffix = s.substr(digits);
  if (suffix == "K" || suffix == "k") v *= 1024.0;
  else if (suffix == "M" || suffix == "m") v *= 1024.0 * 1024.0;
  else if (suffix == "G" || suffix == "g") v *= 1024.0 * 1024.0 * 1024.0;
  else if (!suffix.empty()) return std::nullopt;
  return v;
}

Expected<std::vector<double>> parse_sizes(const std::string& spec, int factor) {
  const auto colon = spec.find(':');
  const std::string lo_s = spec.substr(0, colon), hi_s = colon == std::string::npos ? lo_s : spec.substr(colon + 1);
  const auto lo = parse_size(lo_s), hi = parse_size(hi_s);
  const std::string expect = "expected MIN:MAX or SIZE with optional K, M, G suffixes (powers of 2), e.g. 8:1G";
  if (!lo || !hi) return input_error("", "--sizes", expect + ", got '" + spec + "'");
  if (*lo < 1 || *hi < *lo) return input_error("", "--sizes", "expected 1 <= MIN <= MAX, got '" + spec + "'");
  if (*hi > 1024.0 * 1024 * 1024 * 1024) return input_error("", "--sizes", "expected MAX <= 1T, got '" + spec + "'");
  if (factor < 2) return input_error("", "--step-factor", "expected an integer >= 2, got " + std::to_string(factor));
  std::vector<double> out;
  for (double s = *lo; s <= *hi; s *= factor) out.push_back(s);
  return out;
}

/// nccl-tests rounding: whole floats, and for all_gather / reduce_scatter / alltoall a whole
/// number of floats per rank. Returns (bytes, count column: per-rank count where nccl-tests prints it).
std::pair<double, double> round_size(CollOp op, double size, int n) {
  const double count = std::floor(size / kTypeSize);
  if (op == CollOp::all_gather || op == CollOp::reduce_scatter || op == CollOp::alltoall) {
    const double per_rank = std::floor(count / n);
    return {per_rank * n * kTypeSize, per_rank};
  }
  return {count * kTypeSize, count};
}

double round3(double v) { return std::round(v * 1000.0) / 1000.0; }

}  // namespace

Expected<CollectiveRun> run_collective(const CollectiveRequest& o) {
  CollectiveRun run;
  run.request = o;
  const auto op = o.params_only ? std::optional<CollOp>(CollOp::all_reduce) : parse_coll_op(o.op);
  if (!op) return input_error("", "--op", "expected one of " + coll_op_choices() + ", got '" + o.op + "'");
  run.op = *op;
  std::optional<Algorithm> algorithm;
  if (!o.algorithm.empty()) {
    algorithm = parse_algorithm(o.algorithm);
    if (!algorithm)
      return input_error("", "--algorithm", "expected one of " + algorithm_choices() + ", got '" + o.algorithm + "'");
  }
  std::optional<Protocol> protocol;
  if (!o.protocol.empty()) {
    protocol = parse_protocol(o.protocol);
    if (!protocol)
      return input_error("", "--protocol", "expected one of " + protocol_choices() + ", got '" + o.protocol + "'");
  }
  if (o.fidelity != "analytical" && o.fidelity != "flow")
    return input_error("", "--fidelity", "expected analytical | flow, got '" + o.fidelity + "'");
  auto sizes = parse_sizes(o.sizes, o.step_factor);
  if (!sizes) return sizes.error();

  run.params = datasheet_collective_params();
  if (!o.calibration.empty()) {
    // A collective-params file, or a calibration profile (file or built-in name) fitted on the cluster.
    std::optional<Cluster> fit_cluster;
    if (!o.cluster.empty()) {
      ClusterOptions fopt;
      fopt.nodes = o.nodes;
      auto c = load_cluster_by_name_or_path(o.cluster, fopt);
      if (!c) return c.error();
      fit_cluster.emplace(std::move(c).value());
    }
    auto p = calib::load_collective_calibration(o.calibration, fit_cluster ? &*fit_cluster : nullptr);
    if (!p) return p.error();
    run.params = std::move(p).value();
  }
  if (o.params_only) return run;

  if (o.cluster.empty()) return input_error("", "--cluster", "a cluster name or file is required");
  if (o.gpus == 0) return input_error("", "--gpus", "the number of GPUs is required");
  ClusterOptions copt;
  copt.nodes = o.nodes;
  auto loaded = load_cluster_by_name_or_path(o.cluster, copt);
  if (!loaded) return loaded.error();
  const Cluster& cluster = run.cluster.emplace(std::move(loaded).value());
  if (o.gpus < 1 || o.gpus > cluster.num_gpus())
    return input_error("", "--gpus",
                       "expected 1 to " + std::to_string(cluster.num_gpus()) + " GPUs (cluster '" + cluster.name() +
                           "' has " + std::to_string(cluster.num_nodes()) + " node(s) of " +
                           std::to_string(cluster.gpus_per_node()) + "; use --nodes for more), got " +
                           std::to_string(o.gpus));
  std::vector<int> ranks(static_cast<std::size_t>(o.gpus));
  for (int i = 0; i < o.gpus; ++i) ranks[static_cast<std::size_t>(i)] = i;
  const CollectiveModel model(cluster, run.params);
  if (auto why = model.check(*op, ranks, algorithm, protocol)) {
    const bool algo_bad = algorithm && !algorithm_supports(*algorithm, *op);
    return input_error("", algo_bad ? "--algorithm" : protocol ? "--protocol" : "--op", *why);
  }

  for (double s : *sizes) {
    CollectiveRow row;
    std::tie(row.bytes, row.count) = round_size(*op, s, o.gpus);
    row.empty = row.bytes == 0.0;
    if (!row.empty) {
      if (o.fidelity == "flow") {
        FlowRunOptions fo;
        fo.algorithm = algorithm;
        fo.protocol = protocol;
        row.result = model.simulate_flow(*op, ranks, Bytes(row.bytes), fo);
      } else {
        row.result = model.analytical(*op, ranks, Bytes(row.bytes), algorithm, protocol);
      }
    }
    run.rows.push_back(std::move(row));
  }
  run.nodes_used = cluster.node_of(o.gpus - 1) + 1;
  return run;
}

std::vector<std::pair<std::string, std::string>> collective_parameter_sources(const CollectiveParams& p) {
  return {{"base_latency_us", p.base_latency_source},        {"hop_latency_us", p.hop_latency_source},
          {"protocol_efficiency", p.protocol_efficiency_source}, {"link_efficiency", p.link_efficiency_source},
          {"bus_efficiency", p.bus_efficiency_source},          {"channels", p.channels_source}};
}

std::string row_algorithm(const CollectiveRow& r) {
  return r.empty ? std::string("none") : std::string(to_string(r.result.algorithm));
}

std::string row_protocol(const CollectiveRow& r) {
  return r.empty ? std::string("none") : std::string(to_string(r.result.protocol));
}

Json collective_json(const CollectiveRun& run) {
  const CollectiveRequest& o = run.request;
  const Cluster& cluster = *run.cluster;
  Json header = {{"cluster", cluster.name()}, {"nodes", run.nodes_used}, {"gpus_per_node", cluster.gpus_per_node()},
                 {"op", o.op}, {"gpus", o.gpus}, {"fidelity", o.fidelity}, {"data_type", "float"},
                 {"calibration", o.calibration.empty() ? Json(nullptr) : Json(o.calibration)}};
  Json prov = Json::object();
  for (const auto& [k, v] : collective_parameter_sources(run.params)) prov[k] = v;
  header["parameters"] = prov;
  Json rows = Json::array();
  for (const CollectiveRow& r : run.rows) {
    rows.push_back({{"bytes", static_cast<std::int64_t>(r.bytes)},
                    {"count", static_cast<std::int64_t>(r.count)},
                    {"time_us", round3(r.result.time.value * 1e6)},
                    {"algbw_GBps", round3(to_GBps(r.result.algbw))},
                    {"busbw_GBps", round3(to_GBps(r.result.busbw))},
                    {"algorithm", row_algorithm(r)},
                    {"protocol", row_protocol(r)},
                    {"channels", r.result.channels},
                    {"bottleneck", r.empty ? "" : r.result.bottleneck}});
  }
  return Json{{"header", header}, {"rows", rows}};
}

}  // namespace scalescope::planner
