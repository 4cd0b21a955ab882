// The closing health check of scalescope-calibrate: the profile just written against the cluster's
// topology and datasheet (`scalescope calibrate check`, calibrate/profile_check.hpp), printed and
// kept in the profile's `health` section so that a fault the machine had travels with the numbers
// it spoiled.
#include "scalescope/calibrate/profile_check.hpp"
#include "sections.hpp"

namespace scalescope::gpu {

std::string health_check(const Json& doc, const std::string& path, const std::string& cluster,
                         Json& health) {
  auto plain = calib::profile_from_json(nlohmann::json::parse(doc.dump()), path);
  if (!plain) {
    health = Json{{"error", plain.error().str()}};
    return "health check: the profile does not load: " + plain.error().str() + "\n";
  }
  auto c =
      cluster.empty() ? calib::cluster_for_profile(*plain) : calib::load_check_cluster(cluster);
  if (!c) {
    health = Json{{"error", c.error().str()}};
    return "health check: not run: " + c.error().str() + "\n";
  }
  auto rep = calib::check_profile(*plain, *c);
  if (!rep) {
    health = Json{{"error", rep.error().str()}};
    return "health check: not run: " + rep.error().str() + "\n";
  }
  Json findings = Json::array();
  for (const auto& f : rep->findings)
    findings.push_back(Json{{"rule", f.rule}, {"figure", f.figure}, {"message", f.message}});
  health = Json{{"checked_by", "scalescope calibrate check (the same rules)"},
                {"cluster", rep->cluster},
                {"cluster_choice", rep->cluster_choice},
                {"figures_checked", rep->rows.size()},
                {"clean", rep->clean()},
                {"findings", findings}};
  return calib::to_text(*rep);
}

}  // namespace scalescope::gpu
