// Measured runs: loading, grouping into scaling curves, speedups, errors and fits (scaling.hpp).
#include "scalescope/planner/scaling.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "scalescope/planner/measured_pricing.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::planner {

std::string_view to_string(ScalingKind k) { return k == ScalingKind::strong ? "strong" : "weak"; }

Expected<MeasuredRun> load_measured_run(const std::filesystem::path& file) {
  auto doc = read_json_file(file);
  if (!doc) return doc.error();
  return measured_run_from_json(*doc, file);
}

Expected<MeasuredRun> measured_run_from_json(const Json& doc, const std::filesystem::path& file) {
  return catch_errors([&] {
    const JsonCursor c(doc, file.string());
    c.expect_object();
    if (c.get_string("schema") != "scalescope.measured/1")
      throw ErrorException(input_error(file.string(), "$.schema", "expected \"scalescope.measured/1\""));
    MeasuredRun r;
    r.file = file.string();
    r.model = models::model_from_json(c.at("model").json(), file.string() + " ($.model)").take_or_throw();
    r.plan = models::parse_plan(c.get_string("plan"), file.string() + ": $.plan").take_or_throw();
    r.cluster = c.get_string("cluster");
    r.gpus = static_cast<int>(c.at("gpus").as_int_in(1, models::kMaxPlanGpus));
    r.family = c.get_string("family");
    r.scaling = c.at("scaling").as_enum({"strong", "weak"}) == "strong" ? ScalingKind::strong : ScalingKind::weak;
    const JsonCursor step = c.at("measured").at("step_time_s");
    r.step_time_s = step.as_positive_number();
    if (r.step_time_s < 1e-6 || r.step_time_s > 1e7)  // docs/plausible-ranges.md
      step.fail("expected a measured step time from 1e-6 to 1e7 s, got " + std::to_string(r.step_time_s));
    if (r.plan.gpus() != r.gpus)
      throw ErrorException(input_error(file.string(), "$.gpus", "expected tp*cp*pp*dp of the plan (" +
                                                                    std::to_string(r.plan.gpus()) + "), got " + std::to_string(r.gpus)));
    return r;
  });
}

Expected<std::vector<MeasuredRun>> load_measured(const std::filesystem::path& file_or_dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  if (std::filesystem::is_directory(file_or_dir, ec)) {
    for (const auto& e : std::filesystem::directory_iterator(file_or_dir, ec))
      if (e.path().extension() == ".json" && e.path().filename() != kMeasuredPricingFile) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    if (files.empty()) return input_error(file_or_dir.string(), "", "expected a folder with measured-run *.json files, found none");
  } else {
    files.push_back(file_or_dir);
  }
  std::vector<MeasuredRun> runs;
  for (const auto& f : files) {
    auto r = load_measured_run(f);
    if (!r) return r.error();
    runs.push_back(std::move(r).value());
  }
  return runs;
}

namespace {

int batch_key(const MeasuredRun& r) {
  return r.scaling == ScalingKind::strong ? r.plan.gbs : r.plan.gbs / r.gpus;
}

}  // namespace

std::vector<ScalingCurve> group_curves(const std::vector<MeasuredRun>& runs) {
  using Key = std::tuple<std::string, std::string, std::string, int, int, int>;  // cluster, model, family, kind, mbs, batch
  std::map<Key, ScalingCurve> curves;
  std::map<Key, const MeasuredRun*> singles;  // family left empty in the key
  for (const auto& r : runs) {
    const int kind = static_cast<int>(r.scaling);
    if (r.family == "single" && r.gpus == 1) {
      singles[Key{r.cluster, r.model.name, "", kind, r.plan.mbs, batch_key(r)}] = &r;
      continue;
    }
    Key k{r.cluster, r.model.name, r.family, kind, r.plan.mbs, batch_key(r)};
    ScalingCurve& c = curves[k];
    c.cluster = r.cluster; c.model = r.model.name; c.family = r.family; c.scaling = r.scaling;
    c.mbs = r.plan.mbs; c.batch = batch_key(r);
    CurvePoint p;
    p.gpus = r.gpus; p.plan = r.plan; p.file = r.file; p.measured_s = r.step_time_s;
    c.points.push_back(p);
  }
  std::vector<ScalingCurve> out;
  for (auto& [k, c] : curves) {
    Key sk = k;
    std::get<2>(sk) = "";
    if (auto it = singles.find(sk); it != singles.end()) {
      const MeasuredRun& s = *it->second;
      CurvePoint p;
      p.gpus = 1; p.plan = s.plan; p.file = s.file; p.measured_s = s.step_time_s;
      c.points.push_back(p);
    }
    std::stable_sort(c.points.begin(), c.points.end(), [](const CurvePoint& a, const CurvePoint& b) { return a.gpus < b.gpus; });
    c.base_gpus = c.points.front().gpus;
    out.push_back(std::move(c));
  }
  return out;
}

void finish_curve(ScalingCurve& c) {
  if (c.points.empty()) return;
  std::stable_sort(c.points.begin(), c.points.end(), [](const CurvePoint& a, const CurvePoint& b) { return a.gpus < b.gpus; });
  const CurvePoint& base = c.points.front();
  c.base_gpus = base.gpus;
  std::vector<SpeedupPoint> meas, pred;
  for (auto& p : c.points) {
    const double rel = static_cast<double>(p.gpus) / base.gpus;
    auto speedup = [&](std::optional<double> t, std::optional<double> t0) -> std::optional<double> {
      if (!t || !t0 || *t <= 0) return std::nullopt;
      if (c.scaling == ScalingKind::strong) return *t0 / *t;
      return (static_cast<double>(p.plan.gbs) / *t) / (static_cast<double>(base.plan.gbs) / *t0);
    };
    p.measured_speedup = speedup(p.measured_s, base.measured_s);
    p.predicted_speedup = speedup(p.predicted_s, base.predicted_s);
    if (p.measured_speedup) { p.measured_efficiency = *p.measured_speedup / rel; meas.push_back({rel, *p.measured_speedup}); }
    if (p.predicted_speedup) { p.predicted_efficiency = *p.predicted_speedup / rel; pred.push_back({rel, *p.predicted_speedup}); }
    if (p.measured_s && p.predicted_s) p.error = *p.predicted_s / *p.measured_s - 1.0;
  }
  auto fit = [&](const std::vector<SpeedupPoint>& pts) {
    return c.scaling == ScalingKind::strong ? fit_amdahl(pts) : fit_gustafson(pts);
  };
  c.measured_fit = fit(meas);
  c.predicted_fit = fit(pred);
}

}  // namespace scalescope::planner
