// Bad cluster input gives one exact message naming the file, the JSON path (or option) and the
// expectation, as an input error (exit code 2): each class of mistake from a valid base file.
#include <gtest/gtest.h>

#include "cluster_test_util.hpp"

namespace scalescope {
namespace {

using testing::cluster_data;

Json base() { return std::move(read_json_file(cluster_data("two-gpu-base.json"))).take_or_throw(); }

/// The error message of building `doc` (named "bad.json"), or "" if it loaded.
std::string error_of(const Json& doc, ClusterOptions opt = {}) {
  auto c = cluster_from_json(doc, "bad.json", opt);
  if (c.has_value()) return "";
  EXPECT_EQ(c.error().exit_code(), 2);
  return c.error().str();
}

TEST(ClusterErrors, BaseFileIsValid) { EXPECT_EQ(error_of(base()), ""); }

TEST(ClusterErrors, MissingFieldNamesTheObjectAndKey) {
  Json d = base();
  d["node"].erase("gpus");
  EXPECT_EQ(error_of(d), "bad.json: $.node: missing required key 'gpus'");
  d = base();
  d["node"]["links"][2].erase("latency_us");
  EXPECT_EQ(error_of(d), "bad.json: $.node.links[2]: missing required key 'latency_us'");
  d = base();
  d["node"]["links"][1].erase("bandwidth_GBps");
  EXPECT_EQ(error_of(d),
            "bad.json: $.node.links[1]: missing bandwidth: expected bandwidth_GBps, or count and "
            "per_link_GBps");
}

TEST(ClusterErrors, ZeroOrNegativeBandwidthIsRejected) {
  Json d = base();
  d["node"]["links"][1]["bandwidth_GBps"] = 0;
  EXPECT_EQ(error_of(d),
            "bad.json: $.node.links[1].bandwidth_GBps: expected a number from 0.001 to 1e+06 (plausible range), "
            "got 0");
  d["node"]["links"][1]["bandwidth_GBps"] = -32;
  EXPECT_EQ(error_of(d),
            "bad.json: $.node.links[1].bandwidth_GBps: expected a number from 0.001 to 1e+06 (plausible range), "
            "got -32");
  d = base();
  d["node"]["links"][0]["per_link_GBps"] = -25;
  // Per-link and NIC speeds are held to their plausible ranges (docs/plausible-ranges.md).
  EXPECT_EQ(error_of(d),
            "bad.json: $.node.links[0].per_link_GBps: expected a number from 0.001 to 1e+06 (plausible range), got -25");
  d["node"]["links"][0]["per_link_GBps"] = 1e308;
  EXPECT_EQ(error_of(d),
            "bad.json: $.node.links[0].per_link_GBps: expected a number from 0.001 to 1e+06 (plausible range), got 1e+308");
  d = base();
  d["fabric"]["nic_speed_Gbps"] = 0;
  EXPECT_EQ(error_of(d), "bad.json: $.fabric.nic_speed_Gbps: expected a number from 1 to 1e+06 (plausible range), got 0");
  d = base();
  d["node"]["links"][0]["bandwidth_GBps"] = 50;
  EXPECT_EQ(error_of(d),
            "bad.json: $.node.links[0]: expected either bandwidth_GBps or count and per_link_GBps, "
            "not both");
}

TEST(ClusterErrors, UnknownLinkKindListsTheAcceptedKinds) {
  Json d = base();
  d["node"]["links"][1]["kind"] = "carrier-pigeon";
  EXPECT_EQ(
      error_of(d),
      "bad.json: $.node.links[1].kind: expected one of nvlink | pcie | upi | ib | roce | ethernet, "
      "got the string \"carrier-pigeon\"");
  d = base();
  d["fabric"]["link_kind"] = "nvlink";
  EXPECT_EQ(error_of(d),
            "bad.json: $.fabric.link_kind: expected one of ib | roce | ethernet, got the string "
            "\"nvlink\"");
}

TEST(ClusterErrors, UnknownRoutingListsTheAcceptedOnes) {
  // A fat tree's switches route by destination or by ECMP hash; a single switch has no choice to make.
  Json d = base();
  d["fabric"] = Json{{"kind", "fat_tree"}, {"tiers", 2}, {"radix", 4}, {"link_kind", "ib"},
                     {"nic_speed_Gbps", 100}, {"link_latency_us", 1}, {"routing", "adaptive"}};
  EXPECT_EQ(error_of(d),
            "bad.json: $.fabric.routing: expected one of destination | ecmp, got the string \"adaptive\"");
  d["fabric"]["routing"] = "ecmp";
  EXPECT_EQ(error_of(d), "");
  d = base();
  d["fabric"]["routing"] = "ecmp";
  EXPECT_NE(error_of(d).find("$.fabric.routing: unknown key 'routing'"), std::string::npos) << error_of(d);
}

TEST(ClusterErrors, UnknownNicSelectionListsTheAcceptedOnes) {
  // Only a rail-optimized fabric has rails for its GPUs' own NICs; a fat tree rejects the key.
  Json d = base();
  d["fabric"] = Json{{"kind", "rail_optimized"}, {"radix", 4}, {"link_kind", "ib"}, {"nic_speed_Gbps", 100},
                     {"link_latency_us", 1}, {"nic_selection", "nearest"}};
  EXPECT_EQ(error_of(d),
            "bad.json: $.fabric.nic_selection: expected one of own_rail | hashed, got the string \"nearest\"");
  d["fabric"]["nic_selection"] = "hashed";
  EXPECT_EQ(error_of(d), "");
  d["fabric"] = Json{{"kind", "fat_tree"}, {"tiers", 2}, {"radix", 4}, {"link_kind", "ib"},
                     {"nic_speed_Gbps", 100}, {"link_latency_us", 1}, {"nic_selection", "hashed"}};
  EXPECT_NE(error_of(d).find("$.fabric.nic_selection: unknown key 'nic_selection'"), std::string::npos)
      << error_of(d);
}

TEST(ClusterErrors, ErrorsFromAFileNameThatFile) {
  const std::string path = cluster_data("bad-link-kind.json");
  auto c = load_cluster(path);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(
      c.error().str(),
      path +
          ": $.node.links[1].kind: expected one of nvlink | pcie | upi | ib | roce | ethernet, "
          "got the string \"carrier-pigeon\"");
  auto missing = load_cluster_by_name_or_path(cluster_data("no-such-cluster.json"));
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().str(), cluster_data("no-such-cluster.json") + ": file does not exist");
}

TEST(ClusterErrors, LinkToAMissingDeviceListsTheDevices) {
  Json d = base();
  d["node"]["links"][2]["a"] = "nic1";
  EXPECT_EQ(error_of(d),
            "bad.json: $.node.links[2].a: no device 'nic1' in the node (devices: gpu0-1, "
            "nvswitch0, pcie0, nic0)");
  d = base();
  d["node"]["links"][0]["a"] = Json::array({"gpu0", "gpu5"});
  EXPECT_EQ(error_of(d),
            "bad.json: $.node.links[0].a[1]: no device 'gpu5' in the node (devices: gpu0-1, "
            "nvswitch0, pcie0, nic0)");
  d = base();
  d["node"]["links"][0]["b"] = "cpu*";
  EXPECT_EQ(error_of(d),
            "bad.json: $.node.links[0].b: no device 'cpu*' in the node (devices: gpu0-1, "
            "nvswitch0, pcie0, nic0)");
  d = base();
  d["node"]["links"][0]["b"] = "switch0";
  EXPECT_EQ(error_of(d),
            "bad.json: $.node.links[0].b: expected a device such as gpu0, gpu0-3, gpu*, nvswitch0, "
            "pcie1, cpu0 or "
            "nic2, got the string \"switch0\"");
  d = base();
  d["node"]["links"][2]["b"] = "gpu0";
  EXPECT_EQ(error_of(d),
            "bad.json: $.node.links[2]: nic0 may only be attached to a PCIe switch or a CPU, not "
            "to gpu0");
  d = base();
  d["node"]["links"][1]["b"] = "gpu0-1";
  d["node"]["links"][1]["a"] = "gpu0-1";
  EXPECT_EQ(error_of(d), "bad.json: $.node.links[1]: a link from gpu0 to itself");
}

TEST(ClusterErrors, GpuWithoutRouteIsNamed) {
  // Inside the node: gpu1 has no link at all.
  Json d = base();
  d["node"]["links"] = Json::parse(R"([
    {"a": "gpu0", "b": "pcie0", "kind": "pcie", "bandwidth_GBps": 32, "latency_us": 0.2},
    {"a": "nic0", "b": "pcie0", "kind": "pcie", "bandwidth_GBps": 32, "latency_us": 0.2}])");
  EXPECT_EQ(error_of(d), "bad.json: $.node.links: GPU n0.gpu0 has no route to n0.gpu1");
  // Across nodes: gpu1 reaches gpu0 over NVLink but no NIC (routes never pass through a GPU).
  d["node"]["links"].push_back(Json::parse(
      R"({"a": "gpu*", "b": "nvswitch0", "kind": "nvlink", "count": 2, "per_link_GBps": 25, "latency_us": 0.1})"));
  EXPECT_EQ(error_of(d),
            "bad.json: $.node.links: GPU n0.gpu1 has no route to n1.gpu0 (it reaches no NIC)");
  // The same node alone is fine.
  EXPECT_EQ(error_of(d, ClusterOptions{1, std::nullopt}), "");
}

