// `scalescope validate vtrain-planner`: the planner restricted to the configurations vTrain measured in
// each multi-node group (model / GPU count): is its top pick within 5% of the best measured step time,
// and how well does its ranking follow the measured one (Spearman)? Optionally writes PLANNER.md.
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "cli_common.hpp"
#include "scalescope/planner/rank.hpp"
#include "validate_internal.hpp"

namespace scalescope::cli {

namespace {

struct PlannerCheckOptions {
  std::string data_dir;
  std::string report_file;
  std::string use_fit_file;
  double tolerance = 0.05;
  Format format = Format::text;
};

/// One measured configuration of a group with the planner's view of it.
struct ConfigResult {
  std::string label;
  double measured_ms = 0;  ///< mean over the rows measuring this configuration
  int measurements = 0;
  int rank = 0;            ///< 1-based planner rank; 0 when the planner refused it
  double predicted_ms = std::nan("");
  std::string refused;     ///< why the planner refused it
};

struct GroupResult {
  std::string group;
  int gpus = 0, gbs = 0;
  std::vector<ConfigResult> configs;  ///< planner order, then the refused ones in file order
  std::string pick, best;             ///< the planner's top pick and the best measured configuration
  double pick_ms = std::nan(""), best_ms = std::nan("");
  double gap = std::nan("");          ///< pick_ms / best_ms - 1
  bool pass = false;                  ///< gap <= tolerance
  double spearman = std::nan("");     ///< predicted vs measured over the ranked configurations
};

std::string fmt(double v, int decimals) {
  if (std::isnan(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string config_label(const models::Plan& p) {
  return "tp=" + std::to_string(p.tp) + ",pp=" + std::to_string(p.pp) + ",dp=" + std::to_string(p.dp) +
         ",mbs=" + std::to_string(p.mbs);
}

Expected<std::vector<GroupResult>> check_groups(const std::filesystem::path& dir, const A100Options& options,
                                                double tolerance, std::vector<std::string>* assumptions) {
  return catch_errors([&] {
    const SystemSpec sys = make_system(dir, options, options.fit.has_value()).take_or_throw();
    Rigs rigs(sys);
    ParsedSet parsed = parse_vtrain(dir / "vtrain" / "ground_truth_multi.csv", true);
    if (assumptions) {
      ValidationSet described = parsed.set;
      A100Options d = options;
      d.fit.reset();  // the fitted parameters (if any) are listed below, as the planner used them
      describe_set(described, sys, d);
      // The planner ranks at its own fidelity, whatever `validate a100` predicts these rows with.
      for (const auto& a : described.assumptions)
        if (a.rfind("Fidelity:", 0) != 0) assumptions->push_back(a);
      assumptions->push_back(
          "Fidelity: the planner's - the symmetric analytical simulation (one representative pipeline) with which "
          "`scalescope plan` ranks its candidates (it re-simulates only its top plans at flow fidelity). "
          "`validate a100` may predict these rows at another fidelity, so its per-row times can differ from the "
          "predicted times here.");
    }
    // Groups in file order; configurations measured more than once are averaged.
    std::vector<std::string> order;
    std::map<std::string, std::vector<std::size_t>> rows_of;
    for (std::size_t i = 0; i < parsed.configs.size(); ++i) {
      if (!parsed.set.rows[i].skipped.empty()) continue;
      const std::string& g = parsed.set.rows[i].group;
      if (!rows_of.count(g)) order.push_back(g);
      rows_of[g].push_back(i);
    }
    std::vector<GroupResult> out;
    for (const std::string& g : order) {
      const std::vector<std::size_t>& idx = rows_of[g];
      const RowConfig& c0 = parsed.configs[idx.front()];
      GroupResult gr;
      gr.group = g;
      gr.gpus = c0.gpus;
      gr.gbs = c0.gbs;
      std::vector<models::Plan> plans;
      std::map<std::string, std::pair<double, int>> measured;  // label -> (sum, count)
      for (std::size_t i : idx) {
        const RowConfig& c = parsed.configs[i];
        if (c.hidden != c0.hidden || c.heads != c0.heads || c.layers != c0.layers || c.seq != c0.seq || c.gbs != c0.gbs)
          throw ErrorException(input_error((dir / "vtrain" / "ground_truth_multi.csv").string(), "group '" + g + "'",
                                           "rows of one group must share the model, sequence length and global batch"));
        const models::Plan p = megatron_plan(c);
        auto& m = measured[config_label(p)];
        if (m.second == 0) plans.push_back(p);
        m.first += parsed.set.rows[i].measured;
        ++m.second;
      }
      Rig* rig = rigs.get(c0.gpus, true).take_or_throw();
      planner::RankOptions ro;
      ro.costs.flash_attention = false;  // as `validate a100` predicts these rows (Megatron 2021 attention)
      ro.costs.dropout = true;
      ro.per_layer_tasks = sys.per_layer_collectives;
      ro.threads = static_cast<int>(std::thread::hardware_concurrency());
      const planner::PlanRanking ranking = rank_plans(gpt(c0), plans, rig->cluster, rig->coll, rig->compute, ro);

      std::vector<double> pred, meas;
      for (std::size_t r = 0; r < ranking.ranked.size(); ++r) {
        ConfigResult cr;
        cr.label = config_label(ranking.ranked[r].plan);
        const auto& m = measured[cr.label];
        cr.measured_ms = m.first / m.second;
        cr.measurements = m.second;
        cr.rank = static_cast<int>(r) + 1;
        cr.predicted_ms = ranking.ranked[r].step_time_s * 1e3;
        pred.push_back(cr.predicted_ms);
        meas.push_back(cr.measured_ms);
        gr.configs.push_back(cr);
      }
      for (const auto& rej : ranking.rejected) {
        ConfigResult cr;
        cr.label = config_label(rej.plan);
        const auto& m = measured[cr.label];
        cr.measured_ms = m.first / m.second;
        cr.measurements = m.second;
        cr.refused = rej.reason;
        gr.configs.push_back(cr);
      }
      for (const auto& cr : gr.configs) {
        if (std::isnan(gr.best_ms) || cr.measured_ms < gr.best_ms) {
          gr.best_ms = cr.measured_ms;
          gr.best = cr.label;
        }
      }
      if (!ranking.ranked.empty()) {
        gr.pick = gr.configs.front().label;
        gr.pick_ms = gr.configs.front().measured_ms;
        gr.gap = gr.pick_ms / gr.best_ms - 1.0;
        gr.pass = gr.gap <= tolerance;
      }
      gr.spearman = spearman(pred, meas);
      std::fprintf(stderr, "scalescope validate: %s: %zu configurations ranked, %zu refused\n", g.c_str(),
                   ranking.ranked.size(), ranking.rejected.size());
      out.push_back(std::move(gr));
    }
    return out;
  });
}

std::string markdown(const std::vector<GroupResult>& groups, const std::vector<std::string>& assumptions,
                     const A100Options& options, double tolerance) {
  std::string s = "# The planner on vTrain's multi-node A100 measurements\n\n";
  s += "Generated by `scalescope validate vtrain-planner --report validation/a100/PLANNER.md`.\n\n";
  s += "For each model / GPU-count group of `vtrain/ground_truth_multi.csv`, the planner ranks only the "
       "configurations that were measured (tp, pp, dp, micro-batch; everything else as they were run), with "
       "the same validity and memory checks and the same symmetric analytical simulation and order as "
       "`scalescope plan` (planner::rank_plans). Its top pick passes when the pick's measured iteration time is "
       "within " + fmt(100 * tolerance, 0) + "% of the best measured one. Spearman: rank correlation of the "
       "predicted and the measured iteration times over the configurations the planner ranked. A configuration "
       "measured more than once counts with the mean of its measurements.\n\n";
  int pass = 0, n = 0;
  double rho = 0;
  int nrho = 0;
  for (const auto& g : groups) {
    ++n;
    pass += g.pass ? 1 : 0;
    if (!std::isnan(g.spearman)) {
      rho += g.spearman;
      ++nrho;
    }
  }
  s += "**" + std::to_string(pass) + " of " + std::to_string(n) + " groups pass; mean Spearman " +
       (nrho ? fmt(rho / nrho, 3) : std::string("n/a")) + ".**\n\n";
  s += "| group | configs | ranked | planner pick | its measured ms | best measured | best ms | gap | pass | Spearman |\n";
  s += "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& g : groups) {
    int ranked = 0;
    for (const auto& c : g.configs) ranked += c.rank > 0 ? 1 : 0;
    s += "| " + g.group + " | " + std::to_string(g.configs.size()) + " | " + std::to_string(ranked) + " | " +
         (g.pick.empty() ? "-" : g.pick) + " | " + fmt(g.pick_ms, 1) + " | " + g.best + " | " + fmt(g.best_ms, 1) + " | " +
         (std::isnan(g.gap) ? "n/a" : fmt(100 * g.gap, 1) + "%") + " | " + (g.pass ? "yes" : "no") + " | " +
         fmt(g.spearman, 3) + " |\n";
  }
  s += "\nAssumptions (the system and training setup of `scalescope validate a100` for these rows):\n";
  for (const auto& a : assumptions) s += "- " + a + "\n";
  if (options.fit) {
    s += "- Compute parameters fitted on the vTrain single-node rows only (" + options.fit->fitted_on +
         "): gemm_efficiency " + fmt(options.fit->gemm_efficiency, 3) + ", elementwise_efficiency " +
         fmt(options.fit->elementwise_efficiency, 3) + ", launch overhead " + fmt(options.fit->launch_overhead_us, 2) +
         " us.\n";
  }
  s += "- Nothing was fitted or tuned on the multi-node rows.\n";
  for (const auto& g : groups) {
    s += "\n## " + g.group + " (gbs " + std::to_string(g.gbs) + ")\n\n";
    s += "| planner rank | configuration | predicted ms | measured ms | runs | note |\n|---|---|---|---|---|---|\n";
    for (const auto& c : g.configs) {
      s += "| " + (c.rank > 0 ? std::to_string(c.rank) : std::string("-")) + " | " + c.label + " | " +
           fmt(c.predicted_ms, 1) + " | " + fmt(c.measured_ms, 1) + " | " + std::to_string(c.measurements) + " | " +
           (c.refused.empty() ? (c.label == g.best ? "best measured" : "") : "refused: " + c.refused) + " |\n";
    }
  }
  return s;
}

int run_planner_check(const PlannerCheckOptions& o) {
  const std::string cmd = "validate vtrain-planner";
  if (!(o.tolerance >= 0)) return report(cmd, input_error("", "--tolerance", "expected a fraction >= 0"));
  const std::filesystem::path dir =
      o.data_dir.empty() ? std::filesystem::path(SCALESCOPE_SOURCE_DIR) / "validation" / "a100"
                         : std::filesystem::path(o.data_dir);
  A100Options opts;
  opts.vtrain_system = true;
  if (!o.use_fit_file.empty()) {
    auto fit = load_compute_fit(o.use_fit_file);
    if (!fit) return report(cmd, fit.error());
    opts.fit = *fit;
  }
  std::vector<std::string> assumptions;
  auto groups = check_groups(dir, opts, o.tolerance, &assumptions);
  if (!groups) return report(cmd, groups.error());
  if (!o.report_file.empty()) {
    if (auto ok = write_file_atomic(o.report_file, markdown(*groups, assumptions, opts, o.tolerance)); !ok)
      return report(cmd, ok.error());
    std::fprintf(stderr, "scalescope validate: wrote %s\n", o.report_file.c_str());
  }
  if (o.format == Format::json) {
    Json j = Json::array();
    for (const auto& g : *groups) {
      Json configs = Json::array();
      for (const auto& c : g.configs) {
        Json e = {{"configuration", c.label}, {"measured_ms", c.measured_ms}, {"measurements", c.measurements}};
        if (c.rank > 0) {
          e["planner_rank"] = c.rank;
          e["predicted_ms"] = c.predicted_ms;
        } else {
          e["refused"] = c.refused;
        }
        configs.push_back(e);
      }
      auto num_or_null = [](double v) { return std::isnan(v) ? Json(nullptr) : Json(v); };
      j.push_back({{"group", g.group}, {"gpus", g.gpus}, {"gbs", g.gbs}, {"pick", g.pick}, {"pick_measured_ms", num_or_null(g.pick_ms)},
                   {"best", g.best}, {"best_measured_ms", num_or_null(g.best_ms)}, {"gap", num_or_null(g.gap)},
                   {"pass", g.pass}, {"spearman", num_or_null(g.spearman)}, {"configurations", configs}});
    }
    print_stdout(dump_json(j) + "\n");
  } else if (o.format == Format::csv) {
    Table t;
    t.header = {"group", "configuration", "planner_rank", "predicted_ms", "measured_ms", "measurements", "refused"};
    for (const auto& g : *groups) {
      for (const auto& c : g.configs) {
        t.rows.push_back({g.group, c.label, c.rank > 0 ? std::to_string(c.rank) : "", c.rank > 0 ? fmt(c.predicted_ms, 3) : "",
                          fmt(c.measured_ms, 3), std::to_string(c.measurements), c.refused});
      }
    }
    print_stdout(t.to_csv());
  } else {
    Table t;
    t.header = {"group", "configs", "planner pick", "measured ms", "best measured", "best ms", "gap", "pass", "Spearman"};
    t.right_align = {false, true, false, true, false, true, true, false, true};
    for (const auto& g : *groups) {
      t.rows.push_back({g.group, std::to_string(g.configs.size()), g.pick.empty() ? "-" : g.pick, fmt(g.pick_ms, 1),
                        g.best, fmt(g.best_ms, 1), std::isnan(g.gap) ? "n/a" : fmt(100 * g.gap, 1) + " %",
                        g.pass ? "yes" : "no", fmt(g.spearman, 3)});
    }
    print_stdout(t.to_text());
  }
  return 0;
}

}  // namespace

void register_validate_planner(CLI::App& app, Context& ctx) {
  CLI::App* validate = app.get_subcommand("validate");  // register_validate() runs first (main.cpp)
  auto opts = std::make_shared<PlannerCheckOptions>();
  CLI::App* sub = validate->add_subcommand(
      "vtrain-planner",
      "The planner restricted to the configurations vTrain measured in each multi-node A100 group: is its top "
      "pick within --tolerance of the best measured iteration time, and the Spearman rank correlation of its "
      "ranking with the measured one. Exit status 1 when a group fails.");
  sub->add_option("--data", opts->data_dir, "Folder with vtrain/ground_truth_multi.csv (default: validation/a100)");
  sub->add_option("--report", opts->report_file, "Write the Markdown report to this file (e.g. validation/a100/PLANNER.md)");
  sub->add_option("--use-fit", opts->use_fit_file,
                  "Compute parameters fitted on the vTrain single-node rows (written by `validate a100 --fit`)");
  sub->add_option("--tolerance", opts->tolerance, "Largest accepted gap of the pick to the best measured time")
      ->default_str("0.05");
  add_format_option(sub, opts->format);
  sub->callback([opts, &ctx] { ctx.exit_code = run_planner_check(*opts); });
}

}  // namespace scalescope::cli
