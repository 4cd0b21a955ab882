// `scalescope capacity` as a library call: request checks, the node-count search and the JSON report.
#include "scalescope/planner/capacity_run.hpp"

#include <algorithm>
#include <cmath>

#include "scalescope/planner/report_json.hpp"
#include "scalescope/planner/setup.hpp"

namespace scalescope::planner {

namespace {

/// The fabric names the cluster file (node template + fabric); the node, when given, must be the node that
/// file is built from (same GPU model and GPUs per node), or is used alone without a fabric.
Expected<std::string> resolve_cluster(const CapacityRunRequest& o) {
  if (o.fabric.empty() && o.node.empty())
    return input_error("", "--fabric", "give --fabric (a multi-node cluster file such as h100-rail-ndr) and/or --node");
  if (o.fabric.empty()) return o.node;
  if (!o.node.empty()) {
    ClusterOptions one;
    one.nodes = 1;
    auto n = load_cluster_by_name_or_path(o.node, one);
    if (!n) return n.error();
    auto f = load_cluster_by_name_or_path(o.fabric, one);
    if (!f) return f.error();
    if (n->gpu_spec().model != f->gpu_spec().model || n->gpus_per_node() != f->gpus_per_node())
      return input_error("", "--node", "node '" + o.node + "' (" + std::to_string(n->gpus_per_node()) + " x " +
                                           n->gpu_spec().model + ") is not the node of fabric '" + o.fabric + "' (" +
                                           std::to_string(f->gpus_per_node()) + " x " + f->gpu_spec().model + ")");
  }
  return o.fabric;
}

Json fit_json(const std::optional<ScalingFit>& f) {
  if (!f) return nullptr;
  return Json{{"serial_fraction", sig(f->serial_fraction, 4)}, {"r2", sig(f->r2, 4)}};
}

}  // namespace

std::optional<double> parse_count(const std::string& s) {
  if (s.empty()) return std::nullopt;
  double mult = 1;
  std::string num = s;
  switch (s.back()) {
    case 'k': case 'K': mult = 1e3; break;
    case 'M': mult = 1e6; break;
    case 'B': case 'G': mult = 1e9; break;
    case 'T': mult = 1e12; break;
    default: break;
  }
  if (mult != 1) num.pop_back();
  try {
    std::size_t used = 0;
    const double v = std::stod(num, &used);
    if (used != num.size() || !(v > 0) || !std::isfinite(v)) return std::nullopt;
    return v * mult;
  } catch (...) {
    return std::nullopt;
  }
}

Expected<CapacityRun> run_capacity(const CapacityRunRequest& o, const std::function<void(int)>& progress) {
  if (o.model.empty()) return input_error("", "--model", "a model name or file is required");
  auto tokens = parse_count(o.tokens);
  if (!tokens)
    return input_error("", "--tokens", "expected a positive count such as 15T, 300B or 2e12, got '" + o.tokens + "'");
  if (!(o.days > 0)) return input_error("", "--days", "expected a positive number of days");
  CapacityRun run;
  run.request = o;
  run.tokens = *tokens;
  auto model = load_model_at_seq(o.model, o.seq);
  if (!model) return model.error();
  run.model = std::move(model).value();
  auto cluster = resolve_cluster(o);
  if (!cluster) return cluster.error();
  CapacityRequest& rq = run.search;
  rq.tokens = *tokens;
  rq.days = o.days;
  rq.price_per_gpu_hour = o.price.value_or(2.5);
  rq.max_nodes = o.max_nodes;
  rq.gbs = o.gbs.value_or(std::max(1, static_cast<int>(o.batch_tokens / run.model.seq_len)));
  rq.cluster = *cluster;
  rq.calibration = o.calibration;
  rq.threads = o.threads;
  rq.cancel = o.cancel;
  if (!o.fix.empty()) {
    auto f = parse_plan_filter(o.fix);
    if (!f) return f.error();
    rq.space.fix = *f;
  }
  auto res = plan_capacity(run.model, rq, progress);
  if (!res) return res.error();
  run.result = std::move(res).value();
  return run;
}

Json capacity_json(const CapacityRun& run) {
  const CapacityResult& r = run.result;
  const CapacityRequest& rq = run.search;
  Json curve = Json::array();
  for (const auto& p : r.curve) {
    Json j = {{"nodes", p.nodes}, {"gpus", p.gpus}};
    if (p.best) {
      j["best"] = ranked_json(*p.best);
      j["days"] = sig(p.days_needed, 4);
      j["cost_usd"] = sig(p.cost_usd, 4);
      j["speedup"] = opt_json(p.speedup, 4);
      j["efficiency"] = opt_json(p.efficiency, 4);
    } else {
      j["best"] = nullptr;
      j["why_none"] = p.why_none;
    }
    curve.push_back(j);
  }
  return Json{{"model", run.model.name},
              {"seq_len", run.model.seq_len},
              {"cluster", rq.cluster},
              {"tokens", run.tokens},
              {"days", run.request.days},
              {"gbs", rq.gbs},
              {"price_per_gpu_hour", rq.price_per_gpu_hour},
              {"price_assumed", !run.request.price},
              {"chosen_nodes", r.chosen ? Json(r.curve[*r.chosen].nodes) : Json(nullptr)},
              {"base_nodes", r.base_nodes},
              {"amdahl", fit_json(r.amdahl)},
              {"gustafson", fit_json(r.gustafson)},
              {"curve", curve}};
}

}  // namespace scalescope::planner
