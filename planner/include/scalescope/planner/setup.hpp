// What one evaluation needs besides the model and plan: the cluster, its collective model and the
// compute model, loaded from a cluster name/file and an optional calibration - the same loading as
// `scalescope simulate` (both use calib::load_hardware_models).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scalescope/calibrate/hardware.hpp"
#include "scalescope/models/compute_model.hpp"
#include "scalescope/models/model_spec.hpp"
#include "scalescope/sim/cluster.hpp"
#include "scalescope/sim/collective.hpp"

namespace scalescope::planner {

/// Not movable (the collective model points at the cluster): held by unique_ptr.
struct EvalSetup {
  EvalSetup(Cluster c, CollectiveParams params, models::ComputeModel cm)
      : cluster(std::move(c)), collectives(cluster, std::move(params)), compute(std::move(cm)) {}
  EvalSetup(const EvalSetup&) = delete;
  EvalSetup& operator=(const EvalSetup&) = delete;

  Cluster cluster;
  CollectiveModel collectives;
  models::ComputeModel compute;
  std::string collective_source = "built-in datasheet parameters";
  std::string compute_source = "datasheet roofline";
  std::string gpu_note;  ///< set when the calibration's GPU differs from the cluster's
  std::vector<std::string> notes;  ///< what the calibration left to the datasheet, other-GPU parts (warnings)
};

/// `calibration`: empty (datasheet), a calibration profile name or file (collectives fitted on the
/// cluster, GEMM/HBM/launch measurements for compute) or a collective-parameters JSON (collectives
/// only).
Expected<std::unique_ptr<EvalSetup>> load_setup(const std::string& cluster_name_or_path, ClusterOptions options,
                                                const std::string& calibration,
                                                const calib::CalibrationOptions& calibration_options = {});

/// A model by catalog name or file (models::load_model_by_name_or_path), its sequence length replaced by `seq`
/// when given (the commands' `--seq`, which must be positive).
Expected<models::ModelSpec> load_model_at_seq(const std::string& name_or_path, std::optional<int> seq);

}  // namespace scalescope::planner
