// What-if variants of a cluster document (cluster_variant.hpp).
#include "scalescope/sim/cluster_variant.hpp"

#include <string_view>

namespace scalescope {

namespace {

bool names_nvswitch(const Json& end) {
  auto is = [](const Json& s) {
    return s.is_string() && s.get<std::string>().rfind("nvswitch", 0) == 0;
  };
  if (is(end)) return true;
  if (end.is_array())
    for (const auto& e : end)
      if (is(e)) return true;
  return false;
}

}  // namespace

std::string ClusterVariant::describe() const {
  std::string out;
  auto add = [&](const std::string& s) { out += (out.empty() ? "" : ", ") + s; };
  if (gpudirect_rdma) add(std::string("GPUDirect RDMA ") + (*gpudirect_rdma ? "on" : "off"));
  if (pcie_only) add("PCIe-only P2P (no NVLink)");
  if (p2p_level) add("P2P level " + *p2p_level);
  return out.empty() ? "as the file" : out;
}

Json apply_variant(Json doc, const ClusterVariant& v) {
  if (!doc.is_object() || !doc.contains("node") || !doc["node"].is_object())
    return doc;  // the loader says why
  Json& node = doc["node"];
  if (v.gpudirect_rdma) node["gpudirect_rdma"] = *v.gpudirect_rdma;
  if (v.p2p_level) node["p2p_level"] = *v.p2p_level;
  if (v.pcie_only && node.contains("links") && node["links"].is_array()) {
    Json kept = Json::array();
    for (const auto& l : node["links"]) {
      const bool nvlink = l.is_object() && l.contains("kind") && l["kind"] == "nvlink";
      const bool nvswitch = l.is_object() && ((l.contains("a") && names_nvswitch(l["a"])) ||
                                              (l.contains("b") && names_nvswitch(l["b"])));
      if (!nvlink && !nvswitch) kept.push_back(l);
    }
    node["links"] = std::move(kept);
    node.erase("nvswitches");
  }
  return doc;
}

}  // namespace scalescope
