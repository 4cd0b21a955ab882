// One `scalescope scaling` request as a library call: measured runs grouped into strong / weak scaling curves
// with each point predicted, or predicted curves alone for a model, cluster and GPU counts, and the JSON report
// the CLI prints with --format json. Shared by the CLI and the Python package.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "scalescope/planner/scaling.hpp"
#include "scalescope/planner/stack_options.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::planner {

struct ScalingRequest {
  /// A measured-run file or folder: its curves, each point predicted. Empty: predicted curves for model,
  /// cluster, gpus and gbs.
  std::string measured;
  std::string calibration;  ///< calibration profile or collective-parameters JSON
  FrameworkOptions stack;   ///< the software stack the points are priced for
  /// Which pricing options the caller gave; the others come from the measured set's pricing.json.
  bool given_calibration = false, given_framework = false, given_factor = false, given_host_cost = false;
  std::string model, cluster;  ///< predicted curves
  std::vector<int> gpus;       ///< GPU counts of the predicted curve (speedups relative to the first)
  int gbs = 0;                 ///< global batch at the first count (strong: fixed; weak: scaled with the GPUs)
  std::string kind = "strong";   ///< strong | weak
  std::string family = "best";   ///< best, or fixed plan fields such as "tp=8,pp=1,zero=1,mbs=1"
  /// Called with each note as it arises (the pricing taken from pricing.json, a host cost that is not the set's,
  /// a GPU count without a plan); the CLI prints them on stderr.
  std::function<void(const std::string&)> note;
  const std::atomic<bool>* cancel = nullptr;  ///< when it reads true the run stops with a runtime error
};

struct ScalingRun {
  std::vector<ScalingCurve> curves;
};

/// Checks the request (errors name the option: "--measured", "--gpus", "--scaling", ...), loads the inputs
/// and predicts every point; `progress(done, total)` is called as points are predicted.
Expected<ScalingRun> run_scaling(const ScalingRequest& request,
                                 const std::function<void(long done, long total)>& progress = {});

/// `scalescope scaling --format json`: {"curves": [{cluster, model, family, scaling, mbs, gbs | gbs_per_gpu,
/// base_gpus, fit, measured_fit, predicted_fit, points: [{gpus, plan, file, measured_s, predicted_s, ...}]}]}.
Json scaling_json(const ScalingRun& run);

}  // namespace scalescope::planner
