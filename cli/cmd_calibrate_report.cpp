// `scalescope calibrate report`: measured vs predicted busbw per op, group size and size, median
// absolute errors (in-sample, or out-of-sample with --fit-profile / --fit-groups), GEMM held-back error.
#include <algorithm>
#include <map>

#include "calibrate_common.hpp"

namespace scalescope::cli {

namespace {

struct ReportCmd {
  CalibrateCommon common;
  std::string fit_profile;
  std::vector<int> report_groups;
  bool summary = false;
};

constexpr double kMinBytes = 1024.0;  // errors are summarised over sizes >= 1 KiB

struct GroupSummary {
  std::string op;
  int n = 0;
  int rows = 0;
  bool fitted = false;
  std::vector<double> errors;
};

std::string pct(double v) { return fmt_fixed(100.0 * v, 1); }

int run_report(const ReportCmd& o) {
  const std::string cmd = "calibrate report";
  auto fopt = fit_options(o.common);
  if (!fopt) return report(cmd, fopt.error());
  auto loaded = load_profile_and_cluster(o.common.profile, o.common);
  if (!loaded) return report(cmd, loaded.error());
  const calib::Profile& profile = loaded->profile;
  calib::Profile fit_on = profile;
  if (!o.fit_profile.empty()) {
    auto other = calib::load_profile_by_name_or_path(o.fit_profile);
    if (!other) return report(cmd, other.error());
    fit_on = std::move(other).value();
    if (!o.common.nodes && calib::nodes_needed(fit_on, loaded->cluster->gpus_per_node()) > loaded->cluster->num_nodes()) {
      CalibrateCommon c = o.common;
      c.nodes = calib::nodes_needed(fit_on, loaded->cluster->gpus_per_node());
      auto again = load_profile_and_cluster(o.common.profile, c);
      if (!again) return report(cmd, again.error());
      loaded->cluster.emplace(std::move(*again->cluster));
    }
  }
  const Cluster& cluster = *loaded->cluster;
  auto fit = calib::fit_collective_params(fit_on, cluster, *fopt);
  if (!fit) return report(cmd, fit.error());
  auto rows = calib::collective_residuals(profile, cluster, fit->params, *fopt);
  const bool other_profile = !o.fit_profile.empty();
  if (other_profile)
    for (auto& r : rows) r.in_fit = false;
  if (!o.report_groups.empty())
    std::erase_if(rows, [&](const calib::RowResidual& r) {
      return std::find(o.report_groups.begin(), o.report_groups.end(), r.nranks) == o.report_groups.end();
    });

  // Summaries over sizes >= 1 KiB.
  std::vector<GroupSummary> groups;
  std::vector<double> all, fitted, held;
  for (const auto& r : rows) {
    if (r.bytes < kMinBytes) continue;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const GroupSummary& g) { return g.op == r.op && g.n == r.nranks; });
    if (it == groups.end()) {
      groups.push_back({r.op, r.nranks, 0, r.in_fit, {}});
      it = groups.end() - 1;
    }
    ++it->rows;
    it->errors.push_back(r.error());
    all.push_back(r.error());
    (r.in_fit ? fitted : held).push_back(r.error());
  }
  std::optional<calib::GemmCheck> gemm;
  std::string gemm_note;
  if (!profile.gemm.empty()) {
    auto g = calib::validate_gemm_interpolation(profile, cluster.gpu_spec());
    if (g) gemm = std::move(g).value();
    else gemm_note = g.error().str();
  } else {
    gemm_note = "the profile has no GEMM rows";
  }
  const std::string sample = other_profile ? "out-of-sample (parameters fitted on " + o.fit_profile + ")"
                             : fopt->groups.empty() && fopt->ops.empty() ? "in-sample (parameters fitted on this profile)"
                                                                         : "parameters fitted on this profile's selected rows";

