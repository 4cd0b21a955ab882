// `scalescope calibrate`: fit a profile into collective parameters (fit), show how well they
// predict (report, in cmd_calibrate_report.cpp), check the machine's health (check, in
// cmd_calibrate_check.cpp), and run the GPU measurement program (run).
#include <iostream>

#include "calibrate_common.hpp"

namespace scalescope::cli {

void register_calibrate_report(CLI::App* calibrate, Context& ctx);  // cmd_calibrate_report.cpp
void register_calibrate_check(CLI::App* calibrate, Context& ctx);   // cmd_calibrate_check.cpp
void register_calibrate_import_attention(CLI::App* calibrate, Context& ctx);  // cmd_calibrate_import.cpp
void register_calibrate_import_mamba(CLI::App* calibrate, Context& ctx);      // cmd_calibrate_import.cpp
void register_calibrate_import_power(CLI::App* calibrate, Context& ctx);      // cmd_calibrate_import.cpp
void register_calibrate_import_section(CLI::App* calibrate, Context& ctx);    // cmd_calibrate_import.cpp
void register_calibrate_shapes(CLI::App* calibrate, Context& ctx);            // cmd_calibrate_shapes.cpp
void register_calibrate_attention_check(CLI::App* calibrate, Context& ctx);   // cmd_calibrate_attention.cpp
void register_calibrate_run(CLI::App* calibrate, Context& ctx);               // cmd_calibrate_run.cpp

namespace {

struct FitCmd {
  CalibrateCommon common;
  std::string output;
};

int run_fit(const FitCmd& o) {
  const std::string cmd = "calibrate fit";
  auto fopt = fit_options(o.common);
  if (!fopt) return report(cmd, fopt.error());
  auto loaded = load_profile_and_cluster(o.common.profile, o.common);
  if (!loaded) return report(cmd, loaded.error());
  auto fit = calib::fit_collective_params(loaded->profile, *loaded->cluster, *fopt);
  if (!fit) return report(cmd, fit.error());
  const Json params = to_json(fit->params);
  if (!o.output.empty()) {
    auto w = write_file_atomic(o.output, dump_json(params) + "\n");
    if (!w) return report(cmd, w.error());
    std::cerr << "scalescope " << cmd << ": wrote " << o.output << "\n";
  }
  const auto& rep = fit->report;
  if (o.common.format == Format::json) {
    Json values = Json::array();
    for (const auto& v : rep.values)
      values.push_back({{"name", v.name}, {"value", v.value}, {"before", v.before}, {"unit", v.unit}, {"rows", v.rows},
                        {"method", v.method}});
    print_stdout(dump_json(Json{{"profile", o.common.profile}, {"cluster", loaded->cluster->name()},
                      {"fit_groups", fopt->groups}, {"fit_ops", fopt->ops}, {"values", values}, {"notes", rep.notes},
                      {"params", params}}));
    return 0;
  }
  Table t;
  t.header = {"parameter", "before", "fitted", "unit", "rows"};
  t.right_align = {false, true, true, false, false};
  for (const auto& v : rep.values)
    t.rows.push_back({v.name, fmt_fixed(v.before, v.unit == "bytes" ? 0 : 4), fmt_fixed(v.value, v.unit == "bytes" ? 0 : 4),
                      v.unit, v.rows});
  if (o.common.format == Format::csv) {
    print_stdout(t.to_csv());
    return 0;
  }
  std::string out = "# scalescope calibrate fit: " + o.common.profile + " on cluster " + loaded->cluster->name() +
                    (fopt->groups.empty() ? "" : ", fitted on groups of " + join_ints(fopt->groups) + " GPUs") + "\n";
  for (const auto& n : rep.notes) out += "# note: " + n + "\n";
  out += t.to_text();
  print_stdout(out);
  return 0;
}

}  // namespace

void register_calibrate(CLI::App& app, Context& ctx) {
  CLI::App* sub = app.add_subcommand(
      "calibrate",
      "Calibration profiles: fit them into collective-model parameters, report prediction errors, check the machine "
      "they were measured on against its topology, or run the GPU "
      "measurement program that writes them");
  sub->require_subcommand(1);

  auto fo = std::make_shared<FitCmd>();
  CLI::App* fit = sub->add_subcommand(
      "fit",
      "Fit the collective model's parameters (bus efficiency from sizes >= 64 MiB, latencies from sizes <= 64 KiB, "
      "channel thresholds and LL128/Simple latency scale from the sizes between) to a profile's collectives and "
      "print every fitted number with the rows it came from");
  add_calibrate_common(fit, fo->common);
  fit->add_option("-o,--output", fo->output,
                  "Write the fitted parameters (scalescope.collective_params/1, for `collective --calibration`)");
  fit->callback([fo, &ctx] { ctx.exit_code = run_fit(*fo); });

  register_calibrate_report(sub, ctx);
  register_calibrate_check(sub, ctx);
  register_calibrate_import_attention(sub, ctx);
  register_calibrate_import_mamba(sub, ctx);
  register_calibrate_import_power(sub, ctx);
  register_calibrate_attention_check(sub, ctx);
  register_calibrate_import_section(sub, ctx);
  register_calibrate_shapes(sub, ctx);

  register_calibrate_run(sub, ctx);
}

}  // namespace scalescope::cli
