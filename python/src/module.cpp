// scalescope._core: the library calls behind `scalescope simulate | plan | sweep | collective | capacity | scaling`
// for Python, returning the CLI's --format json documents as plain Python objects. The GIL is released while
// they run.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <thread>

#include "convert.hpp"
#include "stack_loader.hpp"
#include "scalescope/planner/capacity_run.hpp"
#include "scalescope/planner/collective_run.hpp"
#include "scalescope/planner/plan_run.hpp"
#include "scalescope/planner/report_json.hpp"
#include "scalescope/planner/scaling_run.hpp"
#include "scalescope/planner/simulate_run.hpp"
#include "scalescope/planner/sweep.hpp"
#include "scalescope/planner/sweep_output.hpp"
#include "scalescope/sim/trace.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace scalescope::py {

namespace {

/// The software stack through the CLI's one loader (cli/stack_loader.hpp -> framework_options.hpp): the same
/// options and the same errors (stacks are built-in names or stack profile files).
planner::StackApply stack_or_raise(Expected<planner::StackApply> s) {
  if (!s) raise(s.error());
  return std::move(s).value();
}

nb::object simulate(const std::string& model, const std::string& cluster, const std::string& plan,
                    const std::string& calibration, std::optional<int> nodes, std::optional<int> gpus,
                    const std::string& fidelity, const std::string& attention, const std::string& intra_node,
                    bool all_ranks, const std::string& framework, const std::string& host_cost,
                    std::optional<double> bandwidth_factor, const std::string& bandwidth_factor_source,
                    bool no_interference, bool strict, const std::string& trace, bool power_cap) {
  cli::FrameworkOptions fo;
  fo.framework = framework;
  fo.host_cost = host_cost;
  fo.bandwidth_factor = bandwidth_factor;
  fo.bandwidth_factor_source = bandwidth_factor_source;
  fo.no_interference = no_interference;
  const planner::StackApply stack = stack_or_raise(cli::load_stack(fo));
  planner::SimulateRequest q;
  q.model = model;
  q.cluster = cluster;
  q.plan = plan;
  q.calibration = calibration;
  q.nodes = nodes;
  q.gpus = gpus;
  q.fidelity = fidelity;
  q.attention = attention;
  q.intra_node = intra_node;
  q.all_ranks = all_ranks;
  q.strict = strict;
  q.power_cap = power_cap;
  q.record_task_times = !trace.empty();
  std::optional<Expected<planner::SimulateRun>> run;
  std::optional<Error> trace_error;
  Json j;
  {
    nb::gil_scoped_release release;
    run.emplace(planner::run_simulate(q, stack));
    if (*run && !trace.empty()) {
      const models::Prediction& p = (*run)->prediction;
      if (auto ok = write_chrome_trace(p.graph, &(*run)->setup->cluster, p.sim, trace); !ok) trace_error = ok.error();
    }
    if (*run) j = planner::simulate_json(**run);
  }
  if (!*run) raise(run->error());
  if (trace_error) raise(*trace_error);
  return to_python(j);
}

nb::object plan(const std::string& model, const std::string& cluster, int gbs, std::optional<int> gpus,
                std::optional<int> nodes, std::optional<int> seq, const std::string& calibration, const std::string& fix,
                int top, int flow_top, int max_mbs, int max_vpp, bool allow_cross_node_tp, bool exhaustive, int threads,
                const std::string& framework, nb::object progress) {
  const planner::StackApply stack = stack_or_raise(cli::load_stack_by_name(framework));
  planner::PlanRequest q;
  q.model = model;
  q.cluster = cluster;
  q.gbs = gbs;
  q.gpus = gpus;
  q.nodes = nodes;
  q.seq = seq;
  q.calibration = calibration;
  q.fix = fix;
  q.top = top;
  q.flow_top = flow_top;
  q.max_mbs = max_mbs;
  q.max_vpp = max_vpp;
  q.cross_node_tp = allow_cross_node_tp;
  q.exhaustive = exhaustive;
  Callback cb(std::move(progress));
  planner::SearchOptions so;
  so.threads = threads;
  so.progress = [&cb](long done, long total) { cb(done, total); };
  so.cancel = cb.cancel_flag();
  std::optional<Expected<planner::PlanRun>> run;
  Json j;
  {
    nb::gil_scoped_release release;
    run.emplace(planner::run_plan(q, so, stack));
    if (*run) j = planner::plan_json(**run);
  }
  cb.rethrow();
  if (!*run) raise(run->error());
  return to_python(j);
}

/// `spec_text`: the spec's JSON text; `source` names it in errors (a file name, or "<dict>").
nb::object sweep(const std::string& spec_text, const std::string& source, const std::string& output, int threads,
                 bool restart, nb::object progress) {
  auto json = parse_json_text(spec_text, source);
  if (!json) raise(json.error());
  auto spec = planner::parse_sweep_spec(*json, source);
  if (!spec) raise(spec.error());
  Callback cb(std::move(progress));
  planner::SweepRunOptions ro;
  ro.output = output;
  ro.restart = restart;
  ro.threads = threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency());
  ro.progress = [&cb](std::size_t done, std::size_t total) { cb(static_cast<long>(done), static_cast<long>(total)); };
  ro.cancel = cb.cancel_flag();
  std::optional<Expected<planner::SweepResult>> res;
  {
    nb::gil_scoped_release release;
    res.emplace(planner::run_sweep(*spec, ro, cli::load_stack_by_name));
  }
  cb.rethrow();
  if (!*res) raise(res->error());
  return to_python(Json((*res)->rows));
}

