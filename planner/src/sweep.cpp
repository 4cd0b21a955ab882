// A sweep point evaluated through the same library calls as `scalescope plan` / `simulate`, as rows.
#include "scalescope/planner/sweep.hpp"

#include <set>

#include "scalescope/planner/plan_run.hpp"
#include "scalescope/planner/report_json.hpp"

namespace scalescope::planner {

namespace {

Json base_row(const SweepSpec& s, std::size_t i) {
  Json r = Json::object();
  for (const auto& c : sweep_columns()) r[c] = nullptr;
  const SweepPoint& p = s.points[i];
  r["point"] = i;
  r["model"] = p.model;
  r["cluster"] = p.cluster;
  r["gpus"] = p.gpus;
  r["gbs"] = p.gbs;
  r["calibration"] = p.calibration;
  r["stack"] = p.stack;
  r["fixed"] = p.fixed;
  return r;
}

Json failed_row(Json r, const std::string& status, const std::string& message) {
  r["status"] = status;
  r["message"] = message;
  return r;
}

void set_plan(Json& r, const models::Plan& p) {
  r["plan"] = models::to_string(p);
  r["tp"] = p.tp;
  r["cp"] = p.cp;
  r["pp"] = p.pp;
  r["dp"] = p.dp;
  r["zero"] = p.zero;
  r["mbs"] = p.mbs;
  r["schedule"] = std::string(models::to_string(p.schedule));
  r["vpp"] = p.vpp;
  r["recompute"] = std::string(models::to_string(p.recompute));
  r["sp"] = p.sp;
}

std::vector<Json> plan_point(const SweepSpec& s, std::size_t i, const StackApply& stack) {
  const SweepPoint& pt = s.points[i];
  const SweepOptions& o = s.options;
  PlanRequest q;
  q.model = pt.model;
  q.cluster = pt.cluster;
  q.calibration = pt.calibration;
  q.fix = pt.fixed;
  q.gpus = pt.gpus;
  q.seq = o.seq;
  q.gbs = pt.gbs;
  q.top = o.top;
  q.flow_top = o.flow_top;
  q.max_mbs = o.max_mbs;
  q.max_vpp = o.max_vpp;
  q.cross_node_tp = o.allow_cross_node_tp;
  SearchOptions so;
  so.threads = 1;  // the sweep runs points in parallel
  auto run = run_plan(q, so, stack);
  if (!run) return {failed_row(base_row(s, i), "error", run.error().str())};
  if (run->result.ranked.empty()) {
    std::string why;
    for (const auto& e : run->result.explanations) why += (why.empty() ? "" : "; ") + e;
    return {failed_row(base_row(s, i), "no_plan", why)};
  }
  std::vector<Json> rows;
  for (std::size_t k = 0; k < run->result.ranked.size(); ++k) {
    const RankedPlan& p = run->result.ranked[k];
    Json r = base_row(s, i);
    r["rank"] = k + 1;
    r["status"] = "ok";
    set_plan(r, p.plan);
    r["step_time_s"] = sig(p.step_time_s);
    r["flow_step_time_s"] = p.flow_step_time_s ? Json(sig(*p.flow_step_time_s)) : Json(nullptr);
    r["tokens_per_s"] = sig(p.tokens_per_s);
    r["mfu"] = sig(p.mfu, 4);
    r["memory_GiB"] = sig(p.memory_GiB, 4);
    r["fits_memory"] = true;
    r["limiter"] = p.limiter;
    r["limiter_share"] = sig(p.limiter_share, 4);
    rows.push_back(std::move(r));
  }
  return rows;
}

Json simulate_point(const SweepSpec& s, std::size_t i, const StackApply& stack) {
  const SweepPoint& pt = s.points[i];
  const std::string gbs = "gbs=" + std::to_string(pt.gbs);
  auto plan = models::parse_plan(pt.fixed.empty() ? gbs : pt.fixed + "," + gbs, "plan");
  if (!plan) return failed_row(base_row(s, i), "error", plan.error().str());
  const int rest = plan->gpus();  // dp = 1 here
  if (pt.gpus % rest != 0)
    return failed_row(base_row(s, i), "error", std::to_string(pt.gpus) + " GPUs are not a multiple of the plan's " +
                                                   std::to_string(rest) + " GPUs per data-parallel replica");
  plan->dp = pt.gpus / rest;
  SimulateRequest q;
  q.model = pt.model;
  q.cluster = pt.cluster;
  q.plan = models::to_string(*plan);
  q.calibration = pt.calibration;
  q.fidelity = s.options.fidelity;
  auto run = run_simulate(q, stack);
  Json r = base_row(s, i);
  if (!run) return failed_row(std::move(r), "error", run.error().str());
  const models::Prediction& p = run->prediction;
  r["rank"] = 1;
  r["status"] = "ok";
  set_plan(r, *plan);
  r["step_time_s"] = sig(p.step_time_s);
  r["tokens_per_s"] = sig(p.tokens_per_s);
  r["mfu"] = sig(p.mfu, 4);
  r["memory_GiB"] = sig(p.memory.total().value / (1024.0 * 1024 * 1024), 4);
  r["fits_memory"] = p.fits_memory;
  const auto [limiter, share] = limiting_factor(p.sim.breakdown);
  r["limiter"] = limiter;
  r["limiter_share"] = sig(share, 4);
  if (!p.fits_memory) r["message"] = "does not fit in GPU memory";
  return r;
}

}  // namespace

const std::vector<std::string>& sweep_columns() {
  static const std::vector<std::string> kColumns{
      "point", "model", "cluster", "gpus", "gbs", "calibration", "stack", "fixed", "rank", "status", "plan",
      "tp", "cp", "pp", "dp", "zero", "mbs", "schedule", "vpp", "recompute", "sp", "step_time_s", "flow_step_time_s",
      "tokens_per_s", "mfu", "memory_GiB", "fits_memory", "limiter", "limiter_share", "message"};
  return kColumns;
}

std::vector<Json> evaluate_point(const SweepSpec& spec, std::size_t point, const StackTable& stacks) {
  const auto it = stacks.find(spec.points[point].stack);
  const StackApply stack = it == stacks.end() ? StackApply{} : it->second;
  if (spec.mode == SweepMode::plan) return plan_point(spec, point, stack);
  return {simulate_point(spec, point, stack)};
}

Expected<StackTable> check_sweep_inputs(const SweepSpec& spec, const StackLoader& load_stack) {
  // Each distinct value's position: its index in the product's array (first appearances come in array order)
  // or the first listed point that uses it.
  std::map<std::string, std::size_t> models, clusters, calibrations;
  std::set<std::pair<std::string, std::string>> setups;
  StackTable table;
  auto where = [&](std::size_t i, const char* key, const char* array, std::size_t k) {
    return spec.listed ? "$.points[" + std::to_string(i) + "]." + key
                       : std::string("$.") + array + "[" + std::to_string(k) + "]";
  };
  for (std::size_t i = 0; i < spec.points.size(); ++i) {
    const SweepPoint& p = spec.points[i];
    if (models.emplace(p.model, models.size()).second) {
      if (auto m = models::load_model_by_name_or_path(p.model); !m)
        return input_error(spec.file, where(i, "model", "models", models.size() - 1), m.error().str());
    }
    clusters.emplace(p.cluster, clusters.size());
    calibrations.emplace(p.calibration, calibrations.size());
    if (setups.insert({p.cluster, p.calibration}).second) {
      if (auto s = load_setup(p.cluster, {}, p.calibration); !s) {
        const bool cluster_bad = !load_cluster_by_name_or_path(p.cluster, {});
        return input_error(spec.file,
                           cluster_bad ? where(i, "cluster", "clusters", clusters[p.cluster])
                                       : where(i, "calibration", "calibrations", calibrations[p.calibration]),
                           s.error().str());
      }
    }
    if (!table.count(p.stack)) {
      auto st = load_stack ? load_stack(p.stack) : Expected<StackApply>(StackApply{});
      if (!st) return input_error(spec.file, where(i, "stack", "stacks", table.size()), st.error().str());
      table.emplace(p.stack, std::move(st).value());
    }
  }
  return table;
}

}  // namespace scalescope::planner