  if (o.common.format == Format::json) {
    Json jrows = Json::array();
    for (const auto& r : rows)
      jrows.push_back({{"op", r.op}, {"nranks", r.nranks}, {"bytes", r.bytes}, {"measured_us", r.measured_us},
                       {"predicted_us", r.predicted_us}, {"measured_busbw_GBps", r.measured_busbw_GBps},
                       {"predicted_busbw_GBps", r.predicted_busbw_GBps}, {"error", r.error()}, {"algorithm", r.algorithm},
                       {"protocol", r.protocol}, {"range", r.range}, {"in_fit", r.in_fit}});
    Json jgroups = Json::array();
    for (const auto& g : groups)
      jgroups.push_back({{"op", g.op}, {"nranks", g.n}, {"rows", g.rows}, {"in_fit", g.fitted},
                         {"median_abs_error", calib::median_abs(g.errors)}});
    Json jgemm = nullptr;
    if (gemm) {
      Json held_rows = Json::array();
      for (const auto& h : gemm->held_back)
        held_rows.push_back({{"dtype", h.dtype}, {"m", h.m}, {"n", h.n}, {"k", h.k}, {"label", h.label},
                             {"measured_us", h.measured_us}, {"predicted_us", h.predicted_us}, {"error", h.error()}});
      jgemm = {{"every", gemm->every}, {"shapes", gemm->shapes}, {"fitted_on_rows", gemm->fitted_on},
               {"median_abs_error", gemm->median_abs_error}, {"roofline_floor", gemm->hbm_source}, {"held_back", held_rows}};
    }
    print_stdout(dump_json(Json{{"profile", o.common.profile}, {"fit_profile", other_profile ? o.fit_profile : o.common.profile}, {"cluster", cluster.name()},
                      {"fit_groups", fopt->groups}, {"fit_ops", fopt->ops}, {"report_groups", o.report_groups}, {"sample", sample},
                      {"error_definition", "predicted busbw / measured busbw - 1"}, {"min_bytes_in_medians", kMinBytes},
                      {"median_abs_error", {{"all", calib::median_abs(all)}, {"rows", all.size()},
                                            {"fitted_rows", calib::median_abs(fitted)}, {"fitted_count", fitted.size()},
                                            {"other_rows", calib::median_abs(held)}, {"other_count", held.size()}}},
                      {"groups", jgroups}, {"rows", jrows}, {"gemm", jgemm},
                      {"gemm_note", gemm_note.empty() ? Json(nullptr) : Json(gemm_note)}, {"notes", fit->report.notes}}));
    return 0;
  }
  Table t;
  t.header = {"op", "n", "bytes", "meas_us", "pred_us", "meas_busbw", "pred_busbw", "error_%", "algorithm", "protocol", "fit"};
  t.right_align = {false, true, true, true, true, true, true, true, false, false, false};
  for (const auto& r : rows)
    t.rows.push_back({r.op, std::to_string(r.nranks), fmt_fixed(r.bytes, 0), fmt_fixed(r.measured_us, 2),
                      fmt_fixed(r.predicted_us, 2), fmt_fixed(r.measured_busbw_GBps, 2),
                      fmt_fixed(r.predicted_busbw_GBps, 2), pct(r.error()), r.algorithm, r.protocol, r.in_fit ? "yes" : "no"});
  if (o.common.format == Format::csv) {
    print_stdout(t.to_csv());
    return 0;
  }
  std::string out = "# scalescope calibrate report: " + o.common.profile + " on cluster " + cluster.name() + "\n# " + sample +
                    (fopt->groups.empty() ? "" : "; fitted on groups of " + join_ints(fopt->groups) + " GPUs") +
                    (o.report_groups.empty() ? "" : "; reporting groups of " + join_ints(o.report_groups) + " GPUs") + "\n" +
                    "# error = predicted busbw / measured busbw - 1 (busbw = bytes / time x nccl-tests factor)\n";
  for (const auto& n : fit->report.notes) out += "# note: " + n + "\n";
  if (!o.summary) out += t.to_text();
  Table s;
  s.header = {"op", "n", "rows", "fitted_on", "median_abs_error_%"};
  s.right_align = {false, true, true, false, true};
  for (const auto& g : groups)
    s.rows.push_back({g.op, std::to_string(g.n), std::to_string(g.rows), g.fitted ? "yes" : "no",
                      pct(calib::median_abs(g.errors))});
  out += "#\n# median |error| per op and group size (sizes >= 1 KiB)\n" + s.to_text();
  out += "# all ops, sizes >= 1 KiB: median |error| " + pct(calib::median_abs(all)) + "% over " + std::to_string(all.size()) +
         " rows (rows fitted on: " + (fitted.empty() ? "none" : pct(calib::median_abs(fitted)) + "% over " + std::to_string(fitted.size())) +
         "; other rows: " + (held.empty() ? "none" : pct(calib::median_abs(held)) + "% over " + std::to_string(held.size())) + ")\n";
  if (gemm) {
    out += "# GEMM interpolation, every " + std::to_string(gemm->every) + "th problem per dtype held back: median |error| " +
           pct(gemm->median_abs_error) + "% over " + std::to_string(gemm->held_back.size()) + " held-back rows (" +
           std::to_string(gemm->shapes) + " problems, fitted on " + std::to_string(gemm->fitted_on) +
           " rows; roofline floor: " + gemm->hbm_source + ")\n";
    std::map<std::string, std::vector<double>> by_dtype;
    for (const auto& h : gemm->held_back) by_dtype[h.dtype].push_back(h.error());
    for (const auto& [d, e] : by_dtype)
      out += "#   " + d + ": median |error| " + pct(calib::median_abs(e)) + "% over " + std::to_string(e.size()) + "\n";
  } else {
    out += "# GEMM interpolation: not checked (" + gemm_note + ")\n";
  }
  print_stdout(out);
  return 0;
}

}  // namespace

void register_calibrate_report(CLI::App* calibrate, Context& ctx) {
  auto o = std::make_shared<ReportCmd>();
  CLI::App* sub = calibrate->add_subcommand(
      "report",
      "Measured vs predicted busbw of every collective row of a profile, per op and group size, with the median "
      "absolute error over sizes >= 1 KiB; parameters fitted on the profile itself (in-sample), on its --fit-groups "
      "rows, or on --fit-profile (out-of-sample); and the GEMM interpolation error on held-back shapes");
  add_calibrate_common(sub, o->common);
  sub->add_option("--fit-profile", o->fit_profile, "Fit the parameters on this profile instead (out-of-sample check)");
  sub->add_option("--report-groups", o->report_groups, "Report only rows of these group sizes (comma-separated)")
      ->delimiter(',');
  sub->add_flag("--summary", o->summary, "Text output: leave out the per-row table");
  sub->callback([o, &ctx] { ctx.exit_code = run_report(*o); });
}

}  // namespace scalescope::cli
