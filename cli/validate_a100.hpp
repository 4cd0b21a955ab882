// `scalescope validate a100`: predictions against published / measured A100 training runs
// (Narayanan et al. 2021 Table 1; vTrain's Megatron-DeepSpeed measurements), MAPE and Spearman.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "scalescope/sim/error.hpp"

namespace scalescope::cli {

/// One measured configuration next to its prediction.
struct ValidationRow {
  std::string group;  ///< model / GPU-count group (Spearman is computed inside each)
  std::string label;  ///< the configuration, e.g. "tp=2,pp=1,dp=32,mbs=8"
  double measured = 0, predicted = 0;  ///< in the set's unit
  bool fits_memory = true;
  std::string skipped;  ///< non-empty: why no prediction (then measured only)
  double ape() const { return predicted / measured - 1.0; }  ///< signed relative error
};

struct ValidationSet {
  std::string name;      ///< "narayanan2021", "vtrain-multi", "vtrain-single"
  std::string title;
  std::string quantity;  ///< "achieved TFLOP/s per GPU" or "iteration time (ms)"
  std::string source;
  std::vector<std::string> assumptions;
  std::vector<ValidationRow> rows;
};

/// Mean absolute percentage error (as a fraction) over rows with a prediction.
double mape(const std::vector<ValidationRow>& rows);
/// Spearman rank correlation of measured vs predicted (average ranks for ties); NaN below 3 rows.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

struct GroupStats {
  std::string group;
  int rows = 0;
  double mape = 0, spearman = 0;  ///< spearman NaN when rows < 3
};
std::vector<GroupStats> group_stats(const ValidationSet& set);

/// Runs the sets found in `data_dir` (narayanan2021_table1.csv, vtrain/ground_truth_{multi,single}.csv).
/// `which` is "all", "narayanan2021", "vtrain-multi" or "vtrain-single". Progress goes to stderr.
Expected<std::vector<ValidationSet>> run_a100_validation(const std::filesystem::path& data_dir, const std::string& which);

/// The Markdown report (REPORT.md).
std::string validation_report_markdown(const std::vector<ValidationSet>& sets);

}  // namespace scalescope::cli
