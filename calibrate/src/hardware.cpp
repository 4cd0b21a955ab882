// Loading collective parameters and the compute model from an optional calibration.
#include "scalescope/calibrate/hardware.hpp"

#include <optional>

#include "scalescope/calibrate/fit.hpp"
#include "scalescope/calibrate/profile.hpp"
#include "scalescope/models/compute_profile.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::calib {

Expected<HardwareModels> load_hardware_models(const std::string& calibration, const Cluster& cluster) {
  CollectiveParams params = datasheet_collective_params();
  std::string collective_source = "built-in datasheet parameters";
  std::string compute_source = "datasheet roofline";
  std::string gpu_note;
  std::optional<models::ComputeModel> compute;
  const GpuSpec& gpu = cluster.gpu_spec();
  if (!calibration.empty()) {
    std::string desc;
    auto p = load_collective_calibration(calibration, &cluster, &desc);
    if (!p) return p.error();
    params = std::move(p).value();
    collective_source = desc;
    // A calibration profile also carries GEMM, bandwidth and launch measurements; a collective
    // parameter file does not (then compute stays on the datasheet roofline).
    // The same test as load_collective_calibration's: a file is a profile only when its schema says so
    // (`calibrate fit -o` writes "scalescope.collective_params/1", which is a parameters file).
    auto doc = read_json_file(calibration);
    const bool params_file = doc && doc->is_object() &&
                             !(doc->contains("schema") && (*doc)["schema"] == std::string(kProfileSchema));
    if (!params_file) {
      auto cp = models::load_compute_profile_by_name_or_path(calibration);
      if (!cp) return cp.error();
      if (!cp->gpu.empty() && cp->gpu.find(gpu.model.substr(0, 4)) == std::string::npos) {
        gpu_note = "calibration GPU '" + cp->gpu + "' differs from the cluster GPU '" + gpu.model + "'";
      }
      compute_source = "profile " + cp->source;
      auto cm = models::ComputeModel::with_profile(gpu, std::move(cp).value());
      if (!cm) return cm.error();
      compute.emplace(std::move(cm).value());
    }
  }
  if (!compute) {
    auto cm = models::ComputeModel::datasheet(gpu);
    if (!cm) return cm.error();
    compute.emplace(std::move(cm).value());
  }
  return HardwareModels{std::move(params), std::move(collective_source), std::move(compute).value(),
                        std::move(compute_source), std::move(gpu_note)};
}

}  // namespace scalescope::calib
