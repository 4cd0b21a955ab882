// `scalescope scaling`: measured vs predicted strong / weak scaling curves with Amdahl / Gustafson
// fits, or predicted curves alone for a model, cluster and list of GPU counts.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "cli_common.hpp"
#include "framework_options.hpp"
#include "planner_format.hpp"
#include "scalescope/planner/scaling_run.hpp"

namespace scalescope::cli {

namespace {

using namespace plan_fmt;

struct ScalingOptions {
  planner::ScalingRequest q;  ///< the options the curves take, bound to the flags below
  Format format = Format::text;
};

std::string fit_text(const std::optional<planner::ScalingFit>& f) {
  if (!f) return "-";
  return "s=" + fixed(f->serial_fraction, 4) + " R2=" + fixed(f->r2, 3);
}

/// The text and CSV forms (JSON: planner::scaling_json).
int print_curves(const std::vector<planner::ScalingCurve>& curves, Format format) {
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

int run(const ScalingOptions& o) {
  const std::string cmd = "scaling";
  planner::ScalingRequest q = o.q;
  q.note = [](const std::string& n) { std::fprintf(stderr, "scalescope scaling: %s\n", n.c_str()); };
  auto run = planner::run_scaling(q);
  if (!run) return report(cmd, run.error());
  if (o.format == Format::json) {
    print_stdout(dump_json(planner::scaling_json(*run)));
    return 0;
  }
  return print_curves(run->curves, o.format);
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
  sub->add_option("--measured", o->q.measured,
                  "A measured-run file or a folder of them (e.g. validation/h200x4/measured). The set's pricing.json "
                  "(docs/measured-format.md) supplies --calibration, --framework, --eager-bandwidth-factor and "
                  "--host-cost where they are not given; a --host-cost other than the set's own is warned about");
  sub->add_option("--calibration", o->q.calibration, "Calibration profile or collective-parameters JSON (as for `simulate`)");
  add_framework_options(sub, o->q.stack);
  sub->add_option("--model", o->q.model, "Model (predicted curves)");
  sub->add_option("--cluster", o->q.cluster, "Cluster name or file (predicted curves)");
  sub->add_option("--gpus", o->q.gpus, "GPU counts, e.g. 8,16,32 (predicted curves)")->delimiter(',');
  sub->add_option("--gbs", o->q.gbs, "Global batch at the first GPU count (strong: fixed; weak: scaled with the GPUs)");
  sub->add_option("--scaling", o->q.kind, "strong (fixed global batch) or weak (fixed per-GPU batch)")->default_str("strong");
  sub->add_option("--plan-family", o->q.family,
                  "best (the planner's best plan at each count) or fixed fields such as \"tp=8,pp=1,zero=1,mbs=1\" "
                  "(dp follows from the GPU count)")
      ->default_str("best");
  add_format_option(sub, o->format);
  sub->callback([o, sub, &ctx] {
    o->q.given_calibration = sub->count("--calibration") > 0;
    o->q.given_framework = sub->count("--framework") > 0;
    o->q.given_factor = sub->count("--eager-bandwidth-factor") > 0;
    o->q.given_host_cost = sub->count("--host-cost") > 0;
    ctx.exit_code = run(*o);
  });
}

}  // namespace scalescope::cli
