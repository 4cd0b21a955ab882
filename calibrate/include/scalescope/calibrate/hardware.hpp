// The hardware side of a prediction from an optional calibration: collective parameters and the
// compute model, with their provenance. One loader shared by simulate, the planner and the GUI.
#pragma once

#include <string>
#include <vector>

#include "scalescope/models/compute_model.hpp"
#include "scalescope/sim/cluster.hpp"
#include "scalescope/sim/collective.hpp"

namespace scalescope::calib {

struct CalibrationOptions {
  bool strict = false;  ///< a profile measured on another GPU type than the cluster's is an error, not a note
};

/// The product token of a GPU name ("NVIDIA H100 80GB HBM3" and "H100 SXM5 80GB" -> "H100"), to tell GPU types
/// apart; the whole name when it has none.
std::string gpu_family(const std::string& name);

struct HardwareModels {
  CollectiveParams params;
  std::string collective_source = "built-in datasheet parameters";
  models::ComputeModel compute;
  std::string compute_source = "datasheet roofline";
  std::string gpu_note;  ///< every note below in one line (empty: nothing to say)
  /// What the user should know: a profile measured on another GPU type than the cluster's (naming both), and
  /// which parts were not measured and are priced from the datasheet.
  std::vector<std::string> notes;
};

/// `calibration`: empty or "none" (datasheet parameters and roofline), or a comma-separated list of calibration
/// profile names, files or directories (every *.json in it), composed part by part: the collective model is fitted
/// on the first file with collective rows (or taken from the first collective-parameters file, `calibrate fit -o`);
/// GEMM, memory/launch, attention and interference each from the first file that measured them. A profile measured
/// on one GPU (no collectives) works for every plan: what no file measured is priced from the cluster's datasheet
/// and link model, and `notes` says so.
Expected<HardwareModels> load_hardware_models(const std::string& calibration, const Cluster& cluster,
                                              const CalibrationOptions& options = {});

}  // namespace scalescope::calib
