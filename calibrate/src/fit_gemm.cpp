// Held-back check of the compute model's GEMM interpolation, and --calibration loading (params
// file or profile fitted on the fly).
#include <map>
#include <tuple>

#include "fit_impl.hpp"
#include "scalescope/models/compute_model.hpp"

namespace scalescope::calib {

Expected<GemmCheck> validate_gemm_interpolation(const Profile& profile, const GpuSpec& gpu, int every) {
  if (every < 2) return input_error("", "every", "expected at least 2, got " + std::to_string(every));
  using Key = std::tuple<std::string, std::int64_t, std::int64_t, std::int64_t>;
  // Distinct problems per dtype, in profile order.
  std::map<std::string, std::vector<Key>> order;
  std::map<Key, int> seen;
  for (const auto& g : profile.gemm) {
    if (!g.time_us) continue;
    const Key k{g.dtype, g.m, g.n, g.k};
    if (seen.emplace(k, 0).second) order[g.dtype].push_back(k);
  }
  std::map<Key, bool> held;
  int shapes = 0;
  for (const auto& [dtype, keys] : order) {
    for (std::size_t i = 0; i < keys.size(); ++i) held[keys[i]] = (i + 1) % static_cast<std::size_t>(every) == 0;
    shapes += static_cast<int>(keys.size());
  }
  if (shapes < every)
    return input_error(profile.file, "gemm",
                       "expected at least " + std::to_string(every) + " timed GEMM shapes to hold some back, got " +
                           std::to_string(shapes));
  GemmCheck out;
  out.every = every;
  out.shapes = shapes;
  models::ComputeProfile cp;
  cp.source = profile.file.empty() ? profile.name() : profile.file;
  cp.gpu = profile.gpu_name();
  for (const auto& g : profile.gemm) {
    if (!g.time_us || held[Key{g.dtype, g.m, g.n, g.k}]) continue;
    cp.gemms.push_back({g.dtype, g.m, g.n, g.k, microseconds(*g.time_us)});
    ++out.fitted_on;
  }
  if (auto bw = profile.memory_number("d2d_copy_GBps")) {
    cp.hbm_bandwidth = GBps(*bw);
    out.hbm_source = "measured copy bandwidth " + fitimpl::num_str(*bw) + " GB/s (memory.d2d_copy_GBps)";
  } else {
    out.hbm_source = "datasheet HBM bandwidth x assumed 0.85 (the profile has no memory.d2d_copy_GBps)";
  }
  auto model = models::ComputeModel::with_profile(gpu, cp);
  if (!model) return model.error();
  std::vector<double> errors;
  for (const auto& g : profile.gemm) {
    if (!g.time_us || !held[Key{g.dtype, g.m, g.n, g.k}]) continue;
    GemmCheckRow r;
    r.dtype = g.dtype;
    r.label = g.label;
    r.m = g.m;
    r.n = g.n;
    r.k = g.k;
    r.measured_us = *g.time_us;
    r.predicted_us = model->gemm(g.m, g.n, g.k, g.dtype).time.value * 1e6;
    errors.push_back(r.error());
    out.held_back.push_back(std::move(r));
  }
  out.median_abs_error = median_abs(errors);
  return out;
}

Expected<CollectiveParams> load_collective_calibration(std::string_view name_or_path, const Cluster* cluster,
                                                       std::string* description) {
  const std::string s(name_or_path);
  std::error_code ec;
  const bool is_path = s.find('/') != std::string::npos || s.ends_with(".json") || std::filesystem::is_regular_file(s, ec);
  if (is_path) {
    auto doc = read_json_file(s);
    if (!doc) return doc.error();
    const bool profile = doc->is_object() && doc->contains("schema") && (*doc)["schema"] == std::string(kProfileSchema);
    if (!profile) {
      if (description) *description = s;
      return collective_params_from_json(*doc, s);
    }
  }
  auto profile = load_profile_by_name_or_path(s);
  if (!profile) return profile.error();
  if (!cluster)
    return input_error(s, "", "is a calibration profile: fitting it needs the cluster it ran on (--cluster)");
  auto fit = fit_collective_params(*profile, *cluster);
  if (!fit) return fit.error();
  if (description) *description = "profile " + s + " (fitted on the fly)";
  return std::move(fit).value().params;
}

}  // namespace scalescope::calib
