// `scalescope scaling` as a library call: measured curves priced as their set records, or predicted curves
// of the best plan (or a plan family) per GPU count, and the JSON report.
#include "scalescope/planner/scaling_run.hpp"

#include <map>
#include <memory>
#include <optional>

#include "scalescope/planner/measured_pricing.hpp"
#include "scalescope/planner/report_json.hpp"
#include "scalescope/planner/search.hpp"
#include "scalescope/planner/setup.hpp"

namespace scalescope::planner {

namespace {

Expected<bool> check_cancel(const ScalingRequest& o) {
  if (o.cancel != nullptr && o.cancel->load()) return runtime_error("scaling cancelled");
  return true;
}

void note(const ScalingRequest& o, const std::string& text) {
  if (o.note) o.note(text);
}

/// Fills the pricing options the request left out from the measured set's record, and notes when a given
/// host cost is not the one measured with the set (host speed differs between machines).
Expected<ScalingRequest> with_measured_pricing(ScalingRequest o) {
  auto rec = load_measured_pricing(o.measured);
  if (!rec) return rec.error();
  if (!*rec) return o;
  const MeasuredPricing& p = **rec;
  std::string used;
  auto take = [&](bool given, std::string& option, const std::string& recorded, const char* name) {
    if (given || recorded.empty()) return;
    option = recorded;
    used += std::string(used.empty() ? "" : ", ") + name + " " + recorded;
  };
  take(o.given_calibration, o.calibration, p.calibration, "--calibration");
  take(o.given_framework, o.stack.framework, p.framework, "--framework");
  take(o.given_host_cost, o.stack.host_cost, p.host_cost, "--host-cost");
  if (!o.given_factor && p.eager_factor) {
    o.stack.bandwidth_factor = *p.eager_factor;
    o.stack.bandwidth_factor_source = p.eager_factor_source;
    used += std::string(used.empty() ? "" : ", ") + "--eager-bandwidth-factor " + std::to_string(*p.eager_factor);
  }
  if (!used.empty()) note(o, "priced as " + p.file + " records: " + used);
  if (o.given_host_cost && !o.stack.host_cost.empty() && !p.host_cost.empty() && !same_file(o.stack.host_cost, p.host_cost))
    note(o, "warning: --host-cost " + o.stack.host_cost + " is not the host cost measured with these runs (" +
                p.host_cost + ", recorded in " + p.file +
                "): host speed differs between machines of one kind by up to 1.8x, so host-bound points are priced "
                "for another machine");
  return o;
}

/// Predicts every point of the curves (one setup per (cluster, GPU count)).
Expected<bool> predict_points(std::vector<ScalingCurve>& curves, const std::vector<MeasuredRun>& runs,
                              const ScalingRequest& o, const FrameworkSetup& framework,
                              const std::function<void(long, long)>& progress) {
  std::map<std::string, const models::ModelSpec*> model_of_file;
  for (const auto& r : runs) model_of_file[r.file] = &r.model;
  long total = 0, done = 0;
  for (const auto& c : curves) total += static_cast<long>(c.points.size());
  std::map<std::pair<std::string, int>, std::unique_ptr<EvalSetup>> setups;
  for (auto& c : curves) {
    for (auto& p : c.points) {
      if (auto ok = check_cancel(o); !ok) return ok.error();
      auto key = std::make_pair(c.cluster, p.gpus);
      if (!setups.count(key)) {
        ClusterOptions co;
        co.gpus = p.gpus;
        auto s = load_setup(c.cluster, co, o.calibration);
        if (!s) return s.error();
        setups[key] = std::move(s).value();
        framework.apply(setups[key]->compute);
      }
      const EvalSetup& s = *setups[key];
      auto pred = evaluate(*model_of_file[p.file], p.plan, s.cluster, s.compute, s.collectives, Fidelity::analytical);
      if (!pred) return Error{pred.error().kind, p.file, pred.error().path, pred.error().message};
      p.predicted_s = pred->step_time_s;
      if (progress) progress(++done, total);
    }
    finish_curve(c);
  }
  return true;
}

/// Predicted-only curves: the best plan (or the given family template) at each GPU count.
Expected<ScalingCurve> predict_curve(const ScalingRequest& o, const std::function<void(long, long)>& progress) {
  auto model = models::load_model_by_name_or_path(o.model);
  if (!model) return model.error();
  std::optional<PlanFilter> fam;
  if (o.family != "best") {
    auto f = parse_plan_filter(o.family, "--plan-family");
    if (!f) return f.error();
    fam = *f;
  }
  ScalingCurve c;
  c.model = model->name;
  c.cluster = o.cluster;
  c.family = o.family;
  c.scaling = o.kind == "weak" ? ScalingKind::weak : ScalingKind::strong;
  c.batch = o.gbs;
  const long total = static_cast<long>(o.gpus.size());
  long done = 0;
  for (int n : o.gpus) {
    if (auto ok = check_cancel(o); !ok) return ok.error();
    ClusterOptions co;
    co.gpus = n;
    auto s = load_setup(o.cluster, co, o.calibration);
    if (!s) return s.error();
    auto fw = load_framework_setup(o.stack);
    if (!fw) return fw.error();
    fw->apply((*s)->compute);
    SearchSpace sp;
    sp.gpus = n;
    sp.gbs = c.scaling == ScalingKind::strong ? o.gbs : o.gbs * n / o.gpus.front();
    if (fam) sp.fix = *fam;
    SearchOptions so;
    so.top = 1;
    so.flow_top = 0;
    so.cancel = o.cancel;
    auto r = search(*model, (*s)->cluster, (*s)->collectives, (*s)->compute, sp, so);
    if (!r) return r.error();
    if (progress) progress(++done, total);
    CurvePoint p;
    p.gpus = n;
    if (r->ranked.empty()) {
      note(o, "no plan on " + std::to_string(n) + " GPUs: " + r->explanations.front());
      continue;
    }
    p.plan = r->ranked.front().plan;
    p.predicted_s = r->ranked.front().step_time_s;
    c.points.push_back(p);
  }
  if (c.points.empty()) return runtime_error("no GPU count has a plan that can run");
  finish_curve(c);
  return c;
}

Json fit_json(const std::optional<ScalingFit>& f) {
  if (!f) return nullptr;
  return Json{{"serial_fraction", sig(f->serial_fraction, 4)}, {"r2", sig(f->r2, 4)}, {"points", f->points}};
}

}  // namespace

Expected<ScalingRun> run_scaling(const ScalingRequest& given, const std::function<void(long, long)>& progress) {
  ScalingRun run;
  if (!given.measured.empty()) {
    auto priced = with_measured_pricing(given);
    if (!priced) return priced.error();
    const ScalingRequest& o = *priced;
    if (!o.model.empty() || !o.gpus.empty())
      return input_error("", "--measured", "--measured takes its models and GPU counts from the files; drop --model / --gpus");
    auto runs = load_measured(o.measured);
    if (!runs) return runs.error();
    run.curves = group_curves(*runs);
    if (run.curves.empty()) return input_error(o.measured, "", "no scaling curve (only single-GPU runs?)");
    auto fw = load_framework_setup(o.stack);
    if (!fw) return fw.error();
    auto ok = predict_points(run.curves, *runs, o, *fw, progress);
    if (!ok) return ok.error();
    return run;
  }
  const ScalingRequest& o = given;
  if (o.model.empty()) return input_error("", "--model", "give --measured FILE|DIR, or --model, --cluster, --gpus and --gbs");
  if (o.cluster.empty()) return input_error("", "--cluster", "a cluster name or file is required");
  if (o.gpus.empty()) return input_error("", "--gpus", "a list of GPU counts is required, e.g. 8,16,32");
  for (int n : o.gpus)
    if (n <= 0) return input_error("", "--gpus", "expected positive GPU counts");
  if (o.gbs <= 0) return input_error("", "--gbs", "expected a positive global batch size");
  if (o.kind != "strong" && o.kind != "weak")
    return input_error("", "--scaling", "expected strong | weak, got '" + o.kind + "'");
  auto c = predict_curve(o, progress);
  if (!c) return c.error();
  run.curves.push_back(std::move(c).value());
  return run;
}

Json scaling_json(const ScalingRun& run) {
  Json arr = Json::array();
  for (const auto& c : run.curves) {
    Json pts = Json::array();
    for (const auto& p : c.points) {
      pts.push_back({{"gpus", p.gpus}, {"plan", models::to_string(p.plan)}, {"file", p.file},
                     {"measured_s", opt_json(p.measured_s)}, {"predicted_s", opt_json(p.predicted_s)},
                     {"measured_speedup", opt_json(p.measured_speedup, 4)},
                     {"predicted_speedup", opt_json(p.predicted_speedup, 4)},
                     {"measured_efficiency", opt_json(p.measured_efficiency, 4)},
                     {"predicted_efficiency", opt_json(p.predicted_efficiency, 4)}, {"error", opt_json(p.error, 4)}});
    }
    const bool strong = c.scaling == ScalingKind::strong;
    arr.push_back({{"cluster", c.cluster}, {"model", c.model}, {"family", c.family},
                   {"scaling", std::string(to_string(c.scaling))}, {"mbs", c.mbs},
                   {strong ? "gbs" : "gbs_per_gpu", c.batch}, {"base_gpus", c.base_gpus},
                   {"fit", strong ? "amdahl" : "gustafson"}, {"measured_fit", fit_json(c.measured_fit)},
                   {"predicted_fit", fit_json(c.predicted_fit)}, {"points", pts}});
  }
  return Json{{"curves", arr}};
}

}  // namespace scalescope::planner
