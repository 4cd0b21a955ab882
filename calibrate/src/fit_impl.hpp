// Internal to the collective fit: the measured rows as samples, model evaluation helpers, and
// descriptions of row sets for the report and the provenance strings.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "scalescope/calibrate/fit.hpp"

namespace scalescope::calib::fitimpl {

/// One usable measured row.
struct Sample {
  const CollEntry* entry = nullptr;
  CollOp op = CollOp::all_reduce;
  std::shared_ptr<const std::vector<int>> ranks;  ///< cluster ranks of the entry's group
  int n = 0;
  double bytes = 0;
  double t_meas = 0;  ///< seconds
  LinkClass cls = LinkClass::nvlink;
  bool in_fit = false;
};

/// Which part of the size range a row belongs to.
enum class Range { latency, ramp, bandwidth };
Range range_of(double bytes, const FitOptions& o);
const char* range_name(Range r);

/// Every usable row of the profile on `cluster` (notes: entries left out and why).
std::vector<Sample> collect_samples(const Profile& profile, const Cluster& cluster, const FitOptions& options,
                                    std::vector<std::string>& notes);

/// Predicted time (seconds) of a sample under `model`, forced algorithm/protocol optional.
double predict(const CollectiveModel& model, const Sample& s, std::optional<Algorithm> a = {},
               std::optional<Protocol> p = {});

/// "all_reduce, all_gather on n=2,4: 8 B..64 KiB (42 rows)".
std::string describe(const std::vector<const Sample*>& rows);
/// "64 KiB", "1 GiB", "8 B", "1000 B".
std::string size_str(double bytes);
/// A number for messages with up to 4 significant digits.
std::string num_str(double v);

double median(std::vector<double> xs);

/// Stage (D): replaces P's efficiency-by-size curves by ones fitted to the in-fit samples (see
/// fit.hpp); appends one FittedValue per knot and describes the rows used. `shape`: a model on the
/// samples' cluster whose cached rank groups the trial models reuse.
void fit_size_efficiency(const CollectiveModel& shape, CollectiveParams& P, const std::vector<Sample>& samples,
                         std::vector<FittedValue>& values, std::string& rows_used);

}  // namespace scalescope::calib::fitimpl
