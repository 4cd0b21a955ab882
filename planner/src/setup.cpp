// Loading the cluster, collective parameters and compute model for planner evaluations.
#include "scalescope/planner/setup.hpp"

#include "scalescope/calibrate/hardware.hpp"

namespace scalescope::planner {

Expected<std::unique_ptr<EvalSetup>> load_setup(const std::string& cluster_name_or_path, ClusterOptions options,
                                                const std::string& calibration,
                                                const calib::CalibrationOptions& calibration_options) {
  auto cluster = load_cluster_by_name_or_path(cluster_name_or_path, options);
  if (!cluster) return cluster.error();
  auto hw = calib::load_hardware_models(calibration, *cluster, calibration_options);
  if (!hw) return hw.error();
  auto s = std::make_unique<EvalSetup>(std::move(cluster).value(), std::move(hw->params), std::move(hw->compute));
  s->collective_source = std::move(hw->collective_source);
  s->compute_source = std::move(hw->compute_source);
  s->gpu_note = std::move(hw->gpu_note);
  s->notes = std::move(hw->notes);
  return s;
}

Expected<models::ModelSpec> load_model_at_seq(const std::string& name_or_path, std::optional<int> seq) {
  auto model = models::load_model_by_name_or_path(name_or_path);
  if (!model) return model.error();
  if (seq) {
    if (*seq <= 0) return input_error("", "--seq", "expected a positive sequence length");
    model->seq_len = *seq;
  }
  return model;
}

}  // namespace scalescope::planner