TEST(ClusterErrors, NodeCountBelowOneIsRejected) {
  Json d = base();
  d["nodes"] = 0;
  EXPECT_EQ(error_of(d), "bad.json: $.nodes: expected a positive integer, got 0");
  EXPECT_EQ(error_of(base(), ClusterOptions{0, std::nullopt}),
            "bad.json: --nodes: expected a positive node count, got 0");
  EXPECT_EQ(error_of(base(), ClusterOptions{std::nullopt, -8}),
            "bad.json: --gpus: expected a positive GPU count, got -8");
  // 8 GPUs of 2 per node need 4 nodes.
  EXPECT_EQ(error_of(base(), ClusterOptions{2, 8}),
            "bad.json: --gpus: 8 GPUs need 4 nodes of 2 GPUs, but 2 nodes were given");
  EXPECT_EQ(error_of(base(), ClusterOptions{4, 8}), "");
}

TEST(ClusterErrors, UnknownKeysAreRejectedWithTheAllowedList) {
  Json d = base();
  d["node"]["linkz"] = Json::array();
  EXPECT_EQ(error_of(d),
            "bad.json: $.node.linkz: unknown key 'linkz' (expected one of: gpu, gpus, nvswitches, "
            "pcie_switches, cpus, "
            "nics, nic_rails, links, gpudirect_rdma, p2p_level, host_memory_GBps, host_bridges, cpu_numa_nodes, "
            "cpu_affinity)");
  d = base();
  d["fabrik"] = 1;
  EXPECT_EQ(error_of(d),
            "bad.json: $.fabrik: unknown key 'fabrik' (expected one of: name, description, "
            "sources, nodes, node, fabric)");
  d = base();
  d["fabric"]["radix"] = 8;  // not a key of single_switch
  EXPECT_EQ(error_of(d),
            "bad.json: $.fabric.radix: unknown key 'radix' (expected one of: kind, link_kind, "
            "nic_speed_Gbps, "
            "link_latency_us)");
}

