// `scalescope collective`: predicted NCCL collective times over a size sweep, printed like
// nccl-tests (size, count, type, redop, root, time, algbw, busbw) plus algorithm and protocol.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cli_common.hpp"
#include "scalescope/calibrate/fit.hpp"
#include "scalescope/sim/collective.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::cli {

namespace {

struct CollectiveOptions {
  std::string cluster;
  std::optional<int> nodes;
  std::string op;
  int gpus = 0;
  std::string sizes = "8:1G";
  int step_factor = 2;
  std::string calibration;
  std::string fidelity = "analytical";
  std::string algorithm;
  std::string protocol;
  bool print_params = false;
  Format format = Format::text;
};

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

const char* redop_of(CollOp op) {
  return op == CollOp::all_reduce || op == CollOp::reduce_scatter ? "sum" : "none";
}

double round3(double v) { return std::round(v * 1000.0) / 1000.0; }

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

struct Row {
  double bytes = 0, count = 0;
  CollResult r;
  bool empty = false;  ///< 0 bytes after rounding: NCCL returns at once
};

int run(const CollectiveOptions& o) {
  const std::string cmd = "collective";
  const auto op = o.print_params ? std::optional<CollOp>(CollOp::all_reduce) : parse_coll_op(o.op);
  if (!op) return report(cmd, input_error("", "--op", "expected one of " + coll_op_choices() + ", got '" + o.op + "'"));
  std::optional<Algorithm> algorithm;
  if (!o.algorithm.empty()) {
    algorithm = parse_algorithm(o.algorithm);
    if (!algorithm)
      return report(cmd, input_error("", "--algorithm",
                                     "expected one of " + algorithm_choices() + ", got '" + o.algorithm + "'"));
  }
  std::optional<Protocol> protocol;
  if (!o.protocol.empty()) {
    protocol = parse_protocol(o.protocol);
    if (!protocol)
      return report(cmd, input_error("", "--protocol", "expected one of " + protocol_choices() + ", got '" + o.protocol + "'"));
  }
  if (o.fidelity != "analytical" && o.fidelity != "flow")
    return report(cmd, input_error("", "--fidelity", "expected analytical | flow, got '" + o.fidelity + "'"));
  auto sizes = parse_sizes(o.sizes, o.step_factor);
  if (!sizes) return report(cmd, sizes.error());

  CollectiveParams params = datasheet_collective_params();
  if (!o.calibration.empty()) {
    // A collective-params file, or a calibration profile (file or built-in name) fitted on --cluster.
    std::optional<Cluster> fit_cluster;
    if (!o.cluster.empty()) {
      ClusterOptions fopt;
      fopt.nodes = o.nodes;
      auto c = load_cluster_by_name_or_path(o.cluster, fopt);
      if (!c) return report(cmd, c.error());
      fit_cluster.emplace(std::move(c).value());
    }
    auto p = calib::load_collective_calibration(o.calibration, fit_cluster ? &*fit_cluster : nullptr);
    if (!p) return report(cmd, p.error());
    params = std::move(p).value();
  }
  if (o.print_params) {
    print_stdout(dump_json(to_json(params)));
    return 0;
  }

  if (o.cluster.empty()) return report(cmd, input_error("", "--cluster", "a cluster name or file is required"));
  if (o.gpus == 0) return report(cmd, input_error("", "--gpus", "the number of GPUs is required"));
  ClusterOptions copt;
  copt.nodes = o.nodes;
  auto cluster = load_cluster_by_name_or_path(o.cluster, copt);
  if (!cluster) return report(cmd, cluster.error());
  if (o.gpus < 1 || o.gpus > cluster->num_gpus())
    return report(cmd, input_error("", "--gpus",
                                   "expected 1 to " + std::to_string(cluster->num_gpus()) + " GPUs (cluster '" +
                                       cluster->name() + "' has " + std::to_string(cluster->num_nodes()) + " node(s) of " +
                                       std::to_string(cluster->gpus_per_node()) + "; use --nodes for more), got " +
                                       std::to_string(o.gpus)));
  std::vector<int> ranks(static_cast<std::size_t>(o.gpus));
  for (int i = 0; i < o.gpus; ++i) ranks[static_cast<std::size_t>(i)] = i;
  const CollectiveModel model(*cluster, params);
  if (auto why = model.check(*op, ranks, algorithm, protocol)) {
    const bool algo_bad = algorithm && !algorithm_supports(*algorithm, *op);
    return report(cmd, input_error("", algo_bad ? "--algorithm" : protocol ? "--protocol" : "--op", *why));
  }

  std::vector<Row> rows;
  for (double s : *sizes) {
    Row row;
    std::tie(row.bytes, row.count) = round_size(*op, s, o.gpus);
    row.empty = row.bytes == 0.0;
    if (!row.empty) {
      if (o.fidelity == "flow") {
        FlowRunOptions fo;
        fo.algorithm = algorithm;
        fo.protocol = protocol;
        row.r = model.simulate_flow(*op, ranks, Bytes(row.bytes), fo);
      } else {
        row.r = model.analytical(*op, ranks, Bytes(row.bytes), algorithm, protocol);
      }
    }
    rows.push_back(std::move(row));
  }

  const int root = *op == CollOp::broadcast ? 0 : -1;
  const int nodes_used = cluster->node_of(o.gpus - 1) + 1;
  auto alg_name = [](const Row& r) { return r.empty ? std::string("none") : std::string(to_string(r.r.algorithm)); };
  auto proto_name = [](const Row& r) { return r.empty ? std::string("none") : std::string(to_string(r.r.protocol)); };
  const std::vector<std::pair<std::string, const std::string*>> sources{
      {"base_latency_us", &params.base_latency_source},   {"hop_latency_us", &params.hop_latency_source},
      {"protocol_efficiency", &params.protocol_efficiency_source}, {"link_efficiency", &params.link_efficiency_source},
      {"bus_efficiency", &params.bus_efficiency_source},  {"channels", &params.channels_source}};

  if (o.format == Format::json) {
    Json header = {{"cluster", cluster->name()}, {"nodes", nodes_used}, {"gpus_per_node", cluster->gpus_per_node()},
                   {"op", o.op}, {"gpus", o.gpus}, {"fidelity", o.fidelity}, {"data_type", "float"},
                   {"calibration", o.calibration.empty() ? Json(nullptr) : Json(o.calibration)}};
    Json prov = Json::object();
    for (const auto& [k, v] : sources) prov[k] = *v;
    header["parameters"] = prov;
    Json jrows = Json::array();
    for (const Row& r : rows) {
      Json j = {{"bytes", static_cast<std::int64_t>(r.bytes)},
                {"count", static_cast<std::int64_t>(r.count)},
                {"time_us", round3(r.r.time.value * 1e6)},
                {"algbw_GBps", round3(to_GBps(r.r.algbw))}, {"busbw_GBps", round3(to_GBps(r.r.busbw))},
                {"algorithm", alg_name(r)}, {"protocol", proto_name(r)}, {"channels", r.r.channels},
                {"bottleneck", r.empty ? "" : r.r.bottleneck}};
      jrows.push_back(std::move(j));
    }
    print_stdout(dump_json(Json{{"header", header}, {"rows", jrows}}));
    return 0;
  }

  Table t;
  t.header = {"size", "count", "type", "redop", "root", "time_us", "algbw_GBps", "busbw_GBps", "algorithm", "protocol"};
  t.right_align = {true, true, true, true, true, true, true, true, true, true};
  for (const Row& r : rows)
    t.rows.push_back({fixed(r.bytes, 0), fixed(r.count, 0), "float", redop_of(*op), std::to_string(root),
                      fixed(r.r.time.value * 1e6, 2), fixed(to_GBps(r.r.algbw), 2), fixed(to_GBps(r.r.busbw), 2),
                      alg_name(r), proto_name(r)});
  if (o.format == Format::csv) {
    print_stdout(t.to_csv());
    return 0;
  }
  std::string out = "# scalescope collective: " + o.op + " on " + std::to_string(o.gpus) + " GPUs (" +
                    std::to_string(nodes_used) + " node(s) x " + std::to_string(cluster->gpus_per_node()) +
                    ") of cluster " + cluster->name() + ", " + o.fidelity + " fidelity, data type float\n";
  out += "# parameters" + (o.calibration.empty() ? std::string(" (built-in datasheet)") : " from " + o.calibration) + ":\n";
  for (const auto& [k, v] : sources) out += "#   " + k + ": " + *v + "\n";
  out += "#\n";
  // Like nccl-tests: the column header is a comment line, data lines are indented to match.
  const std::string table = t.to_text();
  std::size_t begin = 0;
  for (bool first = true; begin < table.size(); first = false) {
    const std::size_t end = table.find('\n', begin);
    out += (first ? "# " : "  ") + table.substr(begin, end - begin + 1);
    begin = end + 1;
  }
  print_stdout(out);
  return 0;
}

}  // namespace

