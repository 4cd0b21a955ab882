// Small cluster descriptions for the collective-model tests, written out so that every
// bandwidth in a hand calculation is visible in the test (the topologies/ files may change).
#pragma once

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "scalescope/sim/cluster.hpp"

namespace scalescope::testing {

inline Json test_gpu() {
  return Json{{"model", "Test GPU"}, {"memory_GiB", 80}, {"hbm_bandwidth_GBps", 3000}, {"sm_count", 132},
              {"peak_dense_TFLOPS", {{"bf16", 989}}}};
}

/// `gpus` GPUs on one NVSwitch, `nvlink_GBps` per GPU and direction (0.5 us per link). With
/// nics > 0 (nics == gpus), GPU i and NIC i share PCIe switch i (`pcie_GBps`, 1 us per link).
inline Json nvswitch_node(int gpus, double nvlink_GBps, int nics = 0, double pcie_GBps = 64.0) {
  Json links = Json::array();
  links.push_back({{"a", "gpu*"}, {"b", "nvswitch0"}, {"kind", "nvlink"}, {"bandwidth_GBps", nvlink_GBps},
                   {"latency_us", 0.5}});
  Json node = {{"gpu", test_gpu()}, {"gpus", gpus}, {"nvswitches", 1}};
  if (nics > 0) {
    const std::string r = "0-" + std::to_string(nics - 1);
    links.push_back({{"a", "gpu" + r}, {"b", "pcie" + r}, {"kind", "pcie"}, {"bandwidth_GBps", pcie_GBps},
                     {"latency_us", 1.0}});
    links.push_back({{"a", "nic" + r}, {"b", "pcie" + r}, {"kind", "pcie"}, {"bandwidth_GBps", pcie_GBps},
                     {"latency_us", 1.0}});
    node["pcie_switches"] = nics;
    node["nics"] = nics;
  }
  node["links"] = links;
  return node;
}

/// `gpus` GPUs on one PCIe switch (`pcie_GBps` per GPU and direction), no NVLink.
inline Json pcie_node(int gpus, double pcie_GBps) {
  Json links = Json::array();
  links.push_back({{"a", "gpu*"}, {"b", "pcie0"}, {"kind", "pcie"}, {"bandwidth_GBps", pcie_GBps}, {"latency_us", 1.0}});
  return {{"gpu", test_gpu()}, {"gpus", gpus}, {"pcie_switches", 1}, {"links", links}};
}

/// One GPU and one NIC per node, joined by a PCIe switch (64 GB/s per direction).
inline Json single_gpu_node() { return nvswitch_node(1, 100.0, 1, 64.0); }

inline Cluster make_cluster(const std::string& name, Json node, int nodes = 1, Json fabric = Json{{"kind", "none"}}) {
  Json doc = {{"name", name}, {"nodes", nodes}, {"node", std::move(node)}, {"fabric", std::move(fabric)}};
  auto c = cluster_from_json(doc, "<test:" + name + ">");
  if (!c) {
    ADD_FAILURE() << c.error().str();
    std::abort();
  }
  return std::move(c).value();
}

}  // namespace scalescope::testing
