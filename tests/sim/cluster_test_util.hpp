// Helpers shared by the cluster tests: loading test data and checking that a route is a
// connected walk from one GPU to another that obeys the routing rules of cluster.hpp.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "scalescope/sim/cluster.hpp"

namespace scalescope::testing {

inline std::string cluster_data(const std::string& file) {
  return std::string(SCALESCOPE_TEST_DATA) + "/clusters/" + file;
}
inline std::string topology_file(const std::string& name) {
  return std::string(SCALESCOPE_SOURCE_DIR) + "/topologies/" + name + ".json";
}

inline Cluster must_load(const std::string& path, ClusterOptions opt = {}) {
  auto c = load_cluster(path, opt);
  if (!c) ADD_FAILURE() << c.error().str();
  return std::move(c).take_or_throw();
}

/// The cluster file at `path` with its fabric's `key` set to `value`.
inline Cluster must_load_with_fabric(const std::string& path, const std::string& key, const std::string& value,
                                     ClusterOptions opt = {}) {
  std::ifstream in(path);
  Json doc = Json::parse(in);
  doc["fabric"][key] = value;
  auto c = cluster_from_json(doc, path, opt);
  if (!c) ADD_FAILURE() << c.error().str();
  return std::move(c).take_or_throw();
}

/// The cluster file at `path` with its fabric's `routing` replaced ("destination" or "ecmp").
inline Cluster must_load_routed(const std::string& path, const std::string& routing, ClusterOptions opt = {}) {
  return must_load_with_fabric(path, "routing", routing, opt);
}

/// Empty string if `route` is a valid route from rank a to rank b, else what is wrong.
inline std::string check_route(const Cluster& c, int a, int b, const std::vector<int>& route) {
  if (a == b) return route.empty() ? "" : "non-empty route to self";
  if (route.empty()) return "empty route";
  VertexId at = c.gpu_vertex(a);
  for (std::size_t i = 0; i < route.size(); ++i) {
    const Link& l = c.link(route[i]);
    if (l.src != at) return "hop " + std::to_string(i) + " does not start where the previous ended";
    at = l.dst;
    const VertexProps& v = c.vertex(at);
    if (i + 1 < route.size()) {
      if (v.kind == VertexKind::gpu) return "passes through GPU " + v.name;
      if (v.kind == VertexKind::nic && v.node != c.node_of(a) && v.node != c.node_of(b))
        return "passes through " + v.name;
      if (v.node >= 0 && v.node != c.node_of(a) && v.node != c.node_of(b))
        return "visits a third node: " + v.name;
      if (c.same_node(a, b) && v.node != c.node_of(a)) return "leaves the node: " + v.name;
    }
  }
  if (at != c.gpu_vertex(b)) return "ends at " + c.vertex(at).name;
  return "";
}

}  // namespace scalescope::testing
