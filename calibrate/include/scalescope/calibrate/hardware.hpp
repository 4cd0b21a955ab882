// The hardware side of a prediction from an optional calibration: collective parameters and the
// compute model, with their provenance. One loader shared by simulate, the planner and the GUI.
#pragma once

#include <string>

#include "scalescope/models/compute_model.hpp"
#include "scalescope/sim/cluster.hpp"
#include "scalescope/sim/collective.hpp"

namespace scalescope::calib {

struct HardwareModels {
  CollectiveParams params;
  std::string collective_source = "built-in datasheet parameters";
  models::ComputeModel compute;
  std::string compute_source = "datasheet roofline";
  std::string gpu_note;  ///< set when the profile's GPU differs from the cluster's
};

/// `calibration`: empty (datasheet parameters and roofline), a calibration profile name or file
/// (collectives fitted on `cluster`; GEMM/HBM/launch measurements for compute), or a
/// collective-parameters JSON (collectives only; compute stays on the datasheet roofline).
Expected<HardwareModels> load_hardware_models(const std::string& calibration, const Cluster& cluster);

}  // namespace scalescope::calib