void register_collective(CLI::App& app, Context& ctx) {
  auto opts = std::make_shared<CollectiveOptions>();
  CLI::App* sub = app.add_subcommand(
      "collective",
      "Predict NCCL collective times over a range of sizes (nccl-tests semantics: size is the whole buffer for "
      "all_gather, reduce_scatter and alltoall; busbw factors 2(n-1)/n, (n-1)/n, 1). Uses the first --gpus GPUs "
      "of the cluster.");
  sub->add_option("--cluster", opts->cluster, "Cluster: a name from topologies/ (e.g. dgx-h100-8) or a JSON file (required)");
  sub->add_option("--nodes", opts->nodes, "Number of nodes to build the cluster with (default: the file's)");
  sub->add_option("--op", opts->op, "Collective (required): " + coll_op_choices());
  sub->add_option("--gpus", opts->gpus, "Number of GPUs taking part, ranks 0..N-1 (required)");
  sub->add_option("--sizes", opts->sizes, "MIN:MAX or SIZE in bytes with K, M, G suffixes (powers of 2)")
      ->default_str("8:1G");
  sub->add_option("--step-factor", opts->step_factor, "Multiply the size by this factor per row")->default_str("2");
  sub->add_option("--calibration", opts->calibration,
                  "Collective parameters JSON (the form --print-params and `calibrate fit -o` write; fields absent "
                  "keep their datasheet values), or a calibration profile (file or name in calibrate/profiles/, e.g. "
                  "h200x4), fitted on --cluster on the fly as `scalescope calibrate fit` does");
  sub->add_option("--fidelity", opts->fidelity, "analytical (closed form) or flow (flows over the routes)")
      ->default_str("analytical");
  sub->add_option("--algorithm", opts->algorithm, "Force an algorithm: " + algorithm_choices());
  sub->add_option("--protocol", opts->protocol, "Force a protocol: " + protocol_choices());
  sub->add_flag("--print-params", opts->print_params,
                "Print the collective parameters in use (datasheet, or --calibration) as JSON and exit");
  add_format_option(sub, opts->format);
  sub->callback([opts, &ctx] { ctx.exit_code = run(*opts); });
}

}  // namespace scalescope::cli
