// Loading the cluster, collective parameters and compute model for planner evaluations.
#include "scalescope/planner/setup.hpp"

#include "scalescope/calibrate/fit.hpp"
#include "scalescope/models/compute_profile.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::planner {

Expected<std::unique_ptr<EvalSetup>> load_setup(const std::string& cluster_name_or_path, ClusterOptions options,
                                                const std::string& calibration) {
  auto cluster = load_cluster_by_name_or_path(cluster_name_or_path, options);
  if (!cluster) return cluster.error();
  CollectiveParams params = datasheet_collective_params();
  std::string coll_source = "built-in datasheet parameters", compute_source = "datasheet roofline";
  std::optional<models::ComputeModel> compute;
  const GpuSpec gpu = cluster->gpu_spec();
  if (!calibration.empty()) {
    std::string desc;
    auto p = calib::load_collective_calibration(calibration, &*cluster, &desc);
    if (!p) return p.error();
    params = std::move(p).value();
    coll_source = desc;
    auto doc = read_json_file(calibration);
    const bool params_file = doc && doc->is_object() && !doc->contains("schema");
    if (!params_file) {
      auto cp = models::load_compute_profile_by_name_or_path(calibration);
      if (!cp) return cp.error();
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
  auto s = std::make_unique<EvalSetup>(std::move(cluster).value(), std::move(params), std::move(compute).value());
  s->collective_source = coll_source;
  s->compute_source = compute_source;
  return s;
}

}  // namespace scalescope::planner