nb::object collective(const std::string& cluster, const std::string& op, int gpus, std::optional<int> nodes,
                      const std::string& sizes, int step_factor, const std::string& calibration,
                      const std::string& fidelity, const std::string& algorithm, const std::string& protocol) {
  planner::CollectiveRequest q;
  q.cluster = cluster;
  q.op = op;
  q.gpus = gpus;
  q.nodes = nodes;
  q.sizes = sizes;
  q.step_factor = step_factor;
  q.calibration = calibration;
  q.fidelity = fidelity;
  q.algorithm = algorithm;
  q.protocol = protocol;
  std::optional<Expected<planner::CollectiveRun>> run;
  Json j;
  {
    nb::gil_scoped_release release;
    run.emplace(planner::run_collective(q));
    if (*run) j = planner::collective_json(**run);
  }
  if (!*run) raise(run->error());
  return to_python(j);
}

/// `progress(done, total)` counts node counts: (i, total) before the i-th is searched, (total, total) at the end.
nb::object capacity(const std::string& model, const std::string& tokens, double days, const std::string& fabric,
                    const std::string& node, std::optional<double> price_gpu_hour, int max_nodes,
                    std::optional<int> gbs, double batch_tokens, std::optional<int> seq, const std::string& calibration,
                    const std::string& fix, int threads, nb::object progress) {
  planner::CapacityRunRequest q;
  q.model = model;
  q.tokens = tokens;
  q.days = days;
  q.fabric = fabric;
  q.node = node;
  q.price = price_gpu_hour;
  q.max_nodes = max_nodes;
  q.gbs = gbs;
  q.batch_tokens = batch_tokens;
  q.seq = seq;
  q.calibration = calibration;
  q.fix = fix;
  q.threads = threads;
  Callback cb(std::move(progress));
  q.cancel = cb.cancel_flag();
  const long total = static_cast<long>(planner::capacity_node_counts(max_nodes).size());
  long started = 0;
  std::optional<Expected<planner::CapacityRun>> run;
  Json j;
  {
    nb::gil_scoped_release release;
    run.emplace(planner::run_capacity(q, [&](int) { cb(started++, total); }));
    if (*run) {
      cb(total, total);
      j = planner::capacity_json(**run);
    }
  }
  cb.rethrow();
  if (!*run) raise(run->error());
  return to_python(j);
}

/// Returns (document, notes): the notes the CLI prints on stderr (pricing taken from the set's pricing.json, a
/// host cost that is not the set's, GPU counts without a plan), for the Python side to log.
std::pair<nb::object, std::vector<std::string>> scaling(
    const std::string& measured, const std::string& model, const std::string& cluster, const std::vector<int>& gpus,
    int gbs, const std::string& kind, const std::string& family, std::optional<std::string> calibration,
    std::optional<std::string> framework, std::optional<std::string> host_cost,
    std::optional<double> bandwidth_factor, const std::string& bandwidth_factor_source, bool no_interference,
    nb::object progress) {
  planner::ScalingRequest q;
  q.measured = measured;
  q.model = model;
  q.cluster = cluster;
  q.gpus = gpus;
  q.gbs = gbs;
  q.kind = kind;
  q.family = family;
  q.given_calibration = calibration.has_value();
  q.calibration = calibration.value_or("");
  q.given_framework = framework.has_value();
  if (framework) q.stack.framework = *framework;
  q.given_host_cost = host_cost.has_value();
  q.stack.host_cost = host_cost.value_or("");
  q.given_factor = bandwidth_factor.has_value();
  q.stack.bandwidth_factor = bandwidth_factor;
  q.stack.bandwidth_factor_source = bandwidth_factor_source;
  q.stack.no_interference = no_interference;
  std::vector<std::string> notes;
  q.note = [&notes](const std::string& n) { notes.push_back(n); };
  Callback cb(std::move(progress));
  q.cancel = cb.cancel_flag();
  std::optional<Expected<planner::ScalingRun>> run;
  Json j;
  {
    nb::gil_scoped_release release;
    run.emplace(planner::run_scaling(q, [&cb](long done, long total) { cb(done, total); }));
    if (*run) j = planner::scaling_json(**run);
  }
  cb.rethrow();
  if (!*run) raise(run->error());
  return {to_python(j), std::move(notes)};
}

