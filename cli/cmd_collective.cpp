// `scalescope collective`: predicted NCCL collective times over a size sweep, printed like
// nccl-tests (size, count, type, redop, root, time, algbw, busbw) plus algorithm and protocol.
#include <cstdio>
#include <memory>
#include <string>

#include "cli_common.hpp"
#include "scalescope/planner/collective_run.hpp"

namespace scalescope::cli {

namespace {

struct CollectiveOptions {
  planner::CollectiveRequest q;  ///< the options the prediction takes, bound to the flags below
  bool print_params = false;
  Format format = Format::text;
};

const char* redop_of(CollOp op) {
  return op == CollOp::all_reduce || op == CollOp::reduce_scatter ? "sum" : "none";
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

int run(const CollectiveOptions& o) {
  const std::string cmd = "collective";
  planner::CollectiveRequest q = o.q;
  q.params_only = o.print_params;
  auto run = planner::run_collective(q);
  if (!run) return report(cmd, run.error());
  if (o.print_params) {
    print_stdout(dump_json(to_json(run->params)));
    return 0;
  }
  if (o.format == Format::json) {
    print_stdout(dump_json(planner::collective_json(*run)));
    return 0;
  }
  const Cluster& cluster = *run->cluster;
  const int root = run->op == CollOp::broadcast ? 0 : -1;
  Table t;
  t.header = {"size", "count", "type", "redop", "root", "time_us", "algbw_GBps", "busbw_GBps", "algorithm", "protocol"};
  t.right_align = {true, true, true, true, true, true, true, true, true, true};
  for (const planner::CollectiveRow& r : run->rows)
    t.rows.push_back({fixed(r.bytes, 0), fixed(r.count, 0), "float", redop_of(run->op), std::to_string(root),
                      fixed(r.result.time.value * 1e6, 2), fixed(to_GBps(r.result.algbw), 2),
                      fixed(to_GBps(r.result.busbw), 2), planner::row_algorithm(r), planner::row_protocol(r)});
  if (o.format == Format::csv) {
    print_stdout(t.to_csv());
    return 0;
  }
  std::string out = "# scalescope collective: " + q.op + " on " + std::to_string(q.gpus) + " GPUs (" +
                    std::to_string(run->nodes_used) + " node(s) x " + std::to_string(cluster.gpus_per_node()) +
                    ") of cluster " + cluster.name() + ", " + q.fidelity + " fidelity, data type float\n";
  out += "# parameters" + (q.calibration.empty() ? std::string(" (built-in datasheet)") : " from " + q.calibration) + ":\n";
  for (const auto& [k, v] : planner::collective_parameter_sources(run->params)) out += "#   " + k + ": " + v + "\n";
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
  sub->add_option("--cluster", opts->q.cluster, "Cluster: a name from topologies/ (e.g. dgx-h100-8) or a JSON file (required)");
  sub->add_option("--nodes", opts->q.nodes, "Number of nodes to build the cluster with (default: the file's)");
  sub->add_option("--op", opts->q.op, "Collective (required): " + coll_op_choices());
  sub->add_option("--gpus", opts->q.gpus, "Number of GPUs taking part, ranks 0..N-1 (required)");
  sub->add_option("--sizes", opts->q.sizes, "MIN:MAX or SIZE in bytes with K, M, G suffixes (powers of 2)")
      ->default_str("8:1G");
  sub->add_option("--step-factor", opts->q.step_factor, "Multiply the size by this factor per row")->default_str("2");
  sub->add_option("--calibration", opts->q.calibration,
                  "Collective parameters JSON (the form --print-params and `calibrate fit -o` write; fields absent "
                  "keep their datasheet values), or a calibration profile (file or name in calibrate/profiles/, e.g. "
                  "h200x4), fitted on --cluster on the fly as `scalescope calibrate fit` does");
  sub->add_option("--fidelity", opts->q.fidelity, "analytical (closed form) or flow (flows over the routes)")
      ->default_str("analytical");
  sub->add_option("--algorithm", opts->q.algorithm, "Force an algorithm: " + algorithm_choices());
  sub->add_option("--protocol", opts->q.protocol, "Force a protocol: " + protocol_choices());
  sub->add_flag("--print-params", opts->print_params,
                "Print the collective parameters in use (datasheet, or --calibration) as JSON and exit");
  add_format_option(sub, opts->format);
  sub->callback([opts, &ctx] { ctx.exit_code = run(*opts); });
}

}  // namespace scalescope::cli
