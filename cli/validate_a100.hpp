// `scalescope validate a100`: predictions against published / measured A100 training runs
// (Narayanan et al. 2021 Table 1; vTrain's Megatron-DeepSpeed measurements), MAPE and Spearman.
#pragma once

#include <cmath>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "scalescope/models/compute_model.hpp"
#include "scalescope/sim/collective_params.hpp"
#include "scalescope/sim/error.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::cli {

/// Where the predicted step time of a row goes (critical rank, simulator breakdown), milliseconds.
struct RowBreakdown {
  double compute_ms = 0, tp_ms = 0, pp_ms = 0, dp_ms = 0, optimizer_ms = 0, bubble_ms = 0, other_ms = 0;
};

/// One measured configuration next to its prediction.
struct ValidationRow {
  std::string group;  ///< model / GPU-count group (Spearman is computed inside each)
  std::string label;  ///< the configuration, e.g. "tp=2,pp=1,dp=32,mbs=8"
  double measured = 0, predicted = 0;  ///< in the set's unit
  /// The prediction without any parameter fitted on step times (NaN when no fit was used, then
  /// `predicted` is that prediction).
  double unfitted = std::nan("");
  bool fits_memory = true;
  double memory_GiB = std::nan("");  ///< predicted peak memory of the fullest rank
  std::string skipped;  ///< non-empty: why no prediction (then measured only)
  RowBreakdown breakdown;  ///< of `predicted` (iteration-time sets only)
  double ape() const { return predicted / measured - 1.0; }  ///< signed relative error
  double ape_unfitted() const { return unfitted / measured - 1.0; }
};

struct ValidationSet {
  std::string name;      ///< "narayanan2021", "vtrain-multi", "vtrain-single"
  std::string title;
  std::string quantity;  ///< "achieved TFLOP/s per GPU" or "iteration time (ms)"
  std::string source;
  std::vector<std::string> assumptions;
  std::vector<ValidationRow> rows;
  bool has_fit = false;  ///< rows carry both a fitted and an unfitted prediction
};

/// Mean absolute percentage error (as a fraction) over rows with a prediction.
double mape(const std::vector<ValidationRow>& rows);
/// The same for the unfitted predictions.
double mape_unfitted(const std::vector<ValidationRow>& rows);
/// Spearman rank correlation of measured vs predicted (average ranks for ties); NaN below 3 rows.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

struct GroupStats {
  std::string group;
  int rows = 0;
  double mape = 0, spearman = 0;  ///< spearman NaN when rows < 3
  double mape_unfitted = std::nan(""), spearman_unfitted = std::nan("");
};
std::vector<GroupStats> group_stats(const ValidationSet& set);

/// Compute-model parameters fitted on vTrain's single-node rows (validation/a100/fit.json).
struct ComputeFit {
  double gemm_efficiency = 0.75;
  double elementwise_efficiency = 0.7;
  double launch_overhead_us = 5.0;
  int rows = 0;                     ///< rows fitted on
  double mape_before = 0, mape_after = 0;  ///< on those rows
  std::string fitted_on;            ///< which rows
  std::string method;
};
Json to_json(const ComputeFit& fit);
Expected<ComputeFit> load_compute_fit(const std::filesystem::path& file);

/// The A100 system the rows are predicted on.
struct A100Options {
  /// true: vTrain rows on vTrain's machine (validation/a100/vtrain-cluster.json, collective parameters
  /// fitted to its measured all-reduce times, one collective per TP operation). false: the session-1
  /// baseline (superpod-a100, datasheet collectives, merged TP collectives).
  bool vtrain_system = true;
  std::optional<ComputeFit> fit;  ///< compute parameters fitted on vtrain-single (else the defaults)
};

/// Runs the sets found in `data_dir` (narayanan2021_table1.csv, vtrain/ground_truth_{multi,single}.csv).
/// `which` is "all", "narayanan2021", "vtrain-multi" or "vtrain-single". Progress goes to stderr.
Expected<std::vector<ValidationSet>> run_a100_validation(const std::filesystem::path& data_dir, const std::string& which,
                                                         const A100Options& options = {});

/// Fits gemm_efficiency, elementwise_efficiency and launch_overhead_us on the vtrain-single rows only
/// (minimum MAPE by coordinate descent over fixed grids); progress on stderr.
Expected<ComputeFit> fit_compute_on_vtrain_single(const std::filesystem::path& data_dir, const A100Options& options);

/// Collective parameters for vTrain's machine: the datasheet parameters with the NVLink class fitted
/// (calib::fit_collective_params) to the all-reduce times vTrain measured on one A100 node
/// (vtrain/allreduce_a100_lut.csv). `description` receives a sentence for the report.
Expected<CollectiveParams> vtrain_collective_params(const std::filesystem::path& data_dir, std::string* description);

/// The Markdown report (REPORT.md).
std::string validation_report_markdown(const std::vector<ValidationSet>& sets, const A100Options& options);

}  // namespace scalescope::cli