nb::object model_info(const std::string& name_or_path) {
  auto m = models::load_model_by_name_or_path(name_or_path);
  if (!m) raise(m.error());
  return to_python(models::to_json(*m));
}

nb::object cluster_info(const std::string& name_or_path, std::optional<int> gpus, std::optional<int> nodes) {
  ClusterOptions co;
  co.gpus = gpus;
  co.nodes = nodes;
  auto c = load_cluster_by_name_or_path(name_or_path, co);
  if (!c) raise(c.error());
  const GpuSpec& g = c->gpu_spec();
  return to_python(Json{{"name", c->name()}, {"nodes", c->num_nodes()}, {"gpus_per_node", c->gpus_per_node()},
                        {"gpus", c->num_gpus()}, {"gpu", g.model},
                        {"gpu_memory_GiB", planner::sig(g.memory.value / (1024.0 * 1024 * 1024))}});
}

}  // namespace

}  // namespace scalescope::py

NB_MODULE(_core, m) {
  using namespace scalescope::py;
  m.doc() = "scalescope's C++ core (use the functions of the `scalescope` package, which document them)";
  m.def("simulate", &simulate, "model"_a, "cluster"_a, "plan"_a, "calibration"_a, "nodes"_a.none(), "gpus"_a.none(),
        "fidelity"_a, "attention"_a, "intra_node"_a, "all_ranks"_a, "framework"_a, "host_cost"_a,
        "memory_bandwidth_factor"_a.none(), "memory_bandwidth_factor_source"_a, "no_interference"_a, "strict"_a,
        "trace"_a, "power_cap"_a);
  m.def("plan", &plan, "model"_a, "cluster"_a, "gbs"_a, "gpus"_a.none(), "nodes"_a.none(), "seq"_a.none(),
        "calibration"_a, "fix"_a, "top"_a, "flow_top"_a, "max_mbs"_a, "max_vpp"_a, "allow_cross_node_tp"_a,
        "exhaustive"_a, "threads"_a, "framework"_a, "progress"_a.none());
  m.def("sweep", &sweep, "spec_text"_a, "source"_a, "output"_a, "threads"_a, "restart"_a, "progress"_a.none());
  m.def("collective", &collective, "cluster"_a, "op"_a, "gpus"_a, "nodes"_a.none(), "sizes"_a, "step_factor"_a,
        "calibration"_a, "fidelity"_a, "algorithm"_a, "protocol"_a);
  m.def("capacity", &capacity, "model"_a, "tokens"_a, "days"_a, "fabric"_a, "node"_a, "price_gpu_hour"_a.none(),
        "max_nodes"_a, "gbs"_a.none(), "batch_tokens"_a, "seq"_a.none(), "calibration"_a, "fix"_a, "threads"_a,
        "progress"_a.none());
  m.def("scaling", &scaling, "measured"_a, "model"_a, "cluster"_a, "gpus"_a, "gbs"_a, "scaling"_a, "plan_family"_a,
        "calibration"_a.none(), "framework"_a.none(), "host_cost"_a.none(), "memory_bandwidth_factor"_a.none(),
        "memory_bandwidth_factor_source"_a, "no_interference"_a, "progress"_a.none());
  m.def("model", &model_info, "name_or_path"_a);
  m.def("cluster", &cluster_info, "name_or_path"_a, "gpus"_a.none(), "nodes"_a.none());
  m.def("sweep_columns", [] { return to_python(scalescope::Json(scalescope::planner::sweep_columns())); });
}
