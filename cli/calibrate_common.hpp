// Shared pieces of `scalescope calibrate fit|report`: loading the profile and the cluster it is
// fitted on, fit options from the command line, number formatting.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "scalescope/calibrate/fit.hpp"
#include "scalescope/calibrate/model_shapes.hpp"
#include "scalescope/calibrate/profile.hpp"
#include "scalescope/sim/cluster.hpp"

namespace scalescope::cli {

struct CalibrateCommon {
  std::string profile;
  std::string cluster;
  std::optional<int> nodes;
  std::vector<int> fit_groups;
  std::vector<std::string> fit_ops;
  Format format = Format::text;
};

/// Adds PROFILE, --cluster, --nodes, --fit-groups, --fit-ops and --format.
void add_calibrate_common(CLI::App* sub, CalibrateCommon& o);

/// --model (repeatable, required), --mbs, --seq, --tp, --dtypes: the shapes `calibrate shapes` and
/// `calibrate run --model` measure (calibrate/model_shapes.hpp). Clears the request's seqs (default: each model's).
void add_shape_options(CLI::App& app, std::vector<std::string>& models, calib::ShapeRequest& request);

/// Loads `profile_name` and the cluster (with enough nodes for the profile unless --nodes is given).
struct Loaded {
  calib::Profile profile;
  std::optional<Cluster> cluster;
};
Expected<Loaded> load_profile_and_cluster(const std::string& profile_name, const CalibrateCommon& o);
/// FitOptions from --fit-groups / --fit-ops (ops checked against the model's names).
Expected<calib::FitOptions> fit_options(const CalibrateCommon& o);

/// "%.*f" of v.
std::string fmt_fixed(double v, int decimals);
/// "1,2,4".
std::string join_ints(const std::vector<int>& v);

}  // namespace scalescope::cli