TEST(ClusterErrors, FabricProblemsNameTheFabricField) {
  Json d = base();
  d["fabric"] = Json::parse(R"({"kind": "none"})");
  EXPECT_EQ(error_of(d),
            "bad.json: $.fabric.kind: fabric 'none' holds a single node, but 2 nodes were asked "
            "for (give a fabric: "
            "single_switch, fat_tree or rail_optimized)");
  // tiny-fat-tree at 40 nodes: 4 down ports per leaf -> 10 leaves; a spine has 8 ports < 10 leaves.
  Json t = std::move(read_json_file(cluster_data("tiny-fat-tree.json"))).take_or_throw();
  EXPECT_EQ(error_of(t, ClusterOptions{40, std::nullopt}),
            "bad.json: $.fabric.radix: a 2-tier fat tree of radix 8 cannot connect 40 NICs (40 "
            "nodes); use 3 tiers");
  t["fabric"]["tiers"] = 3;
  EXPECT_EQ(error_of(t, ClusterOptions{40, std::nullopt}), "");
  // 3 tiers of radix 8 (4 down, 4 up at 1:1): 132 nodes -> 33 leaves -> 9 pods of 4 leaves; a core
  // switch needs 9 pods x (4 / 4 cores) = 9 ports > 8, so no core count connects them. 128 nodes: 8 pods fit.
  EXPECT_EQ(error_of(t, ClusterOptions{132, std::nullopt}),
            "bad.json: $.fabric.radix: a 3-tier fat tree of radix 8 cannot connect 132 NICs (132 nodes)");
  EXPECT_EQ(error_of(t, ClusterOptions{128, std::nullopt}), "");
  t["fabric"]["tiers"] = 4;
  EXPECT_EQ(error_of(t), "bad.json: $.fabric.tiers: expected 2 or 3 tiers, got 4");
  t["fabric"]["tiers"] = 2;
  t["fabric"]["oversubscription"] = Json::array({0.5});
  EXPECT_EQ(
      error_of(t),
      "bad.json: $.fabric.oversubscription[0]: expected a down:up ratio between 1 and 64, got 0.5");
}

TEST(ClusterErrors, RailAlignedFabricNeedsDistinctRailsPerNode) {
  Json d = base();
  d["node"]["nics"] = 2;
  d["node"]["nic_rails"] = Json::array({0, 0});
  d["node"]["links"][2]["a"] = "nic*";
  d["fabric"] = Json::parse(
      R"({"kind": "rail_optimized", "radix": 8, "link_kind": "ib", "nic_speed_Gbps": 100, "link_latency_us": 0.5})");
  EXPECT_EQ(error_of(d),
            "bad.json: $.node: rail-aligned fabric needs distinct rails per node, but rail 0 has "
            "two NICs (see "
            "nic_rails)");
  d["node"]["nic_rails"] = Json::array({0});
  EXPECT_EQ(error_of(d),
            "bad.json: $.node.nic_rails: expected an array of 2 rail indices (one per NIC), got an "
            "array");
  d["node"]["nic_rails"] = Json::array({0, 1});
  EXPECT_EQ(error_of(d), "");
}

}  // namespace
}  // namespace scalescope
