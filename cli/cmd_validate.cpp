// `scalescope validate a100 | nemo`: predicted vs published / measured training runs (A100: MAPE, Spearman;
// NeMo / Megatron-Bridge H100: median and worst error).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "cli_common.hpp"
#include "scalescope/sim/json_reader.hpp"
#include "scalescope/validate/nemo.hpp"
#include "validate_a100.hpp"

namespace scalescope::cli {

namespace {

struct ValidateOptions {
  std::string data_dir;
  std::string set = "all";
  std::string report_file;
  std::string fit_file;      ///< --fit: fit on vtrain-single and write here
  std::string use_fit_file;  ///< --use-fit: predict with these fitted parameters too
  bool datasheet_only = false;
  Format format = Format::text;
};

std::string num(double v, int decimals) {
  if (std::isnan(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

int run_a100(const ValidateOptions& o) {
  const std::string cmd = "validate a100";
  const std::filesystem::path dir =
      o.data_dir.empty() ? std::filesystem::path(SCALESCOPE_SOURCE_DIR) / "validation" / "a100"
                         : std::filesystem::path(o.data_dir);
  A100Options opts;
  opts.vtrain_system = !o.datasheet_only;
  if (!o.fit_file.empty()) {
    auto fit = fit_compute_on_vtrain_single(dir, opts);
    if (!fit) return report(cmd, fit.error());
    if (auto ok = write_file_atomic(o.fit_file, dump_json(to_json(*fit)) + "\n"); !ok) return report(cmd, ok.error());
    std::fprintf(stderr, "scalescope validate: wrote %s\n", o.fit_file.c_str());
    opts.fit = *fit;
  } else if (!o.use_fit_file.empty()) {
    auto fit = load_compute_fit(o.use_fit_file);
    if (!fit) return report(cmd, fit.error());
    opts.fit = *fit;
  }
  auto sets = run_a100_validation(dir, o.set, opts);
  if (!sets) return report(cmd, sets.error());
  if (!o.report_file.empty()) {
    if (auto ok = write_file_atomic(o.report_file, validation_report_markdown(*sets, opts)); !ok) return report(cmd, ok.error());
    std::fprintf(stderr, "scalescope validate: wrote %s\n", o.report_file.c_str());
  }
  if (o.format == Format::csv) {
    Table t;
    t.header = {"set", "group", "configuration", "measured", "predicted", "error", "fits_memory", "memory_GiB", "compute_ms", "tp_ms",
                "pp_ms",  "dp_ms", "bubble_ms", "optimizer_ms", "skipped"};
    if (opts.fit) t.header.insert(t.header.begin() + 4, {"unfitted", "unfitted_error"});
    for (const auto& s : *sets) {
      for (const auto& r : s.rows) {
        const bool ok = r.skipped.empty();
        std::vector<std::string> row = {s.name, r.group, r.label, num(r.measured, 3), ok ? num(r.predicted, 3) : "",
                                        ok ? num(r.ape(), 4) : "", r.fits_memory ? "true" : "false"};
        const RowBreakdown& b = r.breakdown;
        for (double v : {r.memory_GiB, b.compute_ms, b.tp_ms, b.pp_ms, b.dp_ms, b.bubble_ms, b.optimizer_ms}) {
          row.push_back(ok ? num(v, 3) : "");
        }
        row.push_back(r.skipped);
        if (opts.fit) row.insert(row.begin() + 4, {ok ? num(r.unfitted, 3) : "", ok ? num(r.ape_unfitted(), 4) : ""});
        t.rows.push_back(std::move(row));
      }
    }
    print_stdout(t.to_csv());
    return 0;
  }
  if (o.format == Format::json) {
    Json j = Json::array();
    for (const auto& s : *sets) {
      Json groups = Json::array();
      for (const auto& g : group_stats(s)) {
        groups.push_back({{"group", g.group}, {"rows", g.rows}, {"mape", g.mape},
                          {"spearman", std::isnan(g.spearman) ? Json(nullptr) : Json(g.spearman)}});
      }
      Json e = {{"set", s.name}, {"quantity", s.quantity}, {"rows", s.rows.size()}, {"mape", mape(s.rows)},
                {"groups", groups}};
      if (s.has_fit) e["mape_unfitted"] = mape_unfitted(s.rows);
      j.push_back(e);
    }
    print_stdout(dump_json(j));
    return 0;
  }
  Table t;
  t.header = {"set", "quantity", "rows", "MAPE", "groups ranked", "mean Spearman"};
  t.right_align = {false, false, true, true, true, true};
  for (const auto& s : *sets) {
    double rho = 0;
    int n = 0;
    for (const auto& g : group_stats(s)) {
      if (!std::isnan(g.spearman)) {
        rho += g.spearman;
        ++n;
      }
    }
    t.rows.push_back({s.name, s.quantity, std::to_string(s.rows.size()), num(100.0 * mape(s.rows), 1) + " %",
                      std::to_string(n), n ? num(rho / n, 3) : "n/a"});
  }
  print_stdout(t.to_text());
  return 0;
}

struct NemoCliOptions {
  std::string data_dir, report_file;
  validate::NemoOptions run;
  Format format = Format::text;
};

int run_nemo(const NemoCliOptions& o) {
  const std::string cmd = "validate nemo";
  const std::filesystem::path dir = o.data_dir.empty()
                                        ? std::filesystem::path(SCALESCOPE_SOURCE_DIR) / "validation" / "nemo"
                                        : std::filesystem::path(o.data_dir);
  auto v = validate::run_nemo_validation(dir, o.run);
  if (!v) return report(cmd, v.error());
  if (!o.report_file.empty()) {
    if (auto ok = write_file_atomic(o.report_file, validate::nemo_report_markdown(*v, o.run)); !ok) {
      return report(cmd, ok.error());
    }
    std::fprintf(stderr, "scalescope validate: wrote %s\n", o.report_file.c_str());
  }
  Table t;
  t.header = {"source", "model", "gpus", "precision", "plan", "measured_tokens_per_s_per_gpu", "predicted", "error",
              "memory_GiB", "skipped"};
  for (const auto& p : v->points) {
    const bool ok = p.skipped.empty();
    t.rows.push_back({p.row.source, p.row.model, std::to_string(p.row.gpus), p.row.precision, p.plan, num(p.measured, 1),
                      ok ? num(p.predicted, 1) : "", ok ? num(p.error(), 4) : "", ok ? num(p.memory_GiB, 2) : "", p.skipped});
  }
  if (o.format == Format::csv) {
    print_stdout(t.to_csv());
    return 0;
  }
  if (o.format == Format::json) {
    Json rows = Json::array();
    for (const auto& p : v->points) {
      rows.push_back({{"source", p.row.source}, {"model", p.row.model}, {"gpus", p.row.gpus}, {"plan", p.plan},
                      {"measured", p.measured}, {"predicted", p.predicted},
                      {"error", p.skipped.empty() ? Json(p.error()) : Json(nullptr)}, {"skipped", p.skipped}});
      if (p.with_host > 0) rows.back()["predicted_with_host"] = p.with_host;
    }
    Json doc{{"rows_checked", v->points.size()}, {"rows_not_checked", v->excluded.size()},
             {"median_abs_error", v->median_abs_error}, {"worst_error", v->worst_error},
             {"moe_rows", v->moe_points}, {"moe_median_abs_error", v->moe_median_abs_error},
             {"moe_worst_error", v->moe_worst_error}, {"rows", rows}};
    if (!o.run.host_cost.empty()) {
      doc["with_host"] = {{"file", o.run.host_cost}, {"median_abs_error", v->host_median_abs_error},
                          {"worst_error", v->host_worst_error}};
    }
    if (!o.run.moe_host_cost.empty()) {
      doc["moe_with_host"] = {{"file", o.run.moe_host_cost}, {"median_abs_error", v->moe_host_median_abs_error},
                              {"worst_error", v->moe_host_worst_error}};
    }
    if (v->deepseek_v3 && v->deepseek_v3->skipped.empty()) {
      doc["deepseek_v3_report"] = {{"published", validate::DeepSeekV3Check::kPublishedTokensPerGpu},
                                   {"predicted", v->deepseek_v3->predicted},
                                   {"error", v->deepseek_v3->error()},
                                   {"plan", v->deepseek_v3->plan}};
    }
    print_stdout(doc.dump(2));
    return 0;
  }
  Table brief;
  brief.header = {"source", "model", "gpus", "measured tok/s/GPU", "predicted", "error"};
  brief.right_align = {false, false, true, true, true, true};
  for (const auto& p : v->points) {
    brief.rows.push_back({p.row.source, p.row.model, std::to_string(p.row.gpus), num(p.measured, 0),
                          p.skipped.empty() ? num(p.predicted, 0) : "-",
                          p.skipped.empty() ? num(100.0 * p.error(), 1) + " %" : p.skipped});
  }
  const std::size_t moe_rows = static_cast<std::size_t>(
      std::count_if(v->points.begin(), v->points.end(), [](const auto& p) { return p.row.moe(); }));
  std::string tail = "\nmedian |error| " + num(100.0 * v->median_abs_error, 1) + " %, worst " +
                     num(100.0 * v->worst_error, 1) + " % over " + std::to_string(v->points.size() - moe_rows) +
                     " dense H100 rows (" + std::to_string(v->excluded.size()) +
                     " rows not checked: models no key describes)\n";
  if (v->moe_points > 0) {
    tail += "MoE rows: median |error| " + num(100.0 * v->moe_median_abs_error, 1) + " %, worst " +
            num(100.0 * v->moe_worst_error, 1) + " % over " + std::to_string(v->moe_points) + " rows\n";
  }
  if (v->deepseek_v3 && v->deepseek_v3->skipped.empty()) {
    tail += "DeepSeek-V3 report (2,048 H800): published " + num(validate::DeepSeekV3Check::kPublishedTokensPerGpu, 1) +
            " tokens/s/GPU, predicted " + num(v->deepseek_v3->predicted, 1) + " (" +
            num(100.0 * v->deepseek_v3->error(), 1) + " %)\n";
  }
  if (!o.run.compare_calibration.empty()) {
    tail += "with " + o.run.compare_calibration + ": median |error| " + num(100.0 * v->compare_median_abs_error, 1) +
            " %, worst " + num(100.0 * v->compare_worst_error, 1) + " %\n";
  }
  if (!o.run.host_cost.empty()) {
    tail += "dense rows with the host time of " + o.run.host_cost + ": median |error| " +
            num(100.0 * v->host_median_abs_error, 1) + " %, worst " + num(100.0 * v->host_worst_error, 1) + " %\n";
  }
  if (!o.run.moe_host_cost.empty()) {
    tail += "MoE rows with the host time of " + o.run.moe_host_cost + ": median |error| " +
            num(100.0 * v->moe_host_median_abs_error, 1) + " %, worst " + num(100.0 * v->moe_host_worst_error, 1) +
            " %\n";
  }
  print_stdout(brief.to_text() + tail);
  return 0;
}

}  // namespace

void register_validate(CLI::App& app, Context& ctx) {
  auto opts = std::make_shared<ValidateOptions>();
  CLI::App* sub = app.add_subcommand("validate", "Compare predictions with published or measured training runs");
  sub->require_subcommand(1);
  CLI::App* a100 = sub->add_subcommand(
      "a100",
      "A100 runs: Narayanan et al. 2021 Table 1 (achieved TFLOP/s per GPU) and vTrain's Megatron-DeepSpeed "
      "iteration times (multi- and single-node). Prints MAPE and the mean Spearman rank correlation inside each "
      "model / GPU-count group; --report writes the Markdown report with every assumption.");
  a100->add_option("--data", opts->data_dir, "Folder with narayanan2021_table1.csv and vtrain/ (default: validation/a100)");
  a100->add_option("--set", opts->set, "all | narayanan2021 | vtrain-multi | vtrain-single")->default_str("all");
  a100->add_option("--report", opts->report_file, "Write the Markdown report to this file");
  auto* fit = a100->add_option("--fit", opts->fit_file,
                   "Fit gemm_efficiency, elementwise_efficiency and launch_overhead on the vTrain single-node rows "
                   "only, write them to this file (e.g. validation/a100/fit.json), then predict with and without them");
  auto* use_fit = a100->add_option("--use-fit", opts->use_fit_file,
                                    "Predict with and without the fitted parameters of this file (written by --fit)");
  fit->excludes(use_fit);
  a100->add_flag("--datasheet-only", opts->datasheet_only,
                 "Session-1 baseline: vTrain rows on superpod-a100 with datasheet collectives and merged TP "
                 "collectives (not vTrain's machine and measured all-reduce)");
  add_format_option(a100, opts->format);
  a100->callback([opts, &ctx] { ctx.exit_code = run_a100(*opts); });

  auto nemo = std::make_shared<NemoCliOptions>();
  CLI::App* nemo_cmd = sub->add_subcommand(
      "nemo",
      "Every dense and MoE DGX-H100 row of NVIDIA's NeMo / Megatron-Bridge performance summaries (tokens/s per GPU; "
      "validation/nemo/h100_published.csv) against the prediction of the plan NeMo ran, and the DeepSeek-V3 technical "
      "report's H800 training cost; prints each row, the median and worst error; --report writes the Markdown report "
      "with every assumption. Nothing is fitted on these rows.");
  nemo_cmd->add_option("--data", nemo->data_dir, "Folder with h100_published.csv and models/ (default: validation/nemo)");
  nemo_cmd->add_option("--report", nemo->report_file, "Write the Markdown report to this file");
  nemo_cmd->add_option("--cluster", nemo->run.cluster, "Cluster name or file the rows run on")->default_str("h100-rail-ndr");
  nemo_cmd->add_option("--calibration", nemo->run.calibration,
                       "Calibration profile of the H100s (default: the cluster's default profile, h100-gpu for H100 clusters; `none`: datasheet compute and collectives)");
  nemo_cmd->add_option("--compare-calibration", nemo->run.compare_calibration,
                       "Predict every row a second time with this profile and show both (e.g. h200x4: measured kernel "
                       "rates of the same GH100 die, until an H100 profile exists)");
  nemo_cmd->add_option("--host-cost", nemo->run.host_cost,
                       "Predict every dense row a third time with this measured host time per layer "
                       "(scalescope.host_dispatch/1, e.g. validation/nemo/megatron-core-host/dense.json); the built-in "
                       "fused stack has none, so the main prediction assumes a host that never falls behind the GPU");
  nemo_cmd->add_option("--moe-host-cost", nemo->run.moe_host_cost,
                       "The same for the MoE rows (e.g. validation/nemo/megatron-core-host/moe.json: a layer whose "
                       "forward waits for the token counts)");
  nemo_cmd->add_option("--deepseek-v3-calibration", nemo->run.deepseek_v3_calibration,
                       "Calibration for the DeepSeek-V3 technical report's H800 run (the H800 is the H100's GH100 die; "
                       "empty: not run)")
      ->default_str("h100-gpu");
  nemo_cmd
      ->add_option_function<std::string>(
          "--attention",
          [nemo](const std::string& a) {
            nemo->run.attention = a == "cudnn" ? models::AttentionBackend::cudnn : models::AttentionBackend::flash;
          },
          "The attention kernel of the rows' Transformer Engine: flash (the profile's FlashAttention rows) or cudnn "
          "(cuDNN's fused attention, which TE picks on Hopper from 1.7 on: validation/session39)")
      ->check(CLI::IsMember({"flash", "cudnn"}))
      ->default_str("flash");
  add_format_option(nemo_cmd, nemo->format);
  nemo_cmd->callback([nemo, &ctx] { ctx.exit_code = run_nemo(*nemo); });
}

}  // namespace scalescope::cli
