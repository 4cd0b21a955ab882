// `scalescope scaling`: measured vs predicted strong / weak scaling curves with Amdahl / Gustafson
// fits, or predicted curves alone for a model, cluster and list of GPU counts.
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "cli_common.hpp"
#include "framework_options.hpp"
#include "planner_format.hpp"
#include "scalescope/planner/measured_pricing.hpp"
#include "scalescope/planner/scaling.hpp"
#include "scalescope/planner/search.hpp"
#include "scalescope/planner/setup.hpp"

namespace scalescope::cli {

namespace {

using namespace plan_fmt;

struct ScalingOptions {
  std::string measured, calibration, model, cluster, family = "best", kind = "strong";
  FrameworkOptions stack;
  std::vector<int> gpus;
  int gbs = 0;
  Format format = Format::text;
  // Which of the pricing options were given (the others come from the measured set's pricing.json).
  bool given_calibration = false, given_framework = false, given_factor = false, given_host_cost = false;
};

/// Fills the pricing options the command line left out from the measured set's record, and warns when
/// a given host cost is not the one measured with the set (host speed differs between machines).
Expected<ScalingOptions> with_measured_pricing(ScalingOptions o) {
  auto rec = planner::load_measured_pricing(o.measured);
  if (!rec) return rec.error();
  if (!*rec) return o;
  const planner::MeasuredPricing& p = **rec;
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
  if (!used.empty()) std::fprintf(stderr, "scalescope scaling: priced as %s records: %s\n", p.file.c_str(), used.c_str());
  if (o.given_host_cost && !o.stack.host_cost.empty() && !p.host_cost.empty() &&
      !planner::same_file(o.stack.host_cost, p.host_cost))
    std::fprintf(stderr,
                 "scalescope scaling: warning: --host-cost %s is not the host cost measured with these runs (%s, "
                 "recorded in %s): host speed differs between machines of one kind by up to 1.8x, so host-bound "
                 "points are priced for another machine\n",
                 o.stack.host_cost.c_str(), p.host_cost.c_str(), p.file.c_str());
  return o;
}

/// Predicts every point of the curves (one setup per (cluster, GPU count)).
Expected<bool> predict_points(std::vector<planner::ScalingCurve>& curves, const std::vector<planner::MeasuredRun>& runs,
                              const std::string& calibration, const FrameworkSetup& framework) {
  std::map<std::string, const models::ModelSpec*> model_of_file;
  for (const auto& r : runs) model_of_file[r.file] = &r.model;
  std::map<std::pair<std::string, int>, std::unique_ptr<planner::EvalSetup>> setups;
  for (auto& c : curves) {
    for (auto& p : c.points) {
      auto key = std::make_pair(c.cluster, p.gpus);
      if (!setups.count(key)) {
        ClusterOptions co;
        co.gpus = p.gpus;
        auto s = planner::load_setup(c.cluster, co, calibration);
        if (!s) return s.error();
        setups[key] = std::move(s).value();
        framework.apply(setups[key]->compute);
      }
      const planner::EvalSetup& s = *setups[key];
      auto pred = planner::evaluate(*model_of_file[p.file], p.plan, s.cluster, s.compute, s.collectives, Fidelity::analytical);
      if (!pred) return Error{pred.error().kind, p.file, pred.error().path, pred.error().message};
      p.predicted_s = pred->step_time_s;
    }
    planner::finish_curve(c);
  }
  return true;
}

/// Predicted-only curves: the best plan (or the given family template) at each GPU count.
Expected<planner::ScalingCurve> predict_curve(const ScalingOptions& o) {
  auto model = models::load_model_by_name_or_path(o.model);
  if (!model) return model.error();
  std::optional<planner::PlanFilter> fam;
  if (o.family != "best") {
    auto f = planner::parse_plan_filter(o.family, "--plan-family");
    if (!f) return f.error();
    fam = *f;
  }
  planner::ScalingCurve c;
  c.model = model->name;
  c.cluster = o.cluster;
  c.family = o.family;
  c.scaling = o.kind == "weak" ? planner::ScalingKind::weak : planner::ScalingKind::strong;
  c.batch = o.gbs;
  for (int n : o.gpus) {
    ClusterOptions co;
    co.gpus = n;
    auto s = planner::load_setup(o.cluster, co, o.calibration);
    if (!s) return s.error();
    auto fw = load_framework_setup(o.stack);
    if (!fw) return fw.error();
    fw->apply((*s)->compute);
    planner::SearchSpace sp;
    sp.gpus = n;
    sp.gbs = c.scaling == planner::ScalingKind::strong ? o.gbs : o.gbs * n / o.gpus.front();
    if (fam) sp.fix = *fam;
    planner::SearchOptions so;
    so.top = 1;
    so.flow_top = 0;
    auto r = planner::search(*model, (*s)->cluster, (*s)->collectives, (*s)->compute, sp, so);
    if (!r) return r.error();
    planner::CurvePoint p;
    p.gpus = n;
    if (r->ranked.empty()) {
      std::fprintf(stderr, "scalescope scaling: no plan on %d GPUs: %s\n", n, r->explanations.front().c_str());
      continue;
    }
    p.plan = r->ranked.front().plan;
    p.predicted_s = r->ranked.front().step_time_s;
    c.points.push_back(p);
  }
  if (c.points.empty()) return runtime_error("no GPU count has a plan that can run");
  planner::finish_curve(c);
  return c;
}

std::string fit_text(const std::optional<planner::ScalingFit>& f) {
  if (!f) return "-";
  return "s=" + fixed(f->serial_fraction, 4) + " R2=" + fixed(f->r2, 3);
}
Json fit_json(const std::optional<planner::ScalingFit>& f) {
  if (!f) return nullptr;
  return Json{{"serial_fraction", sig(f->serial_fraction, 4)}, {"r2", sig(f->r2, 4)}, {"points", f->points}};
}

int print_curves(const std::vector<planner::ScalingCurve>& curves, Format format) {
  if (format == Format::json) {
    Json arr = Json::array();
    for (const auto& c : curves) {
      Json pts = Json::array();
      for (const auto& p : c.points) {
        pts.push_back({{"gpus", p.gpus}, {"plan", models::to_string(p.plan)}, {"file", p.file},
                       {"measured_s", opt_json(p.measured_s)}, {"predicted_s", opt_json(p.predicted_s)},
                       {"measured_speedup", opt_json(p.measured_speedup, 4)}, {"predicted_speedup", opt_json(p.predicted_speedup, 4)},
                       {"measured_efficiency", opt_json(p.measured_efficiency, 4)},
                       {"predicted_efficiency", opt_json(p.predicted_efficiency, 4)}, {"error", opt_json(p.error, 4)}});
      }
      arr.push_back({{"cluster", c.cluster}, {"model", c.model}, {"family", c.family},
                     {"scaling", std::string(planner::to_string(c.scaling))}, {"mbs", c.mbs},
                     {c.scaling == planner::ScalingKind::strong ? "gbs" : "gbs_per_gpu", c.batch},
                     {"base_gpus", c.base_gpus},
                     {"fit", c.scaling == planner::ScalingKind::strong ? "amdahl" : "gustafson"},
                     {"measured_fit", fit_json(c.measured_fit)}, {"predicted_fit", fit_json(c.predicted_fit)},
                     {"points", pts}});
    }
    print_stdout(dump_json(Json{{"curves", arr}}));
    return 0;
  }
  Table t;
  t.header = {"curve", "scaling", "gpus", "measured_s", "predicted_s", "error", "meas_speedup", "pred_speedup",
              "meas_eff", "pred_eff"};
  t.right_align = {false, false, true, true, true, true, true, true, true, true};
  std::string fits;
  for (const auto& c : curves) {
    const std::string name = c.cluster + "/" + c.model + "/" + c.family + "/mbs" + std::to_string(c.mbs) +
                             (c.scaling == planner::ScalingKind::strong ? "/gbs" : "/gbs-per-gpu") + std::to_string(c.batch);
    for (const auto& p : c.points) {
      t.rows.push_back({name, std::string(planner::to_string(c.scaling)), std::to_string(p.gpus), opt_text(p.measured_s, 4),
                        opt_text(p.predicted_s, 4), p.error ? fixed(100 * *p.error, 1) + (format == Format::csv ? "" : " %") : "-",
                        opt_text(p.measured_speedup, 3), opt_text(p.predicted_speedup, 3), opt_text(p.measured_efficiency, 3),
                        opt_text(p.predicted_efficiency, 3)});
    }
    fits += "  " + name + " (" + (c.scaling == planner::ScalingKind::strong ? "Amdahl" : "Gustafson") +
            ", base " + std::to_string(c.base_gpus) + " GPU(s)): measured " + fit_text(c.measured_fit) + "; predicted " +
            fit_text(c.predicted_fit) + "\n";
  }
  if (format == Format::csv) {
    print_stdout(t.to_csv());
    return 0;
  }
  print_stdout(t.to_text() + "\nserial fractions (strong: Amdahl S = 1/(s + (1-s)/n); weak: Gustafson S = n - s(n-1); "
                             "n relative to the base):\n" + fits);
  return 0;
}

int run(const ScalingOptions& given) {
  const std::string cmd = "scaling";
  if (!given.measured.empty()) {
    auto priced = with_measured_pricing(given);
    if (!priced) return report(cmd, priced.error());
    const ScalingOptions& o = *priced;
    if (!o.model.empty() || !o.gpus.empty())
      return report(cmd, input_error("", "--measured", "--measured takes its models and GPU counts from the files; drop --model / --gpus"));
    auto runs = planner::load_measured(o.measured);
    if (!runs) return report(cmd, runs.error());
    auto curves = planner::group_curves(*runs);
    if (curves.empty()) return report(cmd, input_error(o.measured, "", "no scaling curve (only single-GPU runs?)"));
    auto fw = load_framework_setup(o.stack);
    if (!fw) return report(cmd, fw.error());
    auto ok = predict_points(curves, *runs, o.calibration, *fw);
    if (!ok) return report(cmd, ok.error());
    return print_curves(curves, o.format);
  }
  const ScalingOptions& o = given;
  if (o.model.empty()) return report(cmd, input_error("", "--model", "give --measured FILE|DIR, or --model, --cluster, --gpus and --gbs"));
  if (o.cluster.empty()) return report(cmd, input_error("", "--cluster", "a cluster name or file is required"));
  if (o.gpus.empty()) return report(cmd, input_error("", "--gpus", "a list of GPU counts is required, e.g. 8,16,32"));
  for (int n : o.gpus)
    if (n <= 0) return report(cmd, input_error("", "--gpus", "expected positive GPU counts"));
  if (o.gbs <= 0) return report(cmd, input_error("", "--gbs", "expected a positive global batch size"));
  if (o.kind != "strong" && o.kind != "weak")
    return report(cmd, input_error("", "--scaling", "expected strong | weak, got '" + o.kind + "'"));
  auto c = predict_curve(o);
  if (!c) return report(cmd, c.error());
  return print_curves({*c}, o.format);
}

}  // namespace

void register_scaling(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<ScalingOptions>();
  CLI::App* sub = app.add_subcommand(
      "scaling",
      "Scaling curves. With --measured: measured runs (scalescope.measured/1 files) grouped per plan family and "
      "scaling kind, each point predicted, with speedup, efficiency, error and Amdahl (strong) / Gustafson (weak) "
      "serial fractions of the measured and predicted curves. Without: predicted curves for --model on --cluster over "
      "--gpus (speedups relative to the first count).");
  sub->add_option("--measured", o->measured,
                  "A measured-run file or a folder of them (e.g. validation/h200x4/measured). The set's pricing.json "
                  "(docs/measured-format.md) supplies --calibration, --framework, --eager-bandwidth-factor and "
                  "--host-cost where they are not given; a --host-cost other than the set's own is warned about");
  sub->add_option("--calibration", o->calibration, "Calibration profile or collective-parameters JSON (as for `simulate`)");
  add_framework_options(sub, o->stack);
  sub->add_option("--model", o->model, "Model (predicted curves)");
  sub->add_option("--cluster", o->cluster, "Cluster name or file (predicted curves)");
  sub->add_option("--gpus", o->gpus, "GPU counts, e.g. 8,16,32 (predicted curves)")->delimiter(',');
  sub->add_option("--gbs", o->gbs, "Global batch at the first GPU count (strong: fixed; weak: scaled with the GPUs)");
  sub->add_option("--scaling", o->kind, "strong (fixed global batch) or weak (fixed per-GPU batch)")->default_str("strong");
  sub->add_option("--plan-family", o->family,
                  "best (the planner's best plan at each count) or fixed fields such as \"tp=8,pp=1,zero=1,mbs=1\" "
                  "(dp follows from the GPU count)")
      ->default_str("best");
  add_format_option(sub, o->format);
  sub->callback([o, sub, &ctx] {
    o->given_calibration = sub->count("--calibration") > 0;
    o->given_framework = sub->count("--framework") > 0;
    o->given_factor = sub->count("--eager-bandwidth-factor") > 0;
    o->given_host_cost = sub->count("--host-cost") > 0;
    ctx.exit_code = run(*o);
  });
}

}  // namespace scalescope::cli
